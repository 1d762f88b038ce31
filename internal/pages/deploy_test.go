package pages

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/testutil/outcometest"
	"github.com/phasegate/phasegate/internal/web"
)

// deployment is a request of owner/repo's run, environment env, asked at,
// waiting on waits (each "D-001#7").
func deployment(owner, repo string, run int64, env string, at time.Time, waits ...string) decide.Deployment {
	d := decide.Deployment{Installation: installation, Owner: owner, Repo: repo, RunID: run, Environment: env,
		SHA: "c0ffee0000000000000000000000000000000001", Requested: at, Read: len(waits) > 0}
	for _, w := range waits {
		var id string
		var issue int
		if _, err := fmt.Sscanf(strings.Replace(w, "#", " ", 1), "%s %d", &id, &issue); err != nil {
			panic(err)
		}
		d.Waits = append(d.Waits, ledger.Waiting{Decision: id, Issue: issue})
	}
	return d
}

// TestPagesDeploymentsOnlyOfVisibleRepos (red team): the inbox's
// deployments are those of the repositories the person can see, as its
// pending decisions are (names compared as GitHub does, ignoring case),
// the longest waiting first; a request past GitHub's window is not
// waiting any more.
func TestPagesDeploymentsOnlyOfVisibleRepos(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	listed := []decide.Deployment{
		deployment(owner, repo, 3, "production", now.Add(-time.Hour), "D-001#7"),
		deployment("ACME", "Shop", 2, "staging", now.Add(-2*time.Hour)),
		deployment(owner, "secret", 4, "secret-env", now.Add(-3*time.Hour), "D-001#1"),
		deployment("other", repo, 5, "other-env", now.Add(-3*time.Hour), "D-001#7"),
		deployment(owner, repo, 6, "expired", now.Add(-decide.DeploymentWindow)),
	}
	tests := []struct {
		name  string
		list  func(context.Context) ([]decide.Deployment, error)
		repos []web.RepoRef
		want  string
		err   bool
	}{
		{name: "the person's repositories only", list: func(context.Context) ([]decide.Deployment, error) { return listed, nil },
			repos: []web.RepoRef{{Owner: owner, Name: repo, Installation: installation}}, want: "acme/shop#2 staging,acme/shop#3 production"},
		{name: "no repository", list: func(context.Context) ([]decide.Deployment, error) { return listed, nil }},
		{name: "no store", repos: []web.RepoRef{{Owner: owner, Name: repo}}},
		{name: "the store failing", list: func(context.Context) ([]decide.Deployment, error) { return nil, errors.New("redis down") },
			repos: []web.RepoRef{{Owner: owner, Name: repo}}, err: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := New(Config{Deployments: tc.list, Now: func() time.Time { return now }})
			got, err := p.Deployments(context.Background(), tc.repos)
			if (err != nil) != tc.err {
				t.Fatalf("error %v, want one: %v", err, tc.err)
			}
			var names []string
			for _, d := range got {
				if d.Repo.Installation != installation {
					t.Errorf("%s: not named as the person's list names it: %+v", d.Environment, d.Repo)
				}
				names = append(names, fmt.Sprintf("%s#%d %s", d.Repo.FullName(), d.RunID, d.Environment))
			}
			if strings.Join(names, ",") != tc.want {
				t.Errorf("inbox deployments %v, want %s", names, tc.want)
			}
		})
	}
}

// TestPagesIssueShowsDeploymentsWaitingOnIt: under each pending decision
// of the issue page, the deployments of this repository that wait on it on
// this issue; never another issue's or another repository's, and not one
// that has not read its decisions yet.
func TestPagesIssueShowsDeploymentsWaitingOnIt(t *testing.T) {
	t.Parallel()
	p, f := testSource(t, &stubMay{}, "")
	const commit = "a200000000000000000000000000000000000002"
	issue := f.AddIssue(owner, repo, "feature 42", "", "alice")
	other := f.AddIssue(owner, repo, "feature 43", "", "alice")
	src := ".pace/outcome.yaml"
	body, _ := outcometest.Render(t, outcometest.SeedFor(issue), outcome.Meta{Source: src, Commit: commit})
	f.SetFile(owner, repo, commit, src, []byte(outcometest.SeedFor(issue)))
	f.AddComment(owner, repo, issue, appBot, body)
	at := time.Now().Add(-time.Hour) // the Source's clock is time.Now
	p.cfg.Deployments = func(context.Context) ([]decide.Deployment, error) {
		return []decide.Deployment{
			deployment(owner, repo, 11, "production", at, fmt.Sprintf("d-001#%d", issue), fmt.Sprintf("D-001#%d", other)),
			deployment(owner, repo, 12, "staging", at.Add(-time.Minute), fmt.Sprintf("D-001#%d", issue), fmt.Sprintf("D-001#%d", issue)),
			deployment(owner, repo, 13, "another-issue", at, fmt.Sprintf("D-001#%d", other)),
			deployment(owner, "elsewhere", 14, "another-repo", at, fmt.Sprintf("D-001#%d", issue)),
			deployment(owner, repo, 15, "unread", at),
		}, nil
	}
	page, err := p.Issue(context.Background(), owner, repo, issue, "alice")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range page.Outcomes {
		for _, d := range o.Decisions {
			var envs []string
			for _, dep := range d.Deployments {
				envs = append(envs, fmt.Sprintf("%s/%d", dep.Environment, dep.RunID))
			}
			got[d.ID] = strings.Join(envs, ",")
		}
	}
	if want := map[string]string{"D-001": "staging/12,production/11", "D-002": ""}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("deployments per decision %v, want %v", got, want)
	}
}
