package ghfaketest

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/ghfake"
)

// answer is one exchange with the fake, as the client saw it.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// noRedirect sees a redirect instead of following it.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// call sends one request to the fake (path absolute, or a URL the fake
// handed out), with token if not empty and header's name, value pairs.
func call(t *testing.T, s *ghfake.Server, method, path, token, body string, header ...string) answer {
	t.Helper()
	u := path
	if !strings.HasPrefix(path, "http") {
		u = strings.TrimSuffix(s.URL(), "/") + path
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "token "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: b}
}

// TestGitAndChecksConform drives the fake through the git tree, blob and
// archive endpoints and the check runs and their annotations, in every
// shape they answer (what the old component checker of ghfake covered and
// more), and makes sure each operation was checked and every exchange was
// clean (Verify fails the test otherwise). The codeload download the
// tarball redirects to is an exception: it is not checked, the 302 is.
func TestGitAndChecksConform(t *testing.T) {
	s := ghfake.New()
	t.Cleanup(s.Close)
	Verify(t, s)
	const (
		tok, appTok, otherTok = "tok-user", "tok-app", "tok-other-app"
		owner, repo           = "acme", "widgets"
	)
	sha := func(c string) string { return strings.Repeat(c, 40) }
	head := sha("a")
	s.AddToken(tok, "alice")
	s.AddAppToken(appTok, 4242, "phasegate")
	s.AddAppToken(otherTok, 99, "other")
	s.AddRepo(owner, repo, "main")
	s.SetBranch(owner, repo, "main", head)
	tree := s.SetTree(owner, repo, head, []ghfake.TreeFile{
		{Path: "README.md", Content: []byte("hello\n")},
		{Path: "a/b/c.txt", Content: []byte("x")},
		{Path: "run.sh", Content: []byte("#!/bin/sh\n"), Mode: ghfake.ModeExecutable},
		{Path: "link", Content: []byte("a/b/c.txt"), Mode: ghfake.ModeSymlink},
		{Path: "sub", Mode: ghfake.ModeSubmodule, Commit: sha("1")},
	})
	s.AddPullRequest(owner, repo, ghfake.PullRequest{Title: "x", Author: "alice", HeadRef: "feature", HeadSHA: head, BaseRef: "main", BaseSHA: sha("b")})
	api := "/repos/" + owner + "/" + repo

	// git: trees (by commit, tree and branch; recursive or not), blobs
	// (JSON and raw), the archive's 302
	gitCalls := []struct{ name, path, accept string }{
		{name: "recursive tree of a commit", path: api + "/git/trees/" + head + "?recursive=1"},
		{name: "tree of a tree", path: api + "/git/trees/" + tree},
		{name: "tree of a branch", path: api + "/git/trees/main?recursive=true"},
		{name: "blob", path: api + "/git/blobs/ce013625030ba8dba906f756967f9e9ca394464a"},
		{name: "raw blob", path: api + "/git/blobs/ce013625030ba8dba906f756967f9e9ca394464a", accept: "application/vnd.github.raw+json"},
		{name: "empty blob", path: api + "/git/blobs/e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"},
	}
	s.SetTreeFiles(owner, repo, sha("e"), map[string]string{"empty": ""})
	for _, c := range gitCalls {
		t.Run(c.name, func(t *testing.T) {
			var h []string
			if c.accept != "" {
				h = []string{"Accept", c.accept}
			}
			a := call(t, s, "GET", c.path, tok, "", h...)
			if a.status != 200 {
				t.Fatalf("%d %s", a.status, a.body)
			}
		})
	}
	t.Run("truncated tree", func(t *testing.T) {
		s.SetTreeTruncation(2, 0)
		defer s.SetTreeTruncation(0, 0)
		a := call(t, s, "GET", api+"/git/trees/"+head+"?recursive=1", tok, "")
		if a.status != 200 || !strings.Contains(string(a.body), `"truncated":true`) {
			t.Fatalf("%d %s", a.status, a.body)
		}
	})
	t.Run("tarball and codeload", func(t *testing.T) {
		a := call(t, s, "GET", api+"/tarball/"+head, tok, "")
		loc := a.header.Get("Location")
		if a.status != 302 || !strings.Contains(loc, "/_codeload/") {
			t.Fatalf("%d, Location %q", a.status, loc)
		}
		dl := call(t, s, "GET", loc, "", "")
		if dl.status != 200 {
			t.Fatalf("codeload: %d %s", dl.status, dl.body)
		}
		if _, err := gzip.NewReader(strings.NewReader(string(dl.body))); err != nil {
			t.Fatalf("codeload's body is not gzip: %v", err)
		}
	})

	// checks: create, update with annotations, read, list (latest, all,
	// filtered, paginated), annotations, and the refusals
	created := call(t, s, "POST", api+"/check-runs", appTok,
		`{"name":"phasegate","head_sha":"`+head+`","status":"in_progress","external_id":"e1","details_url":"https://example.com/d"}`)
	var run struct{ ID int64 }
	if err := json.Unmarshal(created.body, &run); created.status != 201 || err != nil {
		t.Fatalf("create: %d %s", created.status, created.body)
	}
	runPath := fmt.Sprintf("%s/check-runs/%d", api, run.ID)
	checkCalls := []struct {
		name, method, path, token, body string
		want                            int
	}{
		{name: "update with annotations", method: "PATCH", path: runPath, token: appTok, want: 200,
			body: `{"name":"phasegate","conclusion":"failure","output":{"title":"t","summary":"s","text":"x","annotations":[` +
				`{"path":"a/b/c.txt","start_line":1,"end_line":1,"start_column":2,"end_column":3,"annotation_level":"failure","message":"m","title":"T","raw_details":"r"},` +
				`{"path":"README.md","start_line":2,"end_line":4,"annotation_level":"notice","message":"m"}]}}`},
		{name: "a second run, queued, no output", method: "POST", path: api + "/check-runs", token: appTok, want: 201,
			body: `{"name":"phasegate","head_sha":"` + head + `"}`},
		{name: "another app's run, completed", method: "POST", path: api + "/check-runs", token: otherTok, want: 201,
			body: `{"name":"lint","head_sha":"` + head + `","conclusion":"success","started_at":"2024-05-01T12:00:00Z","completed_at":"2024-05-01T12:01:00Z","output":{"title":"ok","summary":"fine"}}`},
		{name: "read", method: "GET", path: runPath, token: tok, want: 200},
		{name: "latest for a sha", method: "GET", path: api + "/commits/" + head + "/check-runs", token: tok, want: 200},
		{name: "latest, named", method: "GET", path: api + "/commits/" + head + "/check-runs?filter=latest&check_name=phasegate", token: tok, want: 200},
		{name: "all for a branch", method: "GET", path: api + "/commits/main/check-runs?filter=all", token: tok, want: 200},
		{name: "all of an app, paginated", method: "GET", path: api + "/commits/main/check-runs?filter=all&app_id=4242&per_page=1&page=2", token: tok, want: 200},
		{name: "completed ones", method: "GET", path: api + "/commits/main/check-runs?status=completed", token: tok, want: 200},
		{name: "none", method: "GET", path: api + "/commits/" + sha("f") + "/check-runs", token: tok, want: 200},
		{name: "annotations", method: "GET", path: runPath + "/annotations", token: tok, want: 200},
		{name: "annotations, paginated", method: "GET", path: runPath + "/annotations?per_page=1&page=2", token: tok, want: 200},
		{name: "403: another app updates", method: "PATCH", path: runPath, token: otherTok, want: 403,
			body: `{"name":"phasegate","status":"queued"}`},
		{name: "403: a user creates", method: "POST", path: api + "/check-runs", token: tok, want: 403,
			body: `{"name":"phasegate","head_sha":"` + head + `"}`},
		{name: "422: not a sha", method: "POST", path: api + "/check-runs", token: appTok, want: 422,
			body: `{"name":"phasegate","head_sha":"main"}`},
		{name: "422: columns across lines", method: "PATCH", path: runPath, token: appTok, want: 422,
			body: `{"output":{"title":"t","summary":"s","annotations":[{"path":"a","start_line":1,"end_line":2,"start_column":1,"end_column":3,"annotation_level":"notice","message":"m"}]}}`},
		{name: "404: no such run", method: "GET", path: api + "/check-runs/1", token: tok, want: 404},
	}
	for _, c := range checkCalls {
		t.Run(c.name, func(t *testing.T) {
			if a := call(t, s, c.method, c.path, c.token, c.body); a.status != c.want {
				t.Fatalf("%d %s, want %d", a.status, a.body, c.want)
			}
		})
	}

	seen := Seen()
	for _, op := range []string{
		"GET /repos/{owner}/{repo}/git/trees/{tree_sha}",
		"GET /repos/{owner}/{repo}/git/blobs/{file_sha}",
		"GET /repos/{owner}/{repo}/tarball/{ref}",
		"POST /repos/{owner}/{repo}/check-runs",
		"GET /repos/{owner}/{repo}/check-runs/{check_run_id}",
		"PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}",
		"GET /repos/{owner}/{repo}/commits/{ref}/check-runs",
		"GET /repos/{owner}/{repo}/check-runs/{check_run_id}/annotations",
	} {
		if seen[op] == 0 {
			t.Errorf("%s was never checked", op)
		}
	}
}
