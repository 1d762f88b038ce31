package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
)

// jobLogger is the logger of a job: delivery, event, installation,
// repository and issue or pull request where known. Its attributes are
// formatted when it first writes a record (lazyAttrs): most jobs write
// none at the level that is on.
func (s *Server) jobLogger(j *job) *slog.Logger {
	attrs := make([]slog.Attr, 0, 7)
	attrs = append(attrs, slog.String("delivery", j.delivery), slog.String("event", j.event))
	if j.action != "" {
		attrs = append(attrs, slog.String("action", j.action))
	}
	attrs = append(attrs, slog.Int64("installation", j.installation))
	if r := j.repository(); r != "" {
		attrs = append(attrs, slog.String("repository", r))
	}
	if j.issue > 0 {
		attrs = append(attrs, slog.Int("issue", j.issue))
	}
	if j.pr > 0 {
		attrs = append(attrs, slog.Int("pull_request", j.pr))
	}
	return slog.New(&lazyAttrs{h: s.log.Handler(), attrs: attrs})
}

// lazyAttrs is h with attrs added (slog.Handler.WithAttrs) only when a
// record is handled or a group opened: a handler formats what it is given
// when it is given it, which a logger that writes nothing should not pay.
type lazyAttrs struct {
	h     slog.Handler
	attrs []slog.Attr

	once sync.Once
	with slog.Handler
}

func (l *lazyAttrs) handler() slog.Handler {
	l.once.Do(func() { l.with = l.h.WithAttrs(l.attrs) })
	return l.with
}

func (l *lazyAttrs) Enabled(ctx context.Context, level slog.Level) bool {
	return l.h.Enabled(ctx, level)
}

func (l *lazyAttrs) Handle(ctx context.Context, r slog.Record) error {
	return l.handler().Handle(ctx, r)
}

func (l *lazyAttrs) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &lazyAttrs{h: l.h, attrs: append(slices.Clip(l.attrs), attrs...)}
}

func (l *lazyAttrs) WithGroup(name string) slog.Handler { return l.handler().WithGroup(name) }

// handle runs one job: a panic is recovered and logged, and the worker
// goes on.
func (s *Server) handle(ctx context.Context, j *job) {
	start := time.Now()
	log := s.jobLogger(j)
	outcome := "ok"
	defer func() {
		if r := recover(); r != nil {
			outcome = "panic"
			s.metrics.panics.Inc()
			log.Error("panic while handling a delivery: recovered (reconcile retries the work)", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
		s.metrics.handler.WithLabelValues(j.event, outcome).Observe(time.Since(start).Seconds())
		if s.onJobDone != nil {
			s.onJobDone(j, outcome)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.JobTimeout)
	defer cancel()
	if err := s.dispatch(ctx, j, log); err != nil {
		outcome = "error"
		log.Error("could not finish handling a delivery (reconcile will)", "error", err)
	}
}

func (s *Server) decider(log *slog.Logger) Decider {
	return s.reconcileDecider(log, nil)
}

// reconcileDecider is decider with a reconcile pass's budget.
func (s *Server) reconcileDecider(log *slog.Logger, b decide.Budget) Decider {
	return s.cfg.NewDecider(DeciderOptions{
		Identity: s.identity(), Key: s.cfg.SigningKey, Locker: s.cfg.Locker, ConfigPath: s.cfg.ConfigPath, Logger: log,
		Notifier: s.cfg.Notifier, Publish: s.cfg.Publish, Validator: s.validator, Watermarks: s.watermarks,
		Memo: s.memo, Budget: b, Observe: s.observe, PagesURL: s.cfg.PublicURL, TreeLimits: s.cfg.TreeLimits,
	})
}

func logResult(log *slog.Logger, msg string, r decide.Result) {
	log.Info(msg, "resolutions", r.Resolutions, "replies", r.Replies, "captured", r.Captured, "skipped", r.Skipped, "tampered", r.Tampered)
}

// dispatch hands a job to the decision handler.
func (s *Server) dispatch(ctx context.Context, j *job, log *slog.Logger) error {
	if j.kind == kindUninstall {
		return s.uninstalled(j, log)
	}
	gh, err := s.client(j.installation)
	if err != nil {
		return err
	}
	s.installs.learn(j.owner, j.repo, j.installation)
	if j.issue > 0 && (j.kind == kindComment || j.kind == kindTamper) {
		defer s.changed(j.owner, j.repo, j.issue, "")
	}
	d := s.decider(log)
	self := s.identity()
	switch j.kind {
	case kindComment:
		res, err := d.HandleComment(ctx, gh, decide.Event{Owner: j.owner, Repo: j.repo, Issue: j.issue, Comment: j.comment, Delivery: j.delivery, Labels: j.labels})
		if err != nil {
			return fmt.Errorf("handling comment %d: %w", j.comment.ID, err)
		}
		logResult(log.With("comment", j.comment.ID), "handled a command comment", res)
	case kindTamper:
		if !strings.EqualFold(j.comment.Author, self) {
			log.Debug("edited comment is not phasegate's", "comment", j.comment.ID, "author", j.comment.Author)
			return nil
		}
		s.metrics.tamper.WithLabelValues(j.action).Inc()
		log.Warn("audit: a phasegate comment was "+j.action+": it no longer counts",
			"audit", "tamper", "comment", j.comment.ID, "author", j.comment.Author, "sender", j.sender)
		if j.action == "deleted" {
			// GitHub's signed word that phasegate's comment is gone is
			// tampering by itself: recorded where every later fold reads it,
			// however the heads move afterwards.
			res, err := d.RecordDeletion(ctx, gh, decide.Deletion{Owner: j.owner, Repo: j.repo, Issue: j.issue, Sender: j.sender,
				Comment: ghclient.Comment{ID: j.comment.ID, User: j.comment.Author, Body: j.comment.Body, HTMLURL: j.commentURL}})
			if err != nil {
				return fmt.Errorf("recording the deletion of comment %d: %w", j.comment.ID, err)
			}
			logResult(log, "recorded a deleted phasegate comment and reconciled", res)
			return nil
		}
		res, err := d.ReconcileIssue(ctx, gh, j.owner, j.repo, j.issue)
		if err != nil {
			return fmt.Errorf("reconciling after tampering: %w", err)
		}
		logResult(log, "reconciled after tampering", res)
	case kindPullRequest:
		if err := d.SyncPullRequest(ctx, gh, j.owner, j.repo, j.pr); err != nil {
			return fmt.Errorf("syncing %s on pull request #%d: %w", decide.ContextDecisions, j.pr, err)
		}
		log.Info("synced "+decide.ContextDecisions, "head", j.sha)
	case kindMergeGroup:
		// A merge queue waits for the required statuses on the merge
		// group's commit: phasegate/decisions of that commit, as of any
		// other (phasegate/contracts comes from the action's run).
		st, err := d.SyncCommit(ctx, gh, j.owner, j.repo, j.sha, decide.CommitOptions{TargetURL: j.targetURL})
		if err != nil {
			return fmt.Errorf("syncing %s on merge group %s: %w", decide.ContextDecisions, j.sha, err)
		}
		log.Info("synced "+decide.ContextDecisions+" on a merge group", "head", j.sha, "state", st.State)
	case kindCheck:
		return s.checkJob(ctx, gh, d, j, log)
	case kindStatus:
		if strings.EqualFold(j.sender, self) {
			return nil
		}
		return s.resetStatus(ctx, gh, d, j, log)
	case kindInstallRepos:
		return s.installed(ctx, gh, d, j, log)
	default:
		return fmt.Errorf("unknown job kind %q", j.kind)
	}
	return nil
}

// resetStatus answers phasegate/decisions set by someone else: an audit
// line, then the status recomputed on each open pull request whose head
// the commit is.
func (s *Server) resetStatus(ctx context.Context, gh *ghclient.Client, d Decider, j *job, log *slog.Logger) error {
	s.metrics.statusResets.Inc()
	log.Warn("audit: "+decide.ContextDecisions+" was set by someone other than phasegate: resetting it",
		"audit", "status-overwrite", "sender", j.sender, "sender_type", j.senderType, "sha", j.sha, "state", j.state, "description", j.description)
	prs, err := gh.PullRequestsForCommit(ctx, j.owner, j.repo, j.sha)
	if err != nil {
		return fmt.Errorf("finding the pull requests of %s: %w", j.sha, err)
	}
	var errs []error
	reset := 0
	for _, pr := range prs {
		if pr.State != "open" || !strings.EqualFold(pr.HeadSHA, j.sha) {
			continue
		}
		if err := d.SyncPullRequest(ctx, gh, j.owner, j.repo, pr.Number); err != nil {
			errs = append(errs, fmt.Errorf("pull request #%d: %w", pr.Number, err))
			continue
		}
		reset++
		log.Info("reset "+decide.ContextDecisions, "pull_request", pr.Number, "sha", j.sha)
	}
	if reset == 0 && len(errs) == 0 {
		log.Info("the commit is the head of no open pull request: nothing to reset", "sha", j.sha)
	}
	return errors.Join(errs...)
}

// installed reconciles the repositories an installation gained.
func (s *Server) installed(ctx context.Context, gh *ghclient.Client, d Decider, j *job, log *slog.Logger) error {
	type ownerName struct{ owner, name string }
	var repos []ownerName
	for _, r := range j.repos {
		if o, n, ok := r.ownerName(); ok {
			repos = append(repos, ownerName{o, n})
		} else if j.account != "" && r.Name != "" {
			repos = append(repos, ownerName{j.account, r.Name})
		}
	}
	if len(repos) == 0 {
		list, err := gh.InstallationRepos(ctx)
		if err != nil {
			return fmt.Errorf("listing the installation's repositories: %w", err)
		}
		for _, r := range list {
			if !r.Archived && !r.Disabled {
				repos = append(repos, ownerName{r.Owner, r.Name})
			}
		}
	}
	log.Info("installation gained repositories: reconciling them", "account", j.account, "repositories", len(repos))
	var errs []error
	for _, r := range repos {
		rlog := log.With("repository", r.owner+"/"+r.name)
		res, err := d.ReconcileRepo(ctx, gh, r.owner, r.name)
		if err != nil {
			errs = append(errs, fmt.Errorf("reconciling %s/%s: %w", r.owner, r.name, err))
			continue
		}
		logResult(rlog, "reconciled a repository", res)
		// The open pull requests get the App's checks now, not at their
		// next push: a ruleset that requires them may already be on.
		if n, err := s.recheckHeads(ctx, gh, j.installation, r.owner, r.name, rlog); err != nil {
			errs = append(errs, fmt.Errorf("checking the open pull requests of %s/%s: %w", r.owner, r.name, err))
		} else if n > 0 {
			rlog.Info("checked the heads of open pull requests", "checked", n)
		}
	}
	return errors.Join(errs...)
}

// uninstalled logs what an installation lost; an installation deleted or
// suspended also loses its cached client.
func (s *Server) uninstalled(j *job, log *slog.Logger) error {
	names := make([]string, 0, len(j.repos))
	for _, r := range j.repos {
		if r.FullName != "" {
			names = append(names, r.FullName)
		} else {
			names = append(names, r.Name)
		}
	}
	for _, r := range j.repos {
		if o, n, ok := r.ownerName(); ok {
			s.installs.drop(o, n, j.installation)
		}
	}
	if j.event == "installation" {
		s.forget(j.installation)
		s.installs.drop("", "", j.installation)
		log.Info("installation removed or suspended: its client is dropped", "account", j.account, "sender", j.sender)
		return nil
	}
	log.Info("repositories removed from the installation", "account", j.account, "repositories", names, "sender", j.sender)
	return nil
}
