package server

import (
	"context"
	"log/slog"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/checkjob"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
)

// Decider is what the server calls of the decision handler (the methods
// of *decide.Handler, the action's too) and of the checking job
// (checkjob.Job.CheckCommit). Tests substitute it (Config.NewDecider).
type Decider interface {
	HandleComment(ctx context.Context, gh decide.GitHub, ev decide.Event) (decide.Result, error)
	ReconcileIssue(ctx context.Context, gh decide.GitHub, owner, repo string, issue int) (decide.Result, error)
	ReconcileRepo(ctx context.Context, gh decide.GitHub, owner, repo string) (decide.Result, error)
	SyncPullRequest(ctx context.Context, gh decide.GitHub, owner, repo string, number int) error
	SyncCommit(ctx context.Context, gh decide.GitHub, owner, repo, sha string, opts decide.CommitOptions) (ghclient.Status, error)
	RecordDeletion(ctx context.Context, gh decide.GitHub, d decide.Deletion) (decide.Result, error)
	CheckCommit(ctx context.Context, gh checkjob.GitHub, req checkjob.Request) (checkjob.Summary, error)
}

// DeciderOptions are the decision handler's settings for one delivery or
// one reconcile pass: the server's (Config's, its identity, watermarks,
// fold memo, checker and the pages' Observe), the delivery's logger and a
// reconcile pass's budget (nil outside the loop). The handler is built
// for each: its caches last one delivery.
type DeciderOptions struct {
	Identity   string
	Key        []byte
	Locker     decide.Locker
	ConfigPath string
	Logger     *slog.Logger
	Notifier   decide.Notifier
	Publish    string
	Validator  *check.Validator
	Watermarks *decide.Watermarks
	Memo       *decide.FoldMemo
	Budget     decide.Budget
	Observe    func(decide.Folded)
	PagesURL   string
	TreeLimits ghclient.TreeLimits
}

// DefaultDecider builds a *decide.Handler for the options, with the
// checking job on top: the App's identity overrides each repository's
// configured one.
func DefaultDecider(o DeciderOptions) Decider {
	h := &decide.Handler{Key: o.Key, ConfigPath: o.ConfigPath, Locks: o.Locker, Logger: o.Logger, Identity: o.Identity, Notifier: o.Notifier, Publish: o.Publish,
		Watermarks: o.Watermarks, Memo: o.Memo, Budget: o.Budget, Observe: o.Observe, PagesURL: o.PagesURL, TreeLimits: o.TreeLimits}
	return appDecider{h, &checkjob.Job{Handler: h, Validator: o.Validator, ConfigPath: o.ConfigPath, PagesURL: o.PagesURL}}
}

// appDecider is the decision handler with the checking job on top.
type appDecider struct {
	*decide.Handler
	*checkjob.Job
}
