package pages

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/web"
)

// Deployments is every deployment waiting in repos (the repositories the
// person can see, as Pending takes them), the longest waiting first; a
// request past GitHub's window is never answered, so is not shown.
func (p *Source) Deployments(ctx context.Context, repos []web.RepoRef) ([]web.Deployment, error) {
	want := map[string]web.RepoRef{}
	for _, r := range repos {
		want[strings.ToLower(r.FullName())] = r
	}
	all, err := p.deployments(ctx)
	if err != nil {
		return nil, err
	}
	var out []web.Deployment
	for _, d := range all {
		if r, ok := want[strings.ToLower(d.Owner+"/"+d.Repo)]; ok {
			out = append(out, deploymentView(r, d))
		}
	}
	slices.SortStableFunc(out, func(a, b web.Deployment) int {
		return cmp.Or(a.Since.Compare(b.Since), cmp.Compare(a.Repo.FullName(), b.Repo.FullName()), cmp.Compare(a.RunID, b.RunID),
			cmp.Compare(a.Environment, b.Environment))
	})
	return out, nil
}

// deployments is what cfg.Deployments lists, less the requests past
// GitHub's window.
func (p *Source) deployments(ctx context.Context) ([]decide.Deployment, error) {
	if p.cfg.Deployments == nil {
		return nil, nil
	}
	all, err := p.cfg.Deployments(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the deployments waiting: %w", err)
	}
	now := p.cfg.Now()
	return slices.DeleteFunc(all, func(d decide.Deployment) bool { return now.Sub(d.Requested) >= decide.DeploymentWindow }), nil
}

func deploymentView(r web.RepoRef, d decide.Deployment) web.Deployment {
	v := web.Deployment{Repo: r, Environment: d.Environment, SHA: d.SHA, Ref: d.Ref, RunID: d.RunID, Since: d.Requested, Reason: d.Reason}
	for _, w := range d.Waits {
		v.Waits = append(v.Waits, web.Wait{Decision: w.Decision, Issue: w.Issue, Stale: w.Stale})
	}
	return v
}

// waitingOn files the deployments of owner/repo that wait on the issue's
// decisions by decision (upper-cased), for the issue page. A failure to
// list them is logged: the page shows the thread without them.
func (p *Source) waitingOn(ctx context.Context, owner, repo string, issue int) map[string][]web.Deployment {
	all, err := p.deployments(ctx)
	if err != nil {
		p.cfg.Logger.Warn("pages: the deployments waiting could not be listed", "repository", owner+"/"+repo, "issue", issue, "error", err)
	}
	by := map[string][]web.Deployment{}
	r := web.RepoRef{Owner: owner, Name: repo}
	for _, d := range all {
		if !strings.EqualFold(d.Owner, owner) || !strings.EqualFold(d.Repo, repo) {
			continue
		}
		seen := map[string]bool{}
		for _, w := range d.Waits {
			if id := strings.ToUpper(w.Decision); w.Issue == issue && !seen[id] {
				seen[id] = true
				by[id] = append(by[id], deploymentView(r, d))
			}
		}
	}
	for _, ds := range by {
		slices.SortStableFunc(ds, func(a, b web.Deployment) int { return cmp.Or(a.Since.Compare(b.Since), cmp.Compare(a.RunID, b.RunID)) })
	}
	return by
}
