package ghclient

import (
	"testing"

	"github.com/phasegate/phasegate/internal/ghfake"
)

// TestCommitInfo: who made a commit, whether GitHub verified it, and its
// tree (phasegate/contracts shows the tree it checked).
func TestCommitInfo(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	const sha = "c0ffee0000000000000000000000000000000001"
	tree := e.fake.SetTreeFiles(owner, repo, sha, map[string]string{"README.md": "# widgets\n"})
	e.fake.AddCommit(owner, repo, ghfake.Commit{SHA: sha, Author: "dev1", Committer: "dev2", Verified: true})
	tests := []struct {
		name string
		sha  string
		want CommitInfo
		err  bool
	}{
		{name: "known", sha: sha, want: CommitInfo{Author: "dev1", Committer: "dev2", Verified: true, Tree: tree}},
		{name: "unknown", sha: "c0ffee0000000000000000000000000000000002", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.c.Commit(ctxT(t), owner, repo, tt.sha)
			if got != tt.want || (err != nil) != tt.err {
				t.Fatalf("Commit = %+v, %v; want %+v (error: %v)", got, err, tt.want, tt.err)
			}
		})
	}
}
