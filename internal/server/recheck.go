package server

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/phasegate/phasegate/internal/checkjob"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/outcome"
)

// recheckHeads checks the head of every open pull request of a repository
// whose phasegate/contracts of the App's does not stand for the pull
// request's current input (checkjob.Input): none yet (a delivery that never
// arrived, a job that failed in a replica's memory), or one checked with
// another base, as a push, with another configuration or version. A
// required check is never left waiting for a delivery that is gone, nor
// green for what no longer merges. It returns how many heads it checked.
func (s *Server) recheckHeads(ctx context.Context, gh *ghclient.Client, installation int64, owner, repo string, log *slog.Logger) (int, error) {
	prs, err := gh.ListOpenPullRequests(ctx, owner, repo)
	if ghclient.IsNotFound(err) {
		return 0, nil // gone, or not the installation's any more
	}
	if err != nil {
		return 0, fmt.Errorf("listing the open pull requests of %s/%s: %w", owner, repo, err)
	}
	if len(prs) == 0 {
		return 0, nil
	}
	blob, err := checkjob.ConfigBlob(ctx, gh, owner, repo, s.configPath(), "")
	if err != nil {
		return 0, err
	}
	checked := 0
	for _, pr := range prs {
		if ctx.Err() != nil || !hexSHA(pr.HeadSHA) {
			continue
		}
		j := &job{Kind: kindCheck, Event: "reconcile", Delivery: "reconcile", Installation: installation, Owner: owner, Repo: repo,
			PR: pr.Number, SHA: strings.ToLower(pr.HeadSHA)}
		done, err := s.checkedWith(ctx, gh, s.checkRequest(j, j.SHA, &pr), blob)
		if err != nil {
			return checked, err
		}
		if done {
			continue
		}
		if err := s.checkCommit(ctx, gh, s.decider(log, nil), j, log.With("pull_request", pr.Number)); err != nil {
			return checked, err
		}
		checked++
	}
	return checked, nil
}

func (s *Server) configPath() string { return cmp.Or(s.cfg.ConfigPath, config.DefaultPath) }

// configChanged says whether push job j changed the gate's configuration:
// its blob at the pushed commit is not the one at the commit before (a new
// branch, or a blob that cannot be read, counts as changed).
func (s *Server) configChanged(ctx context.Context, gh *ghclient.Client, j *job) bool {
	if j.Base == "" {
		return true
	}
	before, err := checkjob.ConfigBlob(ctx, gh, j.Owner, j.Repo, s.configPath(), j.Base)
	if err != nil {
		return true
	}
	after, err := checkjob.ConfigBlob(ctx, gh, j.Owner, j.Repo, s.configPath(), j.SHA)
	return err != nil || after != before
}

// contractsDone says whether the App's phasegate/contracts on req's commit
// stands for req's input with the configuration the default branch has now.
func (s *Server) contractsDone(ctx context.Context, gh *ghclient.Client, req checkjob.Request) (bool, error) {
	blob, err := checkjob.ConfigBlob(ctx, gh, req.Owner, req.Repo, s.configPath(), "")
	if err != nil {
		return false, err
	}
	return s.checkedWith(ctx, gh, req, blob)
}

// checkedWith says whether the App's phasegate/contracts on req's commit is
// completed for req's input with the configuration blob. A status records
// no input: with statuses alone, completed is all that can be asked.
func (s *Server) checkedWith(ctx context.Context, gh *ghclient.Client, req checkjob.Request, blob string) (bool, error) {
	if s.cfg.Publish == decide.PublishStatuses {
		_, ok, err := s.contractsStatus(ctx, gh, req.Owner, req.Repo, req.SHA)
		return ok, err
	}
	rec, ok, err := s.lastContracts(ctx, gh, req.Owner, req.Repo, req.SHA)
	return ok && rec.Input == checkjob.InputOf(req, blob).Digest(), err
}

// lastContracts is what the App's latest phasegate/contracts on sha
// records, when it is completed.
func (s *Server) lastContracts(ctx context.Context, gh *ghclient.Client, owner, repo, sha string) (decide.Record, bool, error) {
	r, ok, err := s.contractsRun(ctx, gh, owner, repo, sha)
	if !ok || err != nil {
		return decide.Record{}, false, err
	}
	rec, ok := decide.RecordOf(r.ExternalID)
	return rec, ok, nil
}

// contractsRun is the App's own latest phasegate/contracts check run on
// sha, when it is completed: only the App can write it.
func (s *Server) contractsRun(ctx context.Context, gh *ghclient.Client, owner, repo, sha string) (ghclient.CheckRun, bool, error) {
	runs, err := gh.CheckRunsForRef(ctx, owner, repo, sha, decide.ContextContracts)
	if err != nil {
		return ghclient.CheckRun{}, false, err
	}
	self := s.Identity()
	for _, r := range runs { // the latest of each App
		if r.Status == "completed" && self != "" && strings.EqualFold(r.AppSlug+"[bot]", self) {
			return r, true, nil
		}
	}
	return ghclient.CheckRun{}, false, nil
}

// contractsStatus is the latest phasegate/contracts status on sha when
// the App set it and it is not pending (--publish statuses: a status
// records no input).
func (s *Server) contractsStatus(ctx context.Context, gh *ghclient.Client, owner, repo, sha string) (ghclient.Status, bool, error) {
	st, ok, err := gh.LatestStatus(ctx, owner, repo, sha, decide.ContextContracts)
	self := s.Identity()
	if err != nil || !ok || st.State == "pending" || self == "" || !strings.EqualFold(st.Creator, self) {
		return ghclient.Status{}, false, err
	}
	return st, true, nil
}

// recordedPull is the pull request the App's latest phasegate/contracts on
// sha was checked as, read again (nil: none, or no longer open; one whose
// head moved on is not sha's, see checkRequest). GitHub's listing of a
// commit's pull requests lags behind a pull request just opened: without
// this, a late push or check suite delivery would check the head again as
// a bare push, over the pull request's result.
func (s *Server) recordedPull(ctx context.Context, gh *ghclient.Client, owner, repo, sha string) (*ghclient.PR, error) {
	if s.cfg.Publish == decide.PublishStatuses {
		return nil, nil
	}
	rec, ok, err := s.lastContracts(ctx, gh, owner, repo, sha)
	if err != nil {
		return nil, fmt.Errorf("reading the checks of %s: %w", outcome.ShortSHA(sha), err)
	}
	if !ok || rec.PR == 0 {
		return nil, nil
	}
	pr, err := gh.PullRequest(ctx, owner, repo, rec.PR)
	if err != nil {
		return nil, fmt.Errorf("reading pull request #%d recorded on %s: %w", rec.PR, outcome.ShortSHA(sha), err)
	}
	if pr.State != "open" {
		return nil, nil
	}
	return &pr, nil
}
