package ghclient

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"strings"
	"testing"
)

// TestTreeCacheKeepsTheArchive: the files a commit's archive gave serve
// the repository's later commits from disk, by blob id: a file of the same
// content (even at another path) is not fetched, an edited one is, and
// every file reads as the later commit has it.
func TestTreeCacheKeepsTheArchive(t *testing.T) {
	e := newEnv(t, Options{})
	first := map[string]string{}
	for i := range 80 {
		first[fmt.Sprintf("a/%02d.yaml", i)] = fmt.Sprintf("n: %d\n", i)
	}
	second := maps.Clone(first)
	second["a/05.yaml"] = "edited: true\n"
	second["b/copy.yaml"] = first["a/10.yaml"]
	c1, c2 := strings.Repeat("1", 40), strings.Repeat("2", 40)
	e.fake.SetTreeFiles(owner, repo, c1, first)
	e.fake.SetTreeFiles(owner, repo, c2, second)
	tc := NewTreeCache(100, 0) // no blobs kept in memory: only the spool
	lim := TreeLimits{Trees: tc, Wanted: everything, ArchiveOver: 40}
	read := func(sha string, files map[string]string) FSStats {
		t.Helper()
		fsys, err := e.c.CommitFS(ctxT(t), owner, repo, sha, lim)
		if err != nil {
			t.Fatal(err)
		}
		for p, want := range files {
			if got, err := fs.ReadFile(fsys, p); err != nil || string(got) != want {
				t.Fatalf("%s of %s: %q, %v; want %q", p, sha, got, err, want)
			}
		}
		st := fsys.Stats()
		if err := fsys.Close(); err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := read(c1, first); !st.FromArchive {
		t.Fatalf("the first commit was not read from its archive: %+v", st)
	}
	if st := read(c2, second); st.FromArchive || st.Blobs != 1 {
		t.Errorf("the second commit: %+v, want one blob (the edited file) and no archive", st)
	}
}

// TestTreeCacheBoundsKeptArchives: a TreeCache keeps the spool of
// maxKeptSpools repositories; the one it drops is closed once no FS
// reads it any more.
func TestTreeCacheBoundsKeptArchives(t *testing.T) {
	e := newEnv(t, Options{})
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("a/%02d.yaml", i)] = fmt.Sprintf("n: %d\n", i)
	}
	tc := NewTreeCache(1000, 0)
	lim := TreeLimits{Trees: tc, Wanted: everything, ArchiveOver: 20}
	var first *keptSpool
	var reading *CommitFS
	for i := range maxKeptSpools + 1 {
		name := fmt.Sprintf("r%d", i)
		e.fake.AddRepo(owner, name, "main")
		e.fake.SetTreeFiles(owner, name, headSHA, files)
		fsys, err := e.c.CommitFS(ctxT(t), owner, name, headSHA, lim)
		if err != nil {
			t.Fatal(err)
		}
		for p := range files {
			if _, err := fs.ReadFile(fsys, p); err != nil {
				t.Fatal(err)
			}
		}
		if err := fsys.Close(); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first, _ = tc.spools.Peek(repoName(owner, name))
			// A later commit of r0 still reading its spool when the
			// cache drops it.
			if reading, err = e.c.CommitFS(ctxT(t), owner, name, headSHA, lim); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := tc.spools.Len(); n != maxKeptSpools || first == nil {
		t.Fatalf("%d spools kept (first %v), want %d", n, first, maxKeptSpools)
	}
	if _, err := fs.ReadFile(reading, "a/07.yaml"); err != nil {
		t.Fatalf("a dropped spool still read by an FS: %v", err)
	}
	if _, err := first.file.Stat(); err != nil {
		t.Fatalf("the dropped spool was closed under an FS reading it: %v", err)
	}
	if err := reading.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := first.file.Stat(); err == nil {
		t.Error("the dropped spool is still open after its last reader closed")
	}
}

// TestKeptSpoolHoldsOnlyVerifiedWholeFiles: what a kept spool serves
// later commits is only the files whose whole content had their listed id:
// not a tampered entry, not a file kept only for its head, not a symlink.
func TestKeptSpoolHoldsOnlyVerifiedWholeFiles(t *testing.T) {
	tampered := []tarEntry{{name: "t/"}, {name: "t/x.yaml", body: "x: 2\n"}, {name: "t/a/b.txt", body: "b"},
		{name: "t/big", body: strings.Repeat("z", 300)}, {name: "t/l", link: "a/b.txt"}}
	lim := fuzzLimits
	lim.Trees = NewTreeCache(10, 0)
	f := listedFS(t, tarListing, lim)
	f.owner, f.repo = owner, repo
	if err := f.readTarGz(bytes.NewReader(tarGz(t, tampered...))); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	ks, ok := lim.Trees.spools.Peek(repoName(owner, repo))
	if !ok {
		t.Fatal("the spool was not kept")
	}
	want := map[string][2]int64{blobID("b"): {ks.at[blobID("b")][0], 1}}
	if !maps.Equal(ks.at, want) {
		t.Errorf("kept %v, want only a/b.txt's blob %v", ks.at, want)
	}
}
