package action

import (
	"fmt"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghfake"
)

// The attacks of issue 18 through the action's real entry points: a final
// decision erased by moving the head or while the pull request is closed,
// an agent approving its own outcome when someone else's event carried it,
// and an approval that no longer covers what it approved. Each case runs
// without and with PHASEGATE_SIGNING_KEY (TestRedTeamAnchorsAndPushers).

const rtBranch = "feature-2" // the fake's head branch of pull request #2

// move pushes files as actor onto the pull request's branch — a new head —
// and runs the action on the pull_request synchronize event, as GitHub
// would. Every earlier commit compares with the new head as GitHub's
// compare API would.
func (rt *redTeam) move(actor string, files map[string]string) string {
	rt.t.Helper()
	rt.head = rt.commit(files)
	rt.fake.Push(rtOwner, rtRepo, ghfake.Push{Ref: rtBranch, After: rt.head, Actor: actor})
	rt.fake.SetPullRequestFiles(rtOwner, rtRepo, rt.pr, rt.diff(rt.base, rt.head))
	for _, sha := range rt.shas[:len(rt.shas)-1] {
		rt.fake.SetComparison(rtOwner, rtRepo, sha, rt.head, ghfake.Comparison{Files: rt.diff(sha, rt.head)})
	}
	rt.runPR("synchronize", actor, "agent-bot", rtBranch)
	return rt.head
}

// runPR runs the action on a pull_request event of #2 sent by sender,
// opened by author, from branch.
func (rt *redTeam) runPR(action, sender, author, branch string) {
	rt.t.Helper()
	ev := map[string]any{
		"action": action, "number": rt.pr,
		"pull_request": map[string]any{"number": rt.pr, "head": map[string]any{"sha": rt.head, "ref": branch}, "base": map[string]any{"sha": rt.base},
			"user": map[string]any{"login": author}},
		"sender":     map[string]any{"login": sender},
		"repository": map[string]any{"default_branch": "main"},
	}
	env := rt.env("pull_request", ev)
	getenv := func(k string) string {
		switch k {
		case "GITHUB_ACTOR", "GITHUB_TRIGGERING_ACTOR":
			return sender
		}
		return env(k)
	}
	if code, log := rt.runAction(getenv); code != exitOK && !(rt.hold && code == exitFindings) {
		rt.t.Fatalf("pull_request %s: exit %d\n%s", action, code, log)
	}
}

func TestRedTeamAnchorsAndPushers(t *testing.T) {
	t.Parallel()
	seedFiles := map[string]string{rtSource: seedOutcome}
	tests := []struct {
		name string
		run  func(rt *redTeam)
	}{
		{name: "1 a final reject erased by moving the head", run: func(rt *redTeam) {
			rt.open(seedFiles)
			cmd := rt.say("carol", "/resolve D-001 reject")
			res := rt.lastBy("github-actions[bot]", "phasegate:resolution")
			before := rt.labels()
			rt.fake.DeleteComment(res.ID) // write access moderates comments
			rt.fake.DeleteComment(cmd)
			rt.move("agent-bot", map[string]string{"src/app.go": "package app\n"})
			rt.say("alice", "/resolve D-001 approve")
			rt.want(!strings.HasPrefix(rt.d001(), "approve"), "the reject was erased and replaced: %s", rt.d001())
			rt.want(strings.Contains(rt.lastBody(), "frozen"), "the approval was not refused as frozen:\n%s", rt.lastBody())
			rt.wantFrozen(before)
		}},
		{name: "2 a final reject erased while the pull request was closed", run: func(rt *redTeam) {
			rt.open(seedFiles)
			rt.fake.SetIssueState(rtOwner, rtRepo, rt.pr, "closed")
			cmd := rt.say("carol", "/resolve D-001 reject")
			res := rt.lastBy("github-actions[bot]", "phasegate:resolution")
			before := rt.labels()
			rt.fake.DeleteComment(res.ID)
			rt.fake.DeleteComment(cmd)
			rt.fake.SetIssueState(rtOwner, rtRepo, rt.pr, "open")
			rt.runPR("reopened", "agent-bot", "agent-bot", rtBranch)
			rt.say("alice", "/resolve D-001 approve")
			rt.want(!strings.HasPrefix(rt.d001(), "approve"), "the reject was erased and replaced: %s", rt.d001())
			rt.wantFrozen(before)
		}},
		{name: "1 every phasegate comment deleted, then the outcome posted again", run: func(rt *redTeam) {
			rt.open(seedFiles)
			rt.say("carol", "/resolve D-001 reject")
			for _, c := range rt.fake.Comments(rtOwner, rtRepo, rt.issue) {
				rt.fake.DeleteComment(c.ID) // the outcome, the reject and its command
			}
			for _, l := range rt.fake.Labels(rtOwner, rtRepo, rt.issue) {
				rt.fake.UnlabelIssue(rtOwner, rtRepo, rt.issue, l)
			}
			rt.head = rt.commit(map[string]string{"src/app.go": "package app\n"})
			rt.fake.Push(rtOwner, rtRepo, ghfake.Push{Ref: rtBranch, After: rt.head, Actor: "agent-bot"})
			rt.fake.SetPullRequestFiles(rtOwner, rtRepo, rt.pr, rt.diff(rt.base, rt.head))
			ev := map[string]any{"action": "synchronize", "number": rt.pr, "sender": map[string]any{"login": "agent-bot"},
				"pull_request": map[string]any{"number": rt.pr, "head": map[string]any{"sha": rt.head, "ref": rtBranch}, "base": map[string]any{"sha": rt.base},
					"user": map[string]any{"login": "agent-bot"}}, "repository": map[string]any{"default_branch": "main"}}
			code, log := rt.runAction(rt.env("pull_request", ev))
			rt.want(code != exitOK && strings.Contains(log, "every phasegate comment of the issue was deleted"),
				"exit %d, want a failed run saying the thread was wiped:\n%s", code, log)
			rt.want(len(rt.state().Outcomes) == 0, "the outcome was posted again on the wiped thread")
			rt.fake.AddComment(rtOwner, rtRepo, rt.issue, "alice", "/resolve D-001 approve")
			rt.reconcile()
			rt.want(rt.d001() == "", "the erased reject was replaced: %s", rt.d001())
			rt.want(rt.decisions().State != "success", "phasegate/decisions after the wipe = %+v", rt.decisions())
		}},
		{name: "3 the agent approves its own outcome after a person opened the pull request", run: func(rt *redTeam) {
			// The agent pushes its branch; a person opens the pull request.
			rt.head = rt.commit(seedFiles)
			rt.fake.Push(rtOwner, rtRepo, ghfake.Push{Ref: "agent/x", After: rt.head, Actor: "agent-bot"})
			rt.pr = rt.fake.AddPullRequest(rtOwner, rtRepo, ghfake.PullRequest{Number: 2, HeadSHA: rt.head, HeadRef: "agent/x", BaseSHA: rt.base, Author: "dave"})
			rt.fake.SetPermission(rtOwner, rtRepo, "dave", "write")
			rt.fake.SetPullRequestFiles(rtOwner, rtRepo, rt.pr, rt.diff(rt.base, rt.head))
			rt.runPR("opened", "dave", "dave", "agent/x")
			rt.want(len(rt.state().Outcomes) == 1, "the outcome was not posted")
			for _, o := range rt.state().Outcomes {
				rt.want(strings.Contains(strings.Join(o.Actors, ","), "agent-bot"), "the outcome records %v, not the agent that pushed its branch", o.Actors)
			}
			rt.say("agent-bot", "/resolve D-001 approve")
			rt.want(rt.d001() == "", "the agent approved its own outcome: %s", rt.d001())
			rt.want(strings.Contains(rt.lastBody(), "pushed"), "reply:\n%s", rt.lastBody())
		}},
		{name: "3 whoever pushed after the outcome was posted may not approve it", run: func(rt *redTeam) {
			rt.open(seedFiles)
			rt.move("alice", map[string]string{"src/app.go": "package app\n"}) // alice merges main into the branch
			rt.say("alice", "/resolve D-001 approve")
			rt.want(rt.d001() == "", "a pusher of the change approved it: %s", rt.d001())
			rt.want(strings.Contains(rt.lastBody(), "you pushed commits"), "reply:\n%s", rt.lastBody())
			rt.say("erin", "/resolve D-001 approve")
			rt.want(strings.HasPrefix(rt.d001(), "approve by erin"), "erin, who pushed nothing, was refused: %s\n%s", rt.d001(), rt.lastBody())
		}},
		{name: "3 a push with no account: nobody can be shown not to have pushed", run: func(rt *redTeam) {
			rt.open(seedFiles)
			rt.move("", map[string]string{"src/app.go": "package app\n"}) // a deploy key
			rt.say("alice", "/resolve D-001 approve")
			rt.want(rt.d001() == "", "resolved although a push has no account: %s", rt.d001())
			rt.want(strings.Contains(rt.lastBody(), "no GitHub account"), "reply:\n%s", rt.lastBody())
		}},
		{name: "4 an approval does not cover a push that rewrites the work", run: func(rt *redTeam) {
			rt.open(seedFiles)
			h1 := rt.head
			rt.say("alice", "/resolve D-001 approve")
			rt.want(rt.decisions().State == "success", "after the approval: %+v", rt.decisions())
			rt.move("agent-bot", map[string]string{"outcomes/feature-001-preq.md": "# PREQ, rewritten\n"})
			st := rt.decisions()
			rt.want(st.State == "pending" && strings.Contains(st.Description, "D-001") && strings.Contains(st.Description, h1[:12]) &&
				strings.Contains(st.Description, "outcomes/feature-001-preq.md"),
				"phasegate/decisions on the new head = %+v, want pending naming D-001, %s and the file", st, h1[:12])
			rt.say("erin", "/resolve D-001 approve") // a person re-confirms on the new head
			rt.want(rt.decisions().State == "success", "after the re-confirmation: %+v\n%s", rt.decisions(), rt.lastBody())
			for _, o := range rt.state().Outcomes {
				d := o.Decision("D-001")
				rt.want(len(d.History) == 2 && d.Resolution.By == "erin" && d.Resolution.Head == rt.head,
					"the ledger keeps %d resolutions, in effect %+v; want both, erin's on %s", len(d.History), d.Resolution, rt.head)
			}
		}},
		{name: "4 a push outside the decision's unit keeps the approval", run: func(rt *redTeam) {
			rt.open(seedFiles)
			rt.say("alice", "/resolve D-001 approve")
			rt.move("agent-bot", map[string]string{"README.md": "shop, now with docs\n"})
			rt.want(rt.decisions().State == "success", "a push outside the unit made the approval stale: %+v", rt.decisions())
			rt.say("erin", "/resolve D-001 approve")
			rt.want(strings.Contains(rt.lastBody(), "already resolved"), "a needless re-confirmation was accepted:\n%s", rt.lastBody())
		}},
		{name: "4 a push never un-rejects", run: func(rt *redTeam) {
			rt.open(seedFiles)
			rt.say("alice", "/resolve D-001 reject")
			rt.move("agent-bot", map[string]string{"outcomes/feature-001-preq.md": "# PREQ, rewritten\n"})
			rt.want(rt.decisions().State == "failure", "a push after a reject: %+v, want failure", rt.decisions())
			rt.say("erin", "/resolve D-001 approve")
			rt.want(strings.HasPrefix(rt.d001(), "reject by alice"), "a rejection was overturned: %s", rt.d001())
			rt.want(rt.decisions().State == "failure", "after a new approve: %+v, want failure", rt.decisions())
		}},
	}
	for _, key := range []string{"", rtKey} {
		mode := map[bool]string{false: "no key", true: "signing key"}[key != ""]
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%s/%s", tc.name, mode), func(t *testing.T) {
				t.Parallel() // each case has its own fake GitHub and repository
				rt := newRedTeam(t, key)
				tc.run(rt)
				if t.Failed() {
					for _, c := range rt.fake.Comments(rtOwner, rtRepo, rt.issue) {
						t.Logf("comment %d by %s:\n%s", c.ID, c.User, c.Body)
					}
					t.Logf("statuses on %s: %+v", rt.head, rt.fake.Statuses(rtOwner, rtRepo, rt.head))
				}
			})
		}
	}
	_ = decide.ContextLedger
}
