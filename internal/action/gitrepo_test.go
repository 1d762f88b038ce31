package action

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/phasegate/phasegate/internal/history"
)

// gitRepo writes a repository's .git the way git itself lays it out: loose
// objects (zlib-compressed, named by their SHA-1), refs/heads/master and
// HEAD. It is the repoFixture's history: the action reads it back through
// go-git (history.Changed, history.Head) exactly as it reads a checkout.
//
// It replaces go-git's Worktree.Add and Commit, which re-hash the work tree,
// rewrite the index and compress every object with a fresh zlib writer per
// commit (a third of this package's CPU under -race, for objects that are
// the same bytes in every test: the fixtures commit the same files at the
// same times). Here every distinct object is compressed once per test
// binary and then only copied. TestGitRepoMatchesGoGit holds the object
// format to go-git's.
type gitRepo struct{ dir string } // the work tree; .git is inside it

// gitAuthor is every fixture commit's author and committer: the commit's
// index makes its time, so a history is the same commits in every test.
func gitAuthor(n int) string {
	return fmt.Sprintf("agent <a@example.com> %d +0000", 1700000000+n)
}

func initGitRepo(dir string) (*gitRepo, error) {
	g := &gitRepo{dir: dir}
	for _, d := range []string{"objects", "refs/heads", "refs/tags"} {
		if err := os.MkdirAll(filepath.Join(dir, ".git", filepath.FromSlash(d)), 0o755); err != nil {
			return nil, err
		}
	}
	files := map[string]string{
		"HEAD":   "ref: refs/heads/master\n",
		"config": "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, ".git", name), []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// commit writes the objects of tree (every file of the commit, by its
// slash-separated path), a commit of it with parent ("" for none) as the
// n-th commit, points refs/heads/master at it and returns its SHA.
func (g *gitRepo) commit(tree map[string]string, parent string, n int) (string, error) {
	root, err := g.writeTree(tree, "")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", root)
	if parent != "" {
		fmt.Fprintf(&b, "parent %s\n", parent)
	}
	fmt.Fprintf(&b, "author %s\ncommitter %s\n\nchange", gitAuthor(n), gitAuthor(n))
	sha, err := g.writeObject("commit", []byte(b.String()))
	if err != nil {
		return "", err
	}
	return sha, os.WriteFile(filepath.Join(g.dir, ".git", "refs", "heads", "master"), []byte(sha+"\n"), 0o644)
}

// writeTree writes the tree object of the files of tree under dir ("" for
// the root) and everything in it, and returns its SHA.
func (g *gitRepo) writeTree(tree map[string]string, dir string) (string, error) {
	type entry struct{ name, mode, sha string }
	var entries []entry
	seen := map[string]bool{}
	for p, content := range tree {
		rest, ok := strings.CutPrefix(p, dir)
		if !ok {
			continue
		}
		if sub, _, isDir := strings.Cut(rest, "/"); isDir {
			if seen[sub] {
				continue
			}
			seen[sub] = true
			sha, err := g.writeTree(tree, dir+sub+"/")
			if err != nil {
				return "", err
			}
			entries = append(entries, entry{name: sub, mode: "40000", sha: sha})
			continue
		}
		sha, err := g.writeObject("blob", []byte(content))
		if err != nil {
			return "", err
		}
		entries = append(entries, entry{name: rest, mode: "100644", sha: sha})
	}
	// git orders a tree's entries by name, a directory's as if it ended in /.
	key := func(e entry) string {
		if e.mode == "40000" {
			return e.name + "/"
		}
		return e.name
	}
	sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
	var b bytes.Buffer
	for _, e := range entries {
		raw, _ := hex.DecodeString(e.sha)
		fmt.Fprintf(&b, "%s %s\x00", e.mode, e.name)
		b.Write(raw)
	}
	return g.writeObject("tree", b.Bytes())
}

// looseObjects holds every loose object file the fixtures wrote, by SHA: a
// test binary compresses each distinct object once.
var looseObjects = struct {
	sync.Mutex
	files map[string][]byte
	zw    *zlib.Writer
	buf   bytes.Buffer
}{files: map[string][]byte{}}

// writeObject writes the loose object of content as kind and returns its
// SHA.
func (g *gitRepo) writeObject(kind string, content []byte) (string, error) {
	header := fmt.Sprintf("%s %d\x00", kind, len(content))
	h := sha1.New()
	h.Write([]byte(header))
	h.Write(content)
	sha := hex.EncodeToString(h.Sum(nil))
	looseObjects.Lock()
	file, ok := looseObjects.files[sha]
	if !ok {
		looseObjects.buf.Reset()
		if looseObjects.zw == nil {
			looseObjects.zw = zlib.NewWriter(&looseObjects.buf)
		} else {
			looseObjects.zw.Reset(&looseObjects.buf)
		}
		looseObjects.zw.Write([]byte(header))
		looseObjects.zw.Write(content)
		if err := looseObjects.zw.Close(); err != nil {
			looseObjects.Unlock()
			return "", err
		}
		file = bytes.Clone(looseObjects.buf.Bytes())
		looseObjects.files[sha] = file
	}
	looseObjects.Unlock()
	path := filepath.Join(g.dir, ".git", "objects", sha[:2], sha[2:])
	if _, err := os.Stat(path); err == nil {
		return sha, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	return sha, os.WriteFile(path, file, 0o444)
}

// checkout makes the work tree and HEAD those of commit sha, whose files
// are tree, as `git checkout --detach sha` does: files of the work tree's
// last commit that sha has not are removed.
func (f *repoFixture) checkout(sha string) {
	f.t.Helper()
	tree := f.trees[sha]
	for name := range f.tree {
		if _, ok := tree[name]; !ok {
			if err := os.Remove(filepath.Join(f.dir, filepath.FromSlash(name))); err != nil {
				f.t.Fatal(err)
			}
		}
	}
	for name, content := range tree {
		if err := writeWorkFile(f.dir, name, content); err != nil {
			f.t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(f.dir, ".git", "HEAD"), []byte(sha+"\n"), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func writeWorkFile(dir, name, content string) error {
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}

// TestGitRepoMatchesGoGit: the fixture's history is the one go-git's own
// Worktree.Add and Commit make of the same files at the same times (the
// same SHA for every commit: the same blobs, trees, entry order and commit
// text), and go-git reads it back from disk: HEAD, the files of each
// commit, and what history.Changed reports.
func TestGitRepoMatchesGoGit(t *testing.T) {
	t.Parallel()
	steps := []map[string]string{
		{"README.md": "shop\n"},
		{"a.txt": "before the directory a/ in a tree\n", "a/b/c.yaml": "x: 1\n", "a-b": "before a.txt\n", "outcomes/o.outcome.yaml": seedOutcome},
		{"a/b/c.yaml": "x: 2\n", "a/d.md": "# d\n", "README.md": ""},
	}
	refDir := t.TempDir()
	ref, err := git.PlainInit(refDir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := ref.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	f := newRepoFixture(t)
	for i, files := range steps {
		for name, content := range files {
			if content == "" {
				if _, err := wt.Remove(name); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := writeWorkFile(refDir, name, content); err != nil {
				t.Fatal(err)
			}
			if _, err := wt.Add(name); err != nil {
				t.Fatal(err)
			}
		}
		sig := &object.Signature{Name: "agent", Email: "a@example.com", When: time.Unix(int64(1700000000+i), 0).UTC()}
		want, err := wt.Commit("change", &git.CommitOptions{Author: sig, Committer: sig})
		if err != nil {
			t.Fatal(err)
		}
		if got := f.commit(files); got != want.String() {
			t.Fatalf("commit %d: the fixture wrote %s, go-git %s", i, got, want)
		}
	}
	disk, err := git.PlainOpen(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	head, err := disk.Head()
	if err != nil || head.Hash().String() != f.shas[2] {
		t.Fatalf("HEAD = %v, %v; want %s", head, err, f.shas[2])
	}
	for _, sha := range f.shas {
		c, err := disk.CommitObject(plumbing.NewHash(sha))
		if err != nil {
			t.Fatal(err)
		}
		files, err := c.Files()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		if err := files.ForEach(func(file *object.File) error {
			got[file.Name], err = file.Contents()
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, f.trees[sha]) {
			t.Errorf("commit %s holds %v, want %v", sha, got, f.trees[sha])
		}
	}
	changed, err := history.Changed(context.Background(), f.dir, f.shas[1])
	want := map[string]history.Change{"a/b/c.yaml": history.Modified, "a/d.md": history.Added, "README.md": history.Deleted}
	if err != nil || !maps.Equal(changed, want) {
		t.Errorf("history.Changed = %v, %v; want %v", changed, err, want)
	}
	f.checkout(f.shas[0])
	if sha, _, err := history.Head(f.dir); err != nil || sha != f.shas[0] {
		t.Errorf("after checkout: HEAD = %s, %v; want %s", sha, err, f.shas[0])
	}
	if _, err := os.Stat(filepath.Join(f.dir, "a", "d.md")); !os.IsNotExist(err) {
		t.Errorf("a/d.md is still in the work tree after checking out a commit without it: %v", err)
	}
}
