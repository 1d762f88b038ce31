package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCacheFile runs the action twice with cache-file: the second run,
// reusing every unit, reports what the first did, and the file is kept
// in the workspace; after a file changes, the run reports the change.
func TestCacheFile(t *testing.T) {
	t.Parallel()
	f := newRepoFixture(t)
	base := f.commit(map[string]string{"README.md": "shop\n"})
	head := f.commit(map[string]string{".pace/day-1/gate-report.yaml": "day: 1\nagent: [\n", "sub/.pace/day-2/gate-report.yaml": goodGate})
	env := map[string]string{"INPUT_CACHE-FILE": ".cache/phasegate-units.json", "INPUT_FORMAT": "json"}
	code1, log1 := f.runAction(f.env("push", pushEvent(base, head), env))
	code2, log2 := f.runAction(f.env("push", pushEvent(base, head), env))
	if code1 != exitFindings || code2 != code1 {
		t.Fatalf("exits %d, %d; want %d twice; logs:\n%s\n%s", code1, code2, exitFindings, log1, log2)
	}
	if !strings.Contains(log2, "gate-report.yaml") || strings.Count(log2, "::error") != strings.Count(log1, "::error") {
		t.Fatalf("the run reusing the cache reports otherwise:\n%s\nfirst:\n%s", log2, log1)
	}
	data, err := os.ReadFile(filepath.Join(f.dir, ".cache", "phasegate-units.json"))
	if err != nil || !strings.Contains(string(data), `"units"`) {
		t.Fatalf("the cache file: %v, %.100s", err, data)
	}
	// A result the file holds is what the next run reports.
	kept := strings.ReplaceAll(string(data), `"message":"`, `"message":"KEPT `)
	if err := os.WriteFile(filepath.Join(f.dir, ".cache", "phasegate-units.json"), []byte(kept), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, log := f.runAction(f.env("push", pushEvent(base, head), env)); !strings.Contains(log, "KEPT ") {
		t.Fatalf("no unit's result came from cache-file:\n%s", log)
	}
	if err := os.WriteFile(filepath.Join(f.dir, ".pace", "day-1", "gate-report.yaml"), []byte(goodGate), 0o644); err != nil {
		t.Fatal(err)
	}
	fixed := f.commit(map[string]string{".pace/day-1/gate-report.yaml": goodGate, "sub/.pace/day-2/gate-report.yaml": goodGate})
	if code, log := f.runAction(f.env("push", pushEvent(base, fixed), env)); code != exitOK {
		t.Fatalf("after the broken report was fixed: exit %d; log:\n%s", code, log)
	}
}

// TestCacheFileStaysInTheWorkspace: a cache-file outside the workspace,
// or behind a symbolic link leading out of it, is refused (exit 2) and
// nothing is written outside.
func TestCacheFileStaysInTheWorkspace(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	for _, tc := range []struct{ name, file, link string }{
		{"parent directory", "../units.json", ""},
		{"through a symbolic link", "out/units.json", "out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newRepoFixture(t)
			base := f.commit(map[string]string{"README.md": "shop\n"})
			head := f.commit(map[string]string{".pace/day-1/gate-report.yaml": goodGate})
			if tc.link != "" {
				if err := os.Symlink(outside, filepath.Join(f.dir, tc.link)); err != nil {
					t.Fatal(err)
				}
			}
			code, log := f.runAction(f.env("push", pushEvent(base, head), map[string]string{"INPUT_CACHE-FILE": tc.file}))
			if code != exitCouldNot || !strings.Contains(log, "cache-file") {
				t.Errorf("exit %d, want %d naming cache-file; log:\n%s", code, exitCouldNot, log)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Errorf("a file was written outside the workspace: %v", entries)
			}
		})
	}
}
