package history

import (
	"crypto/sha1"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
)

func blobID(content string) string {
	return fmt.Sprintf("%x", sha1.Sum([]byte(fmt.Sprintf("blob %d\x00%s", len(content), content))))
}

// TestKnownIDs: only files whose bytes git has already hashed, and that
// cannot have changed since, get the index's id; every other file is left
// to be hashed.
func TestKnownIDs(t *testing.T) {
	files := map[string]string{"a.yaml": "a: 1\n", "sub/b.yaml": "b: 2\n", "sub/c.json": "{}\n"}
	tests := []struct {
		name  string
		dir   string // relative to the work tree
		after func(t *testing.T, top string)
		want  map[string]string // nil: no map at all
	}{
		{name: "clean checkout", want: map[string]string{"a.yaml": blobID("a: 1\n"), "sub/b.yaml": blobID("b: 2\n"), "sub/c.json": blobID("{}\n")}},
		{name: "a subdirectory", dir: "sub", want: map[string]string{"b.yaml": blobID("b: 2\n"), "c.json": blobID("{}\n")}},
		{name: "edited to the same size", after: func(t *testing.T, top string) {
			write(t, filepath.Join(top, "a.yaml"), "a: 9\n", time.Now().Add(time.Minute))
		}, want: map[string]string{"sub/b.yaml": blobID("b: 2\n"), "sub/c.json": blobID("{}\n")}},
		{name: "edited, time put back but grown", after: func(t *testing.T, top string) {
			p := filepath.Join(top, "a.yaml")
			info, _ := os.Stat(p)
			write(t, p, "a: 10\n", info.ModTime())
		}, want: map[string]string{"sub/b.yaml": blobID("b: 2\n"), "sub/c.json": blobID("{}\n")}},
		{name: "replaced by a directory", after: func(t *testing.T, top string) {
			p := filepath.Join(top, "sub", "c.json")
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}, want: map[string]string{"a.yaml": blobID("a: 1\n"), "sub/b.yaml": blobID("b: 2\n")}},
		{name: "untracked file", after: func(t *testing.T, top string) {
			write(t, filepath.Join(top, "new.yaml"), "n: 1\n", time.Now().Add(-time.Hour))
		}, want: map[string]string{"a.yaml": blobID("a: 1\n"), "sub/b.yaml": blobID("b: 2\n"), "sub/c.json": blobID("{}\n")}},
		{name: "racy: the index no newer than its entries", after: func(t *testing.T, top string) {
			old := time.Now().Add(-2 * time.Hour)
			if err := os.Chtimes(filepath.Join(top, ".git", "index"), old, old); err != nil {
				t.Fatal(err)
			}
		}, want: map[string]string{}},
		{name: "line endings converted (core.autocrlf)", after: func(t *testing.T, top string) {
			appendFile(t, filepath.Join(top, ".git", "config"), "[core]\n\tautocrlf = true\n")
		}},
		{name: "attributes outside the tree", after: func(t *testing.T, top string) {
			if err := os.MkdirAll(filepath.Join(top, ".git", "info"), 0o755); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(top, ".git", "info", "attributes"), "* text eol=crlf\n", time.Now())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			top := t.TempDir()
			repo, err := git.PlainInit(top, false)
			if err != nil {
				t.Fatal(err)
			}
			addOld(t, repo, top, files)
			if tt.after != nil {
				tt.after(t, top)
			}
			got := KnownIDs(filepath.Join(top, tt.dir))
			if (got == nil) != (tt.want == nil) || len(got) != len(tt.want) {
				t.Fatalf("KnownIDs = %v, want %v", got, tt.want)
			}
			for name, id := range tt.want {
				if got[name] != id {
					t.Errorf("%s: id %q, want %q", name, got[name], id)
				}
			}
		})
	}
	t.Run("a .gitattributes file in the tree", func(t *testing.T) {
		top := t.TempDir()
		repo, err := git.PlainInit(top, false)
		if err != nil {
			t.Fatal(err)
		}
		addOld(t, repo, top, map[string]string{"a.yaml": "a: 1\n", ".gitattributes": "*.yaml text eol=crlf\n"})
		if got := KnownIDs(top); got != nil {
			t.Errorf("KnownIDs = %v, want nil", got)
		}
	})
	if got := KnownIDs(t.TempDir()); got != nil {
		t.Errorf("KnownIDs outside a work tree = %v, want nil", got)
	}
}

// addOld writes files an hour old and adds them to the index, which is
// then newer than every entry (not racy: file times are coarser than the
// clock, so a file written just before the index may share its time).
func addOld(t *testing.T, repo *git.Repository, top string, files map[string]string) {
	t.Helper()
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(top, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, p, content, time.Now().Add(-time.Hour))
		if _, err := wt.Add(name); err != nil {
			t.Fatal(err)
		}
	}
}

func write(t *testing.T, p, content string, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}
