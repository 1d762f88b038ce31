package action

import (
	"strings"
	"testing"
)

// bidiOutcome is the seed outcome with a second approval, D-100: the
// decision the attack below would resolve while a reader sees D-001.
var bidiOutcome = seedOutcome + `  - id: D-100
    type: approval
    question: "Approve the data migration plan?"
    options: [approve, request-changes, reject]
    blocking: true
`

// resolutionOf is decision id's resolution as the untampered ledger reads
// it ("" when unresolved).
func (rt *redTeam) resolutionOf(id string) string {
	for _, o := range rt.state().Outcomes {
		if d := o.Decision(id); d != nil && d.Resolution != nil {
			return d.Resolution.Option + " by " + d.Resolution.By
		}
	}
	return ""
}

// TestRedTeamBidiCommand (issue 18, attack 6: commands are what they look
// like): alice, who may resolve, comments `/resolve D-` U+202E `100`
// U+202C ` approve`. GitHub shows it as `/resolve D-001 approve`; read with
// the override dropped it named D-100. No decision is resolved, the reply
// says the command holds an invisible or bidirectional control character
// and names it, and the command gets 😕. The same holds for the override
// written as a character reference, which GitHub renders as the character.
//
// The attacks go one after the other on one thread per mode (one pull
// request run per mode, not per attack): each refused command is answered,
// so the next meets the thread as a fresh one would, with nothing resolved
// and nothing unanswered; then the same command typed plainly resolves the
// decision shown.
func TestRedTeamBidiCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
	}{
		{name: "override", body: "/resolve D-\u202e100\u202c approve"},
		{name: "override as a character reference", body: "/resolve D-&#x202E;100&#x202C; approve"},
		{name: "override in the rationale", body: "/resolve D-100 approve \u202eshipped"},
	}
	for _, key := range []string{"", rtKey} {
		mode := "no key"
		if key != "" {
			mode = "signing key"
		}
		t.Run(mode, func(t *testing.T) {
			t.Parallel() // each mode has its own fake GitHub and repository
			rt := newRedTeam(t, key)
			rt.open(map[string]string{rtSource: bidiOutcome})
			if os := rt.state().Outcomes; len(os) != 1 || os[0].Decision("D-100") == nil {
				t.Fatalf("the outcome with D-100 was not posted:\n%s", rt.lastBody())
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					rt, f := *rt, *rt.repoFixture
					rt.t, f.t, rt.repoFixture = t, t, &f
					id := rt.say("alice", tc.body)
					rt.want(rt.resolutionOf("D-001") == "" && rt.resolutionOf("D-100") == "",
						"the command resolved D-001 %q, D-100 %q", rt.resolutionOf("D-001"), rt.resolutionOf("D-100"))
					reply := rt.lastBody()
					rt.want(strings.Contains(reply, "phasegate:reply") &&
						strings.Contains(reply, "invisible or bidirectional control character, U+202E") &&
						strings.Contains(reply, "retype the command without it"),
						"the reply does not name the control character:\n%s", reply)
					confused := false
					for _, r := range rt.fake.Reactions(id) {
						confused = confused || r.Content == "confused"
						rt.want(r.Content != "+1", "the command got %s", r.Content)
					}
					rt.want(confused, "the command has no confused reaction: %+v", rt.fake.Reactions(id))
					rt.want(rt.decisions().State == "pending", "phasegate/decisions = %+v, want pending", rt.decisions())
				})
			}
			// The same command typed plainly resolves the decision shown.
			rt.say("alice", "/resolve D-001 approve")
			rt.want(strings.HasPrefix(rt.resolutionOf("D-001"), "approve by alice") && rt.resolutionOf("D-100") == "",
				"the plain command resolved D-001 %q, D-100 %q", rt.resolutionOf("D-001"), rt.resolutionOf("D-100"))
		})
	}
}
