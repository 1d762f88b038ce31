package server

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/checkjob"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/outcome/outcometest"
)

const (
	appBaseSHA = "b000000000000000000000000000000000000000"
	appHead1   = "a100000000000000000000000000000000000001"
	appHead2   = "a200000000000000000000000000000000000002"
	brokenYAML = "phase: requirements\nfeature: feature-001\nproduced: []\npending_decisions: []\n"
)

// prEvent is a pull_request payload with the head, base and author GitHub
// sends.
func prOpenEvent(action string, number int, head, base, ref, author string) []byte {
	r := repoJSON(owner, repo)
	r["html_url"] = "https://github.com/" + owner + "/" + repo
	return mustJSON(map[string]any{
		"action": action, "number": number,
		"installation": map[string]any{"id": installation}, "repository": r, "sender": userJSON(author),
		"pull_request": map[string]any{"number": number, "state": "open", "user": userJSON(author),
			"head": map[string]any{"sha": head, "ref": ref, "repo": map[string]any{"full_name": owner + "/" + repo}},
			"base": map[string]any{"sha": base, "ref": "main"}},
	})
}

// runs are the check runs named name on sha, oldest first.
func runs(f *ghfake.Server, sha, name string) []ghfake.CheckRun {
	var out []ghfake.CheckRun
	for _, r := range f.CheckRuns(owner, repo, sha) {
		if r.Name == name {
			out = append(out, r)
		}
	}
	return out
}

func newest(t *testing.T, f *ghfake.Server, sha, name string) ghfake.CheckRun {
	t.Helper()
	rs := runs(f, sha, name)
	if len(rs) == 0 {
		t.Fatalf("no %s check run on %s; runs: %+v", name, sha[:7], f.CheckRuns(owner, repo, sha))
	}
	return rs[len(rs)-1]
}

// TestAppIsTheGate: a repository with no workflow at all gets, from serve
// alone, phasegate/contracts as the App's check run (failure with an
// annotation at the finding's line while an artifact is broken, success
// once fixed), the Phase Outcome the change adds posted as the App,
// phasegate/decisions as the App's check run (action_required while D-001
// is open, success after an authorised /resolve), and a re-run when asked.
func TestAppIsTheGate(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.NewDecider = nil; c.Publish = decide.PublishChecks })
	f := h.fake
	issue := f.AddIssue(owner, repo, "Feature 1", "", "alice")
	good := outcometest.SeedFor(issue)
	const goodPath, brokenPath = "outcomes/feature-001-requirements.outcome.yaml", "outcomes/feature-001-broken.outcome.yaml"
	f.SetPermission(owner, repo, "alice", "write")
	f.SetTreeFiles(owner, repo, appBaseSHA, map[string]string{"README.md": "# shop\n"})
	f.SetTreeFiles(owner, repo, appHead1, map[string]string{"README.md": "# shop\n", goodPath: good, brokenPath: brokenYAML})
	f.SetTreeFiles(owner, repo, appHead2, map[string]string{"README.md": "# shop\n", goodPath: good})
	pr := f.AddPullRequest(owner, repo, ghfake.PullRequest{HeadSHA: appHead1, BaseSHA: appBaseSHA, HeadRef: "feature", BaseRef: "main", Author: "agent-bot"})
	f.SetPullRequestFiles(owner, repo, pr, []ghfake.File{{Filename: goodPath, Status: "added"}, {Filename: brokenPath, Status: "added"}})

	h.start()
	h.waitReady()
	send := func(event string, body []byte) {
		t.Helper()
		if code, answer := h.send(delivery{event: event, body: body}); code != http.StatusAccepted {
			t.Fatalf("%s: answer %d %q", event, code, answer)
		}
		if d := h.waitJobs(1)[0]; d.outcome != "ok" {
			t.Fatalf("%s: job %+v; logs:\n%s", event, d, h.logs.String())
		}
	}

	// 1. The agent opens the pull request with a broken outcome: HOLD.
	send("pull_request", prOpenEvent("opened", pr, appHead1, appBaseSHA, "feature", "agent-bot"))
	c := newest(t, f, appHead1, decide.ContextContracts)
	if c.Status != "completed" || c.Conclusion != "failure" || c.AppSlug != "phasegate" {
		t.Fatalf("contracts on the broken head: %s/%s by %q, want completed/failure by the App", c.Status, c.Conclusion, c.AppSlug)
	}
	var at []string
	for _, a := range c.Annotations {
		at = append(at, a.Path+":"+a.Level)
	}
	if len(c.Annotations) == 0 || c.Annotations[0].Path != brokenPath || c.Annotations[0].StartLine != 1 || c.Annotations[0].Level != "failure" {
		t.Fatalf("annotations %v, want the missing findings at %s:1", at, brokenPath)
	}
	if !strings.Contains(c.Summary, "HOLD") {
		t.Fatalf("summary does not give the verdict:\n%s", c.Summary)
	}

	// 2. It pushes the fix: SHIP, the outcome is posted as the App, and
	// the decision it carries holds phasegate/decisions.
	f.SetPullRequestHead(owner, repo, pr, appHead2)
	f.SetPullRequestFiles(owner, repo, pr, []ghfake.File{{Filename: goodPath, Status: "added"}})
	send("pull_request", prOpenEvent("synchronize", pr, appHead2, appBaseSHA, "feature", "agent-bot"))
	if c := newest(t, f, appHead2, decide.ContextContracts); c.Conclusion != "success" || len(c.Annotations) != 0 {
		t.Fatalf("contracts on the fixed head: %s with %d annotations", c.Conclusion, len(c.Annotations))
	}
	var outcomeComments []ghfake.Comment
	for _, cm := range f.Comments(owner, repo, issue) {
		if strings.Contains(cm.Body, "phasegate:outcome v1") {
			outcomeComments = append(outcomeComments, cm)
		}
	}
	if len(outcomeComments) != 1 || outcomeComments[0].User != appBot {
		t.Fatalf("outcome comments %+v, want one by %s", outcomeComments, appBot)
	}
	if d := newest(t, f, appHead2, decide.ContextDecisions); d.Conclusion != "action_required" {
		t.Fatalf("decisions while D-001 is open: %s (%s)", d.Conclusion, d.Title)
	}
	if labels := f.Labels(owner, repo, issue); !slices.Contains(labels, decide.LabelPending) {
		t.Fatalf("labels %v: the App did not label the issue pending", labels)
	}

	// 3. An authorised person resolves it: phasegate/decisions passes.
	const command = "/resolve D-001 approve"
	id := f.AddComment(owner, repo, issue, "alice", command)
	send("issue_comment", commentEvent("created", issue, id, "alice", "alice", command))
	if d := newest(t, f, appHead2, decide.ContextDecisions); d.Conclusion != "success" || d.AppSlug != "phasegate" {
		t.Fatalf("decisions after the approval: %s by %q (%s)", d.Conclusion, d.AppSlug, d.Title)
	}

	// 4. GitHub's suite for the push changes nothing (the push was checked);
	// someone asks for a re-run: a new contracts check run, same verdict.
	before := len(runs(f, appHead2, decide.ContextContracts))
	send("check_suite", checkSuiteEvent("requested", appHead2, "feature", appHead1))
	if n := len(runs(f, appHead2, decide.ContextContracts)); n != before {
		t.Fatalf("a requested suite of a checked commit made %d contracts runs (was %d)", n, before)
	}
	send("check_run", checkRunEvent("rerequested", appHead2))
	if after := runs(f, appHead2, decide.ContextContracts); len(after) != before+1 || after[len(after)-1].Conclusion != "success" {
		t.Fatalf("re-run: %d contracts runs (was %d)", len(after), before)
	}
	// No status was written: the App's gates are its check runs.
	if st, ok := f.LatestStatus(owner, repo, appHead2, decide.ContextDecisions); ok {
		t.Fatalf("a %s status was set (%+v) with --publish checks", decide.ContextDecisions, st)
	}
}

// TestAppGateChangeNeedsApproval: a pull request that edits the gate's
// own configuration holds until someone with the right to resolve
// decisions approves it on its head; the author's pushers cannot.
func TestAppGateChangeNeedsApproval(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.NewDecider = nil; c.Publish = decide.PublishChecks })
	f := h.fake
	f.SetPermission(owner, repo, "alice", "write")
	f.SetPermission(owner, repo, "agent-bot", "write")
	f.SetTreeFiles(owner, repo, appBaseSHA, map[string]string{"README.md": "# shop\n"})
	f.SetTreeFiles(owner, repo, appHead1, map[string]string{"README.md": "# shop\n", ".github/phasegate.yml": "rules:\n  schema.convention: off\n"})
	pr := f.AddPullRequest(owner, repo, ghfake.PullRequest{HeadSHA: appHead1, BaseSHA: appBaseSHA, HeadRef: "loosen", BaseRef: "main", Author: "agent-bot"})
	f.SetPullRequestFiles(owner, repo, pr, []ghfake.File{{Filename: ".github/phasegate.yml", Status: "added"}})
	h.start()
	h.waitReady()
	check := func(wantConclusion, wantIn string) {
		t.Helper()
		if code, answer := h.send(delivery{event: "pull_request", body: prOpenEvent("synchronize", pr, appHead1, appBaseSHA, "loosen", "agent-bot")}); code != http.StatusAccepted {
			t.Fatalf("answer %d %q", code, answer)
		}
		if d := h.waitJobs(1)[0]; d.outcome != "ok" {
			t.Fatalf("job %+v; logs:\n%s", d, h.logs.String())
		}
		c := newest(t, f, appHead1, decide.ContextContracts)
		var msgs []string
		for _, a := range c.Annotations {
			if a.Title == checkjob.RuleGateChange {
				msgs = append(msgs, a.Level+": "+a.Message)
			}
		}
		if c.Conclusion != wantConclusion || len(msgs) != 1 || !strings.Contains(msgs[0], wantIn) {
			t.Fatalf("contracts %s with %v, want %s with a %s annotation saying %q", c.Conclusion, msgs, wantConclusion, checkjob.RuleGateChange, wantIn)
		}
	}
	check("failure", "no approving review")
	// The agent's own approval (another of its accounts that pushed the
	// branch) does not count.
	f.Push(owner, repo, ghfake.Push{Ref: "loosen", After: appHead1, Actor: "agent-2"})
	f.SetPermission(owner, repo, "agent-2", "write")
	f.AddReview(owner, repo, pr, ghfake.Review{User: "agent-2", State: "APPROVED", CommitID: appHead1})
	check("failure", "pushed the pull request's branch")
	// A person approves an older head: still held.
	f.AddReview(owner, repo, pr, ghfake.Review{User: "alice", State: "APPROVED", CommitID: appBaseSHA})
	check("failure", "pushed the pull request's branch")
	// The person approves the head: it passes, with a warning naming them.
	f.AddReview(owner, repo, pr, ghfake.Review{User: "alice", State: "APPROVED", CommitID: appHead1})
	check("neutral", "alice approved it")
}

// TestAppRedTeam: what an agent with write access can do in App mode
// changes nothing the App decides.
func TestAppRedTeam(t *testing.T) {
	t.Parallel()
	t.Run("a blob GitHub fails to give fails the check, never hides a file", func(t *testing.T) {
		h := newHarness(t, func(c *Config) { c.NewDecider = nil; c.Publish = decide.PublishChecks })
		f := h.fake
		issue := f.AddIssue(owner, repo, "Feature 1", "", "alice")
		// An outcome at a path other tools share: found by its content,
		// which must be read.
		f.SetTreeFiles(owner, repo, appBaseSHA, map[string]string{"README.md": "# shop\n"})
		f.SetTreeFiles(owner, repo, appHead1, map[string]string{"README.md": "# shop\n", "docs/decision.yaml": outcometest.SeedFor(issue)})
		pr := f.AddPullRequest(owner, repo, ghfake.PullRequest{HeadSHA: appHead1, BaseSHA: appBaseSHA, HeadRef: "feature", Author: "agent-bot"})
		f.SetPullRequestFiles(owner, repo, pr, []ghfake.File{{Filename: "docs/decision.yaml", Status: "added"}})
		f.FailNext(20, http.StatusBadGateway, "/git/blobs/")
		h.start()
		h.waitReady()
		if code, answer := h.send(delivery{event: "pull_request", body: prOpenEvent("opened", pr, appHead1, appBaseSHA, "feature", "agent-bot")}); code != http.StatusAccepted {
			t.Fatalf("answer %d %q", code, answer)
		}
		if d := h.waitJobs(1)[0]; d.outcome != "error" {
			t.Fatalf("job %+v: a commit that could not be read must be an error (retried)", d)
		}
		if c := newest(t, f, appHead1, decide.ContextContracts); c.Conclusion != "failure" || !strings.Contains(c.Summary, "could not check") {
			t.Fatalf("contracts %s: %s", c.Conclusion, c.Summary)
		}
	})
	t.Run("an outcome naming an issue that does not exist is refused and holds its decisions", func(t *testing.T) {
		h := newHarness(t, func(c *Config) { c.NewDecider = nil; c.Publish = decide.PublishChecks })
		f := h.fake
		const path = "outcomes/feature-180-requirements.outcome.yaml"
		f.SetTreeFiles(owner, repo, appBaseSHA, map[string]string{"README.md": "# shop\n"})
		f.SetTreeFiles(owner, repo, appHead1, map[string]string{"README.md": "# shop\n", path: outcometest.SeedFor(180)})
		pr := f.AddPullRequest(owner, repo, ghfake.PullRequest{HeadSHA: appHead1, BaseSHA: appBaseSHA, HeadRef: "feature", Author: "agent-bot"})
		f.SetPullRequestFiles(owner, repo, pr, []ghfake.File{{Filename: path, Status: "added"}})
		h.start()
		h.waitReady()
		if code, answer := h.send(delivery{event: "pull_request", body: prOpenEvent("opened", pr, appHead1, appBaseSHA, "feature", "agent-bot")}); code != http.StatusAccepted {
			t.Fatalf("answer %d %q", code, answer)
		}
		if d := h.waitJobs(1)[0]; d.outcome != "ok" {
			t.Fatalf("job %+v (retrying cannot make the issue exist); logs:\n%s", d, h.logs.String())
		}
		if c := newest(t, f, appHead1, decide.ContextContracts); c.Conclusion != "failure" || !strings.Contains(c.Summary, "does not exist") {
			t.Fatalf("contracts %s: %s", c.Conclusion, c.Summary)
		}
		if d := newest(t, f, appHead1, decide.ContextDecisions); d.Conclusion != "action_required" {
			t.Fatalf("decisions %s (%s): an outcome nobody can resolve must hold", d.Conclusion, d.Title)
		}
	})
	t.Run("a workflow's statuses and check runs of the same names do not touch the App's", func(t *testing.T) {
		h := newHarness(t, func(c *Config) { c.NewDecider = nil; c.Publish = decide.PublishChecks })
		f := h.fake
		f.SetTreeFiles(owner, repo, appBaseSHA, map[string]string{"README.md": "# shop\n"})
		f.SetTreeFiles(owner, repo, appHead1, map[string]string{"README.md": "# shop\n", "outcomes/broken.outcome.yaml": brokenYAML})
		pr := f.AddPullRequest(owner, repo, ghfake.PullRequest{HeadSHA: appHead1, BaseSHA: appBaseSHA, HeadRef: "feature", Author: "agent-bot"})
		f.SetPullRequestFiles(owner, repo, pr, []ghfake.File{{Filename: "outcomes/broken.outcome.yaml", Status: "added"}})
		// The agent's workflow, as github-actions[bot], says all is well.
		f.AddAppToken("ghs_workflow", ghfake.GitHubActionsAppID, "github-actions")
		wf, err := ghclient.New(ghclient.Options{Token: "ghs_workflow", BaseURL: f.URL()})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for _, name := range []string{decide.ContextContracts, decide.ContextDecisions} {
			if err := wf.CreateStatus(ctx, owner, repo, appHead1, ghclient.Status{Context: name, State: "success"}); err != nil {
				t.Fatal(err)
			}
		}
		h.start()
		h.waitReady()
		if code, answer := h.send(delivery{event: "pull_request", body: prOpenEvent("opened", pr, appHead1, appBaseSHA, "feature", "agent-bot")}); code != http.StatusAccepted {
			t.Fatalf("answer %d %q", code, answer)
		}
		if d := h.waitJobs(1)[0]; d.outcome != "ok" {
			t.Fatalf("job %+v; logs:\n%s", d, h.logs.String())
		}
		// A forged check run after the App's, of the same name.
		if _, err := wf.CreateCheckRun(ctx, owner, repo, ghclient.CheckRun{Name: decide.ContextContracts, HeadSHA: appHead1, Status: "completed", Conclusion: "success"}); err != nil {
			t.Fatal(err)
		}
		var app []ghfake.CheckRun
		for _, r := range runs(f, appHead1, decide.ContextContracts) {
			if r.AppSlug == "phasegate" {
				app = append(app, r)
			}
		}
		if len(app) != 1 || app[0].Conclusion != "failure" {
			t.Fatalf("the App's contracts runs %+v, want one failure", app)
		}
		// The App's runs can only be changed by the App.
		if err := wf.UpdateCheckRun(ctx, owner, repo, app[0].ID, ghclient.CheckRun{Name: decide.ContextContracts, Status: "completed", Conclusion: "success"}); err == nil {
			t.Fatal("a workflow updated the App's check run")
		}
	})
}
