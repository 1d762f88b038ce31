package redisx

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"
)

// The tests of leases, the locks' and the semaphore's: held while renewed,
// freed when their holder dies. They wait longest on Redis's real time,
// and a test file's tests start in the order of its name: this file's
// start before the rest of the package's (main_test.go's parallel).

// A replica that dies holding a lock frees it within one lease.
func TestLeaseExpiresWhenHolderDies(t *testing.T) {
	t.Parallel() // its own database; the waits are Redis's real time
	tests := []struct {
		name string
		die  func(st *Store, ls *Lease)
	}{
		{name: "renewal stops (process frozen or killed)", die: func(_ *Store, ls *Lease) { ls.stopRenewal() }},
		{name: "connection pool closed", die: func(st *Store, _ *Lease) { st.Close() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each case has its own database
			srv := startRedis(t)
			rdb := srv.client(t)
			ctx := testCtx(t)
			dying := srv.open(t)
			// The lease must outlast the moment from Acquire to the first
			// Get on a loaded machine (300 ms did not, once, with the
			// package's tests all running at once).
			ls, err := dying.Locker("lock:", 600*time.Millisecond).Acquire(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			tt.die(dying, ls)
			if got := rdb.Get(ctx, "lock:k").Val(); got != ls.token {
				t.Fatalf("right after the holder died the key holds %q, want its token", got)
			}
			other := srv.open(t).Locker("lock:", 5*time.Second)
			next, err := other.Acquire(ctx, "k")
			if err != nil {
				t.Fatalf("the other replica never got the dead holder's lock: %v", err)
			}
			defer next.Release()
			if got := rdb.Get(ctx, "lock:k").Val(); got != next.token {
				t.Fatalf("key holds %q, want the new holder's token", got)
			}
		})
	}
}

// A holder that keeps its lock for many leases keeps it: the renewal
// extends the lease, and another replica waiting for more than three leases
// does not get it.
//
// The lease is as short as a renewal allows on a loaded machine under
// -race: it is renewed every third of it, and one renewal answered later
// than that loses it (a second renewal comes too late). 800 ms leaves a
// renewal 267 ms; the wait is 2.8 s (it was 3.5 s, at 1 s).
func TestRenewalKeepsLongHolder(t *testing.T) {
	t.Parallel() // its own database; the waits are Redis's real time
	srv := startRedis(t)
	rdb := srv.client(t)
	const lease = 800 * time.Millisecond
	holder, waiter := srv.open(t).Locker("lock:", lease), srv.open(t).Locker("lock:", lease)
	ctx := testCtx(t)

	ls, err := holder.Acquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithTimeout(ctx, 3*lease+lease/2)
	defer cancel()
	if _, err := waiter.Lock(c, "k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiter.Lock during a long hold: %v, want context.DeadlineExceeded", err)
	}
	if got := rdb.Get(ctx, "lock:k").Val(); got != ls.token {
		t.Fatalf("key holds %q, want the holder's token", got)
	}
	if err := ls.Release(); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := ls.Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	unlock, err := waiter.Lock(ctx, "k")
	if err != nil {
		t.Fatalf("waiter.Lock after release: %v", err)
	}
	unlock()
	unlock() // idempotent
}

// When the lock is taken from under a holder (its lease expired while it
// stalled, or an operator deleted it), the holder's release leaves the new
// value alone.
func TestReleaseLeavesTakenLock(t *testing.T) {
	t.Parallel() // its own database; the waits are Redis's real time
	srv := startRedis(t)
	rdb := srv.client(t)
	ctx := testCtx(t)
	ls, err := srv.open(t).Locker("lock:", 300*time.Millisecond).Acquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, "lock:k", "someone-else", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if err := ls.Release(); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if got := rdb.Get(ctx, "lock:k").Val(); got != "someone-else" {
		t.Fatalf("key holds %q after the stale release, want someone-else's value", got)
	}
}

func TestSemaphore(t *testing.T) {
	t.Parallel() // its own database; the waits are Redis's real time
	srv := startRedis(t)
	a, b := srv.open(t), srv.open(t)
	ctx := testCtx(t)
	// Renewed every third of the lease: one renewal answered later than
	// that loses the slot. At 300 ms (100 ms a renewal) it was lost, three
	// runs in fifteen, with the package's tests running at once on a
	// loaded machine under -race.
	const lease = 600 * time.Millisecond
	sa, sb := a.Semaphore("sem:", lease), b.Semaphore("sem:", lease)

	r1, ok1, err1 := sa.TryAcquire(ctx, "inst-1", 2)
	r2, ok2, err2 := sb.TryAcquire(ctx, "inst-1", 2)
	_, ok3, err3 := sb.TryAcquire(ctx, "inst-1", 2)
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	if !ok1 || !ok2 || ok3 {
		t.Fatalf("three acquisitions of two slots: %v %v %v", ok1, ok2, ok3)
	}
	// Another key has its own slots.
	if r, ok, err := sa.TryAcquire(ctx, "inst-2", 2); err != nil || !ok {
		t.Fatalf("another key: %v %v", ok, err)
	} else {
		r()
	}
	// Held past several leases: the renewal keeps the slots.
	time.Sleep(10 * lease / 3)
	if n, err := sa.Holders(ctx, "inst-1"); err != nil || n != 2 {
		t.Fatalf("holders after 3⅓ leases: %d %v", n, err)
	}
	r2()
	r2() // twice is fine
	r4, ok4, err := sb.TryAcquire(ctx, "inst-1", 2)
	if err != nil || !ok4 {
		t.Fatalf("after a release: %v %v", ok4, err)
	}
	r4()
	r1()
	if n, _ := sa.Holders(ctx, "inst-1"); n != 0 {
		t.Errorf("%d holders after every release", n)
	}
}

// TestSemaphoreDeadHolder: the slots of a process that died (its Redis
// connection gone, no renewal) free themselves within one lease.
func TestSemaphoreDeadHolder(t *testing.T) {
	t.Parallel() // its own database; the waits are Redis's real time
	srv := startRedis(t)
	dead := srv.open(t)
	live := srv.open(t)
	ctx := testCtx(t)
	const lease = 300 * time.Millisecond
	release, ok, err := dead.Semaphore("sem:", lease).TryAcquire(ctx, "inst", 1)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	_ = dead.Close() // no more renewals, as when the process dies
	defer release()
	sem := live.Semaphore("sem:", lease)
	if _, ok, _ := sem.TryAcquire(ctx, "inst", 1); ok {
		t.Fatal("took the dead holder's slot at once")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, ok, err := sem.TryAcquire(ctx, "inst", 1)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			r()
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the dead holder's slot never freed")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Holders counts key's live holders. An error wraps ErrUnavailable.
func (m *Semaphore) Holders(ctx context.Context, key string) (int, error) {
	k := m.prefix + key
	t, err := m.rdb.Time(ctx).Result()
	if err != nil {
		return 0, unavailable(ctx, "reading the time of redis", err)
	}
	n, err := m.rdb.ZCount(ctx, k, "("+strconv.FormatInt(t.UnixMilli(), 10), "+inf").Result()
	if err != nil {
		return 0, unavailable(ctx, "counting the holders of "+k, err)
	}
	return int(n), nil
}
