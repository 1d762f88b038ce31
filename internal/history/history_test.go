package history

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// commitTree writes files (content "" removes the file) and commits them.
func commitTree(t *testing.T, repo *git.Repository, dir string, files map[string]string, msg string) string {
	t.Helper()
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if content == "" {
			if _, err := wt.Remove(name); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := wt.Add(name); err != nil {
			t.Fatal(err)
		}
	}
	h, err := wt.Commit(msg, &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1700000000, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

func TestChanged(t *testing.T) {
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	base := commitTree(t, repo, dir, map[string]string{
		"outcomes/a.outcome.yaml": "phase: a\n",
		"outcomes/b.outcome.yaml": "phase: b\n",
		"sub/.pace/day-1/gate.md": "day: 1\n",
		"README.md":               "x\n",
	}, "base")
	commitTree(t, repo, dir, map[string]string{
		"outcomes/a.outcome.yaml": "phase: a2\n",
		"outcomes/b.outcome.yaml": "",
		"outcomes/c.outcome.yaml": "phase: c\n",
		"sub/.pace/day-1/gate.md": "day: 2\n",
	}, "head")

	tests := []struct {
		name string
		dir  string
		base string
		want map[string]Change
	}{
		{name: "repository root", dir: dir, base: base, want: map[string]Change{
			"outcomes/a.outcome.yaml": Modified, "outcomes/b.outcome.yaml": Deleted,
			"outcomes/c.outcome.yaml": Added, "sub/.pace/day-1/gate.md": Modified,
		}},
		{name: "subdirectory is the root", dir: filepath.Join(dir, "sub"), base: base, want: map[string]Change{
			".pace/day-1/gate.md": Modified,
		}},
		{name: "base is HEAD", dir: dir, base: "HEAD", want: map[string]Change{}},
		{name: "symbolic base", dir: dir, base: "HEAD~1", want: map[string]Change{
			"outcomes/a.outcome.yaml": Modified, "outcomes/b.outcome.yaml": Deleted,
			"outcomes/c.outcome.yaml": Added, "sub/.pace/day-1/gate.md": Modified,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Changed(context.Background(), tc.dir, tc.base)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Changed = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestChangedErrors(t *testing.T) {
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	commitTree(t, repo, dir, map[string]string{"a": "a\n"}, "one")
	tests := []struct {
		name, dir, base string
	}{
		{name: "unknown base", dir: dir, base: "0123456789abcdef0123456789abcdef01234567"},
		{name: "unknown ref", dir: dir, base: "no-such-branch"},
		{name: "not a repository", dir: t.TempDir(), base: "HEAD"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Changed(context.Background(), tc.dir, tc.base); err == nil {
				t.Error("want an error")
			}
		})
	}
}

func TestHead(t *testing.T) {
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	first := commitTree(t, repo, dir, map[string]string{"a": "1\n"}, "first")
	second := commitTree(t, repo, dir, map[string]string{"a": "2\n"}, "second")
	tests := []struct {
		name        string
		dir         string
		wantSHA     string
		wantParents []string
		wantErr     bool
	}{
		{name: "the checked-out commit and its parent", dir: dir, wantSHA: second, wantParents: []string{first}},
		{name: "no repository", dir: t.TempDir(), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sha, parents, err := Head(tc.dir)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if sha != tc.wantSHA || !reflect.DeepEqual(parents, tc.wantParents) {
				t.Errorf("Head = %s %v, want %s %v", sha, parents, tc.wantSHA, tc.wantParents)
			}
		})
	}
}
