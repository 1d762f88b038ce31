package server

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"strconv"
	"strings"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/checkjob"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/outcome"
)

// checkJob runs a check job: its commit, and after a push to the default
// branch that changed the gate's configuration (which every pull request
// is checked with) the heads of the open pull requests whose checks no
// longer stand for their input (recheckHeads). A push that changed no
// configuration leaves a moved base to the reconcile pass, rather than
// checking every open pull request again on each push.
func (s *Server) checkJob(ctx context.Context, gh *ghclient.Client, d Decider, j *job, log *slog.Logger) error {
	if err := s.checkCommit(ctx, gh, d, j, log); err != nil || j.Event != "push" {
		return err
	}
	def, err := gh.DefaultBranch(ctx, j.Owner, j.Repo)
	if err != nil {
		return fmt.Errorf("reading the default branch of %s/%s: %w", j.Owner, j.Repo, err)
	}
	if j.Ref != "refs/heads/"+def || !s.configChanged(ctx, gh, j) {
		return nil
	}
	n, err := s.recheckHeads(ctx, gh, j.Installation, j.Owner, j.Repo, log)
	if n > 0 {
		log.Info("a push to the default branch: checked the heads whose input it changed", "checked", n)
	}
	return err
}

// checkCommit runs the App's checking job on the job's commit: the pull
// request whose head it is gives the change's base, branch and author (the
// payload's, else the one GitHub lists for the commit, else the one the
// App's last check of the commit recorded), so that a push and a
// pull_request delivery for one head check the same change.
func (s *Server) checkCommit(ctx context.Context, gh *ghclient.Client, d Decider, j *job, log *slog.Logger) error {
	unlock, sha, err := s.lockCommit(ctx, gh, j)
	if err != nil {
		return err
	}
	defer unlock()
	// The pull request is read under the lock: a job that waited for it
	// (a push's, say, behind its pull request's) checks the change as it
	// is now, not as it was before it waited.
	pr, err := s.pullFor(ctx, gh, j)
	if err != nil {
		return err
	}
	if pr != nil && pr.State != "open" {
		log.Info("pull request is not open: nothing to check", "state", pr.State)
		return nil
	}
	req := s.checkRequest(j, sha, pr)
	if req.PR == nil && j.PR == 0 {
		// Under the lock: a check of the pull request that ran meanwhile
		// is recorded by now.
		if pr, err = s.recordedPull(ctx, gh, j.Owner, j.Repo, sha); err != nil {
			return err
		} else if pr != nil {
			req = s.checkRequest(j, sha, pr)
		}
	}
	if j.Event == "check_suite" && j.Action == "requested" || j.Event == "reconcile" {
		// GitHub requests a suite for every push, which the push delivery
		// already asked for; a reconcile pass found the head unchecked
		// before the lock, while another replica's check of it may have
		// been running: check only what was not checked with the input it
		// has now.
		if done, err := s.contractsDone(ctx, gh, req); err == nil && done {
			log.Info("the commit was already checked with this input: nothing to do", "head", sha, "event", j.Event)
			return nil
		}
	}
	limits := s.cfg.TreeLimits
	if limits.Wanted == nil { // what the checker reads: a kind's path, or a candidate whose content may make it one
		limits.Wanted = func(p string) bool { return artifact.ClassifyPath(p) != nil || artifact.Sniffable(p) }
	}
	limits.ArchiveOver = cmp.Or(limits.ArchiveOver, DefaultArchiveOver)
	var opened []*ghclient.CommitFS // closed (their spools removed) when the job ends
	defer func() {
		for _, f := range opened {
			if err := f.Close(); err != nil {
				log.Warn("could not remove the spooled archive", "err", err)
			}
		}
	}()
	req.Open = func(ctx context.Context, maxFileBytes int64) (fs.FS, error) {
		// The configuration may raise the size of a file it checks above
		// serve's: up to what serve reads of a commit in all.
		if maxFileBytes > cmp.Or(limits.MaxFileBytes, ghclient.DefaultMaxFileBytes) {
			limits.MaxFileBytes = min(maxFileBytes, cmp.Or(limits.MaxTotalBytes, ghclient.DefaultMaxTotalBytes))
		}
		f, err := gh.CommitFS(ctx, j.Owner, j.Repo, sha, limits)
		if err != nil {
			return nil, err
		}
		opened = append(opened, f)
		return f, nil
	}
	sum, err := d.CheckCommit(ctx, gh, req)
	s.pages.Record(ctx, j.Owner, j.Repo, sha, sum, log)
	log.Info("checked a commit", "head", sha, "verdict", sum.Verdict, "artifacts", sum.Artifacts, "reused_units", sum.Reused, "findings", sum.Findings,
		"posted", sum.Posted, "decisions", sum.Decisions.State)
	if err != nil {
		return fmt.Errorf("checking %s of %s/%s: %w", outcome.ShortSHA(sha), j.Owner, j.Repo, err)
	}
	return nil
}

// lockCommit takes the lock of the job's commit and returns it: one check
// of a commit at a time, whichever deliveries asked for it (a push, its
// pull request's opened or synchronize, the check suite), over every
// replica (Redis's lock) or in this one. Whatever the job reads of GitHub
// (its pull request, the tree, the reviews) it reads under the lock, so
// the check that finishes last started after the others ended and read
// all they did. A job naming a pull request but not its head reads the
// pull request first to know which commit to lock.
func (s *Server) lockCommit(ctx context.Context, gh *ghclient.Client, j *job) (unlock func(), sha string, err error) {
	sha = j.SHA
	if sha == "" {
		pr, err := s.pullFor(ctx, gh, j)
		if err != nil {
			return nil, "", err
		}
		if pr != nil {
			sha = strings.ToLower(pr.HeadSHA)
		}
	}
	unlock, err = s.cfg.Locker.Lock(ctx, "check:"+strings.ToLower(j.Owner+"/"+j.Repo)+":"+sha)
	if err != nil {
		return nil, "", fmt.Errorf("locking the check of %s: %w", outcome.ShortSHA(sha), err)
	}
	return unlock, sha, nil
}

// checkRequest is the check of j's commit as the head of pr (nil: none):
// the pull request's base, branch and fork when it is the commit's.
func (s *Server) checkRequest(j *job, sha string, pr *ghclient.PR) checkjob.Request {
	req := checkjob.Request{Owner: j.Owner, Repo: j.Repo, SHA: sha, Base: j.Base, BaseRef: j.BaseRef, Ref: j.Ref, Fork: j.Fork,
		HTMLURL: j.RepoURL, Version: s.cfg.Version}
	if j.Event == "push" || j.Event == "pull_request" {
		// Who made the change: the pusher, or who opened or pushed the
		// pull request (not who re-ran a check or reviewed).
		req.Actors = []string{j.Sender, j.Pusher}
	}
	if pr != nil {
		req.SHA = cmp.Or(req.SHA, strings.ToLower(pr.HeadSHA))
		if strings.EqualFold(pr.HeadSHA, req.SHA) {
			req.PR, req.Base, req.BaseRef, req.Ref, req.Fork = pr, strings.ToLower(pr.BaseSHA), pr.BaseRef, pr.HeadRef, forkOf(pr, j.Owner, j.Repo)
		}
	}
	req.HTMLURL = cmp.Or(req.HTMLURL, strings.TrimSuffix(s.webURL(), "/")+"/"+j.Owner+"/"+j.Repo)
	return req
}

// forkOf is the repository of pr's head when it is not owner/repo: a fork,
// whose outcomes are never posted ("(unknown)" when GitHub names none, as
// for a deleted fork).
func forkOf(pr *ghclient.PR, owner, repo string) string {
	switch {
	case strings.EqualFold(pr.HeadRepo, owner+"/"+repo):
		return ""
	case pr.HeadRepo == "":
		return "(unknown)"
	}
	return pr.HeadRepo
}

// DefaultArchiveOver is how many files the checker will read of a commit
// before the App downloads the commit's archive (two requests) rather than
// one blob per file: an installation's rate limit is 5,000 requests an hour.
const DefaultArchiveOver = 200

// pullFor is the pull request of a check job: the one the delivery carries
// (a pull_request or pull_request_review payload, signed by GitHub: no read
// needed), the one it names, else the open one whose head is the commit
// (nil: none).
func (s *Server) pullFor(ctx context.Context, gh *ghclient.Client, j *job) (*ghclient.PR, error) {
	if j.PR > 0 && j.SHA != "" && (j.Event == "pull_request" || j.Event == "pull_request_review") {
		pr := &ghclient.PR{Number: j.PR, State: "open", Author: j.Pusher, HeadSHA: j.SHA, HeadRef: j.Ref, BaseSHA: j.Base, BaseRef: j.BaseRef,
			HeadRepo: cmp.Or(j.Fork, j.Owner+"/"+j.Repo)}
		if j.RepoURL != "" {
			pr.HTMLURL = j.RepoURL + "/pull/" + strconv.Itoa(j.PR)
		}
		return pr, nil
	}
	if j.PR > 0 {
		pr, err := gh.PullRequest(ctx, j.Owner, j.Repo, j.PR)
		if err != nil {
			return nil, fmt.Errorf("reading pull request #%d: %w", j.PR, err)
		}
		return &pr, nil
	}
	prs, err := gh.PullRequestsForCommit(ctx, j.Owner, j.Repo, j.SHA)
	if err != nil {
		return nil, fmt.Errorf("listing the pull requests of %s: %w", outcome.ShortSHA(j.SHA), err)
	}
	for _, pr := range prs {
		if pr.State == "open" && strings.EqualFold(pr.HeadSHA, j.SHA) {
			return &pr, nil
		}
	}
	return nil, nil
}

// webURL is GitHub's web address for the API URL: https://github.com for
// api.github.com, the host for GitHub Enterprise Server's /api/v3/.
func (s *Server) webURL() string {
	u := strings.TrimSuffix(s.cfg.APIURL, "/")
	switch {
	case u == "" || u == "https://api.github.com":
		return "https://github.com"
	case strings.HasSuffix(u, "/api/v3"):
		return strings.TrimSuffix(u, "/api/v3")
	}
	return u
}
