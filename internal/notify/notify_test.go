package notify

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/testutil"
	"github.com/phasegate/phasegate/internal/testutil/outcometest"
)

const (
	identity = "github-actions[bot]"
	commit   = "0123456789abcdef0123456789abcdef01234567"
)

// thread is the seed outcome on acme/shop#42, then the given resolutions
// (decision → option, by alice, as comments 2001, 2002, …), folded.
type thread struct {
	comments []ledger.Comment
	outcome  string
}

func newThread(t *testing.T) *thread {
	t.Helper()
	body, id := outcometest.Render(t, outcometest.Seed, outcome.Meta{Source: "outcomes/feature-042-requirements.outcome.yaml", Commit: commit, PR: 100, Actors: []string{"agent-bot"}})
	at := time.Date(2026, 3, 13, 5, 0, 0, 0, time.UTC)
	return &thread{outcome: id, comments: []ledger.Comment{{ID: 1001, Author: identity, Body: body, CreatedAt: at}}}
}

func (th *thread) resolve(t *testing.T, decision, option string) {
	t.Helper()
	n := int64(len(th.comments))
	cmd := ledger.Comment{ID: 1001 + n, Author: "alice", Body: "/resolve " + decision + " " + option, CreatedAt: th.comments[0].CreatedAt.Add(time.Duration(n) * time.Minute)}
	body, err := outcome.RenderResolution(outcome.Resolution{Outcome: th.outcome, Decision: decision, Option: option, By: "alice", Command: cmd.ID, Auth: "write"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := ledger.Comment{ID: 2001 + n, Author: identity, Body: body, CreatedAt: cmd.CreatedAt.Add(time.Second)}
	th.comments = append(th.comments, cmd, res)
}

func (th *thread) source(t *testing.T, decision string) Source {
	t.Helper()
	st := ledger.Fold(th.comments, ledger.Options{Identity: identity})
	o := st.Outcome(th.outcome)
	if o == nil {
		t.Fatal("the seed outcome does not count")
	}
	d := o.Decision(decision)
	if d == nil || d.Resolution == nil {
		t.Fatalf("%s is not resolved", decision)
	}
	return Source{Repository: "acme/shop", Issue: 42, IssueURL: "https://github.com/acme/shop/issues/42", State: st, Outcome: o, Decision: d,
		CommentURL: "https://github.com/acme/shop/issues/42#issuecomment-" + strconv.FormatInt(d.ResolutionComment, 10)}
}

func TestEventGolden(t *testing.T) {
	tests := []struct {
		name    string
		resolve [][2]string
		event   func(Source) (Event, error)
		of      string
		golden  string
	}{
		{
			name:    "resolved, a blocking decision still open",
			resolve: [][2]string{{"D-002", "capture"}},
			event:   Resolved, of: "D-002", golden: "resolved.json",
		},
		{
			name:    "phase advanced by the approval",
			resolve: [][2]string{{"D-002", "capture"}, {"D-001", "approve"}},
			event:   func(s Source) (Event, error) { return PhaseAdvanced(s, "requirements") },
			of:      "D-001", golden: "phase-advanced.json",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			th := newThread(t)
			for _, r := range tc.resolve {
				th.resolve(t, r[0], r[1])
			}
			ev, err := tc.event(th.source(t, tc.of))
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.MarshalIndent(ev, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			testutil.Golden(t, filepath.Join("testdata", tc.golden), append(b, '\n'))

			// GitHub allows client_payload at most 10 top-level keys.
			var top map[string]json.RawMessage
			if err := json.Unmarshal(b, &top); err != nil {
				t.Fatal(err)
			}
			if len(top) > 10 {
				t.Errorf("%d top-level keys, github allows 10", len(top))
			}
		})
	}
}

func TestEventFields(t *testing.T) {
	tests := []struct {
		name         string
		option       string
		negative     []string
		wantNegative bool
		wantPhase    string
		wantPending  bool
		wantOpen     int
	}{
		{name: "approve", option: "approve", wantPhase: "planning"},
		{name: "reject is negative by default", option: "reject", wantNegative: true, wantPhase: "requirements"},
		{name: "request-changes is negative by default", option: "request-changes", wantNegative: true, wantPhase: "requirements"},
		{name: "configured negative options", option: "request-changes", negative: []string{"reject"}, wantPhase: "requirements"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			th := newThread(t)
			th.resolve(t, "D-001", tc.option)
			src := th.source(t, "D-001")
			src.Negative = tc.negative
			ev, err := Resolved(src)
			if err != nil {
				t.Fatal(err)
			}
			if ev.Event != TypeResolved || ev.Decision.Option != tc.option || ev.Decision.Negative != tc.wantNegative ||
				ev.State.Phase != tc.wantPhase || ev.State.Pending != tc.wantPending || len(ev.State.BlockingOpen) != tc.wantOpen {
				t.Errorf("event %+v", ev)
			}
			if ev.State.BlockingOpen == nil {
				t.Error("blocking_open is null, want []")
			}
		})
	}
}

// The id is the same for every send of one event and differs between
// events: receivers drop duplicates by it.
func TestEventID(t *testing.T) {
	th := newThread(t)
	th.resolve(t, "D-001", "approve")
	src := th.source(t, "D-001")
	a, _ := Resolved(src)
	b, _ := Resolved(th.source(t, "D-001"))
	c, _ := PhaseAdvanced(src, "requirements")
	if a.ID != b.ID {
		t.Errorf("ids differ between two builds of one event: %q, %q", a.ID, b.ID)
	}
	if a.ID == c.ID {
		t.Errorf("resolved and phase-advanced share id %q", a.ID)
	}
	if EventID(TypeResolved, "Acme/Shop", 42, 7) != EventID(TypeResolved, "acme/shop", 42, 7) || EventID(TypeResolved, "acme/shop", 42, 7) == EventID(TypeResolved, "acme/shop", 42, 8) {
		t.Error("EventID is not case-insensitive in the repository or not unique per resolution")
	}
}

func TestBuildRefuses(t *testing.T) {
	th := newThread(t)
	st := ledger.Fold(th.comments, ledger.Options{Identity: identity})
	o := st.Outcome(th.outcome)
	th.resolve(t, "D-001", "approve")
	resolved := th.source(t, "D-001")
	tests := []struct {
		name string
		src  Source
		prev string
		fn   string
		want string
	}{
		{name: "no state", src: Source{Repository: "acme/shop", Issue: 42}, fn: "resolved", want: "no state"},
		{name: "unresolved decision", src: Source{Repository: "acme/shop", Issue: 42, State: st, Outcome: o, Decision: o.Decision("D-001")}, fn: "resolved", want: "not resolved"},
		{name: "phase did not change", src: resolved, prev: "planning", fn: "advanced", want: "did not change"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.fn == "resolved" {
				_, err = Resolved(tc.src)
			} else {
				_, err = PhaseAdvanced(tc.src, tc.prev)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func TestSign(t *testing.T) {
	secret := []byte("It's a Secret to Everybody")
	body := []byte("Hello, World!")
	// GitHub's documented example of X-Hub-Signature-256, same algorithm.
	const want = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	if got := Sign(secret, body); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
}
