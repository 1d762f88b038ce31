package action

import (
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghfake"
)

// TestCheckRunReadsEachThingOnce: a run that checks a commit and posts its
// outcome reads the configuration, the comments and the pull
// request once each (the decision handler uses the configuration the run
// read, and sets phasegate/decisions with the thread it posted on), writes
// each status once, and stays within its call budget; so does a second
// run on the same head, which posts nothing.
func TestCheckRunReadsEachThingOnce(t *testing.T) {
	t.Parallel()
	f := newRepoFixture(t)
	base := f.commit(map[string]string{"README.md": "shop\n"})
	head := f.commit(map[string]string{"outcomes/feature-001-requirements.outcome.yaml": seedOutcome, ".pace/day-1/gate-report.yaml": goodGate})
	pr := f.fake.AddPullRequest("acme", "shop", ghfake.PullRequest{HeadSHA: head, BaseSHA: base, Author: "mallory"})
	f.fake.SetPullRequestFiles("acme", "shop", pr, f.diff(base, head))
	tests := []struct {
		name       string
		event      string
		payload    map[string]any
		wantPosted string
		wantWrites int // the comment, the labels, the two statuses
		budget     int
	}{
		{name: "the pull request run posts", event: "pull_request", payload: prEvent(pr, head, base, "acme/shop"), wantPosted: "1", wantWrites: 4, budget: 17},
		{name: "a push of the same head posts nothing", event: "push", payload: pushEvent(base, head), wantPosted: "0", wantWrites: 1, budget: 12},
	}
	for _, tc := range tests { // in order: the second run follows the first
		t.Run(tc.name, func(t *testing.T) {
			f.fake.ResetCalls()
			if code, log := f.runAction(f.env(tc.event, tc.payload, nil)); code != exitOK {
				t.Fatalf("exit %d\n%s", code, log)
			}
			if got := f.output("outcomes-posted"); got != tc.wantPosted {
				t.Errorf("outcomes-posted = %s, want %s", got, tc.wantPosted)
			}
			calls := f.fake.Calls()
			counts := map[string]int{}
			var all []string
			for _, c := range calls {
				counts[c.Method+" "+c.Path]++
				all = append(all, c.Method+" "+c.Path)
			}
			for call, want := range map[string]int{
				"GET /repos/acme/shop/contents/.github/phasegate.yml": 1,
				"GET /repos/acme/shop/issues/1/comments":              1,
				"GET /repos/acme/shop/pulls/2":                        1,
			} {
				if counts[call] != want {
					t.Errorf("%s ×%d, want ×%d", call, counts[call], want)
				}
			}
			if n := len(writes(f.fake)); n != tc.wantWrites {
				t.Errorf("%d writes, want %d: %v", n, tc.wantWrites, writes(f.fake))
			}
			if len(calls) > tc.budget {
				t.Errorf("%d calls, want at most %d:\n  %s", len(calls), tc.budget, strings.Join(all, "\n  "))
			}
			for _, ctx := range []string{decide.ContextContracts, decide.ContextDecisions} {
				if _, ok := f.fake.LatestStatus("acme", "shop", head, ctx); !ok {
					t.Errorf("no %s on the head", ctx)
				}
			}
		})
	}
}
