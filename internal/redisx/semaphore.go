package redisx

import (
	"cmp"
	"context"
	"crypto/rand"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	// acquireSlotScript drops the expired holders of KEYS[1] (a sorted set
	// of tokens scored by their lease's end, in Redis's own milliseconds),
	// then adds ARGV[3] when fewer than ARGV[1] hold it. Redis's clock, not
	// the replicas', so that their clocks need not agree.
	acquireSlotScript = redis.NewScript(`
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now)
if redis.call("ZCARD", KEYS[1]) < tonumber(ARGV[1]) then
	redis.call("ZADD", KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
	redis.call("PEXPIRE", KEYS[1], ARGV[2])
	return 1
end
return 0`)
	// renewSlotScript extends ARGV[1]'s lease when it still holds a slot.
	renewSlotScript = redis.NewScript(`
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call("ZSCORE", KEYS[1], ARGV[1]) then
	redis.call("ZADD", KEYS[1], "XX", now + tonumber(ARGV[2]), ARGV[1])
	redis.call("PEXPIRE", KEYS[1], ARGV[2])
	return 1
end
return 0`)
)

// Semaphore bounds how many holders a key has at once, across every
// process using the same Redis and prefix: `serve` uses it to run at most N
// jobs of one installation at a time. A held slot is leased and renewed
// while its holder lives; a dead holder's slot frees itself within one
// lease. It is safe for concurrent use.
type Semaphore struct{ keyspace }

// Semaphore returns the semaphore whose Redis keys are prefix+key (sorted
// sets of holders), with the given lease (DefaultLease when <= 0).
func (s *Store) Semaphore(prefix string, lease time.Duration) *Semaphore {
	return &Semaphore{keyspace{s.rdb, prefix, max(cmp.Or(max(lease, 0), DefaultLease), 30*time.Millisecond)}}
}

// TryAcquire takes one of key's limit slots without waiting: ok is false
// when all are held. The error wraps ErrUnavailable when Redis fails (no
// slot is held then), or ctx's error. release gives the slot back; it may
// be called more than once.
func (m *Semaphore) TryAcquire(ctx context.Context, key string, limit int) (release func(), ok bool, err error) {
	k := m.prefix + key
	token := rand.Text()
	n, err := acquireSlotScript.Run(ctx, m.rdb, []string{k}, max(limit, 1), m.ttl.Milliseconds(), token).Int64()
	giveBack := func(ctx context.Context) error { return m.rdb.ZRem(ctx, k, token).Err() }
	if err != nil {
		// The slot may have been taken before the reply was lost.
		go quietly(giveBack)
		return nil, false, unavailable(ctx, "taking a slot of "+k, err)
	}
	if n != 1 {
		return nil, false, nil
	}
	// A renewal that finds the slot gone (expired: this process stalled)
	// stops renewing; the holder goes on, as the semaphore only spreads
	// the work, it guards nothing.
	ls := newLease(m.ttl, token, func(ctx context.Context) (int64, error) {
		return renewSlotScript.Run(ctx, m.rdb, []string{k}, token, m.ttl.Milliseconds()).Int64()
	}, giveBack)
	return func() { _ = ls.Release() }, true, nil
}
