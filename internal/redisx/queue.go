package redisx

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"strings"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/phasegate/phasegate/internal/retry"
)

// The durable queue is asynq (github.com/hibiken/asynq) on the Store's
// Redis: every replica enqueues into it and runs an asynq server that
// consumes it. What asynq guarantees, and what this file adds:
//
//   - A task is keyed (Task.Key, asynq's TaskID): while a task of a key is
//     waiting (pending, scheduled, or waiting for a retry), enqueueing the
//     key again is coalesced into it (Enqueued.Coalesced): it has not
//     started, so it does all the new one asks for. A running task may
//     have done its work before the new one was asked for: a key enqueued
//     while its task runs gets a second task (its ID the key and
//     twinSuffix; Enqueued.Behind), which waits (deferred, Poll at a time)
//     while the first runs, and takes the key's later enqueues in turn.
//     Should both run at once (for the moment the second takes to see the
//     first running and step back), a third is added under a unique ID: a
//     task is never dropped for a running one. A key whose task ran out of
//     retries (archived) is enqueued afresh.
//   - A failed attempt is retried MaxRetry times with capped, jittered
//     exponential backoff (RetryBase doubling up to RetryMax). An error made
//     by Defer retries after its own delay and is not a failure: it does not
//     use up a retry (a rate limit, a busy installation).
//   - A task whose replica died mid-attempt is not lost: asynq leases every
//     running task for 30 s and renews the lease every 5 s; every replica's
//     recoverer looks every minute (and when it starts) for leases that
//     expired more than 30 s ago, and puts their tasks back for a retry.
//     A dead replica's tasks therefore run again 60 to 120 s after it died
//     (asynq v0.26.0's constants; they are not configurable). A replica
//     cut off from Redis for a lease stops its attempts (their context
//     ends) before another replica may take them.
//   - Shutdown stops taking tasks, waits up to ShutdownTimeout for the
//     running ones, then puts the unfinished ones back in the queue.

// Defaults of QueueOptions.
const (
	DefaultQueueName        = "phasegate"
	DefaultQueueMaxRetry    = 8
	DefaultQueueRetryBase   = 2 * time.Second
	DefaultQueueRetryMax    = 5 * time.Minute
	DefaultQueuePoll        = 200 * time.Millisecond
	DefaultQueueShutdown    = 25 * time.Second
	DefaultQueueTaskTimeout = 10 * time.Minute
	// maxDefer caps the wait of one Defer (a rate limit resets within
	// an hour).
	maxDefer = time.Hour
	// leaseExpiredRetry is the wait before a task recovered from a dead
	// replica runs again: it was interrupted, not refused.
	leaseExpiredRetry = time.Second
)

// QueueOptions configure a Queue. Zero values take the defaults.
type QueueOptions struct {
	// Name is the asynq queue (default "phasegate"): its Redis keys are
	// asynq:{Name}:….
	Name string
	// Concurrency is how many tasks this process runs at once (default 16).
	Concurrency int
	// MaxRetry is how many failed attempts are retried (default 8); a task
	// failing once more is archived (kept in Redis, see asynq's tools).
	MaxRetry int
	// RetryBase and RetryMax bound the backoff after the n-th failure:
	// RetryBase·2ⁿ, at most RetryMax, jittered between half and all of it
	// (defaults 2s and 5m).
	RetryBase, RetryMax time.Duration
	// TaskTimeout bounds one attempt (default 10m).
	TaskTimeout time.Duration
	// Poll is how often an idle replica looks for new tasks, and how often
	// tasks whose retry time came are moved back to the queue (default 1s).
	Poll time.Duration
	// ShutdownTimeout bounds the wait for running tasks at Shutdown
	// (default 25s); unfinished ones go back to the queue.
	ShutdownTimeout time.Duration
	// Logger receives asynq's warnings and errors (default slog.Default()).
	Logger *slog.Logger
}

func (o QueueOptions) withDefaults() QueueOptions {
	o.Name = cmp.Or(o.Name, DefaultQueueName)
	o.Concurrency = cmp.Or(max(o.Concurrency, 0), 16)
	o.MaxRetry = cmp.Or(max(o.MaxRetry, 0), DefaultQueueMaxRetry)
	o.RetryBase = cmp.Or(max(o.RetryBase, 0), DefaultQueueRetryBase)
	if o.RetryMax < o.RetryBase {
		o.RetryMax = max(DefaultQueueRetryMax, o.RetryBase)
	}
	o.TaskTimeout = cmp.Or(max(o.TaskTimeout, 0), DefaultQueueTaskTimeout)
	o.Poll = cmp.Or(max(o.Poll, 0), DefaultQueuePoll)
	o.ShutdownTimeout = cmp.Or(max(o.ShutdownTimeout, 0), DefaultQueueShutdown)
	o.Logger = cmp.Or(o.Logger, slog.Default())
	return o
}

// Task is one unit of durable work.
type Task struct {
	// Kind names the work (asynq's task type).
	Kind string
	// Key identifies the work: tasks of one key are coalesced while they
	// wait (see Enqueue). It must not be empty, nor end with "~2" (the
	// key's second task's ID ends so).
	Key string
	// Payload is the work's description, opaque to the queue.
	Payload []byte
}

// Enqueued is what Enqueue did with a task.
type Enqueued struct {
	// Coalesced is set when a task of the same key was waiting (not
	// started): the new one was folded into it and not added.
	Coalesced bool
	// Behind is set when a task of the same key was running: the new one
	// was added (or coalesced into the key's waiting second task) to run
	// after it.
	Behind bool
	// State is the state of the task that does the work: "pending" for a
	// task just added, else the waiting one's ("pending", "scheduled",
	// "retry").
	State string
}

// Attempt is one run of a task, as its handler sees it.
type Attempt struct {
	Task
	// Failures is how many earlier attempts failed (deferrals not
	// counted); MaxRetry is the queue's.
	Failures, MaxRetry int
}

// Final reports whether a failure of this attempt is the last: the task is
// archived instead of retried.
func (a Attempt) Final() bool { return a.Failures >= a.MaxRetry }

// TaskHandler runs one attempt. Its error decides what happens next: nil
// is done; an error made by Defer runs the task again after the delay
// without counting a failure; one made by Permanent archives the task at
// once; any other is a failure, retried with backoff until MaxRetry.
type TaskHandler func(ctx context.Context, a Attempt) error

// DeferError asks the queue to run the task again after After without
// counting a failure.
type DeferError struct {
	After  time.Duration
	Reason string // for logs and metrics: "rate_limited", "installation_busy"…
	Err    error  // the cause, if any
}

func (e *DeferError) Error() string {
	msg := fmt.Sprintf("deferred for %s (%s)", e.After.Round(time.Millisecond), e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *DeferError) Unwrap() error { return e.Err }

// Defer is a handler's error that runs the task again after d (at most an
// hour) without counting a failure. asynq keeps the time of the next run
// to the second, truncated: the run may come up to a second before d is
// over (add a second when it must not).
func Defer(d time.Duration, reason string, cause error) error {
	return &DeferError{After: min(max(d, 0), maxDefer), Reason: reason, Err: cause}
}

// Permanent is a handler's error that archives the task without retrying
// it (a payload that cannot be decoded, a bug).
func Permanent(err error) error { return fmt.Errorf("%w (%w)", err, asynq.SkipRetry) }

// Queue is the durable task queue shared by every process on one Redis.
type Queue struct {
	opt     QueueOptions
	rdb     *redis.Client
	client  *asynq.Client
	inspect *asynq.Inspector
	srv     *asynq.Server
}

// Queue opens the durable queue on the Store's Redis, with a connection
// pool of its own (asynq's polling and heartbeats must not wait behind the
// locks', nor the locks behind them). Close it after Shutdown.
func (s *Store) Queue(o QueueOptions) *Queue {
	o = o.withDefaults()
	ro := *s.rdb.Options()
	// asynq's scripts are not retried blindly (as for the locks), but are
	// given longer than a lock's command: a slow answer is not a failure.
	ro.ReadTimeout, ro.WriteTimeout = max(ro.ReadTimeout, 5*time.Second), max(ro.WriteTimeout, 5*time.Second)
	ro.PoolSize = max(ro.PoolSize, o.Concurrency+8)
	rdb := redis.NewClient(&ro)
	return &Queue{
		opt:     o,
		rdb:     rdb,
		client:  asynq.NewClientFromRedisClient(rdb),
		inspect: asynq.NewInspectorFromRedisClient(rdb),
	}
}

// Name is the asynq queue's name.
func (q *Queue) Name() string { return q.opt.Name }

// twinSuffix ends the ID of a key's second task, the one enqueued while
// the key's first task runs.
const twinSuffix = "~2"

// Enqueue adds t, or coalesces it into the waiting task of the same key;
// a key whose task runs gets a task that runs after it. An error wraps
// ErrUnavailable when Redis fails (the task may or may not have been
// added), or ctx's error.
func (q *Queue) Enqueue(ctx context.Context, t Task) (Enqueued, error) {
	if t.Key == "" || t.Kind == "" {
		return Enqueued{}, errors.New("enqueueing a task: no kind or key")
	}
	task := asynq.NewTask(t.Kind, t.Payload)
	// The key's task, else its second one while the first runs, else (both
	// run) one of its own.
	ids := []string{t.Key, t.Key + twinSuffix, t.Key + "~" + rand.Text()}
	for i, id := range ids {
		res, running, err := q.enqueueAs(ctx, task, id)
		if err != nil || !running {
			res.Behind = i > 0
			return res, err
		}
	}
	return Enqueued{}, fmt.Errorf("enqueueing the task %s: %w: a task of its own ID runs", t.Key, ErrUnavailable)
}

// enqueueAs adds task under id, or coalesces it into the waiting task of
// that ID; running is set (and nothing done) when that task runs.
func (q *Queue) enqueueAs(ctx context.Context, task *asynq.Task, id string) (res Enqueued, running bool, err error) {
	opts := []asynq.Option{
		asynq.Queue(q.opt.Name), asynq.TaskID(id),
		// One more than MaxRetry: the handler archives on the last failure
		// itself (Attempt.Final), so that a deferral of the last attempt is
		// never taken for a failure.
		asynq.MaxRetry(q.opt.MaxRetry + 1), asynq.Timeout(q.opt.TaskTimeout),
	}
	// A conflict with a task that then finishes, or with an archived one
	// that is then deleted, is tried again (twice at most).
	for range 3 {
		_, err := q.client.EnqueueContext(ctx, task, opts...)
		if err == nil {
			return Enqueued{State: "pending"}, false, nil
		}
		if !errors.Is(err, asynq.ErrTaskIDConflict) {
			return Enqueued{}, false, unavailable(ctx, "enqueueing the task "+id, err)
		}
		info, err := q.inspect.GetTaskInfo(q.opt.Name, id)
		switch {
		case errors.Is(err, asynq.ErrTaskNotFound):
			continue // finished in between
		case err != nil:
			return Enqueued{}, false, unavailable(ctx, "reading the task "+id, err)
		case info.State == asynq.TaskStateArchived || info.State == asynq.TaskStateCompleted:
			// Ran out of retries (or finished, kept): a new delivery asks
			// for the work again.
			if err := q.inspect.DeleteTask(q.opt.Name, id); err != nil && !errors.Is(err, asynq.ErrTaskNotFound) {
				return Enqueued{}, false, unavailable(ctx, "replacing the archived task "+id, err)
			}
			continue
		case info.State == asynq.TaskStateActive:
			return Enqueued{}, true, nil
		default:
			return Enqueued{Coalesced: true, State: info.State.String()}, false, nil
		}
	}
	return Enqueued{}, false, fmt.Errorf("enqueueing the task %s: %w: its key kept changing state", id, ErrUnavailable)
}

// Start runs the asynq server of this process: it takes tasks and runs h
// on them, Concurrency at once, until Shutdown.
func (q *Queue) Start(h TaskHandler) error {
	if q.srv != nil {
		return errors.New("the durable queue is already started")
	}
	log := q.opt.Logger.With("component", "asynq", "queue", q.opt.Name)
	q.srv = asynq.NewServerFromRedisClient(q.rdb, asynq.Config{
		Concurrency:              q.opt.Concurrency,
		Queues:                   map[string]int{q.opt.Name: 1},
		TaskCheckInterval:        q.opt.Poll,
		DelayedTaskCheckInterval: q.opt.Poll,
		RetryDelayFunc:           q.retryDelay,
		IsFailure:                isFailure,
		ShutdownTimeout:          q.opt.ShutdownTimeout,
		Logger:                   asynqLogger{log},
		LogLevel:                 asynq.WarnLevel,
		HealthCheckFunc: func(err error) {
			if err != nil {
				log.Warn("the durable queue cannot reach Redis", "error", err)
			}
		},
	})
	if err := q.srv.Start(asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		return q.run(ctx, t, h)
	})); err != nil {
		return fmt.Errorf("starting the durable queue: %w", err)
	}
	return nil
}

// run is one attempt: the handler's last failure archives the task. A
// key's task whose twin (the key's other task) runs waits for it.
func (q *Queue) run(ctx context.Context, t *asynq.Task, h TaskHandler) error {
	id, _ := asynq.GetTaskID(ctx)
	key, isTwin := strings.CutSuffix(id, twinSuffix)
	twin := key
	if !isTwin {
		twin = id + twinSuffix
	}
	if info, err := q.inspect.GetTaskInfo(q.opt.Name, twin); err == nil && info.State == asynq.TaskStateActive {
		return Defer(q.opt.Poll, "key_running", nil)
	}
	failures, _ := asynq.GetRetryCount(ctx)
	a := Attempt{Task: Task{Kind: t.Type(), Key: key, Payload: t.Payload()}, Failures: failures, MaxRetry: q.opt.MaxRetry}
	err := h(ctx, a)
	if err != nil && isFailure(err) && a.Final() && !errors.Is(err, asynq.SkipRetry) {
		return fmt.Errorf("%w (%w: failed %d times)", err, asynq.SkipRetry, failures+1)
	}
	return err
}

// retryDelay is the wait before the next attempt: the deferral's own, one
// second for a task recovered from a dead replica, else the backoff.
func (q *Queue) retryDelay(n int, err error, _ *asynq.Task) time.Duration {
	var d *DeferError
	switch {
	case errors.As(err, &d):
		return d.After
	case errors.Is(err, asynq.ErrLeaseExpired):
		return leaseExpiredRetry
	}
	// asynq's n counts the failures before this one, from 0.
	return retry.Policy{Base: q.opt.RetryBase, Max: q.opt.RetryMax}.Backoff(n+1, mrand.Int64N)
}

// isFailure: a deferral is not a failure.
func isFailure(err error) bool {
	var d *DeferError
	return err != nil && !errors.As(err, &d)
}

// Shutdown stops taking tasks and waits up to ShutdownTimeout for the
// running ones; those still running are then cancelled and put back in the
// queue. It does nothing when the queue was not started.
func (q *Queue) Shutdown() {
	if q.srv != nil {
		q.srv.Shutdown()
	}
}

// QueueStats are the queue's tasks by state.
type QueueStats struct {
	Pending, Active, Scheduled, Retry, Archived int
	// Latency is the age of the oldest pending task.
	Latency time.Duration
}

// Stats counts the queue's tasks by state (zeros before the first task).
// An error wraps ErrUnavailable.
func (q *Queue) Stats(ctx context.Context) (QueueStats, error) {
	info, err := q.inspect.GetQueueInfo(q.opt.Name)
	if errors.Is(err, asynq.ErrQueueNotFound) {
		return QueueStats{}, nil
	}
	if err != nil {
		return QueueStats{}, unavailable(ctx, "reading the queue "+q.opt.Name, err)
	}
	return QueueStats{Pending: info.Pending, Active: info.Active, Scheduled: info.Scheduled, Retry: info.Retry,
		Archived: info.Archived, Latency: info.Latency}, nil
}

// Close closes the queue's client, inspector and connection pool; call it
// after Shutdown.
func (q *Queue) Close() error {
	_ = q.client.Close()
	_ = q.inspect.Close()
	if err := q.rdb.Close(); err != nil {
		return fmt.Errorf("closing the durable queue's redis pool: %w", err)
	}
	return nil
}

// asynqLogger sends asynq's log lines to slog. asynq's Fatal (which it
// follows with its own exit) is logged as an error.
type asynqLogger struct{ l *slog.Logger }

func (a asynqLogger) Debug(args ...any) { a.l.Debug(fmt.Sprint(args...)) }
func (a asynqLogger) Info(args ...any)  { a.l.Info(fmt.Sprint(args...)) }
func (a asynqLogger) Warn(args ...any)  { a.l.Warn(fmt.Sprint(args...)) }
func (a asynqLogger) Error(args ...any) { a.l.Error(fmt.Sprint(args...)) }
func (a asynqLogger) Fatal(args ...any) { a.l.Error(fmt.Sprint(args...)) }
