package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/checkjob"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/testutil/outcometest"
)

// Issue 30, part "input": a result of the App stands only for the input it
// records (checkjob.Input). The agent has write access: it pushes, opens and
// retargets pull requests, and races GitHub's listings.

const (
	scratchSHA = "5c00000000000000000000000000000000000005" // the agent's branch scratch, with the change in it
	workSHA    = "e0000000000000000000000000000000000000e1" // its pull request's head, on top of scratch
	loosened   = "rules:\n  schema.convention: off\n"
)

// prEvent30 is a pull_request payload as GitHub sends it, with the base
// branch; from names the base the pull request had before an edit of it
// (edited with changes.base).
func prEvent30(action string, number int, head, baseRef, base, from string) []byte {
	r := repoJSON(owner, repo)
	r["html_url"] = "https://github.com/" + owner + "/" + repo
	p := map[string]any{
		"action": action, "number": number,
		"installation": map[string]any{"id": installation}, "repository": r, "sender": userJSON("agent-bot"),
		"pull_request": map[string]any{"number": number, "state": "open", "user": userJSON("agent-bot"),
			"head": map[string]any{"sha": head, "ref": "work", "repo": map[string]any{"full_name": owner + "/" + repo}},
			"base": map[string]any{"sha": base, "ref": baseRef}},
	}
	if from != "" {
		p["changes"] = map[string]any{"base": map[string]any{"ref": map[string]any{"from": from}, "sha": map[string]any{"from": scratchSHA}}}
	}
	return mustJSON(p)
}

// appServe is a started App (check runs, the real decision handler) with
// the agent and a person who may resolve.
func appServe(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, func(c *Config) {
		c.Identity, c.NewDecider, c.Publish, c.Version = appBot, nil, decide.PublishChecks, "v9.9.9"
	})
	h.fake.SetPermission(owner, repo, "alice", "write")
	h.fake.SetPermission(owner, repo, "agent-bot", "write")
	h.start()
	h.waitReady()
	return h
}

// passing is a conclusion a required check accepts.
func passing(conclusion string) bool { return conclusion == "success" || conclusion == "neutral" }

// latestApp is the App's newest check run named name on sha.
func latestApp(t *testing.T, h *harness, sha, name string) ghfake.CheckRun {
	t.Helper()
	c := newest(t, h.fake, sha, name)
	if c.AppSlug != appSlug || c.Status != "completed" {
		t.Fatalf("%s on %.7s: %s by %q, want completed by the App", name, sha, c.Status, c.AppSlug)
	}
	return c
}

// wantInput: the App's newest phasegate/contracts on sha records the input
// of pull request pr (0: a push) against base, with the configuration on
// the default branch now, and shows it.
func wantInput(t *testing.T, h *harness, sha string, pr int, baseRef, base string) {
	t.Helper()
	c := latestApp(t, h, sha, decide.ContextContracts)
	blob, err := checkjob.ConfigBlob(context.Background(), appClient(t, h), owner, repo, config.DefaultPath, "")
	if err != nil {
		t.Fatal(err)
	}
	want := checkjob.Input{Head: sha, BaseRef: baseRef, Base: base, PR: pr, ConfigBlob: blob, Version: "v9.9.9"}
	rec, ok := decide.RecordOf(c.ExternalID)
	if !ok || rec.Input != want.Digest() || rec.PR != pr {
		t.Errorf("contracts on %.7s records %q, want the input %+v (%s)", sha, c.ExternalID, want, want.Digest())
	}
	if !strings.Contains(c.Summary, "### Checked input") || !strings.Contains(c.Summary, want.Digest()) {
		t.Errorf("the summary does not show the input checked:\n%s", c.Summary)
	}
	// The commit's page shows it too.
	page, err := h.srv.pages.Commit(context.Background(), owner, repo, sha, "")
	if err != nil || !page.Checked || len(page.Input) == 0 || page.Input[len(page.Input)-1].Value != want.Digest() {
		t.Errorf("the commit's page keeps the input %+v (%v), want its digest %s last", page, err, want.Digest())
	}
}

// appClient is a client of the installation, for what a test reads as the App.
func appClient(t *testing.T, h *harness) interface {
	FileContent(ctx context.Context, owner, repo, path, ref string) ([]byte, bool, error)
} {
	t.Helper()
	gh, err := h.srv.client(installation)
	if err != nil {
		t.Fatal(err)
	}
	return gh
}

// TestRedTeamRetargetedBase is attack 3: the agent puts its change on its
// own branch scratch, opens a pull request against scratch (the change is
// not in its diff: all green), then edits the pull request's base to main.
// Both gates must follow the base: the head is checked again against main.
func TestRedTeamRetargetedBase(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		change  map[string]string // what scratch adds to main
		issue   bool              // the change is a Phase Outcome of a feature issue
		contest string            // the gate that must not stay success
		want    string            // its conclusion after the edit
	}{
		{name: "a configuration edit", change: map[string]string{".github/phasegate.yml": loosened},
			contest: decide.ContextContracts, want: "failure"},
		{name: "a Phase Outcome with a blocking D-001", issue: true,
			contest: decide.ContextDecisions, want: "action_required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := appServe(t)
			f := h.fake
			change := tt.change
			if tt.issue {
				n := f.AddIssue(owner, repo, "Feature 1", "", "alice")
				change = map[string]string{"outcomes/feature-001-requirements.outcome.yaml": outcometest.SeedFor(n)}
			}
			main := map[string]string{"README.md": "# shop\n"}
			f.SetTreeFiles(owner, repo, appBaseSHA, main)
			f.SetBranch(owner, repo, "main", appBaseSHA)
			work := map[string]string{"src/app.go": "package app\n"}
			for p, c := range main {
				work[p] = c
			}
			var added []ghfake.File
			for p, c := range change {
				work[p] = c
				added = append(added, ghfake.File{Filename: p, Status: "added"})
			}
			f.SetTreeFiles(owner, repo, workSHA, work)
			pr := f.AddPullRequest(owner, repo, ghfake.PullRequest{HeadSHA: workSHA, HeadRef: "work", BaseSHA: scratchSHA, BaseRef: "scratch", Author: "agent-bot"})
			f.SetPullRequestFiles(owner, repo, pr, []ghfake.File{{Filename: "src/app.go", Status: "added"}})

			h.deliverOK("pull_request", prEvent30("opened", pr, workSHA, "scratch", scratchSHA, ""))
			for _, name := range []string{decide.ContextContracts, decide.ContextDecisions} {
				if c := latestApp(t, h, workSHA, name); !passing(c.Conclusion) {
					t.Fatalf("%s against scratch: %s (%s), want passing: the attack starts green", name, c.Conclusion, c.Title)
				}
			}
			wantInput(t, h, workSHA, pr, "scratch", scratchSHA)

			// The agent retargets the pull request to main: its diff is now
			// the whole change.
			f.SetPullRequestBase(owner, repo, pr, "main", appBaseSHA)
			f.SetPullRequestFiles(owner, repo, pr, append(added, ghfake.File{Filename: "src/app.go", Status: "added"}))
			// Whether serve acts on the delivery is what is tested: the gates
			// after it say.
			if code, _ := h.send(delivery{event: "pull_request", body: prEvent30("edited", pr, workSHA, "main", appBaseSHA, "scratch")}); code == http.StatusAccepted {
				if d := h.waitJobs(1)[0]; d.outcome != "ok" {
					t.Fatalf("job %+v; logs:\n%s", d, h.logs.String())
				}
			}
			if c := latestApp(t, h, workSHA, tt.contest); c.Conclusion != tt.want {
				t.Fatalf("%s after the base was edited to main: %s (%s), want %s", tt.contest, c.Conclusion, c.Title, tt.want)
			}
			wantInput(t, h, workSHA, pr, "main", appBaseSHA)
		})
	}
}

// TestRedTeamPullRequestAfterPush: the agent pushes its branch (a new
// branch: nothing to compare, all green as a bare push), then opens the
// pull request, whose check holds. GitHub's listing of the commit's pull
// requests lags, and a late delivery for the push (its check suite, a
// redelivery) must not check the head again as a bare push over the pull
// request's result: the App re-reads the pull request its check recorded.
func TestRedTeamPullRequestAfterPush(t *testing.T) {
	t.Parallel()
	h := appServe(t)
	f := h.fake
	f.SetTreeFiles(owner, repo, appBaseSHA, map[string]string{"README.md": "# shop\n"})
	f.SetTreeFiles(owner, repo, workSHA, map[string]string{"README.md": "# shop\n", ".github/phasegate.yml": loosened})
	const zero = "0000000000000000000000000000000000000000"
	push := pushEvent("refs/heads/work", zero, workSHA, false)
	h.deliverOK("push", push)
	if c := latestApp(t, h, workSHA, decide.ContextContracts); !passing(c.Conclusion) {
		t.Fatalf("contracts of the bare push: %s (%s)", c.Conclusion, c.Title)
	}
	wantInput(t, h, workSHA, 0, "", "")

	pr := f.AddPullRequest(owner, repo, ghfake.PullRequest{HeadSHA: workSHA, HeadRef: "work", BaseSHA: appBaseSHA, BaseRef: "main", Author: "agent-bot"})
	f.SetPullRequestFiles(owner, repo, pr, []ghfake.File{{Filename: ".github/phasegate.yml", Status: "added"}})
	f.SetPullRequestListed(owner, repo, pr, false)
	h.deliverOK("pull_request", prEvent30("opened", pr, workSHA, "main", appBaseSHA, ""))
	if c := latestApp(t, h, workSHA, decide.ContextContracts); c.Conclusion != "failure" {
		t.Fatalf("contracts of the pull request: %s (%s), want failure (an unapproved gate change)", c.Conclusion, c.Title)
	}
	for _, late := range []struct{ event string }{{"check_suite"}, {"push"}} {
		body := push
		if late.event == "check_suite" {
			body = checkSuiteEvent("requested", workSHA, "work", zero)
		}
		h.deliverOK(late.event, body)
		if c := latestApp(t, h, workSHA, decide.ContextContracts); c.Conclusion != "failure" {
			t.Fatalf("contracts after a late %s delivery: %s (%s): checked again as a bare push", late.event, c.Conclusion, c.Title)
		}
		wantInput(t, h, workSHA, pr, "main", appBaseSHA)
	}

	// The pull request closed, the commit pushed as another branch: a push
	// again, checked as one.
	f.SetIssueState(owner, repo, pr, "closed")
	h.deliverOK("push", pushEvent("refs/heads/copy", zero, workSHA, false))
	wantInput(t, h, workSHA, 0, "", "")
}

// TestForkOf: a pull request's head is a fork unless GitHub names the
// repository itself (in any case); when it names none (a deleted fork), it
// is taken for one, whose outcomes are never posted.
func TestForkOf(t *testing.T) {
	t.Parallel()
	tests := []struct{ headRepo, want string }{
		{headRepo: "acme/shop", want: ""},
		{headRepo: "ACME/Shop", want: ""},
		{headRepo: "mallory/shop", want: "mallory/shop"},
		{headRepo: "", want: "(unknown)"},
	}
	for _, tt := range tests {
		t.Run(tt.headRepo, func(t *testing.T) {
			t.Parallel()
			if got := forkOf(&ghclient.PR{HeadRepo: tt.headRepo}, owner, repo); got != tt.want {
				t.Errorf("forkOf(%q) = %q, want %q", tt.headRepo, got, tt.want)
			}
		})
	}
}

// TestRedTeamConfigChangeRechecks: a pull request green under the gate's
// configuration stays green only while that configuration does. A push to
// the default branch that changes it checks the heads of the open pull
// requests again; one that does not change it checks none of them.
func TestRedTeamConfigChangeRechecks(t *testing.T) {
	t.Parallel()
	h := appServe(t)
	f := h.fake
	const tightSHA, otherSHA = "c0000000000000000000000000000000000000c1", "c0000000000000000000000000000000000000c2"
	files := map[string]string{"README.md": "# shop\n", "legacy/notes.data": brokenYAML}
	f.SetTreeFiles(owner, repo, appBaseSHA, map[string]string{"README.md": "# shop\n"})
	f.SetTreeFiles(owner, repo, workSHA, files)
	pr := f.AddPullRequest(owner, repo, ghfake.PullRequest{HeadSHA: workSHA, HeadRef: "work", BaseSHA: appBaseSHA, BaseRef: "main", Author: "agent-bot"})
	f.SetPullRequestFiles(owner, repo, pr, []ghfake.File{{Filename: "legacy/notes.data", Status: "added"}})
	h.deliverOK("pull_request", prEvent30("opened", pr, workSHA, "main", appBaseSHA, ""))
	if c := latestApp(t, h, workSHA, decide.ContextContracts); !passing(c.Conclusion) {
		t.Fatalf("contracts before the configuration changed: %s (%s)", c.Conclusion, c.Title)
	}

	// A push to main that leaves the configuration alone checks no head.
	before := len(runs(f, workSHA, decide.ContextContracts))
	f.SetTreeFiles(owner, repo, otherSHA, map[string]string{"README.md": "# shop, again\n"})
	f.SetBranch(owner, repo, "main", otherSHA)
	f.SetCompare(owner, repo, appBaseSHA, otherSHA, []ghfake.File{{Filename: "README.md", Status: "modified"}})
	h.deliverOK("push", pushEvent("refs/heads/main", appBaseSHA, otherSHA, false))
	if n := len(runs(f, workSHA, decide.ContextContracts)); n != before {
		t.Fatalf("a push to main that changed no configuration checked the pull request's head again (%d runs, was %d)", n, before)
	}

	// Maintainers make the legacy notes outcomes: the pull request's
	// broken one now holds it.
	cfg := "artifacts:\n  outcome.phase-outcome: [\"legacy/*.data\"]\n"
	f.SetTreeFiles(owner, repo, tightSHA, map[string]string{"README.md": "# shop, again\n", ".github/phasegate.yml": cfg})
	f.SetFile(owner, repo, "main", ".github/phasegate.yml", []byte(cfg))
	f.SetBranch(owner, repo, "main", tightSHA)
	f.SetCompare(owner, repo, otherSHA, tightSHA, []ghfake.File{{Filename: ".github/phasegate.yml", Status: "added"}})
	h.deliverOK("push", pushEvent("refs/heads/main", otherSHA, tightSHA, false))
	if c := latestApp(t, h, workSHA, decide.ContextContracts); c.Conclusion != "failure" {
		t.Fatalf("contracts after the configuration on main changed: %s (%s), want failure", c.Conclusion, c.Title)
	}
	wantInput(t, h, workSHA, pr, "main", appBaseSHA)
}

// TestRedTeamReconcileStaleInput: the pull request's base is edited and
// the edited delivery never arrives. The reconcile pass finds the App's
// completed check recording another input than the pull request's now, and
// checks the head again; a second pass finds it current and checks nothing.
// The agent's workflow forging a phasegate/contracts run that records the
// current input (anyone can compute its digest) changes nothing: only the
// App's own runs say what was checked.
func TestRedTeamReconcileStaleInput(t *testing.T) {
	t.Parallel()
	h := appServe(t)
	f := h.fake
	f.SetTreeFiles(owner, repo, appBaseSHA, map[string]string{"README.md": "# shop\n"})
	f.SetTreeFiles(owner, repo, workSHA, map[string]string{"README.md": "# shop\n", ".github/phasegate.yml": loosened, "src/app.go": "package app\n"})
	pr := f.AddPullRequest(owner, repo, ghfake.PullRequest{HeadSHA: workSHA, HeadRef: "work", BaseSHA: scratchSHA, BaseRef: "scratch", Author: "agent-bot"})
	f.SetPullRequestFiles(owner, repo, pr, []ghfake.File{{Filename: "src/app.go", Status: "added"}})
	h.deliverOK("pull_request", prEvent30("opened", pr, workSHA, "scratch", scratchSHA, ""))
	if c := latestApp(t, h, workSHA, decide.ContextContracts); !passing(c.Conclusion) {
		t.Fatalf("contracts against scratch: %s (%s)", c.Conclusion, c.Title)
	}
	f.SetPullRequestBase(owner, repo, pr, "main", appBaseSHA)
	f.SetPullRequestFiles(owner, repo, pr, []ghfake.File{{Filename: ".github/phasegate.yml", Status: "added"}, {Filename: "src/app.go", Status: "added"}})
	f.AddAppToken("ghs_workflow", ghfake.GitHubActionsAppID, "github-actions")
	wf, err := ghclient.New(ghclient.Options{Token: "ghs_workflow", BaseURL: f.URL()})
	if err != nil {
		t.Fatal(err)
	}
	current := checkjob.Input{Head: workSHA, BaseRef: "main", Base: appBaseSHA, PR: pr, Version: "v9.9.9"}
	forged := ghclient.CheckRun{Name: decide.ContextContracts, HeadSHA: workSHA, Status: "completed", Conclusion: "success",
		ExternalID: decide.Record{State: "success", Input: current.Digest(), PR: pr}.ExternalID()}
	if _, err := wf.CreateCheckRun(context.Background(), owner, repo, forged); err != nil {
		t.Fatal(err)
	}
	h.srv.reconcileOnce(context.Background())
	if c := latestApp(t, h, workSHA, decide.ContextContracts); c.Conclusion != "failure" {
		t.Fatalf("contracts after a reconcile pass: %s (%s), want failure; logs:\n%s", c.Conclusion, c.Title, tail(h.logs.String(), 20))
	}
	wantInput(t, h, workSHA, pr, "main", appBaseSHA)
	n := len(runs(f, workSHA, decide.ContextContracts))
	h.srv.reconcileOnce(context.Background())
	if m := len(runs(f, workSHA, decide.ContextContracts)); m != n {
		t.Fatalf("a second pass checked a current head again (%d runs, was %d)", m, n)
	}
}

// TestContractsNeverSuccessWhileChecking: phasegate/contracts is in
// progress, never a conclusion, while the App reads the commit.
func TestContractsNeverSuccessWhileChecking(t *testing.T) {
	t.Parallel()
	h := appServe(t)
	f := h.fake
	f.SetTreeFiles(owner, repo, appBaseSHA, map[string]string{"README.md": "# shop\n"})
	f.SetTreeFiles(owner, repo, workSHA, map[string]string{"README.md": "# shop\n"})
	pr := f.AddPullRequest(owner, repo, ghfake.PullRequest{HeadSHA: workSHA, HeadRef: "work", BaseSHA: appBaseSHA, BaseRef: "main", Author: "agent-bot"})
	hold := f.HoldNext(http.MethodGet, "/compare/")
	if code, answer := h.send(delivery{event: "pull_request", body: prEvent30("opened", pr, workSHA, "main", appBaseSHA, "")}); code != http.StatusAccepted {
		t.Fatalf("answer %d %q", code, answer)
	}
	select {
	case <-hold.Arrived():
	case d := <-h.done:
		t.Fatalf("the job ended (%+v) before it read the change", d)
	case <-time.After(guard):
		t.Fatal("the job never read the change")
	}
	rs := runs(f, workSHA, decide.ContextContracts)
	if len(rs) != 1 || rs[0].Status != "in_progress" || rs[0].Conclusion != "" {
		t.Errorf("contracts while the App checks: %+v, want one in progress without a conclusion", rs)
	}
	hold.Release()
	if d := h.waitJobs(1)[0]; d.outcome != "ok" {
		t.Fatalf("job %+v", d)
	}
}

// TestRedTeamReopenedChecksAgain: a pull request reopened with the input it
// was checked with is still checked (and phasegate/decisions re-synced):
// the agent erased the approval while it was closed, and those deliveries
// were lost.
func TestRedTeamReopenedChecksAgain(t *testing.T) {
	t.Parallel()
	h := redTeamServe(t, "", func(c *Config) { c.Identity, c.Publish = appBot, decide.PublishChecks })
	h.deliverOK("pull_request", pullRequestEvent("opened", prNumber, headSHA))
	h.command("erin", "/resolve D-001 approve")
	if d := latestApp(t, h, headSHA, decide.ContextDecisions); d.Conclusion != "success" {
		t.Fatalf("decisions after the approval: %s (%s)", d.Conclusion, d.Title)
	}
	h.fake.SetIssueState(owner, repo, prNumber, "closed")
	for _, c := range h.fake.Comments(owner, repo, featureIssue) {
		if strings.Contains(c.Body, "/resolve") || strings.Contains(c.Body, "phasegate:resolution") {
			h.fake.DeleteComment(c.ID)
		}
	}
	h.fake.SetIssueState(owner, repo, prNumber, "open")
	h.deliverOK("pull_request", pullRequestEvent("reopened", prNumber, headSHA))
	if d := latestApp(t, h, headSHA, decide.ContextDecisions); d.Conclusion == "success" {
		t.Fatalf("decisions after the approval was erased and the pull request reopened: %s (%s)", d.Conclusion, d.Title)
	}
}
