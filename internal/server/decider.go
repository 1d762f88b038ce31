package server

import (
	"context"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/checkjob"
	"github.com/phasegate/phasegate/internal/decide"
)

// Decider is what the server calls of the decision handler (the methods
// of *decide.Handler, the action's too) and of the checking job
// (checkjob.Job.CheckCommit). Tests substitute it (Config.NewDecider).
type Decider interface {
	HandleComment(ctx context.Context, gh decide.GitHub, ev decide.Event) (decide.Result, error)
	ReconcileIssue(ctx context.Context, gh decide.GitHub, owner, repo string, issue int) (decide.Result, error)
	ReconcileRepo(ctx context.Context, gh decide.GitHub, owner, repo string) (decide.Result, error)
	SyncPullRequest(ctx context.Context, gh decide.GitHub, owner, repo string, number int) error
	RecordDeletion(ctx context.Context, gh decide.GitHub, d decide.Deletion) (decide.Result, error)
	CheckCommit(ctx context.Context, gh checkjob.GitHub, req checkjob.Request) (checkjob.Summary, error)
	DeploymentDecisions(ctx context.Context, gh decide.GitHub, owner, repo, sha string) (decide.DeploymentRead, error)
}

// DeciderOptions are the decision handler of one delivery or one
// reconcile pass (the server's settings, its identity, watermarks, fold
// memo and the pages' Observe; the delivery's logger; a reconcile pass's
// budget, nil outside the loop), built for each as its caches last one
// delivery, and the checker.
type DeciderOptions struct {
	*decide.Handler
	Validator *check.Validator
	Cache     check.Cache
}

// DefaultDecider is the options' *decide.Handler with the checking job on
// top: the App's identity overrides each repository's configured one.
func DefaultDecider(o DeciderOptions) Decider {
	return appDecider{o.Handler, &checkjob.Job{Handler: o.Handler, Validator: o.Validator, ConfigPath: o.ConfigPath, PagesURL: o.PagesURL, Cache: o.Cache}}
}

// appDecider is the decision handler with the checking job on top.
type appDecider struct {
	*decide.Handler
	*checkjob.Job
}
