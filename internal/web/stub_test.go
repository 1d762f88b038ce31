package web

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The stubs stand for ghclient's OAuth and UserAPI and the server's Source.

const testToken = "ghu_SECRETtoken0123456789abcdefghij"

var testNow = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

type stubOAuth struct {
	mu        sync.Mutex
	codes     map[string]string // code → the verifier it must be proved with
	exchanged []string
	user      *stubUser
	tokenExp  time.Time
	revoked   []string // the tokens Revoke revoked
	revokeErr error    // what Revoke answers
}

func (o *stubOAuth) AuthCodeURL(state, verifier string) string {
	return "https://github.com/login/oauth/authorize?client_id=Iv1.test&state=" + url.QueryEscape(state)
}

func (o *stubOAuth) Exchange(ctx context.Context, code, verifier string) (Token, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.exchanged = append(o.exchanged, code)
	if want, ok := o.codes[code]; !ok || want != verifier {
		return Token{}, errors.New("bad_verification_code")
	}
	return Token{AccessToken: testToken, Expiry: o.tokenExp}, nil
}

func (o *stubOAuth) Revoke(ctx context.Context, t Token) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.revokeErr != nil {
		return o.revokeErr
	}
	o.revoked = append(o.revoked, t.AccessToken)
	return nil
}

func (o *stubOAuth) User(t Token) UserAPI {
	if t.AccessToken != testToken {
		return &stubUser{err: errors.New("bad credentials")}
	}
	return o.user
}

type stubUser struct {
	viewer  Viewer
	repos   []RepoRef
	visible map[string]bool // owner/repo
	err     error
	calls   int
	mu      sync.Mutex
}

func (u *stubUser) CurrentUser(ctx context.Context) (Viewer, error) { return u.viewer, u.err }

func (u *stubUser) Repos(ctx context.Context) ([]RepoRef, error) {
	u.mu.Lock()
	u.calls++
	u.mu.Unlock()
	return u.repos, u.err
}

func (u *stubUser) CanSee(ctx context.Context, owner, repo string) (bool, error) {
	if u.err != nil {
		return false, u.err
	}
	return u.visible[owner+"/"+repo], nil
}

type stubSource struct {
	mu       sync.Mutex
	issues   map[string]*IssuePage // owner/repo#n
	commits  map[string]*CommitPage
	heads    map[string]string
	pending  []PendingItem
	deploys  []Deployment
	resolved []ResolveRequest
	tokens   []Token
	refuse   *RefusedError
	changes  chan Change
	subs     int
}

func (s *stubSource) Issue(ctx context.Context, owner, repo string, issue int, viewer string) (*IssuePage, error) {
	if p, ok := s.issues[owner+"/"+repo+"#"+itoa(issue)]; ok {
		c := *p
		return &c, nil
	}
	return nil, ErrNotFound
}

func (s *stubSource) Commit(ctx context.Context, owner, repo, sha, viewer string) (*CommitPage, error) {
	if p, ok := s.commits[owner+"/"+repo+"@"+sha]; ok {
		c := *p
		return &c, nil
	}
	return nil, ErrNotFound
}

func (s *stubSource) PullHead(ctx context.Context, owner, repo string, pr int) (string, error) {
	if h, ok := s.heads[owner+"/"+repo+"#"+itoa(pr)]; ok {
		return h, nil
	}
	return "", ErrNotFound
}

func (s *stubSource) Pending(ctx context.Context, repos []RepoRef, viewer string) ([]PendingItem, error) {
	var out []PendingItem
	for _, it := range s.pending {
		if sees(repos, it.Repo.Owner, it.Repo.Name) {
			out = append(out, it)
		}
	}
	return out, nil
}

func (s *stubSource) Deployments(ctx context.Context, repos []RepoRef) ([]Deployment, error) {
	var out []Deployment
	for _, d := range s.deploys {
		if sees(repos, d.Repo.Owner, d.Repo.Name) {
			out = append(out, d)
		}
	}
	return out, nil
}

func (s *stubSource) Resolve(ctx context.Context, token Token, r ResolveRequest) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refuse != nil {
		return "", s.refuse
	}
	s.resolved = append(s.resolved, r)
	s.tokens = append(s.tokens, token)
	return "https://github.com/" + r.Owner + "/" + r.Repo + "/issues/" + itoa(r.Issue) + "#issuecomment-99", nil
}

func (s *stubSource) Subscribe() (<-chan Change, func()) {
	s.mu.Lock()
	s.subs++
	s.mu.Unlock()
	return s.changes, func() {}
}

func itoa(n int) string { return strconv.Itoa(n) }

// fixture is a Pages over the stubs with a fixed clock.
type fixture struct {
	p     *Pages
	oauth *stubOAuth
	user  *stubUser
	src   *stubSource
	now   time.Time
	keys  [][]byte
}

var testKey = []byte("0123456789abcdef0123456789abcdef-test-key")

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{now: testNow, keys: [][]byte{testKey}}
	f.user = &stubUser{
		viewer: Viewer{Login: "alice", ID: 42, Name: "Alice", AvatarURL: "https://avatars.githubusercontent.com/u/42?v=4"},
		repos: []RepoRef{
			{Owner: "acme", Name: "app", Installation: 1},
			{Owner: "acme", Name: "tools", Installation: 1, Private: true},
		},
		visible: map[string]bool{"acme/app": true, "acme/tools": true},
	}
	f.oauth = &stubOAuth{codes: map[string]string{}, user: f.user}
	f.src = sampleSource()
	f.build(t)
	return f
}

func (f *fixture) build(t testing.TB) {
	t.Helper()
	p, err := New(Config{
		PublicURL:   "https://phasegate.example.com",
		SessionKeys: f.keys,
		Now:         func() time.Time { return f.now },
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		Heartbeat:   time.Hour,
	}, f.oauth, f.src)
	if err != nil {
		t.Fatal(err)
	}
	f.p = p
}

// cookie is a session cookie for the stub user, issued now.
func (f *fixture) cookie(t *testing.T) *http.Cookie {
	t.Helper()
	s := newSession(f.user.viewer, Token{AccessToken: testToken}, f.now, MaxSessionTTL)
	v, err := f.p.sessions.seal(s)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Cookie{Name: f.p.sessionCookie, Value: v}
}

// sess is the session of the cookie.
func (f *fixture) sess(t *testing.T, c *http.Cookie) *session {
	t.Helper()
	var s session
	if !f.p.sessions.open(c.Value, &s) {
		t.Fatal("cookie does not open")
	}
	return &s
}

// do runs one request through the handler.
func (f *fixture) do(method, target string, body url.Values, hdr map[string]string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	var r *http.Request
	if body != nil {
		r = httptest.NewRequest(method, "https://phasegate.example.com"+target, strings.NewReader(body.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		r = httptest.NewRequest(method, "https://phasegate.example.com"+target, nil)
	}
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	for _, c := range cookies {
		if c != nil {
			r.AddCookie(c)
		}
	}
	w := httptest.NewRecorder()
	f.p.Handler().ServeHTTP(w, r)
	return w
}

// sameOrigin are the headers a browser sends on a same-origin POST.
var sameOrigin = map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "https://phasegate.example.com"}

func sampleSource() *stubSource {
	at := testNow.Add(-3 * time.Hour)
	production := Deployment{Repo: RepoRef{Owner: "acme", Name: "app"}, Environment: "production", SHA: "0123456789abcdef0123456789abcdef01234567",
		Ref: "refs/heads/main", RunID: 9001, Since: at.Add(2 * time.Hour), Reason: "waiting for 2 blocking decision(s)",
		Waits: []Wait{{Decision: "D-001", Issue: 7}, {Decision: "D-004", Issue: 9, Stale: true}}}
	issue := &IssuePage{
		Owner: "acme", Repo: "app", Issue: 7, Title: "Add the billing export",
		URL: "https://github.com/acme/app/issues/7",
		Outcomes: []OutcomeView{{
			ID: "sha256:1a2b3c", Phase: "plan", Status: "needs-decision", Summary: "The plan splits the export in two jobs.",
			Commit: "0123456789abcdef0123456789abcdef01234567", CommentURL: "https://github.com/acme/app/issues/7#issuecomment-1",
			PostedAt: at,
			Decisions: []DecisionView{
				{
					ID: "D-001", Type: "approval", Question: "Ship the plan?", Blocking: true, Pending: true,
					Options:        []OptionView{{Key: "approve", Label: "Approve", Recommended: true}, {Key: "reject", Label: "Reject"}},
					Recommendation: "approve: the split keeps each job under the time limit",
					Resolvers:      "members of @acme/leads", MayResolve: true, Deployments: []Deployment{production},
				},
				{
					ID: "D-002", Type: "capture-out-of-scope", Question: "Capture the CSV rework?", Pending: true,
					Options:   []OptionView{{Key: "capture", Label: "Capture"}, {Key: "drop", Label: "Drop"}},
					Resolvers: "anyone with write access but the agent", WhyNot: "you opened the pull request",
				},
				{
					ID: "D-003", Type: "approval", Question: "Use the new queue?", Option: "approve", ResolvedBy: "bob",
					Reason: "fine", ResolvedAt: at.Add(time.Hour), ResolutionURL: "https://github.com/acme/app/issues/7#issuecomment-3",
					Options:              []OptionView{{Key: "approve", Label: "Approve"}, {Key: "reject", Label: "Reject"}},
					ChangedSinceApproval: []string{"89abcde: queue.go", "89abcde: queue_test.go"},
				},
			},
		}},
		History: []HistoryEntry{
			{At: at, Who: "phasegate[bot]", What: "posted outcome plan", CommentURL: "https://github.com/acme/app/issues/7#issuecomment-1"},
			{At: at.Add(time.Hour), Who: "bob", What: "resolved D-003: approve", CommentURL: "https://github.com/acme/app/issues/7#issuecomment-3"},
		},
	}
	commit := &CommitPage{
		Owner: "acme", Repo: "app", SHA: "0123456789abcdef0123456789abcdef01234567",
		Checked: true, CheckedAt: at, Verdict: "HOLD",
		Reasons: []string{"1 error finding", "decision D-001 is pending"},
		Findings: []FindingView{{
			File: ".pace/plan.yaml", Line: 12, Column: 3, Rule: "pace.plan.schema", Severity: "error",
			Message: "missing property \"owner\"", URL: "https://github.com/acme/app/blob/0123456789abcdef0123456789abcdef01234567/.pace/plan.yaml#L12",
		}},
		Decisions: "pending", DecisionsText: "1 blocking decision pending",
		Issues: []IssueRef{{Number: 7, Title: "Add the billing export", Pending: 2}},
		Input: []InputRow{{Name: "head", Value: "0123456789abcdef0123456789abcdef01234567", Code: true},
			{Name: "base", Value: "<b>scratch</b>@89abcdef0123456789abcdef0123456789abcdef", Code: true},
			{Name: "pull request", Value: "#8"}, {Name: "configuration", Value: "defaults (no configuration file)"}},
	}
	return &stubSource{
		issues:  map[string]*IssuePage{"acme/app#7": issue},
		commits: map[string]*CommitPage{"acme/app@" + commit.SHA: commit},
		heads:   map[string]string{"acme/app#8": commit.SHA},
		pending: []PendingItem{
			{Repo: RepoRef{Owner: "acme", Name: "app"}, Issue: 7, IssueTitle: "Add the billing export", Decision: "D-002",
				Type: "capture-out-of-scope", Phase: "plan", Question: "Capture the CSV rework?", Since: at, WhyNot: "you opened the pull request",
				CommentURL: "https://github.com/acme/app/issues/7#issuecomment-1"},
			{Repo: RepoRef{Owner: "acme", Name: "app"}, Issue: 7, IssueTitle: "Add the billing export", Decision: "D-001",
				Type: "approval", Phase: "plan", Question: "Ship the plan?", Blocking: true, Since: at, MayResolve: true,
				CommentURL: "https://github.com/acme/app/issues/7#issuecomment-1"},
			{Repo: RepoRef{Owner: "acme", Name: "tools"}, Issue: 3, IssueTitle: "Lint rules", Decision: "D-001",
				Type: "approval", Phase: "review", Question: "Merge the lint rules?", Since: at.Add(time.Hour), MayResolve: true,
				CommentURL: "https://github.com/acme/tools/issues/3#issuecomment-5"},
			{Repo: RepoRef{Owner: "other", Name: "secret"}, Issue: 1, Decision: "D-001", Type: "approval", Phase: "plan",
				Question: "Hidden?", Since: at},
		},
		deploys: []Deployment{production,
			{Repo: RepoRef{Owner: "acme", Name: "tools"}, Environment: "staging", SHA: "89abcdef0123456789abcdef0123456789abcdef", RunID: 77,
				Since: at, Reason: "phasegate has not checked commit 89abcde"},
			{Repo: RepoRef{Owner: "other", Name: "secret"}, Environment: "hidden-env", SHA: "fedcba9876543210fedcba9876543210fedcba98", RunID: 5,
				Since: at, Waits: []Wait{{Decision: "D-001", Issue: 1}}}},
		changes: make(chan Change, 16),
	}
}
