package action

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/report"
	"github.com/phasegate/phasegate/internal/testutil/sariftest"
)

// checkSARIF validates a log and returns its %SRCROOT% and the decoded
// paths of its results.
func checkSARIF(t *testing.T, data []byte) (string, []string) {
	t.Helper()
	return sariftest.Locations(t, data)
}

// TestSARIFFileForCodeScanning runs the action with sarif-file: the file is
// written in the workspace, is valid SARIF, names files relative to the
// repository root (the workspace) even when path is a subdirectory, and its
// path is the sarif-file output, ready for github/codeql-action/upload-sarif.
func TestSARIFFileForCodeScanning(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		path      string
		sarifFile string
		wantFile  string // the output, relative to the workspace
		wantPaths []string
	}{
		{name: "whole repository", path: ".", sarifFile: "phasegate.sarif", wantFile: "phasegate.sarif",
			wantPaths: []string{".pace/day-1/gate-report.yaml", "sub/dir/.pace/day-2/gate-report.yaml"}},
		{name: "subdirectory", path: "sub/dir", sarifFile: "reports/code scanning/phasegate.sarif", wantFile: "reports/code scanning/phasegate.sarif",
			wantPaths: []string{"sub/dir/.pace/day-2/gate-report.yaml"}},
		{name: "marker directory", path: "sub/dir/.pace", sarifFile: "phasegate.sarif", wantFile: "phasegate.sarif",
			wantPaths: []string{"sub/dir/.pace/day-2/gate-report.yaml"}},
		{name: "subdirectory given untidily", path: "./sub//dir/", sarifFile: "./out/../phasegate.sarif", wantFile: "phasegate.sarif",
			wantPaths: []string{"sub/dir/.pace/day-2/gate-report.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			f := newRepoFixture(t)
			base := f.commit(map[string]string{"README.md": "shop\n"})
			head := f.commit(map[string]string{
				".pace/day-1/gate-report.yaml":         "day: 1\nagent: [\n",
				"sub/dir/.pace/day-2/gate-report.yaml": "day: 2\nagent: [\n",
			})
			code, log := f.runAction(f.env("push", pushEvent(base, head), map[string]string{
				"INPUT_PATH": tt.path, "INPUT_SARIF-FILE": tt.sarifFile, "INPUT_FORMAT": "sarif",
			}))
			if code != exitFindings {
				t.Fatalf("exit %d, want %d; log:\n%s", code, exitFindings, log)
			}
			if got := f.output("sarif-file"); got != tt.wantFile {
				t.Errorf("output sarif-file = %q, want %q", got, tt.wantFile)
			}
			data, err := os.ReadFile(filepath.Join(f.dir, filepath.FromSlash(tt.wantFile)))
			if err != nil {
				t.Fatalf("the SARIF file was not written: %v", err)
			}
			root, paths := checkSARIF(t, data)
			if want := report.DirURI(f.dir); root != want {
				t.Errorf("%%SRCROOT%% = %q, want the workspace %q", root, want)
			}
			if !slices.Equal(paths, tt.wantPaths) {
				t.Errorf("result paths = %q, want %q", paths, tt.wantPaths)
			}
			for _, p := range paths {
				if _, err := os.Stat(filepath.Join(f.dir, filepath.FromSlash(p))); err != nil {
					t.Errorf("%q names no file of the repository: %v", p, err)
				}
			}
			// The annotations name the same files.
			for _, p := range tt.wantPaths {
				if !strings.Contains(log, ",file="+p+",line=") {
					t.Errorf("no error annotation on %s; log:\n%s", p, log)
				}
			}
			// format: sarif prints the same log.
			start := strings.Index(log, "{\n")
			if start < 0 || !strings.Contains(log[start:], string(data)) {
				t.Errorf("the log does not hold the SARIF file's log; log:\n%s", log)
			}
		})
	}
}

// TestSARIFFileStaysInTheWorkspace refuses a sarif-file outside the
// workspace, whether by its path or through a symbolic link the checkout
// holds, and writes nothing.
func TestSARIFFileStaysInTheWorkspace(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	tests := []struct {
		name      string
		sarifFile string
		link      string // a symbolic link in the workspace to outside
		wantLog   string
	}{
		{name: "parent directory", sarifFile: "../phasegate.sarif", wantLog: "input sarif-file"},
		{name: "climbs out after a directory", sarifFile: "reports/../../phasegate.sarif", wantLog: "input sarif-file"},
		{name: "the parent itself", sarifFile: "..", wantLog: "input sarif-file"},
		{name: "absolute", sarifFile: filepath.Join(outside, "phasegate.sarif"), wantLog: "input sarif-file"},
		{name: "the workspace itself", sarifFile: ".", wantLog: "input sarif-file"},
		{name: "a directory", sarifFile: "reports/", wantLog: "input sarif-file"},
		{name: "through a symbolic link", sarifFile: "out/phasegate.sarif", link: "out", wantLog: "sarif-file out/phasegate.sarif"},
		{name: "a symbolic link as the file", sarifFile: "phasegate.sarif", link: "phasegate.sarif", wantLog: "sarif-file phasegate.sarif"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			f := newRepoFixture(t)
			base := f.commit(map[string]string{"README.md": "shop\n"})
			head := f.commit(map[string]string{".pace/day-1/gate-report.yaml": goodGate})
			if tt.link != "" {
				target := outside
				if tt.link == "phasegate.sarif" {
					target = filepath.Join(outside, "phasegate.sarif")
				}
				if err := os.Symlink(target, filepath.Join(f.dir, tt.link)); err != nil {
					t.Fatal(err)
				}
			}
			code, log := f.runAction(f.env("push", pushEvent(base, head), map[string]string{"INPUT_SARIF-FILE": tt.sarifFile}))
			if code != exitCouldNot {
				t.Errorf("exit %d, want %d; log:\n%s", code, exitCouldNot, log)
			}
			if !strings.Contains(log, "::error::") || !strings.Contains(log, tt.wantLog) {
				t.Errorf("no error annotation naming %q; log:\n%s", tt.wantLog, log)
			}
			if got := f.output("sarif-file"); got != "" {
				t.Errorf("output sarif-file = %q, want none", got)
			}
			entries, err := os.ReadDir(outside)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 0 {
				t.Errorf("a file was written outside the workspace: %v", entries)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(f.dir), "phasegate.sarif")); err == nil {
				t.Error("a file was written next to the workspace")
			}
		})
	}
}

func TestInWorkspace(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		want   string
		wantOK bool
	}{
		{in: ".", want: ".", wantOK: true},
		{in: "sub/dir/", want: "sub/dir", wantOK: true},
		{in: "./a/../b.sarif", want: "b.sarif", wantOK: true},
		{in: "..a/b", want: "..a/b", wantOK: true},
		{in: "", wantOK: false},
		{in: "..", wantOK: false},
		{in: "../x", wantOK: false},
		{in: "a/../../x", wantOK: false},
		{in: "/etc/passwd", wantOK: false},
		{in: "a\x00b", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := inWorkspace(tt.in)
			if ok != tt.wantOK || ok && got != tt.want {
				t.Errorf("inWorkspace(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
