package ghfake

import (
	"context"
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
// being slept. Safe for concurrent use.
type JumpClock struct {
	mu     sync.Mutex
	offset time.Duration
	slept  int
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

// Skipped returns how many sleeps returned at once and how far they moved
// the clock ahead of time.Now.
func (c *JumpClock) Skipped() (sleeps int, ahead time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slept, c.offset
}
