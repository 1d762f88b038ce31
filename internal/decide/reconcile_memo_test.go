package decide

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/testutil/outcometest"
)

// memoWorld is a world whose handler keeps watermarks and a fold memo, as
// serve's does, on the fake's clock: #42 (the seed outcome, pending, pages
// pages of comments at 100 a page, the last of 6), #41 (another outcome,
// pending) and #7 (no outcome, commented on).
type memoWorld struct {
	*world
	clock   *ghfake.ManualClock
	chatter []int64 // on #42
	other   int64   // the chatter on #41
}

func newMemoWorld(t *testing.T, pages int) *memoWorld {
	t.Helper()
	w := newWorld(t)
	clock := ghfake.NewManualClock(time.Date(2026, 3, 13, 5, 0, 0, 0, time.UTC))
	w.fake.SetClock(clock.Now)
	w.h.Now = clock.Now
	w.h.Watermarks, w.h.Memo = &Watermarks{}, NewFoldMemo(0)
	m := &memoWorld{world: w, clock: clock}
	w.postOutcome(seed, source, bot)
	path41 := "outcomes/feature-041-requirements.outcome.yaml"
	body, _ := outcometest.Render(t, outcometest.SeedFor(41), outcome.Meta{Source: path41, Commit: addedSHA, PR: prNumber, Actors: []string{"agent-bot"}})
	w.fake.SetFile(owner, repo, addedSHA, path41, []byte(outcometest.SeedFor(41)))
	w.fake.AddComment(owner, repo, 41, bot, body)
	m.other = w.fake.AddComment(owner, repo, 41, "bob", "a remark on 41")
	for _, n := range []int{41, 42} {
		w.fake.LabelIssue(owner, repo, n, LabelPending)
	}
	for i := 0; i < 100*(pages-1)+5; i++ { // + the outcome
		clock.Advance(time.Second)
		m.chatter = append(m.chatter, w.fake.AddComment(owner, repo, w.issue, "chatter", fmt.Sprintf("remark %d", i)))
	}
	w.fake.AddComment(owner, repo, 7, "bob", "an unrelated issue")
	return m
}

// pass runs one reconcile pass and returns its result and the fake's calls
// per thread ("41", "42", "7") and in all.
func (m *memoWorld) pass(t *testing.T) (Result, map[string]int, []ghfake.Call) {
	t.Helper()
	m.fake.ResetCalls()
	r, err := m.h.ReconcileRepo(context.Background(), m.gh, owner, repo)
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	calls := m.fake.Calls()
	per := map[string]int{}
	for _, c := range calls {
		for _, n := range []int{7, 41, 42} {
			if strings.Contains(c.Path, "/issues/"+strconv.Itoa(n)+"/") || strings.HasSuffix(c.Path, "/issues/"+strconv.Itoa(n)) {
				per[strconv.Itoa(n)]++
			}
		}
	}
	return r, per, calls
}

// TestReconcileReadsWhatChanged: the pass after the first reads the thread
// that changed (and applies the command whose delivery was lost) and not
// the others; a pass with nothing changed reads no thread at all.
func TestReconcileReadsWhatChanged(t *testing.T) {
	t.Parallel() // seconds of JSON under -race; its world is its own
	// Three pages: a first, a middle and a last, each asserted below.
	m := newMemoWorld(t, 3)
	if r, per, _ := m.pass(t); r.Reread != 3 || per["41"] == 0 || per["42"] == 0 || per["7"] == 0 {
		t.Fatalf("first pass: %+v, calls per thread %v; want every thread read", r, per)
	}
	m.clock.Advance(15 * time.Minute)
	lost := m.fake.AddComment(owner, repo, m.issue, "alice", "/resolve D-001 approve")
	r, per, calls := m.pass(t)
	if r.Resolutions != 1 || r.Reread != 1 || r.Unchanged != 2 {
		t.Fatalf("second pass: %+v, want the lost command applied, one thread read and two unchanged", r)
	}
	if res := m.state().Outcome(m.ids[source]).Decision("D-001").Resolution; res == nil || res.Command != lost {
		t.Fatalf("D-001 not resolved by the lost command: %+v", res)
	}
	if per["41"] != 0 || per["7"] != 0 {
		t.Fatalf("unchanged threads were read: calls per thread %v", per)
	}
	pages := 0
	for _, c := range calls {
		if c.Method == "GET" && c.Path == fmt.Sprintf("/repos/%s/%s/issues/%d/comments", owner, repo, m.issue) {
			pages++
			if c.Status != 304 && !strings.Contains(c.Query, "page=3") {
				t.Errorf("an unchanged page of the changed thread cost rate limit: %s %d", c.Query, c.Status)
			}
		}
	}
	if pages != 3 {
		t.Errorf("%d page reads of the changed thread, want 3", pages)
	}
	m.clock.Advance(15 * time.Minute)
	r, per, calls = m.pass(t)
	if r.Reread != 0 || r.Unchanged != 2 || len(per) != 0 { // #41, and #42 by its answers (#7 is no longer listed)
		t.Fatalf("third pass, nothing changed: %+v, calls per thread %v", r, per)
	}
	if len(calls) > 4 {
		t.Errorf("third pass: %d requests, want the two listings and the config (at most 4): %v", len(calls), calls)
	}
}

// TestReconcileNoticesChangesOnUnchangedThreads (red team): whatever is
// done to a thread the memo holds as unchanged — an edit in the very second
// the pass read it, an old comment turned into a command, a phasegate
// comment edited, a remark on a pending thread deleted — makes the next
// pass read it again, and the fold sees it. (A deletion on a thread that is
// no longer pending shows in no listing: the issue_comment deleted webhook
// records it, docs/security.md.)
func TestReconcileNoticesChangesOnUnchangedThreads(t *testing.T) {
	t.Parallel() // seconds of JSON under -race; its world is its own
	// #42's pages: two where a case needs a page before the last (the old
	// remark edited is on the first, not the last), else one: the command
	// is on the last page whatever their number, the cases on #41 change
	// nothing on #42, and what the memo compares (counts, the recent
	// listing, the edge digests) is per thread, not per page. No case
	// touches a middle page (three pages would be a third more JSON under
	// -race for nothing).
	tests := []struct {
		name         string
		pages        int
		do           func(m *memoWorld, command int64)
		reread       string
		wantTampered bool
	}{
		{name: "the answered command edited in the second it was read", pages: 1, reread: "42", wantTampered: true,
			do: func(m *memoWorld, command int64) { m.fake.EditComment(command, "/resolve D-001 reject") }},
		{name: "an old remark edited into a command", pages: 2, reread: "42", do: func(m *memoWorld, _ int64) {
			m.clock.Advance(time.Minute)
			m.fake.EditComment(m.chatter[3], "/resolve D-001 reject")
		}},
		{name: "an outcome comment edited", pages: 1, reread: "41", wantTampered: true, do: func(m *memoWorld, _ int64) {
			m.clock.Advance(time.Minute)
			c := m.fake.Comments(owner, repo, 41)[0]
			m.fake.EditComment(c.ID, strings.Replace(c.Body, "approve", "approve-all", 1))
		}},
		{name: "a remark on a pending thread deleted", pages: 1, reread: "41", do: func(m *memoWorld, _ int64) { m.fake.DeleteComment(m.other) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := newMemoWorld(t, tt.pages)
			m.pass(t)
			m.clock.Advance(15 * time.Minute)
			command := m.fake.AddComment(owner, repo, m.issue, "alice", "/resolve D-001 approve")
			if r, _, _ := m.pass(t); r.Resolutions != 1 {
				t.Fatalf("the command was not applied: %+v", r)
			}
			m.clock.Advance(15 * time.Minute)
			if r, per, _ := m.pass(t); r.Reread != 0 || len(per) != 0 {
				t.Fatalf("a settled thread was read again: %+v, calls per thread %v", r, per)
			}
			tt.do(m, command)
			r, per, _ := m.pass(t)
			// (#41's outcome shares #42's pull request: syncing its head
			// reads #42 too.)
			if r.Reread != 1 || per[tt.reread] == 0 {
				t.Fatalf("after the change: %+v, calls per thread %v; want #%s read again, and only it", r, per, tt.reread)
			}
			if got := r.Tampered > 0; got != tt.wantTampered {
				t.Fatalf("tampered %d, want tampering seen = %v", r.Tampered, tt.wantTampered)
			}
		})
	}
}

// shareSpent is a Budget whose share is spent: only essential work may go
// on (the rate limits themselves are fine).
type shareSpent struct{ asked []bool }

func (s *shareSpent) Allow(essential bool) (string, bool) {
	s.asked = append(s.asked, essential)
	if essential {
		return "", true
	}
	return "budget", false
}

// TestReconcileSpentShareAppliesLostCommands: with the pass's share of the
// rate limit spent, the listings still run and a thread whose recent
// comments hold a lost command is still read and the command applied — a
// spent share must never leave a command unapplied past one interval —
// while a thread that changed without a command is left for a later pass
// (a *CutShortError naming it, and the next pass reads it first).
func TestReconcileSpentShareAppliesLostCommands(t *testing.T) {
	t.Parallel() // seconds of JSON under -race; its world is its own
	// Two pages, so the lost command's thread is more than its last page
	// (a third page would add JSON, not a case).
	m := newMemoWorld(t, 2)
	if r, _, _ := m.pass(t); r.Reread != 3 {
		t.Fatalf("first pass: %+v", r)
	}
	m.clock.Advance(15 * time.Minute)
	m.fake.AddComment(owner, repo, 41, "bob", "another remark on 41")
	lost := m.fake.AddComment(owner, repo, m.issue, "alice", "/resolve D-001 approve")
	budget := &shareSpent{}
	m.h.Budget = budget
	r, err := m.h.ReconcileRepo(context.Background(), m.gh, owner, repo)
	var cut *CutShortError
	if !errors.As(err, &cut) || cut.Reason != "budget" || fmt.Sprint(cut.Deferred) != "[41]" {
		t.Fatalf("err = %v, want a cut short for the budget deferring #41", err)
	}
	if r.Resolutions != 1 {
		t.Fatalf("result %+v: the lost command was not applied", r)
	}
	if res := m.state().Outcome(m.ids[source]).Decision("D-001").Resolution; res == nil || res.Command != lost {
		t.Fatalf("D-001 not resolved by the lost command: %+v", res)
	}
	if len(budget.asked) < 3 || !budget.asked[0] || !budget.asked[1] {
		t.Errorf("Allow calls %v: want the listings and the command's thread asked as essential first", budget.asked)
	}
	m.h.Budget = nil
	m.clock.Advance(15 * time.Minute)
	if r, per, _ := m.pass(t); r.Reread < 1 || per["41"] == 0 {
		t.Fatalf("the pass after: %+v, calls per thread %v; want #41 read", r, per)
	}
}
