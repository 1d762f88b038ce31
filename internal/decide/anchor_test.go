package decide

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/outcome"
)

// TestEveryNewestCommentIsAnchored: after each phasegate comment — an
// outcome, a resolution, a refusal — a status of phasegate's on the
// outcome's commit points at it, so deleting the newest one freezes the
// thread however the heads move.
func TestEveryNewestCommentIsAnchored(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		command string // "" posts nothing after the outcome
		by      string
	}{
		{name: "the outcome"},
		{name: "a resolution", command: "/resolve D-002 discard", by: "alice"},
		{name: "a refusal", command: "/resolve D-001 approve", by: "bob"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			w := newWorld(t)
			w.postOutcome(seed, source, bot)
			ctx := context.Background()
			if _, err := w.h.ReconcileIssue(ctx, w.gh, owner, repo, w.issue); err != nil {
				t.Fatal(err)
			}
			if tc.command != "" {
				w.say(tc.by, tc.command)
			}
			tip := w.state().Tip
			pointed := false
			for _, st := range w.fake.Statuses(owner, repo, addedSHA) {
				pointed = pointed || st.Creator == bot && strings.HasSuffix(st.TargetURL, "#issuecomment-"+itoa(tip))
			}
			if !pointed {
				t.Fatalf("no status on the outcome's commit points at the newest comment %d: %+v", tip, w.fake.Statuses(owner, repo, addedSHA))
			}
			w.fake.DeleteComment(tip)
			w.fake.SetPullRequestHead(owner, repo, prNumber, "abad1deaabad1deaabad1deaabad1deaabad1dea") // the head moves on
			if tc.command == "" {
				// The only phasegate comment: nothing names it any more, and
				// posting the outcome again is refused (checkWiped).
				_, err := w.h.PostOutcomes(ctx, w.gh, owner, repo, []NewOutcome{seedOutcome(t)}, PostMeta{Commit: addedSHA, PR: prNumber, Actors: []string{"agent-bot"}})
				if !errors.Is(err, ErrWiped) {
					t.Fatalf("posting the outcome again on the wiped thread: %v, want ErrWiped", err)
				}
				return
			}
			if _, err := w.h.ReconcileIssue(ctx, w.gh, owner, repo, w.issue); err != nil {
				t.Fatal(err)
			}
			st, _ := w.fake.LatestStatus(owner, repo, addedSHA, ContextLedger)
			if !strings.Contains(st.Description, "tampering") || st.State != "failure" {
				t.Errorf("%s on the outcome's commit after deleting comment %d = %+v, want failure for tampering", ContextLedger, tip, st)
			}
		})
	}
}

// TestRecordDeletionNeedsTheComment: a deletion names an issue comment of
// the issue by its URL, and a comment still on the thread records nothing.
func TestRecordDeletionNeedsTheComment(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.postOutcome(seed, source, bot)
	ctx := context.Background()
	tip := w.state().Tip
	url := "https://github.com/acme/shop/issues/" + strconv.Itoa(w.issue) + "#issuecomment-" + itoa(tip)
	tests := []struct {
		name    string
		d       Deletion
		wantErr bool
	}{
		{name: "a URL naming no comment", d: Deletion{Owner: owner, Repo: repo, Issue: w.issue, Comment: ghclient.Comment{ID: tip, HTMLURL: "https://github.com/acme/shop/issues/42"}}, wantErr: true},
		{name: "a URL naming another comment", d: Deletion{Owner: owner, Repo: repo, Issue: w.issue, Comment: ghclient.Comment{ID: tip + 1, HTMLURL: url}}, wantErr: true},
		{name: "a URL naming another issue", d: Deletion{Owner: owner, Repo: repo, Issue: w.issue + 1, Comment: ghclient.Comment{ID: tip, HTMLURL: url}}, wantErr: true},
		{name: "a comment still there", d: Deletion{Owner: owner, Repo: repo, Issue: w.issue, Comment: ghclient.Comment{ID: tip, HTMLURL: url}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(w.fake.Statuses(owner, repo, addedSHA))
			_, err := w.h.RecordDeletion(ctx, w.gh, tc.d)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, tc.wantErr)
			}
			if got := len(w.fake.Statuses(owner, repo, addedSHA)); got != before {
				t.Errorf("%d statuses written for a deletion that is not one", got-before)
			}
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// seedOutcome is the seed outcome as PostOutcomes takes it.
func seedOutcome(t *testing.T) NewOutcome {
	t.Helper()
	id, o, value := outcomeOf(source, []byte(seed))
	canonical, err := outcome.Canonical(value)
	if id == "" || err != nil {
		t.Fatal("the seed is not an outcome")
	}
	return NewOutcome{Source: source, Outcome: o, Canonical: canonical, Issue: 42}
}

// TestRecordDeletion: GitHub's word that a phasegate comment was deleted is
// recorded on the outcome's commit as a phasegate/ledger failure pointing at
// it, and the thread is frozen.
func TestRecordDeletion(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.postOutcome(seed, source, bot)
	ctx := context.Background()
	_, cmd := w.say("alice", "/resolve D-002 discard")
	res := w.state().Tip
	w.fake.DeleteComment(res)
	w.fake.DeleteComment(cmd)
	url := "https://github.com/acme/shop/issues/" + strconv.Itoa(w.issue) + "#issuecomment-" + itoa(res)
	if _, err := w.h.RecordDeletion(ctx, w.gh, Deletion{Owner: owner, Repo: repo, Issue: w.issue, Sender: "mallory",
		Comment: ghclient.Comment{ID: res, User: bot, HTMLURL: url}}); err != nil {
		t.Fatal(err)
	}
	recorded := false
	for _, st := range w.fake.Statuses(owner, repo, addedSHA) {
		recorded = recorded || st.Context == ContextLedger && st.State == "failure" && st.TargetURL == url && strings.Contains(st.Description, "deleted by mallory")
	}
	if !recorded {
		t.Errorf("no %s failure pointing at the deleted comment: %+v", ContextLedger, w.fake.Statuses(owner, repo, addedSHA))
	}
	if st, _ := w.fake.LatestStatus(owner, repo, headSHA, ContextDecisions); st.State != "failure" {
		t.Errorf("%s after the deletion = %+v, want failure", ContextDecisions, st)
	}
}
