package ledger

import (
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/outcome"
)

// TestReconfirmation: a resolution records the head it was given on; one
// given on another head for a later command is a re-confirmation after a
// push (decide posts one only when the push made the first stale) and takes
// effect, the ledger keeping both; within one head the earliest command
// wins; nothing counts after a negative resolution.
func TestReconfirmation(t *testing.T) {
	const h1, h2 = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	for _, mode := range []string{"", "key"} {
		var k []byte
		if mode == "key" {
			k = []byte("s3cret")
		}
		body, id := posted(t, seed, k)
		o := Comment{ID: 10, Author: bot, Body: body, CreatedAt: at(0)}
		res := func(option, by, head string, cmd, prev, commentID int64, minute int) Comment {
			b, err := outcome.RenderResolution(outcome.Resolution{Outcome: id, Decision: "D-001", Option: option, By: by, Command: cmd,
				Auth: "write", Head: head, Prev: prev}, k)
			if err != nil {
				t.Fatal(err)
			}
			return Comment{ID: commentID, Author: bot, Body: b, CreatedAt: at(minute)}
		}
		tests := []struct {
			name     string
			thread   []Comment
			want     string // "option by head" in effect
			history  int
			ignored  string // a substring of an Ignored reason; "" none
			lostCmds []int64
		}{
			{name: "one resolution", thread: []Comment{o, say(20, "alice", "/resolve D-001 approve", 1), res("approve", "alice", h1, 20, 10, 21, 2)},
				want: "approve alice " + h1, history: 1},
			{name: "re-confirmed on a new head", thread: []Comment{o, say(20, "alice", "/resolve D-001 approve", 1), res("approve", "alice", h1, 20, 10, 21, 2),
				say(30, "erin", "/resolve D-001 approve", 3), res("approve", "erin", h2, 30, 21, 31, 4)},
				want: "approve erin " + h2, history: 2},
			{name: "re-decided negatively on a new head", thread: []Comment{o, say(20, "alice", "/resolve D-001 approve", 1), res("approve", "alice", h1, 20, 10, 21, 2),
				say(30, "erin", "/resolve D-001 reject", 3), res("reject", "erin", h2, 30, 21, 31, 4)},
				want: "reject erin " + h2, history: 2},
			{name: "a reject stays final on a new head", thread: []Comment{o, say(20, "alice", "/resolve D-001 reject", 1), res("reject", "alice", h1, 20, 10, 21, 2),
				say(30, "erin", "/resolve D-001 approve", 3), res("approve", "erin", h2, 30, 21, 31, 4)},
				want: "reject alice " + h1, history: 1, ignored: "negatively, which is final", lostCmds: []int64{30}},
			{name: "a second resolution on the same head loses", thread: []Comment{o, say(20, "alice", "/resolve D-001 approve", 1), res("approve", "alice", h1, 20, 10, 21, 2),
				say(30, "erin", "/resolve D-001 reject", 3), res("reject", "erin", h1, 30, 21, 31, 4)},
				want: "approve alice " + h1, history: 1, ignored: "already resolved", lostCmds: []int64{30}},
			{name: "a resolution on a new head for an earlier command loses", thread: []Comment{o, say(20, "alice", "/resolve D-001 approve", 1),
				say(30, "erin", "/resolve D-001 approve", 3), res("approve", "erin", h1, 30, 10, 31, 4), res("approve", "alice", h2, 20, 31, 32, 5)},
				want: "approve erin " + h1, history: 1, ignored: "already resolved", lostCmds: []int64{20}},
		}
		for _, tc := range tests {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				st := Fold(tc.thread, Options{Identity: bot, Key: k})
				if st.Frozen() {
					t.Fatalf("frozen: %+v", st.Tampered)
				}
				d := st.Outcome(id).Decision("D-001")
				got := ""
				if d.Resolution != nil {
					got = d.Resolution.Option + " " + d.Resolution.By + " " + d.Resolution.Head
				}
				if got != tc.want || len(d.History) != tc.history {
					t.Errorf("in effect %q with %d in the history, want %q with %d", got, len(d.History), tc.want, tc.history)
				}
				if d.Resolution != nil && d.ResolutionComment != d.History[len(d.History)-1].Comment {
					t.Errorf("the resolution in effect (%d) is not the newest of the history", d.ResolutionComment)
				}
				found := tc.ignored == ""
				for _, ig := range st.Ignored {
					found = found || strings.Contains(ig.Reason, tc.ignored)
				}
				if !found {
					t.Errorf("ignored %+v, want one saying %q", st.Ignored, tc.ignored)
				}
				var lost []int64
				for _, s := range st.Superseded {
					lost = append(lost, s.Command)
				}
				if len(lost) != len(tc.lostCmds) || (len(lost) > 0 && lost[0] != tc.lostCmds[0]) {
					t.Errorf("superseded commands %v, want %v", lost, tc.lostCmds)
				}
			})
		}
	}
}
