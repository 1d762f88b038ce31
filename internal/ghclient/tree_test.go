package ghclient

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/ghfake"
)

var (
	headSHA = strings.Repeat("a", 40)
	subSHA  = strings.Repeat("1", 40)
)

// commitFiles is the file set of headSHA in the tree tests.
func commitFiles() []ghfake.TreeFile {
	return []ghfake.TreeFile{
		{Path: "README.md", Content: []byte("hello\n")},
		{Path: ".pace/plan.yaml", Content: []byte("phase: plan\n")},
		{Path: ".pace/deep/x/y.json", Content: []byte(`{"a":1}`)},
		{Path: "run.sh", Content: []byte("#!/bin/sh\n"), Mode: ghfake.ModeExecutable},
		{Path: "big.bin", Content: []byte(strings.Repeat("B", 5000))},
		{Path: "link", Content: []byte(".pace/plan.yaml"), Mode: ghfake.ModeSymlink},
		{Path: "dirlink", Content: []byte(".pace/deep"), Mode: ghfake.ModeSymlink},
		{Path: ".pace/up", Content: []byte("../README.md"), Mode: ghfake.ModeSymlink},
		{Path: "escape", Content: []byte("../../etc/passwd"), Mode: ghfake.ModeSymlink},
		{Path: "above", Content: []byte("../README.md"), Mode: ghfake.ModeSymlink},
		{Path: "abs", Content: []byte("/etc/passwd"), Mode: ghfake.ModeSymlink},
		{Path: "loop1", Content: []byte("loop2"), Mode: ghfake.ModeSymlink},
		{Path: "loop2", Content: []byte("loop1"), Mode: ghfake.ModeSymlink},
		{Path: "vendor/sub", Mode: ghfake.ModeSubmodule, Commit: subSHA},
	}
}

func treeEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t, Options{BackoffBase: 1, BackoffMax: 1})
	e.fake.SetTree(owner, repo, headSHA, commitFiles())
	return e
}

func TestTree(t *testing.T) {
	tests := []struct {
		name          string
		sha           string
		truncateAt    int
		wantEntries   int
		wantTruncated bool
		wantNotFound  bool
	}{
		{name: "a commit", sha: headSHA, wantEntries: 18},
		{name: "truncated", sha: headSHA, truncateAt: 4, wantEntries: 4, wantTruncated: true},
		{name: "unknown", sha: strings.Repeat("f", 40), wantNotFound: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := treeEnv(t)
			e.fake.SetTreeTruncation(tt.truncateAt, 0)
			tr, err := e.c.Tree(ctxT(t), owner, repo, tt.sha)
			if tt.wantNotFound {
				if !IsNotFound(err) {
					t.Fatalf("err = %v, want a 404", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Entries) != tt.wantEntries || tr.Truncated != tt.wantTruncated || len(tr.SHA) != 40 {
				t.Fatalf("%d entries, truncated %v, sha %q", len(tr.Entries), tr.Truncated, tr.SHA)
			}
			byPath := map[string]TreeEntry{}
			for _, en := range tr.Entries {
				byPath[en.Path] = en
			}
			if !tt.wantTruncated {
				if en := byPath["vendor/sub"]; en.Type != "commit" || en.Mode != ModeSubmodule || en.SHA != subSHA {
					t.Errorf("submodule %+v", en)
				}
				if en := byPath["run.sh"]; en.Mode != ModeExecutable || en.Size != 10 {
					t.Errorf("run.sh %+v", en)
				}
				if en := byPath[".pace"]; en.Type != "tree" || en.Mode != ModeDir {
					t.Errorf(".pace %+v", en)
				}
			}
		})
	}
}

func TestArchive(t *testing.T) {
	tests := []struct {
		name         string
		sha          string
		max          int64
		wantEntries  int
		wantTooLarge bool
		wantNotFound bool
	}{
		{name: "a commit", sha: headSHA, max: 1 << 20, wantEntries: 20}, // the pax header, the top directory, 18 entries
		{name: "over the limit", sha: headSHA, max: 100, wantTooLarge: true},
		{name: "unknown", sha: strings.Repeat("f", 40), max: 1 << 20, wantNotFound: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := treeEnv(t)
			rc, err := e.c.Archive(ctxT(t), owner, repo, tt.sha, tt.max)
			if tt.wantNotFound {
				if !IsNotFound(err) {
					t.Fatalf("err = %v, want a 404", err)
				}
				return
			}
			if err != nil {
				if tt.wantTooLarge && errors.Is(err, ErrTooLarge) {
					return
				}
				t.Fatal(err)
			}
			defer rc.Close()
			n, err := countTarEntries(rc)
			if tt.wantTooLarge {
				if !errors.Is(err, ErrTooLarge) {
					t.Fatalf("err = %v, want ErrTooLarge", err)
				}
				return
			}
			if err != nil || n != tt.wantEntries {
				t.Fatalf("%d entries, %v", n, err)
			}
			// The download did not go through the API's accounting: the
			// redirect did.
			if got := statuses(e.fake, "GET", "/repos/acme/widgets/tarball/"); len(got) != 1 || got[0] != http.StatusFound {
				t.Fatalf("tarball calls %v", got)
			}
		})
	}
}

func countTarEntries(r io.Reader) (int, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return 0, err
	}
	tr := tar.NewReader(zr)
	n := 0
	for {
		if _, err := tr.Next(); err == io.EOF {
			return n, nil
		} else if err != nil {
			return n, err
		}
		n++
	}
}

// recorder records the requests it is sent.
type recorder struct{ got []*http.Request }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.got = append(r.got, req)
	return &http.Response{StatusCode: 200, Body: http.NoBody, Header: http.Header{}, Request: req}, nil
}

func TestTokenOnlyToTheAPIHost(t *testing.T) {
	tests := []struct {
		name, url string
		wantAuth  bool
	}{
		{name: "the api", url: "https://api.github.com/repos/acme/widgets", wantAuth: true},
		{name: "codeload", url: "https://codeload.github.com/acme/widgets/legacy.tar.gz/x?token=t"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			at := &authTransport{next: rec, header: "token secret", host: "api.github.com"}
			req, _ := http.NewRequest("GET", tt.url, nil)
			if _, err := at.RoundTrip(req); err != nil {
				t.Fatal(err)
			}
			if got := rec.got[0].Header.Get("Authorization") != ""; got != tt.wantAuth {
				t.Fatalf("authorization sent: %v", got)
			}
		})
	}
}

func TestDecodeTree(t *testing.T) {
	t.Parallel()
	entry := `{"path":"a/b.yaml","mode":"100644","type":"blob","sha":"` + strings.Repeat("a", 40) + `","size":7,"url":"https://x"}`
	tests := []struct {
		name, body  string
		max         int
		wantEntries int
		wantErr     error
		wantAnyErr  bool
	}{
		{name: "github's shape", body: `{"sha":"t","url":"u","tree":[` + entry + `,` + entry + `],"truncated":true}`, max: 2, wantEntries: 2},
		{name: "over max entries", body: `{"tree":[` + entry + `,` + entry + `,` + entry + `]}`, max: 2, wantErr: ErrTreeTooLarge},
		{name: "not an object", body: `[1]`, max: 2, wantAnyErr: true},
		{name: "an entry of the wrong shape", body: `{"tree":[{"path":7}]}`, max: 2, wantAnyErr: true},
		{name: "cut short", body: `{"tree":[` + entry, max: 2, wantAnyErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr, err := decodeTree(strings.NewReader(tt.body), tt.max)
			if tt.wantErr != nil || tt.wantAnyErr {
				if err == nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			want := TreeEntry{Path: "a/b.yaml", Mode: ModeFile, Type: "blob", SHA: strings.Repeat("a", 40), Size: 7}
			if err != nil || len(tr.Entries) != tt.wantEntries || tr.Entries[0] != want || tr.SHA != "t" || !tr.Truncated {
				t.Fatalf("%+v, %v", tr, err)
			}
		})
	}
}

// FuzzDecodeTree feeds untrusted listings to the streaming decoder: it
// never panics and never keeps more than max entries.
func FuzzDecodeTree(f *testing.F) {
	f.Add([]byte(`{"sha":"t","tree":[{"path":"a","mode":"100644","type":"blob","sha":"s","size":1}],"truncated":false}`))
	f.Add([]byte(`{"tree":[{},{},{},{}]}`))
	f.Add([]byte(`{"tree":{"a":1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, _ := decodeTree(bytes.NewReader(data), 3)
		if len(tr.Entries) > 3 {
			t.Fatalf("%d entries kept, the limit is 3", len(tr.Entries))
		}
	})
}
