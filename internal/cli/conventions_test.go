package cli

import (
	"bytes"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/phasegate/phasegate/internal/testutil"
)

// TestVersionFlags: -v and --version print what `phasegate version`
// prints, on stdout, and exit 0; -h and --help before a command are
// `phasegate help COMMAND`.
func TestVersionFlags(t *testing.T) {
	want := run(t, "version")
	if want.code != ExitOK || want.stderr != "" || !strings.HasPrefix(want.stdout, "phasegate ") {
		t.Fatalf("version: exit %d, stdout %q, stderr %q", want.code, want.stdout, want.stderr)
	}
	for _, args := range [][]string{{"-v"}, {"--version"}, {"-version"}, {"--no-color", "-v"}} {
		if got := run(t, args...); got != want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want what version prints", args, got.code, got.stdout, got.stderr)
		}
	}
	for _, args := range [][]string{{"--help", "gate"}, {"-h", "gate"}, {"--color=never", "--help", "gate"}} {
		if got, want := run(t, args...), run(t, "help", "gate"); got != want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want what help gate prints", args, got.code, got.stdout, got.stderr)
		}
	}
	if got := run(t, "-v", "extra"); got.code != ExitUsage || !strings.Contains(got.stderr, `version takes no arguments (got "extra")`) {
		t.Errorf("-v extra: exit %d, stderr %q; want a usage error", got.code, got.stderr)
	}
}

// TestDidYouMean: a mistyped command, flag or --kind is a usage error
// (exit 2) whose first line names the nearest candidate, with what was
// typed quoted and escaped: it reaches a terminal or a workflow log.
func TestDidYouMean(t *testing.T) {
	file := testutil.WriteTree(t, t.TempDir(), map[string]string{"gate.md": "x"})
	file = filepath.Join(file, "gate.md")
	tests := []struct {
		name string
		args []string
		want string // stderr's first line
	}{
		{name: "command", args: []string{"valdate"}, want: `phasegate: unknown command "valdate"; did you mean "validate"?`},
		{name: "command, swapped letters", args: []string{"gtae", "."}, want: `phasegate: unknown command "gtae"; did you mean "gate"?`},
		{name: "command, far from any", args: []string{"frobnicate"}, want: `phasegate: unknown command "frobnicate"`},
		{name: "command, escaped", args: []string{"valid\x1b[2Jate"}, want: `phasegate: unknown command "valid\x1b[2Jate"`},
		{name: "help's command", args: []string{"help", "decisons"}, want: `phasegate: help: unknown command "decisons"; did you mean "decisions"? (run 'phasegate help' for the list)`},
		{name: "flag", args: []string{"validate", "--chache", "c.json", "."}, want: `phasegate: unknown flag "--chache"; did you mean "--cache"?`},
		{name: "flag after the path", args: []string{"gate", ".", "-fromat", "json"}, want: `phasegate: unknown flag "--fromat"; did you mean "--format"?`},
		{name: "flag of decisions", args: []string{"decisions", "--isue", "3"}, want: `phasegate: unknown flag "--isue"; did you mean "--issue"?`},
		{name: "flag of schema", args: []string{"schema", "--convention"}, want: `phasegate: unknown flag "--convention"; did you mean "--conventions"?`},
		{name: "flag of reconcile", args: []string{"reconcile", "--rep", "a/b"}, want: `phasegate: unknown flag "--rep"; did you mean "--repo"?`},
		{name: "flag before the command", args: []string{"--verison"}, want: `phasegate: unknown flag "--verison"; did you mean "--version"?`},
		{name: "flag, far from any", args: []string{"validate", "--frobnicate"}, want: `phasegate: unknown flag "--frobnicate"`},
		{name: "flag, escaped", args: []string{"validate", "--cac\u202ehe"}, want: `phasegate: unknown flag "--cac\u202ehe"; did you mean "--cache"?`},
		{name: "--kind", args: []string{"validate", "--kind", "pace.gate-reprot", file}, want: `phasegate: unknown --kind "pace.gate-reprot"; did you mean "pace.gate-report"? (run 'phasegate schema' to list the kinds)`},
		{name: "--kind, far from any", args: []string{"validate", "--kind", "nope", file}, want: `phasegate: unknown --kind "nope" (run 'phasegate schema' to list the kinds)`},
		{name: "--kind, escaped", args: []string{"gate", "--kind", "pace.gate\x1b]8;;-report", file}, want: `phasegate: unknown --kind "pace.gate\x1b]8;;-report" (run 'phasegate schema' to list the kinds)`},
		{name: "schema's KIND", args: []string{"schema", "pace.handof"}, want: `phasegate: unknown kind "pace.handof"; did you mean "pace.handoff"? (run 'phasegate schema' to list the kinds)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := run(t, tc.args...)
			if line := firstLine(got.stderr); got.code != ExitUsage || line != tc.want {
				t.Errorf("exit %d, stderr's first line\n  %s\nwant exit 2 and\n  %s", got.code, line, tc.want)
			}
			if strings.ContainsAny(got.stderr, "\x1b\u202e") || got.stdout != "" {
				t.Errorf("stderr holds what was typed unescaped, or stdout is not empty:\n%q\n%q", got.stderr, got.stdout)
			}
		})
	}
}

// TestUnreadablePath: a PATH phasegate cannot read is reported as such,
// exit 2 (could not run), before anything is checked or printed — never
// as the config it would have read there, never as a finding (exit 1).
// Tests run as root, which reads mode-000 files, so the unreadable cases
// are a path that does not exist, a path through a file, a socket (which
// nobody can open) and an open that fails as it fails for other users;
// the mode-000 cases run only when the tests do not run as root.
func TestUnreadablePath(t *testing.T) {
	dir := testutil.WriteTree(t, t.TempDir(), map[string]string{
		"tree/.pace/day-1/gate-report.yaml":   validGateReport,
		"locked/.pace/day-1/gate-report.yaml": validGateReport,
		"plain.txt":                           "x\n",
	})
	tree, locked, file := filepath.Join(dir, "tree"), filepath.Join(dir, "locked"), filepath.Join(dir, "locked", ".pace", "day-1", "gate-report.yaml")
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	denied := func(p string) (*os.File, error) {
		if strings.HasPrefix(p, locked) {
			return nil, &fs.PathError{Op: "open", Path: p, Err: syscall.EACCES}
		}
		return os.Open(p)
	}
	tests := []struct {
		name  string
		args  []string
		open  func(string) (*os.File, error)
		mode  bool // chmod locked to 000 (not as root)
		where string
		why   string
	}{
		{name: "does not exist", args: []string{"validate", filepath.Join(dir, "nope")}, where: filepath.Join(dir, "nope"), why: "no such file or directory"},
		{name: "through a file", args: []string{"gate", filepath.Join(dir, "plain.txt", "x")}, where: filepath.Join(dir, "plain.txt", "x"), why: "not a directory"},
		{name: "a socket", args: []string{"validate", "--format", "json", sock}, where: sock, why: "no such device or address"},
		{name: "a directory that cannot be listed", args: []string{"gate", locked}, open: denied, where: locked, why: "permission denied"},
		{name: "a file that cannot be read", args: []string{"validate", "--kind", "pace.gate-report", file}, open: denied, where: file, why: "permission denied"},
		{name: "the second of two", args: []string{"validate", tree, locked}, open: denied, where: locked, why: "permission denied"},
		{name: "mode 000 directory", args: []string{"gate", locked}, mode: true, where: locked, why: "permission denied"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.mode {
				if os.Geteuid() == 0 {
					t.Skip("root reads a mode-000 directory: the injected open above covers it")
				}
				if err := os.Chmod(locked, 0); err != nil {
					t.Fatal(err)
				}
				defer os.Chmod(locked, 0o755)
			}
			var stdout, stderr bytes.Buffer
			e := &environment{getenv: func(string) string { return "" }, stdout: &stdout, stderr: &stderr, open: os.Open}
			if tc.open != nil {
				e.open = tc.open
			}
			code := e.check(tc.args[0], tc.args[1:])
			want := "phasegate: cannot read PATH " + tc.where + ": "
			if code != ExitUsage || !strings.HasPrefix(stderr.String(), want) || !strings.HasSuffix(stderr.String(), tc.why+"\n") {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q…%q", code, stderr.String(), want, tc.why)
			}
			if stdout.Len() > 0 || strings.Contains(stderr.String(), "reading config") {
				t.Errorf("stdout %q, stderr %q: want nothing checked, no config named", stdout.String(), stderr.String())
			}
		})
	}
}
