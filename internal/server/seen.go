package server

import (
	"cmp"
	"context"
	"hash/maphash"
	"sync"
	"time"
)

// Seen remembers webhook delivery IDs, so that a replayed delivery (the
// same X-GitHub-Delivery) is not acted on twice.
type Seen interface {
	// SeenBefore records deliveryID and reports whether it was recorded
	// before (an atomic check-and-set: of two concurrent calls with one ID,
	// exactly one answers false).
	SeenBefore(ctx context.Context, deliveryID string) (bool, error)
}

// MemSeen is an in-memory Seen for one process: IDs are forgotten after a
// TTL, and the oldest first when more than a maximum are held, so its
// memory is bounded whatever the delivery rate.
//
// It holds a 128-bit keyed hash of each ID, not the ID: nothing in it is a
// pointer, so the garbage collector does not walk its (up to DefaultSeenMax
// × 2) entries at every cycle. The hash's seeds are random per process, so
// whoever chooses delivery IDs cannot make two collide (by chance: about
// n²/2¹²⁹ for n IDs held).
type MemSeen struct {
	ttl  time.Duration
	max  int
	now  func() time.Time
	seed [2]maphash.Seed
	zero time.Time // times are kept as nanoseconds since zero (monotonic when now is time.Now)

	mu    sync.Mutex
	ids   map[seenKey]int64 // id's hash → when it expires
	order []seenEntry       // ring buffer, oldest first (the TTL is fixed)
	head  int
	n     int
}

type seenKey [2]uint64

type seenEntry struct {
	key     seenKey
	expires int64
}

// NewMemSeen returns a MemSeen that remembers an ID for ttl, and at most
// limit IDs (defaults DefaultSeenTTL and DefaultSeenMax when not positive).
func NewMemSeen(ttl time.Duration, limit int) *MemSeen {
	ttl, limit = cmp.Or(max(ttl, 0), DefaultSeenTTL), cmp.Or(max(limit, 0), DefaultSeenMax)
	return &MemSeen{ttl: ttl, max: limit, now: time.Now, seed: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, zero: time.Now(),
		ids: map[seenKey]int64{}, order: make([]seenEntry, 0, min(limit, 1024))}
}

// SeenBefore implements Seen.
func (m *MemSeen) SeenBefore(_ context.Context, id string) (bool, error) {
	key := seenKey{maphash.String(m.seed[0], id), maphash.String(m.seed[1], id)}
	now := int64(m.now().Sub(m.zero))
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire(now)
	if exp, ok := m.ids[key]; ok && now < exp {
		return true, nil
	}
	if m.n == m.max {
		m.evictOldest()
	}
	exp := now + int64(m.ttl)
	m.ids[key] = exp
	m.push(seenEntry{key: key, expires: exp})
	return false, nil
}

// Len is the number of IDs remembered.
func (m *MemSeen) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.ids)
}

func (m *MemSeen) expire(now int64) {
	for m.n > 0 && now >= m.order[m.head].expires {
		m.evictOldest()
	}
}

func (m *MemSeen) evictOldest() {
	e := m.order[m.head]
	m.order[m.head] = seenEntry{}
	m.head = (m.head + 1) % len(m.order)
	m.n--
	// An ID recorded again later has a later expiry: keep that record.
	if exp, ok := m.ids[e.key]; ok && exp == e.expires {
		delete(m.ids, e.key)
	}
}

// push appends to the ring, growing it (up to max) when full.
func (m *MemSeen) push(e seenEntry) {
	if m.n == len(m.order) {
		grown := make([]seenEntry, min(max(2*len(m.order), 16), m.max))
		for i := 0; i < m.n; i++ {
			grown[i] = m.order[(m.head+i)%len(m.order)]
		}
		m.order, m.head = grown, 0
	}
	m.order[(m.head+m.n)%len(m.order)] = e
	m.n++
}
