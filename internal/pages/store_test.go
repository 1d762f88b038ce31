package pages

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/gate"
	"github.com/phasegate/phasegate/internal/redisx"
	"github.com/phasegate/phasegate/internal/report"
	"github.com/phasegate/phasegate/internal/testutil/redistest"
	"github.com/phasegate/phasegate/internal/web"
)

func reportWith(findings int) *report.Report {
	rep := &report.Report{Verdict: gate.Result{Verdict: gate.Hold, Reasons: []string{"HOLD: a.yaml — broken"}}}
	for i := 0; i < findings; i++ {
		rep.Findings = append(rep.Findings, check.Finding{File: "a.yaml", Line: i + 1, Column: 1, Rule: "schema", Severity: check.SeverityError, Message: strings.Repeat("m", 100)})
	}
	return rep
}

// TestResultStore: findings are capped with a count of the rest; the
// in-memory store forgets the least recently used beyond its bytes; a
// shared store (Redis) gives a result to a replica that never saw it.
func TestResultStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	t.Run("capped", func(t *testing.T) {
		cr := newCommitResult(reportWith(maxKeptFindings+7), at)
		if len(cr.Findings) != maxKeptFindings || cr.More != 7 {
			t.Errorf("%d findings kept, %d more; want %d and 7", len(cr.Findings), cr.More, maxKeptFindings)
		}
		long := newCommitResult(&report.Report{Verdict: gate.Result{Reasons: []string{strings.Repeat("é", maxKeptText)}}}, at)
		if r := long.Reasons[0]; len(r) > maxKeptText+len("…") || !strings.HasSuffix(r, "…") {
			t.Errorf("a long reason kept as %d bytes", len(r))
		}
	})
	t.Run("memory bound", func(t *testing.T) {
		one := newCommitResult(reportWith(10), at)
		r := newResultStore(3*one.size(), nil)
		for i := 0; i < 5; i++ {
			if err := r.put(ctx, fmt.Sprint(i), one); err != nil {
				t.Fatal(err)
			}
		}
		if n, bytes := r.len(); n != 3 || bytes > 3*one.size() {
			t.Errorf("%d results in %d bytes, want 3 within %d", n, bytes, 3*one.size())
		}
		if _, ok, _ := r.get(ctx, "0"); ok {
			t.Error("the oldest result is still there")
		}
		if _, ok, _ := r.get(ctx, "4"); !ok {
			t.Error("the newest result is gone")
		}
	})
	t.Run("shared with redis", func(t *testing.T) {
		db := redistest.SharedDB(t)
		store, err := redisx.Open(ctx, db.URL())
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		a := newResultStore(0, store.Blobs("phasegate:test:result:", time.Hour))
		b := newResultStore(0, store.Blobs("phasegate:test:result:", time.Hour))
		want := newCommitResult(reportWith(3), at)
		key := resultKey("Acme", "Shop", "ABC123")
		if err := a.put(ctx, key, want); err != nil {
			t.Fatal(err)
		}
		got, ok, err := b.get(ctx, resultKey("acme", "shop", "abc123"))
		if err != nil || !ok {
			t.Fatalf("the other replica: %v, %v", ok, err)
		}
		if got.Verdict != "HOLD" || len(got.Findings) != 3 || got.Findings[2].Line != 3 || !got.CheckedAt.Equal(at) {
			t.Errorf("round trip: %+v", got)
		}
		if _, ok, err := b.get(ctx, resultKey("acme", "shop", "def456")); ok || err != nil {
			t.Errorf("an unknown commit: %v, %v", ok, err)
		}
	})
}

// TestBus: every subscriber gets a change; a subscriber that never reads
// misses changes instead of holding up the publisher; beyond the bound a
// subscriber gets a closed channel (its page polls); cancel closes.
func TestBus(t *testing.T) {
	t.Parallel()
	b := newBus()
	slow, cancelSlow := b.subscribe()
	fast, cancelFast := b.subscribe()
	done := make(chan struct{})
	go func() {
		for i := 0; i < 10*subscriberBuffer; i++ {
			b.publish(web.Change{Owner: "a", Repo: "r", Issue: i + 1})
		}
		close(done)
	}()
	got := 0
	for got < 10*subscriberBuffer {
		select {
		case <-fast:
			got++
		case <-done:
			for len(fast) > 0 {
				<-fast
				got++
			}
			if got < subscriberBuffer {
				t.Fatalf("the reading subscriber got %d changes", got)
			}
			got = 10 * subscriberBuffer
		}
	}
	<-done
	if len(slow) != subscriberBuffer || b.dropped == 0 {
		t.Errorf("the slow subscriber holds %d (buffer %d), %d dropped", len(slow), subscriberBuffer, b.dropped)
	}
	cancelSlow()
	cancelSlow()
	for range slow { // drains, then ends: cancel closed it
	}
	cancelFast()
	var cancels []func()
	for i := 0; i < maxSubscribers; i++ {
		_, c := b.subscribe()
		cancels = append(cancels, c)
	}
	over, _ := b.subscribe()
	if _, open := <-over; open {
		t.Error("a subscriber beyond the bound got an open channel")
	}
	for _, c := range cancels {
		c()
	}
	if b.subscribers() != 0 {
		t.Errorf("%d subscribers left", b.subscribers())
	}
}

// subscribers is how many are listening.
func (b *bus) subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}

// len is the number of results in memory, and their estimated bytes.
func (r *resultStore) len() (int, int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ll.Len(), r.bytes
}
