package pages

import (
	"context"
	"testing"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
)

// TestPagesCountOnlyTheAppsOwnRecords (red team): any App may create a
// check run named phasegate/decisions, and anyone with write access a
// status of that context; the commit's page shows only those phasegate
// itself wrote, never another's success as phasegate's.
func TestPagesCountOnlyTheAppsOwnRecords(t *testing.T) {
	t.Parallel()
	const appHead1 = "a100000000000000000000000000000000000001"
	success := ghclient.Status{State: "success", Context: decide.ContextDecisions, Description: "all decisions resolved"}
	pending := ghclient.Status{State: "pending", Context: decide.ContextDecisions, Description: "1 blocking decision pending"}
	tests := []struct {
		name    string
		publish string
		own     *ghclient.Status // phasegate's own record, written first
		forged  ghclient.Status  // another's success, written after
		want    string           // the page's Decisions
	}{
		{name: "another App's check run alone", publish: decide.PublishChecks, forged: success},
		{name: "another App's check run after the App's pending one", publish: decide.PublishChecks, own: &pending, forged: success, want: "pending"},
		{name: "another account's status after the App's pending one", publish: decide.PublishStatuses, own: &pending, forged: success, want: "pending"},
		{name: "both: another App's check run after the App's pending status", publish: decide.PublishBoth, own: &pending, forged: success, want: "pending"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own server and fake
			p, f := testSource(t, &stubMay{}, tc.publish)
			f.SetTreeFiles(owner, repo, appHead1, map[string]string{"README.md": "# shop\n"})
			ctx := context.Background()
			if tc.own != nil {
				own, err := p.cfg.Client(ctx, owner, repo, 0)
				if err != nil {
					t.Fatal(err)
				}
				if tc.publish == decide.PublishChecks {
					_, err = own.CreateCheckRun(ctx, owner, repo, decide.CheckRunOf(appHead1, *tc.own))
				} else {
					err = own.CreateStatus(ctx, owner, repo, appHead1, *tc.own)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			f.AddAppToken("ghs_other", 9999, "other-app")
			f.AddToken("ghp_agent", "agent-bot")
			other, err := ghclient.New(ghclient.Options{Token: "ghs_other", BaseURL: f.URL()})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := other.CreateCheckRun(ctx, owner, repo, decide.CheckRunOf(appHead1, tc.forged)); err != nil {
				t.Fatal(err)
			}
			agent, err := ghclient.New(ghclient.Options{Token: "ghp_agent", BaseURL: f.URL()})
			if err != nil {
				t.Fatal(err)
			}
			if err := agent.CreateStatus(ctx, owner, repo, appHead1, tc.forged); err != nil {
				t.Fatal(err)
			}
			page, err := p.Commit(ctx, owner, repo, appHead1, "alice")
			if err != nil {
				t.Fatal(err)
			}
			if page.Decisions != tc.want {
				t.Fatalf("the page shows %s %q (%q), want %q: another's record counted as phasegate's",
					decide.ContextDecisions, page.Decisions, page.DecisionsText, tc.want)
			}
		})
	}
}
