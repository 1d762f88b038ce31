package redisx

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultBlobTTL is how long a blob is kept when Blobs is given no TTL.
const DefaultBlobTTL = 7 * 24 * time.Hour

// Blobs keeps values (serve's check results for its pages, as JSON) under
// prefix+key for a TTL, where every replica reads them. It is a cache: a
// value that expired or was evicted is simply not known. Safe for
// concurrent use.
type Blobs struct{ keyspace }

// Blobs returns the store whose Redis keys are prefix+key (for example
// "phasegate:result:"), each kept for ttl (DefaultBlobTTL when <= 0).
func (s *Store) Blobs(prefix string, ttl time.Duration) *Blobs {
	return &Blobs{keyspace{s.rdb, prefix, cmp.Or(max(ttl, 0), DefaultBlobTTL)}}
}

// Put stores value under key, replacing what was there. An error wraps
// ErrUnavailable or ctx.Err().
func (b *Blobs) Put(ctx context.Context, key string, value []byte) error {
	return unavailable(ctx, "storing "+key, b.rdb.Set(ctx, b.prefix+key, value, b.ttl).Err())
}

// Get is the value under key; false when there is none. An error wraps
// ErrUnavailable or ctx.Err().
func (b *Blobs) Get(ctx context.Context, key string) ([]byte, bool, error) {
	v, err := b.rdb.Get(ctx, b.prefix+key).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, false, nil
	case err != nil:
		return nil, false, unavailable(ctx, "reading "+key, err)
	}
	return v, true, nil
}
