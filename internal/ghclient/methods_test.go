package ghclient

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/phasegate/phasegate/internal/ghfake"
)

func TestCreateStatus(t *testing.T) {
	long := strings.Repeat("é", 200)
	tests := []struct {
		name     string
		sha      string
		status   Status
		wantErr  string
		wantDesc string
	}{
		{name: "plain", sha: "abc123", status: Status{State: "success", Context: "phasegate/contracts",
			Description: "SHIP: all contracts hold", TargetURL: "https://example.com/run/1"},
			wantDesc: "SHIP: all contracts hold"},
		{name: "long description is cut to 140 characters", sha: "abc123",
			status:   Status{State: "failure", Context: "phasegate/contracts", Description: long},
			wantDesc: strings.Repeat("é", 139) + "…"},
		{name: "newlines and tabs become single spaces", sha: "abc123",
			status:   Status{State: "pending", Context: "phasegate/decisions", Description: "HOLD:\n\tD-001  pending"},
			wantDesc: "HOLD: D-001 pending"},
		{name: "unknown state", sha: "abc123", status: Status{State: "green", Context: "x"}, wantErr: `state "green"`},
		{name: "no sha", sha: "", status: Status{State: "success", Context: "x"}, wantErr: "no commit sha"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Options{})
			err := e.c.CreateStatus(ctxT(t), owner, repo, tt.sha, tt.status)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				if n := len(e.fake.Calls()); n != 0 {
					t.Fatalf("%d calls made for an invalid status", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("CreateStatus: %v", err)
			}
			got, ok := e.fake.LatestStatus(owner, repo, tt.sha, tt.status.Context)
			if !ok {
				t.Fatal("no status stored")
			}
			if got.State != tt.status.State || got.Description != tt.wantDesc || got.TargetURL != tt.status.TargetURL || got.Creator != botLogin {
				t.Fatalf("stored %+v, want state %q description %q", got, tt.status.State, tt.wantDesc)
			}
		})
	}
}

func TestTruncateDescription(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "short", in: "ok", want: "ok"},
		{name: "exactly 140", in: strings.Repeat("a", 140), want: strings.Repeat("a", 140)},
		{name: "141 ascii", in: strings.Repeat("a", 141), want: strings.Repeat("a", 139) + "…"},
		{name: "emoji are whole runes", in: strings.Repeat("🚦", 150), want: strings.Repeat("🚦", 139) + "…"},
		{name: "no dangling combining mark", in: strings.Repeat("a", 138) + "e\u0301" + strings.Repeat("b", 10),
			want: strings.Repeat("a", 138) + "e…"},
		{name: "invalid utf-8 is replaced", in: "a\xffb", want: "a\uFFFDb"},
		{name: "no trailing space before the ellipsis", in: strings.Repeat("a", 138) + " " + strings.Repeat("b", 10),
			want: strings.Repeat("a", 138) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := StatusDescription(tt.in)
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			if n := utf8.RuneCountInString(got); n > MaxStatusDescription {
				t.Fatalf("%d characters", n)
			}
		})
	}
}

func TestListIssueComments(t *testing.T) {
	tests := []struct {
		name      string
		comments  int
		wantPages int
	}{
		{name: "no comments", comments: 0, wantPages: 1},
		{name: "one page", comments: smallPage - 2, wantPages: 1},
		{name: "exactly one full page", comments: smallPage, wantPages: 1},
		{name: "three pages", comments: 2*smallPage + 3, wantPages: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Options{perPage: smallPage})
			n := e.fake.AddIssue(owner, repo, "Feature 42", "", "alice")
			var want []string
			for i := 0; i < tt.comments; i++ {
				login := "alice"
				if i%3 == 0 {
					login = botLogin
				}
				body := fmt.Sprintf("comment %d by %s", i, login)
				e.fake.AddComment(owner, repo, n, login, body)
				want = append(want, body)
				e.clock.Advance(time.Second)
			}
			got, err := e.c.ListIssueComments(ctxT(t), owner, repo, n)
			if err != nil {
				t.Fatalf("ListIssueComments: %v", err)
			}
			var bodies []string
			for i, c := range got {
				bodies = append(bodies, c.Body)
				stored := e.fake.Comments(owner, repo, n)[i]
				if c.ID != stored.ID || c.User != stored.User || c.UserType != stored.UserType ||
					!c.CreatedAt.Equal(stored.CreatedAt) || !c.UpdatedAt.Equal(stored.UpdatedAt) {
					t.Fatalf("comment %d = %+v, stored %+v", i, c, stored)
				}
				if c.IsBot() != (c.User == botLogin) {
					t.Fatalf("comment %d: IsBot %v for %s", i, c.IsBot(), c.User)
				}
				if !strings.HasSuffix(c.HTMLURL, fmt.Sprintf("/issues/%d#issuecomment-%d", n, c.ID)) {
					t.Fatalf("comment %d: html url %q", i, c.HTMLURL)
				}
			}
			if !reflect.DeepEqual(bodies, want) {
				t.Fatalf("bodies = %q, want %q", bodies, want)
			}
			calls := e.fake.Calls()
			if len(calls) != tt.wantPages {
				t.Fatalf("%d requests, want %d pages", len(calls), tt.wantPages)
			}
			for i, c := range calls {
				if !strings.Contains(c.Query, fmt.Sprintf("per_page=%d", smallPage)) || (i > 0 && !strings.Contains(c.Query, fmt.Sprintf("page=%d", i+1))) {
					t.Fatalf("request %d query %q", i, c.Query)
				}
			}
		})
	}
}

func TestListIssueCommentsUnknownIssue(t *testing.T) {
	e := newEnv(t, Options{})
	_, err := e.c.ListIssueComments(ctxT(t), owner, repo, 999)
	if !IsNotFound(err) || !strings.Contains(err.Error(), "acme/widgets#999") {
		t.Fatalf("err = %v, want a 404 naming acme/widgets#999", err)
	}
}

func TestCreateIssueComment(t *testing.T) {
	tests := []struct {
		name     string
		number   int // 0: a fresh issue
		body     string
		wantErr  string
		wantCall bool
	}{
		{name: "posts", body: "<!-- phasegate:outcome v1 id=abc -->\nhello", wantCall: true},
		{name: "crlf body", body: "line 1\r\nline 2", wantCall: true},
		{name: "empty body", body: "", wantErr: "empty body"},
		{name: "body over 65536 characters", body: strings.Repeat("ü", MaxBodyChars+1), wantErr: "65537 characters"},
		{name: "exactly 65536 characters", body: strings.Repeat("ü", MaxBodyChars), wantCall: true},
		{name: "unknown issue", number: 404, body: "x", wantErr: "acme/widgets#404", wantCall: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Options{})
			n := tt.number
			if n == 0 {
				n = e.fake.AddIssue(owner, repo, "Feature", "", "alice")
			}
			got, err := e.c.CreateIssueComment(ctxT(t), owner, repo, n, tt.body)
			if calls := len(e.fake.Calls()); (calls > 0) != tt.wantCall {
				t.Fatalf("%d calls, want calls: %v", calls, tt.wantCall)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("CreateIssueComment: %v", err)
			}
			stored := e.fake.Comments(owner, repo, n)
			if len(stored) != 1 || stored[0].ID != got.ID || stored[0].Body != tt.body || got.User != botLogin || got.UserType != "Bot" {
				t.Fatalf("got %+v, stored %+v", got, stored)
			}
			if !got.CreatedAt.Equal(epoch) {
				t.Fatalf("created at %v, want %v", got.CreatedAt, epoch)
			}
		})
	}
}

func TestLabels(t *testing.T) {
	e := newEnv(t, Options{})
	ctx := ctxT(t)
	n := e.fake.AddIssue(owner, repo, "Feature", "", "alice")
	steps := []struct {
		name   string
		do     func() error
		want   []string
		writes int
	}{
		{name: "add two", do: func() error {
			return e.c.AddLabels(ctx, owner, repo, n, []string{"phasegate:pending", "phase:qa"})
		}, want: []string{"phase:qa", "phasegate:pending"}, writes: 1},
		{name: "adding again changes nothing", do: func() error {
			return e.c.AddLabels(ctx, owner, repo, n, []string{"phase:qa"})
		}, want: []string{"phase:qa", "phasegate:pending"}, writes: 1},
		{name: "nothing to add makes no call", do: func() error {
			return e.c.AddLabels(ctx, owner, repo, n, nil)
		}, want: []string{"phase:qa", "phasegate:pending"}, writes: 0},
		{name: "names that need escaping", do: func() error {
			return e.c.AddLabels(ctx, owner, repo, n, []string{"needs review", "a/b?c#d"})
		}, want: []string{"a/b?c#d", "needs review", "phase:qa", "phasegate:pending"}, writes: 1},
		{name: "remove one", do: func() error {
			return e.c.RemoveLabel(ctx, owner, repo, n, "phase:qa")
		}, want: []string{"a/b?c#d", "needs review", "phasegate:pending"}, writes: 1},
		{name: "remove an escaped name", do: func() error {
			return e.c.RemoveLabel(ctx, owner, repo, n, "a/b?c#d")
		}, want: []string{"needs review", "phasegate:pending"}, writes: 1},
		{name: "remove an absent label is fine", do: func() error {
			return e.c.RemoveLabel(ctx, owner, repo, n, "phase:qa")
		}, want: []string{"needs review", "phasegate:pending"}, writes: 1},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			e.fake.ResetCalls()
			if err := st.do(); err != nil {
				t.Fatalf("%v", err)
			}
			if got := len(e.fake.Calls()); got != st.writes {
				t.Fatalf("%d calls, want %d", got, st.writes)
			}
			got, err := e.c.ListLabels(ctx, owner, repo, n)
			if err != nil {
				t.Fatalf("ListLabels: %v", err)
			}
			if !reflect.DeepEqual(got, st.want) || !reflect.DeepEqual(e.fake.Labels(owner, repo, n), st.want) {
				t.Fatalf("labels = %q (fake %q), want %q", got, e.fake.Labels(owner, repo, n), st.want)
			}
		})
	}
	t.Run("remove on a missing issue is an error", func(t *testing.T) {
		// GitHub answers 404 for a missing issue too: RemoveLabel cannot tell
		// it from a missing label, and says nothing, as GitHub's semantics
		// for "already absent" require.
		if err := e.c.RemoveLabel(ctx, owner, repo, 9999, "x"); err != nil {
			t.Fatalf("err = %v", err)
		}
		if _, err := e.c.ListLabels(ctx, owner, repo, 9999); !IsNotFound(err) {
			t.Fatalf("ListLabels err = %v, want 404", err)
		}
	})
}

func TestCreateIssue(t *testing.T) {
	tests := []struct {
		name    string
		title   string
		body    string
		labels  []string
		wantErr string
	}{
		{name: "with labels", title: "Captured: rate limits", body: "from #42", labels: []string{"phasegate:captured"}},
		{name: "without labels", title: "Follow-up", body: ""},
		{name: "empty title", title: " ", wantErr: "empty title"},
		{name: "body too long", title: "x", body: strings.Repeat("a", MaxBodyChars+1), wantErr: "characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Options{})
			num, url, err := e.c.CreateIssue(ctxT(t), owner, repo, tt.title, tt.body, tt.labels)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("CreateIssue: %v", err)
			}
			is, ok := e.fake.Issue(owner, repo, num)
			if !ok || is.Title != tt.title || is.Body != tt.body || is.Author != botLogin {
				t.Fatalf("stored %+v", is)
			}
			if len(tt.labels) > 0 && !reflect.DeepEqual(is.Labels, tt.labels) {
				t.Fatalf("labels %q, want %q", is.Labels, tt.labels)
			}
			if want := fmt.Sprintf("https://github.com/acme/widgets/issues/%d", num); url != want {
				t.Fatalf("url %q, want %q", url, want)
			}
		})
	}
}

func TestListOpenIssues(t *testing.T) {
	e := newEnv(t, Options{perPage: smallPage})
	ctx := ctxT(t)
	var want []int
	for i := 0; i < 3*smallPage; i++ { // 5 open and labelled, and the pull request: two pages
		n := e.fake.AddIssue(owner, repo, fmt.Sprintf("issue %d", i), "", "alice")
		switch i % 3 {
		case 0:
			if err := e.c.AddLabels(ctx, owner, repo, n, []string{"phasegate:pending"}); err != nil {
				t.Fatal(err)
			}
			want = append(want, n)
		case 1:
			if err := e.c.AddLabels(ctx, owner, repo, n, []string{"phasegate:pending"}); err != nil {
				t.Fatal(err)
			}
			e.fake.SetIssueState(owner, repo, n, "closed")
		}
	}
	pr := e.fake.AddPullRequest(owner, repo, ghfake.PullRequest{Author: "alice", HeadSHA: "h", BaseSHA: "b"})
	if err := e.c.AddLabels(ctx, owner, repo, pr, []string{"phasegate:pending"}); err != nil {
		t.Fatal(err)
	}
	want = append(want, pr)
	e.fake.ResetCalls()
	got, err := e.c.ListOpenIssues(ctx, owner, repo, "phasegate:pending")
	if err != nil {
		t.Fatalf("ListOpenIssues: %v", err)
	}
	if pages := e.fake.CountCalls("GET", "/repos/acme/widgets/issues"); pages != 2 {
		t.Fatalf("%d requests, want 2 pages", pages)
	}
	var nums []int
	for _, is := range got {
		nums = append(nums, is.Number)
		if is.IsPullRequest != (is.Number == pr) || is.State != "open" || !reflect.DeepEqual(is.Labels, []string{"phasegate:pending"}) {
			t.Fatalf("issue %+v", is)
		}
	}
	if !reflect.DeepEqual(nums, want) {
		t.Fatalf("numbers %v, want %v", nums, want)
	}
}

func TestCreateCommentReaction(t *testing.T) {
	tests := []struct {
		name    string
		content []string
		want    []string
		wantErr string
	}{
		{name: "eyes", content: []string{"eyes"}, want: []string{"eyes"}},
		{name: "twice is once", content: []string{"eyes", "eyes"}, want: []string{"eyes"}},
		{name: "receipt then success", content: []string{"eyes", "+1"}, want: []string{"eyes", "+1"}},
		{name: "not a reaction", content: []string{"thumbsup"}, wantErr: `"thumbsup" is not a github reaction`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Options{})
			n := e.fake.AddIssue(owner, repo, "Feature", "", "alice")
			id := e.fake.AddComment(owner, repo, n, "alice", "/resolve D-001 approve")
			var err error
			for _, c := range tt.content {
				if err = e.c.CreateCommentReaction(ctxT(t), owner, repo, id, c); err != nil {
					break
				}
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("CreateCommentReaction: %v", err)
			}
			var got []string
			for _, r := range e.fake.Reactions(id) {
				if r.User != botLogin {
					t.Fatalf("reaction by %s", r.User)
				}
				got = append(got, r.Content)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("reactions %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("unknown comment", func(t *testing.T) {
		e := newEnv(t, Options{})
		if err := e.c.CreateCommentReaction(ctxT(t), owner, repo, 424242, "eyes"); !IsNotFound(err) {
			t.Fatalf("err = %v, want 404", err)
		}
	})
}

func TestCollaboratorPermission(t *testing.T) {
	tests := []struct {
		name string
		user string
		role string // "" : not a collaborator; "-": not a GitHub user at all
		want string
	}{
		{name: "admin", user: "ann", role: "admin", want: "admin"},
		{name: "maintain is not folded into write", user: "max", role: "maintain", want: "maintain"},
		{name: "write", user: "wes", role: "write", want: "write"},
		{name: "triage is not folded into read", user: "tia", role: "triage", want: "triage"},
		{name: "read", user: "rob", role: "read", want: "read"},
		{name: "custom role falls back to its base", user: "cal", role: "security-reviewer:write", want: "write"},
		{name: "user without access", user: "nora", role: "", want: "none"},
		{name: "unknown user", user: "ghost", role: "-", want: "none"},
		{name: "owner", user: owner, role: "", want: "admin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Options{})
			switch tt.role {
			case "-":
			case "":
				e.fake.AddUser(tt.user, "User")
			default:
				e.fake.SetPermission(owner, repo, tt.user, tt.role)
			}
			got, err := e.c.CollaboratorPermission(ctxT(t), owner, repo, tt.user)
			if err != nil {
				t.Fatalf("CollaboratorPermission: %v", err)
			}
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTeamMember(t *testing.T) {
	tests := []struct {
		name       string
		state      string            // alice's membership; "": none
		team       bool              // the team exists (bob is an active member)
		perms      map[string]string // the token's permissions; nil: all
		status     int               // the membership query fails with this status
		want       bool
		unreadable bool // the error wraps ErrTeamUnreadable
		wantErr    bool
	}{
		{name: "active member", state: "active", team: true, want: true},
		{name: "pending invitation", state: "pending", team: true, want: false},
		{name: "not a member", team: true, want: false},
		{name: "no such team", unreadable: true},
		// A workflow's GITHUB_TOKEN: GitHub answers 404 for a member too.
		{name: "member, token without members: read", state: "active", team: true, perms: map[string]string{"issues": "write"}, unreadable: true},
		{name: "non-member, token without members: read", team: true, perms: map[string]string{"issues": "write"}, unreadable: true},
		{name: "403 on the membership", state: "active", team: true, status: 403, unreadable: true},
		{name: "500 on the membership", state: "active", team: true, status: 500, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Options{MaxAttempts: 2})
			if tt.team {
				e.fake.AddTeamMember(owner, "release-managers", "bob", "active")
			}
			if tt.state != "" {
				e.fake.AddTeamMember(owner, "release-managers", "alice", tt.state)
			}
			if tt.perms != nil {
				e.fake.SetTokenPermissions(botLogin, tt.perms)
			}
			if tt.status != 0 {
				e.fake.FailNext(2, tt.status, "/memberships/")
			}
			got, err := e.c.TeamMember(ctxT(t), owner, "release-managers", "alice")
			switch {
			case tt.unreadable:
				if !errors.Is(err, ErrTeamUnreadable) || !strings.Contains(err.Error(), owner+"/release-managers") {
					t.Fatalf("got %v, %v; want an error wrapping ErrTeamUnreadable naming the team", got, err)
				}
			case tt.wantErr:
				if err == nil || errors.Is(err, ErrTeamUnreadable) {
					t.Fatalf("got %v, %v; want an error that is not ErrTeamUnreadable", got, err)
				}
			case err != nil || got != tt.want:
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestDefaultBranch(t *testing.T) {
	tests := []struct {
		name    string
		repo    string
		want    string
		wantErr bool
	}{
		{name: "configured", repo: "trunked", want: "trunk"},
		{name: "missing repository", repo: "nope", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Options{})
			e.fake.AddRepo(owner, "trunked", "trunk")
			got, err := e.c.DefaultBranch(ctxT(t), owner, tt.repo)
			if tt.wantErr {
				if !IsNotFound(err) || !strings.Contains(err.Error(), "acme/nope") {
					t.Fatalf("err = %v, want a 404 naming the repository", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestFileContent(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), (1<<20)/16+10) // over 1 MB: not inlined by GitHub
	tests := []struct {
		name      string
		path, ref string
		want      []byte
		wantFound bool
		wantErr   string
		wantBlob  bool
	}{
		{name: "default branch", path: ".github/phasegate.yml", want: []byte("resolvers:\n  permission: write\n"), wantFound: true},
		{name: "at a ref", path: ".github/phasegate.yml", ref: "feature", want: []byte("resolvers: {}\n"), wantFound: true},
		{name: "at a sha", path: "docs/a.md", ref: "0123abcd", want: []byte("# A\n"), wantFound: true},
		{name: "missing file", path: "nope.yml", wantFound: false},
		{name: "missing ref", path: ".github/phasegate.yml", ref: "no-such-branch", wantFound: false},
		{name: "large file is read as a blob", path: "big.bin", want: big, wantFound: true, wantBlob: true},
		{name: "empty file", path: "empty", want: []byte{}, wantFound: true},
		{name: "directory", path: ".github", wantErr: "a directory"},
		{name: "dot-dot is refused", path: "../x", wantErr: "read acme/widgets:../x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Options{})
			e.fake.SetFile(owner, repo, "", ".github/phasegate.yml", []byte("resolvers:\n  permission: write\n"))
			e.fake.SetFile(owner, repo, "feature", ".github/phasegate.yml", []byte("resolvers: {}\n"))
			e.fake.SetFile(owner, repo, "0123abcd", "docs/a.md", []byte("# A\n"))
			if tt.wantBlob { // only the case that reads it stores the megabyte
				e.fake.SetFile(owner, repo, "", "big.bin", big)
			}
			e.fake.SetFile(owner, repo, "", "empty", nil)
			got, found, err := e.c.FileContent(ctxT(t), owner, repo, tt.path, tt.ref)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("FileContent: %v", err)
			}
			if found != tt.wantFound || !bytes.Equal(got, tt.want) {
				t.Fatalf("found %v, %d bytes; want %v, %d bytes", found, len(got), tt.wantFound, len(tt.want))
			}
			if blob := e.fake.CountCalls("GET", "/repos/acme/widgets/git/blobs/") > 0; blob != tt.wantBlob {
				t.Fatalf("blob read: %v, want %v", blob, tt.wantBlob)
			}
		})
	}
}

func TestPullRequests(t *testing.T) {
	e := newEnv(t, Options{perPage: smallPage})
	ctx := ctxT(t)
	var open []int
	for i := 0; i < 8; i++ { // 6 open, and 500 and 501: two pages
		pr := ghfake.PullRequest{Author: fmt.Sprintf("dev%d", i%4), HeadSHA: fmt.Sprintf("head%03d", i), BaseSHA: "base000",
			HeadRef: fmt.Sprintf("feature-%d", i), BaseRef: "main"}
		if i%5 == 0 {
			pr.State = "closed"
			pr.Merged = true
		}
		n := e.fake.AddPullRequest(owner, repo, pr)
		if pr.State != "closed" {
			open = append(open, n)
		}
	}
	e.fake.AddPullRequest(owner, repo, ghfake.PullRequest{Number: 500, Author: "zed", HeadSHA: "shared", BaseSHA: "b", Commits: []string{"older"}})
	e.fake.AddPullRequest(owner, repo, ghfake.PullRequest{Number: 501, Author: "yan", HeadSHA: "other", BaseSHA: "b", Commits: []string{"shared"}})
	open = append(open, 500, 501)

	t.Run("one", func(t *testing.T) {
		got, err := e.c.PullRequest(ctx, owner, repo, 3)
		want := PR{Number: 3, State: "open", Author: "dev2", HeadSHA: "head002", HeadRef: "feature-2", HeadRepo: "acme/widgets", BaseSHA: "base000",
			BaseRef: "main", HTMLURL: "https://github.com/acme/widgets/pull/3"}
		if err != nil || got != want {
			t.Fatalf("got %+v, %v; want %+v", got, err, want)
		}
	})
	t.Run("missing", func(t *testing.T) {
		if _, err := e.c.PullRequest(ctx, owner, repo, 9999); !IsNotFound(err) {
			t.Fatalf("err = %v, want 404", err)
		}
	})
	t.Run("open ones across pages", func(t *testing.T) {
		e.fake.ResetCalls()
		got, err := e.c.ListOpenPullRequests(ctx, owner, repo)
		if err != nil {
			t.Fatal(err)
		}
		var nums []int
		for _, p := range got {
			nums = append(nums, p.Number)
		}
		sort.Ints(nums)
		sort.Ints(open)
		if !reflect.DeepEqual(nums, open) {
			t.Fatalf("numbers %v, want %v", nums, open)
		}
		if calls := len(e.fake.Calls()); calls != 2 {
			t.Fatalf("%d requests, want 2 pages", calls)
		}
	})
	t.Run("for a commit", func(t *testing.T) {
		got, err := e.c.PullRequestsForCommit(ctx, owner, repo, "shared")
		if err != nil {
			t.Fatal(err)
		}
		var nums []int
		for _, p := range got {
			nums = append(nums, p.Number)
		}
		sort.Ints(nums)
		if !reflect.DeepEqual(nums, []int{500, 501}) {
			t.Fatalf("numbers %v", nums)
		}
		none, err := e.c.PullRequestsForCommit(ctx, owner, repo, "unknown")
		if err != nil || len(none) != 0 {
			t.Fatalf("got %v, %v", none, err)
		}
	})
}

func TestCompareFiles(t *testing.T) {
	files := func(n int) ([]ghfake.File, map[string]string) {
		var fs []ghfake.File
		want := map[string]string{}
		statuses := []string{"added", "modified", "removed", "renamed"}
		for i := 0; i < n; i++ {
			f := ghfake.File{Filename: fmt.Sprintf(".pace/day-%d/gate.yaml", i), Status: statuses[i%4]}
			if f.Status == "renamed" {
				f.PreviousFilename = fmt.Sprintf("old/%d.yaml", i)
				want[f.PreviousFilename] = "removed" // a rename is a removal plus an addition
			}
			fs = append(fs, f)
			want[f.Filename] = f.Status
		}
		return fs, want
	}
	tests := []struct {
		name          string
		n             int
		wantTruncated bool
		wantLen       int
	}{
		{name: "compare", n: 7, wantLen: 7 + 1},
		{name: "compare over 300 files is truncated", n: 301, wantTruncated: true, wantLen: 300 + 75},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Options{perPage: smallPage})
			fs, want := files(tt.n)
			e.fake.SetCompare(owner, repo, "base1", "feature/x", fs)
			cmp, err := e.c.Compare(ctxT(t), owner, repo, "base1", "feature/x")
			got := cmp.Files
			if tt.wantTruncated != errors.Is(err, ErrTruncated) || (!tt.wantTruncated && err != nil) {
				t.Fatalf("err = %v, want truncated %v", err, tt.wantTruncated)
			}
			if len(got) != tt.wantLen {
				t.Fatalf("%d files, want %d", len(got), tt.wantLen)
			}
			for f, s := range got {
				if want[f] != s {
					t.Fatalf("%s: %q, want %q", f, s, want[f])
				}
			}
		})
	}
	t.Run("unknown comparison", func(t *testing.T) {
		e := newEnv(t, Options{})
		if _, err := e.c.Compare(ctxT(t), owner, repo, "a", "b"); !IsNotFound(err) {
			t.Fatalf("err = %v, want 404", err)
		}
	})
}

// TestListAfterAPageWasAdded: a full last page that GitHub confirms
// unchanged (304) may carry the Link stored with it, from before a page was
// added after it; the listing still reaches the new page. The proxy in
// front of the fake drops the Link of every 304, as a GitHub that sends none
// on a 304 would; the second listing of page 1 costs no rate limit.
func TestListAfterAPageWasAdded(t *testing.T) {
	f := ghfake.New()
	t.Cleanup(f.Close)
	target, err := url.Parse(f.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(r *http.Response) error {
		if r.StatusCode == http.StatusNotModified {
			r.Header.Del("Link")
		}
		return nil
	}
	front := httptest.NewServer(proxy)
	t.Cleanup(front.Close)
	e := newEnvOn(t, f, Options{BaseURL: front.URL, perPage: smallPage})
	n := e.fake.AddIssue(owner, repo, "busy", "", "alice")
	for i := range smallPage {
		e.fake.AddComment(owner, repo, n, "alice", fmt.Sprintf("comment %d", i))
	}
	got, err := e.c.ListIssueComments(ctxT(t), owner, repo, n)
	if err != nil || len(got) != smallPage {
		t.Fatalf("first listing: %d comments, %v", len(got), err)
	}
	e.fake.AddComment(owner, repo, n, "bob", "/resolve D-001 approve")
	before := e.c.Stats()
	got, err = e.c.ListIssueComments(ctxT(t), owner, repo, n)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != smallPage+1 || got[smallPage].Body != "/resolve D-001 approve" {
		t.Fatalf("second listing: %d comments, want %d with the new one last", len(got), smallPage+1)
	}
	after := e.c.Stats()
	if nm := after.NotModified - before.NotModified; nm != 1 {
		t.Errorf("page 1 answered 304 %d times, want once", nm)
	}
}

// TestListingsAskForGitHubsMaximum: a Client's listings ask for GitHub's
// maximum page size, 100, unless a test lowered Options.perPage (the
// pagination tests page through smallPage items a page instead).
func TestListingsAskForGitHubsMaximum(t *testing.T) {
	if maxPerPage != 100 {
		t.Fatalf("maxPerPage = %d, want GitHub's maximum 100", maxPerPage)
	}
	for _, lowered := range []int{0, -1, 500} {
		c, err := New(Options{perPage: lowered})
		if err != nil || c.opts.perPage != maxPerPage {
			t.Fatalf("perPage %d: %v, or a page size other than %d", lowered, err, maxPerPage)
		}
	}
	e := newEnv(t, Options{})
	ctx := ctxT(t)
	n := e.fake.AddIssue(owner, repo, "Feature", "", "alice")
	e.fake.AddComment(owner, repo, n, "alice", "hello")
	e.fake.AddCommit(owner, repo, ghfake.Commit{SHA: "c1", Author: "agent", Files: []ghfake.File{{Filename: "a.yaml", Status: "added"}}})
	e.fake.Push(owner, repo, ghfake.Push{Ref: "main", After: "c1", Actor: "alice"})
	app, ac := appEnvPaged(t, 0)
	app.AddInstallation(4242, 77)
	app.AddHookDelivery(ghfake.HookDelivery{GUID: "g-1", Event: "ping", StatusCode: 200, DeliveredAt: time.Now()})
	key, _ := testKeys(t)
	itr, err := NewInstallationTransport(4242, 77, pemOf(key), app.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ic, err := New(Options{BaseURL: app.URL(), Transport: itr})
	if err != nil {
		t.Fatal(err)
	}
	listings := []struct {
		name string
		fake *ghfake.Server
		list func() error
	}{
		{"ListInstallations", app, func() error { _, err := ac.ListInstallations(ctx); return err }},
		{"ListHookDeliveries", app, func() error { _, err := ac.ListHookDeliveries(ctx, time.Time{}); return err }},
		{"InstallationRepos", app, func() error { _, err := ic.InstallationRepos(ctx); return err }},
		{"ListIssueComments", e.fake, func() error { _, err := e.c.ListIssueComments(ctx, owner, repo, n); return err }},
		{"ListRepoComments", e.fake, func() error { _, err := e.c.ListRepoComments(ctx, owner, repo, epoch.Add(-time.Hour)); return err }},
		{"ListLabels", e.fake, func() error { _, err := e.c.ListLabels(ctx, owner, repo, n); return err }},
		{"ListOpenIssues", e.fake, func() error { _, err := e.c.ListOpenIssues(ctx, owner, repo); return err }},
		{"ListOpenPullRequests", e.fake, func() error { _, err := e.c.ListOpenPullRequests(ctx, owner, repo); return err }},
		{"StatusHistory", e.fake, func() error { _, err := e.c.StatusHistory(ctx, owner, repo, "c1"); return err }},
		{"LabelEvents", e.fake, func() error { _, err := e.c.LabelEvents(ctx, owner, repo, n); return err }},
		{"RefPushes", e.fake, func() error { _, err := e.c.RefPushes(ctx, owner, repo, "main"); return err }},
		{"WaitingRuns", e.fake, func() error { _, err := e.c.WaitingRuns(ctx, owner, repo, epoch); return err }},
	}
	for _, l := range listings {
		t.Run(l.name, func(t *testing.T) {
			l.fake.ResetCalls()
			if err := l.list(); err != nil {
				t.Fatal(err)
			}
			lists := 0
			for _, c := range l.fake.Calls() {
				if c.Method != http.MethodGet { // an installation token minted on the way
					continue
				}
				lists++
				if v, err := url.ParseQuery(c.Query); err != nil || v.Get("per_page") != "100" {
					t.Fatalf("%s %s?%s: want per_page=100", c.Method, c.Path, c.Query)
				}
			}
			if lists == 0 {
				t.Fatal("no listing")
			}
		})
	}
}
