package ghclient

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/ghfake"
)

// TestCommitFSPrefersTheArchive: when the caller wants more files than
// ArchiveOver, the FS reads the archive (a few requests) instead of one
// request per blob; when the archive is over its limits, it falls back to
// the blobs; below the threshold it never downloads the archive.
func TestCommitFSPrefersTheArchive(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 40; i++ {
		files[fmt.Sprintf("a/%02d.yaml", i)] = fmt.Sprintf("n: %d\n", i)
	}
	files["big/blob.bin"] = strings.Repeat("x", 4096)
	yaml := func(p string) bool { return strings.HasSuffix(p, ".yaml") }
	tests := []struct {
		name        string
		lim         TreeLimits
		wantArchive bool
		maxRequests int64
	}{
		{name: "over the threshold: the archive", lim: TreeLimits{Wanted: yaml, ArchiveOver: 10}, wantArchive: true, maxRequests: 3},
		{name: "under the threshold: blobs", lim: TreeLimits{Wanted: yaml, ArchiveOver: 100}, maxRequests: 41},
		{name: "no predicate: blobs", lim: TreeLimits{ArchiveOver: 10}, maxRequests: 41},
		{name: "the archive over its limit: blobs", lim: TreeLimits{Wanted: yaml, ArchiveOver: 10, MaxArchiveBytes: 300}, maxRequests: 43},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Options{BackoffBase: 1, BackoffMax: 1})
			e.fake.SetTreeFiles(owner, repo, headSHA, files)
			f, err := e.c.CommitFS(ctxT(t), owner, repo, headSHA, tt.lim)
			if err != nil {
				t.Fatal(err)
			}
			for p, want := range files {
				if !yaml(p) {
					continue
				}
				got, err := fs.ReadFile(f, p)
				if err != nil || string(got) != want {
					t.Fatalf("%s: %q, %v", p, got, err)
				}
			}
			st := f.Stats()
			if st.FromArchive != tt.wantArchive || st.Requests > tt.maxRequests {
				t.Fatalf("stats %+v: from the archive %v (want %v), at most %d requests", st, st.FromArchive, tt.wantArchive, tt.maxRequests)
			}
		})
	}
}

// archiveOf is the archive git archive makes of files (no
// .gitattributes), under top directory "top/", then extra.
func archiveOf(files []ghfake.TreeFile, extra ...tarEntry) []tarEntry {
	out := []tarEntry{{name: "top/"}}
	for _, f := range files {
		switch f.Mode {
		case ghfake.ModeSymlink:
			out = append(out, tarEntry{name: "top/" + f.Path, link: string(f.Content)})
		case ghfake.ModeSubmodule:
			out = append(out, tarEntry{name: "top/" + f.Path + "/"})
		default:
			out = append(out, tarEntry{name: "top/" + f.Path, body: string(f.Content)})
		}
	}
	return append(out, extra...)
}

// replaced is archiveOf(commitFiles()) with the entry of path p replaced
// by e.
func replaced(p string, e tarEntry) []tarEntry {
	out := archiveOf(commitFiles())
	for i := range out {
		if out[i].name == "top/"+p {
			out[i] = e
		}
	}
	return out
}

// gzipBomb is an archive whose first entry is a file of n zero bytes,
// compressed to about a thousandth of it, then the commit's files.
func gzipBomb(t testing.TB, n int) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(tarBytes(t, append([]tarEntry{{name: "top/zeros", body: strings.Repeat("\x00", n)}}, archiveOf(commitFiles())[1:]...)...))
	zw.Close()
	return buf.Bytes()
}

// TestCommitFSVerifiesTheArchive: the archive never decides what the FS
// holds. Whatever it is, the FS shows exactly what the listing and its
// blobs show (the same FS read blob by blob); an archive file is used only
// when its git blob id is the listed one, and the rest is fetched as blobs.
func TestCommitFSVerifiesTheArchive(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("B", 5000)
	tests := []struct {
		name      string
		archive   []tarEntry // nil: the fake's own
		raw       []byte     // served as is
		lim       TreeLimits
		wantBlobs int // the blobs fetched to read every file and symlink
		wantWhole bool
	}{
		{name: "the archive as built: no blob fetched", wantBlobs: 0, wantWhole: true},
		{name: "a tampered file of the same size", archive: replaced("README.md", tarEntry{name: "top/README.md", body: "HOLD!\n"}),
			wantBlobs: 1, wantWhole: true},
		{name: "an oversized file whose tail differs", archive: replaced("big.bin", tarEntry{name: "top/big.bin", body: big[:4999] + "C"}),
			wantBlobs: 1, wantWhole: true},
		{name: "a file missing", archive: replaced("run.sh", tarEntry{name: "top/"}), wantBlobs: 1, wantWhole: true},
		{name: "a regular file where a symlink is listed", archive: replaced("link", tarEntry{name: "top/link", body: ".pace/plan.yaml"}),
			wantBlobs: 1, wantWhole: true},
		{name: "a symlink retargeted", archive: replaced("dirlink", tarEntry{name: "top/dirlink", link: "."}), wantBlobs: 1, wantWhole: true},
		{name: "files the listing lacks", archive: archiveOf(commitFiles(), tarEntry{name: "top/.pace/hold.yaml", body: "verdict: hold\n"},
			tarEntry{name: "top/vendor/sub/x", body: "x"}), wantBlobs: 0, wantWhole: true},
		{name: "an archive escaping its root", archive: []tarEntry{{name: "top/"}, {name: "top/../../evil", body: "x"}}, wantBlobs: 13},
		{name: "a file beneath a symlink", archive: []tarEntry{{name: "top/link", link: "/etc"}, {name: "top/link/passwd", body: "x"}},
			wantBlobs: 13, wantWhole: true},
		{name: "not gzip", raw: []byte("not a tarball"), wantBlobs: 13},
		{name: "an archive over its limit", lim: TreeLimits{MaxArchiveBytes: 200}, wantBlobs: 13},
		{name: "a gzip bomb: the uncompressed stream is bounded", raw: gzipBomb(t, 1<<20), lim: TreeLimits{MaxArchiveBytes: 64 << 10},
			wantBlobs: 13},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := treeEnv(t)
			switch {
			case tt.raw != nil:
				e.fake.SetArchive(owner, repo, headSHA, tt.raw)
			case tt.archive != nil:
				e.fake.SetArchive(owner, repo, headSHA, tarGz(t, tt.archive...))
			}
			lim := tt.lim
			lim.MaxFileBytes, lim.Wanted, lim.ArchiveOver = 1000, everything, 1
			fsys, err := e.c.CommitFS(ctxT(t), owner, repo, headSHA, lim)
			if err != nil {
				t.Fatal(err)
			}
			blobs := func() int { return e.fake.CountCalls("GET", "/repos/acme/widgets/git/blobs/") }
			got, fetched := describe(t, fsys), blobs()
			ref, err := e.c.CommitFS(ctxT(t), owner, repo, headSHA, fsLimits)
			if err != nil {
				t.Fatal(err)
			}
			if want := describe(t, ref); got != want {
				t.Fatalf("through the archive:\n%s\nthe tree:\n%s", got, want)
			}
			if st := fsys.Stats(); fetched != tt.wantBlobs || st.FromArchive != tt.wantWhole {
				t.Fatalf("%d blobs fetched (want %d), stats %+v (want FromArchive %v)", fetched, tt.wantBlobs, st, tt.wantWhole)
			}
		})
	}
}

// TestRedTeamArchiveHidesNothing is attack 1 of issue 30: the commit's
// own .gitattributes export-ignores its HOLD artifact and export-substs
// another file, and GitHub's archive (git archive) obeys them. Read
// through the archive, the FS still holds exactly the tree's files, with
// the tree's contents.
func TestRedTeamArchiveHidesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	files := map[string]string{
		".gitattributes":                   ".pace/day-1/sentinel-report.yaml export-ignore\n.pace/day-1/plan.yaml export-subst\n",
		".pace/day-1/sentinel-report.yaml": "verdict: HOLD\n",
		".pace/day-1/plan.yaml":            "verdict: $Format:%H$\n",
		".pace/day-1/notes.md":             "notes\n",
		"README.md":                        "hello\n",
	}
	e.fake.SetTreeFiles(owner, repo, headSHA, files)
	fsys, err := e.c.CommitFS(ctxT(t), owner, repo, headSHA, TreeLimits{Wanted: everything, ArchiveOver: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !fsys.Stats().FromArchive {
		t.Fatal("the archive was not read")
	}
	want := ".gitattributes=" + files[".gitattributes"] + " .pace/day-1/notes.md=notes\n .pace/day-1/plan.yaml=verdict: $Format:%H$\n" +
		" .pace/day-1/sentinel-report.yaml=verdict: HOLD\n README.md=hello\n"
	if got := describe(t, fsys); got != want {
		t.Fatalf("the FS holds:\n%s\nthe tree:\n%s", got, want)
	}
}

// TestCommitFSWalkStopsAtItsBound: a truncated listing is read level by
// level, and the walk stops at MaxEntries entries read, not after reading
// the whole tree; a listing holding more than MaxEntries entries before
// its cut stops at once, while it is decoded.
func TestCommitFSWalkStopsAtItsBound(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := 0; i < 300; i++ {
		files[fmt.Sprintf("d%02d/f%d.yaml", i%30, i)] = "x"
	}
	tests := []struct {
		name       string
		maxEntries int
		wantErr    error
		wantTrees  int
	}{
		{name: "within the bound: the whole tree", maxEntries: 330, wantTrees: 1 + 31},
		{name: "past it: stops there", maxEntries: 150, wantErr: ErrTreeTooLarge, wantTrees: 1 + 1 + 13},
		{name: "past it within the first listing: stops there", maxEntries: 59, wantErr: ErrTreeTooLarge, wantTrees: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, Options{})
			e.fake.SetTreeFiles(owner, repo, headSHA, files)
			e.fake.SetTreeTruncation(100, 0)
			fsys, err := e.c.CommitFS(ctxT(t), owner, repo, headSHA, TreeLimits{MaxEntries: tt.maxEntries})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if n := e.fake.CountCalls("GET", "/repos/acme/widgets/git/trees/"); n != tt.wantTrees {
				t.Fatalf("%d tree reads, want %d", n, tt.wantTrees)
			}
			if err != nil {
				return
			}
			if got, err := fs.ReadFile(fsys, "d07/f277.yaml"); err != nil || string(got) != "x" {
				t.Fatalf("%q, %v", got, err)
			}
			if st := fsys.Stats(); st.Requests != 1+31+1 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}
