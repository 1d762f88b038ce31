package decide

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/phasegate/phasegate/internal/notify"
)

type recordingNotifier struct {
	mu     sync.Mutex
	events []notify.Event
}

func (r *recordingNotifier) Notify(_ context.Context, ev notify.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	return nil
}

// TestResume: every resolution sends phasegate.resolved, and the one that
// moves the phase phasegate.phase-advanced, once: not again on a rerun or a
// reconcile, never for a refused command; the notify URL gets the same.
func TestResume(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	n := &recordingNotifier{}
	w.h.Notifier = n
	w.postOutcome(seed, source, bot)
	ctx := context.Background()
	types := func() string {
		var out []string
		for _, d := range w.fake.Dispatches(owner, repo) {
			out = append(out, d.EventType)
		}
		return strings.Join(out, ",")
	}

	w.say("bob", "/resolve D-001 approve") // refused: read permission
	if got := types(); got != "" {
		t.Fatalf("a refused command dispatched: %s", got)
	}
	w.say("alice", "/resolve D-002 capture")
	if got := types(); got != "phasegate.resolved" {
		t.Fatalf("after D-002: %s", got)
	}
	_, cmd := w.say("alice", "/resolve D-001 approve")
	if got := types(); got != "phasegate.resolved,phasegate.resolved,phasegate.phase-advanced" {
		t.Fatalf("after D-001: %s", got)
	}
	var adv notify.Event
	if err := json.Unmarshal(w.fake.Dispatches(owner, repo)[2].ClientPayload, &adv); err != nil {
		t.Fatal(err)
	}
	if adv.State.Phase != "planning" || adv.State.PreviousPhase != "requirements" || adv.Decision.ID != "D-001" || adv.Decision.By != "alice" {
		t.Errorf("phase-advanced payload = %+v", adv)
	}
	// Reruns: the same delivery again, reconcile twice, a fresh handler
	// (another replica, or the next workflow run) reconciling.
	if _, err := w.h.HandleComment(ctx, w.gh, Event{Owner: owner, Repo: repo, Issue: w.issue, Comment: Comment{ID: cmd, Author: "alice", Body: "/resolve D-001 approve"}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := w.h.ReconcileIssue(ctx, w.gh, owner, repo, w.issue); err != nil {
			t.Fatal(err)
		}
	}
	fresh := &Handler{Logger: w.h.Logger}
	if _, err := fresh.ReconcileIssue(ctx, w.gh, owner, repo, w.issue); err != nil {
		t.Fatal(err)
	}
	if got := types(); got != "phasegate.resolved,phasegate.resolved,phasegate.phase-advanced" {
		t.Errorf("after reruns: %s", got)
	}
	if len(n.events) != 3 {
		t.Errorf("%d notifications, want 3", len(n.events))
	}
}

// TestResumeWithoutPermission: a token without contents: write skips the
// dispatch with a warning; the resolution itself stands.
func TestResumeWithoutPermission(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.fake.SetTokenPermissions(bot, map[string]string{"issues": "write", "pull_requests": "write", "statuses": "write", "contents": "read"})
	w.postOutcome(seed, source, bot)
	if r, _ := w.say("alice", "/resolve D-001 approve"); r.Resolutions != 1 {
		t.Fatalf("resolutions = %d", r.Resolutions)
	}
	if d := w.fake.Dispatches(owner, repo); len(d) != 0 {
		t.Errorf("dispatched without permission: %+v", d)
	}
}

// TestResumeTurnedOff: decisions.dispatch: false sends nothing.
func TestResumeTurnedOff(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.fake.SetFile(owner, repo, "main", ".github/phasegate.yml", []byte("decisions:\n  dispatch: false\n"))
	w.postOutcome(seed, source, bot)
	w.say("alice", "/resolve D-001 approve")
	if d := w.fake.Dispatches(owner, repo); len(d) != 0 {
		t.Errorf("dispatched although turned off: %+v", d)
	}
}

// TestOnlyEditsAreEdits: GitHub may move a comment's updated_at without an
// edit; only GraphQL's lastEditedAt, which an edit sets, makes a phasegate
// comment tampered. A real edit still is.
func TestOnlyEditsAreEdits(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.postOutcome(seed, source, bot)
	w.say("alice", "/resolve D-001 reject")
	cs := w.fake.Comments(owner, repo, w.issue)
	res := cs[len(cs)-1]
	w.fake.TouchComment(res.ID)
	fresh := &Handler{Logger: w.h.Logger}
	r, err := fresh.ReconcileIssue(context.Background(), w.gh, owner, repo, w.issue)
	if err != nil {
		t.Fatal(err)
	}
	if r.Tampered != 0 {
		t.Fatalf("a comment whose updated_at moved without an edit counts as tampered")
	}
	w.fake.EditComment(res.ID, res.Body)
	if r, err = (&Handler{Logger: w.h.Logger}).ReconcileIssue(context.Background(), w.gh, owner, repo, w.issue); err != nil {
		t.Fatal(err)
	}
	if r.Tampered == 0 {
		t.Errorf("an edit (even to the same text) is not tampering")
	}
}
