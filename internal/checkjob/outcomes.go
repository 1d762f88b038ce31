// Package checkjob is the checking job that the action and the App share
// (Job.Check): the configuration of the default branch, the change of the
// commit, its files (a checkout's directory, or the commit's tree as an
// fs.FS) → artifacts → findings → verdict, the Phase Outcomes the change
// carries vetted for posting, and their posting (Job.Post). For the App,
// the whole job on one commit (CheckCommit): the check runs, the outcomes
// posted and phasegate/decisions, every write through decide, the one
// writer.
package checkjob

import (
	"context"
	"fmt"
	"sort"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/report"
)

// Rule IDs of the posting checks.
const (
	RuleOutcomeIssue   = "outcome.issue-open"
	RuleOutcomeTooMany = "outcome.max-per-push"
	RuleOutcomeNoIssue = "outcome.issue"
)

// Carried is a Phase Outcome file that the change adds or modifies.
type Carried struct {
	Doc       *artifact.Document
	Outcome   *outcome.Outcome
	Canonical []byte
	ID        string
	Issue     int  // 0: it names no issue and the change has no pull request
	Added     bool // added by the change (only an added outcome is posted)
	Refused   bool // a finding says why it is not posted
}

// Postable says whether c is posted: added, naming its issue, not refused.
func (c Carried) Postable() bool { return c.Issue != 0 && c.Added && !c.Refused }

// carriedOutcomes are the decoded outcomes (check.Result.Outcomes) that the
// change added or modified, with the issue each belongs to, sorted by path.
// An outcome that names no issue when the change has no pull request has
// Issue 0: the caller reports it (it cannot be posted). An outcome file
// with an error finding is not carried: what breaks its contract is never
// posted (its findings say why).
func carriedOutcomes(docs []*artifact.Document, findings []check.Finding, changed map[string]check.Change, pr int) []Carried {
	broken := map[string]bool{}
	for _, f := range findings {
		if f.Severity == check.SeverityError {
			broken[f.File] = true
		}
	}
	var out []Carried
	for _, d := range docs {
		change, ok := changed[d.Path]
		if !ok || change == check.Deleted || broken[d.Path] {
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
		issue, _ := outcome.IssueOf(d.Value, pr)
		out = append(out, Carried{Doc: d, Outcome: o, Canonical: canonical, ID: outcome.ID(canonical), Issue: issue, Added: change == check.Added})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Doc.Path < out[j].Doc.Path })
	return out
}

// vetIssues checks, before anything is posted, where each added outcome would
// go: its issue must be an open issue of the repository (a pull request
// only when it is the change's own, pr), and one change posts at most limit
// outcomes. Each refusal is an error finding on the outcome's file and the
// outcome is marked Refused. The error is for an issue that could not be
// read (that outcome is refused too, without a finding: it could not run).
func vetIssues(ctx context.Context, gh GitHub, owner, repo string, pr, limit int, outs []Carried) ([]check.Finding, error) {
	var findings []check.Finding
	var errs error
	refuse := func(c *Carried, rule, msg string) {
		c.Refused = true
		findings = append(findings, check.Finding{File: c.Doc.Path, Line: 1, Column: 1, Kind: "outcome.phase-outcome",
			Rule: rule, Severity: check.SeverityError, Message: msg})
	}
	issues := map[int]*ghclient.Issue{}
	added := 0
	for i := range outs {
		c := &outs[i]
		if !c.Added || c.Issue == 0 {
			continue
		}
		if added++; added > limit {
			refuse(c, RuleOutcomeTooMany, fmt.Sprintf("this change adds more than %d Phase Outcomes (outcome.max_per_push): this one is not posted", limit))
			continue
		}
		is, seen := issues[c.Issue]
		if !seen {
			got, err := gh.Issue(ctx, owner, repo, c.Issue)
			switch {
			case err == nil:
				is = &got
			case ghclient.IsNotFound(err):
			default:
				c.Refused = true
				if errs == nil {
					errs = fmt.Errorf("reading issue #%d: %w", c.Issue, err)
				}
				continue
			}
			issues[c.Issue] = is
		}
		switch {
		case is == nil:
			refuse(c, RuleOutcomeIssue, fmt.Sprintf("issue #%d does not exist in this repository: the outcome cannot be posted", c.Issue))
		case is.IsPullRequest && is.Number != pr:
			refuse(c, RuleOutcomeIssue, fmt.Sprintf("#%d is a pull request other than this run's own: an outcome is posted on an issue, or on the pull request that carries it", c.Issue))
		case is.State != "open":
			refuse(c, RuleOutcomeIssue, fmt.Sprintf("issue #%d is %s: an outcome is posted only on an open issue", c.Issue, report.Terminal(is.State)))
		}
	}
	return findings, errs
}
