package server

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/checkjob"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/testutil/redistest"
)

// gateEditFake sets up attack 4 of issue 30 on h's fake: the branch
// "loosen" carries an edit of the gate's configuration (appHead1 over
// appBaseSHA), pushed by agent-bot. No pull request exists yet: openPull
// opens it (gh pr create) and returns its number.
func gateEditFake(h *harness) (openPull func() int) {
	f := h.fake
	f.SetPermission(owner, repo, "agent-bot", "write")
	f.SetTreeFiles(owner, repo, appBaseSHA, map[string]string{"README.md": "# shop\n"})
	f.SetTreeFiles(owner, repo, appHead1, map[string]string{"README.md": "# shop\n", ".github/phasegate.yml": "rules:\n  schema.convention: off\n"})
	f.SetCompare(owner, repo, appBaseSHA, appHead1, []ghfake.File{{Filename: ".github/phasegate.yml", Status: "added"}})
	return func() int {
		pr := f.AddPullRequest(owner, repo, ghfake.PullRequest{HeadSHA: appHead1, BaseSHA: appBaseSHA, HeadRef: "loosen", BaseRef: "main", Author: "agent-bot"})
		f.SetPullRequestFiles(owner, repo, pr, []ghfake.File{{Filename: ".github/phasegate.yml", Status: "added"}})
		return pr
	}
}

// wantGateHeld fails t unless what GitHub shows as phasegate/contracts of
// the head (the newest check run, the latest status when statuses are
// published) is the pull request's: HOLD by the gate-change guard.
func wantGateHeld(t *testing.T, h *harness, publish string) {
	t.Helper()
	if publish == decide.PublishStatuses {
		if st, ok := h.fake.LatestStatus(owner, repo, appHead1, decide.ContextContracts); !ok || st.State != "failure" {
			t.Errorf("the head's latest %s status is %+v, want failure (the last check to finish must be the pull request's); logs:\n%s", decide.ContextContracts, st, tail(h.logs.String(), 4000))
		}
		return
	}
	c := newest(t, h.fake, appHead1, decide.ContextContracts)
	held := false
	for _, a := range c.Annotations {
		held = held || a.Title == checkjob.RuleGateChange
	}
	if c.Conclusion != "failure" || !held {
		t.Errorf("the head's phasegate/contracts is %s/%s (%s) without a %s annotation: a push's check overwrote its pull request's; logs:\n%s",
			c.Status, c.Conclusion, c.Title, checkjob.RuleGateChange, tail(h.logs.String(), 4000))
	}
	if publish != decide.PublishBoth {
		return
	}
	if st, ok := h.fake.LatestStatus(owner, repo, appHead1, decide.ContextContracts); !ok || st.State != "failure" {
		t.Errorf("the head's latest %s status is %+v, want failure (the last check to finish must be the pull request's)", decide.ContextContracts, st)
	}
}

// TestRedTeamPullRequestWhilePushChecksDurable is attack 4 of issue 30
// on the durable queue (asynq on a real redis-server): the branch carrying
// a gate edit is pushed, and its pull request is opened while the push's
// check runs (held on its tree read). The pull_request delivery is a job of
// its own (its input differs from the push's: a pull request, its base),
// not coalesced into the push's, and waits for it (the per-commit lock):
// what GitHub shows last is the pull request's HOLD. Coalesced (one task
// per commit, whatever the input), the push's neutral was the last word.
// Without the per-commit lock, the pull request's check ran while the
// push's was held, and the push's, finishing last, set the status.
func TestRedTeamPullRequestWhilePushChecksDurable(t *testing.T) {
	t.Parallel() // real time (Redis, the queue's polling)
	rdb := redistest.SharedDB(t)
	locks := newLIFOLocker()
	h := durableHarness(t, rdb, nil, func(c *Config) { c.NewDecider = nil; c.Publish = decide.PublishBoth; c.Locker = locks })
	openPull := gateEditFake(h)
	held := h.fake.HoldNext("GET", "/git/trees/"+appHead1)
	h.start()
	h.waitReady()
	if code, answer := h.send(delivery{event: "push", body: pushEvent("refs/heads/loosen", appBaseSHA, appHead1, false)}); code != http.StatusAccepted {
		t.Fatalf("push: %d %q", code, answer)
	}
	select {
	case <-held.Arrived():
	case <-time.After(guard):
		t.Fatalf("the push's check never read its tree; logs:\n%s", h.logs.String())
	}
	pr := openPull()
	code, answer := h.send(delivery{event: "pull_request", body: prOpenEvent("opened", pr, appHead1, appBaseSHA, "loosen", "agent-bot")})
	jobs := 1 // the push's
	if code != http.StatusAccepted || answer != "accepted" {
		t.Errorf("pull_request opened while the push's check runs: %d %q, want 202 \"accepted\" (a job of its own)", code, answer)
	} else {
		select {
		case <-locks.waiting: // behind the push's check, as it should
			jobs++
		case d := <-h.done:
			t.Errorf("the pull request's job (%+v) checked the commit while the push's check of it ran", d)
		case <-time.After(guard):
			t.Fatalf("the pull request's job neither ran nor waited; logs:\n%s", h.logs.String())
		}
	}
	held.Release()
	for _, d := range h.waitJobs(jobs) {
		if d.outcome != "ok" {
			t.Fatalf("job %+v; logs:\n%s", d, h.logs.String())
		}
	}
	wantGateHeld(t, h, decide.PublishBoth)
}

// TestRedTeamPullRequestWhilePushWaitsInMemory is attack 4 on the
// in-memory queue, where every delivery is a job: the push's job and the
// pull request's wait for the commit's lock (another check of the commit
// holds it), and the lock makes no promise of order: here the pull
// request's goes first. The push's job must then read the commit's pull
// request under the lock and check the same change. When it listed the
// pull requests before taking the lock (none yet), it checked a bare push
// after the pull request's check and overwrote its HOLD with neutral.
// Without the lock, the push's check ran at once, beside the other.
func TestRedTeamPullRequestWhilePushWaitsInMemory(t *testing.T) {
	t.Parallel()
	// With statuses only, no check run records the pull request for a
	// job that found none (recordedPull): reading it under the lock is
	// then the whole defence.
	for _, publish := range []string{decide.PublishChecks, decide.PublishStatuses} {
		t.Run(publish, func(t *testing.T) {
			t.Parallel()
			locks := newLIFOLocker()
			h := newHarness(t, func(c *Config) { c.NewDecider = nil; c.Publish = publish; c.Locker = locks })
			openPull := gateEditFake(h)
			h.start()
			h.waitReady()
			// Another check of the commit is running: it holds the commit's lock.
			unlock, err := locks.Lock(context.Background(), "check:"+owner+"/"+repo+":"+appHead1)
			if err != nil {
				t.Fatal(err)
			}
			waits := func(what string) {
				t.Helper()
				select {
				case <-locks.waiting:
				case d := <-h.done:
					unlock()
					t.Fatalf("%s: a job (%+v) ran while another check of its commit held the commit's lock; logs:\n%s", what, d, h.logs.String())
				case <-time.After(guard):
					t.Fatalf("%s: no job waited for the commit's lock; logs:\n%s", what, h.logs.String())
				}
			}
			if code, answer := h.send(delivery{event: "push", body: pushEvent("refs/heads/loosen", appBaseSHA, appHead1, false)}); code != http.StatusAccepted {
				t.Fatalf("push: %d %q", code, answer)
			}
			waits("push")
			pr := openPull()
			if code, answer := h.send(delivery{event: "pull_request", body: prOpenEvent("opened", pr, appHead1, appBaseSHA, "loosen", "agent-bot")}); code != http.StatusAccepted {
				t.Fatalf("pull_request: %d %q", code, answer)
			}
			waits("pull_request")
			unlock() // the pull request's job goes first (the last to wait), then the push's
			for _, d := range h.waitJobs(2) {
				if d.outcome != "ok" {
					t.Fatalf("job %+v; logs:\n%s", d, h.logs.String())
				}
			}
			wantGateHeld(t, h, publish)

		})
	}
}

// lifoLocker is a per-key lock that hands a released key to the caller
// that waited last (MemLocker and Redis's Locker promise no order): a
// test sets up the order that breaks a job relying on one. It tells
// waiting of every Lock call that has to wait.
type lifoLocker struct {
	mu      sync.Mutex
	held    map[string]bool
	queued  map[string][]chan struct{}
	waiting chan string
}

func newLIFOLocker() *lifoLocker {
	return &lifoLocker{held: map[string]bool{}, queued: map[string][]chan struct{}{}, waiting: make(chan string, 100)}
}

func (l *lifoLocker) Lock(ctx context.Context, key string) (func(), error) {
	l.mu.Lock()
	if !l.held[key] {
		l.held[key] = true
		l.mu.Unlock()
		return l.unlocker(key), nil
	}
	turn := make(chan struct{})
	l.queued[key] = append(l.queued[key], turn)
	l.mu.Unlock()
	if strings.HasPrefix(key, "check:") {
		l.waiting <- key
	}
	select {
	case <-turn:
		return l.unlocker(key), nil
	case <-ctx.Done():
		l.mu.Lock()
		q := l.queued[key]
		for i, c := range q {
			if c == turn {
				l.queued[key] = append(q[:i:i], q[i+1:]...)
				l.mu.Unlock()
				return nil, ctx.Err()
			}
		}
		l.mu.Unlock()
		l.unlocker(key)() // handed the key as ctx ended: pass it on
		return nil, ctx.Err()
	}
}

// unlocker releases key to the last waiter, or frees it.
func (l *lifoLocker) unlocker(key string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if q := l.queued[key]; len(q) > 0 {
				l.queued[key] = q[:len(q)-1]
				close(q[len(q)-1])
				return
			}
			delete(l.held, key)
		})
	}
}
