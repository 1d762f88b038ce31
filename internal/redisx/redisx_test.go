package redisx

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestOpen(t *testing.T) {
	t.Parallel() // its own database; the waits are Redis's real time
	srv := startRedis(t)
	dead, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		url         string
		wantErr     bool
		unavailable bool
		notInErr    string
	}{
		{name: "ok", url: srv.URL()},
		{name: "ok with timeouts in the url", url: srv.URL() + "?dial_timeout=3s&read_timeout=2s"},
		{name: "bad scheme", url: "http://" + srv.addr, wantErr: true},
		{name: "malformed, password kept out of the error", url: "redis://u:hunter2@host:port/0", wantErr: true, notInErr: "hunter2"},
		{name: "nothing listening", url: fmt.Sprintf("redis://127.0.0.1:%d/0", dead), wantErr: true, unavailable: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := Open(testCtx(t), tt.url)
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				defer st.Close()
				if err := st.Ping(testCtx(t)); err != nil {
					t.Fatalf("Ping: %v", err)
				}
				return
			}
			if err == nil {
				st.Close()
				t.Fatal("Open: no error")
			}
			if got := errors.Is(err, ErrUnavailable); got != tt.unavailable {
				t.Errorf("errors.Is(%v, ErrUnavailable) = %v, want %v", err, got, tt.unavailable)
			}
			if isCtxErr(err) {
				t.Errorf("Open waited for ctx instead of failing: %v", err)
			}
			if tt.notInErr != "" && strings.Contains(err.Error(), tt.notInErr) {
				t.Errorf("error %q contains %q", err, tt.notInErr)
			}
		})
	}
}

// Two replicas (two Stores) and many goroutines take one lock; a counter
// updated under it by read, yield, write loses no update, and no two
// holders are ever inside at once.
func TestLockMutualExclusionAcrossReplicas(t *testing.T) {
	t.Parallel() // its own database; the waits are Redis's real time
	srv := startRedis(t)
	replicas := []*Locker{srv.open(t).Locker("lock:", 5*time.Second), srv.open(t).Locker("lock:", 5*time.Second)}
	for _, l := range replicas {
		l.maxWait = 10 * time.Millisecond // more pressure on the lock
	}
	// Four rounds each, not ten: as discriminating (with a plain SET for
	// SETNX, 38-42 of the 48 holds overlapped, every run of eight), for
	// a third less CPU.
	const perReplica, rounds = 6, 4
	var (
		counter, inside, overlaps atomic.Int64
		wg                        sync.WaitGroup
		errs                      = make(chan error, 2*perReplica*rounds)
	)
	ctx := testCtx(t)
	for _, l := range replicas {
		for range perReplica {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range rounds {
					unlock, err := l.Lock(ctx, "owner/repo#1")
					if err != nil {
						errs <- err
						return
					}
					if inside.Add(1) != 1 {
						overlaps.Add(1)
					}
					v := counter.Load()
					runtime.Gosched()
					time.Sleep(100 * time.Microsecond)
					counter.Store(v + 1)
					inside.Add(-1)
					unlock()
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Lock: %v", err)
	}
	if n := overlaps.Load(); n != 0 {
		t.Errorf("%d times two holders were inside the lock at once", n)
	}
	if got, want := counter.Load(), int64(len(replicas)*perReplica*rounds); got != want {
		t.Errorf("counter = %d, want %d (updates interleaved)", got, want)
	}
	if n := srv.client(t).Exists(ctx, "lock:owner/repo#1").Val(); n != 0 {
		t.Errorf("the lock key is left behind after every unlock")
	}
}

func TestLockKeysAreIndependent(t *testing.T) {
	t.Parallel() // its own database; the waits are Redis's real time
	srv := startRedis(t)
	a, b := srv.open(t).Locker("lock:", 5*time.Second), srv.open(t).Locker("lock:", 5*time.Second)
	other := srv.open(t).Locker("other:", 5*time.Second)
	ctx := testCtx(t)
	unlock, err := a.Lock(ctx, "o/r#1")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	tests := []struct {
		name string
		l    *Locker
		key  string
	}{
		{"another key, another replica", b, "o/r#2"},
		{"another key, same replica", a, "o/r#3"},
		{"same key, another prefix", other, "o/r#1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Only a held lock makes Lock wait; these are free.
			c, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			u, err := tt.l.Lock(c, tt.key)
			if err != nil {
				t.Fatalf("Lock(%s): %v", tt.key, err)
			}
			u()
		})
	}
}

// A holder whose lease expired (it stalled, its renewal stopped) and was
// taken over must not delete the new holder's lock when it unlocks.
func TestUnlockAfterExpiryLeavesOthersLock(t *testing.T) {
	t.Parallel() // its own database; the waits are Redis's real time
	srv := startRedis(t)
	rdb := srv.client(t)
	a, b := srv.open(t).Locker("lock:", 300*time.Millisecond), srv.open(t).Locker("lock:", 5*time.Second)
	ctx := testCtx(t)

	stale, err := a.Acquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	stale.stopRenewal() // stalled: no more renewals, but it will still unlock
	held, err := b.Acquire(ctx, "k")
	if err != nil {
		t.Fatalf("b.Acquire after a's lease expired: %v", err)
	}
	defer held.Release()
	if held.token == stale.token {
		t.Fatal("two leases share a token")
	}

	if err := stale.Release(); err != nil {
		t.Fatalf("stale release: %v", err)
	}
	if got := rdb.Get(ctx, "lock:k").Val(); got != held.token {
		t.Fatalf("after the stale unlock the key holds %q, want b's token %q", got, held.token)
	}
	if ttl := rdb.PTTL(ctx, "lock:k").Val(); ttl <= 0 {
		t.Fatalf("b's lock has no expiry left: %v", ttl)
	}
	c, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := a.Lock(c, "k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a.Lock while b holds: %v, want context.DeadlineExceeded", err)
	}
}

func TestLockContext(t *testing.T) {
	t.Parallel() // its own database; the waits are Redis's real time
	srv := startRedis(t)
	rdb := srv.client(t)
	a, b := srv.open(t).Locker("lock:", 5*time.Second), srv.open(t).Locker("lock:", 5*time.Second)
	ctx := testCtx(t)
	held, err := a.Acquire(ctx, "held")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()

	tests := []struct {
		name string
		key  string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{
			name: "already cancelled, free key",
			key:  "free",
			ctx: func() (context.Context, context.CancelFunc) {
				c, cancel := context.WithCancel(ctx)
				cancel()
				return c, cancel
			},
			want: context.Canceled,
		},
		{
			name: "cancelled while waiting",
			key:  "held",
			ctx: func() (context.Context, context.CancelFunc) {
				c, cancel := context.WithCancel(ctx)
				time.AfterFunc(50*time.Millisecond, cancel)
				return c, cancel
			},
			want: context.Canceled,
		},
		{
			name: "deadline while waiting",
			key:  "held",
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(ctx, 50*time.Millisecond)
			},
			want: context.DeadlineExceeded,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, cancel := tt.ctx()
			defer cancel()
			unlock, err := b.Lock(c, tt.key)
			if err == nil {
				unlock()
				t.Fatal("Lock: no error")
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("Lock: %v, want %v", err, tt.want)
			}
			if errors.Is(err, ErrUnavailable) {
				t.Errorf("Lock: %v wraps ErrUnavailable; a ctx ending is not Redis failing", err)
			}
		})
	}
	if got := rdb.Get(ctx, "lock:held").Val(); got != held.token {
		t.Errorf("the held key holds %q after the waiters gave up, want the holder's token", got)
	}
}

// Many concurrent calls for one delivery, over two replicas: exactly one
// sees it first.
func TestSeenAcrossReplicas(t *testing.T) {
	t.Parallel() // its own database; the waits are Redis's real time
	srv := startRedis(t)
	replicas := []*Seen{srv.open(t).Seen("seen:", time.Hour), srv.open(t).Seen("seen:", time.Hour)}
	tests := []struct {
		name  string
		ids   int
		calls int
	}{
		{"one delivery, 64 calls", 1, 64},
		{"8 deliveries, 64 calls", 8, 64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			var (
				mu    sync.Mutex
				first = map[string]int{}
				wg    sync.WaitGroup
			)
			for i := range tt.calls {
				wg.Add(1)
				go func() {
					defer wg.Done()
					id := fmt.Sprintf("%s-%d", tt.name, i%tt.ids)
					seen, err := replicas[i%len(replicas)].SeenBefore(ctx, id)
					if err != nil {
						t.Errorf("SeenBefore(%s): %v", id, err)
						return
					}
					mu.Lock()
					defer mu.Unlock()
					if !seen {
						first[id]++
					} else if _, ok := first[id]; !ok {
						first[id] = 0
					}
				}()
			}
			wg.Wait()
			if len(first) != tt.ids {
				t.Errorf("%d deliveries recorded, want %d", len(first), tt.ids)
			}
			for id, n := range first {
				if n != 1 {
					t.Errorf("delivery %s was new to %d calls, want exactly 1", id, n)
				}
			}
		})
	}
}

func TestSeenForgetAndExpiry(t *testing.T) {
	t.Parallel() // its own database; the waits are Redis's real time
	srv := startRedis(t)
	rdb := srv.client(t)
	ctx := testCtx(t)
	st := srv.open(t)
	long, short := st.Seen("seen:", time.Hour), st.Seen("seen:", 200*time.Millisecond)

	steps := []struct {
		name string
		do   func() (bool, error)
		want bool
	}{
		{"first", func() (bool, error) { return long.SeenBefore(ctx, "d1") }, false},
		{"replay", func() (bool, error) { return long.SeenBefore(ctx, "d1") }, true},
		{"after Forget", func() (bool, error) {
			if err := long.Forget(ctx, "d1"); err != nil {
				return false, err
			}
			return long.SeenBefore(ctx, "d1")
		}, false},
		{"after Forget, replay", func() (bool, error) { return long.SeenBefore(ctx, "d1") }, true},
		{"short ttl, first", func() (bool, error) { return short.SeenBefore(ctx, "d2") }, false},
		{"short ttl, after expiry", func() (bool, error) {
			for rdb.Exists(ctx, "seen:d2").Val() != 0 {
				if ctx.Err() != nil {
					return false, ctx.Err()
				}
				time.Sleep(20 * time.Millisecond)
			}
			return short.SeenBefore(ctx, "d2")
		}, false},
	}
	for _, s := range steps {
		got, err := s.do()
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got != s.want {
			t.Fatalf("%s: SeenBefore = %v, want %v", s.name, got, s.want)
		}
	}
	if ttl := rdb.TTL(ctx, "seen:d1").Val(); ttl <= 0 || ttl > time.Hour {
		t.Errorf("TTL of a recorded delivery = %v, want (0, 1h]", ttl)
	}
	if _, err := long.SeenBefore(ctx, ""); err == nil || errors.Is(err, ErrUnavailable) {
		t.Errorf("SeenBefore(\"\") = %v, want a plain error", err)
	}
}

// Redis killed mid-test: every call fails with ErrUnavailable on its own,
// long before the generous ctx ends, including a Lock that was waiting for
// a held lock, and the release of a held lease.
func TestRedisGoesAway(t *testing.T) {
	t.Parallel() // its own redis-server (it kills it); the waits are Redis's real time
	srv := startOwnRedis(t)
	ctx := testCtx(t)
	st1, st2 := srv.open(t), srv.open(t)
	l1, l2 := st1.Locker("lock:", 500*time.Millisecond), st2.Locker("lock:", 500*time.Millisecond)
	seen := st2.Seen("seen:", time.Hour)

	held, err := l1.Acquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := seen.SeenBefore(ctx, "before"); err != nil {
		t.Fatal(err)
	}
	waiting := make(chan error, 1)
	go func() {
		unlock, err := l2.Lock(ctx, "k")
		if err == nil {
			unlock()
		}
		waiting <- err
	}()

	srv.Kill()

	checks := []struct {
		name string
		call func() error
	}{
		{"Lock of a free key", func() error {
			unlock, err := l1.Lock(ctx, "free")
			if err == nil {
				unlock()
			}
			return err
		}},
		{"Lock that was waiting", func() error {
			select {
			case err := <-waiting:
				return err
			case <-ctx.Done():
				return ctx.Err()
			}
		}},
		{"SeenBefore", func() error { _, err := seen.SeenBefore(ctx, "after"); return err }},
		{"Forget", func() error { return seen.Forget(ctx, "before") }},
		{"Ping", func() error { return st1.Ping(ctx) }},
		{"Release of a held lease", held.Release},
	}
	for _, c := range checks {
		err := c.call()
		switch {
		case err == nil:
			t.Errorf("%s: no error with Redis gone", c.name)
		case isCtxErr(err):
			t.Errorf("%s: %v; it waited for ctx instead of failing", c.name, err)
		case !errors.Is(err, ErrUnavailable):
			t.Errorf("%s: %v, want ErrUnavailable", c.name, err)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("the test's ctx ended")
	}
}

// A Store closed while a Lock waits, and calls after Close.
func TestClosedStore(t *testing.T) {
	t.Parallel() // its own database; the waits are Redis's real time
	srv := startRedis(t)
	ctx := testCtx(t)
	st := srv.open(t)
	l := st.Locker("lock:", time.Second)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Lock(ctx, "k"); !errors.Is(err, ErrUnavailable) || isCtxErr(err) {
		t.Errorf("Lock after Close: %v, want ErrUnavailable", err)
	}
	if _, err := st.Seen("seen:", 0).SeenBefore(ctx, "d"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("SeenBefore after Close: %v, want ErrUnavailable", err)
	}
	if err := st.Ping(ctx); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Ping after Close: %v, want ErrUnavailable", err)
	}
}
