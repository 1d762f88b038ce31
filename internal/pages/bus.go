package pages

import (
	"sync"

	"github.com/phasegate/phasegate/internal/web"
)

// The change bus: what the pages' live updates (server-sent events) are
// fed from. The server publishes a web.Change when one of its own jobs
// changes what a page shows: a commit's check job, a comment or a
// reconcile of an issue (seen through the fold observer: the issue's
// pending decisions, newest phasegate comment or comments moved). Fan-out
// never blocks a job: a subscriber whose buffer is full misses the change,
// and the page's polling fallback catches up. With several replicas, a
// change made on another replica reaches a page only by that polling.

// Bounds of the bus.
const (
	// maxSubscribers bounds the pages listening at once; beyond it a
	// subscriber gets a closed channel (the page then polls).
	maxSubscribers = 512
	// subscriberBuffer is the changes one subscriber may lag behind.
	subscriberBuffer = 64
)

type bus struct {
	mu   sync.Mutex
	next int
	subs map[int]chan web.Change
	// dropped counts changes a full subscriber missed (tests, metrics).
	dropped int
}

func newBus() *bus { return &bus{subs: map[int]chan web.Change{}} }

// subscribe returns a channel of changes and its cancel, which closes it;
// calling cancel twice is harmless.
func (b *bus) subscribe() (<-chan web.Change, func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.subs) >= maxSubscribers {
		ch := make(chan web.Change)
		close(ch)
		return ch, func() {}
	}
	id := b.next
	b.next++
	ch := make(chan web.Change, subscriberBuffer)
	b.subs[id] = ch
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			if c, ok := b.subs[id]; ok {
				delete(b.subs, id)
				close(c)
			}
		})
	}
}

// publish hands c to every subscriber that has room, without waiting.
func (b *bus) publish(c web.Change) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, ch := range b.subs {
		select {
		case ch <- c:
		default:
			b.dropped++
		}
	}
}
