package ghclient

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
)

// TestSpoolHoldsTheArchiveOnDisk: the archive's verified files wait in the
// spool, not in memory; each reads back as the listing's content, counted
// against MaxTotalBytes while it is open and given back when it is closed,
// and a file past what may be held at once fails closed.
func TestSpoolHoldsTheArchiveOnDisk(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		maxTotal int64
		read     string
		want     string
		wantErr  error
	}{
		{name: "a file", read: "x.yaml", want: "x: 1\n"},
		{name: "a file kept in part", read: "big", want: strings.Repeat("z", 256), wantErr: ErrTooLarge},
		{name: "a file past MaxTotalBytes held at once", maxTotal: 200, read: "big", wantErr: ErrTreeTooLarge},
		{name: "a small file within it", maxTotal: 200, read: "a/b.txt", want: "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			lim := fuzzLimits
			if tt.maxTotal != 0 {
				lim.MaxTotalBytes = tt.maxTotal
			}
			f := listedFS(t, tarListing, lim)
			if err := f.readTarGz(bytes.NewReader(tarGz(t, githubTar()...))); err != nil {
				t.Fatal(err)
			}
			for p := range tarListing {
				if n := f.listed(p); !n.spooled || n.loaded || n.data != nil {
					t.Fatalf("%s: spooled %v, held in memory %v", p, n.spooled, n.loaded)
				}
			}
			got, err := fs.ReadFile(f, tt.read)
			if string(got) != tt.want || !errors.Is(err, tt.wantErr) {
				t.Fatalf("read %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
			if f.fetched != 0 {
				t.Fatalf("%d bytes still held after the file was closed", f.fetched)
			}
		})
	}
}

// TestRedTeamSpoolKeepsOnlyVerifiedBytes: an archive whose entry for a
// listed path has other content of the same size (written to the spool
// before its id is known), followed by more entries, never lends those
// bytes to the path, nor lets the next entry's bytes land in another's.
func TestRedTeamSpoolKeepsOnlyVerifiedBytes(t *testing.T) {
	t.Parallel()
	tampered := []tarEntry{{name: "t/"}, {name: "t/x.yaml", body: "x: 2\n"}, {name: "t/a/b.txt", body: "b"},
		{name: "t/big", body: strings.Repeat("z", 300)}, {name: "t/l", link: "a/b.txt"}}
	f := listedFS(t, tarListing, fuzzLimits)
	if err := f.readTarGz(bytes.NewReader(tarGz(t, tampered...))); err != nil {
		t.Fatal(err)
	}
	want := "a/b.txt=b big=" + strings.Repeat("z", 256) + " l->a/b.txt"
	if got := filled(t, f); got != want {
		t.Fatalf("spooled %q, want %q", got, want)
	}
}

// TestSpoolLeavesNoFile: the spool is a temporary file removed as soon as
// it is made (it lives while open) and closed by Close, whether the
// archive was read whole, failed half way, or was refused.
func TestSpoolLeavesNoFile(t *testing.T) {
	// Not parallel: TMPDIR is this test's.
	tests := []struct {
		name    string
		archive []byte
		lim     TreeLimits
		wantErr string
	}{
		{name: "read whole", archive: tarGz(t, githubTar()...)},
		{name: "failed half way", archive: tarGz(t, append(githubTar(), tarEntry{name: "t/../x", body: "x"})...),
			wantErr: "invalid path"},
		{name: "over MaxArchiveBytes", archive: tarGz(t, githubTar()...), lim: TreeLimits{MaxArchiveBytes: 1024},
			wantErr: "over 1024 bytes"},
		{name: "not an archive", archive: []byte("not gzip"), wantErr: "decompress"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("TMPDIR", dir)
			lim := fuzzLimits
			lim.MaxArchiveBytes = cmpOr(tt.lim.MaxArchiveBytes, lim.MaxArchiveBytes)
			f := listedFS(t, tarListing, lim)
			err := f.readTarGz(bytes.NewReader(tt.archive))
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			sp := f.spool
			if left, _ := os.ReadDir(dir); len(left) != 0 || (sp == nil) != (tt.name == "not an archive") {
				t.Fatalf("left in TMPDIR while the FS is open: %v (spool %v)", left, sp)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Fatalf("left in TMPDIR after Close: %v", left)
			}
			if sp == nil {
				return
			}
			if _, err := sp.Stat(); !errors.Is(err, os.ErrClosed) {
				t.Fatalf("the spool is still open after Close: %v", err)
			}
			if n := f.listed("a/b.txt"); n.spooled {
				if _, err := f.load(n); err == nil {
					t.Fatal("a spooled file read after Close")
				}
			}
		})
	}
}

func cmpOr(a, b int64) int64 {
	if a != 0 {
		return a
	}
	return b
}
