package ghclient

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"testing"
)

// fuzzLimits are small, so that the fuzzer reaches them.
var fuzzLimits = TreeLimits{MaxEntries: 64, MaxFileBytes: 256, MaxTotalBytes: 2048, MaxArchiveBytes: 1 << 20}

func TestReadTar(t *testing.T) {
	tests := []struct {
		name    string
		entries []tarEntry
		wantErr string
		want    string // the FS's files: path=content, symlinks path->target
	}{
		{name: "github's layout", entries: []tarEntry{{name: "o-r-abc/"}, {name: "o-r-abc/a/"}, {name: "o-r-abc/a/b.txt", body: "b"},
			{name: "o-r-abc/l", link: "a/b.txt"}, {name: "o-r-abc/sub/"}},
			want: "a/b.txt=b l->a/b.txt"},
		{name: "parent traversal", entries: []tarEntry{{name: "top/../x", body: "x"}}, wantErr: "invalid path"},
		{name: "traversal as the top", entries: []tarEntry{{name: "../x", body: "x"}}, wantErr: "not under a top directory"},
		{name: "an absolute path", entries: []tarEntry{{name: "/etc/passwd", body: "x"}}, wantErr: "not under a top directory"},
		{name: "two tops", entries: []tarEntry{{name: "a/x", body: "x"}, {name: "b/y", body: "y"}}, wantErr: `not under "a"`},
		{name: "a file beneath a symlink", entries: []tarEntry{{name: "t/l", link: "/etc"}, {name: "t/l/passwd", body: "x"}}, wantErr: "not a directory"},
		{name: "a name twice", entries: []tarEntry{{name: "t/x", body: "1"}, {name: "t/x", body: "2"}}, wantErr: "listed twice"},
		{name: "a long symlink target", entries: []tarEntry{{name: "t/l", link: strings.Repeat("a/", 2100)}}, wantErr: "symlink target"},
		{name: "a size beyond the data", entries: []tarEntry{{name: "t/x", body: "x", size: 1 << 40}}, wantErr: "unexpected EOF"},
		{name: "a hard link is not kept", entries: []tarEntry{{name: "t/x", body: "x"}, {name: "t/h", link: "x", typ: tar.TypeLink}}, want: "x=x"},
		{name: "an oversized file keeps its head", entries: []tarEntry{{name: "t/big", body: strings.Repeat("z", 300)}}, want: "big=" + strings.Repeat("z", 256) + "+"},
		{name: "too many entries", entries: manyEntries(65), wantErr: "over 64 entries"},
		{name: "too many bytes", entries: []tarEntry{{name: "t/a", body: strings.Repeat("a", 250)}, {name: "t/b", body: strings.Repeat("b", 250)},
			{name: "t/c", body: strings.Repeat("c", 250)}, {name: "t/d", body: strings.Repeat("d", 250)}, {name: "t/e", body: strings.Repeat("e", 250)},
			{name: "t/f", body: strings.Repeat("f", 250)}, {name: "t/g", body: strings.Repeat("g", 250)}, {name: "t/h", body: strings.Repeat("h", 250)},
			{name: "t/i", body: strings.Repeat("i", 250)}}, wantErr: "fetched in all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &CommitFS{lim: fuzzLimits.withDefaults(), root: newDir(".")}
			err := f.readTarGz(bytes.NewReader(tarGz(t, tt.entries...)))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := describe(t, f); got != tt.want {
				t.Fatalf("files %q, want %q", got, tt.want)
			}
		})
	}
}

func manyEntries(n int) []tarEntry {
	out := []tarEntry{{name: "t/"}}
	for i := 0; i < n; i++ {
		out = append(out, tarEntry{name: "t/" + strconv.Itoa(i), body: "x"})
	}
	return out
}

// describe lists an FS's files as path=content (with "+" when reading
// stopped at the size limit) and symlinks as path->target.
func describe(t testing.TB, f *CommitFS) string {
	var out []string
	err := fs.WalkDir(f, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := f.ReadLink(p)
			if err != nil {
				return err
			}
			out = append(out, p+"->"+target)
		case !d.IsDir():
			b, err := fs.ReadFile(f, p)
			s := p + "=" + string(b)
			if errors.Is(err, ErrTooLarge) {
				s += "+"
			} else if err != nil {
				return err
			}
			out = append(out, s)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, " ")
}

// FuzzReadTar feeds untrusted tar streams to the archive reader: it must
// never panic, never keep a path that is not a clean relative one (so no
// name can leave the tree), never keep more than the limits allow, and the
// FS it builds must resolve every name (symlinks out of the root and loops
// included) without panicking.
func FuzzReadTar(f *testing.F) {
	seeds := [][]tarEntry{
		{{name: "o-r-abc/"}, {name: "o-r-abc/a/b.txt", body: "b"}, {name: "o-r-abc/l", link: "a/b.txt"}},
		{{name: "t/../../etc/passwd", body: "x"}},
		{{name: "/etc/passwd", body: "x"}},
		{{name: "t/l", link: "../../../etc"}, {name: "t/m", link: "/etc/passwd"}, {name: "t/n", link: "l/../m"}},
		{{name: "t/l", link: "/etc"}, {name: "t/l/passwd", body: "x"}},
		{{name: "t/a", link: "b"}, {name: "t/b", link: "a"}, {name: "t/c", link: "./c/.."}},
		{{name: "t/x", body: "x", size: 1 << 40}},
		{{name: "t/" + strings.Repeat("n", 4000), body: "long name, a pax header"}},
		{{name: "t/dev", typ: tar.TypeChar}, {name: "t/h", link: "dev", typ: tar.TypeLink}},
	}
	for _, s := range seeds {
		f.Add(tarBytes(f, s...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := &CommitFS{lim: fuzzLimits.withDefaults(), root: newDir(".")}
		if err := fsys.readTar(bytes.NewReader(data)); err != nil {
			return
		}
		fsys.root.dropSubmodules()
		fsys.root.sortAll()
		if fsys.fetched > fuzzLimits.MaxTotalBytes {
			t.Fatalf("kept %d bytes, the limit is %d", fsys.fetched, fuzzLimits.MaxTotalBytes)
		}
		_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if !fs.ValidPath(p) {
				t.Fatalf("path %q is not valid", p)
			}
			if d.Type()&fs.ModeSymlink != 0 {
				_, _ = fsys.ReadLink(p)
				_, _ = fsys.Lstat(p)
			}
			if _, err := fsys.Stat(p); err == nil && !d.IsDir() {
				if r, err := fsys.Open(p); err == nil {
					_, _ = io.Copy(io.Discard, r)
					r.Close()
				}
			}
			return nil
		})
	})
}
