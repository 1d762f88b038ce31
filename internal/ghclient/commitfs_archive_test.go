package ghclient

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"
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
