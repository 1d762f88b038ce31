package server

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/decide"
)

// TestAppClosesTheSpool: a job that read a commit's archive spooled its
// files to a temporary file, which is gone — removed and closed — once the
// job is done (issue 32: the first check of a big repository streams what
// it reads).
func TestAppClosesTheSpool(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/fd")
	}
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir) // not parallel: TMPDIR is this test's
	h := newHarness(t, func(c *Config) { c.NewDecider = nil; c.Publish = decide.PublishChecks })
	head := map[string]string{"README.md": "# shop\n"}
	for i := range DefaultArchiveOver + 1 {
		head[fmt.Sprintf("notes/%03d.yaml", i)] = fmt.Sprintf("note: %d\n", i)
	}
	h.fake.SetTreeFiles(owner, repo, appBaseSHA, map[string]string{"README.md": "# shop\n"})
	h.fake.SetTreeFiles(owner, repo, appHead1, head)
	h.start()
	h.waitReady()
	if code, answer := h.send(delivery{event: "push", body: pushEvent("refs/heads/work", appBaseSHA, appHead1, false)}); code != http.StatusAccepted {
		t.Fatalf("answer %d %q", code, answer)
	}
	if d := h.waitJobs(1)[0]; d.outcome != "ok" {
		t.Fatalf("job %+v; logs:\n%s", d, h.logs.String())
	}
	if n := h.fake.CountCalls("GET", "/repos/"+owner+"/"+repo+"/tarball/"); n == 0 {
		t.Fatal("the App never read the archive: nothing was spooled")
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("left in TMPDIR: %v", left)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if target, _ := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); strings.HasPrefix(target, dir) {
			t.Fatalf("still open after the job: %s", target)
		}
	}
}
