package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/testutil"
	"github.com/phasegate/phasegate/internal/testutil/outcometest"
)

const (
	decBot    = "github-actions[bot]"
	decOwner  = "acme"
	decRepo   = "shop"
	decCommit = "0123456789abcdef0123456789abcdef01234567"
)

// decWorld is a fake GitHub holding acme/shop and a manual clock shared with
// the command under test.
type decWorld struct {
	t     *testing.T
	fake  *ghfake.Server
	clock *ghfake.ManualClock
	ids   map[int]string // issue → its seed outcome's id
	env   map[string]string
}

func newDecWorld(t *testing.T) *decWorld {
	t.Helper()
	f := ghfake.New()
	t.Cleanup(f.Close)
	clock := ghfake.NewManualClock(time.Date(2026, 3, 13, 5, 0, 0, 0, time.UTC))
	f.SetClock(clock.Now)
	f.AddToken("tok", decBot)
	f.AddUser(decBot, "Bot")
	f.AddRepo(decOwner, decRepo, "main")
	return &decWorld{t: t, fake: f, clock: clock, ids: map[int]string{},
		env: map[string]string{"GITHUB_TOKEN": "tok", "GITHUB_API_URL": f.URL(), "GITHUB_REPOSITORY": decOwner + "/" + decRepo}}
}

// outcome posts the seed outcome (D-001 blocking approval, D-002 optional
// capture) for feature-<issue> on the issue, as phasegate.
func (w *decWorld) outcome(issue int) {
	w.t.Helper()
	src := outcometest.SeedFor(issue)
	path := fmt.Sprintf("outcomes/feature-%03d-requirements.outcome.yaml", issue)
	body, id := outcometest.Render(w.t, src, outcome.Meta{Source: path, Commit: decCommit, PR: 0, Actors: []string{"agent-bot"}})
	w.fake.SetFile(decOwner, decRepo, decCommit, path, []byte(src))
	w.clock.Advance(time.Minute)
	w.fake.AddComment(decOwner, decRepo, issue, decBot, body)
	w.ids[issue] = id
	w.fake.LabelIssue(decOwner, decRepo, issue, "phasegate:pending")
}

// resolve posts alice's command and phasegate's resolution of it.
func (w *decWorld) resolve(issue int, decision, option string) {
	w.t.Helper()
	w.clock.Advance(time.Minute)
	cmd := w.fake.AddComment(decOwner, decRepo, issue, "alice", "/resolve "+decision+" "+option)
	body, err := outcome.RenderResolution(outcome.Resolution{Outcome: w.ids[issue], Decision: decision, Option: option, By: "alice", Command: cmd, Auth: "write"}, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	w.clock.Advance(time.Second)
	w.fake.AddComment(decOwner, decRepo, issue, decBot, body)
}

// sleeper advances the shared clock and runs the hook before the n-th
// sleep (1-based), as if time passed while someone acted on GitHub.
type sleeper struct {
	mu    sync.Mutex
	clock *ghfake.ManualClock
	hooks map[int]func()
	slept []time.Duration
}

func (s *sleeper) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.slept = append(s.slept, d)
	hook := s.hooks[len(s.slept)]
	s.mu.Unlock()
	if err := s.clock.Sleep(ctx, d); err != nil {
		return err
	}
	if hook != nil {
		hook()
	}
	return nil
}

func (s *sleeper) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.slept...)
}

func (w *decWorld) run(sl *sleeper, args ...string) result {
	w.t.Helper()
	if sl == nil {
		sl = &sleeper{clock: w.clock}
	}
	var stdout, stderr bytes.Buffer
	e := &environment{getenv: func(k string) string { return w.env[k] }, stdout: &stdout, stderr: &stderr}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := e.runDecisions(ctx, args, clock{now: w.clock.Now, sleep: sl.sleep})
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

func TestDecisionsGolden(t *testing.T) {
	w := newDecWorld(t)
	for i := 1; i <= 41; i++ {
		w.fake.AddIssue(decOwner, decRepo, fmt.Sprintf("issue %d", i), "", "alice")
	}
	for _, n := range []int{42, 43, 44} {
		w.fake.AddIssue(decOwner, decRepo, fmt.Sprintf("feature %d", n), "", "alice")
		w.outcome(n)
	}
	w.fake.AddIssue(decOwner, decRepo, "no outcome", "", "alice")
	w.resolve(42, "D-002", "capture")
	w.resolve(43, "D-001", "approve")
	w.resolve(43, "D-002", "discard")
	w.resolve(44, "D-002", "capture")
	cs := w.fake.Comments(decOwner, decRepo, 44)
	w.fake.EditComment(cs[len(cs)-1].ID, cs[len(cs)-1].Body+"\n(edited)")
	tests := []struct {
		name   string
		args   []string
		golden string
	}{
		{name: "one issue, text", args: []string{"--issue", "42"}, golden: "issue.txt"},
		{name: "one issue, json", args: []string{"--issue", "42", "--format", "json"}, golden: "issue.json"},
		{name: "all resolved, text", args: []string{"--issue", "43"}, golden: "resolved.txt"},
		{name: "tampered, json", args: []string{"--issue", "44", "--format", "json"}, golden: "tampered.json"},
		{name: "tampered, text", args: []string{"--issue", "44"}, golden: "tampered.txt"},
		{name: "no outcome, json", args: []string{"--issue", "45", "--format", "json"}, golden: "empty.json"},
		{name: "no outcome, text", args: []string{"--issue", "45"}, golden: "empty.txt"},
		{name: "waiting issues, text", args: nil, golden: "pending.txt"},
		{name: "waiting issues, json", args: []string{"--format", "json"}, golden: "pending.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := w.run(nil, tc.args...)
			if r.code != ExitOK {
				t.Fatalf("exit %d, want 0; stderr %s", r.code, r.stderr)
			}
			testutil.Golden(t, filepath.Join("testdata", "decisions", tc.golden), []byte(r.stdout))
		})
	}
}

// The JSON shape is a public interface: exactly these keys.
func TestDecisionsJSONShape(t *testing.T) {
	w := newDecWorld(t)
	w.outcome(42)
	w.resolve(42, "D-002", "capture")
	r := w.run(nil, "--issue", "42", "--format", "json")
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sortedKeys(doc), ","); got != "decisions,issue,phase,repository,tampered" {
		t.Errorf("top-level keys %s", got)
	}
	var ds []map[string]any
	if err := json.Unmarshal(doc["decisions"], &ds); err != nil || len(ds) != 2 {
		t.Fatalf("decisions %s (%v)", doc["decisions"], err)
	}
	want := map[string]string{
		"D-001": "blocking,id,outcome,phase,status,type",
		"D-002": "at,blocking,by,comment,id,option,outcome,phase,status,type",
	}
	for _, d := range ds {
		if got := strings.Join(sortedKeys(d), ","); got != want[d["id"].(string)] {
			t.Errorf("%s has keys %s, want %s", d["id"], got, want[d["id"].(string)])
		}
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// Agent-written text never reaches the terminal raw.
func TestDecisionsTextEscapes(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"D-001", "D-001"},
		{"planning", "planning"},
		{"evil\x1b[2J", `"evil\x1b[2J"`},
		{"two words", `"two words"`},
		{"rtl\u202eoverride", `"rtl\u202eoverride"`},
		{"", `""`},
	}
	for _, tc := range tests {
		if got := clean(tc.in); got != tc.want {
			t.Errorf("clean(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestDecisionsUsage(t *testing.T) {
	w := newDecWorld(t)
	tests := []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string
	}{
		{name: "help", args: []string{"-h"}, code: ExitOK, want: "Usage: phasegate decisions"},
		{name: "bad format", args: []string{"--issue", "1", "--format", "sarif"}, code: ExitUsage, want: "--format must be text or json"},
		{name: "wait needs an issue", args: []string{"--wait", "D-001"}, code: ExitUsage, want: "--wait needs --issue"},
		{name: "negative timeout", args: []string{"--issue", "1", "--wait", "D-001", "--timeout", "-1s"}, code: ExitUsage, want: "--timeout must not be negative"},
		{name: "bad wait spec", args: []string{"--issue", "1", "--wait", "requirements:"}, code: ExitUsage, want: "--wait must be"},
		{name: "arguments", args: []string{"42"}, code: ExitUsage, want: "takes no arguments"},
		{name: "bad repo", args: []string{"--repo", "acme", "--issue", "1"}, code: ExitUsage, want: "owner/name"},
		{name: "repo with a path", args: []string{"--repo", "acme/shop/issues", "--issue", "1"}, code: ExitUsage, want: "owner/name"},
		{name: "no token", env: map[string]string{"GITHUB_REPOSITORY": "acme/shop"}, args: []string{"--issue", "1"}, code: ExitUsage, want: "no token"},
		{name: "bad token", env: map[string]string{"GITHUB_TOKEN": "nope", "GITHUB_API_URL": w.fake.URL(), "GITHUB_REPOSITORY": "acme/shop"}, args: []string{"--issue", "1"}, code: ExitUsage, want: "reading acme/shop#1"},
		{name: "unknown repository", args: []string{"--repo", "acme/nope", "--issue", "1"}, code: ExitUsage, want: "reading acme/nope#1"},
		{name: "wait with a bad token", env: map[string]string{"PHASEGATE_TOKEN": "nope", "GITHUB_API_URL": w.fake.URL(), "GITHUB_REPOSITORY": "acme/shop"}, args: []string{"--issue", "1", "--wait", "D-001"}, code: ExitUsage, want: "Bad credentials"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			saved := w.env
			if tc.env != nil {
				w.env = tc.env
			}
			defer func() { w.env = saved }()
			r := w.run(nil, tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d; stderr %s", r.code, tc.code, r.stderr)
			}
			if !strings.Contains(r.stdout+r.stderr, tc.want) {
				t.Errorf("output lacks %q:\n%s%s", tc.want, r.stdout, r.stderr)
			}
		})
	}
}

// The command is wired into Main.
func TestDecisionsViaMain(t *testing.T) {
	w := newDecWorld(t)
	w.outcome(42)
	var stdout, stderr bytes.Buffer
	code := Main([]string{"decisions", "--issue", "42"}, func(k string) string { return w.env[k] }, &stdout, &stderr)
	if code != ExitOK || !strings.Contains(stdout.String(), "acme/shop#42: phase requirements") {
		t.Fatalf("exit %d, stdout %s, stderr %s", code, stdout.String(), stderr.String())
	}
}

// TestDecisionsWait: --wait exits 0 on a positive resolution, 1 on a
// negative one, 3 at the timeout, polling with backoff and conditional
// requests, in zero real time.
func TestDecisionsWait(t *testing.T) {
	tests := []struct {
		name      string
		config    string            // .github/phasegate.yml on the default branch
		setup     func(w *decWorld) // before the command runs
		hooks     func(w *decWorld) map[int]func()
		args      []string
		wantCode  int
		wantWaits []time.Duration
		wantOut   string
	}{
		{
			name:  "approved while waiting",
			setup: func(w *decWorld) { w.outcome(42) },
			hooks: func(w *decWorld) map[int]func() {
				return map[int]func(){3: func() { w.resolve(42, "D-001", "approve") }}
			},
			args: []string{"--wait", "D-001"}, wantCode: ExitOK,
			wantWaits: []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second},
			wantOut:   "approve by @alice",
		},
		{
			name:  "rejected while waiting",
			setup: func(w *decWorld) { w.outcome(42) },
			hooks: func(w *decWorld) map[int]func() {
				return map[int]func(){1: func() { w.resolve(42, "D-001", "reject") }}
			},
			args: []string{"--wait", "D-001", "--format", "json"}, wantCode: ExitFindings,
			wantWaits: []time.Duration{5 * time.Second}, wantOut: `"option": "reject"`,
		},
		{
			name:  "request-changes is negative by default",
			setup: func(w *decWorld) { w.outcome(42); w.resolve(42, "D-001", "request-changes") },
			args:  []string{"--wait", "D-001"}, wantCode: ExitFindings, wantOut: "request-changes by @alice",
		},
		{
			name:   "negative options from the config",
			config: "decisions:\n  negative_options: [reject]\n",
			setup:  func(w *decWorld) { w.outcome(42); w.resolve(42, "D-001", "request-changes") },
			args:   []string{"--wait", "D-001"}, wantCode: ExitOK, wantOut: "request-changes by @alice",
		},
		{
			name:  "already resolved: no wait",
			setup: func(w *decWorld) { w.outcome(42); w.resolve(42, "D-001", "approve") },
			args:  []string{"--wait", "requirements:D-001"}, wantCode: ExitOK, wantOut: "approve by @alice",
		},
		{
			name:  "a non-blocking decision",
			setup: func(w *decWorld) { w.outcome(42) },
			hooks: func(w *decWorld) map[int]func() {
				return map[int]func(){2: func() { w.resolve(42, "D-002", "discard") }}
			},
			args: []string{"--wait", "D-002"}, wantCode: ExitOK,
			wantWaits: []time.Duration{5 * time.Second, 10 * time.Second}, wantOut: "discard by @alice",
		},
		{
			name:  "still pending at the timeout",
			setup: func(w *decWorld) { w.outcome(42) },
			args:  []string{"--wait", "D-001", "--timeout", "1m"}, wantCode: ExitStillPending,
			wantWaits: []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 25 * time.Second},
			wantOut:   "still pending after 1m0s",
		},
		{
			name:  "backoff is capped at a minute",
			setup: func(w *decWorld) { w.outcome(42) },
			args:  []string{"--wait", "D-001", "--timeout", "4m"}, wantCode: ExitStillPending,
			wantWaits: []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, 60 * time.Second, 60 * time.Second, 45 * time.Second},
		},
		{
			name:  "another phase's decision of the same id does not count",
			setup: func(w *decWorld) { w.outcome(42); w.resolve(42, "D-001", "approve") },
			args:  []string{"--wait", "planning:D-001", "--timeout", "10s"}, wantCode: ExitStillPending,
			wantWaits: []time.Duration{5 * time.Second, 5 * time.Second}, wantOut: "not on the issue yet",
		},
		{
			name:  "the outcome arrives while waiting",
			setup: func(w *decWorld) { w.fake.AddIssue(decOwner, decRepo, "feature", "", "alice") },
			hooks: func(w *decWorld) map[int]func() {
				return map[int]func(){1: func() { w.outcome(1) }, 2: func() { w.resolve(1, "D-001", "approve") }}
			},
			args: []string{"--wait", "D-001"}, wantCode: ExitOK,
			wantWaits: []time.Duration{5 * time.Second, 10 * time.Second}, wantOut: "approve by @alice",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newDecWorld(t)
			if tc.config != "" {
				w.fake.SetFile(decOwner, decRepo, "", ".github/phasegate.yml", []byte(tc.config))
			}
			issue := "42"
			if tc.setup != nil {
				tc.setup(w)
			}
			if _, ok := w.ids[42]; !ok {
				issue = "1"
			}
			sl := &sleeper{clock: w.clock}
			if tc.hooks != nil {
				sl.hooks = tc.hooks(w)
			}
			w.fake.ResetCalls()
			start := w.clock.Now()
			r := w.run(sl, append([]string{"--issue", issue}, tc.args...)...)
			if r.code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stdout %s stderr %s", r.code, tc.wantCode, r.stdout, r.stderr)
			}
			if got := sl.waits(); fmt.Sprint(got) != fmt.Sprint(tc.wantWaits) && !(len(got) == 0 && len(tc.wantWaits) == 0) {
				t.Errorf("waited %v, want %v", got, tc.wantWaits)
			}
			if !strings.Contains(r.stdout+r.stderr, tc.wantOut) {
				t.Errorf("output lacks %q:\n%s\n%s", tc.wantOut, r.stdout, r.stderr)
			}
			// Polls of an unchanged issue are conditional and answered 304.
			polls := len(tc.wantWaits) + 1
			var lists, notModified int
			for _, c := range w.fake.Calls() {
				if c.Method == "GET" && strings.HasSuffix(c.Path, "/comments") {
					lists++
					if c.Status == 304 {
						notModified++
					}
					if lists > 1 && !c.Conditional {
						t.Errorf("poll %d of the comments was not conditional", lists)
					}
				}
			}
			if lists != polls {
				t.Errorf("%d comment listings, want one per poll (%d)", lists, polls)
			}
			changes := len(sl.hooks)
			if want := polls - 1 - changes; notModified < want {
				t.Errorf("%d listings answered 304, want at least %d", notModified, want)
			}
			if elapsed := w.clock.Now().Sub(start); tc.wantCode == ExitStillPending && elapsed < 10*time.Second {
				t.Errorf("gave up after %s of (fake) time", elapsed)
			}
		})
	}
}
