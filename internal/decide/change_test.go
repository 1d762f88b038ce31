package decide

import (
	"context"
	"fmt"
	"testing"

	"github.com/phasegate/phasegate/internal/ghfake"
)

// TestSyncCommitReadsALongDefaultBranchChangeWhole: a commit no pull
// request carries is judged by its change from the default branch. Past the
// 300 files a comparison lists, that change is read from the two trees
// (CompareWhole), never taken in part or refused: the outcome the attacker's
// padding pushes past the cut still holds the commit pending; and once the
// branch holds the commit, the commit's own change is read, however the
// branch moved since the last sync (no comparison with a branch is kept).
// A commit on the branch is judged by its own diff.
func TestSyncCommitReadsALongDefaultBranchChangeWhole(t *testing.T) {
	t.Parallel()
	const (
		mainSHA   = "0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a"
		pushedSHA = "5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed"
		landedSHA = "1a2d1a2d1a2d1a2d1a2d1a2d1a2d1a2d1a2d1a2d"
	)
	tests := []struct {
		name    string
		padding int // files the commit adds before the outcome, by name
	}{
		{name: "a short change"},
		{name: "a change longer than a comparison lists", padding: 300},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w := newWorld(t)
			tree := map[string]string{"README.md": "# shop\n", source: seed}
			for i := range tc.padding {
				tree[fmt.Sprintf("assets/%04d.txt", i)] = "x\n"
			}
			w.fake.SetTreeFiles(owner, repo, mainSHA, map[string]string{"README.md": "# shop\n"})
			w.fake.SetTreeFiles(owner, repo, pushedSHA, tree)
			w.fake.SetBranch(owner, repo, "main", mainSHA)
			st, err := w.h.SyncCommit(ctx, w.gh, owner, repo, pushedSHA, CommitOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if st.State != "pending" {
				t.Fatalf("%s = %s (%s), want pending: the outcome the change carries was not read", ContextDecisions, st.State, st.Description)
			}
			// The branch moves onto the commit: its change is now the
			// commit's own diff (here one that carries no outcome).
			w.fake.AddCommit(owner, repo, ghfake.Commit{SHA: pushedSHA, Files: []ghfake.File{{Filename: "README.md", Status: "modified"}}})
			w.fake.SetBranch(owner, repo, "main", pushedSHA)
			if st, err = w.h.SyncCommit(ctx, w.gh, owner, repo, pushedSHA, CommitOptions{}); err != nil {
				t.Fatal(err)
			}
			if st.State != "success" {
				t.Fatalf("%s on the branch = %s (%s), want success: its own change carries no outcome", ContextDecisions, st.State, st.Description)
			}
			// A commit on the branch whose own diff adds the outcome.
			w.fake.SetTreeFiles(owner, repo, landedSHA, tree)
			w.fake.AddCommit(owner, repo, ghfake.Commit{SHA: landedSHA, Files: []ghfake.File{{Filename: source, Status: "added"}}})
			w.fake.SetBranch(owner, repo, "main", landedSHA)
			if st, err = w.h.SyncCommit(ctx, w.gh, owner, repo, landedSHA, CommitOptions{}); err != nil {
				t.Fatal(err)
			}
			if st.State != "pending" {
				t.Fatalf("%s on a commit of the branch that adds the outcome = %s (%s), want pending", ContextDecisions, st.State, st.Description)
			}
		})
	}
}
