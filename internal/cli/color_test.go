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
			if useColor(tc.out, func(k string) string { return env[k] }) {
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
