package decide

import (
	"context"
	"fmt"

	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/outcome"
)

// NewOutcome is a Phase Outcome a change adds, to post on its issue.
type NewOutcome struct {
	// Source is the file's path from the repository root.
	Source string
	// Outcome and Canonical are the decoded outcome and its canonical YAML.
	Outcome   *outcome.Outcome
	Canonical []byte
	// Issue is where it is posted.
	Issue int
}

// PostedOutcome is an outcome comment PostOutcomes posted.
type PostedOutcome struct {
	Source  string
	Issue   int
	Comment ghclient.Comment
}

// PostMeta is the provenance every outcome of one change carries.
type PostMeta struct {
	// Commit added the files; PR is the run's pull request (0: none).
	Commit string
	PR     int
	// Actors are the accounts GitHub attested made the change.
	Actors []string
	// Ref is the branch the change was pushed to (the pull request's head
	// branch, or the pushed ref): every account GitHub's activity lists as
	// having pushed it is recorded too. "": only Actors.
	Ref string
}

// PostOutcomes posts each outcome once on its issue (an outcome already
// on the thread, by content hash, is not posted again), chained to the
// newest phasegate comment, and brings the issue's labels and
// phasegate/decisions in line through the same advance a /resolve uses:
// decide is the one writer of comments, labels and phasegate/decisions for
// the action and the App alike (the action sets phasegate/contracts
// itself). What was posted before an error is returned with it.
func (h *Handler) PostOutcomes(ctx context.Context, gh GitHub, owner, repo string, outs []NewOutcome, meta PostMeta) ([]PostedOutcome, error) {
	var posted []PostedOutcome
	actors, err := h.attest(ctx, gh, owner, repo, meta)
	if err != nil {
		return nil, err
	}
	meta.Actors = actors
	byIssue := map[int][]NewOutcome{}
	var issues []int
	for _, o := range outs {
		if _, ok := byIssue[o.Issue]; !ok {
			issues = append(issues, o.Issue)
		}
		byIssue[o.Issue] = append(byIssue[o.Issue], o)
	}
	for _, issue := range issues {
		p, err := h.postOn(ctx, gh, owner, repo, issue, byIssue[issue], meta)
		posted = append(posted, p...)
		if err != nil {
			return posted, err
		}
	}
	return posted, nil
}

func (h *Handler) postOn(ctx context.Context, gh GitHub, owner, repo string, issue int, outs []NewOutcome, meta PostMeta) ([]PostedOutcome, error) {
	unlock, err := h.locks().Lock(ctx, lockKey(owner, repo, issue))
	if err != nil {
		return nil, fmt.Errorf("locking %s/%s#%d: %w", owner, repo, issue, err)
	}
	defer unlock()
	t, err := h.load(ctx, gh, owner, repo, issue)
	if err != nil {
		return nil, err
	}
	defer h.observe(t)
	if err := h.checkWiped(ctx, gh, t); err != nil {
		return nil, err
	}
	var posted []PostedOutcome
	for _, o := range outs {
		if t.st.Outcome(outcome.ID(o.Canonical)) != nil {
			continue // posted before: idempotent by content hash
		}
		body, err := outcome.Render(o.Outcome, o.Canonical, outcome.Meta{Source: o.Source, Commit: meta.Commit, PR: meta.PR, Key: h.Key,
			Actors: meta.Actors, Prev: t.st.Tip})
		if err != nil {
			return posted, fmt.Errorf("rendering the outcome %s: %w", o.Source, err)
		}
		c, err := gh.CreateIssueComment(ctx, owner, repo, issue, body)
		if err != nil {
			return posted, fmt.Errorf("posting the outcome %s on %s/%s#%d: %w", o.Source, owner, repo, issue, err)
		}
		posted = append(posted, PostedOutcome{Source: o.Source, Issue: issue, Comment: c})
		t.comments = append(t.comments, c)
		t.fresh[c.ID] = true
		if t.sources != nil { // it is the file at that commit: the caller read it there
			t.sources[meta.Commit+":"+o.Source] = outcome.ID(o.Canonical)
		}
		t.fold(h.Key)
	}
	if len(posted) == 0 {
		return nil, nil
	}
	if _, read := t.history[meta.Commit]; t.heads == nil || (meta.PR > 0 && t.heads[meta.PR].Number == 0) || !read {
		if err := h.checkAnchors(ctx, gh, t); err != nil {
			return posted, err
		}
	}
	return posted, h.advance(ctx, gh, t)
}
