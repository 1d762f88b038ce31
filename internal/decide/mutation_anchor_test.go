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

// Tests of the thread's anchors and of what a refused command gets, from
// bench/mutation (issue 18): each names the attack it stops.

// resolutionComment is the newest resolution comment on the thread.
func (w *world) resolutionComment() ghfake.Comment {
	w.t.Helper()
	cs := w.fake.Comments(owner, repo, w.issue)
	for i := len(cs) - 1; i >= 0; i-- {
		if strings.Contains(cs[i].Body, "phasegate:resolution") {
			return cs[i]
		}
	}
	w.t.Fatal("no resolution comment on the thread")
	return ghfake.Comment{}
}

// TestMutationNewestCommentDeleted: an agent with write access deletes the
// newest phasegate comment — here a final reject — and its command, to
// reopen the decision. No later phasegate comment names it, so the chain
// cannot show it; the phasegate/decisions status phasegate set on the pull
// request's head points at it (its Details link), and GitHub keeps every
// status: the deletion is tampering, the thread freezes and the status
// turns failure.
func TestMutationNewestCommentDeleted(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.postOutcome(seed, source, bot)
	_, cmd := w.say("alice", "/resolve D-001 reject")
	res := w.resolutionComment()
	st, ok := w.fake.LatestStatus(owner, repo, headSHA, ContextDecisions)
	if want := fmt.Sprintf("#issuecomment-%d", res.ID); !ok || st.State != "failure" || !strings.HasSuffix(st.TargetURL, want) {
		t.Fatalf("%s = %+v, want failure pointing at the resolution (%s)", ContextDecisions, st, want)
	}

	w.fake.DeleteComment(res.ID)
	w.fake.DeleteComment(cmd)
	r, err := w.h.ReconcileIssue(context.Background(), w.gh, owner, repo, w.issue)
	if err != nil {
		t.Fatal(err)
	}
	if r.Tampered != 1 {
		t.Errorf("tampered = %d, want the deleted resolution", r.Tampered)
	}
	if st, _ := w.fake.LatestStatus(owner, repo, headSHA, ContextDecisions); st.State != "failure" || !strings.Contains(st.Description, "tampering") {
		t.Errorf("%s = %+v, want failure naming the tampering", ContextDecisions, st)
	}
	w.say("erin", "/resolve D-001 approve")
	if reply := w.lastReply(); !strings.Contains(reply, "frozen") {
		t.Errorf("a new /resolve after the deletion was not refused:\n%s", reply)
	}
	if _, resolutions := w.phasegateComments(); resolutions != 0 {
		t.Errorf("%d resolution comments after the deletion, want none", resolutions)
	}
}

// TestMutationTamperedOutcomeFailsItsPullRequest: an edited outcome comment
// no longer counts as an outcome, but the pull request its marker names
// still carries it: its phasegate/decisions turns failure (the edit must
// not leave the status unset or pending, to be resolved some other way).
func TestMutationTamperedOutcomeFailsItsPullRequest(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.postOutcome(seed, source, bot)
	cs := w.fake.Comments(owner, repo, w.issue)
	w.fake.EditComment(cs[0].ID, strings.Replace(cs[0].Body, "blocking: true", "blocking: false", 1))
	if _, err := w.h.ReconcileIssue(context.Background(), w.gh, owner, repo, w.issue); err != nil {
		t.Fatal(err)
	}
	if st, ok := w.fake.LatestStatus(owner, repo, headSHA, ContextDecisions); !ok || st.State != "failure" {
		t.Errorf("%s on the pull request = %+v, want failure", ContextDecisions, st)
	}
}

// TestMutationPulledAndPushed: a thread whose outcomes came from a pull
// request and from a commit pushed without one: every such commit gets
// phasegate/decisions (and with it the anchor of the newest comment), not
// only the pull request's head.
func TestMutationPulledAndPushed(t *testing.T) {
	t.Parallel()
	const pushedSHA = "abcdefabcdefabcdefabcdefabcdefabcdef0123"
	const pushedPath = "outcomes/feature-042-technical-plan.outcome.yaml"
	w := newWorld(t)
	w.postOutcome(seed, source, bot)
	plan := strings.Replace(strings.Replace(seed, "phase: requirements", "phase: technical-plan", 1), "Approve PREQ", "Approve the plan", 1)
	files := []ghfake.File{{Filename: pushedPath, Status: "added"}}
	w.fake.AddCommit(owner, repo, ghfake.Commit{SHA: pushedSHA, Author: "agent-bot", Committer: "agent-bot", Files: files})
	w.fake.SetCompare(owner, repo, "main", pushedSHA, files)
	w.fake.SetFile(owner, repo, pushedSHA, pushedPath, []byte(plan))
	body, _ := outcometest.Render(t, plan, outcome.Meta{Source: pushedPath, Commit: pushedSHA, Actors: []string{"agent-bot"}, Prev: w.state().Tip})
	w.fake.AddComment(owner, repo, w.issue, bot, body)

	w.say("alice", "/resolve requirements:D-001 approve")
	res := w.resolutionComment()
	for _, sha := range []string{headSHA, pushedSHA} {
		st, ok := w.fake.LatestStatus(owner, repo, sha, ContextDecisions)
		if !ok || !strings.HasSuffix(st.TargetURL, fmt.Sprintf("#issuecomment-%d", res.ID)) {
			t.Errorf("%s on %s = %+v, want one pointing at the resolution %d", ContextDecisions, outcome.ShortSHA(sha), st, res.ID)
		}
	}
}

// TestMutationRefusedCommands: a command that cannot be carried out at all
// — the thread is frozen, the config on the default branch is invalid —
// gets a reply that says why, the confused reaction, and the statuses say
// why too (attack 7: breaking the config must turn phasegate/decisions to
// error, never leave it as it was); handled again, it is answered once.
func TestMutationRefusedCommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		setup      func(w *world)
		wantReply  string
		wantStatus string
	}{
		{
			name: "the thread is frozen (the outcome was edited)", wantReply: "frozen", wantStatus: "failure",
			setup: func(w *world) {
				cs := w.fake.Comments(owner, repo, w.issue)
				w.fake.EditComment(cs[0].ID, strings.Replace(cs[0].Body, "Approve PREQ", "Approve anything", 1))
			},
		},
		{
			name: "the config is invalid", wantReply: "configuration on the default branch is invalid", wantStatus: "error",
			setup: func(w *world) {
				w.fake.SetFile(owner, repo, "main", ".github/phasegate.yml", []byte("resolvers:\n  permission: everyone\n"))
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			w := newWorld(t)
			w.postOutcome(seed, source, bot)
			tc.setup(w)
			r, cmd := w.say("alice", "/resolve D-001 approve")
			if r.Replies != 1 || r.Resolutions != 0 || !strings.Contains(w.lastReply(), tc.wantReply) {
				t.Errorf("result %+v, reply:\n%s", r, w.lastReply())
			}
			if got := w.reactions(cmd); got != "confused" {
				t.Errorf("reactions = %q, want confused", got)
			}
			if st, ok := w.fake.LatestStatus(owner, repo, headSHA, ContextDecisions); !ok || st.State != tc.wantStatus {
				t.Errorf("%s = %+v, want %s", ContextDecisions, st, tc.wantStatus)
			}
			r, err := w.h.HandleComment(context.Background(), w.gh, Event{Owner: owner, Repo: repo, Issue: w.issue,
				Comment: Comment{ID: cmd, Author: "alice", Body: "/resolve D-001 approve"}})
			if err != nil || r.Skipped != 1 || r.Replies != 0 {
				t.Errorf("handled again: %+v, %v; want skipped once, no reply", r, err)
			}
		})
	}
}

// TestMutationEditedBeforeRead: the webhook carries the command as first
// written; when the thread shows other text (an edit within the same
// second, which GitHub's timestamps do not show), the command is not read:
// neither the delivered text nor the edited one.
func TestMutationEditedBeforeRead(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.postOutcome(seed, source, bot)
	cmd := w.fake.AddComment(owner, repo, w.issue, "alice", "/resolve D-001 approve")
	r, err := w.h.HandleComment(context.Background(), w.gh, Event{Owner: owner, Repo: repo, Issue: w.issue,
		Comment: Comment{ID: cmd, Author: "alice", Body: "/resolve D-001 reject"}})
	if err != nil {
		t.Fatal(err)
	}
	if reply := w.lastReply(); r.Resolutions != 0 || !strings.Contains(reply, "edited since it was posted") {
		t.Errorf("result %+v, reply:\n%s", r, reply)
	}
	if d := w.state().Outcome(id).Decision("D-001"); d.Resolution != nil || w.state().Frozen() {
		t.Errorf("D-001 = %+v, frozen = %v", d.Resolution, w.state().Frozen())
	}
}
