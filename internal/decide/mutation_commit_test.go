package decide

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/testutil/outcometest"
)

// Tests of phasegate/decisions as a function of the commit and of the
// reads it costs, from bench/mutation (issue 18): each names the attack it
// stops.

// seedJSON is the seed outcome written as JSON (YAML's flow style), which
// sniffing by content (top-level "phase:" lines) does not recognise.
const seedJSON = `{"phase": "requirements", "feature": "feature-042",
 "produced": [{"artifact": "PREQ", "location": "issue body"}],
 "findings": [{"type": "out-of-scope-item", "title": "User avatar upload sizing",
   "reasoning": "Mentioned by user, not part of this feature's user stories", "proposed_category": "out-of-scope"}],
 "pending_decisions": [
   {"id": "D-001", "type": "approval", "question": "Approve PREQ for technical planning?", "options": ["approve", "request-changes", "reject"], "blocking": true},
   {"id": "D-002", "type": "capture-out-of-scope", "question": "Capture 'User avatar upload sizing' as separate issue?", "options": ["capture", "discard"], "recommended": "capture", "blocking": false}]}
`

// TestMutationCarriedOutcomes: phasegate/decisions of a pull request's head
// counts every Phase Outcome its change carries, however the file is
// written or named: an agent must not turn the status green over an open
// blocking decision by writing its outcome in flow style, or at a path that
// names no outcome (the checking flow finds it by its content), nor by
// adding files up to the bound of candidates.
func TestMutationCarriedOutcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, src string
		junk            int // other YAML files in the change
		wantState       string
	}{
		{name: "at an outcome's path, in flow style", path: source, src: seedJSON, wantState: "pending"},
		{name: "at a path that names no outcome, found by its content", path: "notes/review.yaml", src: seed, wantState: "pending"},
		{name: "with other YAML files, up to the bound of candidates", path: source, src: seed, junk: maxCommitOutcomes - 1, wantState: "pending"},
		{name: "over the bound of candidates", path: source, src: seed, junk: maxCommitOutcomes, wantState: "error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			w := newWorld(t)
			files := []ghfake.File{{Filename: tc.path, Status: "added"}}
			for i := 0; i < tc.junk; i++ {
				name := fmt.Sprintf("config/service-%02d.yaml", i)
				files = append(files, ghfake.File{Filename: name, Status: "added"})
				w.fake.SetFile(owner, repo, headSHA, name, []byte("name: service\n"))
			}
			w.fake.SetPullRequestFiles(owner, repo, prNumber, files)
			w.fake.SetFile(owner, repo, headSHA, tc.path, []byte(tc.src))
			w.fake.SetFile(owner, repo, addedSHA, tc.path, []byte(tc.src))
			body, _ := outcometest.Render(t, tc.src, outcome.Meta{Source: tc.path, Commit: addedSHA, PR: prNumber, Actors: []string{"agent-bot"}})
			w.fake.AddComment(owner, repo, w.issue, bot, body)
			st, err := w.h.SyncCommit(context.Background(), w.gh, owner, repo, headSHA, CommitOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if st.State != tc.wantState {
				t.Errorf("%s = %s (%s), want %s", ContextDecisions, st.State, st.Description, tc.wantState)
			}
		})
	}
}

// TestMutationOutcomeOnItsPullRequest: an outcome whose feature names no
// issue number is decided on the conversation of the pull request that
// carries it; once resolved there, that pull request's phasegate/decisions
// turns success (a status stuck pending would block a decided change).
func TestMutationOutcomeOnItsPullRequest(t *testing.T) {
	t.Parallel()
	src := strings.Replace(seed, "feature: feature-042", "feature: avatar-upload", 1)
	w := newWorld(t)
	w.issue = prNumber // the pull request's conversation
	w.postOutcome(src, source, bot)
	if r, _ := w.say("alice", "/resolve D-001 approve"); r.Resolutions != 1 {
		t.Fatalf("not resolved on the pull request:\n%s", w.lastReply())
	}
	st, err := w.h.SyncCommit(context.Background(), w.gh, owner, repo, headSHA, CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.State != "success" {
		t.Errorf("%s = %s (%s), want success", ContextDecisions, st.State, st.Description)
	}
}

// TestMutationSourceReadBudget: without a key, every outcome comment by
// phasegate's identity costs a read of the file it names. A workflow
// posting as that identity could post hundreds of outcome markers naming
// other files to spend the token's rate limit on every fold: at most
// maxSourceReads files are read per thread, and the outcomes past the bound
// do not count.
func TestMutationSourceReadBudget(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for i := 0; i < maxSourceReads+5; i++ {
		path := fmt.Sprintf("outcomes/forged-%02d.outcome.yaml", i)
		w.fake.AddComment(owner, repo, w.issue, bot, fmt.Sprintf("<!-- phasegate:outcome v1 id=%s source=%s@%s pr=- sig=- -->", strings.Repeat("a", 64), path, addedSHA))
	}
	w.fake.ResetCalls()
	if _, err := w.h.ReconcileIssue(context.Background(), w.gh, owner, repo, w.issue); err != nil {
		t.Fatal(err)
	}
	if n := w.fake.CountCalls("GET", "/repos/"+owner+"/"+repo+"/contents/outcomes/"); n != maxSourceReads {
		t.Errorf("%d outcome files read, want at most %d", n, maxSourceReads)
	}
}

// TestMutationShortSHA: a status that could not be computed names the
// commit by its first 12 hex digits, so that the reason fits the status's
// 140 characters; a shorter name is kept whole.
func TestMutationShortSHA(t *testing.T) {
	t.Parallel()
	for sha, want := range map[string]string{headSHA: "feedfacefeed", "0123456789ab": "0123456789ab", "abc1234": "abc1234"} {
		if got := outcome.ShortSHA(sha); got != want {
			t.Errorf("outcome.ShortSHA(%q) = %q, want %q", sha, got, want)
		}
	}
	const pushedSHA = "abcdefabcdefabcdefabcdefabcdefabcdef0123"
	w := newWorld(t)
	w.fake.AddCommit(owner, repo, ghfake.Commit{SHA: pushedSHA, Author: "agent-bot", Committer: "agent-bot"})
	st, err := w.h.SyncCommit(context.Background(), w.gh, owner, repo, pushedSHA, CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.State != "error" || !strings.Contains(st.Description, "comparing abcdefabcdef with main") {
		t.Errorf("%s = %s (%s), want error naming abcdefabcdef", ContextDecisions, st.State, st.Description)
	}
}
