package server

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/checkjob"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/testutil/outcometest"
)

const (
	appBaseSHA = "b000000000000000000000000000000000000000"
	appHead1   = "a100000000000000000000000000000000000001"
	appHead2   = "a200000000000000000000000000000000000002"
	brokenYAML = "phase: requirements\nfeature: feature-001\nproduced: []\npending_decisions: []\n"
)

// TestCommandsUnderFaults: GitHub misbehaves the whole time — 30% of
// requests answer 5xx, some hang past the client's timeout, some hit a
// secondary rate limit with Retry-After, some writes are committed but
// answered 502 — while five features each get their /resolve. Deliveries
// fail, the reconcile loop takes over, and every command ends resolved
// exactly once: one resolution comment per issue and nothing else, labels
// and the pull request's status final.
//
// The fake and the App's clients share a JumpClock: backoff, Retry-After
// and secondary-limit waits are honoured in full (the fake sees the time
// move past them) without being slept. A hang costs no real time either:
// the clients' attempt timers are the clock's (AfterFunc), and the fake
// fires the timer of a request it hangs (ExpireHangs), so the client times
// out at once, down the path its attempt timeout takes, and the clock moves
// past that timeout. The timeout stays long (2 s) in real time, the
// fallback should the fake not find the timer: no answer of the fake
// outlasts it on a loaded machine under -race (a 100 ms timeout made every
// slow answer a hang, and the clean passes at the end never came). Two
// requests hang (MaxHangs): the first two once the faults start (HangRate
// 1) that a client sent with an attempt timer (ghinstallation's token
// requests have none, and are not hung). A client with no attempt timeout
// would have no timer to fire: nothing would hang, and the test fails
// ("no hang fault"); and each hung request must end with its client gone,
// not answered after HangFor.
//
// Every command re-syncs the pull request's phasegate/decisions, which
// reads every feature's thread: the requests grow with the square of the
// features. Five make 450 to 700 requests (100 to 200 of them faults)
// where ten made 2,100, at a third of the CPU under -race; a quarter of
// their successful writes answer 502, so that lost responses still happen
// every run.
func TestCommandsUnderFaults(t *testing.T) {
	// Declared first in the package (app_e2e_test.go is its first file):
	// parallel tests start in the order they are declared, and this one,
	// the package's longest, waits on real time, which overlaps the other
	// tests' CPU only while they run.
	t.Parallel()
	if testing.Short() {
		t.Skip("runs for several seconds")
	}
	clock := ghfake.NewJumpClock()
	h := newHarness(t, func(c *Config) {
		c.NewDecider = nil // the real decide.Handler
		c.ReconcileEvery = 200 * time.Millisecond
		c.GitHubOptions = func(o *ghclient.Options) {
			o.BackoffBase, o.BackoffMax, o.MaxAttempts = time.Millisecond, 5*time.Millisecond, 3
			o.AttemptTimeout = 2 * time.Second
			o.MaxRateLimitWait = 3 * time.Second
			o.Now, o.Sleep, o.AfterFunc = clock.Now, clock.Sleep, clock.AfterFunc
		}
	})
	f := h.fake
	f.SetClock(clock.Now)
	f.ExpireHangs(clock.Expire)
	f.SetJWTClock(time.Now) // the App's JWTs are signed on real time; the jumps would expire them
	f.AddPullRequest(owner, repo, ghfake.PullRequest{Number: prNumber, HeadSHA: headSHA, BaseSHA: addedSHA, Author: "agent-bot"})
	f.SetPermission(owner, repo, "alice", "write")
	const n = 5
	type feature struct {
		issue   int
		comment int64
	}
	var features []feature
	for i := range n {
		issue := 50 + i
		src := fmt.Sprintf("outcomes/feature-%03d-requirements.outcome.yaml", issue)
		f.AddCommit(owner, repo, ghfake.Commit{SHA: fmt.Sprintf("%040x", issue), Author: "agent-bot", Committer: "agent-bot", Files: []ghfake.File{{Filename: src, Status: "added"}}})
		postOutcomeOn(t, f, issue, src, fmt.Sprintf("%040x", issue))
		f.LabelIssue(owner, repo, issue, "phasegate:pending")
		features = append(features, feature{issue: issue})
	}
	h.start()
	h.waitReady()

	f.SetFaults(ghfake.Faults{
		Seed:            7,
		ServerErrorRate: 0.30,
		HangRate:        1,           // the first MaxHangs requests (the draw of the other faults is unchanged)
		HangFor:         time.Minute, // until the client gives up
		MaxHangs:        2,
		SecondaryRate:   0.02,
		RetryAfter:      time.Second,
		// Of the writes past the 5xx, about 40 with five features: at 0.10,
		// one run in twenty drew no lost response at all.
		LostResponseRate: 0.25,
	})
	const command = "/resolve D-001 approve"
	for i := range features {
		fe := &features[i]
		fe.comment = f.AddComment(owner, repo, fe.issue, "alice", command)
		payload := commentEvent("created", fe.issue, fe.comment, "alice", "alice", command)
		if code, body := h.send(delivery{event: "issue_comment", body: payload}); code != http.StatusAccepted {
			t.Fatalf("delivery for #%d: %d %q", fe.issue, code, body)
		}
	}
	// And a burst of secondary rate limiting (429 with Retry-After) right
	// as the deliveries are handled.
	f.SecondaryLimit(time.Second, http.StatusTooManyRequests)
	done := func() bool {
		for _, fe := range features {
			if countResolutions(f, fe.issue) < 1 || hasLabelOn(f, fe.issue, "phasegate:pending") {
				return false
			}
		}
		st, _ := f.LatestStatus(owner, repo, headSHA, decide.ContextDecisions)
		return st.State == "success"
	}
	began := time.Now()
	deadline := began.Add(2 * time.Minute)
	for !done() {
		if time.Now().After(deadline) {
			for _, fe := range features {
				t.Logf("#%d: %d resolutions, labels %v", fe.issue, countResolutions(f, fe.issue), f.Labels(owner, repo, fe.issue))
			}
			t.Fatalf("the commands never all completed under faults; logs:\n%s", tail(h.logs.String(), 60))
		}
		time.Sleep(20 * time.Millisecond)
	}

	t.Logf("all commands completed under faults in %s", time.Since(began).Round(time.Millisecond))

	// GitHub heals; two more reconcile passes change nothing.
	f.SetFaults(ghfake.Faults{})
	runs := metricValue(t, h, "phasegate_reconcile_runs_total", `result="ok"`)
	h.until("two clean reconcile passes", func() bool {
		return metricValue(t, h, "phasegate_reconcile_runs_total", `result="ok"`) >= runs+2
	})

	faults := map[string]int{}
	notModified := 0
	for _, c := range f.Calls() {
		faults[c.Fault]++
		if c.Fault == "hang" && c.Status != 0 {
			t.Errorf("hung %s %s was answered %d: its client did not time out", c.Method, c.Path, c.Status)
		}
		if c.Status == http.StatusNotModified {
			notModified++
		}
	}
	sleeps, ahead := clock.Skipped()
	t.Logf("%d calls; by fault: %v; 304 answers: %d; %d waits skipped, %s in all; %d attempt timeouts fired by hangs", len(f.Calls()), faults, notModified, sleeps, ahead, clock.Expired())
	if ahead == 0 {
		t.Error("no wait was skipped: the clients did not wait on the shared clock")
	}
	for _, kind := range []string{"5xx", "hang", "secondary", "lost-response"} {
		if faults[kind] == 0 {
			t.Errorf("no %q fault was injected: the test did not exercise it", kind)
		}
	}
	if notModified == 0 {
		t.Error("no conditional read was answered 304")
	}
	for _, fe := range features {
		var mine []string
		for _, c := range f.Comments(owner, repo, fe.issue) {
			if c.User == appBot {
				mine = append(mine, firstLine(c.Body))
			}
		}
		// The outcome and its one resolution; no second resolution, no
		// error reply.
		if len(mine) != 2 || countResolutions(f, fe.issue) != 1 {
			t.Errorf("#%d: phasegate comments %q, want the outcome and one resolution", fe.issue, mine)
		}
		if got := f.Labels(owner, repo, fe.issue); strings.Contains(strings.Join(got, ","), "phasegate:pending") || !strings.Contains(strings.Join(got, ","), "phase:planning") {
			t.Errorf("#%d labels %v, want phase:planning and no phasegate:pending", fe.issue, got)
		}
	}
	if st, _ := f.LatestStatus(owner, repo, headSHA, decide.ContextDecisions); st.State != "success" || st.Creator != appBot {
		t.Errorf("%s = %+v", decide.ContextDecisions, st)
	}
}

func countResolutions(f *ghfake.Server, issue int) int {
	n := 0
	for _, c := range f.Comments(owner, repo, issue) {
		if c.User == appBot && strings.Contains(c.Body, "phasegate:resolution v1") {
			n++
		}
	}
	return n
}

func hasLabelOn(f *ghfake.Server, issue int, name string) bool {
	for _, l := range f.Labels(owner, repo, issue) {
		if l == name {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

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
	f.ResetCalls()
	send("pull_request", prOpenEvent("synchronize", pr, appHead2, appBaseSHA, "feature", "agent-bot"))
	// posting and phasegate/decisions share one reading of the thread
	// (decide.PostAndSync): the App reads the issue's comments once
	thread := fmt.Sprintf("GET /repos/%s/%s/issues/%d/comments", owner, repo, issue)
	if n := countCalls(f, thread); n != 1 {
		t.Errorf("%s ×%d in the check that posted, want ×1", thread, n)
	}
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

// countCalls is how many of f's calls were "METHOD /path".
func countCalls(f *ghfake.Server, call string) int {
	n := 0
	for _, c := range f.Calls() {
		if c.Method+" "+c.Path == call {
			n++
		}
	}
	return n
}
