package decide

import (
	"context"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
)

// TestGateChangeApprover: only an approval of the pull request's head, by
// someone with the right to resolve decisions who did not author or push
// the change, lets a gate change through. erin (admin) authors the pull
// request here and never pushed its branch (agent-bot did): only the author
// rule refuses her; bob has read permission only.
func TestGateChangeApprover(t *testing.T) {
	t.Parallel()
	pr := ghclient.PR{Number: prNumber, State: "open", Author: "erin", HeadSHA: headSHA, HeadRef: "feature-100", BaseSHA: addedSHA}
	approve := func(user, commit string) ghfake.Review {
		return ghfake.Review{User: user, State: "APPROVED", CommitID: commit}
	}
	tests := []struct {
		name    string
		reviews []ghfake.Review
		want    string // the approver; "" when none counts
		why     string // a substring of why, when none counts
	}{
		{name: "a writer approves the head", reviews: []ghfake.Review{approve("alice", headSHA)}, want: "alice"},
		{name: "the pull request's author approves", reviews: []ghfake.Review{approve("erin", headSHA)}, why: "the pull request's author"},
		{name: "a reader approves", reviews: []ghfake.Review{approve("bob", headSHA)}, why: "it needs write permission (they have read)"},
		{name: "a triager approves", reviews: []ghfake.Review{approve("carol", headSHA)}, why: "it needs write permission (they have triage)"},
		{name: "an account that pushed the branch approves", reviews: []ghfake.Review{approve("agent-bot", headSHA)}, why: "pushed the pull request's branch"},
		{name: "a bot approves", reviews: []ghfake.Review{approve("renovate[bot]", headSHA)}, why: "bots never approve"},
		{name: "a writer approved an older head", reviews: []ghfake.Review{approve("alice", addedSHA)}, why: "no approving review"},
		{name: "a writer approved, then asked for changes", reviews: []ghfake.Review{approve("alice", headSHA),
			{User: "alice", State: "CHANGES_REQUESTED", CommitID: headSHA}}, why: "no approving review"},
		{name: "the author's approval beside a writer's", reviews: []ghfake.Review{approve("erin", headSHA), approve("alice", headSHA)}, want: "alice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			w := newWorld(t)
			for _, r := range tc.reviews {
				w.fake.AddReview(owner, repo, prNumber, r)
			}
			got, why, err := w.h.GateChangeApprover(context.Background(), w.gh, w.gh, owner, repo, pr, config.Default())
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || (tc.want == "" && !strings.Contains(why, tc.why)) {
				t.Fatalf("approver %q (%s), want %q (%s)", got, why, tc.want, tc.why)
			}
		})
	}
}
