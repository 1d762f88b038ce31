package decide

import (
	"context"
	"strings"
	"sync"
	"testing"
)

const pagesURL = "https://phasegate.example.com"

// TestAnchorOfReadsBothForms: a status's Details link anchors a comment
// whether it is the comment on GitHub or on serve's page of the issue.
func TestAnchorOfReadsBothForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		url     string
		issue   int
		comment int64
		ok      bool
	}{
		{name: "the comment on GitHub", url: "https://github.com/acme/shop/issues/42#issuecomment-1001", issue: 42, comment: 1001, ok: true},
		{name: "a pull request's comment on GitHub", url: "https://github.com/acme/shop/pull/7#issuecomment-9", issue: 7, comment: 9, ok: true},
		{name: "the comment on serve's page", url: IssuePageURL(pagesURL, "acme", "shop", 42) + "#issuecomment-1001", issue: 42, comment: 1001, ok: true},
		{name: "serve under a path", url: IssuePageURL(pagesURL+"/pg/", "acme", "shop", 3) + "#issuecomment-5", issue: 3, comment: 5, ok: true},
		{name: "a commit's page", url: CommitPageURL(pagesURL, "acme", "shop", "abc123")},
		{name: "an issue without a comment", url: IssuePageURL(pagesURL, "acme", "shop", 42)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			issue, comment, ok := anchorOf(tc.url)
			if ok != tc.ok || issue != tc.issue || comment != tc.comment {
				t.Errorf("anchorOf(%q) = %d, %d, %v; want %d, %d, %v", tc.url, issue, comment, ok, tc.issue, tc.comment, tc.ok)
			}
		})
	}
}

// TestRedTeamPagesLinksKeepTheAnchor (issue 22): with the Details links on
// serve's pages, every anchor phasegate writes is the page form, and
// deleting the newest phasegate comment is still tampering however the
// heads move. It fails if anchorOf stops reading the page form: no status
// then names the deleted comment in a form it reads.
func TestRedTeamPagesLinksKeepTheAnchor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, command, by string
	}{
		{name: "a resolution", command: "/resolve D-002 discard", by: "alice"},
		{name: "a refusal", command: "/resolve D-001 approve", by: "bob"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			w := newWorld(t)
			w.h.PagesURL = pagesURL
			w.postOutcome(seed, source, bot)
			ctx := context.Background()
			if _, err := w.h.ReconcileIssue(ctx, w.gh, owner, repo, w.issue); err != nil {
				t.Fatal(err)
			}
			w.say(tc.by, tc.command)
			tip := w.state().Tip
			page := IssuePageURL(pagesURL, owner, repo, w.issue) + "#issuecomment-" + itoa(tip)
			pointed := false
			for _, st := range w.fake.Statuses(owner, repo, addedSHA) {
				if st.Creator != bot {
					continue
				}
				if _, _, ok := anchorOf(st.TargetURL); ok && !strings.HasPrefix(st.TargetURL, pagesURL+"/") {
					t.Errorf("%s anchors on GitHub (%s), want serve's page", st.Context, st.TargetURL)
				}
				pointed = pointed || st.TargetURL == page
			}
			if !pointed {
				t.Fatalf("no status on the outcome's commit points at %s: %+v", page, w.fake.Statuses(owner, repo, addedSHA))
			}
			w.fake.DeleteComment(tip)
			w.fake.SetPullRequestHead(owner, repo, prNumber, "abad1deaabad1deaabad1deaabad1deaabad1dea")
			if _, err := w.h.ReconcileIssue(ctx, w.gh, owner, repo, w.issue); err != nil {
				t.Fatal(err)
			}
			st, _ := w.fake.LatestStatus(owner, repo, addedSHA, ContextLedger)
			if !strings.Contains(st.Description, "tampering") || st.State != "failure" {
				t.Errorf("%s after deleting comment %d = %+v, want failure for tampering", ContextLedger, tip, st)
			}
		})
	}
}

// TestPagesLinksWriteNoExtraAnchor: an anchor already pointing at the
// newest comment in either form is not written again.
func TestPagesLinksWriteNoExtraAnchor(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.h.PagesURL = pagesURL
	w.postOutcome(seed, source, bot)
	ctx := context.Background()
	if _, err := w.h.ReconcileIssue(ctx, w.gh, owner, repo, w.issue); err != nil {
		t.Fatal(err)
	}
	before := len(w.fake.Statuses(owner, repo, addedSHA))
	if _, err := w.h.ReconcileIssue(ctx, w.gh, owner, repo, w.issue); err != nil {
		t.Fatal(err)
	}
	if after := len(w.fake.Statuses(owner, repo, addedSHA)); after != before {
		t.Errorf("an unchanged thread wrote %d more statuses", after-before)
	}
}

// TestObserveSeesEveryFold: the observer is told of the fold after a
// command is handled (the resolution folded in) and after a reconcile.
func TestObserveSeesEveryFold(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var mu sync.Mutex
	var seen []Folded
	w.h.Observe = func(f Folded) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, f)
	}
	w.postOutcome(seed, source, bot)
	if _, err := w.h.ReconcileIssue(context.Background(), w.gh, owner, repo, w.issue); err != nil {
		t.Fatal(err)
	}
	if len(seen) == 0 || seen[len(seen)-1].State.Outcome(w.state().Outcomes[0].ID) == nil {
		t.Fatalf("after a reconcile the observer saw %d folds, the last without the outcome", len(seen))
	}
	w.say("alice", "/resolve D-002 discard")
	last := seen[len(seen)-1]
	if last.Owner != owner || last.Repo != repo || last.Issue != w.issue {
		t.Fatalf("observed %s/%s#%d", last.Owner, last.Repo, last.Issue)
	}
	if d := last.State.Outcomes[0].Decision("D-002"); d == nil || d.Resolution == nil {
		t.Errorf("the last fold observed after the command does not hold its resolution")
	}
}
