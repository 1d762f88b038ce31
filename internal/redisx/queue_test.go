package redisx

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
)

// startQueue opens a fast-polling durable queue on st, started with h and
// shut down and closed in t.Cleanup (h nil: not started).
func startQueue(t *testing.T, st *Store, o QueueOptions, h TaskHandler) *Queue {
	t.Helper()
	o.Poll = 20 * time.Millisecond
	o.Logger = slog.New(slog.DiscardHandler)
	if o.RetryBase == 0 {
		o.RetryBase, o.RetryMax = 10*time.Millisecond, 20*time.Millisecond
	}
	o.ShutdownTimeout = 2 * time.Second
	q := st.Queue(o)
	if h != nil {
		if err := q.Start(h); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		q.Shutdown()
		_ = q.Close()
	})
	return q
}

// attempts records the attempts a handler saw.
type attempts struct {
	mu  sync.Mutex
	got []Attempt
	ch  chan Attempt
}

func newAttempts() *attempts { return &attempts{ch: make(chan Attempt, 100)} }

func (a *attempts) add(at Attempt) {
	a.mu.Lock()
	a.got = append(a.got, at)
	a.mu.Unlock()
	a.ch <- at
}

func (a *attempts) next(t *testing.T) Attempt {
	t.Helper()
	select {
	case at := <-a.ch:
		return at
	case <-time.After(30 * time.Second):
		t.Fatal("no attempt")
		return Attempt{}
	}
}

// TestQueueCoalescesOnlyIntoWaitingTasks: a key enqueued while its task
// waits is coalesced into it; enqueued while it runs, it gets a second task
// (which may have done its work before the new one was asked for), which
// waits for the first and takes the next enqueues; both run, one after the
// other.
func TestQueueCoalescesOnlyIntoWaitingTasks(t *testing.T) {
	t.Parallel() // its own database; the waits are Redis's real time
	st := startRedis(t).open(t)
	ctx := testCtx(t)
	release := make(chan struct{}, 3)
	seen := newAttempts()
	var mu sync.Mutex
	running, most := 0, 0
	q := startQueue(t, st, QueueOptions{}, nil)
	task := Task{Kind: "check", Key: "check:acme/shop:abc", Payload: []byte(`{"n":1}`)}

	tests := []struct {
		name      string
		before    func()
		coalesced bool
		behind    bool
		state     string
	}{
		{name: "first", state: "pending"},
		{name: "again while pending", coalesced: true, state: "pending"},
		{name: "again while running", behind: true, state: "pending", before: func() {
			if err := q.Start(func(ctx context.Context, a Attempt) error {
				mu.Lock()
				running++
				most = max(most, running)
				mu.Unlock()
				seen.add(a)
				<-release
				mu.Lock()
				running--
				mu.Unlock()
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			seen.next(t)
		}},
		{name: "again while the second waits", coalesced: true, behind: true, before: func() {
			// The second task is taken, finds the first running and steps
			// back (deferred: its last error says so), again and again:
			// with the queue paused, it stays back (else it may be found
			// running for that moment, and the enqueue gets a third task:
			// TestQueueNeverDropsBehindRunningTasks).
			deadline := time.Now().Add(30 * time.Second)
			for {
				info, err := q.inspect.GetTaskInfo(q.opt.Name, task.Key+twinSuffix)
				if err == nil && strings.Contains(info.LastErr, "key_running") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the second task never stepped back for the first: %+v, %v", info, err)
				}
				time.Sleep(5 * time.Millisecond)
			}
			if err := q.inspect.PauseQueue(q.opt.Name); err != nil {
				t.Fatal(err)
			}
			waitStats(t, q, func(s QueueStats) bool { return s.Active == 1 && s.Pending+s.Scheduled+s.Retry == 1 })
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before != nil {
				tt.before()
			}
			got, err := q.Enqueue(ctx, task)
			if err != nil {
				t.Fatal(err)
			}
			if got.Coalesced != tt.coalesced || got.Behind != tt.behind || tt.state != "" && got.State != tt.state {
				t.Errorf("Enqueue = %+v, want coalesced %v, behind %v, state %q", got, tt.coalesced, tt.behind, tt.state)
			}
		})
	}
	if err := q.inspect.UnpauseQueue(q.opt.Name); err != nil {
		t.Fatal(err)
	}
	release <- struct{}{}
	if at := seen.next(t); string(at.Payload) != `{"n":1}` || at.Kind != "check" || at.Key != task.Key {
		t.Errorf("the second run saw %+v", at)
	}
	release <- struct{}{}
	waitStats(t, q, func(s QueueStats) bool { return s.Active == 0 && s.Pending+s.Scheduled+s.Retry == 0 })
	mu.Lock()
	defer mu.Unlock()
	if n := len(seen.got); n != 2 || most != 1 {
		t.Errorf("%d runs, %d at once; want 2, one at a time", n, most)
	}
	release <- struct{}{} // for the run of the next task
	if got, err := q.Enqueue(ctx, task); err != nil || got != (Enqueued{State: "pending"}) {
		t.Errorf("once done: Enqueue = %+v, %v; want a new pending task", got, err)
	}
}

// TestQueueNeverDropsBehindRunningTasks: when both of a key's tasks run
// (they may, for the moment the second takes to see the first running and
// step back), the key enqueued again gets a task of its own: it is never
// dropped, nor refused. A bare asynq server, which does not step back,
// holds both running here.
func TestQueueNeverDropsBehindRunningTasks(t *testing.T) {
	t.Parallel() // its own database; the waits are Redis's real time
	st := startRedis(t).open(t)
	ctx := testCtx(t)
	q := startQueue(t, st, QueueOptions{}, nil)
	release := make(chan struct{})
	started := make(chan string, 3)
	bare := asynq.NewServerFromRedisClient(q.rdb, asynq.Config{Concurrency: 4, Queues: map[string]int{q.opt.Name: 1},
		TaskCheckInterval: q.opt.Poll, Logger: asynqLogger{q.opt.Logger}, LogLevel: asynq.FatalLevel})
	if err := bare.Start(asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		started <- id
		<-release
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bare.Shutdown)
	t.Cleanup(func() { close(release) })
	task := Task{Kind: "check", Key: "check:acme/shop:abc", Payload: []byte(`{}`)}
	for i, want := range []Enqueued{{State: "pending"}, {Behind: true, State: "pending"}, {Behind: true, State: "pending"}} {
		got, err := q.Enqueue(ctx, task)
		if err != nil || got != want {
			t.Fatalf("enqueue %d: %+v, %v; want %+v", i+1, got, err, want)
		}
		select {
		case id := <-started:
			if i < 2 && id != task.Key+[]string{"", twinSuffix}[i] {
				t.Errorf("enqueue %d ran as %s", i+1, id)
			}
		case <-ctx.Done():
			t.Fatalf("enqueue %d never ran", i+1)
		}
	}
}

func waitStats(t *testing.T, q *Queue, cond func(QueueStats) bool) QueueStats {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err := q.Stats(context.Background())
		if err == nil && cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue never reached the state; last %+v %v", s, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestQueueRetries: failures are retried with their count, deferrals are
// not counted (even on the last attempt), the last failure archives the
// task, and a key whose task was archived can be enqueued again.
func TestQueueRetries(t *testing.T) {
	t.Parallel() // its own database; the waits are Redis's real time
	errBoom := errors.New("boom")
	deferral := Defer(10*time.Millisecond, "installation_busy", nil)
	tests := []struct {
		name         string
		answers      []error // one per attempt; nil from then on
		wantFailures []int   // Attempt.Failures of each attempt
		archived     bool
	}{
		{name: "two failures then done", answers: []error{errBoom, errBoom}, wantFailures: []int{0, 1, 2}},
		{name: "deferrals are not failures", answers: []error{deferral, deferral, deferral}, wantFailures: []int{0, 0, 0, 0}},
		{name: "a deferral of the last attempt", answers: []error{errBoom, errBoom, deferral}, wantFailures: []int{0, 1, 2, 2}},
		{name: "out of retries", answers: []error{errBoom, errBoom, errBoom}, wantFailures: []int{0, 1, 2}, archived: true},
		{name: "permanent", answers: []error{Permanent(errBoom)}, wantFailures: []int{0}, archived: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each case has its own database
			st := startRedis(t).open(t)
			seen := newAttempts()
			var mu sync.Mutex
			n := 0
			q := startQueue(t, st, QueueOptions{MaxRetry: 2}, func(ctx context.Context, a Attempt) error {
				seen.add(a)
				mu.Lock()
				defer mu.Unlock()
				n++
				if n <= len(tt.answers) {
					return tt.answers[n-1]
				}
				return nil
			})
			if _, err := q.Enqueue(testCtx(t), Task{Kind: "k", Key: "the-key"}); err != nil {
				t.Fatal(err)
			}
			var got []int
			for range tt.wantFailures {
				got = append(got, seen.next(t).Failures)
			}
			s := waitStats(t, q, func(s QueueStats) bool { return s.Pending+s.Active+s.Retry+s.Scheduled == 0 })
			if (s.Archived == 1) != tt.archived {
				t.Errorf("stats %+v, archived %v", s, tt.archived)
			}
			if want := tt.wantFailures; !equalInts(got, want) {
				t.Errorf("failures seen %v, want %v", got, want)
			}
			select {
			case at := <-seen.ch:
				t.Errorf("one attempt too many: %+v", at)
			case <-time.After(100 * time.Millisecond):
			}
			if !tt.archived {
				return
			}
			// A new delivery asks for the work again.
			e, err := q.Enqueue(testCtx(t), Task{Kind: "k", Key: "the-key"})
			if err != nil || e.Coalesced {
				t.Fatalf("re-enqueue after archive = %+v, %v", e, err)
			}
			seen.next(t)
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestBackoff(t *testing.T) {
	t.Parallel() // its own database; the waits are Redis's real time
	tests := []struct {
		n        int
		min, max time.Duration
	}{
		{0, time.Second, 2 * time.Second},
		{1, 2 * time.Second, 4 * time.Second},
		{3, 8 * time.Second, 16 * time.Second},
		{10, 30 * time.Second, time.Minute}, // capped
		{200, 30 * time.Second, time.Minute},
	}
	q := &Queue{opt: QueueOptions{RetryBase: 2 * time.Second, RetryMax: time.Minute}}
	for _, tt := range tests {
		for range 100 {
			if d := q.retryDelay(tt.n, errors.New("failed"), nil); d < tt.min || d > tt.max {
				t.Errorf("retryDelay(%d) = %v, want within [%v, %v]", tt.n, d, tt.min, tt.max)
			}
		}
	}
}

func TestQueueRefusesEmptyKey(t *testing.T) {
	t.Parallel() // its own database; the waits are Redis's real time
	st := startRedis(t).open(t)
	q := startQueue(t, st, QueueOptions{}, nil)
	if _, err := q.Enqueue(testCtx(t), Task{Kind: "k"}); err == nil {
		t.Error("a task without a key was enqueued")
	}
}

func TestQueueRedisGone(t *testing.T) {
	t.Parallel() // its own redis-server (it kills it); the waits are Redis's real time
	srv := startOwnRedis(t)
	st := srv.open(t)
	q := startQueue(t, st, QueueOptions{}, nil)
	srv.Kill()
	_, err := q.Enqueue(testCtx(t), Task{Kind: "k", Key: "x"})
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("Enqueue without Redis: %v, want ErrUnavailable", err)
	}
	if _, err := q.Stats(testCtx(t)); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Stats without Redis: %v, want ErrUnavailable", err)
	}
}
