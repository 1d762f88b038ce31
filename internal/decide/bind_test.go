package decide

import (
	"context"
	"fmt"
	"testing"

	"github.com/phasegate/phasegate/internal/ghfake"
)

// TestSyncCommitBindsTheChangeToItsCommit: issue 30's attack on
// phasegate/decisions. The pull request's head H carries a Phase Outcome
// whose decision nobody resolved; the attacker pushes H′, which carries
// none, after H's sync read the pull request and before it lists the
// change. GitHub lists a pull request's files at its head as it is now
// (H′'s change): taken for H's, they would make H "success: no Phase
// Outcome", and the attacker would force-push H back and merge it on that
// status (which a handler would also keep remembering as H's change). H's
// status reads H's own change (the comparison of the base and H, which the
// fake derives from the trees) and stays pending, also past the 300 files a
// comparison lists (the outcome sorts after the cut, read from the trees).
func TestSyncCommitBindsTheChangeToItsCommit(t *testing.T) {
	t.Parallel()
	const moved = "abad1deaabad1deaabad1deaabad1deaabad1dea" // H′
	tests := []struct {
		name    string
		padding int // files H adds before the outcome, by name
	}{
		{name: "a short change"},
		{name: "a change longer than a comparison lists", padding: 300},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w := newWorld(t)
			head := map[string]string{"README.md": "# shop\n", source: seed}
			for i := range tc.padding {
				head[fmt.Sprintf("assets/%04d.txt", i)] = "x\n"
			}
			w.fake.SetTreeFiles(owner, repo, addedSHA, map[string]string{"README.md": "# shop\n"})
			w.fake.SetTreeFiles(owner, repo, headSHA, head)
			w.fake.SetTreeFiles(owner, repo, moved, map[string]string{"README.md": "# shop, moved on\n"})
			w.postOutcome(seed, source, bot)
			pr, err := w.gh.PullRequest(ctx, owner, repo, prNumber)
			if err != nil {
				t.Fatal(err)
			}
			// H′ is pushed after the sync read the pull request.
			w.fake.SetPullRequestHead(owner, repo, prNumber, moved)
			w.fake.SetPullRequestFiles(owner, repo, prNumber, []ghfake.File{{Filename: "README.md", Status: "modified"}})
			if _, err := w.h.SyncCommit(ctx, w.gh, owner, repo, headSHA, CommitOptions{PR: &pr}); err != nil {
				t.Fatal(err)
			}
			if st, _ := w.fake.LatestStatus(owner, repo, headSHA, ContextDecisions); st.State != "pending" {
				t.Fatalf("%s on H = %+v, want pending: H's status took H′'s change", ContextDecisions, st)
			}
			// The attacker force-pushes H back: the same handler syncs it
			// again, and what it remembers of H's change is H's.
			w.fake.SetPullRequestHead(owner, repo, prNumber, headSHA)
			if err := w.h.SyncPullRequest(ctx, w.gh, owner, repo, prNumber); err != nil {
				t.Fatal(err)
			}
			if st, _ := w.fake.LatestStatus(owner, repo, headSHA, ContextDecisions); st.State != "pending" {
				t.Fatalf("%s on H back as the head = %+v, want pending", ContextDecisions, st)
			}
		})
	}
}
