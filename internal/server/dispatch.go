package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
)

// jobLogger is the logger of a job: delivery, event, installation,
// repository and issue or pull request where known. Its attributes are
// formatted when it first writes a record (lazyAttrs): most jobs write
// none at the level that is on.
func (s *Server) jobLogger(j *job) *slog.Logger {
	attrs := make([]slog.Attr, 0, 7)
	attrs = append(attrs, slog.String("delivery", j.Delivery), slog.String("event", j.Event))
	if j.Action != "" {
		attrs = append(attrs, slog.String("action", j.Action))
	}
	attrs = append(attrs, slog.Int64("installation", j.Installation))
	if r := j.repository(); r != "" {
		attrs = append(attrs, slog.String("repository", r))
	}
	if j.Issue > 0 {
		attrs = append(attrs, slog.Int("issue", j.Issue))
	}
	if j.PR > 0 {
		attrs = append(attrs, slog.Int("pull_request", j.PR))
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

// handle runs one in-memory job (runJob): a panic is recovered and logged,
// and the worker goes on.
func (s *Server) handle(ctx context.Context, j *job) {
	log := s.jobLogger(j)
	if err := s.runJob(ctx, j, log); err != nil && !errors.Is(err, errPanicked) {
		log.Error("could not finish handling a delivery (reconcile will)", "error", err)
	}
}

// decider is the decision handler of one delivery (b nil) or one
// reconcile pass (its budget).
func (s *Server) decider(log *slog.Logger, b decide.Budget) Decider {
	return s.cfg.NewDecider(DeciderOptions{Validator: s.validator, Cache: s.cfg.Units, Handler: &decide.Handler{
		Identity: s.Identity(), Key: s.cfg.SigningKey, Locks: s.cfg.Locker, ConfigPath: s.cfg.ConfigPath, Logger: log,
		Notifier: s.cfg.Notifier, Publish: s.cfg.Publish, Watermarks: s.watermarks,
		Memo: s.memo, Budget: b, Observe: s.observe, PagesURL: s.cfg.PublicURL, TreeLimits: s.cfg.TreeLimits,
	}})
}

func logResult(log *slog.Logger, msg string, r decide.Result) {
	log.Info(msg, "resolutions", r.Resolutions, "replies", r.Replies, "captured", r.Captured, "skipped", r.Skipped, "tampered", r.Tampered)
}

func (s *Server) dispatch(ctx context.Context, j *job, log *slog.Logger) error {
	if j.Kind == kindUninstall {
		return s.uninstalled(j, log)
	}
	gh, err := s.client(j.Installation)
	if err != nil {
		return err
	}
	s.installs.learn(j.Owner, j.Repo, j.Installation)
	if j.Issue > 0 && (j.Kind == kindComment || j.Kind == kindTamper) {
		defer s.pages.Changed(j.Owner, j.Repo, j.Issue, "")
	}
	d := s.decider(log, nil)
	self := s.Identity()
	switch j.Kind {
	case kindComment:
		res, err := d.HandleComment(ctx, gh, decide.Event{Owner: j.Owner, Repo: j.Repo, Issue: j.Issue, Comment: j.Comment, Delivery: j.Delivery, Labels: j.Labels})
		if err != nil {
			return fmt.Errorf("handling comment %d: %w", j.Comment.ID, err)
		}
		logResult(log.With("comment", j.Comment.ID), "handled a command comment", res)
	case kindTamper:
		if !strings.EqualFold(j.Comment.Author, self) {
			log.Debug("edited comment is not phasegate's", "comment", j.Comment.ID, "author", j.Comment.Author)
			return nil
		}
		s.metrics.tamper.WithLabelValues(j.Action).Inc()
		log.Warn("audit: a phasegate comment was "+j.Action+": it no longer counts",
			"audit", "tamper", "comment", j.Comment.ID, "author", j.Comment.Author, "sender", j.Sender)
		if j.Action == "deleted" {
			// GitHub's signed word that phasegate's comment is gone is
			// tampering by itself: recorded where every later fold reads it,
			// however the heads move afterwards.
			res, err := d.RecordDeletion(ctx, gh, decide.Deletion{Owner: j.Owner, Repo: j.Repo, Issue: j.Issue, Sender: j.Sender,
				Comment: ghclient.Comment{ID: j.Comment.ID, User: j.Comment.Author, Body: j.Comment.Body, HTMLURL: j.CommentURL}})
			if err != nil {
				return fmt.Errorf("recording the deletion of comment %d: %w", j.Comment.ID, err)
			}
			logResult(log, "recorded a deleted phasegate comment and reconciled", res)
			return nil
		}
		res, err := d.ReconcileIssue(ctx, gh, j.Owner, j.Repo, j.Issue)
		if err != nil {
			return fmt.Errorf("reconciling after tampering: %w", err)
		}
		logResult(log, "reconciled after tampering", res)
	case kindCheck:
		return s.checkJob(ctx, gh, d, j, log)
	case kindStatus:
		if strings.EqualFold(j.Sender, self) {
			return nil
		}
		return s.resetStatus(ctx, gh, d, j, log)
	case kindInstallRepos:
		return s.installed(ctx, gh, d, j, log)
	case kindDeploy:
		return s.deploymentJob(ctx, gh, d, j, log)
	default:
		return fmt.Errorf("unknown job kind %q", j.Kind)
	}
	return nil
}

// resetStatus answers phasegate/decisions set by someone else: an audit
// line, then the status recomputed on each open pull request whose head
// the commit is.
func (s *Server) resetStatus(ctx context.Context, gh *ghclient.Client, d Decider, j *job, log *slog.Logger) error {
	s.metrics.statusResets.Inc()
	log.Warn("audit: "+decide.ContextDecisions+" was set by someone other than phasegate: resetting it",
		"audit", "status-overwrite", "sender", j.Sender, "sender_type", j.SenderType, "sha", j.SHA, "state", j.State, "description", j.Description)
	prs, err := gh.PullRequestsForCommit(ctx, j.Owner, j.Repo, j.SHA)
	if err != nil {
		return fmt.Errorf("finding the pull requests of %s: %w", j.SHA, err)
	}
	var errs []error
	reset := 0
	for _, pr := range prs {
		if pr.State != "open" || !strings.EqualFold(pr.HeadSHA, j.SHA) {
			continue
		}
		if err := d.SyncPullRequest(ctx, gh, j.Owner, j.Repo, pr.Number); err != nil {
			errs = append(errs, fmt.Errorf("pull request #%d: %w", pr.Number, err))
			continue
		}
		reset++
		log.Info("reset "+decide.ContextDecisions, "pull_request", pr.Number, "sha", j.SHA)
	}
	if reset == 0 && len(errs) == 0 {
		log.Info("the commit is the head of no open pull request: nothing to reset", "sha", j.SHA)
	}
	return errors.Join(errs...)
}

// installed reconciles the repositories an installation gained.
func (s *Server) installed(ctx context.Context, gh *ghclient.Client, d Decider, j *job, log *slog.Logger) error {
	type ownerName struct{ owner, name string }
	var repos []ownerName
	for _, r := range j.Repos {
		if o, n, ok := r.ownerName(); ok {
			repos = append(repos, ownerName{o, n})
		} else if j.Account != "" && r.Name != "" {
			repos = append(repos, ownerName{j.Account, r.Name})
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
	log.Info("installation gained repositories: reconciling them", "account", j.Account, "repositories", len(repos))
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
		if n, err := s.recheckHeads(ctx, gh, j.Installation, r.owner, r.name, rlog); err != nil {
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
	names := make([]string, 0, len(j.Repos))
	for _, r := range j.Repos {
		names = append(names, cmp.Or(r.FullName, r.Name))
		if o, n, ok := r.ownerName(); ok {
			s.installs.drop(o, n, j.Installation)
		}
	}
	if j.Event == "installation" {
		s.forget(j.Installation)
		s.installs.drop("", "", j.Installation)
		log.Info("installation removed or suspended: its client is dropped", "account", j.Account, "sender", j.Sender)
		return nil
	}
	log.Info("repositories removed from the installation", "account", j.Account, "repositories", names, "sender", j.Sender)
	return nil
}
