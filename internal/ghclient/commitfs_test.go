package ghclient

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/phasegate/phasegate/internal/ghfake"
)

// readLinkFS is fs.ReadLinkFS (Go 1.25), spelt out: the module's go
// directive is older.
type readLinkFS interface {
	fs.FS
	ReadLink(name string) (string, error)
	Lstat(name string) (fs.FileInfo, error)
}

var (
	_ fs.ReadDirFS = (*CommitFS)(nil)
	_ fs.StatFS    = (*CommitFS)(nil)
	_ readLinkFS   = (*CommitFS)(nil)
)

// fsLimits reads at most 1000 bytes of a file (big.bin has 5000).
var fsLimits = TreeLimits{MaxFileBytes: 1000}

// everything wants every file: with ArchiveOver 1, the FS reads the archive.
func everything(string) bool { return true }

func TestCommitFSOperations(t *testing.T) {
	for _, src := range []struct {
		name        string
		truncateAt  int
		lim         TreeLimits
		wantArchive bool
	}{
		{name: "tree listing", lim: fsLimits},
		{name: "a truncated listing, walked", truncateAt: 3, lim: fsLimits},
		{name: "the archive", lim: TreeLimits{MaxFileBytes: 1000, Wanted: everything, ArchiveOver: 1}, wantArchive: true},
		{name: "the archive of a walked listing", truncateAt: 3, lim: TreeLimits{MaxFileBytes: 1000, Wanted: everything, ArchiveOver: 1},
			wantArchive: true},
	} {
		t.Run(src.name, func(t *testing.T) {
			e := treeEnv(t)
			e.fake.SetTreeTruncation(src.truncateAt, 0)
			fsys, err := e.c.CommitFS(ctxT(t), owner, repo, headSHA, src.lim)
			if err != nil {
				t.Fatal(err)
			}
			if got := fsys.Stats().FromArchive; got != src.wantArchive {
				t.Fatalf("FromArchive = %v", got)
			}
			testCommitFSOperations(t, fsys)
		})
	}
}

func testCommitFSOperations(t *testing.T, fsys *CommitFS) {
	tests := []struct {
		name    string
		op      func() (string, error)
		want    string
		wantErr error
	}{
		{name: "read a file", op: readFile(fsys, ".pace/deep/x/y.json"), want: `{"a":1}`},
		{name: "read through a symlink", op: readFile(fsys, "link"), want: "phase: plan\n"},
		{name: "read through a symlinked directory", op: readFile(fsys, "dirlink/x/y.json"), want: `{"a":1}`},
		{name: "a symlink climbing to the root", op: readFile(fsys, ".pace/up"), want: "hello\n"},
		{name: "a symlink out of the root", op: readFile(fsys, "escape"), wantErr: fs.ErrNotExist},
		{name: "a symlink climbing above the root leads nowhere", op: readFile(fsys, "above"), wantErr: fs.ErrNotExist},
		{name: "an absolute symlink", op: readFile(fsys, "abs"), wantErr: fs.ErrNotExist},
		{name: "a symlink loop", op: readFile(fsys, "loop1"), wantErr: errors.New("too many levels of symbolic links")},
		{name: "readlink", op: func() (string, error) { return fsys.ReadLink("escape") }, want: "../../etc/passwd"},
		{name: "readlink of a file", op: func() (string, error) { return fsys.ReadLink("README.md") }, wantErr: fs.ErrInvalid},
		{name: "lstat of a symlink", op: statOf(fsys.Lstat, "link"), want: "link L--------- 15"},
		{name: "stat of a symlink", op: statOf(fsys.Stat, "link"), want: "plan.yaml ---------- 12"},
		{name: "stat of an executable", op: statOf(fsys.Stat, "run.sh"), want: "run.sh ---------- 10 exec"},
		{name: "stat of a directory through a symlink", op: statOf(fsys.Stat, "dirlink"), want: "deep d--------- 0"},
		{name: "stat of an oversized file: its true size", op: statOf(fsys.Stat, "big.bin"), want: "big.bin ---------- 5000"},
		{name: "reading an oversized file: its head, then an error", op: readFile(fsys, "big.bin"), wantErr: ErrTooLarge},
		{name: "the head of an oversized file", op: readHead(fsys, "big.bin", 1000), want: strings.Repeat("B", 1000)},
		{name: "a submodule is left out", op: statOf(fsys.Stat, "vendor/sub"), wantErr: fs.ErrNotExist},
		{name: "the root", op: readDirNames(fsys, "."), want: ".pace README.md above abs big.bin dirlink escape link loop1 loop2 run.sh vendor"},
		{name: "a directory through a symlink", op: readDirNames(fsys, "dirlink"), want: "x"},
		{name: "an invalid name", op: readFile(fsys, "../README.md"), wantErr: fs.ErrInvalid},
		{name: "a missing file", op: readFile(fsys, "nope"), wantErr: fs.ErrNotExist},
		{name: "a file as a directory", op: readFile(fsys, "README.md/x"), wantErr: fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.op()
			if tt.wantErr != nil {
				if err == nil || (!errors.Is(err, tt.wantErr) && !strings.Contains(err.Error(), tt.wantErr.Error())) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func readFile(fsys fs.FS, name string) func() (string, error) {
	return func() (string, error) {
		b, err := fs.ReadFile(fsys, name)
		return string(b), err
	}
}

func readHead(fsys fs.FS, name string, n int) func() (string, error) {
	return func() (string, error) {
		f, err := fsys.Open(name)
		if err != nil {
			return "", err
		}
		defer f.Close()
		b := make([]byte, n)
		_, err = io.ReadFull(f, b)
		return string(b), err
	}
}

func statOf(stat func(string) (fs.FileInfo, error), name string) func() (string, error) {
	return func() (string, error) {
		fi, err := stat(name)
		if err != nil {
			return "", err
		}
		s := fmt.Sprintf("%s %s %d", fi.Name(), fi.Mode().Type(), fi.Size())
		if fi.Mode()&0o111 != 0 && fi.Mode().IsRegular() {
			s += " exec"
		}
		return s, nil
	}
}

func readDirNames(fsys fs.ReadDirFS, name string) func() (string, error) {
	return func() (string, error) {
		list, err := fsys.ReadDir(name)
		var names []string
		for _, d := range list {
			names = append(names, d.Name())
		}
		return strings.Join(names, " "), err
	}
}

// TestCommitFSConformance runs testing/fstest over a commit without the
// files it cannot show whole (oversized, dangling links).
func TestCommitFSConformance(t *testing.T) {
	for _, truncateAt := range []int{0, 2} {
		t.Run(fmt.Sprintf("truncate at %d", truncateAt), func(t *testing.T) {
			e := newEnv(t, Options{})
			e.fake.SetTree(owner, repo, headSHA, []ghfake.TreeFile{
				{Path: "a.txt", Content: []byte("a")},
				{Path: "d/b.txt", Content: []byte("b")},
				{Path: "d/e/c.txt", Content: []byte("c")},
				{Path: "x.sh", Content: []byte("#!"), Mode: ghfake.ModeExecutable},
			})
			e.fake.SetTreeTruncation(truncateAt, 0)
			fsys, err := e.c.CommitFS(ctxT(t), owner, repo, headSHA, TreeLimits{})
			if err != nil {
				t.Fatal(err)
			}
			if err := fstest.TestFS(fsys, "a.txt", "d/b.txt", "d/e/c.txt", "x.sh"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestCommitFSFetchesLazilyOnce(t *testing.T) {
	e := treeEnv(t)
	fsys, err := e.c.CommitFS(ctxT(t), owner, repo, headSHA, fsLimits)
	if err != nil {
		t.Fatal(err)
	}
	blobs := func() int { return e.fake.CountCalls("GET", "/repos/acme/widgets/git/blobs/") }
	if n := blobs(); n != 0 {
		t.Fatalf("%d blobs fetched by listing", n)
	}
	if _, err := fsys.Stat("README.md"); err != nil {
		t.Fatal(err)
	}
	f, _ := fsys.Open("README.md")
	f.Close()
	if n := blobs(); n != 0 {
		t.Fatalf("%d blobs fetched by Stat and Open", n)
	}
	var wg sync.WaitGroup
	names := []string{"README.md", ".pace/plan.yaml", "link", "run.sh", ".pace/deep/x/y.json"}
	errs := make(chan error, 8*len(names))
	for w := 0; w < 8; w++ {
		for _, name := range names {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := fs.ReadFile(fsys, name); err != nil {
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// README.md, plan.yaml, the link's target, run.sh, y.json.
	st := fsys.Stats()
	if n := blobs(); n != 5 || st.Blobs != 5 || st.Requests != 6 || st.Bytes != 6+12+15+10+7 {
		t.Fatalf("%d blob calls, stats %+v", n, st)
	}
}

func TestCommitFSLimits(t *testing.T) {
	tests := []struct {
		name       string
		lim        TreeLimits
		truncateAt int
		read       string
		wantErr    error // of CommitFS, or of reading read
		wantFound  bool
	}{
		{name: "too many entries", lim: TreeLimits{MaxEntries: 10}, wantErr: ErrTreeTooLarge},
		{name: "too many bytes in all", lim: TreeLimits{MaxTotalBytes: 4000}, read: "big.bin", wantErr: ErrTreeTooLarge},
		{name: "truncated, too many entries read level by level", lim: TreeLimits{MaxEntries: 12}, truncateAt: 3, wantErr: ErrTreeTooLarge},
		{name: "truncated, too many bytes of paths read level by level", lim: TreeLimits{MaxListingBytes: 60}, truncateAt: 3, wantErr: ErrTreeTooLarge},
		{name: "the archive past MaxTotalBytes: a read fails", lim: TreeLimits{MaxTotalBytes: 4000, Wanted: everything, ArchiveOver: 1},
			read: "big.bin", wantErr: ErrTreeTooLarge},
		{name: "unknown commit", lim: TreeLimits{}, wantFound: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := treeEnv(t)
			e.fake.SetTreeTruncation(tt.truncateAt, 0)
			sha := headSHA
			if tt.wantFound {
				sha = strings.Repeat("f", 40)
			}
			fsys, err := e.c.CommitFS(ctxT(t), owner, repo, sha, tt.lim)
			if tt.wantFound {
				if !IsNotFound(err) {
					t.Fatalf("err = %v, want a 404", err)
				}
				return
			}
			if err == nil && tt.read != "" {
				_, err = fs.ReadFile(fsys, tt.read)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

type tarEntry struct {
	name, body, link string
	size             int64 // when not len(body)
	typ              byte
}

func tarBytes(t testing.TB, entries ...tarEntry) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.body)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		switch {
		case e.typ != 0:
			h.Typeflag = e.typ
		case e.link != "":
			h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, e.link, 0
		case strings.HasSuffix(e.name, "/"):
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if e.size != 0 {
			h.Size = e.size
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			_, _ = tw.Write([]byte(e.body))
		}
	}
	tw.Flush() // not Close: an entry may promise more bytes than it has
	return buf.Bytes()
}

func tarGz(t testing.TB, entries ...tarEntry) []byte {
	var buf bytes.Buffer
	// Stored blocks: a gzip stream all the same, without the compressor's
	// tables (a megabyte each, allocated anew per archive).
	zw, _ := gzip.NewWriterLevel(&buf, gzip.NoCompression)
	_, _ = zw.Write(tarBytes(t, entries...))
	zw.Close()
	return buf.Bytes()
}

// BenchmarkCommitFS lists a commit of 10,000 files and reads 100 of them,
// through the tree listing and through the archive fallback, and reports
// the API requests and bytes each costs.
func BenchmarkCommitFS(b *testing.B) {
	files := make([]ghfake.TreeFile, 10000)
	for i := range files {
		files[i] = ghfake.TreeFile{Path: fmt.Sprintf("d%d/f%d.yaml", i%100, i), Content: []byte(strings.Repeat("k: v\n", 40))}
	}
	for _, mode := range []struct {
		name       string
		truncateAt int
	}{{name: "listing"}, {name: "archive", truncateAt: 1000}} {
		b.Run(mode.name, func(b *testing.B) {
			f := ghfake.New()
			defer f.Close()
			f.AddToken(botToken, botLogin)
			f.SetTree(owner, repo, headSHA, files)
			f.SetTreeTruncation(mode.truncateAt, 0)
			c, err := New(Options{BaseURL: f.URL(), Token: botToken, CacheEntries: -1})
			if err != nil {
				b.Fatal(err)
			}
			var st FSStats
			for i := 0; i < b.N; i++ {
				fsys, err := c.CommitFS(context.Background(), owner, repo, headSHA, TreeLimits{})
				if err != nil {
					b.Fatal(err)
				}
				for j := 0; j < 100; j++ {
					if _, err := fs.ReadFile(fsys, fmt.Sprintf("d%d/f%d.yaml", j, j)); err != nil {
						b.Fatal(err)
					}
				}
				st = fsys.Stats()
			}
			b.ReportMetric(float64(st.Requests), "requests/op")
			b.ReportMetric(float64(st.Bytes), "file-bytes/op")
			b.ReportMetric(float64(st.ArchiveBytes), "archive-bytes/op")
		})
	}
}
