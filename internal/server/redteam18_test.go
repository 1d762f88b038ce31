package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/testutil/outcometest"
)

// Issue 18's attacks through serve's entry points (webhooks, the real
// decision handler, the real GitHub client against the fake GitHub): a
// final decision erased by moving the head or while the pull request is
// closed, GitHub's signed word that phasegate's comment was deleted, the
// agent approving its own outcome when a person opened the pull request,
// and an approval that no longer covers what it approved. Each runs
// without and with a signing key. The outcome (seed, #42) was added by
// addedSHA and carried by pull request #100, whose head is headSHA.

var prBranch = fmt.Sprintf("feature-%d", prNumber) // the fake's head branch of #100

// moveHead pushes sha onto the pull request's branch as actor, changing
// files, and delivers the pull_request synchronize event.
func (h *harness) moveHead(actor, from, sha string, files ...string) {
	h.t.Helper()
	h.fake.SetFile(owner, repo, sha, source, []byte(outcometest.SeedFor(featureIssue)))
	h.fake.Push(owner, repo, ghfake.Push{Ref: prBranch, After: sha, Actor: actor})
	var changed []ghfake.File
	for _, f := range files {
		changed = append(changed, ghfake.File{Filename: f, Status: "modified"})
	}
	h.fake.SetComparison(owner, repo, from, sha, ghfake.Comparison{Files: changed})
	h.deliverOK("pull_request", pullRequestEvent("synchronize", prNumber, sha))
}

// deliverOK delivers a webhook and waits for its job to succeed.
func (h *harness) deliverOK(event string, body []byte) {
	h.t.Helper()
	if code, answer := h.send(delivery{event: event, body: body}); code != http.StatusAccepted {
		h.t.Fatalf("%s delivery: %d %q", event, code, answer)
	}
	if d := h.waitJobs(1)[0]; d.outcome != "ok" {
		h.t.Fatalf("job %+v; logs:\n%s", d, h.logs.String())
	}
}

// wantFrozenAt: the thread is frozen, phasegate/decisions on sha fails for
// tampering, and a new /resolve is refused.
func (h *harness) wantFrozenAt(sha string) {
	h.t.Helper()
	h.command("erin", "/resolve D-001 approve")
	if reply := h.newest(appBot, "phasegate:").Body; !strings.Contains(reply, "frozen") {
		h.t.Errorf("an approval after the deletion was not refused as frozen:\n%s", reply)
	}
	for _, c := range h.fake.Comments(owner, repo, featureIssue) {
		if strings.Contains(c.Body, "option=approve") {
			h.t.Errorf("an approval was recorded:\n%s", c.Body)
		}
	}
	if st, _ := h.fake.LatestStatus(owner, repo, sha, decide.ContextDecisions); st.State != "failure" || !strings.Contains(st.Description, "tampering") {
		h.t.Errorf("%s on %.12s = %+v, want failure for tampering", decide.ContextDecisions, sha, st)
	}
}

const movedSHA = "abad1deaabad1deaabad1deaabad1deaabad1dea"

func TestRedTeamServeIssue18(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"", "serve-red-team-key"} {
		mode := map[bool]string{false: "no key", true: "signing key"}[key != ""]
		t.Run("1 a final reject erased by moving the head/"+mode, func(t *testing.T) {
			t.Parallel() // its own harness
			h := redTeamServe(t, key)
			cmd := h.command("alice", "/resolve D-001 reject")
			res := h.newest(appBot, "phasegate:resolution")
			h.fake.DeleteComment(res.ID) // its deleted delivery is lost
			h.fake.DeleteComment(cmd)
			h.moveHead("agent-bot", headSHA, movedSHA, "src/app.go")
			h.wantFrozenAt(movedSHA)
		})
		t.Run("2 a final reject erased while the pull request was closed/"+mode, func(t *testing.T) {
			t.Parallel() // its own harness
			h := redTeamServe(t, key)
			h.fake.SetIssueState(owner, repo, prNumber, "closed")
			cmd := h.command("alice", "/resolve D-001 reject")
			res := h.newest(appBot, "phasegate:resolution")
			h.fake.DeleteComment(res.ID)
			h.fake.DeleteComment(cmd)
			h.fake.SetIssueState(owner, repo, prNumber, "open")
			h.deliverOK("pull_request", pullRequestEvent("reopened", prNumber, headSHA))
			h.wantFrozenAt(headSHA)
		})
		t.Run("a signed deletion is recorded where every later fold reads it/"+mode, func(t *testing.T) {
			t.Parallel() // its own harness
			h := redTeamServe(t, key)
			cmd := h.command("alice", "/resolve D-001 reject")
			res := h.newest(appBot, "phasegate:resolution")
			h.fake.DeleteComment(res.ID)
			h.fake.DeleteComment(cmd)
			h.deliverOK("issue_comment", commentEvent("deleted", featureIssue, res.ID, appBot, "mallory", res.Body))
			recorded := false
			for _, st := range h.fake.Statuses(owner, repo, addedSHA) {
				recorded = recorded || st.Context == decide.ContextLedger && st.State == "failure" && st.Creator == appBot &&
					strings.HasSuffix(st.TargetURL, fmt.Sprintf("#issuecomment-%d", res.ID))
			}
			if !recorded {
				t.Errorf("no %s failure pointing at the deleted comment on the outcome's commit: %+v", decide.ContextLedger, h.fake.Statuses(owner, repo, addedSHA))
			}
			h.moveHead("agent-bot", headSHA, movedSHA, "src/app.go")
			h.wantFrozenAt(movedSHA)
		})
		t.Run("3 the agent approves its own outcome after a person opened the pull request/"+mode, func(t *testing.T) {
			t.Parallel() // its own harness
			h := redTeamServe(t, key, func(*Config) {})
			h.fake.SetPermission(owner, repo, "agent-bot", "write")
			// The outcome was posted for dave's pull_request opened event: the
			// event named only dave, while agent-bot pushed the branch.
			for _, c := range h.fake.Comments(owner, repo, featureIssue) {
				h.fake.DeleteComment(c.ID)
			}
			h.fake.AddPullRequest(owner, repo, ghfake.PullRequest{Number: prNumber, HeadSHA: headSHA, HeadRef: prBranch, BaseSHA: addedSHA, Author: "dave"})
			yaml := outcometest.SeedFor(featureIssue)
			body, _ := outcometest.Render(t, yaml, outcome.Meta{Source: source, Commit: addedSHA, PR: prNumber, Actors: []string{"dave"}, Key: []byte(key)})
			h.fake.AddComment(owner, repo, featureIssue, appBot, body)
			h.command("agent-bot", "/resolve D-001 approve")
			reply := h.newest(appBot, "phasegate:").Body
			if !strings.Contains(reply, "you pushed commits") {
				t.Errorf("the agent that pushed the branch was not refused:\n%s", reply)
			}
			h.command("erin", "/resolve D-001 approve")
			if st, _ := h.fake.LatestStatus(owner, repo, headSHA, decide.ContextDecisions); st.State != "success" {
				t.Errorf("erin, who pushed nothing, could not approve: %+v\n%s", st, h.newest(appBot, "phasegate:").Body)
			}
		})
		t.Run("4 an approval does not cover a push that rewrites the work/"+mode, func(t *testing.T) {
			t.Parallel() // its own harness
			h := redTeamServe(t, key)
			h.command("alice", "/resolve D-001 approve")
			if st, _ := h.fake.LatestStatus(owner, repo, headSHA, decide.ContextDecisions); st.State != "success" {
				t.Fatalf("after the approval: %+v", st)
			}
			h.moveHead("agent-bot", headSHA, movedSHA, "outcomes/feature-042-preq.md")
			st, _ := h.fake.LatestStatus(owner, repo, movedSHA, decide.ContextDecisions)
			if st.State != "pending" || !strings.Contains(st.Description, "D-001") || !strings.Contains(st.Description, headSHA[:12]) ||
				!strings.Contains(st.Description, "outcomes/feature-042-preq.md") {
				t.Errorf("after a push into the unit: %+v, want pending naming D-001, %.12s and the file", st, headSHA)
			}
			h.command("erin", "/resolve D-001 approve")
			if st, _ := h.fake.LatestStatus(owner, repo, movedSHA, decide.ContextDecisions); st.State != "success" {
				t.Errorf("after the re-confirmation: %+v\n%s", st, h.newest(appBot, "phasegate:").Body)
			}
		})
	}
}
