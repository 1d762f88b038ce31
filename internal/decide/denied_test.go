package decide

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestDispatchRefusalRemembered: a repository whose token may not dispatch
// is not asked again for deniedFor (each reconcile pass would spend a
// request on the same refusal); after it, it is.
func TestDispatchRefusalRemembered(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var mu sync.Mutex
	now := time.Date(2026, 3, 13, 5, 0, 0, 0, time.UTC)
	w.h.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	w.fake.SetTokenPermissions(bot, map[string]string{"issues": "write", "pull_requests": "write", "statuses": "write", "contents": "read"})
	w.postOutcome(seed, source, bot)
	w.say("alice", "/resolve D-001 approve")
	tries := func() int { return w.fake.CountCalls("POST", "/repos/"+owner+"/"+repo+"/dispatches") }
	reconcile := func() {
		t.Helper()
		if _, err := w.h.ReconcileIssue(context.Background(), w.gh, owner, repo, w.issue); err != nil {
			t.Fatal(err)
		}
	}
	first := tries()
	if first == 0 {
		t.Fatal("the dispatch was never tried")
	}
	reconcile()
	if got := tries(); got != first {
		t.Errorf("within deniedFor: %d dispatch requests, want %d", got, first)
	}
	mu.Lock()
	now = now.Add(deniedFor)
	mu.Unlock()
	reconcile()
	if got := tries(); got <= first {
		t.Errorf("after deniedFor: %d dispatch requests, want more than %d", got, first)
	}
}
