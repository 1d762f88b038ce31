package server

import (
	"context"
	"sync"
)

// MemSlots is an in-memory Slots for one process.
type MemSlots struct {
	mu   sync.Mutex
	held map[string]int
}

// NewMemSlots returns an empty MemSlots.
func NewMemSlots() *MemSlots { return &MemSlots{held: map[string]int{}} }

// TryAcquire takes one of key's limit slots, if one is free.
func (m *MemSlots) TryAcquire(_ context.Context, key string, limit int) (func(), bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.held[key] >= max(limit, 1) {
		return nil, false, nil
	}
	m.held[key]++
	var once sync.Once
	return func() {
		once.Do(func() {
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.held[key]--; m.held[key] <= 0 {
				delete(m.held, key)
			}
		})
	}, true, nil
}
