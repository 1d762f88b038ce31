package decide

import (
	"context"
	"net/http"
	"testing"

	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
)

// TestPostAndSyncReadsTheThreadOnce: posting a change's outcomes and
// setting phasegate/decisions on its commit (the action's run, the App's
// check) fold the issue once: its comments, the pull request and the
// configuration are read once for the status, the status is written once, and it is the one
// SyncCommit computes afterwards (it writes nothing more).
func TestPostAndSyncReadsTheThreadOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// posted: the outcome is on the thread already (a second run),
		// else the pull request's head adds it and it is posted now.
		posted     bool
		wantPosted int
	}{
		{name: "the outcome posted now", wantPosted: 1},
		{name: "the outcome posted before", posted: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			if tc.posted {
				w.postOutcome(seed, source, bot)
			} else {
				w.fake.SetFile(owner, repo, headSHA, source, []byte(seed))
				w.fake.AddPullRequestFile(owner, repo, prNumber, ghfake.File{Filename: source, Status: "added"})
			}
			ctx := context.Background()
			opts := CommitOptions{PR: &ghclient.PR{Number: prNumber, State: "open", HeadSHA: headSHA, BaseSHA: addedSHA}, DefaultBranch: "main"}
			w.fake.ResetCalls()
			res, err := w.h.PostAndSync(ctx, w.gh, owner, repo, []NewOutcome{seedOutcome(t)}, PostMeta{Commit: headSHA, PR: prNumber, Actors: []string{"agent-bot"}}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Posted) != tc.wantPosted || !res.Synced || res.Decisions.State != "pending" {
				t.Fatalf("PostAndSync = %d posted, synced %v, %+v; want %d posted and pending", len(res.Posted), res.Synced, res.Decisions, tc.wantPosted)
			}
			counts := map[string]int{}
			for _, c := range w.fake.Calls() {
				counts[c.Method+" "+route(c.Path)]++
			}
			for call, want := range map[string]int{
				"GET /repos/acme/shop/issues/N/comments":              1,
				"GET /repos/acme/shop/pulls/N":                        1,
				"GET /repos/acme/shop/contents/.github/phasegate.yml": 1,
				"POST /repos/acme/shop/statuses/" + headSHA:           1, // phasegate/decisions, once
			} {
				if counts[call] != want {
					t.Errorf("%s ×%d, want ×%d; calls: %v", call, counts[call], want, counts)
				}
			}
			st, ok := w.fake.LatestStatus(owner, repo, headSHA, ContextDecisions)
			if !ok || st.State != res.Decisions.State || st.Description != res.Decisions.Description || st.TargetURL != res.Decisions.TargetURL {
				t.Errorf("%s on the head = %+v, want what PostAndSync returned: %+v", ContextDecisions, st, res.Decisions)
			}
			w.fake.ResetCalls()
			again, err := w.h.SyncCommit(ctx, w.gh, owner, repo, headSHA, opts)
			if err != nil || again.State != res.Decisions.State || again.Description != res.Decisions.Description {
				t.Errorf("SyncCommit afterwards = %+v, %v; want %+v", again, err, res.Decisions)
			}
			for _, c := range w.fake.Calls() {
				if c.Method != http.MethodGet {
					t.Errorf("SyncCommit after PostAndSync wrote %s %s: the status PostAndSync set is not the commit's", c.Method, c.Path)
				}
			}
		})
	}
}

// PostOutcomes is PostAndSync without the sync, for tests that only post.
func (h *Handler) PostOutcomes(ctx context.Context, gh GitHub, owner, repo string, outs []NewOutcome, meta PostMeta) ([]PostedOutcome, error) {
	res, err := h.postOutcomes(ctx, gh, owner, repo, outs, meta, nil)
	return res.Posted, err
}
