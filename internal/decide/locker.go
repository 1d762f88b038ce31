package decide

import (
	"context"
	"strconv"
	"strings"
	"sync"
)

// The locks of the handler: one per issue (its thread is read, decided and
// written under it) and one per commit (its phasegate/decisions). The lock
// order is always issue, then commit.

// Locker serialises the handling of one issue (in memory in one process;
// Redis across the App's replicas).
type Locker interface {
	// Lock blocks until the key is held or ctx ends; unlock releases it.
	Lock(ctx context.Context, key string) (unlock func(), err error)
}

func (h *Handler) locks() Locker {
	if h.Locks != nil {
		return h.Locks
	}
	h.once.Do(func() { h.mem = NewMemLocker() })
	return h.mem
}

func lockKey(owner, repo string, issue int) string {
	return strings.ToLower(owner+"/"+repo) + "#" + strconv.Itoa(issue)
}

// MemLocker is an in-memory per-key lock, for one process.
type MemLocker struct {
	mu    sync.Mutex
	locks map[string]chan struct{}
}

// NewMemLocker returns an empty MemLocker.
func NewMemLocker() *MemLocker { return &MemLocker{locks: map[string]chan struct{}{}} }

// Lock blocks until key is free or ctx ends.
func (m *MemLocker) Lock(ctx context.Context, key string) (func(), error) {
	for {
		m.mu.Lock()
		ch, held := m.locks[key]
		if !held {
			ch = make(chan struct{})
			m.locks[key] = ch
			m.mu.Unlock()
			return func() {
				m.mu.Lock()
				delete(m.locks, key)
				m.mu.Unlock()
				close(ch)
			}, nil
		}
		m.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
