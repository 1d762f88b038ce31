package checkjob

import (
	"context"
	"fmt"
	"io/fs"
	"testing"

	"github.com/phasegate/phasegate/internal/gate"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
)

// TestCheckCommitBindsTheChangeToItsCommit: issue 30's attack on the
// change. The attacker pushes H, which edits the gate, then H′, which does
// not, while H's job lists the change: GitHub lists a pull request's files
// at its head as it is now (H′'s change). Were H's check to take them, it
// would see no edit of the gate and pass; the attacker would force-push H
// back and merge it on that check. H's check reads H's own change (the
// comparison of the base and H, which no SetCompare names here: the fake
// derives it from the trees) and holds.
func TestCheckCommitBindsTheChangeToItsCommit(t *testing.T) {
	t.Parallel()
	const (
		moved = "a200000000000000000000000000000000000002" // H′
		loose = "ignore: [\"**\"]\n"
	)
	tests := []struct {
		name       string
		base, head map[string]string // H′ is base's files with README.md edited
		file       string
	}{
		{name: "H adds the configuration", head: map[string]string{cfgPath: loose}, file: cfgPath},
		{name: "H drops the workflow that ran phasegate", base: map[string]string{workflow: runsGate}, file: workflow},
		{name: "H edits the workflow not to run phasegate", base: map[string]string{workflow: runsGate}, head: map[string]string{workflow: runsNothing}, file: workflow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			tree := func(sha string, files map[string]string, readme string) {
				all := map[string]string{"README.md": readme}
				for p, content := range files {
					all[p] = content
				}
				e.f.SetTreeFiles(owner, repo, sha, all)
			}
			tree(baseSHA, tc.base, "# shop\n")
			tree(headSHA, tc.head, "# shop\n")
			tree(moved, tc.base, "# shop, moved on\n")
			n := e.f.AddPullRequest(owner, repo, ghfake.PullRequest{HeadSHA: headSHA, BaseSHA: baseSHA, HeadRef: "feature", BaseRef: "main", Author: "agent-bot"})
			req := Request{Owner: owner, Repo: repo, SHA: headSHA, Base: baseSHA, Ref: "feature", HTMLURL: "https://github.com/acme/shop", Version: "test",
				PR: &ghclient.PR{Number: n, State: "open", Author: "agent-bot", HeadSHA: headSHA, HeadRef: "feature", BaseSHA: baseSHA},
				Open: func(ctx context.Context, _ int64) (fs.FS, error) {
					return e.gh.CommitFS(ctx, owner, repo, headSHA, ghclient.TreeLimits{})
				}}
			// H′ is pushed after H's job read the pull request, before it
			// lists the change.
			e.f.SetPullRequestHead(owner, repo, n, moved)
			e.f.SetPullRequestFiles(owner, repo, n, []ghfake.File{modified("README.md")})
			sum, err := e.job.CheckCommit(context.Background(), e.gh, req)
			if err != nil {
				t.Fatalf("could not check: %v", err)
			}
			got, want := findings(sum), fmt.Sprintf("%s error %s", RuleGateChange, tc.file)
			if sum.Verdict != gate.Hold || !contains(got, want) {
				t.Fatalf("verdict %s, findings %q; want HOLD on %q: H's check took H′'s change", sum.Verdict, got, want)
			}
		})
	}
}
