package server

import (
	"context"
	"log/slog"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/checkjob"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
)

// Decider is what the server needs of the decision handler
// (internal/decide.Handler): the same handler the action runs.
type Decider interface {
	// HandleComment handles the commands of a newly created comment.
	HandleComment(ctx context.Context, gh decide.GitHub, ev decide.Event) (decide.Result, error)
	// ReconcileIssue applies the commands of an issue that have no answer
	// yet and brings its labels and statuses in line with its thread.
	ReconcileIssue(ctx context.Context, gh decide.GitHub, owner, repo string, issue int) (decide.Result, error)
	// ReconcileRepo reconciles every pending issue of a repository.
	ReconcileRepo(ctx context.Context, gh decide.GitHub, owner, repo string) (decide.Result, error)
	// SyncPullRequest recomputes phasegate/decisions on the pull request's
	// head commit, and writes it even when it did not change, so that a
	// status someone else set is overwritten.
	SyncPullRequest(ctx context.Context, gh decide.GitHub, owner, repo string, number int) error
	// SyncCommit computes phasegate/decisions of a commit (a merge
	// group's head) and sets it.
	SyncCommit(ctx context.Context, gh decide.GitHub, owner, repo, sha string, opts decide.CommitOptions) (ghclient.Status, error)
	// RecordDeletion records a deleted phasegate comment where the fold
	// finds it again (a phasegate/ledger status on the commits the thread's
	// outcomes name), then reconciles the issue.
	RecordDeletion(ctx context.Context, gh decide.GitHub, d decide.Deletion) (decide.Result, error)
	// CheckCommit checks a commit's artifacts through the API and publishes
	// phasegate/contracts, the outcomes the change adds and
	// phasegate/decisions (checkjob.Job).
	CheckCommit(ctx context.Context, gh checkjob.GitHub, req checkjob.Request) (checkjob.Summary, error)
}

// DeciderOptions is what the server hands NewDecider.
type DeciderOptions struct {
	// Identity is the App's login, "<slug>[bot]".
	Identity string
	// Key is the signing key (Config.SigningKey).
	Key []byte
	// Locker serialises per issue (Config.Locker), shared by every call.
	Locker decide.Locker
	// ConfigPath is Config.ConfigPath.
	ConfigPath string
	// Logger carries the delivery, installation and repository.
	Logger *slog.Logger
	// Notifier is Config.Notifier.
	Notifier decide.Notifier
	// Publish is Config.Publish: checks, statuses or both.
	Publish string
	// Validator is the checker, built once for the server.
	Validator *check.Validator
	// Watermarks are the server's: each repository's last successful
	// reconcile pass, so the next lists only the comments since.
	Watermarks *decide.Watermarks
	// Memo is the server's fold memo: the threads a reconcile pass need
	// not read again.
	Memo *decide.FoldMemo
	// Budget is a reconcile pass's budget; nil outside the loop.
	Budget decide.Budget
	// Observe is told of every fold of a thread (decide.Handler.Observe):
	// the pages' index of pending decisions.
	Observe func(decide.Folded)
	// PagesURL is Config.PublicURL: the Details links lead to the pages.
	PagesURL string
	// TreeLimits are Config.TreeLimits: they bound reading a change from
	// its trees (the checking job's and phasegate/decisions'), as the
	// commit's files.
	TreeLimits ghclient.TreeLimits
}

// DefaultDecider builds a *decide.Handler for the options: the App's
// identity overrides each repository's configured one.
func DefaultDecider(o DeciderOptions) Decider {
	h := &decide.Handler{Key: o.Key, ConfigPath: o.ConfigPath, Locks: o.Locker, Logger: o.Logger, Identity: o.Identity, Notifier: o.Notifier, Publish: o.Publish,
		Watermarks: o.Watermarks, Memo: o.Memo, Budget: o.Budget, Observe: o.Observe, PagesURL: o.PagesURL, TreeLimits: o.TreeLimits}
	return appDecider{Handler: h, job: &checkjob.Job{Handler: h, Validator: o.Validator, ConfigPath: o.ConfigPath, PagesURL: o.PagesURL}}
}

// appDecider is the decision handler with the checking job on top.
type appDecider struct {
	*decide.Handler
	job *checkjob.Job
}

func (d appDecider) CheckCommit(ctx context.Context, gh checkjob.GitHub, req checkjob.Request) (checkjob.Summary, error) {
	return d.job.CheckCommit(ctx, gh, req)
}
