package decide

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/outcome"
)

// maxPullOutcomes bounds the outcome files read for one pull request.
const maxPullOutcomes = 50

// SyncPullRequest recomputes phasegate/decisions on a pull request's head
// (the App, on pull_request opened/synchronize and when someone else
// overwrote the status): the Phase Outcomes the pull request adds or changes
// are read at its head, each is looked up on its issue, and the status is
// pending while one of their blocking decisions is unresolved, failure when
// one was resolved negatively (or a phasegate comment was edited), success
// otherwise.
func (h *Handler) SyncPullRequest(ctx context.Context, gh GitHub, owner, repo string, number int) error {
	pr, err := gh.PullRequest(ctx, owner, repo, number)
	if err != nil {
		return fmt.Errorf("reading pull request %s/%s#%d: %w", owner, repo, number, err)
	}
	if pr.State != "open" || pr.HeadSHA == "" {
		return nil
	}
	files, err := gh.PullRequestFiles(ctx, owner, repo, number)
	if err != nil {
		return fmt.Errorf("listing the files of %s/%s#%d: %w", owner, repo, number, err)
	}
	var names []string
	for name, status := range files {
		if status == "removed" {
			continue
		}
		k := artifact.ClassifyPath(name)
		candidate := k != nil && k.ID == "outcome.phase-outcome"
		if k == nil {
			switch strings.ToLower(path.Ext(name)) {
			case ".yaml", ".yml":
				candidate = true // maybe an outcome by content
			}
		}
		if candidate {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if len(names) > maxPullOutcomes {
		names = names[:maxPullOutcomes]
	}
	kind := artifact.KindByID("outcome.phase-outcome")
	var carried []*ledger.Outcome
	tampered := ""
	threads := map[int]*thread{}
	for _, name := range names {
		data, found, err := gh.FileContent(ctx, owner, repo, name, pr.HeadSHA)
		if err != nil {
			return fmt.Errorf("reading %s at %s: %w", name, pr.HeadSHA, err)
		}
		if !found || (artifact.ClassifyPath(name) == nil && artifact.Sniff(name, data) != kind) {
			continue
		}
		doc := artifact.Decode(name, kind, data, artifact.DefaultLimits)
		if !doc.Decoded {
			continue
		}
		o, err := outcome.Parse(doc.Value)
		if err != nil {
			continue
		}
		canonical, err := outcome.Canonical(doc.Value)
		if err != nil {
			continue
		}
		id := outcome.ID(canonical)
		var on *ledger.Outcome
		if issue, ok := check.OutcomeIssue(doc.Value, number); ok {
			t := threads[issue]
			if t == nil {
				if t, err = h.load(ctx, gh, owner, repo, issue); err != nil {
					return err
				}
				threads[issue] = t
			}
			on = t.st.Outcome(id)
			if t.st.Frozen() && tampered == "" {
				tampered = fmt.Sprintf("tampering on #%d (comment %d): %s", issue, t.st.Tampered[0].CommentID, t.st.Tampered[0].Reason)
			}
		}
		if on == nil {
			on = &ledger.Outcome{ID: id, Outcome: o}
			for _, d := range o.Decisions {
				on.Decisions = append(on.Decisions, &ledger.Decision{Decision: d})
			}
		}
		carried = append(carried, on)
	}
	var negative []string
	for _, t := range threads {
		negative = t.cfg.Decisions.NegativeOptions
	}
	v := ledger.Decisions(carried, negative)
	if tampered != "" {
		v = ledger.Verdict{State: "failure", Description: tampered}
	}
	if len(carried) == 0 {
		v.Description = "no Phase Outcome in this pull request"
	}
	identity := h.Identity
	target := ""
	issues := make([]int, 0, len(threads))
	for n := range threads {
		issues = append(issues, n)
	}
	sort.Ints(issues)
	if len(issues) > 0 {
		t := threads[issues[0]]
		identity = t.cfg.IdentityOrDefault()
		if c, ok := t.comment(t.st.Tip); ok {
			target = c.HTMLURL
		}
	}
	s := ghclient.Status{State: v.State, Context: ContextDecisions, Description: v.Description, TargetURL: target}
	return setStatus(ctx, gh, owner, repo, pr.HeadSHA, identity, s, nil)
}
