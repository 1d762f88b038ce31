package action

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/testutil/outcometest"
)

// seedOutcome is the seed outcome for feature-001.
var seedOutcome = outcometest.SeedFor(1)

const goodGate = `day: 1
agent: GATE
criteria_results:
  - criterion: "Passwords are hashed"
    result: PASS
    evidence: "test_hash PASSED"
blockers: []
deferred: []
gate_decision: SHIP
hold_reason: ""
`

// repoFixture is a workspace with git history and a fake GitHub that knows
// the same repository.
type repoFixture struct {
	t         *testing.T
	dir       string
	git       *gitRepo
	fake      *ghfake.Server
	clock     *ghfake.ManualClock
	issue     int
	shas      []string
	tree      map[string]string            // the files of the last commit
	trees     map[string]map[string]string // the files of each commit
	outputs   string
	summary   string
	eventPath string
}

func newRepoFixture(t *testing.T) *repoFixture {
	t.Helper()
	f := &repoFixture{t: t, dir: t.TempDir()}
	var err error
	if f.git, err = initGitRepo(f.dir); err != nil {
		t.Fatal(err)
	}
	f.fake = ghfake.New()
	t.Cleanup(f.fake.Close)
	f.clock = ghfake.NewManualClock(time.Date(2026, 3, 13, 5, 0, 0, 0, time.UTC))
	f.fake.SetClock(f.clock.Now)
	f.fake.AddToken("tok", "github-actions[bot]")
	f.fake.AddRepo("acme", "shop", "main")
	f.issue = f.fake.AddIssue("acme", "shop", "Feature 1: accounts", "", "alice")
	if f.issue != 1 {
		t.Fatalf("first issue is #%d, want #1", f.issue)
	}
	side := t.TempDir()
	f.outputs = filepath.Join(side, "output")
	f.summary = filepath.Join(side, "summary")
	f.eventPath = filepath.Join(side, "event.json")
	return f
}

// commit writes files ("" deletes) and commits them; it returns the sha.
func (f *repoFixture) commit(files map[string]string) string {
	f.t.Helper()
	if f.tree == nil {
		f.tree = map[string]string{}
	}
	for name, content := range files {
		if content == "" {
			if err := os.Remove(filepath.Join(f.dir, filepath.FromSlash(name))); err != nil {
				f.t.Fatal(err)
			}
			delete(f.tree, name)
			continue
		}
		if err := writeWorkFile(f.dir, name, content); err != nil {
			f.t.Fatal(err)
		}
		f.tree[name] = content
	}
	parent := ""
	if len(f.shas) > 0 {
		parent = f.shas[len(f.shas)-1]
	}
	sha, err := f.git.commit(f.tree, parent, len(f.shas))
	if err != nil {
		f.t.Fatal(err)
	}
	f.shas = append(f.shas, sha)
	// The fake GitHub serves the commit's tree, as GitHub's contents API does.
	for name, content := range f.tree {
		f.fake.SetFile("acme", "shop", sha, name, []byte(content))
	}
	snapshot := map[string]string{}
	for k, v := range f.tree {
		snapshot[k] = v
	}
	if f.trees == nil {
		f.trees = map[string]map[string]string{}
	}
	f.trees[sha] = snapshot
	// The branch forks from the first commit: compare main...sha is the
	// change since it, as GitHub's three-dot compare is.
	f.fake.SetCompare("acme", "shop", "main", sha, f.diff(f.shas[0], sha))
	return sha
}

// diff is the files changed from commit base to commit head, as GitHub
// lists them.
func (f *repoFixture) diff(base, head string) []ghfake.File {
	from, to := f.trees[base], f.trees[head]
	var out []ghfake.File
	for name, content := range to {
		old, ok := from[name]
		switch {
		case !ok:
			out = append(out, ghfake.File{Filename: name, Status: "added"})
		case old != content:
			out = append(out, ghfake.File{Filename: name, Status: "modified"})
		}
	}
	for name := range from {
		if _, ok := to[name]; !ok {
			out = append(out, ghfake.File{Filename: name, Status: "removed"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Filename < out[j].Filename })
	return out
}

func (f *repoFixture) env(eventName string, event any, extra map[string]string) func(string) string {
	f.t.Helper()
	data, err := json.Marshal(event)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(f.eventPath, data, 0o644); err != nil {
		f.t.Fatal(err)
	}
	for _, p := range []string{f.outputs, f.summary} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
	env := map[string]string{
		"GITHUB_ACTIONS":      "true",
		"GITHUB_EVENT_NAME":   eventName,
		"GITHUB_EVENT_PATH":   f.eventPath,
		"GITHUB_REPOSITORY":   "acme/shop",
		"GITHUB_SHA":          f.shas[len(f.shas)-1],
		"GITHUB_API_URL":      f.fake.URL(),
		"GITHUB_SERVER_URL":   "https://github.com",
		"GITHUB_RUN_ID":       "77",
		"GITHUB_ACTOR":        "agent-bot",
		"GITHUB_WORKSPACE":    f.dir,
		"GITHUB_OUTPUT":       f.outputs,
		"GITHUB_STEP_SUMMARY": f.summary,
		"INPUT_TOKEN":         "tok",
		"INPUT_PATH":          ".",
		"INPUT_FORMAT":        "text",
		"INPUT_POST-OUTCOMES": "true",
		"INPUT_FAIL-ON":       "hold",
	}
	for k, v := range extra {
		env[k] = v
	}
	return func(k string) string { return env[k] }
}

func pushEvent(before, after string) map[string]any {
	return map[string]any{"before": before, "after": after, "repository": map[string]any{"default_branch": "main"},
		"sender": map[string]any{"login": "agent-bot", "type": "User"}, "pusher": map[string]any{"name": "agent-bot", "email": "agent@example.com"}}
}

// runAction runs the action with an injected clock (retries and rate-limit
// waits cost no real time) and returns its exit code and log.
func (f *repoFixture) runAction(getenv func(string) string) (int, string) {
	f.t.Helper()
	for _, p := range []string{f.outputs, f.summary} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
	var log bytes.Buffer
	code := Main(context.Background(), getenv, &log, Options{Version: "test", Now: f.clock.Now, Client: func(o *ghclient.Options) {
		o.Now, o.Sleep = f.clock.Now, f.clock.Sleep
	}})
	return code, log.String()
}

func (f *repoFixture) output(name string) string {
	f.t.Helper()
	data, err := os.ReadFile(f.outputs)
	if err != nil {
		f.t.Fatal(err)
	}
	// name<<DELIM\nvalue\nDELIM
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, name+"<<") && i+1 < len(lines) {
			return lines[i+1]
		}
	}
	return ""
}

func TestPushPostsOutcomeOnceAndSetsStatuses(t *testing.T) {
	t.Parallel()
	f := newRepoFixture(t)
	base := f.commit(map[string]string{"README.md": "shop\n"})
	head := f.commit(map[string]string{
		"outcomes/feature-001-requirements.outcome.yaml": seedOutcome,
		".pace/day-1/gate-report.yaml":                   goodGate,
	})
	getenv := f.env("push", pushEvent(base, head), nil)

	for run := 1; run <= 2; run++ {
		code, log := f.runAction(getenv)
		if code != exitOK {
			t.Fatalf("run %d: exit %d, log:\n%s", run, code, log)
		}
		comments := f.fake.Comments("acme", "shop", f.issue)
		if len(comments) != 1 {
			t.Fatalf("run %d: %d comments on the issue, want exactly 1", run, len(comments))
		}
		v, err := outcome.VerifyOutcomeComment(comments[0].Body, nil)
		if err != nil {
			t.Fatalf("run %d: the posted comment does not verify: %v", run, err)
		}
		if v.Source != "outcomes/feature-001-requirements.outcome.yaml" || v.Commit != head {
			t.Errorf("marker provenance = %s@%s, want the file at %s", v.Source, v.Commit, head)
		}
		if got := f.output("outcomes-posted"); (run == 1 && got != "1") || (run == 2 && got != "0") {
			t.Errorf("run %d: outcomes-posted = %q", run, got)
		}
	}
	labels := strings.Join(f.fake.Labels("acme", "shop", f.issue), ",")
	if labels != "phase:requirements,phasegate:pending" && labels != "phasegate:pending,phase:requirements" {
		t.Errorf("labels = %s, want phasegate:pending and phase:requirements", labels)
	}
	contracts, ok := f.fake.LatestStatus("acme", "shop", head, decide.ContextContracts)
	if !ok || contracts.State != "success" {
		t.Errorf("%s = %+v, want success", decide.ContextContracts, contracts)
	}
	if contracts.TargetURL != "https://github.com/acme/shop/actions/runs/77" {
		t.Errorf("target URL = %q", contracts.TargetURL)
	}
	decisions, ok := f.fake.LatestStatus("acme", "shop", head, decide.ContextDecisions)
	if !ok || decisions.State != "pending" || !strings.Contains(decisions.Description, "D-001") {
		t.Errorf("%s = %+v, want pending on D-001", decide.ContextDecisions, decisions)
	}
	if got := f.output("verdict"); got != "ADVISORY" && got != "SHIP" {
		t.Errorf("verdict output = %q", got)
	}
	summary, _ := os.ReadFile(f.summary)
	if !strings.Contains(string(summary), "phasegate:") || !strings.Contains(string(summary), "```mermaid") {
		t.Errorf("job summary lacks the verdict or the diagram:\n%s", summary)
	}
}

func TestModifiedOutcomeFailsTheCheck(t *testing.T) {
	t.Parallel()
	f := newRepoFixture(t)
	base := f.commit(map[string]string{"outcomes/feature-001-requirements.outcome.yaml": seedOutcome})
	head := f.commit(map[string]string{"outcomes/feature-001-requirements.outcome.yaml": strings.Replace(seedOutcome, "blocking: true", "blocking: false", 1)})
	code, log := f.runAction(f.env("push", pushEvent(base, head), nil))
	if code != exitFindings {
		t.Fatalf("exit %d, want %d; log:\n%s", code, exitFindings, log)
	}
	if !strings.Contains(log, "outcome.immutable") {
		t.Errorf("log does not report outcome.immutable:\n%s", log)
	}
	if st, _ := f.fake.LatestStatus("acme", "shop", head, decide.ContextContracts); st.State != "failure" {
		t.Errorf("%s = %q, want failure", decide.ContextContracts, st.State)
	}
	if n := len(f.fake.Comments("acme", "shop", f.issue)); n != 0 {
		t.Errorf("a modified outcome was posted (%d comments)", n)
	}
}

func TestFlakyGitHubGivesTheSameResult(t *testing.T) {
	t.Parallel()
	f := newRepoFixture(t)
	base := f.commit(map[string]string{"README.md": "shop\n"})
	head := f.commit(map[string]string{"outcomes/feature-001-requirements.outcome.yaml": seedOutcome})
	f.fake.SetFaults(ghfake.Faults{Seed: 7, ServerErrorRate: 0.3})
	getenv := f.env("push", pushEvent(base, head), nil)
	for run := 1; run <= 2; run++ {
		if code, log := f.runAction(getenv); code != exitOK {
			t.Fatalf("run %d under 30%% 5xx: exit %d; log:\n%s", run, code, log)
		}
	}
	if n := len(f.fake.Comments("acme", "shop", f.issue)); n != 1 {
		t.Errorf("%d comments under 30%% 5xx, want exactly 1", n)
	}
	if st, ok := f.fake.LatestStatus("acme", "shop", head, decide.ContextDecisions); !ok || st.State != "pending" {
		t.Errorf("%s = %+v, want pending", decide.ContextDecisions, st)
	}
}

func TestPullRequestWithoutHistoryUsesTheAPI(t *testing.T) {
	t.Parallel()
	f := newRepoFixture(t)
	base := f.commit(map[string]string{"README.md": "shop\n"})
	head := f.commit(map[string]string{"outcomes/feature-001-requirements.outcome.yaml": seedOutcome})
	// A shallow checkout: no .git, so the changed files come from the API.
	if err := os.RemoveAll(filepath.Join(f.dir, ".git")); err != nil {
		t.Fatal(err)
	}
	pr := f.fake.AddPullRequest("acme", "shop", ghfake.PullRequest{HeadSHA: head, BaseSHA: base, Author: "agent-bot"})
	f.fake.SetPullRequestFiles("acme", "shop", pr, []ghfake.File{{Filename: "outcomes/feature-001-requirements.outcome.yaml", Status: "added"}})
	ev := map[string]any{"pull_request": map[string]any{"number": pr, "head": map[string]any{"sha": head}, "base": map[string]any{"sha": base}}, "repository": map[string]any{"default_branch": "main"}}
	if code, log := f.runAction(f.env("pull_request", ev, nil)); code != exitOK {
		t.Fatalf("exit %d; log:\n%s", code, log)
	}
	comments := f.fake.Comments("acme", "shop", f.issue)
	if len(comments) != 1 {
		t.Fatalf("%d comments, want 1", len(comments))
	}
	if v, err := outcome.VerifyOutcomeComment(comments[0].Body, nil); err != nil || v.PR != pr {
		t.Errorf("verify = %+v, %v; want the marker to name PR #%d", v, err, pr)
	}
	if _, ok := f.fake.LatestStatus("acme", "shop", head, decide.ContextContracts); !ok {
		t.Error("no status on the pull request's head commit")
	}
}

func TestMissingTokenStillReports(t *testing.T) {
	t.Parallel()
	f := newRepoFixture(t)
	base := f.commit(map[string]string{"README.md": "x\n"})
	head := f.commit(map[string]string{".pace/day-1/gate-report.yaml": "day: one\n"})
	code, log := f.runAction(f.env("push", pushEvent(base, head), map[string]string{"INPUT_TOKEN": ""}))
	if code != exitCouldNot {
		t.Errorf("exit %d, want %d", code, exitCouldNot)
	}
	if !strings.Contains(log, "::error::phasegate has no GitHub token") {
		t.Errorf("no error annotation about the token:\n%s", log)
	}
	if !strings.Contains(log, "gate-report.yaml") {
		t.Errorf("validation results were not printed:\n%s", log)
	}
	if got := f.output("verdict"); got != "HOLD" {
		t.Errorf("verdict output = %q, want HOLD", got)
	}
}

func TestOutputsCannotBeInjected(t *testing.T) {
	t.Parallel()
	f := newRepoFixture(t)
	base := f.commit(map[string]string{"README.md": "x\n"})
	evil := "day: 1\nagent: GATE\ncriteria_results: []\nblockers: []\ndeferred: []\ngate_decision: \"SHIP\\nverdict<<EOF\\nSHIP\\nEOF\\n::error::pwned\"\nhold_reason: \"\"\n"
	head := f.commit(map[string]string{".pace/day-1/gate-report.yaml": evil})
	_, log := f.runAction(f.env("push", pushEvent(base, head), nil))
	if got := f.output("verdict"); got != "HOLD" {
		t.Errorf("verdict output = %q, want HOLD", got)
	}
	for _, line := range strings.Split(log, "\n") {
		if strings.HasPrefix(line, "::error::pwned") {
			t.Errorf("an artifact injected a workflow command: %q", line)
		}
	}
}

// TestIssueCommentResolves: the outcome a push posted is resolved by an
// issue_comment event as GitHub sends it, and a scheduled reconcile then has
// nothing left to do.
func TestIssueCommentResolves(t *testing.T) {
	t.Parallel()
	f := newRepoFixture(t)
	base := f.commit(map[string]string{"README.md": "shop\n"})
	head := f.commit(map[string]string{"outcomes/feature-001-requirements.outcome.yaml": seedOutcome})
	if code, log := f.runAction(f.env("push", pushEvent(base, head), nil)); code != exitOK {
		t.Fatalf("push: exit %d\n%s", code, log)
	}
	f.fake.SetPermission("acme", "shop", "alice", "write")
	body := "LGTM\n/resolve D-001 approve"
	id := f.fake.AddComment("acme", "shop", f.issue, "alice", body)
	ev := map[string]any{
		"action":     "created",
		"issue":      map[string]any{"number": f.issue},
		"comment":    map[string]any{"id": id, "body": body, "user": map[string]any{"login": "alice", "type": "User"}},
		"repository": map[string]any{"default_branch": "main"},
	}
	if code, log := f.runAction(f.env("issue_comment", ev, nil)); code != exitOK {
		t.Fatalf("issue_comment: exit %d\n%s", code, log)
	}
	resolutions := func() int {
		n := 0
		for _, c := range f.fake.Comments("acme", "shop", f.issue) {
			if _, err := outcome.VerifyResolutionComment(c.Body, nil); err == nil {
				n++
			}
		}
		return n
	}
	if n := resolutions(); n != 1 {
		t.Fatalf("%d resolution comments, want 1", n)
	}
	if labels := strings.Join(f.fake.Labels("acme", "shop", f.issue), ","); labels != "phase:planning" {
		t.Errorf("labels = %s, want phase:planning", labels)
	}
	if code, log := f.runAction(f.env("schedule", map[string]any{}, nil)); code != exitOK {
		t.Fatalf("schedule: exit %d\n%s", code, log)
	}
	if n := resolutions(); n != 1 {
		t.Errorf("reconcile added resolutions: %d", n)
	}
	edited := map[string]any{"action": "edited", "issue": map[string]any{"number": f.issue}, "comment": map[string]any{"id": id, "body": body, "user": map[string]any{"login": "alice", "type": "User"}}}
	if code, _ := f.runAction(f.env("issue_comment", edited, nil)); code != exitOK {
		t.Errorf("edited comment: exit %d", code)
	}
}

// TestNothingFoundIsAWarningAnnotation: `path: .pace` is checked in its
// place, and a path with no artifact is a warning annotation (and an ADVISORY
// verdict), never a silent SHIP.
func TestNothingFoundIsAWarningAnnotation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		path        string
		wantVerdict string
		wantWarning bool
	}{
		{name: "marker directory as the path", path: ".pace", wantVerdict: "SHIP"},
		{name: "directory without artifacts", path: "docs", wantVerdict: "ADVISORY", wantWarning: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			f := newRepoFixture(t)
			base := f.commit(map[string]string{"README.md": "x\n"})
			head := f.commit(map[string]string{
				".pace/day-1/gate-report.yaml": "day: 1\nagent: GATE\ncriteria_results: []\nblockers: []\ndeferred: []\ngate_decision: SHIP\nhold_reason: \"\"\n",
				"docs/notes.md":                "# notes\n",
			})
			_, log := f.runAction(f.env("push", pushEvent(base, head), map[string]string{"INPUT_PATH": tt.path}))
			if got := f.output("verdict"); got != tt.wantVerdict {
				t.Errorf("verdict output = %q, want %q\n%s", got, tt.wantVerdict, log)
			}
			warned := strings.Contains(log, "::warning title=phasegate discovery.nothing-found::no artifact found under "+tt.path)
			if warned != tt.wantWarning {
				t.Errorf("nothing-found warning annotation = %v, want %v:\n%s", warned, tt.wantWarning, log)
			}
		})
	}
}
