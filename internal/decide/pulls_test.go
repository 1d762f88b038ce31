package decide

import (
	"context"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/ghfake"
)

func TestSyncPullRequest(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	sync := func() ghfake.Status {
		t.Helper()
		if err := w.h.SyncPullRequest(ctx, w.gh, owner, repo, prNumber); err != nil {
			t.Fatal(err)
		}
		st, ok := w.fake.LatestStatus(owner, repo, headSHA, ContextDecisions)
		if !ok {
			t.Fatal("no status")
		}
		return st
	}
	if st := sync(); st.State != "success" || !strings.Contains(st.Description, "no Phase Outcome") {
		t.Errorf("without outcomes: %+v", st)
	}
	w.fake.SetPullRequestFiles(owner, repo, prNumber, []ghfake.File{{Filename: source, Status: "added"}, {Filename: "src/app.go", Status: "modified"}})
	w.fake.SetFile(owner, repo, headSHA, source, []byte(seed))
	if st := sync(); st.State != "pending" {
		t.Errorf("outcome not yet posted: %+v, want pending", st)
	}
	w.postOutcome(seed, source, bot)
	if st := sync(); st.State != "pending" {
		t.Errorf("posted, unresolved: %+v, want pending", st)
	}
	w.say("alice", "/resolve D-001 approve")
	if st := sync(); st.State != "success" {
		t.Errorf("approved: %+v, want success", st)
	}
	// Someone edits the outcome comment: the status fails.
	cs := w.fake.Comments(owner, repo, w.issue)
	w.fake.EditComment(cs[0].ID, cs[0].Body+"\nedited")
	if st := sync(); st.State != "failure" || !strings.Contains(st.Description, "edited") {
		t.Errorf("tampered: %+v, want failure", st)
	}
}
