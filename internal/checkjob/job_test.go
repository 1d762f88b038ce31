package checkjob

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/gate"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/ghfake/ghfaketest"
	"github.com/phasegate/phasegate/internal/testutil/outcometest"
)

const (
	owner    = "acme"
	repo     = "shop"
	baseSHA  = "b000000000000000000000000000000000000000"
	headSHA  = "a100000000000000000000000000000000000001"
	cfgPath  = ".github/phasegate.yml"
	workflow = ".github/workflows/gate.yml"
	// broken is a Phase Outcome that breaks its contract (an error).
	broken      = "phase: requirements\nfeature: feature-001\nproduced: []\npending_decisions: []\n"
	runsGate    = "on: pull_request\njobs:\n  gate:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: phasegate/phasegate@v1\n"
	runsNothing = "on: pull_request\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make test\n"
)

var (
	validatorOnce sync.Once
	validator     *check.Validator
	validatorErr  error
)

// env is one fake GitHub with the repository acme/shop (default branch
// main, seven issues), the real client, and the App's checking job on it.
type env struct {
	f   *ghfake.Server
	gh  *ghclient.Client
	job *Job
}

func newEnv(t *testing.T) *env {
	t.Helper()
	validatorOnce.Do(func() { validator, validatorErr = check.NewValidator() })
	if validatorErr != nil {
		t.Fatal(validatorErr)
	}
	f := ghfake.New()
	t.Cleanup(f.Close)
	ghfaketest.Verify(t, f)
	clock := ghfake.NewManualClock(time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC))
	f.SetClock(clock.Now)
	f.AddToken("tok", "github-actions[bot]")
	f.AddRepo(owner, repo, "main")
	for i := 1; i <= 7; i++ {
		f.AddIssue(owner, repo, fmt.Sprintf("Feature %d", i), "", "alice")
	}
	for login, role := range map[string]string{"alice": "write", "agent-bot": "write"} {
		f.SetPermission(owner, repo, login, role)
	}
	// One attempt a request: a scripted failure is the job's, not retried.
	gh, err := ghclient.New(ghclient.Options{BaseURL: f.URL(), Token: "tok", Now: clock.Now, Sleep: clock.Sleep, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	h := &decide.Handler{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	return &env{f: f, gh: gh, job: &Job{Handler: h, Validator: validator}}
}

// change is one commit to check: the default branch's files (the
// configuration), the base's and head's trees, and how the change is
// listed.
type change struct {
	main       map[string]string // files of the default branch (contents API)
	base, head map[string]string // trees; README.md is added to both
	// files are the pull request's files; push: a push of head on base
	// (compared) instead of a pull request; neither: no base at all.
	files []ghfake.File
	push  bool
	// limits are the commit's FS's (ghclient's defaults: 1 MiB a file).
	limits ghclient.TreeLimits
}

// request stores c in the fake and is the job's request for it.
func (e *env) request(c change) Request {
	for p, content := range c.main {
		e.f.SetFile(owner, repo, "", p, []byte(content))
	}
	tree := func(sha string, files map[string]string) {
		all := map[string]string{"README.md": "# shop\n"}
		for p, content := range files {
			all[p] = content
		}
		e.f.SetTreeFiles(owner, repo, sha, all)
	}
	tree(baseSHA, c.base)
	tree(headSHA, c.head)
	req := Request{Owner: owner, Repo: repo, SHA: headSHA, Ref: "feature", HTMLURL: "https://github.com/acme/shop", Version: "test",
		Open: func(ctx context.Context, _ int64) (fs.FS, error) {
			return e.gh.CommitFS(ctx, owner, repo, headSHA, c.limits)
		}}
	switch {
	case c.push:
		e.f.SetCompare(owner, repo, baseSHA, headSHA, c.files)
		req.Base = baseSHA
	case c.files != nil:
		e.f.SetCompare(owner, repo, baseSHA, headSHA, c.files)
		n := e.f.AddPullRequest(owner, repo, ghfake.PullRequest{HeadSHA: headSHA, BaseSHA: baseSHA, HeadRef: "feature", BaseRef: "main", Author: "agent-bot"})
		e.f.SetPullRequestFiles(owner, repo, n, c.files)
		req.Base = baseSHA
		req.PR = &ghclient.PR{Number: n, State: "open", Author: "agent-bot", HeadSHA: headSHA, HeadRef: "feature", BaseSHA: baseSHA}
	}
	return req
}

// findings are the report's findings as "rule severity file".
func findings(sum Summary) []string {
	var out []string
	if sum.Report != nil {
		for _, f := range sum.Report.Findings {
			out = append(out, fmt.Sprintf("%s %s %s", f.Rule, f.Severity, f.File))
		}
	}
	return out
}

func added(p string) ghfake.File    { return ghfake.File{Filename: p, Status: "added"} }
func modified(p string) ghfake.File { return ghfake.File{Filename: p, Status: "modified"} }
func removed(p string) ghfake.File  { return ghfake.File{Filename: p, Status: "removed"} }

// jobCase is one run of CheckCommit: either it cannot check (wantErr, and
// then the verdict is HOLD), or it reaches verdict with the findings
// want (each "rule severity file") among its own.
type jobCase struct {
	name    string
	change  change
	setup   func(e *env, req Request) // faults, reviews
	job     func(j *Job)
	wantErr string
	verdict gate.Verdict
	want    []string
	posted  int
}

func runJobCases(t *testing.T, tests []jobCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			e := newEnv(t)
			req := e.request(tc.change)
			if tc.setup != nil {
				tc.setup(e, req)
			}
			if tc.job != nil {
				tc.job(e.job)
			}
			sum, err := e.job.CheckCommit(context.Background(), e.gh, req)
			got := findings(sum)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || sum.Verdict != gate.Hold {
					t.Fatalf("verdict %s, error %v, findings %q; want HOLD, an error saying %q", sum.Verdict, err, got, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("could not check: %v", err)
			}
			if sum.Verdict != tc.verdict || sum.Posted != tc.posted {
				t.Fatalf("verdict %s, %d posted, findings %q; want %s, %d posted", sum.Verdict, sum.Posted, got, tc.verdict, tc.posted)
			}
			for _, w := range tc.want {
				if !contains(got, w) {
					t.Errorf("no finding %q among %q", w, got)
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestCheckCommitConfig: the configuration is the default branch's, never
// the change's, and a configuration the default branch cannot give stops
// the check: it never falls back to the defaults.
func TestCheckCommitConfig(t *testing.T) {
	t.Parallel()
	loose := "ignore: [\"**\"]\n"
	runJobCases(t, []jobCase{
		{name: "no configuration: the defaults check the commit",
			change:  change{head: map[string]string{"outcomes/broken.outcome.yaml": broken}},
			verdict: gate.Hold, want: []string{"schema error outcomes/broken.outcome.yaml"}},
		{name: "the head's configuration is not read",
			change:  change{head: map[string]string{cfgPath: loose, "outcomes/broken.outcome.yaml": broken}},
			verdict: gate.Hold, want: []string{"schema error outcomes/broken.outcome.yaml"}},
		{name: "the default branch's configuration is read",
			change:  change{main: map[string]string{cfgPath: loose}, head: map[string]string{"outcomes/broken.outcome.yaml": broken}},
			verdict: gate.Advisory, want: []string{"discovery.nothing-found warning "}},
		{name: "the default branch's configuration cannot be read",
			change:  change{main: map[string]string{cfgPath: "rules: {}\n"}, head: map[string]string{"outcomes/broken.outcome.yaml": broken}},
			setup:   func(e *env, _ Request) { e.f.FailNext(1, 502, "/contents/"+cfgPath) },
			wantErr: "reading .github/phasegate.yml from the default branch"},
	})
}

// TestCheckCommitConfigBlob: the summary names the configuration's git
// blob id, as `git hash-object` computes it, or none.
func TestCheckCommitConfigBlob(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		main map[string]string
		want string
	}{
		{name: "a configuration", main: map[string]string{cfgPath: "rules:\n  schema.convention: off\n"}, want: "1ec0c5543675d4ccf8db4c6ecfe4664f49a4799f"},
		{name: "an empty configuration", main: map[string]string{cfgPath: ""}, want: "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"},
		{name: "an invalid configuration", main: map[string]string{cfgPath: "rules: [\n"}, want: check.BlobID([]byte("rules: [\n"))},
		{name: "none"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			sum, err := e.job.CheckCommit(context.Background(), e.gh, e.request(change{main: tc.main}))
			if err != nil {
				t.Fatal(err)
			}
			if sum.ConfigBlob != tc.want {
				t.Fatalf("ConfigBlob %q, want %q", sum.ConfigBlob, tc.want)
			}
		})
	}
}

// TestCheckCommitChange: a change phasegate cannot list is never an empty
// change.
func TestCheckCommitChange(t *testing.T) {
	t.Parallel()
	runJobCases(t, []jobCase{
		{name: "the pull request's change cannot be compared",
			change:  change{head: map[string]string{cfgPath: "ignore: [\"**\"]\n"}, files: []ghfake.File{added(cfgPath)}},
			setup:   func(e *env, _ Request) { e.f.FailNext(1, 502, "/compare/") },
			wantErr: "listing the files changed since b000000"},
		{name: "the push cannot be compared",
			change:  change{head: map[string]string{"outcomes/feature-001-requirements.outcome.yaml": outcometest.SeedFor(1)}, files: []ghfake.File{added("outcomes/feature-001-requirements.outcome.yaml")}, push: true},
			setup:   func(e *env, _ Request) { e.f.FailNext(1, 502, "/compare/") },
			wantErr: "listing the files changed since b000000"},
	})
}

// TestCheckCommitGuard: a pull request that changes phasegate's own gate
// holds until a person approves it; a guard that cannot read what it
// needs stops the check.
func TestCheckCommitGuard(t *testing.T) {
	t.Parallel()
	approve := func(e *env, req Request) {
		e.f.Push(owner, repo, ghfake.Push{Ref: "feature", After: headSHA, Actor: "agent-bot"})
		e.f.AddReview(owner, repo, req.PR.Number, ghfake.Review{User: "alice", State: "APPROVED", CommitID: headSHA})
	}
	runJobCases(t, []jobCase{
		{name: "the configuration is added",
			change:  change{head: map[string]string{cfgPath: "ignore: [\"**\"]\n"}, files: []ghfake.File{added(cfgPath)}},
			verdict: gate.Hold, want: []string{"gate.config-change error " + cfgPath}},
		{name: "the configuration is added and a person approved",
			change:  change{head: map[string]string{cfgPath: "ignore: [\"**\"]\n"}, files: []ghfake.File{added(cfgPath)}},
			setup:   approve,
			verdict: gate.Advisory, want: []string{"gate.config-change warning " + cfgPath}},
		{name: "a workflow that runs phasegate is added",
			change:  change{head: map[string]string{workflow: runsGate}, files: []ghfake.File{added(workflow)}},
			verdict: gate.Hold, want: []string{"gate.config-change error " + workflow}},
		{name: "a workflow that names PhaseGate in capitals is added",
			change:  change{head: map[string]string{workflow: strings.ReplaceAll(runsGate, "phasegate/phasegate", "PhaseGate/PhaseGate")}, files: []ghfake.File{added(workflow)}},
			verdict: gate.Hold, want: []string{"gate.config-change error " + workflow}},
		{name: "a workflow that runs something else is added",
			change:  change{head: map[string]string{workflow: runsNothing}, files: []ghfake.File{added(workflow)}},
			verdict: gate.Advisory, want: []string{"discovery.nothing-found warning "}},
		{name: "the workflow that ran phasegate is removed",
			change:  change{base: map[string]string{workflow: runsGate}, files: []ghfake.File{removed(workflow)}},
			verdict: gate.Hold, want: []string{"gate.config-change error " + workflow}},
		{name: "the workflow that ran phasegate is edited not to",
			change:  change{base: map[string]string{workflow: runsGate}, head: map[string]string{workflow: runsNothing}, files: []ghfake.File{modified(workflow)}},
			verdict: gate.Hold, want: []string{"gate.config-change error " + workflow}},
		{name: "the base's workflow cannot be read",
			change:  change{base: map[string]string{workflow: runsGate}, head: map[string]string{workflow: runsNothing}, files: []ghfake.File{modified(workflow)}},
			setup:   func(e *env, _ Request) { e.f.FailNext(1, 502, "/contents/"+workflow) },
			wantErr: "reading .github/workflows/gate.yml at b000000"},
		// The checker reads no file under .github here (ignore:), so the
		// guard is the first to read the new workflow.
		{name: "the new workflow cannot be read",
			change: change{main: map[string]string{cfgPath: "ignore: [\".github/**\"]\n"},
				head: map[string]string{workflow: runsGate}, files: []ghfake.File{added(workflow)}},
			setup:   func(e *env, _ Request) { e.f.FailNext(1, 502, "/git/blobs/"+check.BlobID([]byte(runsGate))) },
			wantErr: "reading .github/workflows/gate.yml at a100000"},
		// A workflow longer than phasegate reads could name it past the
		// end of what was read: too long to tell, part of the gate.
		{name: "a workflow that names phasegate past its first MiB is added",
			change:  change{head: map[string]string{workflow: "#" + strings.Repeat(" ", maxWorkflowRead) + "\n" + runsGate}, files: []ghfake.File{added(workflow)}},
			verdict: gate.Hold, want: []string{"gate.config-change error " + workflow}},
		{name: "a workflow that names phasegate past its first MiB is added, files of 2 MiB read",
			change: change{head: map[string]string{workflow: "#" + strings.Repeat(" ", maxWorkflowRead) + "\n" + runsGate}, files: []ghfake.File{added(workflow)},
				limits: ghclient.TreeLimits{MaxFileBytes: 2 << 20}},
			verdict: gate.Hold, want: []string{"gate.config-change error " + workflow}},
		{name: "a workflow longer than phasegate reads at the base is edited",
			change: change{base: map[string]string{workflow: "#" + strings.Repeat(" ", maxWorkflowRead) + "\n" + runsNothing},
				head: map[string]string{workflow: runsNothing}, files: []ghfake.File{modified(workflow)}},
			verdict: gate.Hold, want: []string{"gate.config-change error " + workflow}},
		{name: "the reviews cannot be read",
			change:  change{head: map[string]string{cfgPath: "ignore: [\"**\"]\n"}, files: []ghfake.File{added(cfgPath)}},
			setup:   func(e *env, _ Request) { e.f.FailNext(1, 502, "/reviews") },
			wantErr: "reading the reviews of acme/shop#8"},
	})
}

// TestCheckCommitOutcomes: an added outcome is vetted before it is posted;
// an issue that cannot be read stops the check, never drops the outcome in
// silence.
func TestCheckCommitOutcomes(t *testing.T) {
	t.Parallel()
	const path = "outcomes/feature-007-requirements.outcome.yaml"
	seven := change{head: map[string]string{path: outcometest.SeedFor(7)}, files: []ghfake.File{added(path)}}
	runJobCases(t, []jobCase{
		{name: "an outcome on an open issue is posted", change: seven, verdict: gate.Ship, posted: 1},
		{name: "an outcome on a closed issue is refused", change: seven,
			setup:   func(e *env, _ Request) { e.f.SetIssueState(owner, repo, 7, "closed") },
			verdict: gate.Hold, want: []string{"outcome.issue-open error " + path}},
		{name: "the outcome's issue cannot be read", change: seven,
			setup:   func(e *env, _ Request) { e.f.FailNext(1, 502, "/issues/7") },
			wantErr: "reading issue #7"},
	})
}

// padded is files, plus n files that GitHub lists before .github/ and
// outcomes/ (a pull request's files come in path order), and the listing
// of them all: the padding added, then more.
func padded(n int, files map[string]string, more ...ghfake.File) (map[string]string, []ghfake.File) {
	all := map[string]string{}
	var list []ghfake.File
	for i := range n {
		p := fmt.Sprintf("-pad/%04d.txt", i)
		all[p] = "x\n"
		list = append(list, added(p))
	}
	for p, content := range files {
		all[p] = content
	}
	return all, append(list, more...)
}

// TestCheckCommitLongChange: attack 2. GitHub lists at most 3,000 files
// of a pull request (300 of a comparison), in path order: padding that
// sorts first pushes an edit of the gate out of the listing. The change is
// then read from the trees, in full, or the check fails naming the limit.
func TestCheckCommitLongChange(t *testing.T) {
	t.Parallel()
	loosen, loosenFiles := padded(3005, map[string]string{cfgPath: "ignore: [\"**\"]\n"}, modified(cfgPath))
	const path = "outcomes/feature-001-requirements.outcome.yaml"
	edit, editFiles := padded(300, map[string]string{path: outcometest.SeedFor(1) + "# edited\n"}, modified(path))
	runJobCases(t, []jobCase{
		{name: "an edit of the configuration past 3,000 files of a pull request",
			change:  change{base: map[string]string{cfgPath: "rules: {}\n"}, head: loosen, files: loosenFiles},
			verdict: gate.Hold, want: []string{"gate.config-change error " + cfgPath}},
		{name: "an edit of an outcome past 300 files of a push",
			change:  change{base: map[string]string{path: outcometest.SeedFor(1)}, head: edit, files: editFiles, push: true},
			verdict: gate.Hold, want: []string{"outcome.immutable error " + path}},
		// A pull request's change is compared as a push's is: the
		// failures are the same.
		{name: "a change whose trees are over the limit",
			change:  change{base: map[string]string{path: outcometest.SeedFor(1)}, head: edit, files: editFiles, push: true},
			job:     func(j *Job) { j.Handler.TreeLimits.MaxEntries = 100 },
			wantErr: "the limit is MaxEntries 100"},
		{name: "the trees cannot be read",
			change:  change{base: map[string]string{path: outcometest.SeedFor(1)}, head: edit, files: editFiles, push: true},
			setup:   func(e *env, _ Request) { e.f.FailNext(1, 502, "/git/trees/") },
			wantErr: "its trees could not be compared"},
	})
}
