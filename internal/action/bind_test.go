package action

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghfake"
)

// TestPullRequestRunBindsTheChangeToItsCommit: issue 30's attack on the
// action's commit-aware rules. The run checks H (the event's head, checked
// out without history, so the change comes from the API), which modifies a
// committed Phase Outcome; the attacker pushes H′, which leaves it alone,
// before the run lists the change. GitHub lists a pull request's files at
// its head as it is now (H′'s change): taken for H's, they would hide the
// edit and H would pass, to be force-pushed back and merged on that check.
// The run reads H's own change (the comparison of the base and H, which the
// fake derives from the trees) and holds, also past the 300 files a
// comparison lists (the outcome sorts after the cut, read from the trees).
func TestPullRequestRunBindsTheChangeToItsCommit(t *testing.T) {
	t.Parallel()
	const (
		moved = "abad1deaabad1deaabad1deaabad1deaabad1dea" // H′
		path  = "outcomes/feature-001-requirements.outcome.yaml"
	)
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
			f := newRepoFixture(t)
			base := f.commit(map[string]string{"README.md": "shop\n", path: seedOutcome})
			files := map[string]string{path: strings.Replace(seedOutcome, "blocking: true", "blocking: false", 1)}
			for i := range tc.padding {
				files[fmt.Sprintf("assets/%04d.txt", i)] = "x\n"
			}
			head := f.commit(files)
			if err := os.RemoveAll(filepath.Join(f.dir, ".git")); err != nil { // a shallow checkout of H
				t.Fatal(err)
			}
			pr := f.fake.AddPullRequest("acme", "shop", ghfake.PullRequest{HeadSHA: head, BaseSHA: base, Author: "mallory"})
			// H′ is pushed after the event named H.
			f.fake.SetTreeFiles("acme", "shop", moved, map[string]string{"README.md": "shop, moved on\n", path: seedOutcome})
			f.fake.SetPullRequestHead("acme", "shop", pr, moved)
			f.fake.SetPullRequestFiles("acme", "shop", pr, []ghfake.File{{Filename: "README.md", Status: "modified"}})
			code, log := f.runAction(f.env("pull_request", prEvent(pr, head, base, "acme/shop"), nil))
			if code != exitFindings || !strings.Contains(log, "outcome.immutable") {
				t.Fatalf("exit %d, want %d with outcome.immutable: H's run took H′'s change; log:\n%s", code, exitFindings, log)
			}
			if st, _ := f.fake.LatestStatus("acme", "shop", head, decide.ContextContracts); st.State != "failure" {
				t.Errorf("%s on H = %+v, want failure", decide.ContextContracts, st)
			}
		})
	}
}
