package ledger

import (
	"strings"
	"testing"
)

// TestTrust: each way an attacker with write access could edit, delete or
// forge comments to move a decision, with and without a signing key. The
// outcome (comment 10) was pushed by agent-bot; alice may resolve.
func TestTrust(t *testing.T) {
	key := []byte("s3cret")
	type thread func(k []byte) []Comment
	outcomeAt := func(k []byte) (Comment, string) {
		body, id := posted(t, seed, k)
		return Comment{ID: 10, Author: bot, Body: body, CreatedAt: at(0)}, id
	}
	res := func(k []byte, id, option, by string, cmd, prev, commentID int64, minute int) Comment {
		return Comment{ID: commentID, Author: bot, Body: resolutionPrev(t, id, "D-001", option, by, cmd, prev, k), CreatedAt: at(minute)}
	}
	tests := []struct {
		name string
		keys []string // "", "key": which modes the case runs in
		thread
		wantOption   string // D-001's resolution; "" unresolved
		wantTampered string // a substring of a tamper reason; "" none
		wantFrozen   bool
	}{
		{name: "the honest thread", keys: []string{"", "key"}, thread: func(k []byte) []Comment {
			o, id := outcomeAt(k)
			return []Comment{o, say(20, "alice", "/resolve D-001 approve", 1), res(k, id, "approve", "alice", 20, 10, 21, 2)}
		}, wantOption: "approve"},
		{name: "a resolution edited after it was posted", keys: []string{"", "key"}, thread: func(k []byte) []Comment {
			o, id := outcomeAt(k)
			r := res(k, id, "approve", "alice", 20, 10, 21, 2)
			r.Edited = true
			return []Comment{o, say(20, "alice", "/resolve D-001 reject", 1), r}
		}, wantTampered: "edited", wantFrozen: true},
		{name: "an outcome edited after it was posted", keys: []string{"", "key"}, thread: func(k []byte) []Comment {
			o, _ := outcomeAt(k)
			o.Edited = true
			return []Comment{o}
		}, wantTampered: "edited", wantFrozen: true},
		{name: "a person's command edited into approve after it was resolved", keys: []string{""}, thread: func(k []byte) []Comment {
			o, id := outcomeAt(k)
			c := say(20, "alice", "/resolve D-001 approve", 1)
			c.Edited = true
			return []Comment{o, c, res(k, id, "approve", "alice", 20, 10, 21, 2)}
		}, wantTampered: "command comment it names was edited", wantFrozen: true},
		{name: "a resolution naming a command that asks for another option", keys: []string{""}, thread: func(k []byte) []Comment {
			o, id := outcomeAt(k)
			return []Comment{o, say(20, "alice", "/resolve D-001 reject", 1), res(k, id, "approve", "alice", 20, 10, 21, 2)}
		}, wantTampered: "does not ask for this option", wantFrozen: true},
		{name: "a resolution naming someone else's command", keys: []string{""}, thread: func(k []byte) []Comment {
			o, id := outcomeAt(k)
			return []Comment{o, say(20, "mallory", "/resolve D-001 approve", 1), res(k, id, "approve", "alice", 20, 10, 21, 2)}
		}, wantTampered: "written by someone else", wantFrozen: true},
		{name: "the command of a resolution deleted", keys: []string{""}, thread: func(k []byte) []Comment {
			o, id := outcomeAt(k)
			return []Comment{o, res(k, id, "reject", "alice", 20, 10, 21, 2)}
		}, wantTampered: "not on the thread", wantFrozen: true},
		{name: "a final reject deleted, a later reply still names it", keys: []string{"", "key"}, thread: func(k []byte) []Comment {
			o, _ := outcomeAt(k)
			// 21 (the reject) is gone; 23 answered a later command and
			// follows it.
			rp := Comment{ID: 23, Author: bot, Body: reply(t, 22, 21, k), CreatedAt: at(4)}
			return []Comment{o, say(22, "bob", "/decisions", 3), rp}
		}, wantTampered: "follows was deleted", wantFrozen: true},
		{name: "the resolver pushed the outcome", keys: []string{"", "key"}, thread: func(k []byte) []Comment {
			o, id := outcomeAt(k)
			return []Comment{o, say(20, "agent-bot", "/resolve D-001 approve", 1), res(k, id, "approve", "agent-bot", 20, 10, 21, 2)}
		}, wantTampered: "pushed or authored", wantFrozen: true},
		{name: "a command written before the outcome was posted", keys: []string{"", "key"}, thread: func(k []byte) []Comment {
			o, id := outcomeAt(k)
			return []Comment{say(5, "alice", "/resolve D-001 approve", -1), o, res(k, id, "approve", "alice", 5, 10, 21, 2)}
		}, wantTampered: "before the outcome was posted", wantFrozen: true},
		{name: "two runs raced: the earlier command wins whichever posted first", keys: []string{"", "key"}, thread: func(k []byte) []Comment {
			o, id := outcomeAt(k)
			return []Comment{o, say(20, "alice", "/resolve D-001 approve", 1), say(30, "erin", "/resolve D-001 reject", 1),
				res(k, id, "reject", "erin", 30, 10, 31, 2), res(k, id, "approve", "alice", 20, 10, 32, 3)}
		}, wantOption: "approve"},
		{name: "an unsigned reply does not silence a command when a key is set", keys: []string{"key"}, thread: func(k []byte) []Comment {
			o, _ := outcomeAt(k)
			return []Comment{o, say(20, "alice", "/resolve D-001 approve", 1), {ID: 21, Author: bot, Body: reply(t, 20, 10, nil), CreatedAt: at(2)}}
		}},
		{name: "without a key, a reply by another workflow answers (documented residual risk)", keys: []string{""}, thread: func(k []byte) []Comment {
			o, _ := outcomeAt(k)
			return []Comment{o, say(20, "alice", "/resolve D-001 approve", 1), {ID: 21, Author: bot, Body: reply(t, 20, 10, nil), CreatedAt: at(2)}}
		}},
	}
	for _, tc := range tests {
		for _, mode := range tc.keys {
			var k []byte
			if mode == "key" {
				k = key
			}
			t.Run(tc.name+"/"+map[string]string{"": "no key", "key": "key"}[mode], func(t *testing.T) {
				st := Fold(tc.thread(k), Options{Identity: bot, Key: k})
				got := ""
				if len(st.Outcomes) > 0 {
					if d := st.Outcomes[0].Decision("D-001"); d.Resolution != nil {
						got = d.Resolution.Option
					}
				}
				if got != tc.wantOption {
					t.Errorf("D-001 resolved %q, want %q", got, tc.wantOption)
				}
				if st.Frozen() != tc.wantFrozen {
					t.Errorf("frozen = %v, want %v (tampered %+v)", st.Frozen(), tc.wantFrozen, st.Tampered)
				}
				if tc.wantTampered != "" {
					found := false
					for _, tm := range st.Tampered {
						found = found || strings.Contains(tm.Reason, tc.wantTampered)
					}
					if !found {
						t.Errorf("tampered = %+v, want a reason with %q", st.Tampered, tc.wantTampered)
					}
				}
			})
		}
	}
}

// TestSuperseded: a resolution that lost the race is reported until
// phasegate replies to its command, then no more.
func TestSuperseded(t *testing.T) {
	body, id := posted(t, seed, nil)
	cs := []Comment{{ID: 10, Author: bot, Body: body, CreatedAt: at(0)},
		say(20, "alice", "/resolve D-001 approve", 1), say(30, "erin", "/resolve D-001 reject", 1),
		{ID: 31, Author: bot, Body: resolutionPrev(t, id, "D-001", "reject", "erin", 30, 10, nil), CreatedAt: at(2)},
		{ID: 32, Author: bot, Body: resolutionPrev(t, id, "D-001", "approve", "alice", 20, 31, nil), CreatedAt: at(3)}}
	st := Fold(cs, Options{Identity: bot})
	if len(st.Superseded) != 1 || st.Superseded[0].Command != 30 || st.Superseded[0].Winner.Resolution.By != "alice" {
		t.Fatalf("superseded = %+v, want erin's command 30 beaten by alice", st.Superseded)
	}
	if len(st.Unanswered) != 0 {
		t.Errorf("unanswered = %+v", st.Unanswered)
	}
	cs = append(cs, Comment{ID: 33, Author: bot, Body: reply(t, 30, 32, nil), CreatedAt: at(4)})
	if st := Fold(cs, Options{Identity: bot}); len(st.Superseded) != 0 || st.Frozen() {
		t.Errorf("after the reply: superseded %+v, tampered %+v", st.Superseded, st.Tampered)
	}
}

// TestForgedOutcomeWithoutKey: without a key, an outcome comment counts
// only when the file it names holds it at the commit it names.
func TestForgedOutcomeWithoutKey(t *testing.T) {
	body, id := posted(t, seed, nil)
	cs := []Comment{{ID: 10, Author: bot, Body: body, CreatedAt: at(0)}}
	tests := []struct {
		name       string
		source     func(string, string) (string, bool)
		wantCounts bool
	}{
		{name: "the file holds it", source: func(string, string) (string, bool) { return id, true }, wantCounts: true},
		{name: "the file holds another outcome", source: func(string, string) (string, bool) { return strings.Repeat("b", 64), true }},
		{name: "no such file at that commit", source: func(string, string) (string, bool) { return "", false }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := Fold(cs, Options{Identity: bot, SourceID: tc.source})
			if got := len(st.Outcomes) == 1; got != tc.wantCounts {
				t.Errorf("counts = %v, want %v", got, tc.wantCounts)
			}
			if st.Frozen() == tc.wantCounts {
				t.Errorf("frozen = %v", st.Frozen())
			}
		})
	}
}
