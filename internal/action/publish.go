package action

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/gate"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/report"
)

// Labels phasegate manages (docs/contracts/outcome.md).
const (
	LabelPending = "phasegate:pending"
	labelPhase   = "phase:"
)

// carried is an outcome file that this push or pull request adds (or changes:
// a changed outcome is also an error finding, but its decisions still
// count for the decision status).
type carried struct {
	doc       *artifact.Document
	o         *outcome.Outcome
	canonical []byte
	id        string
	issue     int
	added     bool
	refused   bool // a finding says why it is not posted
}

// Rule IDs of the posting checks.
const (
	ruleOutcomeIssue   = "outcome.issue-open"
	ruleOutcomeTooMany = "outcome.max-per-push"
)

// vetOutcomes checks, before anything is posted, where each added outcome
// would go: its issue must be an open issue of the repository (a pull
// request only when it is this run's own), and one push posts at most
// outcome.max_per_push outcomes. Each refusal is an error finding on the
// outcome's file, and the outcome is not posted.
func (r *run) vetOutcomes(ctx context.Context, cr *commitRun, outs []carried) ([]carried, []check.Finding) {
	var findings []check.Finding
	refuse := func(c *carried, rule, msg string) {
		c.refused = true
		findings = append(findings, check.Finding{File: c.doc.Path, Line: 1, Column: 1, Kind: "outcome.phase-outcome",
			Rule: rule, Severity: check.SeverityError, Message: msg})
	}
	issues := map[int]*ghclient.Issue{}
	added := 0
	limit := cr.cfg.Outcome.MaxPerPushOrDefault()
	for i := range outs {
		c := &outs[i]
		if !c.added || c.issue == 0 {
			continue
		}
		if added++; added > limit {
			refuse(c, ruleOutcomeTooMany, fmt.Sprintf("this change adds more than %d Phase Outcomes (outcome.max_per_push): this one is not posted", limit))
			continue
		}
		is, seen := issues[c.issue]
		if !seen {
			got, err := r.gh.Issue(ctx, r.owner, r.repo, c.issue)
			switch {
			case err == nil:
				is = &got
			case ghclient.IsNotFound(err):
			default:
				r.apiError(fmt.Sprintf("read issue #%d", c.issue), err)
				c.refused = true
				continue
			}
			issues[c.issue] = is
		}
		switch {
		case is == nil:
			refuse(c, ruleOutcomeIssue, fmt.Sprintf("issue #%d does not exist in this repository: the outcome cannot be posted", c.issue))
		case is.IsPullRequest && is.Number != cr.pr:
			refuse(c, ruleOutcomeIssue, fmt.Sprintf("#%d is a pull request other than this run's own: an outcome is posted on an issue, or on the pull request that carries it", c.issue))
		case is.State != "open":
			refuse(c, ruleOutcomeIssue, fmt.Sprintf("issue #%d is %s: an outcome is posted only on an open issue", c.issue, report.Terminal(is.State)))
		}
	}
	return outs, findings
}

// publish posts new outcomes and sets both commit statuses. It returns how
// many outcome comments it posted. Posting, labels and phasegate/decisions
// go through the decision handler, the one writer the App shares: the
// decisions status is a function of the commit (decide.SyncCommit), so
// whichever event computes it last, it says the same.
//
// A read-only run (a pull request from a fork) writes nothing; a run whose
// first write GitHub refuses with 403 writes nothing more. Either exits by
// the verdict: its results are published by a workflow_run run.
func (r *run) publish(ctx context.Context, cr *commitRun, rep report.Report, outs []carried) int {
	if r.readOnly != "" {
		return 0
	}
	h := r.handler(cr.in)
	var news []decide.NewOutcome
	for _, c := range outs {
		if c.issue == 0 || !c.added || c.refused {
			continue
		}
		switch {
		case !cr.in.postOutcomes:
			r.skip("posting " + cr.prefix + c.doc.Path + ": the input post-outcomes is false")
			continue
		case cr.fork != "":
			r.skip("posting " + cr.prefix + c.doc.Path + ": the pull request comes from the fork " + cr.fork + ", and phasegate never posts a fork's outcomes")
			continue
		}
		news = append(news, decide.NewOutcome{Source: cr.prefix + c.doc.Path, Outcome: c.o, Canonical: c.canonical, Issue: c.issue})
	}
	posted := 0
	if len(news) > 0 && cr.head != "" {
		p, err := h.PostOutcomes(ctx, r.gh, r.owner, r.repo, news, decide.PostMeta{Commit: cr.head, PR: cr.pr, Actors: r.actors(ctx, cr), Ref: pushedRef(cr)})
		posted = len(p)
		r.posted = append(r.posted, p...)
		if err != nil {
			if r.denied(err) {
				return posted
			}
			r.apiError("post the Phase Outcomes", err)
		}
	}
	r.setStatuses(ctx, cr, rep, h)
	return posted
}

// carriedOutcomes are the decoded outcomes that this push or pull request
// added or changed, with the issue each belongs to.
func (r *run) carriedOutcomes(cr *commitRun, docs []*artifact.Document) []carried {
	var out []carried
	for _, d := range docs {
		change, ok := cr.changed[d.Path]
		if !ok || change == check.Deleted {
			continue
		}
		o, err := outcome.Parse(d.Value)
		if err != nil {
			continue // the schema and rule layers report why
		}
		canonical, err := outcome.Canonical(d.Value)
		if err != nil {
			continue
		}
		issue, ok := outcome.IssueOf(d.Value, cr.pr)
		if !ok {
			r.a.WithFieldsMap(map[string]string{"file": report.Terminal(cr.prefix + d.Path), "line": "1", "title": "phasegate outcome.issue"}).
				Errorf("%s", "this Phase Outcome names no issue (`issue:` or a numbered `feature: feature-N`) and the run has no pull request: it cannot be posted")
			r.failed = true
			continue
		}
		out = append(out, carried{doc: d, o: o, canonical: canonical, id: outcome.ID(canonical), issue: issue, added: change == check.Added})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].doc.Path < out[j].doc.Path })
	return out
}

// actors are the accounts GitHub attests as having made this change, which
// may never resolve the decisions of the outcomes it carries: the event's
// sender, the push's pusher, the pull request's author, the workflow's
// actor and triggering actor, and the head commit's author and committer
// only when GitHub verified the commit's signature (anyone can write any
// name and e-mail into an unsigned commit). At most 10.
func (r *run) actors(ctx context.Context, cr *commitRun) []string {
	list := []string{cr.ev.Sender.Login, cr.ev.Pusher.Name, r.getenv("GITHUB_ACTOR"), r.getenv("GITHUB_TRIGGERING_ACTOR")}
	if cr.ev.PullRequest != nil {
		list = append(list, cr.ev.PullRequest.User.Login)
	}
	if info, err := r.gh.Commit(ctx, r.owner, r.repo, cr.head); err == nil && info.Verified {
		list = append(list, info.Author, info.Committer)
	}
	var out []string
	seen := map[string]bool{}
	for _, a := range list {
		if a == "" || !outcome.Actor(a) || seen[strings.ToLower(a)] {
			continue
		}
		seen[strings.ToLower(a)] = true
		out = append(out, a)
	}
	return out
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

func (r *run) signingKey() []byte {
	if k := r.getenv("PHASEGATE_SIGNING_KEY"); k != "" {
		return []byte(k)
	}
	return nil
}

// setStatuses publishes phasegate/contracts (the verdict of this commit's
// artifacts) and phasegate/decisions (decide.SyncCommit) on the head.
func (r *run) setStatuses(ctx context.Context, cr *commitRun, rep report.Report, h *decide.Handler) {
	if cr.head == "" {
		r.apiError("publish statuses", fmt.Errorf("the event names no head commit"))
		return
	}
	contracts := contractsStatus(rep.Verdict.Verdict, contractsDescription(rep), r.runURL())
	if err := r.gh.CreateStatus(ctx, r.owner, r.repo, cr.head, contracts); err != nil {
		if r.denied(err) {
			return
		}
		r.apiError("set the "+ContextContracts+" status", err)
	} else {
		r.statuses = append(r.statuses, contracts)
	}
	opts := decide.CommitOptions{DefaultBranch: cr.ev.Repository.DefaultBranch, TargetURL: r.runURL()}
	if cr.pr > 0 && cr.ev.PullRequest != nil && cr.ev.PullRequest.Head.SHA == cr.head {
		opts.PR = &ghclient.PR{Number: cr.pr, State: "open", HeadSHA: cr.head, BaseSHA: cr.base}
	}
	r.syncDecisions(ctx, h, cr.head, opts)
}

// syncDecisions sets phasegate/decisions on sha (decide.SyncCommit).
func (r *run) syncDecisions(ctx context.Context, h *decide.Handler, sha string, opts decide.CommitOptions) {
	st, err := h.SyncCommit(ctx, r.gh, r.owner, r.repo, sha, opts)
	if err != nil {
		if r.denied(err) {
			return
		}
		r.apiError("set the "+ContextDecisions+" status", err)
		return
	}
	r.statuses = append(r.statuses, st)
}

// contractsDescription is phasegate/contracts' description: the verdict
// and its first reason, or the counts.
func contractsDescription(rep report.Report) string {
	d := string(rep.Verdict.Verdict)
	if len(rep.Verdict.Reasons) > 0 {
		return d + ": " + rep.Verdict.Reasons[0]
	}
	errs, warns := check.Count(rep.Findings)
	return d + fmt.Sprintf(": %d artifacts, %d errors, %d warnings", rep.Artifacts, errs, warns)
}

// contractsStatus is phasegate/contracts for a verdict: success for SHIP
// and ADVISORY, failure for HOLD.
func contractsStatus(v gate.Verdict, description, targetURL string) ghclient.Status {
	s := ghclient.Status{State: "success", Context: ContextContracts, Description: description, TargetURL: targetURL}
	if v == gate.Hold {
		s.State = "failure"
	}
	return s
}
