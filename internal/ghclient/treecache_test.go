package ghclient

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/phasegate/phasegate/internal/ghfake"
)

// bigTree is n files in a tree of services, each with a few directories.
func bigTree(n int) []ghfake.TreeFile {
	var out []ghfake.TreeFile
	for i := range n {
		out = append(out, ghfake.TreeFile{Path: fmt.Sprintf("services/s%03d/.pipeline/issue-%d/f%d.yaml", i%40, i%7, i),
			Content: fmt.Appendf(nil, "n: %d\n", i)})
	}
	return append(out, ghfake.TreeFile{Path: "README.md", Content: []byte("# r\n")})
}

// listingOf is every path of an FS with what it is: for comparing the FS
// a TreeCache builds with the one a recursive listing builds.
func listingOf(t *testing.T, fsys fs.FS) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		id, err := fsys.(*CommitFS).ObjectID(p, false)
		out[p] = id
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTreeCacheReadsWhatChanged: a cold read is one recursive listing; a
// commit that changes one file reads the root and the trees above that
// file only; a new directory of several subtrees is one recursive
// listing of each; and every FS lists what a recursive listing without
// the cache lists.
func TestTreeCacheReadsWhatChanged(t *testing.T) {
	e := newEnv(t, Options{})
	base := bigTree(400)
	e.fake.SetTree(owner, repo, "c1", base)
	one := slices.Clone(base)
	one[123].Content = []byte("edited\n")
	e.fake.SetTree(owner, repo, "c2", one)
	grown := slices.Clone(one)
	for i := range 6 {
		grown = append(grown, ghfake.TreeFile{Path: fmt.Sprintf("new/d%d/x/f.yaml", i), Content: fmt.Appendf(nil, "x: %d\n", i)})
	}
	e.fake.SetTree(owner, repo, "c3", grown)
	cache := NewTreeCache(10000, 1<<20)
	for _, step := range []struct {
		sha  string
		want int64 // requests
	}{
		{"c1", 1},
		{"c2", 5}, // the root, services, services/s003, .pipeline, issue-4
		{"c2", 1}, // the root only: everything below it is held
		{"c3", 2 + 6},
	} {
		fsys, err := e.c.CommitFS(ctxT(t), owner, repo, step.sha, TreeLimits{Trees: cache})
		if err != nil {
			t.Fatal(err)
		}
		if got := fsys.Stats().Requests; got != step.want {
			t.Errorf("%s: %d requests, want %d", step.sha, got, step.want)
		}
		plain, err := e.c.CommitFS(ctxT(t), owner, repo, step.sha, TreeLimits{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := listingOf(t, fsys), listingOf(t, plain); !maps.Equal(got, want) {
			t.Fatalf("%s: the cached listing differs: %d paths, want %d", step.sha, len(got), len(want))
		}
	}
}

// TestTreeCacheBeyondTruncation: a tree whose recursive listing GitHub
// truncates is read subtree by subtree, whole, without the 100,000-entry
// cap of one listing; MaxEntries still bounds it and fails closed.
func TestTreeCacheBeyondTruncation(t *testing.T) {
	e := newEnv(t, Options{})
	files := bigTree(300)
	e.fake.SetTree(owner, repo, "c1", files)
	e.fake.SetTreeTruncation(50, 0) // every listing over 50 entries is cut
	fsys, err := e.c.CommitFS(ctxT(t), owner, repo, "c1", TreeLimits{Trees: NewTreeCache(10000, 1<<20)})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range files {
		want = append(want, f.Path)
	}
	if err := fstest.TestFS(fsys, want...); err != nil {
		t.Fatal(err)
	}
	_, err = e.c.CommitFS(ctxT(t), owner, repo, "c1", TreeLimits{Trees: NewTreeCache(10000, 1<<20), MaxEntries: 200})
	if !errors.Is(err, ErrTreeTooLarge) {
		t.Fatalf("over MaxEntries: %v, want ErrTreeTooLarge", err)
	}
}

// TestTreeCacheRandomHistory: over random histories (files edited, added,
// removed, moved) read through one small cache that must evict, each
// commit's FS lists exactly what a recursive listing lists.
func TestTreeCacheRandomHistory(t *testing.T) {
	e := newEnv(t, Options{})
	for _, size := range []int{8, 100000} {
		cache := NewTreeCache(size, 4096)
		rng := rand.New(rand.NewPCG(uint64(size), 7))
		files := map[string]string{}
		for i := range 60 {
			files[fmt.Sprintf("d%d/e%d/f%d", i%5, i%3, i)] = fmt.Sprint(i)
		}
		for step := range 40 {
			names := slices.Sorted(maps.Keys(files))
			switch p := names[rng.IntN(len(names))]; rng.IntN(4) {
			case 0:
				files[p] += "!"
			case 1:
				delete(files, p)
			case 2:
				files[fmt.Sprintf("n%d/m/f", step)] = "new"
			default:
				files["moved/"+p] = files[p]
				delete(files, p)
			}
			sha := fmt.Sprintf("s%d-%d", size, step)
			e.fake.SetTreeFiles(owner, repo, sha, files)
			fsys, err := e.c.CommitFS(ctxT(t), owner, repo, sha, TreeLimits{Trees: cache})
			if err != nil {
				t.Fatal(err)
			}
			plain, err := e.c.CommitFS(ctxT(t), owner, repo, sha, TreeLimits{})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := listingOf(t, fsys), listingOf(t, plain); !maps.Equal(got, want) {
				t.Fatalf("cache of %d, step %d: the cached listing differs", size, step)
			}
		}
	}
}

// TestTreeCacheArchiveOnDemand: with a TreeCache (the caller reuses
// results), a commit whose files are mostly not read downloads no
// archive; one whose reads pass ArchiveOver/4 blobs reads it, and every
// file still reads as the tree has it.
func TestTreeCacheArchiveOnDemand(t *testing.T) {
	files := map[string]string{}
	for i := range 80 {
		files[fmt.Sprintf("a/%02d.yaml", i)] = fmt.Sprintf("n: %d\n", i)
	}
	for _, tc := range []struct {
		reads       int
		wantArchive bool
	}{{reads: 3}, {reads: 80, wantArchive: true}} {
		e := newEnv(t, Options{})
		e.fake.SetTreeFiles(owner, repo, headSHA, files)
		fsys, err := e.c.CommitFS(ctxT(t), owner, repo, headSHA, TreeLimits{Trees: NewTreeCache(100, 1<<20), Wanted: everything, ArchiveOver: 40})
		if err != nil {
			t.Fatal(err)
		}
		for i := range tc.reads {
			p := fmt.Sprintf("a/%02d.yaml", i)
			if got, err := fs.ReadFile(fsys, p); err != nil || string(got) != files[p] {
				t.Fatalf("%s: %q, %v", p, got, err)
			}
		}
		st := fsys.Stats()
		if st.FromArchive != tc.wantArchive || !tc.wantArchive && st.Blobs != int64(tc.reads) || tc.wantArchive && st.Blobs > 11 {
			t.Errorf("%d reads: stats %+v, want the archive %v", tc.reads, st, tc.wantArchive)
		}
	}
}

// TestTreeCacheKeepsBlobs: a later commit's files that an earlier one had
// (the same blob id) are not fetched again; the blobs held stay within
// the cache's byte budget.
func TestTreeCacheKeepsBlobs(t *testing.T) {
	e := newEnv(t, Options{})
	files := map[string]string{"a.yaml": "a: 1\n", "b.yaml": "b: 2\n", "c.yaml": "c: 3\n"}
	e.fake.SetTreeFiles(owner, repo, "c1", files)
	files["b.yaml"] = "b: 20\n"
	e.fake.SetTreeFiles(owner, repo, "c2", files)
	cache := NewTreeCache(100, 1<<20)
	for _, step := range []struct {
		sha   string
		blobs int64
	}{{"c1", 3}, {"c2", 1}, {"c2", 0}} {
		fsys, err := e.c.CommitFS(ctxT(t), owner, repo, step.sha, TreeLimits{Trees: cache})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"a.yaml", "b.yaml", "c.yaml"} {
			if _, err := fs.ReadFile(fsys, p); err != nil {
				t.Fatal(err)
			}
		}
		if got, _ := fs.ReadFile(fsys, "b.yaml"); step.sha == "c2" && string(got) != "b: 20\n" {
			t.Fatalf("%s: b.yaml reads %q", step.sha, got)
		}
		if st := fsys.Stats(); st.Blobs != step.blobs {
			t.Errorf("%s: %d blobs fetched, want %d", step.sha, st.Blobs, step.blobs)
		}
	}
	small := NewTreeCache(10, 64)
	for i := range 20 {
		small.keepBlob("o/r", fmt.Sprint(i), []byte("12345678"))
	}
	if n := small.blobBytes.Load(); n > 64 || n < 56 {
		t.Fatalf("%d bytes of blobs held, the budget is 64", n)
	}
}

// TestTreeCacheBoundsWhatIsHeld: with a TreeCache, MaxTotalBytes bounds
// the file bytes held at once, not read in all: files read and closed
// one after another may pass it, a file open holds its share.
func TestTreeCacheBoundsWhatIsHeld(t *testing.T) {
	e := newEnv(t, Options{})
	files := map[string]string{}
	for i := range 6 {
		files[fmt.Sprintf("f%d", i)] = strings.Repeat("x", 100)
	}
	e.fake.SetTreeFiles(owner, repo, headSHA, files)
	for _, tc := range []struct {
		name  string
		trees *TreeCache
		fails bool
	}{{"with a tree cache", NewTreeCache(10, 0), false}, {"without", nil, true}} {
		fsys, err := e.c.CommitFS(ctxT(t), owner, repo, headSHA, TreeLimits{Trees: tc.trees, MaxTotalBytes: 250})
		if err != nil {
			t.Fatal(err)
		}
		var failed error
		for i := range 6 {
			if _, err := fs.ReadFile(fsys, fmt.Sprintf("f%d", i)); err != nil {
				failed = err
				break
			}
		}
		if (failed != nil) != tc.fails || failed != nil && !errors.Is(failed, ErrTreeTooLarge) {
			t.Errorf("%s: reading 600 bytes one file at a time under a 250-byte budget: %v", tc.name, failed)
		}
	}
	fsys, err := e.c.CommitFS(ctxT(t), owner, repo, headSHA, TreeLimits{Trees: NewTreeCache(10, 0), MaxTotalBytes: 250})
	if err != nil {
		t.Fatal(err)
	}
	var open []fs.File
	for i := range 3 {
		f, err := fsys.Open(fmt.Sprintf("f%d", i))
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadAll(f)
		if i < 2 && err != nil || i == 2 && !errors.Is(err, ErrTreeTooLarge) {
			t.Fatalf("file %d held with %d open: %v", i, len(open), err)
		}
		open = append(open, f)
	}
}
