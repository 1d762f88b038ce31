package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/redisx"
)

// The durable path. With Config.Tasks set (--redis-url), the jobs whose
// kind is in durableKinds do not go through the in-memory queue: the
// webhook enqueues them in the durable queue (asynq on Redis, see
// redisx.Queue) that every replica consumes, and the replica that takes one
// runs it through runJob → dispatch, as a worker runs an in-memory job.
//
//   - One job per input at a time, and one check of a commit at a time.
//     A job's task key (job.taskKey) is its kind, repository and commit
//     with the digest of everything its delivery says (a pull request or
//     none, the base, the fork, the event and its action, the actors):
//     deliveries whose jobs differ are different tasks, and the per-commit
//     lock (checkCommit) runs them one after the other. A delivery whose
//     key has a job waiting to start (pending, or waiting for a retry) is
//     coalesced into it and answered 202 "accepted: coalesced …": that job
//     reads GitHub (the pull request, the tree, the reviews, the ledger)
//     after the delivery's news. A delivery whose key's job is running is
//     not covered by it (it may have read GitHub before the news): it is
//     queued to run after it, answered 202 "accepted: queued behind …"
//     (redisx.Queue.Enqueue). Nothing is dropped for a job already there.
//   - A failed job is retried with capped, jittered exponential backoff
//     (redisx.QueueOptions); one that GitHub rate-limited (a
//     *ghclient.RateLimitError: secondary limits, Retry-After, an exhausted
//     quota) runs again once the limit resets, without counting a failure.
//   - At most Config.InstallationConcurrency jobs of one installation run
//     at once over every replica (Config.InstallSlots, a leased Redis
//     semaphore): a job finding them all taken is deferred for a moment,
//     without counting a failure, and the replica takes the next task, so
//     a busy installation does not hold up the others.
//   - A job whose replica died mid-job runs again (asynq's lease recovery,
//     60 to 120 s later; redisx.Queue); a replica shutting down lets its
//     running jobs finish for ShutdownTimeout and puts the rest back.
//
// Without Redis every kind goes through the in-memory queue of one replica,
// as before.

// durableKinds are the kinds of job that go through the durable queue when
// there is one: those whose work is a function of (repository, commit).
var durableKinds = map[string]bool{
	kindPullRequest: true,
	kindMergeGroup:  true,
	kindCheck:       true,
}

// DefaultInstallationConcurrency is how many durable jobs of one
// installation run at once, over every replica.
const DefaultInstallationConcurrency = 8

// Tasks is the durable queue (a *redisx.Queue).
type Tasks interface {
	// Name names the queue (the queue label of the metrics).
	Name() string
	// Enqueue adds a task, or coalesces it into the waiting or running
	// task of its key.
	Enqueue(ctx context.Context, t redisx.Task) (redisx.Enqueued, error)
	// Start runs h on the tasks of the queue until Shutdown.
	Start(h redisx.TaskHandler) error
	// Shutdown stops taking tasks, lets the running ones finish for a
	// while, and puts the others back.
	Shutdown()
	// Stats counts the tasks by state.
	Stats(ctx context.Context) (redisx.QueueStats, error)
}

// Slots bounds how many holders a key has at once (a *redisx.Semaphore).
type Slots interface {
	// TryAcquire takes one of key's limit slots without waiting; ok is
	// false when all are taken.
	TryAcquire(ctx context.Context, key string, limit int) (release func(), ok bool, err error)
}

// Deferral delays of the durable path.
const (
	enqueueTimeout = 5 * time.Second
	// busyDelay: a job whose installation has no free slot waits this
	// much, jittered, before it is taken again (plus the queue's poll).
	busyDelay = 100 * time.Millisecond
	// storeDelay: a job that could not ask for a slot (Redis failing)
	// waits this much, jittered.
	storeDelay = 2 * time.Second
)

// jobHook, when set, is told when a durable job starts and ends (this
// package's tests set it in the replica processes they run).
var jobHook func(phase string, j *job, err error)

// enqueueDurable enqueues a verified delivery's job in the durable queue
// and answers: refused when the seen store or the queue fails (503; the
// delivery is forgotten so that GitHub's redelivery is taken), dropped when
// the delivery ID was seen before (200), coalesced into the job of the same
// key (202), else accepted (202).
func (s *Server) enqueueDurable(rs *responder, r *http.Request, j *job) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), enqueueTimeout)
	defer cancel()
	if !s.firstSeen(ctx, rs, j) {
		return
	}
	j.Enqueued = s.cfg.Now()
	key, err := j.taskKey()
	var payload []byte
	if err == nil {
		payload, err = encodeJob(j)
	}
	var res redisx.Enqueued
	if err == nil {
		res, err = s.cfg.Tasks.Enqueue(ctx, redisx.Task{Kind: j.Kind, Key: key, Payload: payload})
	}
	log := s.jobLogger(j).With("job", key)
	switch {
	case err != nil:
		s.metrics.jobEnqueued.WithLabelValues(j.Kind, "error").Inc()
		s.forgetDelivery(ctx, j.Delivery)
		if j.ReplayKey != "" {
			s.forgetDelivery(ctx, j.ReplayKey)
		}
		log.Error("webhook refused: the durable queue failed (GitHub may redeliver; reconcile recovers it)", "error", err)
		rs.answer(http.StatusServiceUnavailable, resultUnavailable, "cannot queue the job now")
	case res.Coalesced:
		s.metrics.jobEnqueued.WithLabelValues(j.Kind, resultCoalesced).Inc()
		log.Info("webhook coalesced: a job of the same input is waiting to start", "state", res.State, "behind_running", res.Behind)
		rs.answer(http.StatusAccepted, resultCoalesced, "accepted: coalesced with the waiting job "+clip(key))
	case res.Behind:
		s.metrics.jobEnqueued.WithLabelValues(j.Kind, "enqueued").Inc()
		log.Info("webhook queued behind the running job of the same input: it runs after it")
		rs.answer(http.StatusAccepted, resultAccepted, "accepted: queued behind the running job "+clip(key))
	default:
		s.metrics.jobEnqueued.WithLabelValues(j.Kind, "enqueued").Inc()
		rs.answer(http.StatusAccepted, resultAccepted, "accepted")
	}
}

// forgetDelivery un-records a delivery that was refused after it was
// recorded as seen, when the store can forget (Redis's can), so that
// GitHub's redelivery of it is taken.
func (s *Server) forgetDelivery(ctx context.Context, delivery string) {
	f, ok := s.cfg.Seen.(interface {
		Forget(context.Context, string) error
	})
	if !ok {
		return
	}
	if err := f.Forget(context.WithoutCancel(ctx), delivery); err != nil {
		s.log.Warn("could not forget a refused delivery: its redelivery will be taken for a replay (reconcile recovers it)", "delivery", delivery, "error", err)
	}
}

// startDurable starts consuming the durable queue, when there is one.
func (s *Server) startDurable() error {
	if s.cfg.Tasks == nil {
		return nil
	}
	if err := s.cfg.Tasks.Start(s.runTask); err != nil {
		return fmt.Errorf("the durable queue: %w", err)
	}
	return nil
}

// runTask is one attempt at a durable job: decode it, wait until the
// server is ready, take a slot of its installation (else defer it), run it,
// and tell the queue what to do next.
func (s *Server) runTask(ctx context.Context, a redisx.Attempt) error {
	j, err := decodeJob(a.Payload)
	if err != nil {
		s.metrics.jobFailures.WithLabelValues(a.Kind, "true").Inc()
		s.log.Error("a queued job cannot be read: archived", "job", a.Key, "error", err)
		return redisx.Permanent(err)
	}
	if !s.waitReady(ctx) {
		return redisx.Defer(jitter(storeDelay), "not_ready", ctx.Err())
	}
	log := s.jobLogger(j).With("job", a.Key)
	release, ok, err := s.cfg.InstallSlots.TryAcquire(ctx, strconv.FormatInt(j.Installation, 10), s.cfg.InstallationConcurrency)
	switch {
	case err != nil:
		s.metrics.jobRetries.WithLabelValues(j.Kind, "store_unavailable").Inc()
		log.Warn("job deferred: the installation's running jobs cannot be counted", "error", err)
		return redisx.Defer(jitter(storeDelay), "store_unavailable", err)
	case !ok:
		s.metrics.jobRetries.WithLabelValues(j.Kind, "installation_busy").Inc()
		log.Debug("job deferred: its installation runs as many jobs as it may", "limit", s.cfg.InstallationConcurrency)
		return redisx.Defer(jitter(busyDelay), "installation_busy", nil)
	}
	defer release()
	s.metrics.jobWait.WithLabelValues(j.Kind).Observe(max(s.cfg.Now().Sub(j.Enqueued), 0).Seconds())
	if jobHook != nil {
		jobHook("start", j, nil)
	}
	start := time.Now()
	err = s.runJob(ctx, j, log)
	if jobHook != nil {
		jobHook("end", j, err)
	}
	return s.afterJob(j, a, err, time.Since(start), log)
}

// afterJob records a job's end and turns its error into the queue's next
// step: nil when done; a deferral until the reset when GitHub rate-limited
// it; else the error (retried with backoff, or archived after the last
// attempt).
func (s *Server) afterJob(j *job, a redisx.Attempt, err error, took time.Duration, log *slog.Logger) error {
	var rl *ghclient.RateLimitError
	outcome := "ok"
	defer func() { s.metrics.jobRun.WithLabelValues(j.Kind, outcome).Observe(took.Seconds()) }()
	switch {
	case err == nil:
		return nil
	case errors.As(err, &rl):
		outcome = "rate_limited"
		// asynq schedules a retry to the second (it truncates): a second
		// more keeps the run after the reset; the jitter spreads the jobs
		// that the same limit stopped.
		wait := max(rl.Until.Sub(s.cfg.Now()), 0) + time.Second + jitter(time.Second)
		s.metrics.jobRetries.WithLabelValues(j.Kind, "rate_limited").Inc()
		log.Warn("job deferred: GitHub rate-limited it; it runs again once the limit resets", "retry_in", wait.String(), "secondary", rl.Secondary, "error", err)
		return redisx.Defer(wait, "rate_limited", err)
	case errors.Is(err, errPanicked):
		outcome = "panic"
		s.metrics.jobFailures.WithLabelValues(j.Kind, "true").Inc()
		return redisx.Permanent(err)
	}
	outcome = "error"
	final := a.Final()
	s.metrics.jobFailures.WithLabelValues(j.Kind, strconv.FormatBool(final)).Inc()
	if final {
		log.Error("job failed for the last time: archived (reconcile recovers the work)", "failures", a.Failures+1, "error", err)
		return err
	}
	s.metrics.jobRetries.WithLabelValues(j.Kind, "error").Inc()
	log.Warn("job failed: it is retried with backoff", "failures", a.Failures+1, "max_retry", a.MaxRetry, "error", err)
	return err
}

// errPanicked marks a job that panicked (a bug: it is not retried).
var errPanicked = errors.New("panic while handling the job")

// runJob runs one job within JobTimeout, recovering a panic, and records
// the handler metric and onJobDone. A durable job's error decides its
// retry; a panic is never retried.
func (s *Server) runJob(ctx context.Context, j *job, log *slog.Logger) (err error) {
	start := time.Now()
	outcome := "ok"
	defer func() {
		if r := recover(); r != nil {
			outcome = "panic"
			s.metrics.panics.Inc()
			log.Error("panic while handling a delivery: recovered (not retried; reconcile recovers the work)", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = fmt.Errorf("%w: %v", errPanicked, r)
		}
		s.metrics.handler.WithLabelValues(j.Event, outcome).Observe(time.Since(start).Seconds())
		if s.onJobDone != nil {
			s.onJobDone(j, outcome)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.JobTimeout)
	defer cancel()
	if err = s.dispatch(ctx, j, log); err != nil {
		outcome = "error"
	}
	return err
}

// jitter is d jittered uniformly between half and all of it.
func jitter(d time.Duration) time.Duration {
	half := d / 2
	return half + mrand.N(d-half+1)
}
