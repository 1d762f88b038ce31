package redisx

import (
	"cmp"
	"context"
	"errors"
	"time"
)

// DefaultSeenTTL is how long a delivery ID is remembered when Seen is given
// no TTL: longer than GitHub's redelivery window for automatic retries and
// the reconcile loop's look-back at failed deliveries.
const DefaultSeenTTL = 72 * time.Hour

// Seen is the set of recently seen webhook delivery IDs, shared by every
// process using the same Redis and prefix. It is safe for concurrent use.
type Seen struct{ keyspace }

// Seen returns the delivery set whose Redis keys are prefix+deliveryID (for
// example "phasegate:delivery:"), each kept for ttl (DefaultSeenTTL when
// <= 0).
func (s *Store) Seen(prefix string, ttl time.Duration) *Seen {
	return &Seen{keyspace{s.rdb, prefix, cmp.Or(max(ttl, 0), DefaultSeenTTL)}}
}

// SeenBefore records deliveryID and reports whether it was already
// recorded (by any replica) within the TTL: of many concurrent calls for
// one ID, exactly one returns false. It is one SET NX with an expiry.
//
// The error wraps ErrUnavailable when Redis fails: the caller must not
// handle the delivery (it cannot know whether another replica does) and
// leaves it to the reconcile loop. When ctx ends first, it wraps ctx.Err().
func (s *Seen) SeenBefore(ctx context.Context, deliveryID string) (bool, error) {
	if deliveryID == "" {
		return false, errors.New("recording a delivery: empty delivery id")
	}
	k := s.prefix + deliveryID
	set, err := s.rdb.SetNX(ctx, k, 1, s.ttl).Result()
	if err != nil {
		return false, unavailable(ctx, "recording the delivery "+deliveryID, err)
	}
	return !set, nil
}

// Forget removes deliveryID, so that a redelivery of it (same ID) is
// handled: call it when a recorded delivery was then refused (queue full,
// 503) and not handled. An error wraps ErrUnavailable or ctx.Err().
func (s *Seen) Forget(ctx context.Context, deliveryID string) error {
	return unavailable(ctx, "forgetting the delivery "+deliveryID, s.rdb.Del(ctx, s.prefix+deliveryID).Err())
}
