package decide

import (
	"context"
	"fmt"
	"slices"

	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/outcome"
)

// Reads for serve's pages: what a commit's phasegate/decisions says, which
// issues its change's outcomes go to, and what a push changed after an
// approval. They write nothing.

// CommitDecisions is the newest phasegate/decisions record of sha (a
// status, or the App's check run when it publishes checks); false when
// there is none.
func (h *Handler) CommitDecisions(ctx context.Context, gh GitHub, owner, repo, sha string) (ghclient.Status, bool, error) {
	s, ok, err := h.latestRecord(ctx, gh, owner, repo, sha, ContextDecisions)
	if err != nil {
		return ghclient.Status{}, false, fmt.Errorf("reading %s of %s in %s/%s: %w", ContextDecisions, outcome.ShortSHA(sha), owner, repo, err)
	}
	return s, ok, nil
}

// CommitIssues are the issues the Phase Outcomes of sha's change go to,
// each once, in order: the same change SyncCommit computes
// phasegate/decisions from.
func (h *Handler) CommitIssues(ctx context.Context, gh GitHub, owner, repo, sha string) ([]int, error) {
	carried, _, err := h.carried(ctx, gh, owner, repo, sha, CommitOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the Phase Outcomes of %s in %s/%s: %w", outcome.ShortSHA(sha), owner, repo, err)
	}
	var out []int
	for _, c := range carried {
		if c.issue > 0 {
			out = append(out, c.issue)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// ChangedSinceApproval says what pushes after d's resolution changed that
// the decision covers (decisions.invalidate_on_push), on the head of the
// open pull request that carried o: the commit it was given on and the
// files, or why they cannot be listed. Nil when the resolution still
// covers the head, when it is negative (final), or when no open pull
// request carries o.
func (h *Handler) ChangedSinceApproval(ctx context.Context, gh GitHub, owner, repo string, in *Inspection, o *ledger.Outcome, d *ledger.Decision) ([]string, error) {
	if d.Resolution == nil || o.PR <= 0 {
		return nil, nil
	}
	pr, ok := in.PRs[o.PR]
	if !ok || pr.State != "open" || pr.HeadSHA == "" {
		return nil, nil
	}
	var st *staleness
	fs := facts{}
	err := h.settle(ctx, gh, owner, repo, fs, func() (n *need, err error) {
		st, n, err = staleOf(in.Config, o, d, pr.HeadSHA, fs)
		return n, err
	})
	if err != nil || st == nil {
		return nil, err
	}
	lines := []string{fmt.Sprintf("given on %s; the head is now %s", outcome.ShortSHA(st.given), outcome.ShortSHA(pr.HeadSHA))}
	if st.why != "" {
		return append(lines, st.why), nil
	}
	return append(lines, st.files...), nil
}
