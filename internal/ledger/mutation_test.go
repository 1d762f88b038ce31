package ledger

import (
	"reflect"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/outcome"
)

// The attacks of these tests break a defence that bench/mutation (issue 18)
// found could be removed with every other test green: each case names the
// attack, and the named mutation of bench/mutation/mutations.txt it kills.

// twoApprovals is the seed outcome with a second approval, D-003, whose
// options are D-001's.
var twoApprovals = strings.Replace(seed, "  - id: D-002\n", "  - id: D-003\n    type: approval\n    question: \"Approve the glossary?\"\n"+
	"    options: [approve, request-changes, reject]\n    blocking: false\n  - id: D-002\n", 1)

// forged is a resolution comment as another workflow posting as phasegate's
// identity can write it without the key: well-formed, unsigned, naming a
// real command.
func forged(t *testing.T, id, decision, option, by, auth string, command, commentID int64, minute int) Comment {
	t.Helper()
	body, err := outcome.RenderResolution(outcome.Resolution{Outcome: id, Decision: decision, Option: option, By: by, Command: command,
		Auth: auth, Prev: 10}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return Comment{ID: commentID, Author: bot, Body: body, CreatedAt: at(minute)}
}

// resolvedOption is what the outcome at index i records for decision; "" unresolved.
func resolvedOption(st *State, i int, decision string) string {
	if len(st.Outcomes) <= i {
		return ""
	}
	if d := st.Outcomes[i].Decision(decision); d != nil && d.Resolution != nil {
		return d.Resolution.Option
	}
	return ""
}

// TestMutationKeylessRederivation: without a key any workflow of the
// repository can post as phasegate's identity, so a resolution counts only
// when the command comment it names asks for exactly what it records: that
// decision, that option (or "recommended" meaning that option), that phase.
// Each attack reuses a person's real, unedited command for something they
// did not ask.
func TestMutationKeylessRederivation(t *testing.T) {
	req, reqID := posted(t, twoApprovals, nil)
	plan, planID := posted(t, strings.Replace(twoApprovals, "phase: requirements", "phase: technical-plan", 1), nil)
	outcomes := []Comment{{ID: 10, Author: bot, Body: req, CreatedAt: at(0)}, {ID: 11, Author: bot, Body: plan, CreatedAt: at(0)}}
	tests := []struct {
		name string
		// the person's command (comment 20, by alice) and the forged
		// resolution naming it (comment 21)
		command    string
		resolution func(t *testing.T) Comment
		outcome    int // the outcome whose decision is checked: 0 requirements, 1 technical-plan
		decision   string
		wantOption string // "" when the resolution must not count
	}{
		{
			// c/decision-not-rederived
			name:    "alice's approval of D-003 recorded as an approval of D-001",
			command: "/resolve D-003 approve", outcome: 0, decision: "D-001",
			resolution: func(t *testing.T) Comment { return forged(t, reqID, "D-001", "approve", "alice", "write", 20, 21, 2) },
		},
		{
			name:    "the approval of D-003 she asked for counts",
			command: "/resolve D-003 approve", outcome: 0, decision: "D-003", wantOption: "approve",
			resolution: func(t *testing.T) Comment { return forged(t, reqID, "D-003", "approve", "alice", "write", 20, 21, 2) },
		},
		{
			// c/phase-not-rederived
			name:    "alice's approval of technical-plan:D-001 recorded on the requirements outcome",
			command: "/resolve technical-plan:D-001 approve", outcome: 0, decision: "D-001",
			resolution: func(t *testing.T) Comment { return forged(t, reqID, "D-001", "approve", "alice", "write", 20, 21, 2) },
		},
		{
			name:    "the approval of technical-plan:D-001 she asked for counts",
			command: "/resolve technical-plan:D-001 approve", outcome: 1, decision: "D-001", wantOption: "approve",
			resolution: func(t *testing.T) Comment { return forged(t, planID, "D-001", "approve", "alice", "write", 20, 21, 2) },
		},
		{
			// c/recommended-not-rederived
			name:    "alice's /resolve D-002 recommended (capture) recorded as discard",
			command: "/resolve D-002 recommended", outcome: 0, decision: "D-002",
			resolution: func(t *testing.T) Comment { return forged(t, reqID, "D-002", "discard", "alice", "write", 20, 21, 2) },
		},
		{
			name:    "recommended resolves to the recommended option",
			command: "/resolve D-002 recommended", outcome: 0, decision: "D-002", wantOption: "capture",
			resolution: func(t *testing.T) Comment { return forged(t, reqID, "D-002", "capture", "alice", "write", 20, 21, 2) },
		},
		{
			// c/option-not-rederived
			name:    "alice's reject recorded as approve",
			command: "/resolve D-001 reject", outcome: 0, decision: "D-001",
			resolution: func(t *testing.T) Comment { return forged(t, reqID, "D-001", "approve", "alice", "write", 20, 21, 2) },
		},
		{
			// c/auth-not-required
			name:    "a resolution that records no authorisation (nobody checked alice's permission)",
			command: "/resolve D-001 approve", outcome: 0, decision: "D-001",
			resolution: func(t *testing.T) Comment { return forged(t, reqID, "D-001", "approve", "alice", "", 20, 21, 2) },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := append(append([]Comment(nil), outcomes...), say(20, "alice", tc.command, 1), tc.resolution(t))
			st := Fold(cs, Options{Identity: bot})
			if got := resolvedOption(st, tc.outcome, tc.decision); got != tc.wantOption {
				t.Errorf("%s resolved %q, want %q (tampered %+v)", tc.decision, got, tc.wantOption, st.Tampered)
			}
			if want := tc.wantOption == ""; st.Frozen() != want {
				t.Errorf("frozen = %v, want %v: a resolution that cannot be re-derived is tampering (tampered %+v)", st.Frozen(), want, st.Tampered)
			}
		})
	}
}

// TestMutationUnverifiedResolutionFreezes: a comment by phasegate's identity
// that is, or claims to be, a resolution but does not verify — changed
// within the second it was posted (GitHub does not show it edited), signed
// with another key, unsigned while a key is set, or with its marker line
// broken — is tampering: it must freeze the thread, not be dropped as if it
// were never there (which would let the attacker retry until one counts, and
// hide the attempt).
func TestMutationUnverifiedResolutionFreezes(t *testing.T) {
	key := []byte("s3cret")
	tests := []struct {
		name string
		key  []byte
		body func(t *testing.T, id string) string
		// a substring of the tamper reason: what verification found
		wantReason string
	}{
		{
			// d/unverified-resolution-dropped, d/note-tamper-noop
			name: "a reject whose text was changed into approve within the second it was posted", wantReason: "not what phasegate rendered",
			body: func(t *testing.T, id string) string {
				r := resolutionPrev(t, id, "D-001", "reject", "alice", 20, 10, nil)
				if !strings.Contains(r, "→ reject**") {
					t.Fatalf("the resolution's text changed; fix the test:\n%s", r)
				}
				return strings.Replace(r, "→ reject**", "→ approve**", 1)
			},
		},
		{
			name: "signed with another key", key: key, wantReason: "signature does not verify",
			body: func(t *testing.T, id string) string {
				return resolutionPrev(t, id, "D-001", "reject", "alice", 20, 10, []byte("another key"))
			},
		},
		{
			name: "unsigned while a key is set", key: key, wantReason: "not signed",
			body: func(t *testing.T, id string) string {
				return resolutionPrev(t, id, "D-001", "reject", "alice", 20, 10, nil)
			},
		},
		{
			// d/broken-resolution-marker-dropped
			name: "its marker line broken", wantReason: "marker line",
			body: func(t *testing.T, id string) string {
				r := resolutionPrev(t, id, "D-001", "reject", "alice", 20, 10, nil)
				if !strings.Contains(r, " sig=-") {
					t.Fatalf("the resolution's marker changed; fix the test:\n%s", r)
				}
				return strings.Replace(r, " sig=-", " sig=forged", 1)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, id := posted(t, seed, tc.key)
			// alice's command is the one the resolution names: only its
			// text, signature or marker is wrong.
			cs := []Comment{{ID: 10, Author: bot, Body: body, CreatedAt: at(0)}, say(20, "alice", "/resolve D-001 reject", 1),
				{ID: 21, Author: bot, Body: tc.body(t, id), CreatedAt: at(2)}}
			st := Fold(cs, Options{Identity: bot, Key: tc.key})
			if got := resolvedOption(st, 0, "D-001"); got != "" {
				t.Errorf("D-001 resolved %q by a resolution that does not verify", got)
			}
			if !st.Frozen() || st.Tampered[0].CommentID != 21 || st.Tampered[0].Kind != outcome.KindResolution ||
				!strings.Contains(st.Tampered[0].Reason, tc.wantReason) {
				t.Errorf("tampered = %+v, want resolution comment 21, a reason with %q", st.Tampered, tc.wantReason)
			}
		})
	}
}

// TestMutationEditedReplyIsTampering: phasegate's reply to one command,
// edited to name another (command=), would silence that command: reconcile
// never answers a command a reply answers. GitHub shows the reply edited;
// that is tampering whatever it now says, and the command it names stays
// unanswered. Without a key the edited reply would otherwise verify.
func TestMutationEditedReplyIsTampering(t *testing.T) {
	for _, key := range [][]byte{nil, []byte("s3cret")} {
		t.Run(map[bool]string{true: "no key", false: "key"}[key == nil], func(t *testing.T) {
			body, _ := posted(t, seed, key)
			// The reply answered bob's /decisions (30); it now names alice's command (20).
			rp := Comment{ID: 31, Author: bot, Body: reply(t, 20, 10, key), CreatedAt: at(3), Edited: true}
			cs := []Comment{{ID: 10, Author: bot, Body: body, CreatedAt: at(0)}, say(20, "alice", "/resolve D-001 approve", 1),
				say(30, "bob", "/decisions", 2), rp}
			st := Fold(cs, Options{Identity: bot, Key: key})
			if !st.Frozen() || st.Tampered[0].CommentID != 31 || st.Tampered[0].Kind != outcome.KindReply {
				t.Errorf("tampered = %+v, want the edited reply 31", st.Tampered)
			}
			if st.Answered(20) {
				t.Error("the edited reply answers alice's command")
			}
			if st.Tip != 31 {
				t.Errorf("tip = %d, want 31: the edited reply is still phasegate's newest comment", st.Tip)
			}
		})
	}
}

// TestMutationResolverIsNotPhasegate: a resolution never records
// phasegate's own identity as the resolver, even signed with the key (a
// resolution phasegate itself would never write: decide refuses its own
// identity). The identity here is a machine user, whose login a marker's
// by= can hold; a "[bot]" login never parses as by=.
func TestMutationResolverIsNotPhasegate(t *testing.T) {
	const identity = "phasegate-machine"
	for _, key := range [][]byte{nil, []byte("s3cret")} {
		t.Run(map[bool]string{true: "no key", false: "key"}[key == nil], func(t *testing.T) {
			body, id := posted(t, seed, key)
			r, err := outcome.RenderResolution(outcome.Resolution{Outcome: id, Decision: "D-001", Option: "approve", By: identity,
				Command: 20, Auth: "admin", Prev: 10}, key)
			if err != nil {
				t.Fatal(err)
			}
			cs := []Comment{{ID: 10, Author: identity, Body: body, CreatedAt: at(0)}, say(20, identity, "/resolve D-001 approve", 1),
				{ID: 21, Author: identity, Body: r, CreatedAt: at(2)}}
			st := Fold(cs, Options{Identity: identity, Key: key})
			if got := resolvedOption(st, 0, "D-001"); got != "" {
				t.Errorf("D-001 resolved %q with phasegate as the resolver", got)
			}
			if !st.Frozen() || st.Tampered[0].CommentID != 21 {
				t.Errorf("tampered = %+v, want the resolution 21", st.Tampered)
			}
			if key != nil && !strings.Contains(st.Tampered[0].Reason, "phasegate itself") {
				t.Errorf("reason = %q, want that it records phasegate itself as the resolver", st.Tampered[0].Reason)
			}
		})
	}
}

// TestMutationSameSecond: GitHub's timestamps have one-second resolution, so
// a command and phasegate's answer, or two phasegate comments, often share
// a second. The fold orders them by id then (thread order): a resolution
// folded before the command it names, or a comment before the one its
// prev= names, would read as tampering and freeze an honest thread.
func TestMutationSameSecond(t *testing.T) {
	out, id := posted(t, seed, nil)
	cs := []Comment{
		{ID: 10, Author: bot, Body: out, CreatedAt: at(0)},
		say(20, "alice", "/resolve D-002 capture", 1),
		{ID: 21, Author: bot, Body: resolutionPrev(t, id, "D-002", "capture", "alice", 20, 10, nil), CreatedAt: at(1)},
		say(22, "bob", "/decisions", 1),
		{ID: 23, Author: bot, Body: reply(t, 22, 21, nil), CreatedAt: at(1)},
	}
	st := Fold(cs, Options{Identity: bot})
	if st.Frozen() {
		t.Fatalf("an honest thread posted within one second reads as tampered: %+v", st.Tampered)
	}
	if got := resolvedOption(st, 0, "D-002"); got != "capture" || st.Tip != 23 || len(st.Unanswered) != 0 {
		t.Errorf("D-002 = %q, tip = %d, unanswered = %+v; want capture, 23, none", got, st.Tip, st.Unanswered)
	}
}

// TestMutationLastPhaseApproved: approving the outcome of the sequence's
// last phase leaves the thread in that phase (there is none after it); the
// fold must not step past the end (a panic there would stop every later
// fold of the issue, so no command on it would ever be answered).
func TestMutationLastPhaseApproved(t *testing.T) {
	src := strings.Replace(seed, "phase: requirements", "phase: closeout", 1)
	out, id := posted(t, src, nil)
	for _, phases := range []config.Phases{{}, {Sequence: []string{"requirements", "closeout"}}} {
		cs := []Comment{{ID: 10, Author: bot, Body: out, CreatedAt: at(0)}, say(20, "alice", "/resolve D-001 approve", 1),
			{ID: 21, Author: bot, Body: resolutionPrev(t, id, "D-001", "approve", "alice", 20, 10, nil), CreatedAt: at(2)}}
		st := Fold(cs, Options{Identity: bot, Phases: phases})
		want := "deployed" // closeout is an alias of the default sequence's last phase
		if len(phases.Sequence) > 0 {
			want = "closeout"
		}
		if st.Phase != want || resolvedOption(st, 0, "D-001") != "approve" {
			t.Errorf("sequence %v: phase = %q, D-001 = %q; want %q, approve", phases.Sequence, st.Phase, resolvedOption(st, 0, "D-001"), want)
		}
	}
}

// TestMutationEachTamperingOnce: every tampered comment is reported (a
// second edit is not hidden behind the first), and each only once (a
// deleted comment that several statuses point at is one deletion).
func TestMutationEachTamperingOnce(t *testing.T) {
	out, id := posted(t, seed, nil)
	r1 := Comment{ID: 21, Author: bot, Body: resolutionPrev(t, id, "D-001", "approve", "alice", 20, 10, nil), CreatedAt: at(2), Edited: true}
	r2 := Comment{ID: 31, Author: bot, Body: resolutionPrev(t, id, "D-002", "capture", "alice", 30, 21, nil), CreatedAt: at(4), Edited: true}
	st := Fold([]Comment{{ID: 10, Author: bot, Body: out, CreatedAt: at(0)}, say(20, "alice", "/resolve D-001 approve", 1), r1,
		say(30, "alice", "/resolve D-002 capture", 3), r2}, Options{Identity: bot})
	st.Deleted(99)
	st.Deleted(99)
	var got []int64
	for _, tm := range st.Tampered {
		got = append(got, tm.CommentID)
	}
	if want := []int64{21, 31, 99}; !reflect.DeepEqual(got, want) {
		t.Errorf("tampered comments = %v, want %v (%+v)", got, want, st.Tampered)
	}
}
