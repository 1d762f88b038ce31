package action

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	githubactions "github.com/sethvargo/go-githubactions"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/checkjob"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/ghfake/ghfaketest"
	"github.com/phasegate/phasegate/internal/server"
)

// TestActionAndAppAgree: for the same ledger, the action (issue_comment
// and schedule runs) and the App's decision handler (as serve builds it,
// on a webhook and on pull_request) leave the same labels and the same
// phasegate/decisions status. Both post the outcome the same way: the
// action's pull_request run.
func TestActionAndAppAgree(t *testing.T) {
	t.Parallel()
	phaseOutcome := func(phase string) string {
		return strings.Replace(seedOutcome, "phase: requirements", "phase: "+phase, 1)
	}
	tests := []struct {
		name     string
		config   string
		outcome  string
		commands []string // by alice, in order
		tamper   bool
	}{
		{name: "approved: the phase moves on", outcome: seedOutcome, commands: []string{"/resolve D-001 approve"}},
		{name: "rejected", outcome: seedOutcome, commands: []string{"/resolve D-001 reject"}},
		{name: "a capture and a pending approval", outcome: seedOutcome, commands: []string{"/resolve D-002 capture"}},
		{name: "simplify is a developing phase", outcome: phaseOutcome("simplify"), commands: []string{"/resolve D-001 approve"}},
		{name: "code-validate is qa", outcome: phaseOutcome("code-validate")},
		{name: "qa-fix is qa", outcome: phaseOutcome("qa-fix")},
		{name: "configured phases and aliases", config: "phases:\n  sequence: [intake, planning, build]\n  aliases: {requirements: intake}\n",
			outcome: seedOutcome, commands: []string{"/resolve D-001 approve"}},
		{name: "an edited outcome comment", outcome: seedOutcome, tamper: true, commands: []string{"/resolve D-001 approve"}},
		{name: "an invalid config", config: "resolvers:\n  permision: admin\n", outcome: seedOutcome, commands: []string{"/resolve D-001 approve"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case has its own fake GitHubs and repositories
			type result struct{ labels, state, description string }
			run := func(app bool) result {
				rt := newRedTeam(t, "")
				if tc.config != "" {
					rt.fake.SetFile(rtOwner, rtRepo, "main", ".github/phasegate.yml", []byte(tc.config))
					rt.hold = true
				}
				rt.open(map[string]string{rtSource: tc.outcome})
				if tc.tamper {
					c := rt.lastBy("github-actions[bot]", "phasegate:outcome")
					rt.fake.EditComment(c.ID, strings.Replace(c.Body, "Approve PREQ", "Approve anything", 1))
				}
				var h server.Decider
				var gh *ghclient.Client
				if app {
					var err error
					if gh, err = ghclient.New(ghclient.Options{BaseURL: rt.fake.URL(), Token: "tok", Now: rt.clock.Now, Sleep: rt.clock.Sleep}); err != nil {
						t.Fatal(err)
					}
					h = server.DefaultDecider(server.DeciderOptions{Handler: &decide.Handler{Identity: "github-actions[bot]", Locks: decide.NewMemLocker(),
						Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}})
				}
				ctx := context.Background()
				for _, body := range tc.commands {
					if !app {
						rt.say("alice", body)
						continue
					}
					id := rt.fake.AddComment(rtOwner, rtRepo, rt.issue, "alice", body)
					if _, err := h.HandleComment(ctx, gh, decide.Event{Owner: rtOwner, Repo: rtRepo, Issue: rt.issue,
						Comment: decide.Comment{ID: id, Author: "alice", Body: body}}); err != nil {
						t.Fatal(err)
					}
				}
				if app {
					if err := h.SyncPullRequest(ctx, gh, rtOwner, rtRepo, rt.pr); err != nil {
						t.Fatal(err)
					}
					if _, err := h.ReconcileRepo(ctx, gh, rtOwner, rtRepo); err != nil {
						t.Fatal(err)
					}
				} else {
					rt.reconcile()
				}
				st := rt.decisions()
				return result{labels: rt.labels(), state: st.State, description: st.Description}
			}
			action, app := run(false), run(true)
			if action != app {
				t.Errorf("the action and the App disagree:\naction %+v\napp    %+v", action, app)
			}
			if action.state == "" {
				t.Errorf("no phasegate/decisions status: %+v", action)
			}
			t.Logf("%+v", action)
		})
	}
}

// unitTrees are the trees the checker's own tests check (every unit's
// consistent and inconsistent tree) and the demo, by name.
func unitTrees(t *testing.T) map[string]string {
	t.Helper()
	trees := map[string]string{"examples/demo": filepath.Join("..", "..", "examples", "demo")}
	units, err := filepath.Glob(filepath.Join("..", "check", "testdata", "units", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range units {
		if info, err := os.Stat(dir); err == nil && info.IsDir() {
			trees[filepath.ToSlash(strings.TrimPrefix(dir, filepath.Join("..", "check")+string(filepath.Separator)))] = dir
		}
	}
	if len(units) < 10 {
		t.Fatalf("%d unit trees under ../check/testdata/units, want the ten of five kinds", len(units))
	}
	return trees
}

// treeFiles are the files of dir, by '/'-separated path.
func treeFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestActionAndAppCheckAlike: the action (its checkout's directory) and the
// App (the commit's tree through the API) run the one checking job, and on
// every unit tree they reach the same verdict with the same findings: as a
// commit without a base, and as a change that adds the whole tree (the
// commit-aware rules, the outcomes vetted), with the default branch's
// configuration the tree's own when it has one.
func TestActionAndAppCheckAlike(t *testing.T) {
	t.Parallel()
	const base, head = "b000000000000000000000000000000000000000", "a100000000000000000000000000000000000001"
	validator, err := check.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	for name, dir := range unitTrees(t) {
		for _, withBase := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/base=%t", name, withBase), func(t *testing.T) {
				t.Parallel()
				f := ghfake.New()
				t.Cleanup(f.Close)
				ghfaketest.Verify(t, f)
				clock := ghfake.NewManualClock(time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC))
				f.SetClock(clock.Now)
				f.AddToken("tok", "github-actions[bot]")
				f.AddRepo(rtOwner, rtRepo, "main")
				files := treeFiles(t, dir)
				if cfg, ok := files[config.DefaultPath]; ok {
					f.SetFile(rtOwner, rtRepo, "", config.DefaultPath, []byte(cfg))
				}
				f.SetTreeFiles(rtOwner, rtRepo, head, files)
				f.SetTreeFiles(rtOwner, rtRepo, base, map[string]string{"BASE.md": "base\n"})
				ctx := context.Background()
				clientOpts := func(o *ghclient.Options) { o.Now, o.Sleep = clock.Now, clock.Sleep }

				// The action, as checkCommit runs it on its workspace.
				getenv := func(k string) string { return map[string]string{"GITHUB_API_URL": f.URL()}[k] }
				r := &run{a: githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(io.Discard)), getenv: getenv,
					log: &logWriter{w: io.Discard}, opts: Options{Version: "test", Client: clientOpts}, owner: rtOwner, repo: rtRepo}
				if !r.newClient("tok") {
					t.Fatal("no client")
				}
				cr := &commitRun{Request: checkjob.Request{SHA: head, Root: dir}, in: inputs{path: ".", config: config.DefaultPath}}
				if withBase {
					cr.Base = base
				}
				action, err := r.check(ctx, cr)
				if err != nil {
					t.Fatalf("the action could not check: %v", err)
				}

				// The App, as serve runs it on the commit.
				o := ghclient.Options{BaseURL: f.URL(), Token: "tok"}
				clientOpts(&o)
				gh, err := ghclient.New(o)
				if err != nil {
					t.Fatal(err)
				}
				req := checkjob.Request{Owner: rtOwner, Repo: rtRepo, SHA: head, Version: "test", HTMLURL: "https://github.com/acme/shop",
					Open: func(ctx context.Context, _ int64) (fs.FS, error) {
						return gh.CommitFS(ctx, rtOwner, rtRepo, head, ghclient.TreeLimits{})
					}}
				if withBase {
					req.Base = base
				}
				d := server.DefaultDecider(server.DeciderOptions{Validator: validator, Handler: &decide.Handler{Identity: "phasegate[bot]", Locks: decide.NewMemLocker(),
					Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}})
				sum, err := d.CheckCommit(ctx, gh, req)
				if err != nil || sum.Report == nil {
					t.Fatalf("the App could not check: %v", err)
				}

				got, want := action.Report, *sum.Report
				if got.Artifacts == 0 || got.Artifacts != want.Artifacts || got.Verdict.Verdict != want.Verdict.Verdict {
					t.Fatalf("action %s on %d artifacts, App %s on %d: want the same, on some", got.Verdict.Verdict, got.Artifacts, want.Verdict.Verdict, want.Artifacts)
				}
				if a, b := fmt.Sprintf("%+v", got.Findings), fmt.Sprintf("%+v", want.Findings); a != b {
					t.Errorf("the findings differ:\naction %s\napp    %s", a, b)
				}
				t.Logf("%s, %d artifacts, %d findings", got.Verdict.Verdict, got.Artifacts, len(got.Findings))
			})
		}
	}
}
