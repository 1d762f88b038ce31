package server

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
)

// recheckHeads checks the head of every open pull request of a repository
// that has no phasegate/contracts of the App's yet (a delivery that never
// arrived, a job that failed in a replica's memory): a required check is
// never left waiting for a delivery that is gone. It returns how many heads
// it checked.
func (s *Server) recheckHeads(ctx context.Context, gh *ghclient.Client, installation int64, owner, repo string, log *slog.Logger) (int, error) {
	prs, err := gh.ListOpenPullRequests(ctx, owner, repo)
	if ghclient.IsNotFound(err) {
		return 0, nil // gone, or not the installation's any more
	}
	if err != nil {
		return 0, fmt.Errorf("listing the open pull requests of %s/%s: %w", owner, repo, err)
	}
	checked := 0
	for _, pr := range prs {
		if ctx.Err() != nil || !hexSHA(pr.HeadSHA) {
			continue
		}
		done, err := s.contractsDone(ctx, gh, owner, repo, pr.HeadSHA)
		if err != nil {
			return checked, err
		}
		if done {
			continue
		}
		j := &job{kind: kindCheck, event: "reconcile", delivery: "reconcile", installation: installation, owner: owner, repo: repo,
			pr: pr.Number, sha: strings.ToLower(pr.HeadSHA)}
		if err := s.checkCommit(ctx, gh, s.decider(log), j, log.With("pull_request", pr.Number)); err != nil {
			return checked, err
		}
		checked++
	}
	return checked, nil
}

// contractsDone says whether the App already published phasegate/contracts
// on sha (completed, whatever its conclusion).
func (s *Server) contractsDone(ctx context.Context, gh *ghclient.Client, owner, repo, sha string) (bool, error) {
	self := s.identity()
	if s.cfg.Publish == decide.PublishStatuses {
		st, ok, err := gh.LatestStatus(ctx, owner, repo, sha, decide.ContextContracts)
		return ok && st.State != "pending" && strings.EqualFold(st.Creator, self), err
	}
	runs, err := gh.CheckRunsForRef(ctx, owner, repo, sha, decide.ContextContracts)
	if err != nil {
		return false, err
	}
	for _, r := range runs {
		if r.Status == "completed" && strings.EqualFold(r.AppSlug+"[bot]", self) {
			return true, nil
		}
	}
	return false, nil
}
