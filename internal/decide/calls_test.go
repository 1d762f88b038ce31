package decide

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/ghfake"
)

// TestAPICallsPerResolve counts the GitHub API calls of one /resolve on an
// issue with 203 comments: the comment pages (3 at 100 per page: the first,
// a middle and the last) plus a small constant. A second command on the
// unchanged thread re-reads the pages with conditional requests only (ETag
// → 304, free of rate limit). (It was 1,000 comments, 10 pages, then 300:
// the same counts; a last page of 3 comments rather than 99 asserts the
// same, at two thirds of the JSON under -race.)
func TestAPICallsPerResolve(t *testing.T) {
	t.Parallel() // seconds of JSON under -race; its world is its own
	w := newWorld(t)
	w.postOutcome(seed, source, bot)
	// 199 + the outcome + a command = 201 comments when the first command
	// is handled, and with its reply and a second command 203 when the
	// /resolve is: 3 pages of 100 both times (crossing a page boundary
	// would change every page's Link header, and so its ETag).
	for i := 0; i < 199; i++ {
		w.fake.AddComment(owner, repo, w.issue, "chatter", fmt.Sprintf("comment %d: looks good so far", i))
	}
	ctx := context.Background()
	// A first command warms the client's ETag cache, and a pull request
	// sync the handler's reads of the pull request's files, as a
	// long-running server's would be; then the measured /resolve.
	w.say("alice", "/decisions")
	// As a long-running server would have, when the pull request opened.
	if err := w.h.SyncPullRequest(ctx, w.gh, owner, repo, prNumber); err != nil {
		t.Fatal(err)
	}
	w.fake.ResetCalls()
	w.say("alice", "/resolve D-001 approve")
	calls := w.fake.Calls()
	pages, conditional, others := 0, 0, map[string]int{}
	for _, c := range calls {
		if c.Method == "GET" && strings.HasSuffix(c.Path, fmt.Sprintf("/issues/%d/comments", w.issue)) {
			pages++
			if c.Status == 304 {
				conditional++
			}
			continue
		}
		others[c.Method+" "+route(c.Path)]++
	}
	n := 0
	var lines []string
	for k, v := range others {
		n += v
		lines = append(lines, fmt.Sprintf("%s ×%d", k, v))
	}
	sort.Strings(lines)
	t.Logf("/resolve on an issue with %d comments: %d calls = %d comment-page reads (%d answered 304) + %d others:\n  %s",
		len(w.fake.Comments(owner, repo, w.issue)), len(calls), pages, conditional, n, strings.Join(lines, "\n  "))
	if pages != 3 {
		t.Errorf("%d comment-page reads, want 3 (299 comments at 100 per page)", pages)
	}
	if conditional < 2 {
		t.Errorf("%d of the pages answered 304, want the 2 that did not change", conditional)
	}
	comments := len(w.fake.Comments(owner, repo, w.issue))
	if budget := 10 + (comments+99)/100; len(calls) > budget {
		t.Errorf("%d calls for a /resolve on %d comments, want at most %d (10 plus one per 100 comments)", len(calls), comments, budget)
	}

	// An unchanged thread costs only conditional requests: the first
	// reconcile reads the resolution the /resolve posted, the second finds
	// nothing new.
	for i := 0; i < 2; i++ {
		w.fake.ResetCalls()
		if _, err := w.h.ReconcileIssue(ctx, w.gh, owner, repo, w.issue); err != nil {
			t.Fatal(err)
		}
	}
	refold := 0
	for _, c := range w.fake.Calls() {
		if c.Method != "GET" {
			t.Errorf("re-fold of an unchanged issue wrote: %s %s", c.Method, c.Path)
		}
		if !c.Conditional || c.Status != 304 {
			t.Errorf("re-fold of an unchanged issue: %s %s?%s answered %d (conditional %v), want a 304, free of rate limit", c.Method, c.Path, c.Query, c.Status, c.Conditional)
		}
		refold++
	}
	t.Logf("re-fold of the unchanged issue: %d calls, no write, every one a conditional GET answered 304 (no primary rate limit)", refold)
}

// route folds ids out of a path, for counting calls by endpoint.
func route(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if s != "" && strings.Trim(s, "0123456789") == "" {
			parts[i] = "N"
		}
	}
	return strings.Join(parts, "/")
}

// TestAPICallsPerResolveCold measures the same /resolve as a process that
// starts for it (the action: no ETag cache, no pushers read before), for
// the record; the budget above is the long-running App's.
func TestAPICallsPerResolveCold(t *testing.T) {
	t.Parallel() // seconds of JSON under -race; its world is its own
	w := newWorld(t)
	w.postOutcome(seed, source, bot)
	for i := 0; i < 199; i++ { // 201 comments with the command: 3 pages
		w.fake.AddComment(owner, repo, w.issue, "chatter", fmt.Sprintf("comment %d: looks good so far", i))
	}
	w.fake.ResetCalls()
	w.say("alice", "/resolve D-001 approve")
	calls := w.fake.Calls()
	others := map[string]int{}
	for _, c := range calls {
		others[c.Method+" "+route(c.Path)]++
	}
	var lines []string
	for k, v := range others {
		lines = append(lines, fmt.Sprintf("%s ×%d", k, v))
	}
	sort.Strings(lines)
	t.Logf("cold /resolve on an issue with %d comments: %d calls:\n  %s", len(w.fake.Comments(owner, repo, w.issue)), len(calls), strings.Join(lines, "\n  "))
	// A fresh process also reads what the App keeps between deliveries:
	// the config, the outcome file at its commit and at the head, the pull
	// request's files and who pushed its branch.
	comments := len(w.fake.Comments(owner, repo, w.issue))
	if budget := 10 + (comments+99)/100 + 5; len(calls) > budget {
		t.Errorf("%d calls for a cold /resolve on %d comments, want at most %d", len(calls), comments, budget)
	}
}

// TestOutcomeFileReadOncePerCommit: syncing a commit that carries an
// outcome reads the outcome file at that commit once, though both the
// outcomes it carries and the marker's source check of the thread (the
// fold's readSources) need it: a commit's content never changes.
func TestOutcomeFileReadOncePerCommit(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.postOutcome(seed, source, bot)
	w.fake.SetCompare(owner, repo, "main", addedSHA, []ghfake.File{{Filename: source, Status: "added"}})
	w.fake.ResetCalls()
	st, err := w.h.SyncCommit(context.Background(), w.gh, owner, repo, addedSHA, CommitOptions{})
	if err != nil || st.State != "pending" {
		t.Fatalf("SyncCommit = %+v, %v; want pending (D-001 open)", st, err)
	}
	reads := 0
	for _, c := range w.fake.Calls() {
		if c.Method == "GET" && c.Path == "/repos/"+owner+"/"+repo+"/contents/"+source && strings.Contains(c.Query, "ref="+addedSHA) {
			reads++
		}
	}
	if reads != 1 {
		t.Errorf("%s at %s read %d times, want once: %v", source, addedSHA, reads, w.fake.Calls())
	}
}
