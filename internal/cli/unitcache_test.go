package cli

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/phasegate/phasegate/internal/history"
	"github.com/phasegate/phasegate/internal/testutil"
)

// demoCopy is a copy of examples/demo that a test may edit.
func demoCopy(t *testing.T) string {
	t.Helper()
	files := map[string]string{}
	root := filepath.Join("..", "..", "examples", "demo")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return testutil.WriteTree(t, t.TempDir(), files)
}

// TestValidateCache: with --cache, validate and gate print what they print
// without it, on the first run, on a run that reuses every unit, after a
// file changed and with a cache file that does not decode; the file
// holds the units' results, and a result it holds is what a later run
// reports for an unchanged unit (so the file must be trusted like the
// binary: docs/cli.md).
func TestValidateCache(t *testing.T) {
	for _, inGit := range []bool{false, true} {
		t.Run(map[bool]string{false: "a directory", true: "a git work tree"}[inGit], func(t *testing.T) {
			dir := demoCopy(t)
			if inGit {
				commitAll(t, dir)
			}
			validateCache(t, dir)
		})
	}
}

// commitAll makes dir a git work tree whose index holds every file, an
// hour old, so that --cache takes their ids from the index (history.KnownIDs).
func commitAll(t *testing.T, dir string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Commit("demo", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: old}}); err != nil {
		t.Fatal(err)
	}
	if len(history.KnownIDs(dir)) == 0 {
		t.Fatal("the index gives no file's id")
	}
}

func validateCache(t *testing.T, dir string) {
	cache := filepath.Join(t.TempDir(), "units.json")
	same := func(step string, args ...string) {
		t.Helper()
		want := run(t, append(args, dir)...)
		got := run(t, append(append(args, "--cache", cache), dir)...)
		if got != want {
			t.Fatalf("%s: with --cache:\n%+v\nwithout:\n%+v", step, got, want)
		}
	}
	for _, cmd := range []string{"validate", "gate"} {
		same(cmd+", first run", cmd, "--format", "json")
		same(cmd+", every unit reused", cmd, "--format", "json")
	}
	var f struct {
		Format string
		Units  map[string]json.RawMessage
	}
	data, err := os.ReadFile(cache)
	if err != nil || json.Unmarshal(data, &f) != nil || f.Format != "phasegate-units/1" || len(f.Units) == 0 {
		t.Fatalf("the cache file holds %d units (%v): %.200s", len(f.Units), err, data)
	}
	edited := filepath.Join(dir, ".pace", "day-1", "gate.md")
	old, err := os.ReadFile(edited)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(edited, []byte(strings.Replace(string(old), "SHIP", "HOLD", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	same("a file edited", "gate", "--format", "json")
	if err := os.WriteFile(cache, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	same("a cache that does not decode", "gate", "--format", "json")

	// A result the file holds is reused: change every kept message.
	data, _ = os.ReadFile(cache)
	if err := os.WriteFile(cache, []byte(strings.ReplaceAll(string(data), `"message":"`, `"message":"KEPT `)), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := run(t, "validate", "--format", "json", "--cache", cache, dir); !strings.Contains(got.stdout, "KEPT ") {
		t.Fatalf("no unit's result came from the cache file:\n%s", got.stdout)
	}
}
