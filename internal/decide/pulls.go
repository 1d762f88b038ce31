package decide

import (
	"context"
	"fmt"
)

// SyncPullRequest recomputes phasegate/decisions on a pull request's head
// (the App, on pull_request opened/synchronize and when someone else
// overwrote the status): SyncCommit of the head.
func (h *Handler) SyncPullRequest(ctx context.Context, gh GitHub, owner, repo string, number int) error {
	pr, err := gh.PullRequest(ctx, owner, repo, number)
	if err != nil {
		return fmt.Errorf("reading pull request %s/%s#%d: %w", owner, repo, number, err)
	}
	if pr.State != "open" || pr.HeadSHA == "" {
		return nil
	}
	_, err = h.SyncCommit(ctx, gh, owner, repo, pr.HeadSHA, CommitOptions{PR: &pr})
	return err
}
