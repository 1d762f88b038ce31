package ghfake

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

var (
	commitA = strings.Repeat("a", 40)
	subSHA  = strings.Repeat("1", 40)
)

// gitFiles is a file set whose tree `git write-tree` hashes to
// 3c8a30049253f0f795ddb3ad78600e35624109e6 (checked with git 2.x: the
// same files, the symlink made with ln -s, the submodule with
// update-index --cacheinfo 160000).
var gitFiles = []TreeFile{
	{Path: "README.md", Content: []byte("hello\n")},
	{Path: "a/b/c.txt", Content: []byte("x")},
	{Path: "run.sh", Content: []byte("#!/bin/sh\n"), Mode: ModeExecutable},
	{Path: "link", Content: []byte("a/b/c.txt"), Mode: ModeSymlink},
	{Path: "a.txt", Content: []byte("y")},
	{Path: "sub", Mode: ModeSubmodule, Commit: subSHA},
}

type treeJSON struct {
	SHA  string `json:"sha"`
	Tree []struct {
		Path string `json:"path"`
		Mode string `json:"mode"`
		Type string `json:"type"`
		SHA  string `json:"sha"`
		Size *int   `json:"size"`
	} `json:"tree"`
	Truncated bool `json:"truncated"`
}

func (tj treeJSON) lines() string {
	var b strings.Builder
	for _, e := range tj.Tree {
		b.WriteString(e.Mode + " " + e.Type + " " + e.SHA + " " + e.Path + "\n")
	}
	return b.String()
}

func TestSetTreeHashesLikeGit(t *testing.T) {
	s := newTestServer(t)
	if got := s.SetTree("acme", "widgets", commitA, gitFiles); got != "3c8a30049253f0f795ddb3ad78600e35624109e6" {
		t.Fatalf("tree sha %s", got)
	}
}

func TestGetTree(t *testing.T) {
	s := newTestServer(t)
	root := s.SetTree("acme", "widgets", commitA, gitFiles)
	s.SetBranch("acme", "widgets", "main", commitA)
	// `git ls-tree -r -t` of the same tree.
	full := `100644 blob ce013625030ba8dba906f756967f9e9ca394464a README.md
100644 blob e25f1814e51579d5f55c0f1fe0135ddb28a47f4a a.txt
040000 tree 0cbd0ff03da026d3febf7524e0ae162812a220f0 a
040000 tree e2b0c41b0f7802e3db16736400d84a86ca333494 a/b
100644 blob c1b0730e0133447badcfd47fd144e254807b06e1 a/b/c.txt
120000 blob ba5e661deffee8068c6b5e8152db7462af285505 link
100755 blob 1a2485251c33a70432394c93fb89330ef214bfc9 run.sh
160000 commit 1111111111111111111111111111111111111111 sub
`
	tests := []struct {
		name          string
		path          string
		truncate      int
		wantStatus    int
		wantLines     string
		wantTruncated bool
	}{
		{name: "commit, recursive", path: "git/trees/" + commitA + "?recursive=1", wantStatus: 200, wantLines: full},
		{name: "branch, recursive", path: "git/trees/main?recursive=true", wantStatus: 200, wantLines: full},
		{name: "tree sha, recursive", path: "git/trees/" + root + "?recursive=0", wantStatus: 200, wantLines: full},
		{name: "one level", path: "git/trees/" + commitA, wantStatus: 200,
			wantLines: strings.Join(pick(full, 0, 1, 2, 5, 6, 7), "")},
		{name: "a subtree", path: "git/trees/0cbd0ff03da026d3febf7524e0ae162812a220f0", wantStatus: 200,
			wantLines: "040000 tree e2b0c41b0f7802e3db16736400d84a86ca333494 b\n"},
		{name: "truncated", path: "git/trees/" + commitA + "?recursive=1", truncate: 3, wantStatus: 200,
			wantLines: strings.Join(pick(full, 0, 1, 2), ""), wantTruncated: true},
		{name: "one level is not cut at the recursive listing's limit", path: "git/trees/" + commitA, truncate: 3, wantStatus: 200,
			wantLines: strings.Join(pick(full, 0, 1, 2, 5, 6, 7), "")},
		{name: "unknown sha", path: "git/trees/" + strings.Repeat("f", 40), wantStatus: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.SetTreeTruncation(tt.truncate, 0)
			a := do(t, s, "GET", "/repos/acme/widgets/"+tt.path, tok, "")
			if a.status != tt.wantStatus {
				t.Fatalf("status %d: %s", a.status, a.body)
			}
			if a.status != 200 {
				return
			}
			var tj treeJSON
			if err := json.Unmarshal(a.body, &tj); err != nil {
				t.Fatal(err)
			}
			if got := tj.lines(); got != tt.wantLines || tj.Truncated != tt.wantTruncated {
				t.Fatalf("tree (truncated %v):\n%s\nwant (truncated %v):\n%s", tj.Truncated, got, tt.wantTruncated, tt.wantLines)
			}
		})
	}
}

func pick(lines string, idx ...int) []string {
	all := strings.SplitAfter(lines, "\n")
	var out []string
	for _, i := range idx {
		out = append(out, all[i])
	}
	return out
}

func TestTreeTruncatesByBytes(t *testing.T) {
	s := newTestServer(t)
	s.SetTree("acme", "widgets", commitA, gitFiles)
	s.SetTreeTruncation(0, 400)
	var tj treeJSON
	a := do(t, s, "GET", "/repos/acme/widgets/git/trees/"+commitA+"?recursive=1", tok, "")
	if err := json.Unmarshal(a.body, &tj); err != nil {
		t.Fatal(err)
	}
	if !tj.Truncated || len(tj.Tree) == 0 || len(tj.Tree) >= 8 {
		t.Fatalf("truncated %v with %d entries", tj.Truncated, len(tj.Tree))
	}
}

func TestGetBlobOfTree(t *testing.T) {
	s := newTestServer(t)
	s.SetTree("acme", "widgets", commitA, gitFiles)
	tests := []struct {
		name, sha, accept string
		wantStatus        int
		want              string
	}{
		{name: "base64", sha: "ce013625030ba8dba906f756967f9e9ca394464a", wantStatus: 200, want: "hello\n"},
		{name: "raw", sha: "ce013625030ba8dba906f756967f9e9ca394464a", accept: "application/vnd.github.raw+json", wantStatus: 200, want: "hello\n"},
		{name: "a symlink's target", sha: "ba5e661deffee8068c6b5e8152db7462af285505", wantStatus: 200, want: "a/b/c.txt"},
		{name: "unknown", sha: strings.Repeat("e", 40), wantStatus: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hdr []string
			if tt.accept != "" {
				hdr = []string{"Accept", tt.accept}
			}
			a := do(t, s, "GET", "/repos/acme/widgets/git/blobs/"+tt.sha, tok, "", hdr...)
			if a.status != tt.wantStatus || a.status != 200 {
				if a.status != tt.wantStatus {
					t.Fatalf("status %d: %s", a.status, a.body)
				}
				return
			}
			got := string(a.body)
			if tt.accept == "" {
				var b struct {
					Content, Encoding string
					Size              int
				}
				if err := json.Unmarshal(a.body, &b); err != nil {
					t.Fatal(err)
				}
				raw, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(b.Content, "\n", ""))
				if err != nil || b.Encoding != "base64" || b.Size != len(raw) {
					t.Fatalf("blob %+v: %v", b, err)
				}
				got = string(raw)
			}
			if got != tt.want {
				t.Fatalf("content %q, want %q", got, tt.want)
			}
		})
	}
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func TestTarball(t *testing.T) {
	s := newTestServer(t)
	s.SetTree("acme", "widgets", commitA, gitFiles)
	req, _ := http.NewRequest("GET", s.URL()+"repos/acme/widgets/tarball/"+commitA, nil)
	req.Header.Set("Authorization", "token "+tok)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != 302 || !strings.Contains(loc, "/_codeload/acme/widgets/legacy.tar.gz/"+commitA+"?token=") {
		t.Fatalf("%d, Location %q", resp.StatusCode, loc)
	}
	got := archiveEntries(t, s, loc)
	want := []string{
		"0 acme-widgets-aaaaaaa/README.md", "0 acme-widgets-aaaaaaa/a.txt", "5 acme-widgets-aaaaaaa/a/",
		"5 acme-widgets-aaaaaaa/a/b/", "0 acme-widgets-aaaaaaa/a/b/c.txt", "2 acme-widgets-aaaaaaa/link -> a/b/c.txt",
		"0 acme-widgets-aaaaaaa/run.sh", "5 acme-widgets-aaaaaaa/sub/",
	}
	// git archive's pax global header, then the top directory.
	if len(got) != len(want)+2 || got[0] != "g pax_global_header" || got[1] != "5 acme-widgets-aaaaaaa/" ||
		strings.Join(got[2:], "\n") != strings.Join(want, "\n") {
		t.Fatalf("entries:\n%s", strings.Join(got, "\n"))
	}
	if a := do(t, s, "GET", strings.TrimPrefix(loc, strings.TrimSuffix(s.URL(), "/"))+"x", "", ""); a.status != 404 {
		t.Fatalf("a wrong codeload token: %d", a.status)
	}
	if a := do(t, s, "GET", "/repos/acme/widgets/tarball/"+strings.Repeat("f", 40), tok, ""); a.status != 404 {
		t.Fatalf("tarball of an unknown commit: %d", a.status)
	}
}

// archiveEntries downloads the archive at codeload link loc and lists its
// entries as "<type> <name>[ -> <target>][ = <content>]" (contents with
// withContent).
func archiveEntries(t *testing.T, s *Server, loc string, withContent ...bool) []string {
	t.Helper()
	a := do(t, s, "GET", strings.TrimPrefix(loc, strings.TrimSuffix(s.URL(), "/")), "", "")
	if a.status != 200 {
		t.Fatalf("codeload: %d %s", a.status, a.body)
	}
	zr, err := gzip.NewReader(bytes.NewReader(a.body))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var got []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		line := string(h.Typeflag) + " " + h.Name
		if h.Typeflag == tar.TypeSymlink {
			line += " -> " + h.Linkname
		}
		if h.Typeflag == tar.TypeReg && len(withContent) > 0 {
			b, _ := io.ReadAll(tr)
			line += " = " + string(b)
		}
		got = append(got, line)
	}
}

// TestTarballObeysGitattributes: the archive is git archive's, which obeys
// the archived commit's own .gitattributes, root and nested (the
// expectations were checked against git 2.39's git archive of the same
// commits).
func TestTarballObeysGitattributes(t *testing.T) {
	t.Parallel()
	base := []TreeFile{
		{Path: ".pace/day-1/sentinel-report.yaml", Content: []byte("verdict: hold\n")},
		{Path: ".pace/day-1/plan.yaml", Content: []byte("id: $Format:%H$ $Format:%h %% %an$\n")},
		{Path: "docs/a.md", Content: []byte("a")},
		{Path: "docs/sub/b.md", Content: []byte("b")},
		{Path: "keep.txt", Content: []byte("$Format:%H$")},
	}
	tests := []struct {
		name  string
		attrs map[string]string // .gitattributes path → content
		want  string
	}{
		{name: "none", want: ".pace/ .pace/day-1/ .pace/day-1/plan.yaml = id: $Format:%H$ $Format:%h %% %an$\n .pace/day-1/sentinel-report.yaml = verdict: hold\n docs/ docs/a.md = a docs/sub/ docs/sub/b.md = b keep.txt = $Format:%H$"},
		{name: "export-ignore a file, export-subst another",
			attrs: map[string]string{".gitattributes": ".pace/day-1/sentinel-report.yaml export-ignore\n*.yaml export-subst\n"},
			want:  ".gitattributes .pace/ .pace/day-1/ .pace/day-1/plan.yaml = id: " + commitA + " aaaaaaa % \n docs/ docs/a.md = a docs/sub/ docs/sub/b.md = b keep.txt = $Format:%H$"},
		{name: "a basename pattern at any depth, a directory, unset deeper",
			attrs: map[string]string{".gitattributes": "sentinel-report.yaml export-ignore\ndocs export-ignore\n", ".pace/.gitattributes": "day-1/sentinel-report.yaml -export-ignore\n"},
			want:  ".gitattributes .pace/ .pace/.gitattributes .pace/day-1/ .pace/day-1/plan.yaml = id: $Format:%H$ $Format:%h %% %an$\n .pace/day-1/sentinel-report.yaml = verdict: hold\n keep.txt = $Format:%H$"},
		{name: "a nested file, globs, a directory pattern, itself",
			attrs: map[string]string{".pace/.gitattributes": "*/sentinel-* export-ignore\n.gitattributes export-ignore\n", ".gitattributes": "sub/ export-ignore\n/keep.txt export-subst\n"},
			want:  ".gitattributes .pace/ .pace/day-1/ .pace/day-1/plan.yaml = id: $Format:%H$ $Format:%h %% %an$\n docs/ docs/a.md = a keep.txt = " + commitA},
		{name: "double star",
			attrs: map[string]string{".gitattributes": "docs/** export-ignore\n**/plan.yaml export-ignore\n"},
			want:  ".gitattributes .pace/ .pace/day-1/ .pace/day-1/sentinel-report.yaml = verdict: hold\n docs/ keep.txt = $Format:%H$"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newTestServer(t)
			files := append([]TreeFile(nil), base...)
			for p, c := range tt.attrs {
				files = append(files, TreeFile{Path: p, Content: []byte(c)})
			}
			s.SetTree("acme", "widgets", commitA, files)
			req, _ := http.NewRequest("GET", s.URL()+"repos/acme/widgets/tarball/"+commitA, nil)
			req.Header.Set("Authorization", "token "+tok)
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			var got []string
			for _, e := range archiveEntries(t, s, resp.Header.Get("Location"), true)[2:] {
				e = strings.TrimPrefix(e[2:], "acme-widgets-aaaaaaa/")
				if strings.Contains(e, ".gitattributes") {
					e, _, _ = strings.Cut(e, " =")
				}
				got = append(got, e)
			}
			if g := strings.Join(got, " "); g != tt.want {
				t.Fatalf("archive:\n%s\nwant:\n%s", g, tt.want)
			}
		})
	}
}
