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
	Issue     int
}

// PostedOutcome is an outcome comment PostAndSync posted.
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

// PostResult is what PostAndSync did.
type PostResult struct {
	Posted []PostedOutcome
	// Synced is set when phasegate/decisions of the commit was computed:
	// Decisions is the status, and an error returned with it is the sync's.
	// Unset, the error (if any) is the posting's, and the commit was not
	// synced.
	Synced    bool
	Decisions ghclient.Status
}

// PostAndSync posts each outcome once on its issue (an outcome already
// on the thread, by content hash, is not posted again), chained to the
// newest phasegate comment, and brings the issue's labels and
// phasegate/decisions in line through the same advance a /resolve uses:
// decide is the one writer of comments, labels and phasegate/decisions for
// the action and the App alike (the action sets phasegate/contracts
// itself). What was posted before an error is returned with it. Then it
// syncs meta.Commit with opts (SyncCommit) under the lock of the last
// issue posted on, with its thread as posting left it: the thread, its pull requests and the
// commit's statuses are not read a second time (the action's run and the
// App's check of a commit do both). It syncs only when every outcome was
// posted (or found posted before).
func (h *Handler) PostAndSync(ctx context.Context, gh GitHub, owner, repo string, outs []NewOutcome, meta PostMeta, opts CommitOptions) (PostResult, error) {
	return h.postOutcomes(ctx, gh, owner, repo, outs, meta, &opts)
}

func (h *Handler) postOutcomes(ctx context.Context, gh GitHub, owner, repo string, outs []NewOutcome, meta PostMeta, sync *CommitOptions) (PostResult, error) {
	var res PostResult
	actors, err := h.attest(ctx, gh, owner, repo, meta)
	if err != nil {
		return res, err
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
	for i, issue := range issues {
		var last *CommitOptions
		if i == len(issues)-1 {
			last = sync
		}
		if err := h.postOn(ctx, gh, owner, repo, issue, byIssue[issue], meta, last, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// postOn posts on issue each outcome of outs not on its thread yet (by
// content hash), adding them to res.Posted, and advances the thread when it
// posted; with sync, it then syncs meta.Commit with the thread, still under
// the issue's lock.
func (h *Handler) postOn(ctx context.Context, gh GitHub, owner, repo string, issue int, outs []NewOutcome, meta PostMeta, sync *CommitOptions, res *PostResult) error {
	unlock, err := h.locks().Lock(ctx, lockKey(owner, repo, issue))
	if err != nil {
		return fmt.Errorf("locking %s/%s#%d: %w", owner, repo, issue, err)
	}
	defer unlock()
	t, err := h.load(ctx, gh, owner, repo, issue, nil, nil)
	if err != nil {
		return err
	}
	defer h.observe(t)
	if err := h.checkWiped(ctx, gh, t); err != nil {
		return err
	}
	before := len(res.Posted)
	for _, o := range outs {
		if t.st.Outcome(outcome.ID(o.Canonical)) != nil {
			continue // posted before: idempotent by content hash
		}
		body, err := outcome.Render(o.Outcome, o.Canonical, outcome.Meta{Source: o.Source, Commit: meta.Commit, PR: meta.PR, Key: h.Key,
			Actors: meta.Actors, Prev: t.st.Tip})
		if err != nil {
			return fmt.Errorf("rendering the outcome %s: %w", o.Source, err)
		}
		c, err := gh.CreateIssueComment(ctx, owner, repo, issue, body)
		if err != nil {
			return fmt.Errorf("posting the outcome %s on %s/%s#%d: %w", o.Source, owner, repo, issue, err)
		}
		res.Posted = append(res.Posted, PostedOutcome{Source: o.Source, Issue: issue, Comment: c})
		if t.sources != nil { // it is the file at that commit: the caller read it there
			t.sources[meta.Commit+":"+o.Source] = outcome.ID(o.Canonical)
		}
		t.posted(c, h.Key)
	}
	if len(res.Posted) > before {
		if _, read := t.history[meta.Commit]; t.prs == nil || (meta.PR > 0 && !isHead(t.prs[meta.PR])) || !read {
			if err := h.checkAnchors(ctx, gh, t); err != nil {
				return err
			}
		}
		if err := h.advance(ctx, gh, t); err != nil {
			return err
		}
	}
	if sync == nil {
		return nil
	}
	res.Synced = true
	if st, ok := t.synced[meta.Commit]; ok {
		// Posting advanced the thread, which synced the commit with it,
		// under this lock: it is a function of the commit (SyncCommit).
		res.Decisions = st
		return nil
	}
	res.Decisions, err = h.syncCommit(ctx, gh, owner, repo, meta.Commit, *sync, map[int]*thread{issue: t})
	return err
}
