package server

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestMemSeen(t *testing.T) {
	t.Parallel()
	type step struct {
		advance time.Duration
		id      string
		want    bool
	}
	tests := []struct {
		name  string
		ttl   time.Duration
		max   int
		steps []step
	}{
		{name: "a replay is seen", ttl: time.Hour, max: 10, steps: []step{
			{id: "a", want: false}, {id: "a", want: true}, {id: "b", want: false}, {id: "a", want: true},
		}},
		{name: "forgotten after the TTL", ttl: time.Hour, max: 10, steps: []step{
			{id: "a"}, {advance: 59 * time.Minute, id: "a", want: true}, {advance: time.Minute, id: "a", want: false},
			{id: "a", want: true},
		}},
		{name: "the oldest forgotten beyond the maximum", ttl: time.Hour, max: 3, steps: []step{
			{id: "a"}, {id: "b"}, {id: "c"}, {id: "d"}, {id: "b", want: true}, {id: "a", want: false},
		}},
		{name: "a ring that wraps around", ttl: time.Minute, max: 100, steps: func() []step {
			var s []step
			for i := 0; i < 300; i++ {
				s = append(s, step{advance: time.Second, id: fmt.Sprint(i)})
			}
			return append(s, step{id: "299", want: true}, step{id: "200", want: false})
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Date(2026, 3, 13, 5, 0, 0, 0, time.UTC)
			m := NewMemSeen(tt.ttl, tt.max)
			m.now = func() time.Time { return now }
			for i, s := range tt.steps {
				now = now.Add(s.advance)
				got, err := m.SeenBefore(context.Background(), s.id)
				if err != nil || got != s.want {
					t.Fatalf("step %d (%s): %v, %v, want %v", i, s.id, got, err, s.want)
				}
				if m.Len() > tt.max {
					t.Fatalf("step %d: %d ids held, max %d", i, m.Len(), tt.max)
				}
			}
		})
	}
}

func TestMemSeenConcurrent(t *testing.T) {
	t.Parallel()
	m := NewMemSeen(time.Hour, 1000)
	var first atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if seen, _ := m.SeenBefore(context.Background(), "same"); !seen {
				first.Add(1)
			}
		}()
	}
	wg.Wait()
	if first.Load() != 1 {
		t.Fatalf("%d callers saw the id first, want 1", first.Load())
	}
}
