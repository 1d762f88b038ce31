package decide

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestTeamsTheTokenCannotRead: resolvers.teams with a token that cannot
// read team membership (a workflow's GITHUB_TOKEN: GitHub answers 404 for a
// member too) is never taken for "not a member" in silence. A commenter
// whom nothing else allows is told phasegate could not read the team, and
// the run logs it; a commenter whose permission suffices still resolves.
func TestTeamsTheTokenCannotRead(t *testing.T) {
	t.Parallel()
	workflowToken := map[string]string{"contents": "write", "issues": "write", "pull-requests": "write", "statuses": "write"}
	tests := []struct {
		name      string
		teams     string            // resolvers.teams
		perms     map[string]string // the token's; nil: all (the App's, with Members: read)
		user      string
		resolves  bool
		replyHas  []string
		replyLack []string
		logged    bool // a "cannot read team membership" record
	}{
		{name: "workflow token, a team member with triage permission", teams: "[acme/leads]", perms: workflowToken, user: "carol",
			replyHas: []string{"resolving needs write permission", "cannot read team membership", "acme/leads", "Members: read", "GITHUB_TOKEN"}, logged: true},
		{name: "App token, the same member", teams: "[acme/leads]", user: "carol", resolves: true},
		{name: "App token, a non-member with read permission", teams: "[acme/leads]", user: "bob",
			replyHas: []string{"resolving needs write permission"}, replyLack: []string{"cannot read team"}},
		{name: "workflow token, a writer", teams: "[acme/leads]", perms: workflowToken, user: "alice", resolves: true, logged: true},
		{name: "a team that does not exist", teams: "[acme/nope]", user: "bob",
			replyHas: []string{"cannot read team membership", "acme/nope"}, logged: true},
		{name: "no teams", teams: "[]", perms: workflowToken, user: "bob",
			replyHas: []string{"resolving needs write permission"}, replyLack: []string{"cannot read team"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			w := newWorld(t)
			var logs bytes.Buffer
			w.h.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			w.fake.SetFile(owner, repo, "main", ".github/phasegate.yml", []byte("resolvers:\n  teams: "+tc.teams+"\n"))
			w.fake.AddTeamMember(owner, "leads", "carol", "active")
			if tc.perms != nil {
				w.fake.SetTokenPermissions(bot, tc.perms)
			}
			id := w.postOutcome(seed, source, bot)
			_, cmd := w.say(tc.user, "/resolve D-001 approve")
			r := w.state().Outcome(id).Decision("D-001").Resolution
			if got := r != nil && r.By == tc.user; got != tc.resolves {
				t.Fatalf("resolved by %s: %v, want %v\n%s", tc.user, got, tc.resolves, w.lastReply())
			}
			if !tc.resolves {
				reply := w.lastReply()
				for _, want := range tc.replyHas {
					if !strings.Contains(reply, want) {
						t.Errorf("the reply does not say %q:\n%s", want, reply)
					}
				}
				for _, lack := range tc.replyLack {
					if strings.Contains(reply, lack) {
						t.Errorf("the reply says %q:\n%s", lack, reply)
					}
				}
				if got := w.reactions(cmd); got != reactConfused {
					t.Errorf("reactions on the command = %q, want %q", got, reactConfused)
				}
			}
			if got := strings.Contains(logs.String(), "cannot read team membership"); got != tc.logged {
				t.Errorf("logged %q: %v, want %v\n%s", "cannot read team membership", got, tc.logged, logs.String())
			}
		})
	}
}
