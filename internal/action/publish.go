package action

import (
	"context"
	"fmt"
	"strings"

	"github.com/phasegate/phasegate/internal/checkjob"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/gate"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/report"
)

// publish posts new outcomes and sets both commit statuses. It returns how
// many outcome comments it posted. Posting, labels and phasegate/decisions
// go through the decision handler, the one writer the App shares: the
// decisions status is a function of the commit (decide.SyncCommit), so
// whichever event computes it last, it says the same.
//
// A read-only run (a pull request from a fork) writes nothing; a run whose
// first write GitHub refuses with 403 writes nothing more. Either exits by
// the verdict: its results are published by a workflow_run run.
func (r *run) publish(ctx context.Context, cr *commitRun, out checkjob.Checked) int {
	rep := out.Report
	if r.sum.ReadOnly != "" {
		return 0
	}
	if app := r.appGate(ctx, cr, out.Config.Identity); app != "" {
		why := "phasegate's App (" + app + ") is this repository's gate and posts them; set `identity:` in " + cr.in.config + " to choose explicitly"
		if out.Config.Identity != "" {
			why = "`identity:` in " + cr.in.config + " names " + app + ", which is not the account of this run's token: " + app + " is this repository's gate and posts them"
		}
		r.skip("posting the Phase Outcomes and " + decide.ContextDecisions + ": " + why)
		r.setContracts(ctx, cr, rep)
		return 0
	}
	var posts []checkjob.Carried
	for _, c := range out.Carried {
		switch {
		case !c.Postable():
		case !cr.in.postOutcomes:
			r.skip("posting " + cr.Prefix + c.Doc.Path + ": the input post-outcomes is false")
		case cr.Fork != "":
			r.skip("posting " + cr.Prefix + c.Doc.Path + ": the pull request comes from the fork " + cr.Fork + ", and phasegate never posts a fork's outcomes")
		default:
			posts = append(posts, c)
		}
	}
	if len(posts) == 0 || cr.SHA == "" {
		r.setStatuses(ctx, cr, rep, nil)
		return 0
	}
	// Posting syncs phasegate/decisions with the thread it folded
	// (decide.PostAndSync): the thread is not read again for the status.
	res, err := cr.job.Post(ctx, r.gh, cr.Request, posts, r.commitOptions(cr))
	r.posted = append(r.posted, res.Posted...)
	switch {
	case err != nil && r.denied(err):
		return len(res.Posted)
	case err != nil && !res.Synced:
		r.apiError("post the Phase Outcomes", err)
		r.setStatuses(ctx, cr, rep, nil)
	case err != nil:
		r.apiError("set the "+decide.ContextDecisions+" status", err)
		r.setContracts(ctx, cr, rep)
	default:
		r.setStatuses(ctx, cr, rep, &res.Decisions)
	}
	return len(res.Posted)
}

// pushedRef is the branch whose pushers the outcomes record: the pull
// request's head branch, or the pushed branch.
func pushedRef(cr *commitRun) string {
	if pr := cr.ev.PullRequest; pr != nil {
		return pr.Head.Ref
	}
	if strings.HasPrefix(cr.ev.Ref, "refs/heads/") {
		return cr.ev.Ref
	}
	return ""
}

// appGate is the account that, not this run, posts the repository's
// outcomes and sets phasegate/decisions; "" when this run is the poster.
// With `identity:` set (the default branch's configuration, never the
// pushed tree): "" when it names the workflow's GITHUB_TOKEN
// (github-actions[bot]) or the account this run's own token acts as
// (GET /user, case-insensitively: a token with Members: read given to the
// action), else that identity (phasegate's App, or an account this token
// is not: the action never posts as someone else; GitHub names no
// account for an installation token, the workflow's GITHUB_TOKEN or an
// App's). Unset: the App whose phasegate/contracts check run is already on
// the commit (the App checks within seconds of the push; a workflow starts
// later), else "".
func (r *run) appGate(ctx context.Context, cr *commitRun, id string) string {
	if id != "" {
		if strings.EqualFold(id, config.DefaultIdentity) {
			return ""
		}
		if u, err := r.gh.CurrentUser(ctx); err == nil && strings.EqualFold(id, u.Login) {
			return ""
		}
		return id
	}
	if cr.SHA == "" {
		return ""
	}
	runs, err := r.gh.CheckRunsForRef(ctx, r.owner, r.repo, cr.SHA, decide.ContextContracts)
	if err != nil {
		return "" // no checks: read permission, or none: the action posts, as before
	}
	for _, cr := range runs {
		if cr.AppSlug != "" && cr.AppSlug != "github-actions" {
			return cr.AppSlug + "[bot]"
		}
	}
	return ""
}

// setContracts publishes phasegate/contracts on the head; false when
// GitHub refused it for want of permission (nothing more is written).
func (r *run) setContracts(ctx context.Context, cr *commitRun, rep report.Report) bool {
	if cr.SHA == "" {
		return true
	}
	if err := r.setStatus(ctx, cr.SHA, contractsStatus(rep, r.runURL())); err != nil {
		if r.denied(err) {
			return false
		}
		r.apiError("set the "+decide.ContextContracts+" status", err)
	}
	return true
}

// setStatus sets st on sha and records it; the error is GitHub's.
func (r *run) setStatus(ctx context.Context, sha string, st ghclient.Status) error {
	err := r.gh.CreateStatus(ctx, r.owner, r.repo, sha, st)
	if err == nil {
		r.statuses = append(r.statuses, st)
	}
	return err
}

// setStatuses publishes phasegate/contracts (the verdict of this commit's
// artifacts) and phasegate/decisions (decide.SyncCommit) on the head;
// synced is phasegate/decisions when posting the outcomes set it already.
func (r *run) setStatuses(ctx context.Context, cr *commitRun, rep report.Report, synced *ghclient.Status) {
	switch {
	case cr.SHA == "":
		r.apiError("publish statuses", fmt.Errorf("the event names no head commit"))
	case !r.setContracts(ctx, cr, rep):
	case synced != nil:
		r.statuses = append(r.statuses, *synced)
	default:
		r.syncDecisions(ctx, cr.job.Handler, cr.SHA, r.commitOptions(cr))
	}
}

func (r *run) commitOptions(cr *commitRun) decide.CommitOptions {
	return decide.CommitOptions{DefaultBranch: cr.ev.Repository.DefaultBranch, TargetURL: r.runURL(), PR: cr.PR}
}

func (r *run) syncDecisions(ctx context.Context, h *decide.Handler, sha string, opts decide.CommitOptions) {
	switch st, err := h.SyncCommit(ctx, r.gh, r.owner, r.repo, sha, opts); {
	case err == nil:
		r.statuses = append(r.statuses, st)
	case !r.denied(err):
		r.apiError("set the "+decide.ContextDecisions+" status", err)
	}
}

// contractsStatus is phasegate/contracts for a report: success for SHIP
// and ADVISORY, failure for HOLD.
func contractsStatus(rep report.Report, targetURL string) ghclient.Status {
	s := ghclient.Status{State: "success", Context: decide.ContextContracts, Description: checkjob.ContractsTitle(rep), TargetURL: targetURL}
	if rep.Verdict.Verdict == gate.Hold {
		s.State = "failure"
	}
	return s
}
