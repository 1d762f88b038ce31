//go:build integration

// The tests of this file's helpers (run_test.go) run binary/run.sh end to
// end: bash, curl and tar as processes, and the release binary, which
// they build (go build) unless PHASEGATE_RELEASE_DIST names GoReleaser's:
// integration tests, run by `go test -race -tags integration ./...`
// (.ci/run), not by the developer's `go test -race ./...`.

package binaryaction

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/testutil"
)

// release is a release as the local server serves it: its version (no
// 'v') and its files by name, the archives and SHA256SUMS.
type release struct {
	version string
	files   map[string][]byte
	// native is the name of the archive for this test's platform.
	native string
}

// distEnv names a directory holding GoReleaser's snapshot of this platform
// (.ci/run sets it: `goreleaser release --snapshot` of this GOOS/GOARCH,
// archive and SHA256SUMS as a release makes them). Without it, the test
// packages a `go build` of cmd/phasegate as .goreleaser.yaml does:
// phasegate_<version>_<os>_<arch>.tar.gz holding phasegate and README.md.
const distEnv = "PHASEGATE_RELEASE_DIST"

var (
	releaseMu sync.Mutex
	made      *release
)

// loadRelease returns the release to serve, made once for every test (a
// caller must not change it): this platform's archive (from GoReleaser's
// dist, or packaged here) plus a darwin/arm64 tar.gz and a windows/amd64
// zip packaged here, with their SHA256SUMS.
func loadRelease(t *testing.T) release {
	t.Helper()
	releaseMu.Lock()
	defer releaseMu.Unlock()
	if made == nil {
		r := makeRelease(t)
		made = &r
	}
	return *made
}

func makeRelease(t *testing.T) release {
	t.Helper()
	r := release{files: map[string][]byte{}}
	var sums bytes.Buffer
	if dist := os.Getenv(distEnv); dist != "" {
		r.version, r.native = fromDist(t, dist, &sums)
		r.files[r.native] = readAbs(t, filepath.Join(dist, r.native))
		t.Logf("serving GoReleaser's %s from %s", r.native, dist)
	} else {
		r.version = "0.0.0-e2e"
		binary := goBuild(t, "v"+r.version)
		r.native = fmt.Sprintf("phasegate_%s_%s_%s.tar.gz", r.version, runtime.GOOS, runtime.GOARCH)
		r.files[r.native] = tarGz(t, map[string][]byte{"phasegate": binary, "README.md": readFile(t, "README.md")})
		fmt.Fprintf(&sums, "%s  %s\n", sum(r.files[r.native]), r.native)
	}
	// The other platforms' archives hold a stand-in: run.sh only installs
	// them, it cannot run them here (and compressing the real binary twice
	// more took a minute under the race detector).
	others := map[string][]byte{
		"phasegate_" + r.version + "_darwin_arm64.tar.gz": tarGz(t, map[string][]byte{"phasegate": standIn("darwin/arm64"), "README.md": []byte("readme")}),
		"phasegate_" + r.version + "_windows_amd64.zip":   zipOf(t, map[string][]byte{"phasegate.exe": standIn("windows/amd64"), "README.md": []byte("readme")}),
	}
	for name, data := range others {
		if name == r.native {
			continue
		}
		r.files[name] = data
		fmt.Fprintf(&sums, "%s  %s\n", sum(data), name)
	}
	r.files["SHA256SUMS"] = sums.Bytes()
	return r
}

// fromDist reads GoReleaser's SHA256SUMS in dist into sums and returns the
// version and the name of this platform's archive, which must hold phasegate.
func fromDist(t *testing.T, dist string, sums *bytes.Buffer) (version, name string) {
	t.Helper()
	data := readAbs(t, filepath.Join(dist, "SHA256SUMS"))
	sums.Write(data)
	re := regexp.MustCompile(`^[0-9a-f]{64}  (phasegate_(.+)_` + runtime.GOOS + `_` + runtime.GOARCH + `\.tar\.gz)$`)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			name, version = m[1], m[2]
		}
	}
	if name == "" {
		t.Fatalf("%s/SHA256SUMS lists no %s/%s archive:\n%s", dist, runtime.GOOS, runtime.GOARCH, data)
	}
	untarOne(t, readAbs(t, filepath.Join(dist, name)), "phasegate")
	return version, name
}

// goBuild builds cmd/phasegate as .goreleaser.yaml does, stamped with
// version.
func goBuild(t *testing.T, version string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "phasegate")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out,
		"-ldflags", "-s -w -X github.com/phasegate/phasegate/internal/cli.version="+version, "./cmd/phasegate")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return readAbs(t, out)
}

// standIn is the binary of a platform's archive that run.sh installs but
// this test cannot run.
func standIn(platform string) []byte {
	return []byte("#!/bin/sh\necho 'phasegate for " + platform + ", a stand-in'\nexit 1\n")
}

func readAbs(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func sum(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

func sortedNames(files map[string][]byte) []string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// tarGz packs files into a tar.gz. Its gzip stream stores rather than
// compresses (run.sh's tar reads any level): deflating the 18 MB binary
// takes half a minute under the race detector.
func tarGz(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.NoCompression)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(gz)
	for _, name := range sortedNames(files) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(files[name])), ModTime: time.Unix(0, 0)}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(files[name]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zipOf(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range sortedNames(files) {
		h := &zip.FileHeader{Name: name, Method: zip.Deflate}
		h.SetMode(0o755)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(files[name]); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func untarOne(t *testing.T, archive []byte, name string) []byte {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("the archive has no %s: %v", name, err)
		}
		if h.Name == name {
			var buf bytes.Buffer
			if _, err := buf.ReadFrom(tr); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		}
	}
}

// server serves a release at /v<version>/<file> and records the paths
// asked for.
type server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string
}

func serve(t *testing.T, tag string, files map[string][]byte) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.URL.Path)
		s.mu.Unlock()
		name, ok := strings.CutPrefix(r.URL.Path, "/"+tag+"/")
		data, found := files[name]
		if !ok || !found {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(data)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) asked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// run is one run of run.sh.
type run struct {
	stdout, stderr string
	exit           int
}

// errors are the error annotations the runner would read in the run's
// output.
func (r run) errors() []string {
	var out []string
	for _, c := range testutil.RunWorkflowCommands(r.stdout + r.stderr).Annotations() {
		if c.Name == "error" {
			out = append(out, c.Data)
		}
	}
	return out
}

// annotations are the messages of every annotation the runner would read.
func (r run) annotations() []string {
	var out []string
	for _, c := range testutil.RunWorkflowCommands(r.stdout + r.stderr).Annotations() {
		out = append(out, c.Data)
	}
	return out
}

// runScript runs binary/run.sh with args and only the environment env (plus
// PATH, HOME and TMPDIR), as the action's step does.
func runScript(t *testing.T, env map[string]string, args ...string) run {
	t.Helper()
	script, err := filepath.Abs(filepath.Join(root, "binary", "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang, not a budget
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{script}, args...)...)
	tmp := t.TempDir()
	base := map[string]string{"PATH": os.Getenv("PATH"), "HOME": tmp, "TMPDIR": tmp, "RUNNER_TEMP": tmp}
	for k, v := range env {
		base[k] = v
	}
	for k, v := range base {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	r := run{stdout: stdout.String(), stderr: stderr.String()}
	if exit, ok := err.(*exec.ExitError); ok {
		r.exit = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("running run.sh: %v", err)
	}
	return r
}

// needTools skips the test where run.sh cannot run: it needs bash, curl,
// tar and a SHA-256 tool, and this test runs it on Linux or macOS.
func needTools(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("run.sh is tested on Linux and macOS (on Windows it runs in Git Bash)")
	}
	for _, tool := range []string{"bash", "curl", "tar", "awk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
}
