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
// files to a temporary file, removed at once and closed once the job is
// done, unless the tree cache keeps it for the repository's next commits:
// then only the latest stays open (issue 32: the first check of a big
// repository streams what it reads).
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
	// A second commit whose files are all new: its archive is read too.
	next := map[string]string{"README.md": "# shop\n"}
	for i := range DefaultArchiveOver + 1 {
		next[fmt.Sprintf("notes/%03d.yaml", i)] = fmt.Sprintf("note: %d again\n", i)
	}
	h.fake.SetTreeFiles(owner, repo, appBaseSHA, map[string]string{"README.md": "# shop\n"})
	h.fake.SetTreeFiles(owner, repo, appHead1, head)
	h.fake.SetTreeFiles(owner, repo, appHead2, next)
	h.start()
	h.waitReady()
	for _, push := range [][2]string{{appBaseSHA, appHead1}, {appHead1, appHead2}} {
		if code, answer := h.send(delivery{event: "push", body: pushEvent("refs/heads/work", push[0], push[1], false)}); code != http.StatusAccepted {
			t.Fatalf("answer %d %q", code, answer)
		}
		if d := h.waitJobs(1)[0]; d.outcome != "ok" {
			t.Fatalf("job %+v; logs:\n%s", d, h.logs.String())
		}
	}
	if n := h.fake.CountCalls("GET", "/repos/"+owner+"/"+repo+"/tarball/"); n != 2 {
		t.Fatalf("the App read %d archives, want 2: one per commit", n)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("left in TMPDIR: %v", left)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var open []string
	for _, fd := range fds {
		if target, _ := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); strings.HasPrefix(target, dir) {
			open = append(open, target)
		}
	}
	// The tree cache keeps the repository's latest spool, unlinked, for
	// its next commits (ghclient.TreeCache): the second's, and no other.
	if len(open) > 1 || len(open) == 1 && !strings.HasSuffix(open[0], " (deleted)") {
		t.Fatalf("still open after the job: %q", open)
	}
}
