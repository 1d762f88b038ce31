//go:build integration

// Integration tests: they run binary/run.sh and the binaries it installs
// as processes (see e2e_test.go).

package binaryaction

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// runnerOS and runnerArch are RUNNER_OS and RUNNER_ARCH for this
// platform's GOOS and GOARCH.
var (
	runnerOS   = map[string]string{"linux": "Linux", "darwin": "macOS", "windows": "Windows"}
	runnerArch = map[string]string{"amd64": "X64", "arm64": "ARM64"}
)

// fakeGH writes a gh that records its arguments and GH_TOKEN in log and
// exits with exit; it returns the directory to put first on PATH.
func fakeGH(t *testing.T, exit int, log string) string {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\necho \"$* GH_TOKEN=$GH_TOKEN\" >>'" + log + "'\nexit " + strconv.Itoa(exit) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "gh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRunSh runs binary/run.sh as the action's step does, against a local
// release server: it installs the binary this runner needs, verified, into
// RUNNER_TOOL_CACHE and runs it, or refuses with an error annotation and a
// nonzero exit, before running or caching anything.
func TestRunSh(t *testing.T) {
	needTools(t)
	goos, goarch := runnerOS[runtime.GOOS], runnerArch[runtime.GOARCH]
	if goos == "" || goarch == "" {
		t.Skipf("phasegate is not released for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	rel := loadRelease(t)
	tag := "v" + rel.version
	tamper := func(f map[string][]byte) {
		a := bytes.Clone(f[rel.native])
		a[len(a)/2] ^= 0x01
		f[rel.native] = a
	}
	unlist := func(f map[string][]byte) {
		var kept []string
		for _, line := range strings.Split(string(f["SHA256SUMS"]), "\n") {
			if !strings.HasSuffix(line, "  "+rel.native) {
				kept = append(kept, line)
			}
		}
		f["SHA256SUMS"] = []byte(strings.Join(kept, "\n"))
	}
	tests := []struct {
		name  string
		env   map[string]string // over RUNNER_OS, RUNNER_ARCH, PHASEGATE_VERSION, PHASEGATE_RELEASE_URL
		edit  func(map[string][]byte)
		args  []string
		gh    int    // with a fake gh on PATH that exits so: 0 or 1; -1 for none
		ok    bool   // exit 0, binary cached
		want  string // in stdout when ok, in an error annotation when not
		asked bool   // the server was asked for something
		ghRan bool   // gh was run
	}{
		{name: "installs and runs phasegate version", args: []string{"version"}, gh: -1, ok: true, want: "phasegate " + tag + "\n", asked: true},
		{name: "the version is the tag the action is used at", env: map[string]string{"PHASEGATE_VERSION": "", "PHASEGATE_ACTION_REF": tag},
			args: []string{"version"}, gh: -1, ok: true, want: "phasegate " + tag + "\n", asked: true},
		{name: "an explicit version wins over the ref", env: map[string]string{"PHASEGATE_VERSION": tag, "PHASEGATE_ACTION_REF": "v9.9.9"},
			args: []string{"version"}, gh: -1, ok: true, want: "phasegate " + tag + "\n", asked: true},
		{name: "without arguments it prints the binary's path", gh: -1, ok: true, want: filepath.Join("phasegate", rel.version, runtime.GOARCH, "phasegate") + "\n", asked: true},
		{name: "macOS on ARM64 gets the darwin arm64 tar.gz", env: map[string]string{"RUNNER_OS": "macOS", "RUNNER_ARCH": "ARM64"},
			gh: -1, ok: true, want: filepath.Join("phasegate", rel.version, "arm64", "phasegate") + "\n", asked: true},
		{name: "Windows gets phasegate.exe from the zip", env: map[string]string{"RUNNER_OS": "Windows", "RUNNER_ARCH": "X64"},
			gh: -1, ok: true, want: filepath.Join("phasegate", rel.version, "amd64", "phasegate.exe") + "\n", asked: true},

		{name: "a tampered archive is refused", edit: tamper, args: []string{"version"}, gh: -1,
			want: "checksum mismatch: " + rel.native + " is ", asked: true},
		{name: "an archive SHA256SUMS does not list is refused", edit: unlist, args: []string{"version"}, gh: -1,
			want: "SHA256SUMS of " + tag + " has no entry for " + rel.native + ": refusing to run it", asked: true},
		{name: "a release without SHA256SUMS is refused", edit: func(f map[string][]byte) { delete(f, "SHA256SUMS") }, args: []string{"version"}, gh: -1,
			want: "could not download ", asked: true},
		{name: "an unknown OS is refused", env: map[string]string{"RUNNER_OS": "FreeBSD"}, args: []string{"version"}, gh: -1,
			want: "phasegate is released for RUNNER_OS Linux, macOS and Windows, not 'FreeBSD'"},
		{name: "an unknown architecture is refused", env: map[string]string{"RUNNER_ARCH": "X86"}, args: []string{"version"}, gh: -1,
			want: "phasegate is released for RUNNER_ARCH X64 and ARM64, not 'X86'"},
		{name: "a branch ref without a version is refused", env: map[string]string{"PHASEGATE_VERSION": "", "PHASEGATE_ACTION_REF": "main"}, gh: -1,
			want: "which release? The action is used at 'main', not at a version tag (v0.1.2): set its input version"},
		{name: "a version that is not a release's is refused", env: map[string]string{"PHASEGATE_VERSION": "1.2"}, gh: -1,
			want: "version '1.2' is not a release version"},
		{name: "plain http over a network is refused", env: map[string]string{"PHASEGATE_RELEASE_URL": "http://example.invalid/releases"}, gh: -1,
			want: "release-url must be an https URL, not 'http://example.invalid/releases'"},

		{name: "with gh and a token, the attestation is verified", env: map[string]string{"INPUT_TOKEN": "tok"}, args: []string{"version"},
			gh: 0, ok: true, want: "phasegate " + tag + "\n", asked: true, ghRan: true},
		{name: "an attestation that does not verify is refused", env: map[string]string{"INPUT_TOKEN": "tok"}, args: []string{"version"},
			gh: 1, want: rel.native + " has no build-provenance attestation of phasegate/phasegate's release workflow that verifies", asked: true, ghRan: true},
		{name: "without a token gh is not asked", env: map[string]string{"INPUT_TOKEN": ""}, args: []string{"version"},
			gh: 1, ok: true, want: "phasegate " + tag + "\n", asked: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each run has its own server, tool cache and gh
			if tc.env["RUNNER_OS"] == "Windows" {
				if _, err := exec.LookPath("unzip"); err != nil {
					t.Skip("unzip is not installed")
				}
			}
			files := map[string][]byte{}
			for k, v := range rel.files {
				files[k] = v
			}
			if tc.edit != nil {
				tc.edit(files)
			}
			srv := serve(t, tag, files)
			cache := t.TempDir()
			env := map[string]string{
				"RUNNER_OS": goos, "RUNNER_ARCH": goarch, "RUNNER_TOOL_CACHE": cache,
				"PHASEGATE_VERSION": tag, "PHASEGATE_RELEASE_URL": srv.URL,
			}
			ghLog := filepath.Join(t.TempDir(), "gh.log")
			if tc.gh >= 0 {
				env["PATH"] = fakeGH(t, tc.gh, ghLog) + string(os.PathListSeparator) + os.Getenv("PATH")
			}
			for k, v := range tc.env {
				env[k] = v
			}
			r := runScript(t, env, tc.args...)
			checkRun(t, r, tc.ok, tc.want)
			cached, _ := filepath.Glob(filepath.Join(cache, "phasegate", "*", "*.complete"))
			if tc.ok != (len(cached) == 1) {
				t.Errorf("tool cache holds %v, want a complete install: %v", cached, tc.ok)
			}
			if asked := srv.asked(); tc.asked != (len(asked) > 0) {
				t.Errorf("the server was asked for %v; want requests: %v", asked, tc.asked)
			}
			gh, _ := os.ReadFile(ghLog)
			want := "attestation verify " + rel.native + " --repo phasegate/phasegate --signer-workflow phasegate/phasegate/.github/workflows/release.yml GH_TOKEN=tok\n"
			if tc.ghRan && string(gh) != want || !tc.ghRan && len(gh) > 0 {
				t.Errorf("gh ran with %q, want %q (run: %v)", gh, want, tc.ghRan)
			}
		})
	}
}

// checkRun checks one run's exit, output and error annotations: a run
// that is ok exits 0 with want in its stdout and no error; a refused run
// exits nonzero with want in its one error annotation, and runs nothing.
func checkRun(t *testing.T, r run, ok bool, want string) {
	t.Helper()
	errs := r.errors()
	switch {
	case ok && (r.exit != 0 || len(errs) > 0 || !strings.Contains(r.stdout, want)):
		t.Errorf("exit %d, errors %q, stdout %q; want exit 0 and %q\nstderr:\n%s", r.exit, errs, r.stdout, want, r.stderr)
	case !ok && (r.exit == 0 || len(errs) != 1 || !strings.Contains(errs[0], want)):
		t.Errorf("exit %d, errors %q; want a nonzero exit and one error with %q\nstderr:\n%s", r.exit, errs, want, r.stderr)
	case !ok && r.stdout != "":
		t.Errorf("a refused run printed %q on stdout: it ran something", r.stdout)
	}
}

// TestCachedBinaryGetsTheInputs: a binary in the tool cache runs without
// a download, with the inputs as phasegate reads them (INPUT_FAIL-ON, the
// '-' GitHub keeps), those the step left unset left out.
func TestCachedBinaryGetsTheInputs(t *testing.T) {
	needTools(t)
	srv := serve(t, "v1.2.3", nil)
	cache := t.TempDir()
	dir := filepath.Join(cache, "phasegate", "1.2.3", "amd64")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// A stand-in for phasegate that prints its arguments and inputs: a
	// bash script, since sh (dash) drops the variables whose name has a '-'.
	fake := "#!/usr/bin/env bash\necho \"args: $*\"\nenv | grep '^INPUT_' | sort\n"
	if err := os.WriteFile(filepath.Join(dir, "phasegate"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+".complete", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := runScript(t, map[string]string{
		"RUNNER_OS": "Linux", "RUNNER_ARCH": "X64", "RUNNER_TOOL_CACHE": cache,
		"PHASEGATE_VERSION": "v1.2.3", "PHASEGATE_RELEASE_URL": srv.URL,
		"INPUT_PATH": "docs and more", "INPUT_FAIL_ON": "never", "INPUT_POST_OUTCOMES": "false",
		"INPUT_SARIF_FILE": "out/phasegate.sarif", "INPUT_TOKEN": "tok", "INPUT_FORMAT": "",
	}, "action", "--extra")
	if r.exit != 0 {
		t.Fatalf("exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"args: action --extra", "INPUT_PATH=docs and more", "INPUT_FAIL-ON=never", "INPUT_POST-OUTCOMES=false",
		"INPUT_SARIF-FILE=out/phasegate.sarif", "INPUT_TOKEN=tok", "INPUT_FORMAT=\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("phasegate did not get %q:\n%s", want, r.stdout)
		}
	}
	for _, unset := range []string{"INPUT_CONFIG", "INPUT_RESULTS-FILE"} {
		if strings.Contains(r.stdout, unset+"=") {
			t.Errorf("phasegate got %s, which the step did not set:\n%s", unset, r.stdout)
		}
	}
	if asked := srv.asked(); len(asked) > 0 {
		t.Errorf("a cached binary was downloaded again: %v", asked)
	}
}

// TestReleasedBinaryReadsTheInputs: the released binary, run by run.sh as
// `phasegate action`, reads the inputs run.sh passes on: an invalid fail-on
// is refused by name, a valid one runs the action (here a push that deleted
// its branch: a notice, exit 0, and no GitHub call).
func TestReleasedBinaryReadsTheInputs(t *testing.T) {
	needTools(t)
	goos, goarch := runnerOS[runtime.GOOS], runnerArch[runtime.GOARCH]
	if goos == "" || goarch == "" {
		t.Skipf("phasegate is not released for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	rel := loadRelease(t)
	srv := serve(t, "v"+rel.version, rel.files)
	cache := t.TempDir()
	event := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(event, []byte(`{"ref": "refs/heads/gone", "deleted": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, failOn string
		exit         int
		annotation   string
	}{
		{name: "an invalid fail-on", failOn: "bogus", exit: 2, annotation: `phasegate: input fail-on: "bogus" is not one of hold, error, warning, never`},
		{name: "a valid fail-on", failOn: "never", exit: 0, annotation: "phasegate: the push deleted refs/heads/gone: there is no commit to check"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runScript(t, map[string]string{
				"RUNNER_OS": goos, "RUNNER_ARCH": goarch, "RUNNER_TOOL_CACHE": cache,
				"PHASEGATE_VERSION": rel.version, "PHASEGATE_RELEASE_URL": srv.URL,
				"GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": event, "GITHUB_REPOSITORY": "acme/widgets",
				"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": filepath.Join(t.TempDir(), "output"),
				"INPUT_FAIL_ON": tc.failOn, "INPUT_TOKEN": "",
			}, "action")
			got := r.annotations()
			if r.exit != tc.exit || !slices.Contains(got, tc.annotation) {
				t.Errorf("exit %d, annotations %q; want exit %d and %q\nstdout:\n%s\nstderr:\n%s", r.exit, got, tc.exit, tc.annotation, r.stdout, r.stderr)
			}
		})
	}
}
