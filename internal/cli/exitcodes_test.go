package cli

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/testutil"
)

// holdingGate is a GATE report that holds and is valid: gate's verdict is
// HOLD with no error finding, validate's SHIP.
const holdingGate = `day: 1
agent: GATE
criteria_results:
  - criterion: "User.create() stores bcrypt-hashed password"
    result: FAIL
    evidence: "tests/test_user_model.py::test_create_hashes_password FAILED"
blockers:
  - "test_create_hashes_password fails: the password is stored in clear"
deferred: []
gate_decision: HOLD
hold_reason: "the password is stored in clear"
`

// documentedExitCodes reads the table of docs/cli.md's "Exit codes"
// section: each command's codes.
func documentedExitCodes(t *testing.T) map[string][]int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n### Exit codes\n")
	if !ok {
		t.Fatal(`docs/cli.md has no "### Exit codes" section`)
	}
	section, _, _ = strings.Cut(section, "\n### ")
	codes := map[string][]int{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z]+)` \\| ([0-9]+) \\|").FindAllStringSubmatch(section, -1) {
		n, _ := strconv.Atoi(m[2])
		codes[m[1]] = append(codes[m[1]], n)
	}
	return codes
}

// helpExitCodes are the codes the "Exit codes:" paragraph of a command's
// usage lists ("Exit codes: 0 …; 1 …; 2 …").
func helpExitCodes(usage string) []int {
	_, para, ok := strings.Cut(usage, "Exit codes:")
	if !ok {
		return nil
	}
	para, _, _ = strings.Cut(para, "\n\n")
	var codes []int
	for _, m := range regexp.MustCompile(`(?:^|;)\s+([0-9]+)\s`).FindAllStringSubmatch(para, -1) {
		n, _ := strconv.Atoi(m[1])
		codes = append(codes, n)
	}
	return codes
}

// exitCase produces one exit code of one command.
type exitCase struct {
	cmd, name string
	code      int
	run       func(t *testing.T) result
	// want is on stdout or stderr.
	want string
}

// TestDocumentedExitCodes: every exit code docs/cli.md documents for a
// command is produced by a case below, every case's code is documented,
// every command of the table has codes there, and the command's usage
// lists the same codes.
func TestDocumentedExitCodes(t *testing.T) {
	doc := documentedExitCodes(t)
	cases := exitCases(t)
	for _, c := range commands() {
		usage := run(t, c.name, "-h").stdout
		if got, want := helpExitCodes(usage), doc[c.name]; len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%s: the usage lists the exit codes %v, docs/cli.md %v:\n%s", c.name, got, want, usage)
		}
		for _, code := range doc[c.name] {
			if !slices.ContainsFunc(cases, func(ec exitCase) bool { return ec.cmd == c.name && ec.code == code }) {
				t.Errorf("%s: no case produces the documented exit code %d", c.name, code)
			}
		}
	}
	for _, ec := range cases {
		t.Run(fmt.Sprintf("%s/%d/%s", ec.cmd, ec.code, ec.name), func(t *testing.T) {
			if !slices.Contains(doc[ec.cmd], ec.code) {
				t.Errorf("docs/cli.md does not document exit %d for %s", ec.code, ec.cmd)
			}
			got := ec.run(t)
			if got.code != ec.code || !strings.Contains(got.stdout+got.stderr, ec.want) {
				t.Errorf("exit %d, want %d and %q\nstdout:\n%s\nstderr:\n%s", got.code, ec.code, ec.want, got.stdout, got.stderr)
			}
			if strings.Contains(got.stderr, "internal error") {
				t.Errorf("panicked:\n%s", got.stderr)
			}
		})
	}
}

func exitCases(t *testing.T) []exitCase {
	clean := testutil.WriteTree(t, t.TempDir(), map[string]string{".pace/day-1/gate-report.yaml": validGateReport})
	broken := testutil.WriteTree(t, t.TempDir(), map[string]string{".pace/day-2/gate-report.yaml": brokenYAML})
	holding := testutil.WriteTree(t, t.TempDir(), map[string]string{".pace/day-1/gate-report.yaml": holdingGate})
	missing := filepath.Join(t.TempDir(), "nope")
	sock := filepath.Join(t.TempDir(), "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	cli := func(args ...string) func(*testing.T) result {
		return func(t *testing.T) result { return run(t, args...) }
	}
	cases := []exitCase{
		{cmd: "validate", code: 0, name: "clean", run: cli("validate", clean), want: "SHIP"},
		{cmd: "validate", code: 0, name: "a holding decision is no finding", run: cli("validate", holding), want: "0 errors, 0 warnings — SHIP"},
		{cmd: "validate", code: 1, name: "an error finding", run: cli("validate", broken), want: "1 error, 0 warnings — HOLD"},
		{cmd: "validate", code: 2, name: "a PATH that does not exist", run: cli("validate", missing), want: "cannot read PATH " + missing},
		{cmd: "validate", code: 2, name: "a file PATH that cannot be read", run: cli("validate", sock), want: "cannot read PATH " + sock},
		{cmd: "validate", code: 2, name: "a mistyped flag", run: cli("validate", "--chache", "x", clean), want: `did you mean "--cache"?`},
		{cmd: "gate", code: 0, name: "clean", run: cli("gate", clean), want: "SHIP"},
		{cmd: "gate", code: 1, name: "a holding decision, no error", run: cli("gate", holding), want: "0 errors, 0 warnings — HOLD"},
		{cmd: "gate", code: 1, name: "an error finding", run: cli("gate", broken), want: "HOLD"},
		{cmd: "gate", code: 2, name: "a file PATH that cannot be read", run: cli("gate", "--format", "json", sock), want: "cannot read PATH " + sock},
		{cmd: "gate", code: 2, name: "a mistyped --kind", run: cli("gate", "--kind", "pace.handof", sock), want: `did you mean "pace.handoff"?`},
		{cmd: "demo", code: 0, name: "ran, its verdict HOLD", run: cli("demo"), want: "/resolve D-001"},
		{cmd: "demo", code: 2, name: "an argument", run: cli("demo", "now"), want: "demo takes no arguments"},
		{cmd: "schema", code: 0, name: "the kinds", run: cli("schema"), want: "pace.gate-report"},
		{cmd: "schema", code: 2, name: "an unknown KIND", run: cli("schema", "pace.nope"), want: `unknown kind "pace.nope"`},
		{cmd: "version", code: 0, name: "printed", run: cli("version"), want: "commit: "},
		{cmd: "version", code: 0, name: "-v", run: cli("-v"), want: "commit: "},
		{cmd: "version", code: 2, name: "an argument", run: cli("version", "now"), want: "version takes no arguments"},
		{cmd: "help", code: 0, name: "printed", run: cli("help", "gate"), want: "Usage: phasegate gate"},
		{cmd: "help", code: 2, name: "an unknown COMMAND", run: cli("help", "gat"), want: `did you mean "gate"?`},
		{cmd: "serve", code: 0, name: "-h", run: cli("serve", "-h"), want: "Usage: phasegate serve"},
		{cmd: "serve", code: 1, name: "--probe, nothing listening", run: cli("serve", "--probe", "--addr", "127.0.0.1:1"), want: "readyz"},
		{cmd: "serve", code: 2, name: "no webhook secret", run: cli("serve"), want: "no webhook secret"},
	}
	return append(append(cases, gitHubExitCases(t)...), actionExitCases(t)...)
}

// gitHubExitCases are reconcile's and decisions' cases, against a fake
// GitHub.
func gitHubExitCases(t *testing.T) []exitCase {
	w := newDecWorld(t)
	for i := 1; i <= 3; i++ {
		w.fake.AddIssue(decOwner, decRepo, fmt.Sprintf("feature %d", i), "", "alice")
		w.outcome(i)
	}
	w.resolve(2, "D-001", "approve")
	w.resolve(3, "D-001", "reject")
	decisions := func(args ...string) func(*testing.T) result {
		return func(t *testing.T) result { return w.run(nil, args...) }
	}
	withEnv := func(env map[string]string, args ...string) func(*testing.T) result {
		return func(t *testing.T) result {
			var stdout, stderr bytes.Buffer
			code := Main(args, func(k string) string { return env[k] }, &stdout, &stderr)
			return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
		}
	}
	return []exitCase{
		{cmd: "reconcile", code: 0, name: "reconciled", run: withEnv(w.env, "reconcile"), want: "acme/shop: "},
		{cmd: "reconcile", code: 2, name: "no token", run: withEnv(map[string]string{"GITHUB_REPOSITORY": "acme/shop"}, "reconcile"), want: "no token"},
		{cmd: "decisions", code: 0, name: "printed", run: decisions("--issue", "1"), want: "D-001"},
		{cmd: "decisions", code: 0, name: "resolved positively", run: decisions("--issue", "2", "--wait", "D-001"), want: "approve by @alice"},
		{cmd: "decisions", code: 1, name: "resolved negatively", run: decisions("--issue", "3", "--wait", "D-001"), want: "reject by @alice"},
		{cmd: "decisions", code: 2, name: "no token", run: withEnv(map[string]string{"GITHUB_REPOSITORY": "acme/shop"}, "decisions", "--issue", "1"), want: "no token"},
		{cmd: "decisions", code: 3, name: "still pending", run: decisions("--issue", "1", "--wait", "D-001", "--timeout", "1m"), want: "still pending after 1m0s"},
	}
}

// actionExitCases are the action's cases: a push checked against a fake
// GitHub, an event with nothing to check, and a shell that is no runner.
func actionExitCases(t *testing.T) []exitCase {
	f := ghfake.New()
	t.Cleanup(f.Close)
	f.AddToken("tok", "github-actions[bot]")
	f.AddRepo("acme", "shop", "main")
	const sha = "0123456789abcdef0123456789abcdef01234567"
	side := t.TempDir()
	event := filepath.Join(side, "event.json")
	if err := os.WriteFile(event, []byte(`{"after": "`+sha+`", "before": "0000000000000000000000000000000000000000", "repository": {"default_branch": "main"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	push := func(name string, files map[string]string) func(*testing.T) result {
		return func(t *testing.T) result {
			env := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": event,
				"GITHUB_OUTPUT": filepath.Join(t.TempDir(), "output"), "GITHUB_REPOSITORY": "acme/shop", "GITHUB_SHA": sha,
				"GITHUB_API_URL": f.URL(), "GITHUB_WORKSPACE": testutil.WriteTree(t, t.TempDir(), files),
				"INPUT_TOKEN": "tok", "INPUT_PATH": ".", "INPUT_FAIL-ON": "hold", "INPUT_POST-OUTCOMES": "false"}
			var stdout, stderr bytes.Buffer
			code := Main([]string{"action"}, func(k string) string { return env[k] }, &stdout, &stderr)
			return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
		}
	}
	return []exitCase{
		{cmd: "action", code: 0, name: "a push that passes", run: push("push", map[string]string{".pace/day-1/gate-report.yaml": validGateReport}), want: "— SHIP"},
		{cmd: "action", code: 0, name: "an event with nothing to check", run: push("release", nil), want: "nothing to do for the release event"},
		{cmd: "action", code: 1, name: "a push that holds", run: push("push", map[string]string{".pace/day-1/gate-report.yaml": holdingGate}), want: "— HOLD"},
		{cmd: "action", code: 2, name: "outside a runner", run: func(t *testing.T) result { return run(t, "action") }, want: "GITHUB_ACTIONS is not \"true\""},
		{cmd: "action", code: 2, name: "an argument", run: func(t *testing.T) result { return run(t, "action", "push") }, want: "action takes no arguments"},
	}
}
