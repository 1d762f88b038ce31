package redisx

import (
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultLease is the lease used when Locker is given none: comfortably
// longer than one handling, short enough that a dead replica's locks free
// up quickly.
const DefaultLease = 30 * time.Second

// releaseTimeout bounds the compare-and-delete of an unlock, which has no
// ctx of its own.
const releaseTimeout = 2 * time.Second

var (
	// releaseScript deletes the lock only if it still holds our token: a
	// lease that expired and was taken by another replica is left alone.
	releaseScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)
	// renewScript extends the lease only if the lock still holds our token.
	renewScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0`)
)

// Locker is a per-key lock shared by every process using the same Redis and
// prefix. It implements decide.Locker. It is safe for concurrent use.
type Locker struct {
	keyspace // ttl: the lease
	// Backoff between attempts on a held lock: jittered, doubling from
	// minWait to maxWait.
	minWait, maxWait time.Duration
}

// Locker returns a Locker whose Redis keys are prefix+key (for example
// "phasegate:lock:"), with the given lease (DefaultLease when <= 0). A held
// lock is renewed every lease/3 while its holder lives; when the holder's
// process dies, the lock frees itself within one lease.
func (s *Store) Locker(prefix string, lease time.Duration) *Locker {
	lease = max(cmp.Or(max(lease, 0), DefaultLease), 3*time.Millisecond)
	maxWait := min(lease/4, 100*time.Millisecond)
	return &Locker{keyspace: keyspace{s.rdb, prefix, lease}, minWait: min(2*time.Millisecond, maxWait), maxWait: maxWait}
}

// Lock blocks until key is held or ctx ends, retrying a held lock with
// jittered backoff; unlock releases it (and may be called more than once).
//
// The error wraps ErrUnavailable when Redis fails: the caller must not act
// (see the package doc). When ctx ends first, it wraps ctx.Err().
//
// A lease lost while held (Redis gone for longer than the lease, or this
// process stalled) is covered by the handler's idempotence (see the
// package doc), not reported.
func (l *Locker) Lock(ctx context.Context, key string) (func(), error) {
	lease, err := l.Acquire(ctx, key)
	if err != nil {
		return nil, err
	}
	return func() { _ = lease.Release() }, nil
}

// Acquire is Lock returning the Lease itself.
func (l *Locker) Acquire(ctx context.Context, key string) (*Lease, error) {
	k := l.prefix + key
	token := rand.Text()
	wait := l.minWait
	for {
		ok, err := l.rdb.SetNX(ctx, k, token, l.ttl).Result()
		if err != nil {
			// The SET may have landed before the reply was lost: give it
			// back (best effort, in the background so that the caller
			// hears of the failure now) rather than wait out the lease.
			go quietly(func(ctx context.Context) error { return releaseScript.Run(ctx, l.rdb, []string{k}, token).Err() })
			return nil, unavailable(ctx, "taking the lock "+k, err)
		}
		if ok {
			return l.hold(k, token), nil
		}
		d := wait/2 + mrand.N(wait/2+1)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("waiting for the lock %s: %w", k, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, l.maxWait)
	}
}

// quietly runs f within releaseTimeout, ignoring its error: a release
// that fails needs no handling, as the lease expires on its own.
func quietly(f func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	_ = f(ctx)
}

// Lease is a held lock (or a Semaphore's slot). Its renewal runs until
// Release.
type Lease struct {
	token   string
	release func(ctx context.Context) error

	stop     chan struct{} // closed by Release: stop renewing
	done     chan struct{} // closed when the renewal goroutine has returned
	stopOnce sync.Once
	relOnce  sync.Once
	relErr   error
}

// newLease renews a lease with renew (renewEvery) until Release, which
// then gives it back with release.
func newLease(lease time.Duration, token string, renew func(context.Context) (int64, error), release func(context.Context) error) *Lease {
	ls := &Lease{token: token, release: release, stop: make(chan struct{}), done: make(chan struct{})}
	go renewEvery(lease, ls.stop, ls.done, renew)
	return ls
}

func (l *Locker) hold(k, token string) *Lease {
	return newLease(l.ttl, token, func(ctx context.Context) (int64, error) {
		return renewScript.Run(ctx, l.rdb, []string{k}, token, l.ttl.Milliseconds()).Int64()
	}, func(ctx context.Context) error {
		return unavailable(ctx, "releasing the lock "+k, releaseScript.Run(ctx, l.rdb, []string{k}, token).Err())
	})
}

// renewEvery runs renew every lease/3 until stop, or until renew finds the
// lease gone (0: expired, and perhaps taken by another holder); done is
// closed when it returns.
func renewEvery(lease time.Duration, stop <-chan struct{}, done chan<- struct{}, renew func(ctx context.Context) (int64, error)) {
	defer close(done)
	every := lease / 3
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), max(every, 10*time.Millisecond))
		n, err := renew(ctx)
		cancel()
		if err == nil && n == 0 {
			return
		}
	}
}

// Release stops the renewal and deletes the lock if it is still ours (an
// expired lease taken by another holder is left alone). It may be called
// more than once; only the first call does anything. An error (Redis gone)
// needs no handling: the lease expires on its own.
func (ls *Lease) Release() error {
	ls.relOnce.Do(func() {
		ls.stopRenewal()
		ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
		defer cancel()
		ls.relErr = ls.release(ctx)
	})
	return ls.relErr
}

// stopRenewal stops the renewal and waits for it to return. Without a
// Release after it, it is what a frozen or killed process does (tests use
// it to simulate one).
func (ls *Lease) stopRenewal() {
	ls.stopOnce.Do(func() { close(ls.stop) })
	<-ls.done
}
