package ghfake

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"
)

// ManualClock is a clock that moves only when told to, or when someone
// sleeps on it: Sleep returns at once and advances the clock by the
// duration. Share one between the fake (SetClock(c.Now)) and the client under
// test (its Now and Sleep options) so that Retry-After and rate-limit resets
// are honoured in zero real time. Safe for concurrent use.
type ManualClock struct {
	mu    sync.Mutex
	t     time.Time
	slept []time.Duration
}

// NewManualClock returns a clock set to t.
func NewManualClock(t time.Time) *ManualClock { return &ManualClock{t: t} }

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Sleep records d and advances the clock by it, unless ctx is already done.
func (c *ManualClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept = append(c.slept, d)
	if d > 0 {
		c.t = c.t.Add(d)
	}
	return nil
}

// Slept returns every duration slept, in order.
func (c *ManualClock) Slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.slept...)
}

// TotalSlept is the sum of Slept.
func (c *ManualClock) TotalSlept() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var sum time.Duration
	for _, d := range c.slept {
		sum += d
	}
	return sum
}

// JumpClock follows the real clock, except that Sleep returns at once and
// moves the clock forward by the duration: time never goes backwards and
// never falls behind time.Now. Share one between the fake (SetClock(c.Now))
// and the clients under test (their Now and Sleep options) in a test whose
// other parts (tickers, JWTs, a server's own clock) run on real time: the
// clients' backoff, Retry-After and rate-limit waits are honoured without
// being slept. Its AfterFunc is the clients' attempt timer
// (ghclient.Options.AfterFunc), and a fake whose hung requests Expire
// (Server.ExpireHangs) fires a hung attempt's timer at once: the client times
// out as it would have, and the test does not wait out its timeout. Safe
// for concurrent use.
type JumpClock struct {
	mu      sync.Mutex
	offset  time.Duration
	slept   int
	timers  []*jumpTimer // pending, oldest first
	expired int
}

// jumpTimer is a pending AfterFunc.
type jumpTimer struct {
	method, path, query string
	deadline            time.Time
	f                   func()
	real                *time.Timer
}

// NewJumpClock returns a clock that reads time.Now.
func NewJumpClock() *JumpClock { return &JumpClock{} }

// Now returns time.Now plus everything slept so far.
func (c *JumpClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// Sleep moves the clock forward by d at once, unless ctx is already done.
func (c *JumpClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept++
	if d > 0 {
		c.offset += d
	}
	return nil
}

// AfterFunc calls f once d has passed: on real time, or at once when the
// fake Expires req (then the clock moves to the timer's deadline, as if d
// had passed). stop cancels it and reports whether f was still to come. It
// has the signature of ghclient.Options.AfterFunc.
func (c *JumpClock) AfterFunc(req *http.Request, d time.Duration, f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &jumpTimer{method: req.Method, path: req.URL.Path, query: req.URL.RawQuery, deadline: time.Now().Add(c.offset + d), f: f}
	c.timers = append(c.timers, t)
	t.real = time.AfterFunc(d, func() {
		if c.take(t) {
			f()
		}
	})
	return func() bool {
		if !c.take(t) {
			return false
		}
		t.real.Stop()
		return true
	}
}

// take removes t from the pending timers, reporting whether it was there.
func (c *JumpClock) take(t *jumpTimer) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.Index(c.timers, t)
	if i < 0 {
		return false
	}
	c.timers = slices.Delete(c.timers, i, i+1)
	return true
}

// Expire fires, at once, the oldest pending AfterFunc of a request with r's
// method, path and query (r as the server received it), moving the clock to
// its deadline. It reports whether there was one.
func (c *JumpClock) Expire(r *http.Request) bool {
	c.mu.Lock()
	i := slices.IndexFunc(c.timers, func(t *jumpTimer) bool {
		return t.method == r.Method && t.path == r.URL.Path && t.query == r.URL.RawQuery
	})
	if i < 0 {
		c.mu.Unlock()
		return false
	}
	t := c.timers[i]
	c.timers = slices.Delete(c.timers, i, i+1)
	c.offset = max(c.offset, time.Until(t.deadline)) // Now() = time.Now() + offset reaches the deadline
	c.expired++
	c.mu.Unlock()
	t.real.Stop()
	t.f()
	return true
}

// Expired returns how many timers Expire fired.
func (c *JumpClock) Expired() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.expired
}

// Skipped returns how many sleeps returned at once and how far they moved
// the clock ahead of time.Now.
func (c *JumpClock) Skipped() (sleeps int, ahead time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slept, c.offset
}
