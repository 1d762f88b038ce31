package server

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// bodyBudget bounds the bytes of webhook bodies held in memory at once,
// across every connection: a body is read only after its size (its
// Content-Length, or MaxBody when it has none) is reserved here, so that
// clients who know no secret cannot make the server hold more than the
// budget of unverified bodies.
type bodyBudget struct {
	mu   sync.Mutex
	max  int64
	used int64
}

// acquire reserves n bytes; false (nothing reserved) when they do not fit.
// It never waits: a delivery over the budget is answered 503 at once.
func (b *bodyBudget) acquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n < 0 || n > b.max-b.used {
		return false
	}
	b.used += n
	return true
}

func (b *bodyBudget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

func (b *bodyBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// parseBytes reads a size: a number of bytes, or a number followed by KiB,
// MiB or GiB (binary multiples).
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, errors.New("not a size")
	}
	if n > (1<<62)/mult {
		return 0, fmt.Errorf("%d×%d bytes is too large", n, mult)
	}
	return n * mult, nil
}
