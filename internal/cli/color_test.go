package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/testutil"
)

// TestNoColorWhenNotATerminal: output to a buffer, a file or a pipe never
// has an escape sequence, whatever the environment says.
func TestNoColorWhenNotATerminal(t *testing.T) {
	root := testutil.WriteTree(t, t.TempDir(), map[string]string{".pace/day-2/gate-report.yaml": brokenYAML})
	file, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	tests := []struct {
		name string
		out  io.Writer
		read func() string
	}{
		{name: "buffer", out: &bytes.Buffer{}},
		{name: "file", out: file, read: func() string {
			b, err := os.ReadFile(file.Name())
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}},
		{name: "pipe", out: pw, read: func() string {
			pw.Close()
			b, err := io.ReadAll(pr)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"TERM": "xterm-256color"}
			if useColor("", tc.out, func(k string) string { return env[k] }) {
				t.Fatal("useColor = true for a writer that is not a terminal")
			}
			var stderr bytes.Buffer
			code := Main([]string{"gate", root}, func(k string) string { return env[k] }, tc.out, &stderr)
			if code != ExitFindings {
				t.Fatalf("exit %d, stderr %s", code, stderr.String())
			}
			out := ""
			if b, ok := tc.out.(*bytes.Buffer); ok {
				out = b.String()
			} else {
				out = tc.read()
			}
			if !strings.Contains(out, "error syntax:") || strings.Contains(out, "\x1b") {
				t.Errorf("output has an escape sequence, or no finding:\n%q", out)
			}
		})
	}
}

// TestColorMode: --color, --no-color, FORCE_COLOR, NO_COLOR and TERM
// decide the colour of text output that is not a terminal's (a terminal's
// is TestColorOnATerminal's): the flag beats the environment, given after
// the command beats given before it, and FORCE_COLOR beats NO_COLOR (as
// gh's CLICOLOR_FORCE and Node's FORCE_COLOR do).
func TestColorMode(t *testing.T) {
	root := testutil.WriteTree(t, t.TempDir(), map[string]string{".pace/day-2/gate-report.yaml": brokenYAML})
	tests := []struct {
		name      string
		env       map[string]string
		args      []string
		wantColor bool
	}{
		{name: "auto, not a terminal", args: []string{"validate", root}},
		{name: "--color=always", args: []string{"validate", "--color=always", root}, wantColor: true},
		{name: "--color always before the command", args: []string{"--color", "always", "gate", root}, wantColor: true},
		{name: "--color=always then --no-color", args: []string{"validate", "--color=always", "--no-color", root}},
		{name: "--no-color=false changes nothing", args: []string{"validate", "--color=always", "--no-color=false", root}, wantColor: true},
		{name: "after the command beats before", args: []string{"--color=always", "validate", "--color=never", root}},
		{name: "before the command is the default", args: []string{"--color=always", "validate", root}, wantColor: true},
		{name: "FORCE_COLOR", env: map[string]string{"FORCE_COLOR": "1"}, args: []string{"validate", root}, wantColor: true},
		{name: "FORCE_COLOR=0 forces nothing", env: map[string]string{"FORCE_COLOR": "0"}, args: []string{"validate", root}},
		{name: "FORCE_COLOR empty forces nothing", env: map[string]string{"FORCE_COLOR": ""}, args: []string{"validate", root}},
		{name: "FORCE_COLOR beats NO_COLOR", env: map[string]string{"FORCE_COLOR": "true", "NO_COLOR": "1"}, args: []string{"validate", root}, wantColor: true},
		{name: "FORCE_COLOR beats TERM=dumb", env: map[string]string{"FORCE_COLOR": "3", "TERM": "dumb"}, args: []string{"validate", root}, wantColor: true},
		{name: "--color=never beats FORCE_COLOR", env: map[string]string{"FORCE_COLOR": "1"}, args: []string{"validate", "--color=never", root}},
		{name: "--no-color beats FORCE_COLOR", env: map[string]string{"FORCE_COLOR": "1"}, args: []string{"--no-color", "validate", root}},
		{name: "--color=auto beats an earlier always", args: []string{"--color=always", "validate", "--color=auto", root}},
		{name: "json is never coloured", env: map[string]string{"FORCE_COLOR": "1"}, args: []string{"validate", "--color=always", "--format=json", root}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code := Main(tc.args, func(k string) string { return tc.env[k] }, &stdout, &stderr)
			if code != ExitFindings || stderr.Len() > 0 {
				t.Fatalf("exit %d, stderr %s", code, stderr.String())
			}
			if got := strings.Contains(stdout.String(), "\x1b["); got != tc.wantColor {
				t.Errorf("coloured = %v, want %v:\n%q", got, tc.wantColor, stdout.String())
			}
		})
	}
}

// TestColorFlagValues: --color takes auto, always or never; anything else
// is a usage error that quotes the value, escaped.
func TestColorFlagValues(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{args: []string{"validate", "--color=sometimes", "."}, want: `invalid value "sometimes" for flag -color: want auto, always or never`},
		{args: []string{"--color=\x1b[31mred", "validate"}, want: `invalid value "\x1b[31mred" for flag -color`},
		{args: []string{"gate", "--no-color=maybe"}, want: `invalid boolean value "maybe" for -no-color`},
	}
	for _, tc := range tests {
		got := run(t, tc.args...)
		if got.code != ExitUsage || !strings.Contains(got.stderr, tc.want) || strings.Contains(got.stderr, "\x1b") {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q, escaped", tc.args, got.code, got.stderr, tc.want)
		}
	}
}
