package ledger

import (
	"bytes"
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/testutil/outcometest"
)

const bot = "github-actions[bot]"

// seed is the seed outcome (feature-042).
const seed = outcometest.Seed

// posted renders an outcome comment from YAML source, pushed by agent-bot.
func posted(t testing.TB, src string, key []byte) (body, id string) {
	t.Helper()
	return outcometest.Render(t, src, outcome.Meta{Source: "outcomes/o.outcome.yaml", Commit: "0123456789abcdef0123456789abcdef01234567", PR: 7, Key: key,
		Actors: []string{"agent-bot"}})
}

func resolution(t testing.TB, id, decision, option, by string, command int64, key []byte) string {
	t.Helper()
	return resolutionPrev(t, id, decision, option, by, command, 0, key)
}

func resolutionPrev(t testing.TB, id, decision, option, by string, command, prev int64, key []byte) string {
	t.Helper()
	body, err := outcome.RenderResolution(outcome.Resolution{Outcome: id, Decision: decision, Option: option, By: by, Command: command,
		Auth: "write", Prev: prev}, key)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func reply(t testing.TB, command, prev int64, key []byte) string {
	t.Helper()
	body, err := outcome.RenderReply("@alice no.", outcome.Reply{Command: command, Prev: prev}, key)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// say is a person's comment.
func say(id int64, by, body string, minute int) Comment {
	return Comment{ID: id, Author: by, Body: body, CreatedAt: at(minute)}
}

var t0 = time.Date(2026, 3, 13, 5, 0, 0, 0, time.UTC)

func at(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }

func TestFold(t *testing.T) {
	key := []byte("s3cret")
	out, id := posted(t, seed, nil)
	signedOut, signedID := posted(t, seed, key)
	approve := resolution(t, id, "D-001", "approve", "alice", 101, nil)
	reject := resolution(t, id, "D-001", "reject", "bob", 102, nil)
	capture := resolution(t, id, "D-002", "capture", "alice", 103, nil)
	bogusOption := resolution(t, id, "D-002", "maybe", "alice", 104, nil)
	unknownOutcome := resolution(t, strings.Repeat("a", 64), "D-001", "approve", "alice", 105, nil)
	tampered := strings.Replace(out, "Approve PREQ", "Approve NOW", 1)
	// The people's commands the resolutions name (written after the outcome).
	cmds := []Comment{
		say(101, "alice", "/resolve D-001 approve", 1), say(102, "bob", "/resolve D-001 reject", 1),
		say(103, "alice", "/resolve D-002 capture", 1), say(104, "alice", "/resolve D-002 maybe", 1),
		say(105, "alice", "/resolve D-001 approve", 1),
	}
	with := func(cs ...Comment) []Comment { return append(append([]Comment(nil), cmds...), cs...) }

	tests := []struct {
		name         string
		comments     []Comment
		key          []byte
		wantOutcomes int
		wantResolved map[string]string // decision → option
		wantTampered int
		wantIgnored  int
	}{
		{name: "an outcome", comments: []Comment{{ID: 1, Author: bot, Body: out, CreatedAt: at(1)}},
			wantOutcomes: 1, wantResolved: map[string]string{}},
		{name: "posted twice counts once", comments: []Comment{
			{ID: 1, Author: bot, Body: out, CreatedAt: at(1)}, {ID: 2, Author: bot, Body: out, CreatedAt: at(2)}},
			wantOutcomes: 1, wantResolved: map[string]string{}},
		{name: "forged by someone else", comments: []Comment{{ID: 1, Author: "mallory", Body: out, CreatedAt: at(1)}},
			wantOutcomes: 0, wantResolved: map[string]string{}},
		{name: "edited outcome is tampering", comments: []Comment{{ID: 1, Author: bot, Body: tampered, CreatedAt: at(1)}},
			wantOutcomes: 0, wantTampered: 1, wantResolved: map[string]string{}},
		{name: "first command wins", comments: with(
			Comment{ID: 1, Author: bot, Body: out, CreatedAt: at(0)},
			Comment{ID: 200, Author: bot, Body: approve, CreatedAt: at(2)},
			Comment{ID: 201, Author: bot, Body: reject, CreatedAt: at(3)},
			Comment{ID: 202, Author: bot, Body: capture, CreatedAt: at(4)}),
			wantOutcomes: 1, wantResolved: map[string]string{"D-001": "approve", "D-002": "capture"}, wantIgnored: 1},
		{name: "the earlier command wins even when its resolution was posted later (two runs raced)", comments: with(
			Comment{ID: 1, Author: bot, Body: out, CreatedAt: at(0)},
			Comment{ID: 200, Author: bot, Body: reject, CreatedAt: at(2)},
			Comment{ID: 201, Author: bot, Body: approve, CreatedAt: at(3)}),
			wantOutcomes: 1, wantResolved: map[string]string{"D-001": "approve"}, wantIgnored: 1},
		{name: "resolution before its outcome does not count", comments: with(
			Comment{ID: 200, Author: bot, Body: approve, CreatedAt: at(1)}, Comment{ID: 300, Author: bot, Body: out, CreatedAt: at(2)}),
			wantOutcomes: 1, wantResolved: map[string]string{}, wantIgnored: 1},
		{name: "invalid resolutions are ignored", comments: with(
			Comment{ID: 1, Author: bot, Body: out, CreatedAt: at(0)},
			Comment{ID: 200, Author: bot, Body: bogusOption, CreatedAt: at(2)},
			Comment{ID: 201, Author: bot, Body: unknownOutcome, CreatedAt: at(3)},
			Comment{ID: 202, Author: "mallory", Body: approve, CreatedAt: at(4)}),
			wantOutcomes: 1, wantResolved: map[string]string{}, wantIgnored: 2},
		{name: "with a key, an unsigned comment is tampering", key: key, comments: []Comment{{ID: 1, Author: bot, Body: out, CreatedAt: at(1)}},
			wantOutcomes: 0, wantTampered: 1, wantResolved: map[string]string{}},
		{name: "with a key, a signed comment counts", key: key, comments: []Comment{
			{ID: 1, Author: bot, Body: signedOut, CreatedAt: at(1)},
			{ID: 20, Author: bot, Body: resolution(t, signedID, "D-001", "approve", "alice", 9, key), CreatedAt: at(2)}},
			wantOutcomes: 1, wantResolved: map[string]string{"D-001": "approve"}},
		{name: "identity is case-insensitive", comments: []Comment{{ID: 1, Author: "GitHub-Actions[bot]", Body: out, CreatedAt: at(1)}},
			wantOutcomes: 1, wantResolved: map[string]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := Fold(tc.comments, Options{Identity: bot, Key: tc.key})
			if len(st.Outcomes) != tc.wantOutcomes {
				t.Fatalf("outcomes = %d, want %d", len(st.Outcomes), tc.wantOutcomes)
			}
			got := map[string]string{}
			for _, o := range st.Outcomes {
				for _, d := range o.Decisions {
					if d.Resolution != nil {
						got[d.ID] = d.Resolution.Option
					}
				}
			}
			if !reflect.DeepEqual(got, tc.wantResolved) {
				t.Errorf("resolved = %v, want %v", got, tc.wantResolved)
			}
			if len(st.Tampered) != tc.wantTampered {
				t.Errorf("tampered = %v, want %d", st.Tampered, tc.wantTampered)
			}
			if len(st.Ignored) != tc.wantIgnored {
				t.Errorf("ignored = %v, want %d", st.Ignored, tc.wantIgnored)
			}
		})
	}
}

func TestDecisions(t *testing.T) {
	key := []byte("k")
	out, id := posted(t, seed, key)
	fold := func(extra ...string) []*Outcome {
		cs := []Comment{{ID: 1, Author: bot, Body: out, CreatedAt: at(0)}}
		for i, b := range extra {
			cs = append(cs, Comment{ID: int64(i + 20), Author: bot, Body: b, CreatedAt: at(i + 1)})
		}
		return Fold(cs, Options{Identity: bot, Key: key}).Outcomes
	}
	tests := []struct {
		name      string
		outcomes  []*Outcome
		wantState string
	}{
		{name: "no outcomes", wantState: "success"},
		{name: "blocking decision unresolved", outcomes: fold(), wantState: "pending"},
		{name: "only the non-blocking one resolved", outcomes: fold(resolution(t, id, "D-002", "capture", "a", 2, key)), wantState: "pending"},
		{name: "approved", outcomes: fold(resolution(t, id, "D-001", "approve", "a", 2, key)), wantState: "success"},
		{name: "rejected", outcomes: fold(resolution(t, id, "D-001", "reject", "a", 2, key)), wantState: "failure"},
		{name: "changes requested", outcomes: fold(resolution(t, id, "D-001", "request-changes", "a", 2, key)), wantState: "failure"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decisions(tc.outcomes, nil); got.State != tc.wantState {
				t.Errorf("Decisions = %+v, want %s", got, tc.wantState)
			}
		})
	}
}

// TestFoldProperties: for random threads, folding a prefix and then the rest
// equals folding everything; the order comments are listed in does not
// matter; and a comment listed twice counts once.
func TestFoldProperties(t *testing.T) {
	out, id := posted(t, seed, nil)
	other, otherID := posted(t, strings.Replace(seed, "feature-042", "feature-043", 1), nil)
	pool := []struct{ author, body string }{
		{bot, out}, {bot, other}, {"mallory", out},
		{bot, strings.Replace(out, "PREQ", "XXXX", 1)},
		{bot, resolution(t, id, "D-001", "approve", "alice", 1, nil)},
		{bot, resolution(t, id, "D-001", "reject", "bob", 2, nil)},
		{bot, resolution(t, id, "D-002", "discard", "alice", 3, nil)},
		{bot, resolution(t, otherID, "D-001", "request-changes", "carol", 4, nil)},
		{bot, resolution(t, id, "D-009", "approve", "alice", 5, nil)},
		{"alice", "/resolve D-001 approve"},
		{"bob", "/resolve D-001 reject"},
		{bot, "phasegate could not resolve D-001: not authorised"},
		{bot, reply(t, 3, 0, nil)},
		{bot, resolutionPrev(t, id, "D-001", "approve", "alice", 4, 2, nil)},
	}
	rng := rand.New(rand.NewSource(42))
	for trial := 0; trial < 300; trial++ {
		n := 1 + rng.Intn(12)
		cs := make([]Comment, n)
		for i := range cs {
			p := pool[rng.Intn(len(pool))]
			cs[i] = Comment{ID: int64(i + 1), Author: p.author, Body: p.body, CreatedAt: at(i)}
		}
		all := Fold(cs, Options{Identity: bot})

		cut := rng.Intn(n + 1)
		l := New(Options{Identity: bot})
		for _, c := range cs[:cut] {
			l.Add(c)
		}
		for _, c := range cs[cut:] {
			l.Add(c)
		}
		if !sameState(all, l.State()) {
			t.Fatalf("trial %d: prefix %d then rest differs from folding all", trial, cut)
		}
		shuffled := append([]Comment(nil), cs...)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		shuffled = append(shuffled, shuffled[rng.Intn(len(shuffled))]) // a duplicate listing
		if !sameState(all, Fold(shuffled, Options{Identity: bot})) {
			t.Fatalf("trial %d: listing order or a duplicate changed the state", trial)
		}
	}
}

func sameState(a, b *State) bool {
	return bytes.Equal([]byte(dump(a)), []byte(dump(b)))
}

func dump(st *State) string {
	var b strings.Builder
	for _, o := range st.Outcomes {
		b.WriteString("O " + o.ID + "\n")
		for _, d := range o.Decisions {
			b.WriteString("  " + d.ID)
			if d.Resolution != nil {
				b.WriteString(" → " + d.Resolution.Option + " by " + d.Resolution.By)
			}
			b.WriteString("\n")
		}
	}
	for _, tm := range st.Tampered {
		b.WriteString("T " + string(tm.Kind) + " " + tm.Reason + "\n")
	}
	for _, u := range st.Unanswered {
		b.WriteString("U " + strconv.FormatInt(u.ID, 10) + "\n")
	}
	for _, s := range st.Superseded {
		b.WriteString("S " + strconv.FormatInt(s.Command, 10) + "\n")
	}
	b.WriteString("P " + st.Phase + " " + strconv.FormatInt(st.Tip, 10) + "\n")
	for _, ig := range st.Ignored {
		b.WriteString("I " + ig.Reason + "\n")
	}
	return b.String()
}

func TestUnansweredAndPhase(t *testing.T) {
	out, id := posted(t, seed, nil)
	cmd := Comment{ID: 50, Author: "alice", Body: "ok\n/resolve D-001 approve", CreatedAt: at(5)}
	chatter := Comment{ID: 51, Author: "bob", Body: "no commands here, just /lgtm", CreatedAt: at(6)}
	tests := []struct {
		name           string
		comments       []Comment
		wantUnanswered []int64
		wantPhase      string
		wantPending    bool
	}{
		{name: "outcome only", comments: []Comment{{ID: 1, Author: bot, Body: out, CreatedAt: at(1)}}, wantPhase: "requirements", wantPending: true},
		{name: "a command without an answer", comments: []Comment{{ID: 1, Author: bot, Body: out, CreatedAt: at(1)}, cmd, chatter},
			wantUnanswered: []int64{50}, wantPhase: "requirements", wantPending: true},
		{name: "answered by a resolution", comments: []Comment{{ID: 1, Author: bot, Body: out, CreatedAt: at(1)}, cmd,
			{ID: 52, Author: bot, Body: resolution(t, id, "D-001", "approve", "alice", 50, nil), CreatedAt: at(7)}},
			wantPhase: "planning", wantPending: false},
		{name: "answered by a reply", comments: []Comment{{ID: 1, Author: bot, Body: out, CreatedAt: at(1)}, cmd,
			{ID: 52, Author: bot, Body: reply(t, 50, 1, nil), CreatedAt: at(7)}},
			wantPhase: "requirements", wantPending: true},
		{name: "a reply marker by someone else answers nothing", comments: []Comment{{ID: 1, Author: bot, Body: out, CreatedAt: at(1)}, cmd,
			{ID: 52, Author: "mallory", Body: reply(t, 50, 1, nil), CreatedAt: at(7)}},
			wantUnanswered: []int64{50}, wantPhase: "requirements", wantPending: true},
		{name: "rejected stays in its phase", comments: []Comment{{ID: 1, Author: bot, Body: out, CreatedAt: at(1)},
			say(9, "alice", "/resolve D-001 reject", 2),
			{ID: 52, Author: bot, Body: resolution(t, id, "D-001", "reject", "alice", 9, nil), CreatedAt: at(7)}},
			wantPhase: "requirements", wantPending: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := Fold(tc.comments, Options{Identity: bot})
			var got []int64
			for _, u := range st.Unanswered {
				got = append(got, u.ID)
			}
			if !reflect.DeepEqual(got, tc.wantUnanswered) {
				t.Errorf("unanswered = %v, want %v", got, tc.wantUnanswered)
			}
			if st.Phase != tc.wantPhase {
				t.Errorf("phase = %q, want %q", st.Phase, tc.wantPhase)
			}
			if st.Pending() != tc.wantPending {
				t.Errorf("pending = %v, want %v", st.Pending(), tc.wantPending)
			}
		})
	}
}
