package decide

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
)

func TestSyncPullRequest(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	sync := func() ghfake.Status {
		t.Helper()
		// A fresh handler each time: the test changes a pull request's
		// files under the same head, which GitHub never does, and a
		// handler remembers a head's files.
		h := &Handler{Logger: w.h.Logger}
		if err := h.SyncPullRequest(ctx, w.gh, owner, repo, prNumber); err != nil {
			t.Fatal(err)
		}
		st, ok := w.fake.LatestStatus(owner, repo, headSHA, ContextDecisions)
		if !ok {
			t.Fatal("no status")
		}
		if st.TargetURL == "" {
			t.Errorf("%s %s has no Details link", ContextDecisions, st.State)
		}
		return st
	}
	w.fake.SetPullRequestFiles(owner, repo, prNumber, nil)
	if st := sync(); st.State != "success" || !strings.Contains(st.Description, "no Phase Outcome") || !strings.HasSuffix(st.TargetURL, "/pull/"+strconv.Itoa(prNumber)) {
		t.Errorf("without outcomes: %+v, want success linking the pull request", st)
	}
	// The change cannot be read: error, still with a Details link.
	w.fake.FailNext(ghclient.DefaultMaxAttempts, 502, "/compare/")
	if st := sync(); st.State != "error" {
		t.Errorf("files unreadable: %+v, want error", st)
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
	if st := sync(); st.State != "failure" || !strings.Contains(st.Description, "tampering") || !strings.Contains(st.Description, "edited") {
		t.Errorf("tampered: %+v, want failure", st)
	}
}

// TestStatusWrittenOnlyWhenChanged: phasegate/decisions is written when it
// changes or someone else set it, never again when it already says the
// same (GitHub keeps at most 1,000 statuses per context and commit, and the
// reconcile loop re-folds pending issues every period).
func TestStatusWrittenOnlyWhenChanged(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	w.fake.SetPullRequestFiles(owner, repo, prNumber, []ghfake.File{{Filename: source, Status: "added"}})
	w.fake.SetFile(owner, repo, headSHA, source, []byte(seed))
	w.postOutcome(seed, source, bot)
	w.say("alice", "/resolve D-002 discard") // D-001 still pending: the status says pending
	writes := func() int { return w.fake.CountCalls("POST", "/repos/"+owner+"/"+repo+"/statuses/") }
	before := len(w.fake.Statuses(owner, repo, headSHA))
	if before == 0 {
		t.Fatal("no status after the first command")
	}
	tests := []struct {
		name      string
		do        func()
		wantWrite bool
		wantState string
	}{
		{name: "unchanged re-fold", do: func() {
			if _, err := w.h.ReconcileIssue(ctx, w.gh, owner, repo, w.issue); err != nil {
				t.Fatal(err)
			}
		}, wantState: "pending"},
		{name: "unchanged pull request sync", do: func() {
			if err := w.h.SyncPullRequest(ctx, w.gh, owner, repo, prNumber); err != nil {
				t.Fatal(err)
			}
		}, wantState: "pending"},
		{name: "someone else set the same state", do: func() {
			w.fake.AddToken("mallory-tok", "mallory")
			other, err := ghclient.New(ghclient.Options{BaseURL: w.fake.URL(), Token: "mallory-tok"})
			if err != nil {
				t.Fatal(err)
			}
			st, _ := w.fake.LatestStatus(owner, repo, headSHA, ContextDecisions)
			if err := other.CreateStatus(ctx, owner, repo, headSHA, ghclient.Status{State: st.State, Context: ContextDecisions, Description: st.Description}); err != nil {
				t.Fatal(err)
			}
			w.fake.ResetCalls()
			if err := w.h.SyncPullRequest(ctx, w.gh, owner, repo, prNumber); err != nil {
				t.Fatal(err)
			}
		}, wantWrite: true, wantState: "pending"},
		{name: "the decision changes it", do: func() { w.say("alice", "/resolve D-001 approve") }, wantWrite: true, wantState: "success"},
		{name: "unchanged again", do: func() {
			if _, err := w.h.ReconcileIssue(ctx, w.gh, owner, repo, w.issue); err != nil {
				t.Fatal(err)
			}
		}, wantState: "success"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w.fake.ResetCalls()
			tc.do()
			if got := writes() > 0; got != tc.wantWrite {
				t.Errorf("wrote a status: %v, want %v", got, tc.wantWrite)
			}
			st, _ := w.fake.LatestStatus(owner, repo, headSHA, ContextDecisions)
			if st.State != tc.wantState || st.Creator != bot {
				t.Errorf("latest status %+v, want %s by %s", st, tc.wantState, bot)
			}
		})
	}
}

// TestPendingLabelComesOffLast: phasegate:pending is the reconcile loop's
// work list, so it is removed only after the statuses are set; a handler
// that dies in between leaves the issue for the next pass.
func TestPendingLabelComesOffLast(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.postOutcome(seed, source, bot)
	w.fake.LabelIssue(owner, repo, w.issue, LabelPending)
	w.fake.ResetCalls()
	w.say("alice", "/resolve D-001 approve")
	unlabel, status := -1, -1
	for i, c := range w.fake.Calls() {
		switch {
		case c.Method == "DELETE" && strings.HasSuffix(c.Path, "/labels/"+LabelPending):
			unlabel = i
		case c.Method == "POST" && strings.Contains(c.Path, "/statuses/"):
			status = i
		}
	}
	if unlabel < 0 || status < 0 {
		t.Fatalf("unlabel at %d, status at %d: want both", unlabel, status)
	}
	if unlabel < status {
		t.Errorf("%s removed (call %d) before the status was set (call %d)", LabelPending, unlabel, status)
	}
}
