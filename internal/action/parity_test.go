package action

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/server"
)

// TestActionAndAppAgree: for the same ledger, the action (issue_comment
// and schedule runs) and the App's decision handler (as serve builds it,
// on a webhook and on pull_request) leave the same labels and the same
// phasegate/decisions status. Both post the outcome the same way: the
// action's pull_request run.
func TestActionAndAppAgree(t *testing.T) {
	t.Parallel()
	phaseOutcome := func(phase string) string {
		return strings.Replace(seedOutcome, "phase: requirements", "phase: "+phase, 1)
	}
	tests := []struct {
		name     string
		config   string
		outcome  string
		commands []string // by alice, in order
		tamper   bool
	}{
		{name: "approved: the phase moves on", outcome: seedOutcome, commands: []string{"/resolve D-001 approve"}},
		{name: "rejected", outcome: seedOutcome, commands: []string{"/resolve D-001 reject"}},
		{name: "a capture and a pending approval", outcome: seedOutcome, commands: []string{"/resolve D-002 capture"}},
		{name: "simplify is a developing phase", outcome: phaseOutcome("simplify"), commands: []string{"/resolve D-001 approve"}},
		{name: "code-validate is qa", outcome: phaseOutcome("code-validate")},
		{name: "qa-fix is qa", outcome: phaseOutcome("qa-fix")},
		{name: "configured phases and aliases", config: "phases:\n  sequence: [intake, planning, build]\n  aliases: {requirements: intake}\n",
			outcome: seedOutcome, commands: []string{"/resolve D-001 approve"}},
		{name: "an edited outcome comment", outcome: seedOutcome, tamper: true, commands: []string{"/resolve D-001 approve"}},
		{name: "an invalid config", config: "resolvers:\n  permision: admin\n", outcome: seedOutcome, commands: []string{"/resolve D-001 approve"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case has its own fake GitHubs and repositories
			type result struct{ labels, state, description string }
			run := func(app bool) result {
				rt := newRedTeam(t, "")
				if tc.config != "" {
					rt.fake.SetFile(rtOwner, rtRepo, "main", ".github/phasegate.yml", []byte(tc.config))
					rt.hold = true
				}
				rt.open(map[string]string{rtSource: tc.outcome})
				if tc.tamper {
					c := rt.lastBy("github-actions[bot]", "phasegate:outcome")
					rt.fake.EditComment(c.ID, strings.Replace(c.Body, "Approve PREQ", "Approve anything", 1))
				}
				var h server.Decider
				var gh *ghclient.Client
				if app {
					var err error
					if gh, err = ghclient.New(ghclient.Options{BaseURL: rt.fake.URL(), Token: "tok", Now: rt.clock.Now, Sleep: rt.clock.Sleep}); err != nil {
						t.Fatal(err)
					}
					h = server.DefaultDecider(server.DeciderOptions{Identity: "github-actions[bot]", Locker: decide.NewMemLocker(),
						Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
				}
				ctx := context.Background()
				for _, body := range tc.commands {
					if !app {
						rt.say("alice", body)
						continue
					}
					id := rt.fake.AddComment(rtOwner, rtRepo, rt.issue, "alice", body)
					if _, err := h.HandleComment(ctx, gh, decide.Event{Owner: rtOwner, Repo: rtRepo, Issue: rt.issue,
						Comment: decide.Comment{ID: id, Author: "alice", Body: body}}); err != nil {
						t.Fatal(err)
					}
				}
				if app {
					if err := h.SyncPullRequest(ctx, gh, rtOwner, rtRepo, rt.pr); err != nil {
						t.Fatal(err)
					}
					if _, err := h.ReconcileRepo(ctx, gh, rtOwner, rtRepo); err != nil {
						t.Fatal(err)
					}
				} else {
					rt.reconcile()
				}
				st := rt.decisions()
				return result{labels: rt.labels(), state: st.State, description: st.Description}
			}
			action, app := run(false), run(true)
			if action != app {
				t.Errorf("the action and the App disagree:\naction %+v\napp    %+v", action, app)
			}
			if action.state == "" {
				t.Errorf("no phasegate/decisions status: %+v", action)
			}
			t.Logf("%+v", action)
		})
	}
}
