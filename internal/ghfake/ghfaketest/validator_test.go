package ghfaketest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/testutil"
)

func TestMain(m *testing.M) { testutil.Exit(Main(m, os.Stderr)) }

// load is a validator of the subset with nothing remembered yet. The
// subset is read once for all the tests (Load takes most of a second
// under -race); each gets its own memos.
func load(t *testing.T) *Validator {
	t.Helper()
	v, err := loadOnce()
	if err != nil {
		t.Fatal(err)
	}
	return v.forgetful()
}

var loadOnce = sync.OnceValues(Load)

// TestSubsetHasEveryOperation: the subset is a valid description (Load
// validates it) and holds every operation the script lists, the ones
// being added in parallel included.
func TestSubsetHasEveryOperation(t *testing.T) {
	ops := load(t).Operations()
	for _, want := range []string{
		"GET /repos/{owner}/{repo}/activity",
		"GET /repos/{owner}/{repo}/contents/{path}",
		"POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
		"POST /app/installations/{installation_id}/access_tokens",
		"GET /repos/{owner}/{repo}/git/trees/{tree_sha}",
		"GET /repos/{owner}/{repo}/git/blobs/{file_sha}",
		"GET /repos/{owner}/{repo}/tarball/{ref}",
		"POST /repos/{owner}/{repo}/check-runs",
		"PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}",
		"GET /repos/{owner}/{repo}/check-runs/{check_run_id}",
		"GET /repos/{owner}/{repo}/commits/{ref}/check-runs",
		"GET /repos/{owner}/{repo}/check-runs/{check_run_id}/annotations",
		"POST /repos/{owner}/{repo}/actions/runs/{run_id}/deployment_protection_rule",
		"GET /repos/{owner}/{repo}/actions/runs",
		"GET /repos/{owner}/{repo}/actions/runs/{run_id}/pending_deployments",
	} {
		if !slices.Contains(ops, want) {
			t.Errorf("the subset lacks %s", want)
		}
	}
}

const (
	sha      = "0123456789abcdef0123456789abcdef01234567"
	activity = `{"id":1,"node_id":"RA_1","before":"` + sha + `","after":"` + sha + `","ref":"refs/heads/main","timestamp":"2024-05-01T12:00:00Z","activity_type":"push","actor":null}`
	user     = `{"login":"x","id":1,"node_id":"U_1","avatar_url":"https://a/x","gravatar_id":"","url":"https://a/x","html_url":"https://a/x","followers_url":"https://a/x","following_url":"https://a/x","gists_url":"https://a/x","starred_url":"https://a/x","subscriptions_url":"https://a/x","organizations_url":"https://a/x","repos_url":"https://a/x","events_url":"https://a/x","received_events_url":"https://a/x","type":"User","site_admin":false}`
)

// TestCheckCatches makes sure the validator rejects what the description
// forbids, so that a clean run means something.
func TestCheckCatches(t *testing.T) {
	v := load(t)
	tests := []struct {
		name           string
		method, target string
		reqHeader      []string
		reqBody        string
		status         int
		respHeader     []string
		body           string
		want           string // a substring of the violations; "" for none
	}{
		{name: "valid activity", method: "GET", target: "/repos/o/r/activity", status: 200, body: "[" + activity + "]"},
		{name: "activity under /api/v3", method: "GET", target: "/api/v3/repos/o/r/activity", status: 200, body: "[" + activity + "]"},
		{name: "missing required key", method: "GET", target: "/repos/o/r/activity", status: 200,
			body: "[" + strings.Replace(activity, `"node_id":"RA_1",`, "", 1) + "]", want: `/0/node_id: property "node_id" is missing`},
		{name: "wrong type", method: "GET", target: "/repos/o/r/activity", status: 200,
			body: "[" + strings.Replace(activity, `"id":1`, `"id":"1"`, 1) + "]", want: "/0/id: value must be an integer"},
		{name: "not in enum", method: "GET", target: "/repos/o/r/activity", status: 200,
			body: "[" + strings.Replace(activity, `"push"`, `"pushed"`, 1) + "]", want: "/0/activity_type: value is not one of the allowed values"},
		{name: "bad date-time", method: "GET", target: "/repos/o/r/activity", status: 200,
			body: "[" + strings.Replace(activity, "2024-05-01T12:00:00Z", "yesterday", 1) + "]", want: "/0/timestamp"},
		{name: "incomplete user", method: "GET", target: "/repos/o/r/activity", status: 200,
			body: "[" + strings.Replace(activity, `"actor":null`, `"actor":{"login":"x"}`, 1) + "]", want: `/0/actor/avatar_url: property "avatar_url" is missing`},
		{name: "complete user", method: "GET", target: "/repos/o/r/activity", status: 200,
			body: "[" + strings.Replace(activity, `"actor":null`, `"actor":`+user, 1) + "]"},
		{name: "null where not nullable", method: "GET", target: "/repos/o/r/activity", status: 200,
			body: "[" + strings.Replace(activity, `"ref":"refs/heads/main"`, `"ref":null`, 1) + "]", want: "/0/ref: Value is not nullable"},
		{name: "oneOf with no match", method: "GET", target: "/repos/o/r/commits/" + sha, status: 200,
			body: `{"url":"https://u","sha":"s","node_id":"n","html_url":"https://u","comments_url":"https://u","parents":[],"committer":null,"author":{"login":"x"},"commit":{"url":"https://u","author":null,"committer":null,"comment_count":0,"message":"m","tree":{"sha":"t","url":"https://u"}}}`,
			want: "/author: "},
		{name: "sha length", method: "GET", target: "/repos/o/r/git/ref/heads/x", status: 200,
			body: `{"ref":"refs/heads/x","node_id":"n","url":"https://u","object":{"type":"commit","sha":"abc","url":"https://u"}}`,
			want: "/object/sha: minimum string length is 40"},
		{name: "bad query parameter", method: "GET", target: "/repos/o/r/activity?time_period=decade", status: 200, body: "[]",
			want: "request parameter time_period in query: /: value is not one of the allowed values"},
		{name: "bad request body", method: "POST", target: "/repos/o/r/statuses/" + sha, reqHeader: []string{"Content-Type", "application/json"},
			reqBody: `{"state":"fine"}`, status: 201, body: "{}", want: "request: /state: value is not one of the allowed values"},
		{name: "a body where none is taken", method: "DELETE", target: "/repos/o/r/issues/1/labels/bug", reqBody: `{}`, status: 200, body: "[]",
			want: "a body, and the operation takes none"},
		{name: "an operation not in the subset", method: "GET", target: "/repos/o/r/releases", status: 200, body: "[]",
			want: "phasegate uses an operation not in testdata"},
		{name: "an undocumented status", method: "GET", target: "/repos/o/r/activity", status: 418, body: "{}",
			want: "status 418 is not documented"},
		{name: "a server error with GitHub's error JSON", method: "GET", target: "/repos/o/r/activity", status: 502,
			body: `{"message":"Server Error","documentation_url":"https://docs.github.com/rest"}`},
		{name: "a server error that is not JSON", method: "GET", target: "/repos/o/r/activity", status: 502, body: "oops",
			want: "body is not JSON"},
		{name: "a 304 without a body", method: "GET", target: "/repos/o/r/activity", status: 304},
		{name: "a 304 with a body", method: "GET", target: "/repos/o/r/activity", status: 304, body: "[]", want: "304 with a body"},
		{name: "GraphQL is not REST", method: "POST", target: "/graphql", reqBody: `{"query":"{}"}`, status: 200, body: `{"data":{}}`},
		{name: "raw blob", method: "GET", target: "/repos/o/r/git/blobs/" + sha, reqHeader: []string{"Accept", "application/vnd.github.v3.raw"},
			status: 200, body: "bytes"},
		{name: "contents of a nested path", method: "GET", target: "/repos/o/r/contents/a/b/c.txt", status: 200, body: "[]",
			want: ""},
		{name: "tarball's redirect", method: "GET", target: "/repos/o/r/tarball/" + sha, status: 302,
			respHeader: []string{"Location", "https://codeload.github.com/o/r/legacy.tar.gz/" + sha}},
		{name: "tarball's redirect without a Location", method: "GET", target: "/repos/o/r/tarball/" + sha, status: 302,
			want: "a 302 without a Location"},
		{name: "tarball answered in place", method: "GET", target: "/repos/o/r/tarball/" + sha, status: 200, body: "{}",
			want: "status 200 is not documented"},
		{name: "the fake's codeload (exception)", method: "GET", target: "/_codeload/o/r/legacy.tar.gz/" + sha + "?token=CL1", status: 200,
			body: "\x1f\x8b not JSON"},
		{name: "another path under the fake's codeload", method: "GET", target: "/_codeload/o/r/legacy.zip/" + sha, status: 200,
			body: "PK", want: "phasegate uses an operation not in testdata"},
		{name: "created in search syntax (exception)", method: "GET", target: "/repos/o/r/actions/runs?status=waiting&created=%3E%3D2024-05-01T12%3A00%3A00Z",
			status: 200, body: `{"total_count":0,"workflow_runs":[]}`},
		{name: "a status GitHub does not know", method: "GET", target: "/repos/o/r/actions/runs?status=paused",
			status: 200, body: `{"total_count":0,"workflow_runs":[]}`, want: "request parameter status in query"},
		{name: "a run without its repository", method: "GET", target: "/repos/o/r/actions/runs",
			status: 200, body: `{"total_count":1,"workflow_runs":[{"id":1}]}`, want: `/workflow_runs/0/repository: property "repository" is missing`},
		{name: "a pending deployment without its environment", method: "GET", target: "/repos/o/r/actions/runs/1/pending_deployments",
			status: 200, body: `[{"wait_timer":0,"wait_timer_started_at":null,"current_user_can_approve":false,"reviewers":[]}]`, want: `/0/environment: property "environment" is missing`},
		{name: "add-labels with an array (exception)", method: "POST", target: "/repos/o/r/issues/1/labels",
			reqHeader: []string{"Content-Type", "application/json"}, reqBody: `["bug"]`, status: 200, body: "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rd io.Reader
			if tt.reqBody != "" {
				rd = strings.NewReader(tt.reqBody)
			}
			r := httptest.NewRequest(tt.method, "http://127.0.0.1:1"+tt.target, rd)
			for i := 0; i+1 < len(tt.reqHeader); i += 2 {
				r.Header.Set(tt.reqHeader[i], tt.reqHeader[i+1])
			}
			h := http.Header{}
			if tt.body != "" && tt.status != 304 {
				h.Set("Content-Type", "application/json; charset=utf-8")
			}
			for i := 0; i+1 < len(tt.respHeader); i += 2 {
				h.Set(tt.respHeader[i], tt.respHeader[i+1])
			}
			_, got := v.Check(Exchange{Request: r, RequestBody: []byte(tt.reqBody), Status: tt.status, Header: h, Body: []byte(tt.body)})
			all := strings.Join(got, "\n")
			if tt.want == "" && all != "" || tt.want != "" && !strings.Contains(all, tt.want) {
				t.Fatalf("violations:\n%s\nwant %q", all, tt.want)
			}
		})
	}
}

// TestFakeAnswersConform drives the fake through what the old component
// checker covered — activity, comparisons of every status, statuses, git
// refs, a 422 — and more, and makes sure each was checked and clean.
func TestFakeAnswersConform(t *testing.T) {
	s, sha := widgets(t)
	const tok = "tok-test"
	s.AddActivity("acme", "widgets", ghfake.Activity{Type: "pr_merge", Ref: "main", Before: sha("c"), After: sha("e"), Actor: "carol"})
	s.AddCommit("acme", "widgets", ghfake.Commit{SHA: sha("a"), Author: "alice", Message: "base", Verified: true,
		Files: []ghfake.File{{Filename: "a.txt", Status: "added"}}})
	files := []ghfake.File{{Filename: "a.txt", Status: "added"}, {Filename: "b.txt", Status: "renamed", PreviousFilename: "old.txt"}}
	for _, st := range []string{"ahead", "behind", "diverged", "identical"} {
		s.SetComparison("acme", "widgets", "main", st, ghfake.Comparison{Status: st, Files: files})
	}
	s.SetFile("acme", "widgets", "main", "docs/a.md", []byte("# a\n"))
	pr := s.AddPullRequest("acme", "widgets", ghfake.PullRequest{Title: "x", Author: "alice", HeadRef: "feature", HeadSHA: sha("d"), BaseRef: "main", BaseSHA: sha("c")})
	s.LabelIssue("acme", "widgets", pr, "phasegate:pending")
	issue := s.AddIssue("acme", "widgets", "t", "b", "alice")
	s.AddComment("acme", "widgets", issue, "alice", "hello")
	s.SetPermission("acme", "widgets", "alice", "maintain")
	calls := []struct{ method, path, body string }{
		{"POST", "/repos/acme/widgets/statuses/" + sha("c"), `{"state":"success","context":"ci"}`},
		{"POST", "/repos/acme/widgets/statuses/" + sha("c"), `{"state":"failure","context":"lint","description":"no"}`},
		{"GET", "/repos/acme/widgets/activity", ""},
		{"GET", "/repos/acme/widgets/activity?ref=main&per_page=1", ""},
		{"GET", "/repos/acme/widgets/compare/main...ahead", ""},
		{"GET", "/repos/acme/widgets/compare/main...behind", ""},
		{"GET", "/repos/acme/widgets/compare/main...diverged", ""},
		{"GET", "/repos/acme/widgets/compare/main...identical", ""},
		{"GET", "/repos/acme/widgets/commits/main/statuses", ""},
		{"GET", "/repos/acme/widgets/commits/main/status", ""},
		{"GET", "/repos/acme/widgets/commits/" + sha("a"), ""},
		{"GET", "/repos/acme/widgets/git/ref/heads/feature", ""},
		{"GET", "/repos/acme/widgets/contents/docs/a.md", ""},
		{"GET", "/repos/acme/widgets/contents/docs", ""},
		{"GET", "/repos/acme/widgets", ""},
		{"GET", "/repos/acme/widgets/pulls?state=open", ""},
		{"GET", "/repos/acme/widgets/pulls/1", ""},
		{"GET", "/repos/acme/widgets/commits/" + sha("d") + "/pulls", ""},
		{"GET", "/repos/acme/widgets/issues?state=open", ""},
		{"GET", "/repos/acme/widgets/issues/2/comments", ""},
		{"POST", "/repos/acme/widgets/issues/2/comments", `{"body":"hi"}`},
		{"GET", "/repos/acme/widgets/issues/comments", ""},
		{"GET", "/repos/acme/widgets/collaborators/alice/permission", ""},
		{"GET", "/repos/acme/widgets/issues/1/events", ""},
		{"GET", "/rate_limit", ""},
	}
	for _, c := range calls {
		var rd io.Reader
		if c.body != "" {
			rd = strings.NewReader(c.body)
		}
		req, err := http.NewRequest(c.method, strings.TrimSuffix(s.URL(), "/")+c.path, rd)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "token "+tok)
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			t.Errorf("%s %s: %d", c.method, c.path, resp.StatusCode)
		}
	}
	seen := Seen()
	for _, op := range []string{
		"GET /repos/{owner}/{repo}/activity", "GET /repos/{owner}/{repo}/compare/{basehead}",
		"GET /repos/{owner}/{repo}/commits/{ref}/statuses", "GET /repos/{owner}/{repo}/git/ref/{ref}",
		"GET /repos/{owner}/{repo}/contents/{path}", "GET /repos/{owner}/{repo}/pulls/{pull_number}",
	} {
		if seen[op] == 0 {
			t.Errorf("%s was never checked", op)
		}
	}
}

// widgets is a verified fake holding acme/widgets, its token "tok-test"
// for alice, main at a, and three pushes: main to b by alice, main to c
// with no actor (null), feature to d by bob; sha("x") is x 40 times.
func widgets(t *testing.T) (*ghfake.Server, func(string) string) {
	s := ghfake.New()
	t.Cleanup(s.Close)
	Verify(t, s)
	s.AddToken("tok-test", "alice")
	s.AddRepo("acme", "widgets", "main")
	sha := func(c string) string { return strings.Repeat(c, 40) }
	s.SetBranch("acme", "widgets", "main", sha("a"))
	s.Push("acme", "widgets", ghfake.Push{Ref: "main", After: sha("b"), Actor: "alice"})
	s.Push("acme", "widgets", ghfake.Push{Ref: "main", After: sha("c")}) // actor null
	s.Push("acme", "widgets", ghfake.Push{Ref: "feature", After: sha("d"), Actor: "bob"})
	return s, sha
}
