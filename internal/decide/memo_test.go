package decide

import (
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/ghclient"
)

// TestFoldMemoUnchanged: what the listings must show for a thread to be
// skipped, and every change that must make the pass read it again.
func TestFoldMemoUnchanged(t *testing.T) {
	t.Parallel()
	read := time.Date(2026, 3, 13, 5, 0, 0, 0, time.UTC)
	old := ghclient.Comment{ID: 10, Body: "the outcome", CreatedAt: read.Add(-time.Hour), UpdatedAt: read.Add(-time.Hour)}
	cmd := ghclient.Comment{ID: 11, Body: "/resolve D-001 approve", CreatedAt: read.Add(-time.Minute), UpdatedAt: read.Add(-time.Minute)}
	last := ghclient.Comment{ID: 12, Body: "looks good", CreatedAt: read, UpdatedAt: read}
	th := &thread{owner: "acme", repo: "shop", issue: 7, readAt: read, comments: []ghclient.Comment{old, cmd, last},
		labelsAfter: []string{"phasegate:pending", "phase:requirements"}}
	edited := func(c ghclient.Comment, body string, at time.Time) ghclient.Comment {
		c.Body, c.UpdatedAt = body, at
		return c
	}
	pending := listed{pending: true, count: 3, labels: labelKey([]string{"Phase:Requirements", "phasegate:pending"})}
	with := func(l listed, recent ...ghclient.Comment) listed {
		l.recent = recent
		return l
	}
	tests := []struct {
		name   string
		in     listed
		cfg    string
		at     time.Time
		maxAge time.Duration
		want   bool
	}{
		{name: "pending, nothing new", in: pending, cfg: "c1", at: read.Add(15 * time.Minute), want: true},
		{name: "the previous pass's comments listed again", in: with(pending, cmd, last), cfg: "c1", at: read.Add(15 * time.Minute), want: true},
		{name: "not pending, listed again", in: with(listed{}, last), cfg: "c1", at: read.Add(15 * time.Minute), want: true},
		{name: "a new comment", in: with(listed{pending: true, count: 4, labels: pending.labels}, ghclient.Comment{ID: 13, Body: "hi", UpdatedAt: read.Add(time.Minute)}), cfg: "c1", want: false},
		{name: "a new comment the count does not show yet", in: with(pending, ghclient.Comment{ID: 13, Body: "hi", UpdatedAt: read.Add(time.Minute)}), cfg: "c1", want: false},
		{name: "a comment deleted", in: listed{pending: true, count: 2, labels: pending.labels}, cfg: "c1", want: false},
		{name: "an old comment edited", in: with(pending, edited(old, "/resolve D-001 reject", read.Add(time.Minute))), cfg: "c1", want: false},
		{name: "edited in the second it was read", in: with(pending, edited(last, "/resolve D-001 approve", read)), cfg: "c1", want: false},
		{name: "a command edited in the second it was read", in: with(pending, edited(cmd, "/resolve D-001 reject", cmd.UpdatedAt)), cfg: "c1", want: false},
		{name: "updated_at moved, body not", in: with(pending, edited(cmd, cmd.Body, read.Add(time.Minute))), cfg: "c1", want: false},
		{name: "labels changed", in: listed{pending: true, count: 3, labels: labelKey([]string{"phasegate:pending"})}, cfg: "c1", want: false},
		{name: "configuration changed", in: pending, cfg: "c2", want: false},
		{name: "memo too old", in: pending, cfg: "c1", at: read.Add(2 * time.Hour), maxAge: time.Hour, want: false},
		{name: "another thread", in: pending, cfg: "c1", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewFoldMemo(10)
			m.MaxAge = tt.maxAge
			m.record(th, "c1")
			issue := 7
			if tt.name == "another thread" {
				issue = 8
			}
			at := tt.at
			if at.IsZero() {
				at = read.Add(15 * time.Minute)
			}
			if got := m.unchanged("ACME", "shop", issue, tt.in, tt.cfg, at); got != tt.want {
				t.Fatalf("unchanged = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestFoldMemoBounded: the least recently used threads are forgotten
// first, and a nil memo remembers nothing.
func TestFoldMemoBounded(t *testing.T) {
	t.Parallel()
	read := time.Date(2026, 3, 13, 5, 0, 0, 0, time.UTC)
	m := NewFoldMemo(2)
	in := listed{}
	for _, n := range []int{1, 2} {
		m.record(&thread{owner: "acme", repo: "shop", issue: n, readAt: read}, "")
	}
	if !m.unchanged("acme", "shop", 1, in, "", read) { // 1 is now the most recently used
		t.Fatal("thread 1 forgotten too early")
	}
	m.record(&thread{owner: "acme", repo: "shop", issue: 3, readAt: read}, "")
	tests := []struct {
		issue int
		want  bool
	}{{1, true}, {2, false}, {3, true}}
	for _, tt := range tests {
		if got := m.unchanged("acme", "shop", tt.issue, in, "", read); got != tt.want {
			t.Errorf("thread %d remembered = %v, want %v", tt.issue, got, tt.want)
		}
	}
	if m.Len() != 2 {
		t.Errorf("%d threads remembered, want 2", m.Len())
	}
	m.Forget("acme", "shop", 3)
	if m.unchanged("acme", "shop", 3, in, "", read) {
		t.Error("a forgotten thread is still remembered")
	}
	var none *FoldMemo
	none.record(&thread{issue: 1}, "")
	if none.unchanged("acme", "shop", 1, in, "", read) {
		t.Error("a nil memo remembered a thread")
	}
}
