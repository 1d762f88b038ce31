package checkjob

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/gate"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/testutil/outcometest"
)

// TestCheckAsTheActionRunsIt: the options the action's run sets on the one
// job (a checkout's directory, its history, a checked subdirectory, no
// token, a workflow of the repository) and the App's own rules, each
// through Job.Check.
func TestCheckAsTheActionRunsIt(t *testing.T) {
	t.Parallel()
	const (
		seven    = "outcomes/feature-007-requirements.outcome.yaml"
		noIssue  = "outcomes/avatar-requirements.outcome.yaml"
		otherDir = "other/outcomes/feature-001-requirements.outcome.yaml"
	)
	unnumbered := strings.Replace(outcometest.SeedFor(7), "feature: feature-007", "feature: avatar-upload", 1)
	errHistory := errors.New("the checkout has no history")
	history := func(c map[string]check.Change, err error) func(context.Context) (map[string]check.Change, error) {
		return func(context.Context) (map[string]check.Change, error) { return c, err }
	}
	tests := []struct {
		name    string
		main    map[string]string // the default branch's files
		head    map[string]string // the checkout (and the head's tree)
		files   []ghfake.File     // the API's change; nil: none
		sub     string            // the checked directory ("": the repository)
		req     func(*Request)
		job     func(*Job)
		setup   func(*env)
		noToken bool
		verdict gate.Verdict
		want    []string // "rule severity file" among the findings
		absent  []string // … and not among them
		skipped string   // a note of out.Skipped
		wantErr string
	}{
		{name: "the checkout's history gives the change", head: map[string]string{seven: outcometest.SeedFor(7)},
			req:     func(r *Request) { r.Local = history(map[string]check.Change{seven: check.Modified}, nil) },
			verdict: gate.Hold, want: []string{"outcome.immutable error " + seven}},
		{name: "history cannot tell: the API's change of the commit", head: map[string]string{seven: outcometest.SeedFor(7)},
			files: []ghfake.File{modified(seven)}, req: func(r *Request) { r.Local = history(nil, errHistory) },
			verdict: gate.Hold, want: []string{"outcome.immutable error " + seven}},
		{name: "history cannot tell and the API fails: the check fails", head: map[string]string{seven: outcometest.SeedFor(7)},
			files: []ghfake.File{modified(seven)}, req: func(r *Request) { r.Local = history(nil, errHistory) },
			setup:   func(e *env) { e.f.FailNext(1, 502, "/compare/") },
			wantErr: "listing the files changed since b000000"},
		{name: "no token and no history: the commit-aware rules are skipped, saying why", head: map[string]string{seven: outcometest.SeedFor(7)},
			noToken: true, req: func(r *Request) { r.Local = history(nil, errHistory) },
			verdict: gate.Ship, absent: []string{"outcome.immutable error " + seven}, skipped: "commit-aware checks: the checkout has no history"},
		{name: "no token: the defaults, nothing read", main: map[string]string{cfgPath: "ignore: [\"**\"]\n"}, head: map[string]string{"outcomes/broken.outcome.yaml": broken},
			noToken: true, verdict: gate.Hold, want: []string{"schema error outcomes/broken.outcome.yaml"}},
		{name: "the API's change is cut to the checked directory", sub: "app",
			head:  map[string]string{"app/" + seven: outcometest.SeedFor(7), otherDir: outcometest.SeedFor(1)},
			files: []ghfake.File{modified("app/" + seven), modified(otherDir)}, req: func(r *Request) { r.Local = history(nil, errHistory) },
			verdict: gate.Hold, want: []string{"outcome.immutable error " + seven}, absent: []string{"outcome.immutable error " + otherDir}},
		{name: "an invalid configuration is a finding on its repository path", sub: "app", main: map[string]string{cfgPath: "rules: [\n"},
			head: map[string]string{"app/" + seven: outcometest.SeedFor(7)}, verdict: gate.Hold, want: []string{"config error " + cfgPath}},
		{name: "a workflow run has no gate-change guard", head: map[string]string{cfgPath: "ignore: [\"**\"]\n"}, files: []ghfake.File{added(cfgPath)},
			req: func(r *Request) { r.PR = &ghclient.PR{Number: 1, Author: "agent-bot"} }, job: func(j *Job) { j.Workflow = true },
			verdict: gate.Advisory, absent: []string{"gate.config-change error " + cfgPath}},
		{name: "a workflow run vets a fork's outcomes", head: map[string]string{seven: outcometest.SeedFor(7)}, files: []ghfake.File{added(seven)},
			req: func(r *Request) { r.Fork = "mallory/shop" }, job: func(j *Job) { j.Workflow = true },
			setup:   func(e *env) { e.f.SetIssueState(owner, repo, 7, "closed") },
			verdict: gate.Hold, want: []string{"outcome.issue-open error " + seven}},
		{name: "the App vets no fork's outcomes", head: map[string]string{seven: outcometest.SeedFor(7)}, files: []ghfake.File{added(seven)},
			req:     func(r *Request) { r.Fork = "mallory/shop" },
			setup:   func(e *env) { e.f.SetIssueState(owner, repo, 7, "closed") },
			verdict: gate.Ship, absent: []string{"outcome.issue-open error " + seven}},
		{name: "an added outcome that names no issue, on a push", head: map[string]string{noIssue: unnumbered}, files: []ghfake.File{added(noIssue)},
			verdict: gate.Hold, want: []string{RuleOutcomeNoIssue + " error " + noIssue}},
		{name: "an added outcome that names no issue, on a workflow's push", head: map[string]string{noIssue: unnumbered}, files: []ghfake.File{added(noIssue)},
			job: func(j *Job) { j.Workflow = true }, verdict: gate.Hold, want: []string{RuleOutcomeNoIssue + " error " + noIssue}},
		{name: "no base: nothing is vetted, saying why", head: map[string]string{noIssue: unnumbered},
			verdict: gate.Advisory, absent: []string{RuleOutcomeNoIssue + " error " + noIssue}, skipped: "this event has no base commit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			e := newEnv(t)
			for p, content := range tc.main {
				e.f.SetFile(owner, repo, "", p, []byte(content))
			}
			dir := t.TempDir()
			for p, content := range tc.head {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			e.f.SetTreeFiles(owner, repo, baseSHA, map[string]string{"README.md": "# shop\n"})
			e.f.SetTreeFiles(owner, repo, headSHA, tc.head)
			req := Request{Owner: owner, Repo: repo, SHA: headSHA, Root: filepath.Join(dir, tc.sub), RootName: "."}
			if tc.sub != "" {
				req.Prefix = tc.sub + "/"
			}
			if tc.files != nil || tc.req != nil {
				req.Base = baseSHA
				e.f.SetCompare(owner, repo, baseSHA, headSHA, tc.files)
			}
			if tc.req != nil {
				tc.req(&req)
			}
			if tc.job != nil {
				tc.job(e.job)
			}
			if tc.setup != nil {
				tc.setup(e)
			}
			var gh GitHub = e.gh
			if tc.noToken {
				gh = nil
			}
			out, err := e.job.Check(context.Background(), gh, req)
			got := findings(Summary{Report: &out.Report})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, findings %q; want an error saying %q", err, got, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("could not check: %v", err)
			}
			if out.Report.Verdict.Verdict != tc.verdict {
				t.Errorf("verdict %s, findings %q; want %s", out.Report.Verdict.Verdict, got, tc.verdict)
			}
			for _, w := range tc.want {
				if !contains(got, w) {
					t.Errorf("no finding %q among %q", w, got)
				}
			}
			for _, a := range tc.absent {
				if contains(got, a) {
					t.Errorf("finding %q among %q", a, got)
				}
			}
			if tc.skipped != "" && !strings.Contains(strings.Join(out.Skipped, "\n"), tc.skipped) {
				t.Errorf("skipped %q, want a note saying %q", out.Skipped, tc.skipped)
			}
		})
	}
}
