package action

import (
	"fmt"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/outcome"
)

// The red-team suite (docs/security.md): each attack an agent with write
// access could try on the decision ledger, driven through the action's real
// entry points (pull_request, issue_comment, schedule) against the fake
// GitHub, which edits and deletes comments as GitHub does. Every case runs
// without and with PHASEGATE_SIGNING_KEY.

const (
	rtOwner, rtRepo = "acme", "shop"
	rtSource        = "outcomes/feature-001-requirements.outcome.yaml"
	rtKey           = "red-team-signing-key"
)

// redTeam is a repository whose pull request #2, pushed by agent-bot, added
// the seed outcome for feature-001; the action posted it on issue #1.
type redTeam struct {
	*repoFixture
	t          *testing.T
	key        string
	head, base string
	pr         int
	hold       bool // the pull request run may exit 1 (findings)
}

func newRedTeam(t *testing.T, key string) *redTeam {
	t.Helper()
	f := newRepoFixture(t)
	rt := &redTeam{repoFixture: f, t: t, key: key}
	for login, role := range map[string]string{"alice": "write", "erin": "admin", "bob": "read", "agent-bot": "write", "carol": "write"} {
		f.fake.SetPermission(rtOwner, rtRepo, login, role)
	}
	rt.base = f.commit(map[string]string{"README.md": "shop\n"})
	return rt
}

// env is the action's environment, with the signing key when the case
// runs with one.
func (rt *redTeam) env(event string, payload any) func(string) string {
	extra := map[string]string{}
	if rt.key != "" {
		extra["PHASEGATE_SIGNING_KEY"] = rt.key
	}
	return rt.repoFixture.env(event, payload, extra)
}

// open pushes files as agent-bot on pull request #2 and runs the action on
// it.
func (rt *redTeam) open(files map[string]string) { rt.openBy(files, "", false) }

// openBy is open, with the head commit's author as GitHub links it (an
// e-mail address anyone can write) and whether its signature is verified.
func (rt *redTeam) openBy(files map[string]string, author string, verified bool) {
	rt.t.Helper()
	rt.head = rt.commit(files)
	if author != "" {
		rt.fake.AddCommit(rtOwner, rtRepo, ghfake.Commit{SHA: rt.head, Author: author, Committer: author, Verified: verified})
	}
	rt.pr = rt.fake.AddPullRequest(rtOwner, rtRepo, ghfake.PullRequest{Number: 2, HeadSHA: rt.head, BaseSHA: rt.base, Author: "agent-bot"})
	rt.fake.SetPullRequestFiles(rtOwner, rtRepo, rt.pr, rt.diff(rt.base, rt.head))
	ev := map[string]any{
		"action": "opened", "number": rt.pr,
		"pull_request": map[string]any{"number": rt.pr, "head": map[string]any{"sha": rt.head}, "base": map[string]any{"sha": rt.base},
			"user": map[string]any{"login": "agent-bot"}},
		"sender":     map[string]any{"login": "agent-bot"},
		"repository": map[string]any{"default_branch": "main"},
	}
	if code, log := rt.runAction(rt.env("pull_request", ev)); code != exitOK && !(rt.hold && code == exitFindings) {
		rt.t.Fatalf("pull_request: exit %d\n%s", code, log)
	}
}

// say posts a comment on issue #1 as login and runs the action on it.
func (rt *redTeam) say(login, body string) int64 {
	rt.t.Helper()
	id := rt.fake.AddComment(rtOwner, rtRepo, rt.issue, login, body)
	rt.deliver(id, login, body)
	return id
}

func (rt *redTeam) deliver(id int64, login, body string) {
	rt.t.Helper()
	ev := map[string]any{
		"action":     "created",
		"issue":      map[string]any{"number": rt.issue},
		"comment":    map[string]any{"id": id, "body": body, "user": map[string]any{"login": login, "type": "User"}},
		"repository": map[string]any{"default_branch": "main"},
	}
	if code, log := rt.runAction(rt.env("issue_comment", ev)); code != exitOK {
		rt.t.Fatalf("issue_comment by %s: exit %d\n%s", login, code, log)
	}
}

// reconcile runs the scheduled reconcile.
func (rt *redTeam) reconcile() string {
	rt.t.Helper()
	code, log := rt.runAction(rt.env("schedule", map[string]any{}))
	if code != exitOK {
		rt.t.Fatalf("schedule: exit %d\n%s", code, log)
	}
	return log
}

// state folds issue #1 as phasegate sees it.
func (rt *redTeam) state() *ledger.State {
	var cs []ledger.Comment
	for _, c := range rt.fake.Comments(rtOwner, rtRepo, rt.issue) {
		cs = append(cs, ledger.Comment{ID: c.ID, Author: c.User, Body: c.Body, CreatedAt: c.CreatedAt, Edited: c.UpdatedAt.After(c.CreatedAt)})
	}
	var key []byte
	if rt.key != "" {
		key = []byte(rt.key)
	}
	return ledger.Fold(cs, ledger.Options{Identity: "github-actions[bot]", Key: key})
}

// d001 is D-001's resolution as the untampered ledger reads it ("" when
// unresolved).
func (rt *redTeam) d001() string {
	for _, o := range rt.state().Outcomes {
		if d := o.Decision("D-001"); d != nil && d.Resolution != nil {
			return d.Resolution.Option + " by " + d.Resolution.By
		}
	}
	return ""
}

func (rt *redTeam) decisions() ghfake.Status {
	st, _ := rt.fake.LatestStatus(rtOwner, rtRepo, rt.head, decide.ContextDecisions)
	return st
}

func (rt *redTeam) labels() string {
	return strings.Join(rt.fake.Labels(rtOwner, rtRepo, rt.issue), ",")
}

func (rt *redTeam) lastBody() string {
	cs := rt.fake.Comments(rtOwner, rtRepo, rt.issue)
	return cs[len(cs)-1].Body
}

// lastBy is the newest comment by login.
func (rt *redTeam) lastBy(login, contains string) ghfake.Comment {
	cs := rt.fake.Comments(rtOwner, rtRepo, rt.issue)
	for i := len(cs) - 1; i >= 0; i-- {
		if cs[i].User == login && strings.Contains(cs[i].Body, contains) {
			return cs[i]
		}
	}
	rt.t.Fatalf("no comment by %s holding %q", login, contains)
	return ghfake.Comment{}
}

// resolutionBody is a resolution comment as phasegate renders it (what an
// attacker edits another comment into, or a racing run posts).
func (rt *redTeam) resolutionBody(option, by string, command, prev int64) string {
	rt.t.Helper()
	var id string
	for _, o := range rt.state().Outcomes {
		id = o.ID
	}
	var key []byte
	if rt.key != "" {
		key = []byte(rt.key)
	}
	body, err := outcome.RenderResolution(outcome.Resolution{Outcome: id, Decision: "D-001", Option: option, By: by, Command: command, Auth: "write", Prev: prev}, key)
	if err != nil {
		rt.t.Fatal(err)
	}
	return body
}

func (rt *redTeam) want(cond bool, format string, args ...any) {
	rt.t.Helper()
	if !cond {
		rt.t.Errorf(format, args...)
	}
}

// wantFrozen: tampering turns phasegate/decisions to failure, moves no
// label, and a new /resolve is refused.
func (rt *redTeam) wantFrozen(before string) {
	rt.t.Helper()
	st := rt.decisions()
	rt.want(st.State == "failure" && strings.Contains(st.Description, "tampering"), "phasegate/decisions = %+v, want failure for tampering", st)
	rt.want(rt.labels() == before, "labels moved from %q to %q after tampering", before, rt.labels())
	rt.say("erin", "/resolve D-001 approve")
	rt.want(strings.Contains(rt.lastBody(), "frozen"), "a /resolve after tampering was not refused as frozen:\n%s", rt.lastBody())
	rt.want(rt.decisions().State == "failure", "phasegate/decisions after a new /resolve = %+v, want failure", rt.decisions())
}

func TestRedTeam(t *testing.T) {
	t.Parallel()
	seedFiles := map[string]string{rtSource: seedOutcome}
	tests := []struct {
		name string
		run  func(rt *redTeam)
	}{
		{name: "1 a refusal edited into an approval", run: func(rt *redTeam) {
			rt.open(seedFiles)
			cmd := rt.say("bob", "/resolve D-001 approve") // bob has read: refused
			refusal := rt.lastBy("github-actions[bot]", "you cannot resolve")
			before := rt.labels()
			rt.fake.EditComment(refusal.ID, rt.resolutionBody("approve", "bob", cmd, refusal.ID-1))
			rt.reconcile()
			rt.want(rt.decisions().State != "success", "an edited refusal made phasegate/decisions %+v", rt.decisions())
			rt.wantFrozen(before)
		}},
		{name: "1 a reject resolution edited into an approve", run: func(rt *redTeam) {
			rt.open(seedFiles)
			rt.say("alice", "/resolve D-001 reject")
			res := rt.lastBy("github-actions[bot]", "phasegate:resolution")
			before := rt.labels()
			rt.want(rt.decisions().State == "failure", "after reject: %+v", rt.decisions())
			rt.fake.EditComment(res.ID, strings.Replace(res.Body, "reject", "approve", -1))
			rt.reconcile()
			rt.want(!strings.HasPrefix(rt.d001(), "approve"), "the edited resolution counts: %s", rt.d001())
			rt.wantFrozen(before)
		}},
		{name: "2 a person's comment edited into a command", run: func(rt *redTeam) {
			rt.open(seedFiles)
			id := rt.say("alice", "Looks good so far, still reading.")
			rt.fake.EditComment(id, "Looks good so far, still reading.\n/resolve D-001 approve")
			rt.deliver(id, "alice", "Looks good so far, still reading.\n/resolve D-001 approve") // even if an event claims it
			rt.reconcile()
			rt.want(rt.d001() == "", "an edited comment resolved D-001: %s", rt.d001())
			rt.want(strings.Contains(rt.lastBody(), "edited"), "the reply does not say edits are not read:\n%s", rt.lastBody())
			rt.want(rt.decisions().State == "pending", "phasegate/decisions = %+v, want pending", rt.decisions())
		}},
		{name: "3 a final reject and its command deleted", run: func(rt *redTeam) {
			rt.open(seedFiles)
			cmd := rt.say("alice", "/resolve D-001 reject")
			res := rt.lastBy("github-actions[bot]", "phasegate:resolution")
			before := rt.labels()
			rt.fake.DeleteComment(res.ID)
			rt.fake.DeleteComment(cmd)
			rt.reconcile()
			rt.want(rt.d001() == "", "state after deletion: %s", rt.d001())
			rt.wantFrozen(before)
		}},
		{name: "3 a final reject deleted on an outcome pushed without a pull request", run: func(rt *redTeam) {
			rt.head = rt.commit(seedFiles)
			if code, log := rt.runAction(rt.env("push", pushEvent(rt.base, rt.head))); code != exitOK {
				rt.t.Fatalf("push: exit %d\n%s", code, log)
			}
			cmd := rt.say("alice", "/resolve D-001 reject")
			res := rt.lastBy("github-actions[bot]", "phasegate:resolution")
			before := rt.labels()
			rt.want(rt.decisions().State == "failure" && strings.HasSuffix(rt.decisions().TargetURL, fmt.Sprintf("#issuecomment-%d", res.ID)),
				"after reject: %+v, want failure anchored at the resolution %d", rt.decisions(), res.ID)
			rt.fake.DeleteComment(res.ID)
			rt.fake.DeleteComment(cmd)
			rt.reconcile()
			rt.want(rt.d001() == "", "state after deletion: %s", rt.d001())
			rt.wantFrozen(before)
		}},
		{name: "4 a spoofed reviewer e-mail does not block the reviewer", run: func(rt *redTeam) {
			rt.openBy(seedFiles, "alice", false) // an unsigned commit claiming alice's e-mail
			rt.say("alice", "/resolve D-001 approve")
			rt.want(strings.HasPrefix(rt.d001(), "approve by alice"), "alice, named by an unsigned commit, was blocked: %s\n%s", rt.d001(), rt.lastBody())
		}},
		{name: "4 the author of a verified commit is blocked", run: func(rt *redTeam) {
			rt.openBy(seedFiles, "carol", true)
			rt.say("carol", "/resolve D-001 approve")
			rt.want(rt.d001() == "", "the verified author approved: %s", rt.d001())
			rt.want(strings.Contains(rt.lastBody(), "pushed or authored"), "reply:\n%s", rt.lastBody())
		}},
		{name: "5 an approval written before the outcome was posted", run: func(rt *redTeam) {
			early := rt.fake.AddComment(rtOwner, rtRepo, rt.issue, "alice", "/resolve D-001 approve")
			rt.open(seedFiles)
			rt.deliver(early, "alice", "/resolve D-001 approve")
			rt.reconcile()
			rt.want(rt.d001() == "", "an approval written before the outcome landed on it: %s", rt.d001())
		}},
		{name: "6 two runs raced: the earlier command wins and the loser is told", run: func(rt *redTeam) {
			rt.open(seedFiles)
			first := rt.fake.AddComment(rtOwner, rtRepo, rt.issue, "alice", "/resolve D-001 approve")
			second := rt.fake.AddComment(rtOwner, rtRepo, rt.issue, "erin", "/resolve D-001 reject")
			// A run that saw only erin's command posts its resolution first,
			// then alice's is resolved by another run.
			tip := rt.state().Tip
			lost := rt.fake.AddComment(rtOwner, rtRepo, rt.issue, "github-actions[bot]", rt.resolutionBody("reject", "erin", second, tip))
			rt.fake.AddComment(rtOwner, rtRepo, rt.issue, "github-actions[bot]", rt.resolutionBody("approve", "alice", first, lost))
			rt.reconcile()
			rt.want(strings.HasPrefix(rt.d001(), "approve by alice"), "winner = %s, want alice's earlier approve", rt.d001())
			rt.want(strings.Contains(rt.lastBody(), "already resolved by an earlier command") && strings.Contains(rt.lastBody(), "@erin"),
				"the losing command was not told:\n%s", rt.lastBody())
			rt.want(rt.decisions().State == "success", "phasegate/decisions = %+v, want success", rt.decisions())
			n := len(rt.fake.Comments(rtOwner, rtRepo, rt.issue))
			rt.reconcile()
			rt.want(len(rt.fake.Comments(rtOwner, rtRepo, rt.issue)) == n, "a second reconcile answered again")
		}},
		{name: "6 deliveries in the wrong order: position on the thread decides", run: func(rt *redTeam) {
			rt.open(seedFiles)
			first := rt.fake.AddComment(rtOwner, rtRepo, rt.issue, "alice", "/resolve D-001 approve")
			second := rt.fake.AddComment(rtOwner, rtRepo, rt.issue, "erin", "/resolve D-001 reject")
			rt.deliver(second, "erin", "/resolve D-001 reject")
			rt.deliver(first, "alice", "/resolve D-001 approve")
			rt.want(strings.HasPrefix(rt.d001(), "approve by alice"), "winner = %s, want alice's earlier approve", rt.d001())
			rt.want(strings.Contains(rt.lastBy("github-actions[bot]", "already resolved").Body, "@erin"), "erin was not told")
		}},
		{name: "7 an invalid config accepts no resolution", run: func(rt *redTeam) {
			rt.fake.SetFile(rtOwner, rtRepo, "main", ".github/phasegate.yml", []byte("resolvers:\n  exclude: [agent-bot]\n  permision: admin\n"))
			rt.hold = true // the invalid config is a finding of the check too
			rt.open(seedFiles)
			rt.say("alice", "/resolve D-001 approve")
			rt.want(rt.d001() == "", "a resolution was accepted under an invalid config: %s", rt.d001())
			rt.want(strings.Contains(rt.lastBody(), "configuration") && strings.Contains(rt.lastBody(), "invalid"), "reply:\n%s", rt.lastBody())
			st := rt.decisions()
			rt.want(st.State == "error" && strings.Contains(st.Description, "config"), "phasegate/decisions = %+v, want error naming the config", st)
		}},
		{name: "9 a lost command on an issue that is not pending is found", run: func(rt *redTeam) {
			rt.open(seedFiles)
			for _, l := range rt.fake.Labels(rtOwner, rtRepo, rt.issue) { // someone took the labels off
				rt.fake.UnlabelIssue(rtOwner, rtRepo, rt.issue, l)
			}
			rt.fake.AddComment(rtOwner, rtRepo, rt.issue, "alice", "/resolve D-001 approve") // its delivery was lost
			rt.reconcile()
			rt.want(strings.HasPrefix(rt.d001(), "approve by alice"), "reconcile missed the command: %s", rt.d001())
		}},
		{name: "10 a renamed outcome file is an immutability finding", run: func(rt *redTeam) {
			rt.base = rt.commit(seedFiles)
			rt.hold = true
			rt.open(map[string]string{rtSource: "", "outcomes/feature-001-requirements-v2.outcome.yaml": seedOutcome})
			code, log := rt.runAction(rt.env("pull_request", map[string]any{"action": "synchronize", "number": rt.pr, "sender": map[string]any{"login": "agent-bot"},
				"pull_request": map[string]any{"number": rt.pr, "head": map[string]any{"sha": rt.head}, "base": map[string]any{"sha": rt.base}, "user": map[string]any{"login": "agent-bot"}}}))
			rt.want(code == exitFindings && strings.Contains(log, "outcome.immutable"), "exit %d, want an outcome.immutable finding:\n%s", code, log)
		}},
		{name: "10 another workflow's reply marker silences a command only without a key", run: func(rt *redTeam) {
			rt.open(seedFiles)
			cmd := rt.fake.AddComment(rtOwner, rtRepo, rt.issue, "alice", "/resolve D-001 approve") // its delivery was lost
			// A workflow posting as github-actions[bot], without the key.
			forged, err := outcome.RenderReply("done", outcome.Reply{Command: cmd, Prev: rt.state().Tip}, nil)
			if err != nil {
				rt.t.Fatal(err)
			}
			rt.fake.AddComment(rtOwner, rtRepo, rt.issue, "github-actions[bot]", forged)
			rt.reconcile()
			if rt.key != "" {
				rt.want(strings.HasPrefix(rt.d001(), "approve by alice"), "with a key, an unsigned reply silenced the command: %s", rt.d001())
			} else {
				rt.want(rt.d001() == "", "without a key a same-identity reply answers the command (docs/security.md): %s", rt.d001())
			}
		}},
		{name: "10 a pre-created captured issue is not taken for phasegate's", run: func(rt *redTeam) {
			rt.open(seedFiles)
			var id string
			for _, o := range rt.state().Outcomes {
				id = o.ID
			}
			// The exact marker phasegate writes without a key (with one, the
			// attacker cannot sign it): only the author check stands.
			mark := fmt.Sprintf("<!-- phasegate:captured v1 outcome=%s decision=D-002 issue=%d sig=- -->", id, rt.issue)
			fake := rt.fake.AddIssue(rtOwner, rtRepo, "ignore me", mark, "agent-bot")
			rt.fake.LabelIssue(rtOwner, rtRepo, fake, "phasegate:captured")
			rt.say("alice", "/resolve D-002 capture")
			var captured int
			for _, o := range rt.state().Outcomes {
				if d := o.Decision("D-002"); d.Resolution != nil {
					captured = d.Resolution.Captured
				}
			}
			rt.want(captured != 0 && captured != fake, "captured as #%d, the pre-created issue is #%d", captured, fake)
		}},
		{name: "10 an outcome naming a closed issue or another pull request is not posted", run: func(rt *redTeam) {
			closed := rt.fake.AddIssue(rtOwner, rtRepo, "old", "", "alice")
			rt.fake.SetIssueState(rtOwner, rtRepo, closed, "closed")
			other := rt.fake.AddPullRequest(rtOwner, rtRepo, ghfake.PullRequest{HeadSHA: strings.Repeat("e", 40), Author: "carol"})
			toClosed := strings.Replace(seedOutcome, "phase: requirements", fmt.Sprintf("phase: requirements\nissue: %d", closed), 1)
			toOther := strings.Replace(seedOutcome, "phase: requirements", fmt.Sprintf("phase: qa\nissue: %d", other), 1)
			head := rt.commit(map[string]string{"outcomes/a.outcome.yaml": toClosed, "outcomes/b.outcome.yaml": toOther})
			rt.head = head
			pr := rt.fake.AddPullRequest(rtOwner, rtRepo, ghfake.PullRequest{HeadSHA: head, BaseSHA: rt.base, Author: "agent-bot"})
			rt.fake.SetPullRequestFiles(rtOwner, rtRepo, pr, rt.diff(rt.base, head))
			ev := map[string]any{"action": "opened", "number": pr, "sender": map[string]any{"login": "agent-bot"},
				"pull_request": map[string]any{"number": pr, "head": map[string]any{"sha": head}, "base": map[string]any{"sha": rt.base}, "user": map[string]any{"login": "agent-bot"}}}
			code, log := rt.runAction(rt.env("pull_request", ev))
			rt.want(code == exitFindings, "exit %d, want %d (findings)\n%s", code, exitFindings, log)
			rt.want(len(rt.fake.Comments(rtOwner, rtRepo, closed)) == 0 && len(rt.fake.Comments(rtOwner, rtRepo, other)) == 0, "an outcome was posted where it must not be")
			rt.want(strings.Count(log, "outcome.issue-open") >= 2, "no outcome.issue-open findings:\n%s", log)
		}},
		{name: "10 at most outcome.max_per_push outcomes are posted", run: func(rt *redTeam) {
			rt.fake.SetFile(rtOwner, rtRepo, "main", ".github/phasegate.yml", []byte("outcome:\n  max_per_push: 2\n"))
			files := map[string]string{}
			for i := 0; i < 3; i++ {
				files[fmt.Sprintf("outcomes/o%d.outcome.yaml", i)] = strings.Replace(seedOutcome, "produced:", fmt.Sprintf("produced:\n  - artifact: part %d\n    location: here", i), 1)
			}
			head := rt.commit(files)
			rt.head = head
			pr := rt.fake.AddPullRequest(rtOwner, rtRepo, ghfake.PullRequest{HeadSHA: head, BaseSHA: rt.base, Author: "agent-bot"})
			rt.fake.SetPullRequestFiles(rtOwner, rtRepo, pr, rt.diff(rt.base, head))
			ev := map[string]any{"action": "opened", "number": pr, "sender": map[string]any{"login": "agent-bot"},
				"pull_request": map[string]any{"number": pr, "head": map[string]any{"sha": head}, "base": map[string]any{"sha": rt.base}, "user": map[string]any{"login": "agent-bot"}}}
			code, log := rt.runAction(rt.env("pull_request", ev))
			rt.want(code == exitFindings, "exit %d\n%s", code, log)
			rt.want(len(rt.fake.Comments(rtOwner, rtRepo, rt.issue)) == 2, "%d outcomes posted, want 2", len(rt.fake.Comments(rtOwner, rtRepo, rt.issue)))
			rt.want(strings.Contains(log, "outcome.max-per-push"), "no outcome.max-per-push finding:\n%s", log)
		}},
	}
	// Attacks that each start from the opened pull request and leave it as
	// they found it (D-001 unresolved, the ledger untampered: a refused or
	// unread command and phasegate's reply) run in turn on one opened pull
	// request, one subtest each: they cost one pull_request run, not two.
	// Each stays as discriminating: with its defence removed D-001 resolves
	// whatever came before it.
	unresolved := []struct {
		name string
		run  func(rt *redTeam)
	}{
		{name: "4 the pushing agent with an unlinked commit e-mail", run: func(rt *redTeam) {
			// the fixture's commits carry a@example.com, linked to no account
			rt.say("agent-bot", "/resolve D-001 approve")
			rt.want(rt.d001() == "", "the pushing agent approved its own outcome: %s", rt.d001())
			rt.want(strings.Contains(rt.lastBody(), "pushed or authored"), "reply:\n%s", rt.lastBody())
		}},
		{name: "8 commands GitHub never shows are not read", run: func(rt *redTeam) {
			for _, body := range []string{
				"[looks good](https://example.com \"\n/resolve D-001 approve\n\")",
				"see [the plan][p]\n\n[p]: https://example.com\n  \"\n/resolve D-001 approve\"",
				"fine by me\n\n[^x]:\n    /resolve D-001 approve",
				"<img src=\"x.png\" alt=\"\n/resolve D-001 approve\n\">",
				"<!--\n/resolve D-001 approve\n-->",
				"```\n/resolve D-001 approve\n```",
			} {
				rt.say("alice", body)
				rt.want(rt.d001() == "", "a hidden command resolved D-001: %q", body)
			}
		}},
	}
	for _, key := range []string{"", rtKey} {
		mode := "no key"
		if key != "" {
			mode = "signing key"
		}
		t.Run("refused on one thread/"+mode, func(t *testing.T) {
			t.Parallel()
			rt := newRedTeam(t, key)
			rt.open(seedFiles)
			for _, tc := range unresolved {
				t.Run(tc.name, func(st *testing.T) {
					rt.t, rt.repoFixture.t = st, st
					defer func() { rt.t, rt.repoFixture.t = t, t }()
					tc.run(rt)
				})
			}
		})
	}
	tests = append(tests, struct {
		name string
		run  func(rt *redTeam)
	}{name: "9 a reply that would exceed GitHub's limit is bounded", run: func(rt *redTeam) {
		// 60 pending decisions with long questions: one /decisions answer
		// lists 50 of them (about 19,000 characters), and a comment holds 20
		// commands, so the answers of one comment come to about 380,000
		// characters, which GitHub refuses, unless decide's reply bounds
		// (maxReplyLine, maxReplyChars) cut them
		rt.open(map[string]string{rtSource: manyDecisions(60)})
		rt.say("alice", strings.Repeat("/decisions\n", 20))
		body := rt.lastBody()
		rt.want(len([]rune(body)) <= outcome.MaxCommentLength && strings.Contains(body, "phasegate:reply"), "reply of %d characters", len([]rune(body)))
		rt.want(strings.Count(body, "`D-0") > 50, "the reply lists %d decisions, want the first answer's at least", strings.Count(body, "`D-0"))
	}})
	for _, tc := range tests {
		for _, key := range []string{"", rtKey} {
			mode := "no key"
			if key != "" {
				mode = "signing key"
			}
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				t.Parallel() // each case has its own fake GitHub and repository
				tc.run(newRedTeam(t, key))
			})
		}
	}
}

// manyDecisions is the seed outcome with n pending decisions, each with a
// question of about 350 characters.
func manyDecisions(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "  - id: D-%03d\n    type: approval\n    question: \"Approve part %d? %s\"\n    options: [approve, reject]\n    blocking: false\n",
			i+1, i+1, strings.Repeat("Is the plan sound and complete. ", 11))
	}
	head, _, _ := strings.Cut(seedOutcome, "pending_decisions:\n")
	return head + "pending_decisions:\n" + b.String()
}
