package redisx

import (
	"context"
	"fmt"
)

// Table is a small map of values (serve's waiting deployment requests,
// as JSON) in one Redis hash, shared by every replica: nothing expires,
// the owner removes what it is done with. Safe for concurrent use.
type Table struct {
	keyspace
	max int64
}

// Table returns the table kept in the Redis hash key (for example
// "phasegate:deployments"), of at most max fields.
func (s *Store) Table(key string, max int64) *Table {
	return &Table{keyspace: keyspace{rdb: s.rdb, prefix: key}, max: max}
}

// Put sets field to value. A new field is refused when the table holds max
// already. An error wraps ErrUnavailable or ctx.Err().
func (t *Table) Put(ctx context.Context, field string, value []byte) error {
	exists, err := t.rdb.HExists(ctx, t.prefix, field).Result()
	if err != nil {
		return unavailable(ctx, "reading "+field, err)
	}
	if !exists {
		n, err := t.rdb.HLen(ctx, t.prefix).Result()
		if err != nil {
			return unavailable(ctx, "counting "+t.prefix, err)
		}
		if n >= t.max {
			return fmt.Errorf("storing %s: %s holds %d entries, its most", field, t.prefix, n)
		}
	}
	return unavailable(ctx, "storing "+field, t.rdb.HSet(ctx, t.prefix, field, value).Err())
}

// All is every field and its value. An error wraps ErrUnavailable or
// ctx.Err().
func (t *Table) All(ctx context.Context) (map[string]string, error) {
	m, err := t.rdb.HGetAll(ctx, t.prefix).Result()
	if err != nil {
		return nil, unavailable(ctx, "reading "+t.prefix, err)
	}
	return m, nil
}

// Take removes field and reports whether this call removed it: of many
// concurrent calls, over every replica, exactly one does (HDEL). An error
// wraps ErrUnavailable or ctx.Err().
func (t *Table) Take(ctx context.Context, field string) (bool, error) {
	n, err := t.rdb.HDel(ctx, t.prefix, field).Result()
	if err != nil {
		return false, unavailable(ctx, "removing "+field, err)
	}
	return n == 1, nil
}
