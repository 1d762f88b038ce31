package action

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghfake"
)

// Every path code takes to the default branch: forks (read-only tokens),
// pull_request_target, merge queues and branch deletions.

const holdGate = `day: 1
agent: GATE
criteria_results:
  - criterion: "Passwords are hashed"
    result: FAIL
    evidence: "test_hash FAILED"
blockers: ["hashing"]
deferred: []
gate_decision: HOLD
hold_reason: "hashing fails"
`

// writes are the non-GET calls the fake GitHub received.
func writes(fake *ghfake.Server) []ghfake.Call {
	var out []ghfake.Call
	for _, c := range fake.Calls() {
		if c.Method != http.MethodGet && c.Method != http.MethodHead {
			out = append(out, c)
		}
	}
	return out
}

// prEvent is a pull_request payload as GitHub sends it; headRepo is the
// repository the head lives in.
func prEvent(number int, head, base, headRepo string) map[string]any {
	return map[string]any{
		"action": "synchronize", "number": number,
		"pull_request": map[string]any{
			"number": number, "user": map[string]any{"login": "mallory"},
			"head": map[string]any{"sha": head, "ref": "feature", "repo": map[string]any{"full_name": headRepo, "fork": headRepo != "acme/shop"}},
			"base": map[string]any{"sha": base, "ref": "main", "repo": map[string]any{"full_name": "acme/shop", "fork": false}},
		},
		"sender":     map[string]any{"login": "mallory"},
		"repository": map[string]any{"full_name": "acme/shop", "default_branch": "main"},
	}
}

func TestBranchDeletionIsANoOp(t *testing.T) {
	t.Parallel()
	f := newRepoFixture(t)
	base := f.commit(map[string]string{"README.md": "shop\n"})
	ev := map[string]any{"ref": "refs/heads/feature", "before": base, "after": strings.Repeat("0", 40), "created": false, "deleted": true,
		"forced": false, "head_commit": nil, "commits": []any{}, "repository": map[string]any{"full_name": "acme/shop", "default_branch": "main"},
		"pusher": map[string]any{"name": "alice"}, "sender": map[string]any{"login": "alice"}}
	code, log := f.runAction(f.env("push", ev, map[string]string{"GITHUB_SHA": strings.Repeat("0", 40)}))
	if code != exitOK {
		t.Fatalf("exit %d, want 0; log:\n%s", code, log)
	}
	if !strings.Contains(log, "::notice::phasegate: the push deleted refs/heads/feature") || strings.Contains(log, "::error") {
		t.Errorf("want one notice and no error annotation:\n%s", log)
	}
	if n := len(f.fake.Calls()); n != 0 {
		t.Errorf("a deletion made %d GitHub calls", n)
	}
}

func TestPullRequestTargetRefusesAHeadItDidNotCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		checkout func(f *repoFixture, base, head string)
		wantCode int
	}{
		{name: "the base branch checked out (the event's default)", checkout: func(f *repoFixture, base, head string) {
			f.checkout(base)
		}, wantCode: exitCouldNot},
		{name: "no checkout at all", checkout: func(f *repoFixture, base, head string) {
			if err := os.RemoveAll(filepath.Join(f.dir, ".git")); err != nil {
				f.t.Fatal(err)
			}
		}, wantCode: exitCouldNot},
		{name: "the head checked out", checkout: func(*repoFixture, string, string) {}, wantCode: exitOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			f := newRepoFixture(t)
			base := f.commit(map[string]string{"README.md": "shop\n"})
			head := f.commit(map[string]string{".pace/day-1/gate-report.yaml": goodGate})
			pr := f.fake.AddPullRequest("acme", "shop", ghfake.PullRequest{HeadSHA: head, BaseSHA: base, Author: "mallory"})
			f.fake.SetPullRequestFiles("acme", "shop", pr, f.diff(base, head))
			tc.checkout(f, base, head)
			// pull_request_target: GITHUB_SHA is the base branch's tip.
			code, log := f.runAction(f.env("pull_request_target", prEvent(pr, head, base, "acme/shop"), map[string]string{"GITHUB_SHA": base}))
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d; log:\n%s", code, tc.wantCode, log)
			}
			_, contracts := f.fake.LatestStatus("acme", "shop", head, decide.ContextContracts)
			_, decisions := f.fake.LatestStatus("acme", "shop", head, decide.ContextDecisions)
			if tc.wantCode == exitCouldNot {
				if !strings.Contains(log, "refusing to publish for pull request") || !strings.Contains(log, "Run phasegate on pull_request instead") {
					t.Errorf("the error does not say what to use instead:\n%s", log)
				}
				if contracts || decisions || len(writes(f.fake)) > 0 {
					t.Errorf("a refused run wrote to GitHub: %v", writes(f.fake))
				}
				return
			}
			if !contracts || !decisions {
				t.Errorf("a run that checked the head set contracts %v, decisions %v; want both", contracts, decisions)
			}
		})
	}
}

// TestMergeGroupSetsBothStatuses: a merge_group.checks_requested event,
// in the shape GitHub sends it, sets both statuses on merge_group.head_sha.
func TestMergeGroupSetsBothStatuses(t *testing.T) {
	t.Parallel()
	f := newRepoFixture(t)
	base := f.commit(map[string]string{"README.md": "shop\n"})
	head := f.commit(map[string]string{"outcomes/feature-001-requirements.outcome.yaml": seedOutcome, ".pace/day-1/gate-report.yaml": goodGate})
	ev := map[string]any{
		"action": "checks_requested",
		"merge_group": map[string]any{
			"head_sha": head, "head_ref": "refs/heads/gh-readonly-queue/main/pr-2-" + base,
			"base_sha": base, "base_ref": "refs/heads/main",
			"head_commit": map[string]any{"id": head, "tree_id": strings.Repeat("1", 40), "message": "Merge pull request #2 from acme/feature",
				"timestamp": "2026-03-13T05:00:00Z", "author": map[string]any{"name": "alice", "email": "alice@example.com"},
				"committer": map[string]any{"name": "GitHub", "email": "noreply@github.com"}},
		},
		"repository": map[string]any{"full_name": "acme/shop", "default_branch": "main"},
		"sender":     map[string]any{"login": "alice"},
	}
	code, log := f.runAction(f.env("merge_group", ev, map[string]string{"GITHUB_SHA": head, "GITHUB_REF": "refs/heads/gh-readonly-queue/main/pr-2-" + base}))
	if code != exitOK {
		t.Fatalf("exit %d; log:\n%s", code, log)
	}
	for _, ctx := range []string{decide.ContextContracts, decide.ContextDecisions} {
		st, ok := f.fake.LatestStatus("acme", "shop", head, ctx)
		if !ok || st.TargetURL == "" {
			t.Errorf("%s on merge_group.head_sha = %+v (set %v), want a status with a Details link", ctx, st, ok)
		}
	}
	if st, _ := f.fake.LatestStatus("acme", "shop", head, decide.ContextDecisions); st.State != "pending" {
		t.Errorf("%s = %q, want pending: the merge group carries an outcome with an unresolved blocking decision", decide.ContextDecisions, st.State)
	}
	destroyed := map[string]any{"action": "destroyed", "reason": "merged", "merge_group": ev["merge_group"], "repository": ev["repository"]}
	before := len(f.fake.Calls())
	if code, log := f.runAction(f.env("merge_group", destroyed, nil)); code != exitOK || len(f.fake.Calls()) != before {
		t.Errorf("merge_group destroyed: exit %d, %d calls; want a no-op\n%s", code, len(f.fake.Calls())-before, log)
	}
}

// TestForkPullRequestWritesNothing: a pull request from a fork gets a
// read-only token; the run annotates, summarises, saves its results and
// exits by the verdict, and attempts no write.
func TestForkPullRequestWritesNothing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		gate     string
		wantCode int
		verdict  string
	}{
		{name: "SHIP exits 0", gate: goodGate, wantCode: exitOK, verdict: "SHIP"},
		{name: "HOLD exits 1", gate: holdGate, wantCode: exitFindings, verdict: "HOLD"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			f := newRepoFixture(t)
			f.fake.DenyWrites("github-actions[bot]", true)
			base := f.commit(map[string]string{"README.md": "shop\n"})
			head := f.commit(map[string]string{".pace/day-1/gate-report.yaml": tc.gate, "outcomes/feature-001-requirements.outcome.yaml": seedOutcome})
			pr := f.fake.AddPullRequest("acme", "shop", ghfake.PullRequest{HeadSHA: head, BaseSHA: base, Author: "mallory"})
			f.fake.SetPullRequestFiles("acme", "shop", pr, f.diff(base, head))
			resultsPath := "results/phasegate.json"
			code, log := f.runAction(f.env("pull_request", prEvent(pr, head, base, "mallory/shop"), map[string]string{"INPUT_RESULTS-FILE": resultsPath}))
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d; log:\n%s", code, tc.wantCode, log)
			}
			if w := writes(f.fake); len(w) != 0 {
				t.Errorf("a fork's run attempted %d writes: %+v", len(w), w)
			}
			if !strings.Contains(log, "::notice::phasegate: this pull request comes from the fork mallory/shop") {
				t.Errorf("no notice about the fork:\n%s", log)
			}
			if got := f.output("results-file"); got != resultsPath {
				t.Errorf("results-file output = %q, want %q", got, resultsPath)
			}
			data, err := os.ReadFile(filepath.Join(f.dir, resultsPath))
			if err != nil {
				t.Fatal(err)
			}
			var res results
			if err := json.Unmarshal(data, &res); err != nil || res.HeadSHA != head || res.Verdict != tc.verdict || res.Published || res.PullRequest != pr || res.Repository != "acme/shop" {
				t.Errorf("results = %+v (%v)", res, err)
			}
			summary, _ := os.ReadFile(f.summary)
			for _, want := range []string{"**Nothing was written to GitHub**: this pull request comes from the fork mallory/shop", "**Statuses set**: none.", "for a workflow\\_run workflow to publish"} {
				if !strings.Contains(string(summary), want) {
					t.Errorf("summary lacks %q:\n%s", want, summary)
				}
			}
		})
	}
}

// TestReadOnlyTokenStopsAtTheFirst403: a token that cannot write, on a
// pull request GitHub does not mark as a fork's (Dependabot's): the first
// write answers 403, and nothing more is attempted.
func TestReadOnlyTokenStopsAtTheFirst403(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		files      map[string]string
		firstWrite string
	}{
		{name: "the outcome comment is the first write", files: map[string]string{"outcomes/feature-001-requirements.outcome.yaml": seedOutcome}, firstWrite: "/comments"},
		{name: "the contracts status is the first write", files: map[string]string{".pace/day-1/gate-report.yaml": goodGate}, firstWrite: "/statuses/"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			f := newRepoFixture(t)
			f.fake.DenyWrites("github-actions[bot]", true)
			base := f.commit(map[string]string{"README.md": "shop\n"})
			head := f.commit(tc.files)
			pr := f.fake.AddPullRequest("acme", "shop", ghfake.PullRequest{HeadSHA: head, BaseSHA: base, Author: "dependabot[bot]"})
			f.fake.SetPullRequestFiles("acme", "shop", pr, f.diff(base, head))
			code, log := f.runAction(f.env("pull_request", prEvent(pr, head, base, "acme/shop"), nil))
			if code != exitOK {
				t.Fatalf("exit %d, want 0 (the verdict); log:\n%s", code, log)
			}
			w := writes(f.fake)
			if len(w) != 1 || w[0].Status != http.StatusForbidden || !strings.Contains(w[0].Path, tc.firstWrite) {
				t.Errorf("writes = %+v, want exactly one, refused 403, to %s", w, tc.firstWrite)
			}
			if !strings.Contains(log, "::warning::phasegate: the token cannot write") || strings.Contains(log, "::error") {
				t.Errorf("want a warning about the token and no error:\n%s", log)
			}
		})
	}
}

// forkRun runs a fork's pull request that saves its results, and returns
// the head and the workspace of the privileged run, where the results are
// at resultsFile.
func forkRun(t *testing.T, f *repoFixture, files map[string]string) (head string, pr int, workspace string) {
	t.Helper()
	f.fake.DenyWrites("github-actions[bot]", true)
	base := f.commit(map[string]string{"README.md": "shop\n"})
	head = f.commit(files)
	pr = f.fake.AddPullRequest("acme", "shop", ghfake.PullRequest{Number: 2, HeadSHA: head, BaseSHA: base, Author: "mallory"})
	f.fake.SetPullRequestFiles("acme", "shop", pr, f.diff(base, head))
	if code, log := f.runAction(f.env("pull_request", prEvent(pr, head, base, "mallory/shop"), map[string]string{"INPUT_RESULTS-FILE": "phasegate-results.json"})); code != exitOK && code != exitFindings {
		t.Fatalf("fork run: exit %d\n%s", code, log)
	}
	f.fake.DenyWrites("github-actions[bot]", false)
	// The privileged run checks the head out (reading, never running it)
	// and downloads the artifact into its workspace.
	workspace = f.dir
	data, err := os.ReadFile(filepath.Join(f.dir, "phasegate-results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(workspace, "phasegate-results"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(workspace, resultsFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return head, pr, workspace
}

// resultsFile is where the publishing workflow downloads the results.
const resultsFile = "phasegate-results/phasegate-results.json"

// workflowRunEvent is a workflow_run completed payload for the run that
// checked head, from headRepo.
func workflowRunEvent(head, headRepo string) map[string]any {
	return map[string]any{
		"action": "completed",
		"workflow_run": map[string]any{
			"id": 501, "name": "phasegate", "event": "pull_request", "status": "completed", "conclusion": "success",
			"head_sha": head, "head_branch": "feature", "html_url": "https://github.com/acme/shop/actions/runs/501",
			"pull_requests":   []any{}, // GitHub lists none for a fork's pull request
			"repository":      map[string]any{"full_name": "acme/shop", "fork": false},
			"head_repository": map[string]any{"full_name": headRepo, "fork": headRepo != "acme/shop"},
		},
		"repository": map[string]any{"full_name": "acme/shop", "default_branch": "main"},
		"sender":     map[string]any{"login": "mallory"},
	}
}

// TestWorkflowRunPublishesAForksResults: the privileged workflow_run run
// publishes the saved results on the head the fork's run checked: the
// verdict from the file, phasegate/decisions from the API, no outcome
// posted.
func TestWorkflowRunPublishesAForksResults(t *testing.T) {
	t.Parallel()
	f := newRepoFixture(t)
	head, pr, workspace := forkRun(t, f, map[string]string{".pace/day-1/gate-report.yaml": goodGate, "outcomes/feature-001-requirements.outcome.yaml": seedOutcome})
	code, log := f.runAction(f.env("workflow_run", workflowRunEvent(head, "mallory/shop"), map[string]string{
		"INPUT_RESULTS-FILE": resultsFile, "GITHUB_WORKSPACE": workspace, "GITHUB_SHA": strings.Repeat("e", 40)}))
	if code != exitOK {
		t.Fatalf("workflow_run: exit %d\n%s", code, log)
	}
	contracts, ok := f.fake.LatestStatus("acme", "shop", head, decide.ContextContracts)
	if !ok || contracts.State != "success" || !strings.HasPrefix(contracts.Description, "SHIP") || contracts.TargetURL != "https://github.com/acme/shop/actions/runs/501" {
		t.Errorf("%s = %+v, want success from the saved SHIP, linking the pull request's run", decide.ContextContracts, contracts)
	}
	decisions, ok := f.fake.LatestStatus("acme", "shop", head, decide.ContextDecisions)
	if !ok || decisions.State != "pending" || decisions.TargetURL == "" {
		t.Errorf("%s = %+v, want pending (the fork's outcome is never posted, so D-001 stays open), with a Details link", decide.ContextDecisions, decisions)
	}
	if n := len(f.fake.Comments("acme", "shop", f.issue)); n != 0 {
		t.Errorf("a fork's outcome was posted (%d comments)", n)
	}
	summary, _ := os.ReadFile(f.summary)
	for _, want := range []string{"phasegate: published SHIP for pull request \\#\u200b" + itoa(pr), "phasegate/contracts", "phasegate/decisions", "never posts a fork's outcomes"} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestWorkflowRunChecksTheHeadItself: a fork's run uses the fork's workflow
// file, so its results file can say SHIP for a head that holds. The
// publishing run checks the head out and checks it; without a checkout of
// that head it refuses.
func TestWorkflowRunChecksTheHeadItself(t *testing.T) {
	t.Parallel()
	t.Run("a forged SHIP", func(t *testing.T) {
		t.Parallel() // its own fake GitHub
		f := newRepoFixture(t)
		bad := strings.Replace(goodGate, "gate_decision: SHIP", "gate_decision: HOLD", 1)
		head, _, workspace := forkRun(t, f, map[string]string{".pace/day-1/gate-report.yaml": bad})
		p := filepath.Join(workspace, resultsFile)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var res map[string]any
		if err := json.Unmarshal(data, &res); err != nil {
			t.Fatal(err)
		}
		res["verdict"], res["description"], res["errors"] = "SHIP", "SHIP: all good", 0
		if err := os.WriteFile(p, mustJSON(res), 0o644); err != nil {
			t.Fatal(err)
		}
		code, log := f.runAction(f.env("workflow_run", workflowRunEvent(head, "mallory/shop"), map[string]string{
			"INPUT_RESULTS-FILE": resultsFile, "GITHUB_WORKSPACE": workspace}))
		contracts, _ := f.fake.LatestStatus("acme", "shop", head, decide.ContextContracts)
		if contracts.State != "failure" {
			t.Errorf("%s = %+v after a forged SHIP (exit %d), want failure from checking the head\n%s", decide.ContextContracts, contracts, code, log)
		}
	})
	t.Run("no checkout of the head", func(t *testing.T) {
		t.Parallel() // its own fake GitHub
		f := newRepoFixture(t)
		head, _, workspace := forkRun(t, f, map[string]string{".pace/day-1/gate-report.yaml": goodGate})
		elsewhere := t.TempDir()
		if err := os.MkdirAll(filepath.Join(elsewhere, "phasegate-results"), 0o755); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(filepath.Join(workspace, resultsFile))
		if err := os.WriteFile(filepath.Join(elsewhere, resultsFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		code, _ := f.runAction(f.env("workflow_run", workflowRunEvent(head, "mallory/shop"), map[string]string{
			"INPUT_RESULTS-FILE": resultsFile, "GITHUB_WORKSPACE": elsewhere}))
		contracts, _ := f.fake.LatestStatus("acme", "shop", head, decide.ContextContracts)
		if code != exitCouldNot || contracts.State == "success" {
			t.Errorf("exit %d, %s = %+v: want exit 2 and no success without a checkout of the head", code, decide.ContextContracts, contracts)
		}
	})
}

// TestWorkflowRunRefusesUntrustedResults: the results file comes from a
// run the pull request's author controls. Whatever it says, nothing green
// is set on a commit it is not about.
func TestWorkflowRunRefusesUntrustedResults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		edit    func(res map[string]any) []byte
		runHead func(head string) string
		wantErr string
	}{
		{name: "a head the workflow run did not check", edit: func(res map[string]any) []byte {
			res["head_sha"] = strings.Repeat("a", 40)
			return mustJSON(res)
		}, wantErr: "the results file is about commit aaaaaaaaaaaa"},
		{name: "another repository", edit: func(res map[string]any) []byte {
			res["repository"] = "mallory/shop"
			return mustJSON(res)
		}, wantErr: "the results file is about mallory/shop"},
		{name: "an unknown field", edit: func(res map[string]any) []byte {
			res["statuses"] = []any{map[string]any{"context": "phasegate/decisions", "state": "success"}}
			return mustJSON(res)
		}, wantErr: "unknown field"},
		{name: "a verdict that is not one", edit: func(res map[string]any) []byte {
			res["verdict"] = "SHIP\n::error::pwned"
			return mustJSON(res)
		}, wantErr: "not SHIP, ADVISORY or HOLD"},
		{name: "trailing data", edit: func(res map[string]any) []byte {
			return append(mustJSON(res), []byte(`{"verdict":"SHIP"}`)...)
		}, wantErr: "data after the results"},
		{name: "too large", edit: func(res map[string]any) []byte {
			res["description"] = strings.Repeat("x", maxResults)
			return mustJSON(res)
		}, wantErr: "larger than"},
		{name: "a workflow run of another head", edit: func(res map[string]any) []byte { return mustJSON(res) },
			runHead: func(string) string { return strings.Repeat("b", 40) }, wantErr: "but the workflow run checked bbbbbbbbbbbb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			f := newRepoFixture(t)
			head, _, workspace := forkRun(t, f, map[string]string{".pace/day-1/gate-report.yaml": holdGate})
			path := filepath.Join(workspace, resultsFile)
			var res map[string]any
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &res); err != nil {
				t.Fatal(err)
			}
			res["verdict"], res["description"] = "SHIP", "SHIP: all good"
			if err := os.WriteFile(path, tc.edit(res), 0o644); err != nil {
				t.Fatal(err)
			}
			runHead := head
			if tc.runHead != nil {
				runHead = tc.runHead(head)
			}
			code, log := f.runAction(f.env("workflow_run", workflowRunEvent(runHead, "mallory/shop"), map[string]string{"INPUT_RESULTS-FILE": resultsFile, "GITHUB_WORKSPACE": workspace}))
			if code != exitCouldNot || !strings.Contains(log, tc.wantErr) {
				t.Errorf("exit %d, want %d with %q; log:\n%s", code, exitCouldNot, tc.wantErr, log)
			}
			if strings.Contains(log, "\n::error::pwned") {
				t.Errorf("the results file injected a workflow command:\n%s", log)
			}
			for _, sha := range []string{head, runHead, strings.Repeat("a", 40)} {
				for _, ctx := range []string{decide.ContextContracts, decide.ContextDecisions} {
					if st, ok := f.fake.LatestStatus("acme", "shop", sha, ctx); ok && st.State == "success" {
						t.Errorf("%s on %s is success from a refused results file", ctx, sha[:12])
					}
				}
			}
			if st, ok := f.fake.LatestStatus("acme", "shop", runHead, decide.ContextContracts); !ok || st.State != "error" {
				t.Errorf("%s on the workflow run's head = %+v, want error (the pull request must not wait forever in silence)", decide.ContextContracts, st)
			}
		})
	}
}

func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}

// TestSummarySaysWhatTheRunDid: the job summary lists the statuses set
// with their states and links, and the outcomes posted with links; a run
// that failed never heads its summary with the verdict alone.
func TestSummarySaysWhatTheRunDid(t *testing.T) {
	t.Parallel()
	f := newRepoFixture(t)
	base := f.commit(map[string]string{"README.md": "shop\n"})
	head := f.commit(map[string]string{"outcomes/feature-001-requirements.outcome.yaml": seedOutcome})
	if code, log := f.runAction(f.env("push", pushEvent(base, head), nil)); code != exitOK {
		t.Fatalf("exit %d\n%s", code, log)
	}
	summary, _ := os.ReadFile(f.summary)
	for _, want := range []string{
		"### What this run did",
		"| [phasegate/contracts](https://github.com/acme/shop/actions/runs/77) | ✅ success |",
		"| [phasegate/decisions](",
		"| ⏳ pending |",
		"- [outcomes/feature-001-requirements.outcome.yaml](",
		"#issuecomment-",
	} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}

	// The statuses keep failing: the run exits 2 and says so.
	head2 := f.commit(map[string]string{".pace/day-1/gate-report.yaml": goodGate})
	f.fake.FailNext(100, http.StatusBadGateway, "/statuses/")
	code, log := f.runAction(f.env("push", pushEvent(head, head2), nil))
	if code != exitCouldNot {
		t.Fatalf("exit %d, want %d\n%s", code, exitCouldNot, log)
	}
	summary, _ = os.ReadFile(f.summary)
	first := strings.SplitN(string(summary), "\n", 2)[0]
	if first != "## ❌ phasegate: the run failed (the checks alone say SHIP)" {
		t.Errorf("headline of a failed run = %q", first)
	}
	if !strings.Contains(string(summary), "**GitHub failures**:") || !strings.Contains(string(summary), "could not set the phasegate/contracts status") {
		t.Errorf("summary does not list the GitHub failures:\n%s", summary)
	}
}

func TestResultsFileInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, value string
		wantErr     bool
	}{
		{name: "relative", value: "out/phasegate.json"},
		{name: "absolute", value: "/tmp/phasegate.json", wantErr: true},
		{name: "outside the workspace", value: "../phasegate.json", wantErr: true},
		{name: "the workspace itself", value: ".", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			f := newRepoFixture(t)
			base := f.commit(map[string]string{"README.md": "shop\n"})
			head := f.commit(map[string]string{".pace/day-1/gate-report.yaml": goodGate})
			code, log := f.runAction(f.env("push", pushEvent(base, head), map[string]string{"INPUT_RESULTS-FILE": tc.value}))
			if (code == exitCouldNot) != tc.wantErr || tc.wantErr && !strings.Contains(log, "input results-file") {
				t.Errorf("exit %d, want error %v; log:\n%s", code, tc.wantErr, log)
			}
			if tc.wantErr {
				return
			}
			// A run that published both statuses says so: nothing is left
			// for a workflow_run run to publish.
			data, err := os.ReadFile(filepath.Join(f.dir, tc.value))
			var res results
			if err != nil || json.Unmarshal(data, &res) != nil || !res.Published {
				t.Errorf("results %s: %+v, %v; want published", data, res, err)
			}
		})
	}
}

// FuzzReadResults: any results file is refused or read into results
// that can only say what a status may say.
func FuzzReadResults(f *testing.F) {
	f.Add([]byte(`{"version":1,"repository":"acme/shop","head_sha":"` + strings.Repeat("a", 40) + `","event":"pull_request","verdict":"SHIP","description":"SHIP: 1 artifacts","artifacts":1,"errors":0,"warnings":0,"published":false}`))
	f.Add([]byte(`{"version":1,"verdict":"HOLD","description":"a\u2028b\u0000::error::x"}`))
	f.Add([]byte(`{} {}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "r.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := readResults(p)
		if err != nil {
			return
		}
		if !fullSHA(res.HeadSHA) || (res.Verdict != "SHIP" && res.Verdict != "ADVISORY" && res.Verdict != "HOLD") {
			t.Fatalf("accepted %+v", res)
		}
		if strings.ContainsAny(res.Description, "\n\r\x00") || len([]rune(res.Description)) > 140 {
			t.Fatalf("description %q", res.Description)
		}
	})
}

// TestResultsFileUnwritable: a results file that cannot be saved is a
// run that could not do its job.
func TestResultsFileUnwritable(t *testing.T) {
	t.Parallel()
	f := newRepoFixture(t)
	base := f.commit(map[string]string{"README.md": "shop\n"})
	head := f.commit(map[string]string{".pace/day-1/gate-report.yaml": goodGate})
	// A file where the results file's directory would be.
	if err := os.WriteFile(filepath.Join(f.dir, "out"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, log := f.runAction(f.env("push", pushEvent(base, head), map[string]string{"INPUT_RESULTS-FILE": "out/results.json"}))
	if code != exitCouldNot || !strings.Contains(log, "saving the results to") {
		t.Errorf("exit %d, want %d with the error; log:\n%s", code, exitCouldNot, log)
	}
}
