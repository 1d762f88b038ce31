package ghclient

import (
	"archive/tar"
	"bytes"
	"crypto/sha1"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"testing"
)

// fuzzLimits are small, so that the fuzzer reaches them.
var fuzzLimits = TreeLimits{MaxEntries: 64, MaxFileBytes: 256, MaxTotalBytes: 2048, MaxArchiveBytes: 1 << 20}

// blobID is git's id of a blob: `git hash-object`.
func blobID(content string) string {
	return fmt.Sprintf("%x", sha1.Sum([]byte(fmt.Sprintf("blob %d\x00%s", len(content), content))))
}

// tarListing is the tree listing the archive tests verify archives
// against: path → content; a "->" prefix makes a symlink.
var tarListing = map[string]string{"a/b.txt": "b", "l": "->a/b.txt", "big": strings.Repeat("z", 300), "x.yaml": "x: 1\n"}

// listedFS is a CommitFS of listing, with nothing fetched (and no client:
// only what the archive fills can be read).
func listedFS(t testing.TB, listing map[string]string, lim TreeLimits) *CommitFS {
	f := &CommitFS{lim: lim.withDefaults(), root: newDir(".")}
	entries := []TreeEntry{{Path: "sub", Mode: ModeSubmodule, Type: "commit", SHA: strings.Repeat("1", 40)}}
	for p, c := range listing {
		mode := ModeFile
		if target, ok := strings.CutPrefix(c, "->"); ok {
			mode, c = ModeSymlink, target
		}
		entries = append(entries, TreeEntry{Path: p, Mode: mode, Type: "blob", SHA: blobID(c), Size: int64(len(c))})
	}
	if err := f.build(entries); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// filled lists what the archive filled (spooled): path=content (its kept
// head), path->target.
func filled(t testing.TB, f *CommitFS) string {
	var out []string
	var walk func(n *node, prefix string)
	walk = func(n *node, prefix string) {
		for _, c := range n.children {
			if c.kind == kindDir {
				walk(c, prefix+c.name+"/")
				continue
			}
			if !c.spooled {
				continue
			}
			data, err := f.load(c)
			if err != nil {
				t.Fatalf("%s%s: %v", prefix, c.name, err)
			}
			sep := map[nodeKind]string{kindFile: "=", kindSymlink: "->"}[c.kind]
			out = append(out, prefix+c.name+sep+string(data))
		}
	}
	walk(f.root, "")
	return strings.Join(out, " ")
}

// githubTar is the archive git archive makes of tarListing, under top
// directory t/.
func githubTar() []tarEntry {
	return []tarEntry{{name: "t/"}, {name: "t/a/"}, {name: "t/a/b.txt", body: "b"}, {name: "t/big", body: strings.Repeat("z", 300)},
		{name: "t/l", link: "a/b.txt"}, {name: "t/sub/"}, {name: "t/x.yaml", body: "x: 1\n"}}
}

// withEntry is githubTar with the entry named name replaced by e (or
// removed when e has no name), then extra appended.
func withEntry(name string, e tarEntry, extra ...tarEntry) []tarEntry {
	var out []tarEntry
	for _, g := range githubTar() {
		switch {
		case g.name != name:
			out = append(out, g)
		case e.name != "":
			out = append(out, e)
		}
	}
	return append(out, extra...)
}

func TestReadTar(t *testing.T) {
	t.Parallel()
	all := "a/b.txt=b big=" + strings.Repeat("z", 256) + " l->a/b.txt x.yaml=x: 1\n"
	tests := []struct {
		name    string
		entries []tarEntry
		lim     TreeLimits
		wantErr string
		want    string // what was filled
	}{
		{name: "github's layout", entries: githubTar(), want: all},
		{name: "the files not wanted too", entries: githubTar(), lim: TreeLimits{Wanted: func(p string) bool { return p == "x.yaml" }},
			want: all},
		{name: "a file left out (export-ignore)", entries: withEntry("t/x.yaml", tarEntry{}),
			want: "a/b.txt=b big=" + strings.Repeat("z", 256) + " l->a/b.txt"},
		{name: "a file of other content (export-subst)", entries: withEntry("t/x.yaml", tarEntry{name: "t/x.yaml", body: "x: 2\n"}),
			want: "a/b.txt=b big=" + strings.Repeat("z", 256) + " l->a/b.txt"},
		{name: "a file of another size", entries: withEntry("t/a/b.txt", tarEntry{name: "t/a/b.txt", body: "bb"}),
			want: "big=" + strings.Repeat("z", 256) + " l->a/b.txt x.yaml=x: 1\n"},
		{name: "the tail of an oversized file differs: the whole of it is hashed",
			entries: withEntry("t/big", tarEntry{name: "t/big", body: strings.Repeat("z", 299) + "y"}), want: "a/b.txt=b l->a/b.txt x.yaml=x: 1\n"},
		{name: "a regular file where the listing has a symlink", entries: withEntry("t/l", tarEntry{name: "t/l", body: "a/b.txt"}),
			want: "a/b.txt=b big=" + strings.Repeat("z", 256) + " x.yaml=x: 1\n"},
		{name: "a symlink where the listing has a file", entries: withEntry("t/x.yaml", tarEntry{name: "t/x.yaml", link: "x: 1\n"}),
			want: "a/b.txt=b big=" + strings.Repeat("z", 256) + " l->a/b.txt"},
		{name: "a symlink of another target", entries: withEntry("t/l", tarEntry{name: "t/l", link: "a/c.txt"}),
			want: "a/b.txt=b big=" + strings.Repeat("z", 256) + " x.yaml=x: 1\n"},
		{name: "files the listing lacks are ignored",
			entries: withEntry("", tarEntry{}, tarEntry{name: "t/extra.yaml", body: "hold"}, tarEntry{name: "t/l/passwd", body: "x"},
				tarEntry{name: "t/x.yaml/y", body: "y"}, tarEntry{name: "t/a", body: "a"}, tarEntry{name: "t/sub/s.txt", body: "s"}),
			want: all},
		{name: "a tampered copy, then the listed one", entries: withEntry("t/x.yaml", tarEntry{name: "t/x.yaml", body: "x: 2\n"},
			tarEntry{name: "t/x.yaml", body: "x: 1\n"}), want: all},
		{name: "a hard link is not kept", entries: withEntry("t/x.yaml", tarEntry{name: "t/x.yaml", link: "a/b.txt", typ: tar.TypeLink}),
			want: "a/b.txt=b big=" + strings.Repeat("z", 256) + " l->a/b.txt"},
		{name: "parent traversal", entries: []tarEntry{{name: "top/../x", body: "x"}}, wantErr: "invalid path"},
		{name: "traversal as the top", entries: []tarEntry{{name: "../x", body: "x"}}, wantErr: "not under a top directory"},
		{name: "an absolute path", entries: []tarEntry{{name: "/etc/passwd", body: "x"}}, wantErr: "not under a top directory"},
		{name: "two tops", entries: []tarEntry{{name: "a/x", body: "x"}, {name: "b/y", body: "y"}}, wantErr: `not under "a"`},
		{name: "a size beyond the data", entries: []tarEntry{{name: "t/a/b.txt", body: "b", size: 1 << 40}}, wantErr: "unexpected EOF"},
		{name: "a listed file cut short", entries: []tarEntry{{name: "t/big", body: "zz", size: 300}}, wantErr: "unexpected EOF"},
		{name: "too many entries", entries: manyEntries(65), wantErr: "over 64 entries"},
		{name: "the uncompressed archive past MaxArchiveBytes (a gzip bomb)",
			entries: []tarEntry{{name: "t/"}, {name: "t/zeros", body: strings.Repeat("\x00", 40<<10)}, {name: "t/x.yaml", body: "x: 1\n"}},
			lim:     TreeLimits{MaxArchiveBytes: 32 << 10}, wantErr: "the uncompressed archive: over 32768 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			lim := fuzzLimits
			lim.Wanted = tt.lim.Wanted
			if tt.lim.MaxTotalBytes != 0 {
				lim.MaxTotalBytes = tt.lim.MaxTotalBytes
			}
			if tt.lim.MaxArchiveBytes != 0 {
				lim.MaxArchiveBytes = tt.lim.MaxArchiveBytes
			}
			f := listedFS(t, tarListing, lim)
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
			if got := filled(t, f); got != tt.want {
				t.Fatalf("filled %q, want %q", got, tt.want)
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
// never panic, never keep more than the limits allow, and never fill a
// file or symlink with anything but the head of its listed content.
func FuzzReadTar(f *testing.F) {
	seeds := [][]tarEntry{
		githubTar(),
		withEntry("t/x.yaml", tarEntry{name: "t/x.yaml", body: "x: 2\n"}, tarEntry{name: "t/l/passwd", body: "x"}),
		{{name: "t/../../etc/passwd", body: "x"}},
		{{name: "/etc/passwd", body: "x"}},
		{{name: "t/l", link: "../../../etc"}, {name: "t/a/b.txt", link: "b"}, {name: "t/big", body: "z", size: 300}},
		{{name: "t/x", body: "x", size: 1 << 40}},
		{{name: "t/" + strings.Repeat("n", 4000), body: "long name, a pax header"}},
		{{name: "t/dev", typ: tar.TypeChar}, {name: "t/h", link: "dev", typ: tar.TypeLink}},
	}
	for _, s := range seeds {
		f.Add(tarBytes(f, s...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := listedFS(t, tarListing, fuzzLimits)
		_ = fsys.readTar(bytes.NewReader(data))
		if fsys.spoolEnd > fuzzLimits.MaxArchiveBytes {
			t.Fatalf("spooled %d bytes, the limit is %d", fsys.spoolEnd, fuzzLimits.MaxArchiveBytes)
		}
		for p, c := range tarListing {
			n := fsys.listed(p)
			c = strings.TrimPrefix(c, "->")
			if !n.spooled {
				continue
			}
			got, err := fsys.load(n)
			if err != nil || string(got) != c[:min(len(c), int(fuzzLimits.MaxFileBytes))] {
				t.Fatalf("%s filled with %q (%v), listed %q", p, got, err, c)
			}
		}
	})
}
