package action

import (
	"context"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
)

// TestActionDefersToTheApp: when phasegate's App is the repository's gate
// (the configuration names it, or, unset, its phasegate/contracts check run
// is on the commit), the action reports and sets its contracts status but
// posts no outcome and sets no phasegate/decisions: exactly one poster.
// An identity the action's own token acts as (GET /user) is the action's:
// it posts; any other account, never (it would post as someone else).
func TestActionDefersToTheApp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		config     string
		appRun     string // the slug of an App whose phasegate/contracts check run is on the head
		tokenOf    string // the account of the action's token: a user token; "" the workflow's GITHUB_TOKEN
		wantPosted bool
	}{
		{name: "no App: the action posts", wantPosted: true},
		{name: "the App's check run is on the commit", appRun: "phasegate"},
		{name: "the configuration names the App", config: "identity: phasegate[bot]\n"},
		{name: "the configuration names the action, whatever runs", config: "identity: github-actions[bot]\n", appRun: "phasegate", wantPosted: true},
		{name: "a check run of GitHub Actions (any workflow) is not the App", appRun: "github-actions", wantPosted: true},
		{name: "the identity is the account of the action's user token", config: "identity: gate-bot\n", tokenOf: "gate-bot", wantPosted: true},
		{name: "the identity is the token's account in another case", config: "identity: Gate-Bot\n", tokenOf: "gate-bot", appRun: "phasegate", wantPosted: true},
		{name: "the identity is not the token's account", config: "identity: gate-bot\n", tokenOf: "carol"},
		{name: "the identity names an account, the token is the workflow's", config: "identity: gate-bot\n"},
		// Red team: a user token never posts as the App it names.
		{name: "the identity names the App, the token is a user's", config: "identity: phasegate[bot]\n", tokenOf: "carol"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			f := newRepoFixture(t)
			if tt.config != "" {
				f.fake.SetFile("acme", "shop", "main", ".github/phasegate.yml", []byte(tt.config))
			}
			base := f.commit(map[string]string{"README.md": "shop\n"})
			head := f.commit(map[string]string{"outcomes/feature-001-requirements.outcome.yaml": seedOutcome})
			pr := f.fake.AddPullRequest("acme", "shop", ghfake.PullRequest{HeadSHA: head, BaseSHA: base, Author: "agent-bot"})
			f.fake.SetPullRequestFiles("acme", "shop", pr, []ghfake.File{{Filename: "outcomes/feature-001-requirements.outcome.yaml", Status: "added"}})
			if tt.appRun != "" {
				appID := int64(4242)
				if tt.appRun == "github-actions" {
					appID = ghfake.GitHubActionsAppID
				}
				f.fake.AddAppToken("ghs_app", appID, tt.appRun)
				gh, err := ghclient.New(ghclient.Options{Token: "ghs_app", BaseURL: f.fake.URL()})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := gh.CreateCheckRun(context.Background(), "acme", "shop", ghclient.CheckRun{Name: decide.ContextContracts, HeadSHA: head, Status: "in_progress"}); err != nil {
					t.Fatal(err)
				}
			}
			ev := map[string]any{"pull_request": map[string]any{"number": pr, "head": map[string]any{"sha": head}, "base": map[string]any{"sha": base}}, "repository": map[string]any{"default_branch": "main"}}
			var extra map[string]string
			if tt.tokenOf != "" {
				f.fake.AddToken("ghp_user", tt.tokenOf)
				f.fake.SetPermission("acme", "shop", tt.tokenOf, "write")
				extra = map[string]string{"INPUT_TOKEN": "ghp_user"}
			}
			code, log := f.runAction(f.env("pull_request", ev, extra))
			if code != exitOK {
				t.Fatalf("exit %d; log:\n%s", code, log)
			}
			posted := len(f.fake.Comments("acme", "shop", f.issue)) > 0
			_, decisions := f.fake.LatestStatus("acme", "shop", head, decide.ContextDecisions)
			if posted != tt.wantPosted || decisions != tt.wantPosted {
				t.Fatalf("posted %v, %s set %v; want %v (log:\n%s)", posted, decide.ContextDecisions, decisions, tt.wantPosted, log)
			}
			if _, ok := f.fake.LatestStatus("acme", "shop", head, decide.ContextContracts); !ok {
				t.Fatal("no phasegate/contracts status: the action still reports its verdict")
			}
			if !tt.wantPosted && !strings.Contains(log, "is this repository's gate") {
				t.Fatalf("the log does not say why nothing was posted:\n%s", log)
			}
		})
	}
}
