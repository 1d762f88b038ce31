// Package ghfake is an in-process fake of the parts of the GitHub REST API
// that phasegate uses. It is an httptest.Server that answers with GitHub's
// JSON shapes, status codes, pagination Link headers, ETags and rate-limit
// headers, so that the real go-github client (through internal/ghclient) can
// be driven against it hermetically.
//
// The fake is a normal (non-test) package so that the tests of every package
// that talks to GitHub through ghclient can import it.
//
// What it models:
//
//   - identities: tokens map to logins (Authorization: "token X" or
//     "Bearer X"); GitHub App JWTs (RS256) are verified against the app's
//     registered public key and exchanged for installation tokens;
//   - repositories with a default branch, branches, file contents per ref and
//     git blobs; issues, pull requests, issue comments (create, edit, delete),
//     labels, reactions (and their rollup in every comment), commit statuses
//     (list and combined; never deleted, at most 1000 per sha and context),
//     collaborator permissions, team memberships, commits (per path, with
//     authors), comparisons (status, ahead_by, behind_by, merge base, files)
//     and pull-request files, repository_dispatch events (recorded, needing
//     contents: write when the token's permissions are set);
//   - commit trees (SetTree: a commit's whole file set, with symlinks and
//     submodules, hashed as git hashes trees and blobs): GET git/trees/{sha}
//     by commit, tree or branch, recursive or not, cut with "truncated" at
//     GitHub's 100,000 entries / 7 MB or at SetTreeTruncation's limits; GET
//     git/blobs/{sha} (base64 or raw); GET tarball/{ref}, a 302 to a fake
//     codeload that serves a gzip tar in git archive's layout, obeying the
//     commit's .gitattributes (export-ignore, export-subst of $Format:%H$)
//     as git archive does (SetArchive serves any bytes instead);
//   - check runs, which only an App may create (AddAppToken, or a minted
//     installation token; github-actions[bot] is the github-actions App) and
//     only the App that created one may update (403 otherwise): create,
//     update (annotations appended, at most 50 per request, 422 beyond;
//     summary and text at most 65535 bytes), get, list for a ref (filter
//     latest or all, check_name, app_id, paginated) and list annotations;
//     CheckRuns returns them with their annotations and creator;
//   - the repository activity log (GET /repos/{o}/{r}/activity, with its
//     filters and cursor pagination): Push moves a branch as `git push` does
//     and records push, force_push or branch_creation, DeleteBranch records
//     branch_deletion, AddActivity anything else; git/ref/heads/{branch}
//     reads a branch;
//   - a person's side (oauth.go): a GitHub App's OAuth web flow
//     (/login/oauth/authorize and /login/oauth/access_token at WebURL, with
//     state and PKCE S256, single-use codes living ten minutes, errors
//     answered 200 as GitHub does), user tokens acting as the person
//     through the App (/user, /user/installations and their repositories,
//     comments with performed_via_github_app), and private repositories
//     (SetRepoPrivate) that answer 404 to whoever may not see them;
//   - GitHub's semantics where phasegate depends on them: per_page (default
//     30, max 100) and page with Link headers; 404 and 422 with GitHub's error
//     JSON; weak ETags on every GET and 304 on a matching If-None-Match, not
//     counted against the rate limit; x-ratelimit-* headers on every answer;
//     a 65536-character cap on comment bodies and 140 on status descriptions;
//   - faults: a seeded fraction of 5xx answers (before the request is
//     processed, or after it for writes: a lost response), secondary rate
//     limits (403 or 429 with Retry-After), primary exhaustion (remaining 0
//     until x-ratelimit-reset), hanging requests and latency;
//   - a call log and accessors to the state for assertions, and a detector of
//     overlapping writes by one identity.
//
// All methods are safe for concurrent use.
package ghfake

import (
	"crypto/rsa"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultRateLimit is the primary rate limit per identity per hour, as for an
// authenticated user or installation on github.com.
const DefaultRateLimit = 5000

// Server is a fake GitHub API server.
type Server struct {
	srv *httptest.Server

	mu      sync.Mutex
	now     func() time.Time
	jwtNow  func() time.Time // checks App JWTs when set (SetJWTClock)
	webURL  string
	limit   int
	users   map[string]*user // by login
	tokens  map[string]token // by token value
	repos   map[string]*repo // by "owner/name" (lower case)
	teams   map[string]map[string]string
	apps    map[int64]*app
	inst    map[int64]int64 // installation id → app id
	rate    map[string]*rateState
	deny    map[string]bool              // logins whose writes are refused (403)
	perms   map[string]map[string]string // token permissions by lower-cased login
	ids     int64                        // shared id sequence for comments, reactions, statuses, labels, users
	comment map[int64]*comment

	treeMaxEntries, treeMaxBytes int             // SetTreeTruncation; 0: GitHub's
	codeload                     map[string]bool // tokens of the archive links handed out

	faults      Faults
	hangs       int // requests hung since SetFaults (Faults.MaxHangs)
	expireHang  func(*http.Request) bool
	failNext    []scripted
	rng         *rand.Rand
	secUntil    time.Time
	secStatus   int
	primaryCode int
	holds       []*Hold

	oauth oauthState // the OAuth web flow (oauth.go)

	calls       []Call
	active      int // requests being handled
	maxActive   int
	inflight    map[string]int
	maxInflight map[string]int
	overlaps    int
}

// New starts a fake GitHub server. Close it when done.
func New() *Server {
	s := &Server{
		now:         time.Now,
		webURL:      "https://github.com",
		limit:       DefaultRateLimit,
		users:       map[string]*user{},
		tokens:      map[string]token{},
		repos:       map[string]*repo{},
		teams:       map[string]map[string]string{},
		apps:        map[int64]*app{},
		inst:        map[int64]int64{},
		rate:        map[string]*rateState{},
		deny:        map[string]bool{},
		perms:       map[string]map[string]string{},
		ids:         1000,
		comment:     map[int64]*comment{},
		codeload:    map[string]bool{},
		rng:         rand.New(rand.NewPCG(1, 1)),
		primaryCode: http.StatusForbidden,
		inflight:    map[string]int{},
		maxInflight: map[string]int{},
		oauth:       newOAuthState(),
	}
	var h http.Handler = http.HandlerFunc(s.serve)
	if w := wrapper.Load(); w != nil {
		h = (*w)(s, h)
	}
	s.srv = httptest.NewServer(h)
	return s
}

var wrapper atomic.Pointer[func(*Server, http.Handler) http.Handler]

// SetWrapper makes New wrap the HTTP handler of every Server it starts
// from then on with wrap (nil: stop wrapping). A test's TestMain sets it
// (internal/ghfake/ghfaketest.Main) to check every request and answer
// against GitHub's OpenAPI description without ghfake importing a
// validator.
func SetWrapper(wrap func(*Server, http.Handler) http.Handler) {
	if wrap == nil {
		wrapper.Store(nil)
		return
	}
	wrapper.Store(&wrap)
}

// URL is the API base URL with a trailing slash (the server root; the fake
// also answers under /api/v3/, as GitHub Enterprise Server does).
func (s *Server) URL() string { return s.srv.URL + "/" }

// EnterpriseURL is the API base URL in GitHub Enterprise Server form
// (…/api/v3/).
func (s *Server) EnterpriseURL() string { return s.srv.URL + "/api/v3/" }

// Close shuts the server down.
func (s *Server) Close() { s.srv.Close() }

// SetClock makes the fake read the time from now (timestamps, rate-limit
// windows, Retry-After windows, JWT and token expiry). The default is
// time.Now. Share a ManualClock with the client under test to make waits
// instantaneous and deterministic.
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// SetJWTClock makes the fake check App JWTs (their iat and exp) against now
// instead of the clock of SetClock. ghinstallation signs JWTs on the real
// clock, which a test cannot replace: a test whose clock jumps ahead of real
// time (a JumpClock shared with the clients) checks the JWTs on time.Now,
// or they expire once the jumps add up to their ten minutes.
func (s *Server) SetJWTClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.jwtNow = now
}

// SetRateLimit sets the primary rate limit per identity (default 5000).
func (s *Server) SetRateLimit(limit int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit = limit
	for _, st := range s.rate {
		st.limit = limit
	}
}

type user struct {
	login string
	id    int64
	typ   string // "User" or "Bot"
	name  string // SetUserName; "" for none
}

type token struct {
	login   string
	expires time.Time // zero: never
	app     int64     // the App an installation token belongs to; 0 for a user's token
	// via is the App whose OAuth web flow issued a person's user access
	// token (user-to-server): the person acts through that App.
	via int64
}

type app struct {
	id   int64
	slug string
	key  *rsa.PublicKey
}

type rateState struct {
	limit int
	used  int
	reset time.Time
}

type repo struct {
	owner, name   string
	id            int64
	defaultBranch string
	branches      map[string]string            // branch → sha
	files         map[string]map[string][]byte // ref → path → content
	issues        map[int]*issue
	commentIDs    []int64 // every comment on its issues, oldest first
	next          int
	labels        map[string]*label // by lower-cased name
	statuses      map[string][]*status
	commits       []*commitRec
	compares      map[string]Comparison // "base...head"
	perms         map[string]perm       // by lower-cased login
	prFiles       map[int][]File
	dispatches    []Dispatch
	deployReviews []DeploymentReview  // in the order posted
	runs          []*workflowRun      // waiting on deployment protection rules, in the order requested
	activity      []Activity          // in the order recorded
	trees         map[string]*gitTree // by tree sha
	commitTrees   map[string]string   // commit sha → root tree sha (SetTree)
	blobs         map[string][]byte   // by blob sha (SetTree)
	archives      map[string][]byte   // commit sha → tarball served instead of the built one (SetArchive)
	checkRuns     []*checkRun         // in the order created
	reviews       map[int][]review
	derived       map[string]int // commit sha → files its derived tree was built from (derivedTree)
	// private: only those with access see it (SetRepoPrivate); everyone
	// else is answered 404 on it and everything under it.
	private bool
}

type perm struct {
	role string // role_name
	base string // legacy permission
}

type label struct {
	id          int64
	name, color string
}

type issue struct {
	number    int
	title     string
	body      string
	state     string
	author    string
	labels    []string // names, kept sorted case-insensitively
	comments  []int64
	createdAt time.Time
	updatedAt time.Time
	pr        *PullRequest // non-nil for pull requests
	events    []issueEvent // labeled and unlabeled, oldest first
}

// issueEvent is an entry of an issue's events (GET
// /repos/{o}/{r}/issues/{n}/events): who labelled or unlabelled it. Nobody
// can delete one.
type issueEvent struct {
	id        int64
	event     string // labeled, unlabeled
	label     string
	actor     string // "" for none recorded
	createdAt time.Time
}

type comment struct {
	id         int64
	owner      string
	repo       string
	number     int
	body       string
	author     string
	createdAt  time.Time
	updatedAt  time.Time
	reactions  []Reaction
	deleted    bool
	editedByUI bool
	// lastEdited is when the body was last edited (GraphQL lastEditedAt);
	// zero when never.
	lastEdited time.Time
	// viaID and viaSlug are the App it was posted through
	// (performed_via_github_app); 0 and "" when none.
	viaID   int64
	viaSlug string
}

type status struct {
	id                                   int64
	sha, state, context, desc, targetURL string
	creator                              string
	createdAt                            time.Time
}

type commitRec struct {
	Commit
	order int
}

// PullRequest configures a pull request (AddPullRequest).
type PullRequest struct {
	Number         int // 0: the repository's next issue number
	Title          string
	Body           string
	State          string // "open" (default) or "closed"
	Author         string
	HeadSHA        string
	HeadRef        string
	BaseSHA        string
	BaseRef        string
	Merged         bool
	MergeCommitSHA string
	Draft          bool
	// Commits are further commit SHAs of the pull request: GET
	// /repos/{o}/{r}/commits/{sha}/pulls finds the pull request by its head,
	// its merge commit or any of these.
	Commits []string
	// Unlisted keeps it out of GET /repos/{o}/{r}/commits/{sha}/pulls, as
	// GitHub's listing lags behind a pull request just opened
	// (SetPullRequestListed).
	Unlisted bool
}

// File is a changed file in a comparison, a pull request or a commit.
type File struct {
	Filename         string
	Status           string // added, modified, removed, renamed, copied, changed, unchanged
	PreviousFilename string
}

// Commit configures a commit (AddCommit). Author and Committer are GitHub
// logins; empty means the commit's e-mail address is linked to no account
// (GitHub then answers "author": null).
type Commit struct {
	SHA         string
	Author      string
	Committer   string
	AuthorName  string
	AuthorEmail string
	Message     string
	// Verified is GitHub's verdict on the commit's signature
	// (commit.verification.verified).
	Verified bool
	Date     time.Time // zero: the fake's clock when added
	Files    []File
}

// Comment is an issue comment as the fake stores it.
type Comment struct {
	ID        int64
	Owner     string
	Repo      string
	Issue     int
	Body      string
	User      string
	UserType  string
	CreatedAt time.Time
	UpdatedAt time.Time
	// ViaApp is the slug of the App it was posted through
	// (performed_via_github_app), "" when none.
	ViaApp string
}

// Issue is an issue (or pull request) as the fake stores it.
type Issue struct {
	Number        int
	Title         string
	Body          string
	State         string
	Author        string
	Labels        []string
	IsPullRequest bool
	CreatedAt     time.Time
}

// Status is a commit status as the fake stores it.
type Status struct {
	ID          int64
	SHA         string
	State       string
	Context     string
	Description string
	TargetURL   string
	Creator     string
	CreatedAt   time.Time
}

// Reaction is a reaction on an issue comment.
type Reaction struct {
	ID      int64
	User    string
	Content string
}

func key(owner, name string) string { return strings.ToLower(owner + "/" + name) }

func (s *Server) nextID() int64 {
	s.ids++
	return s.ids
}

// userLocked returns the user record for login, creating it on first use: a
// login ending in "[bot]" is a Bot, any other a User.
func (s *Server) userLocked(login string) *user {
	if login == "" {
		return &user{typ: "User"} // anonymous: never stored
	}
	k := strings.ToLower(login)
	if u, ok := s.users[k]; ok {
		return u
	}
	typ := "User"
	if strings.HasSuffix(login, "[bot]") {
		typ = "Bot"
	}
	u := &user{login: login, id: s.nextID(), typ: typ}
	s.users[k] = u
	return u
}

// AddUser registers a user with a type ("User" or "Bot"). Users are also
// created implicitly when first named.
func (s *Server) AddUser(login, typ string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.userLocked(login).typ = typ
}

// AddToken makes requests authenticated with tok act as login.
func (s *Server) AddToken(tok, login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.userLocked(login)
	s.tokens[tok] = token{login: login}
}

// DenyWrites makes every write by login answer 403 "Resource not accessible
// by integration", as for a token without the needed permission.
func (s *Server) DenyWrites(login string, deny bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deny[strings.ToLower(login)] = deny
}

// AddRepo creates a repository with its default branch.
func (s *Server) AddRepo(owner, name, defaultBranch string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.repos[key(owner, name)]; ok {
		r.defaultBranch = defaultBranch
		return
	}
	s.addRepoLocked(owner, name, defaultBranch)
}

func (s *Server) addRepoLocked(owner, name, defaultBranch string) {
	s.userLocked(owner)
	s.repos[key(owner, name)] = &repo{
		owner: owner, name: name, id: s.nextID(), defaultBranch: defaultBranch,
		branches: map[string]string{}, files: map[string]map[string][]byte{},
		issues: map[int]*issue{}, next: 1, labels: map[string]*label{},
		statuses: map[string][]*status{}, compares: map[string]Comparison{},
		perms: map[string]perm{}, prFiles: map[int][]File{},
		trees: map[string]*gitTree{}, commitTrees: map[string]string{}, blobs: map[string][]byte{},
		archives: map[string][]byte{},
	}
}

// repoLocked returns a repository for a setup helper, creating it (default
// branch "main") when the test did not add it first.
func (s *Server) repoLocked(owner, name string) *repo {
	if r, ok := s.repos[key(owner, name)]; ok {
		return r
	}
	s.addRepoLocked(owner, name, "main")
	return s.repos[key(owner, name)]
}

// SetBranch points a branch at a commit SHA.
func (s *Server) SetBranch(owner, name, branch, sha string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repoLocked(owner, name).branches[branch] = sha
}

// SetFile stores a file's content at a ref (a branch name or a SHA). An
// empty ref means the default branch.
func (s *Server) SetFile(owner, name, ref, path string, content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoLocked(owner, name)
	if ref == "" {
		ref = r.defaultBranch
	}
	if r.files[ref] == nil {
		r.files[ref] = map[string][]byte{}
	}
	r.files[ref][strings.Trim(path, "/")] = append([]byte(nil), content...)
}

// SetPermission sets a collaborator's repository role: admin, maintain,
// write, triage, read or none, or a custom role name with its base
// permission given as "custom-name:base".
func (s *Server) SetPermission(owner, name, login, role string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.userLocked(login)
	p := perm{role: role}
	if i := strings.IndexByte(role, ':'); i >= 0 {
		p.role, p.base = role[:i], role[i+1:]
	} else {
		p.base = legacyPermission(role)
	}
	s.repoLocked(owner, name).perms[strings.ToLower(login)] = p
}

// legacyPermission maps a role to the legacy "permission" field GitHub also
// returns: maintain reads as write, triage as read.
func legacyPermission(role string) string {
	switch role {
	case "admin":
		return "admin"
	case "maintain", "write":
		return "write"
	case "triage", "read":
		return "read"
	default:
		return "none"
	}
}

// AddTeamMember records login's membership of org/slug with a state
// ("active" or "pending").
func (s *Server) AddTeamMember(org, slug, login, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.userLocked(login)
	k := strings.ToLower(org + "/" + slug)
	if s.teams[k] == nil {
		s.teams[k] = map[string]string{}
	}
	s.teams[k][strings.ToLower(login)] = state
}

// AddIssue creates an open issue authored by author and returns its number.
func (s *Server) AddIssue(owner, name, title, body, author string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoLocked(owner, name)
	s.userLocked(author)
	return s.addIssueLocked(r, title, body, author, nil).number
}

func (s *Server) addIssueLocked(r *repo, title, body, author string, labels []string) *issue {
	now := s.now().UTC()
	is := &issue{number: r.next, title: title, body: body, state: "open", author: author, createdAt: now, updatedAt: now}
	r.next++
	for _, l := range labels {
		s.labelIssueLocked(r, is, l, author)
	}
	r.issues[is.number] = is
	return is
}

// LabelIssue adds labels to an existing issue (creating the labels in the
// repository when missing), as a person or an earlier run would have.
func (s *Server) LabelIssue(owner, name string, number int, labels ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoLocked(owner, name)
	is, ok := r.issues[number]
	if !ok {
		panic(fmt.Sprintf("ghfake: LabelIssue: no issue %s/%s#%d", owner, name, number))
	}
	for _, l := range labels {
		s.labelIssueLocked(r, is, l, "")
	}
}

// UnlabelIssue removes a label from an issue, as a person would.
func (s *Server) UnlabelIssue(owner, name string, number int, label string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoLocked(owner, name)
	is, ok := r.issues[number]
	if !ok {
		panic(fmt.Sprintf("ghfake: UnlabelIssue: no issue %s/%s#%d", owner, name, number))
	}
	kept := is.labels[:0]
	for _, l := range is.labels {
		if !strings.EqualFold(l, label) {
			kept = append(kept, l)
		} else {
			s.issueEventLocked(is, "unlabeled", l, "")
		}
	}
	is.labels = kept
}

// AddPullRequest creates a pull request (which is also an issue) and returns
// its number.
func (s *Server) AddPullRequest(owner, name string, pr PullRequest) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoLocked(owner, name)
	if pr.Number == 0 {
		pr.Number = r.next
	}
	if pr.Number >= r.next {
		r.next = pr.Number + 1
	}
	if pr.State == "" {
		pr.State = "open"
	}
	if pr.HeadRef == "" {
		pr.HeadRef = fmt.Sprintf("feature-%d", pr.Number)
	}
	if pr.BaseRef == "" {
		pr.BaseRef = r.defaultBranch
	}
	if pr.Title == "" {
		pr.Title = fmt.Sprintf("Pull request %d", pr.Number)
	}
	s.userLocked(pr.Author)
	now := s.now().UTC()
	p := pr
	p.Commits = append([]string(nil), pr.Commits...)
	r.issues[pr.Number] = &issue{number: pr.Number, title: pr.Title, body: pr.Body, state: pr.State,
		author: pr.Author, createdAt: now, updatedAt: now, pr: &p}
	// Somebody pushed the head branch: unless a test pushed it itself
	// (Push), the pull request's author did, as GitHub's activity records.
	if _, pushed := r.branches[pr.HeadRef]; !pushed && pr.HeadSHA != "" {
		s.pushLocked(r, Push{Ref: pr.HeadRef, After: pr.HeadSHA, Actor: pr.Author})
	}
	return pr.Number
}

// SetPullRequestHead moves a pull request's head (a push to its branch).
func (s *Server) SetPullRequestHead(owner, name string, number int, headSHA string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoLocked(owner, name)
	if is := r.issues[number]; is != nil && is.pr != nil {
		is.pr.Commits = append(is.pr.Commits, is.pr.HeadSHA)
		is.pr.HeadSHA = headSHA
		// The pull request's author pushed it (Push names anyone else).
		s.pushLocked(r, Push{Ref: is.pr.HeadRef, After: headSHA, Actor: is.pr.Author})
	}
}

// SetPullRequestFiles sets the files a pull request changes.
func (s *Server) SetPullRequestFiles(owner, name string, number int, files []File) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repoLocked(owner, name).prFiles[number] = append([]File(nil), files...)
}

// AddPullRequestFile adds a file to those a pull request changes.
func (s *Server) AddPullRequestFile(owner, name string, number int, f File) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoLocked(owner, name)
	r.prFiles[number] = append(r.prFiles[number], f)
}

// SetCompare sets the files changed between base and head; the
// comparison's status is "ahead" (SetComparison sets the rest).
func (s *Server) SetCompare(owner, name, base, head string, files []File) {
	s.SetComparison(owner, name, base, head, Comparison{Files: files})
}

// AddCommit records a commit. Commits listed for a path are those whose
// Files name it, newest (by Date, then by order added) first; the fake keeps
// no ancestry, so the sha parameter of the commit list only has to name a
// known branch or commit.
func (s *Server) AddCommit(owner, name string, c Commit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoLocked(owner, name)
	if c.Date.IsZero() {
		c.Date = s.now().UTC()
	}
	if c.Author != "" {
		s.userLocked(c.Author)
	}
	if c.Committer != "" {
		s.userLocked(c.Committer)
	}
	c.Files = append([]File(nil), c.Files...)
	r.commits = append(r.commits, &commitRec{Commit: c, order: len(r.commits)})
}

// AddComment posts a comment on an issue as login (for example a human's
// "/resolve" command) and returns its id. A missing issue is created with
// that number.
func (s *Server) AddComment(owner, name string, number int, login, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoLocked(owner, name)
	is, ok := r.issues[number]
	if !ok {
		now := s.now().UTC()
		is = &issue{number: number, title: fmt.Sprintf("Issue %d", number), state: "open", author: login,
			createdAt: now, updatedAt: now}
		r.issues[number] = is
		if number >= r.next {
			r.next = number + 1
		}
	}
	s.userLocked(login)
	return s.addCommentLocked(r, is, login, body).id
}

func (s *Server) addCommentLocked(r *repo, is *issue, login, body string) *comment {
	now := s.now().UTC()
	c := &comment{id: s.nextID(), owner: r.owner, repo: r.name, number: is.number, body: body,
		author: login, createdAt: now, updatedAt: now}
	s.comment[c.id] = c
	is.comments = append(is.comments, c.id)
	r.commentIDs = append(r.commentIDs, c.id) // ids only grow: in order
	is.updatedAt = now
	return c
}

// EditComment changes a comment's body (as a person editing it in the UI
// would: the way to simulate tampering with a phasegate comment).
func (s *Server) EditComment(id int64, body string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.comment[id]
	if !ok || c.deleted {
		return false
	}
	c.body = body
	c.updatedAt = editTime(s.now().UTC(), c.createdAt)
	c.lastEdited = s.now().UTC()
	c.editedByUI = true
	return true
}

// editTime is a comment's updated_at after an edit at now. A person's edit
// comes after the post; with a test's manual clock that has not moved, the
// edit is put a second later, so that updated_at shows it as GitHub's does.
func editTime(now, created time.Time) time.Time {
	if !now.After(created) {
		return created.Add(time.Second)
	}
	return now
}

// TouchComment moves a comment's updated_at without editing it, as GitHub
// may for reasons other than an edit (GraphQL's lastEditedAt stays unset):
// for tests that an untouched body is not taken for an edit.
func (s *Server) TouchComment(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.comment[id]
	if !ok || c.deleted {
		return false
	}
	c.updatedAt = editTime(s.now().UTC(), c.createdAt)
	return true
}

// DeleteComment deletes a comment, as a person with write access can in the
// UI: it vanishes from every listing.
func (s *Server) DeleteComment(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.comment[id]
	if !ok || c.deleted {
		return false
	}
	c.deleted = true
	return true
}

// Comments returns the comments on an issue, oldest first.
func (s *Server) Comments(owner, name string, number int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.repos[key(owner, name)]
	if !ok {
		return nil
	}
	is, ok := r.issues[number]
	if !ok {
		return nil
	}
	var out []Comment
	for _, id := range is.comments {
		if c := s.comment[id]; c != nil && !c.deleted {
			out = append(out, s.exportComment(c))
		}
	}
	return out
}

// Comment returns one comment by id.
func (s *Server) Comment(id int64) (Comment, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.comment[id]
	if !ok || c.deleted {
		return Comment{}, false
	}
	return s.exportComment(c), true
}

func (s *Server) exportComment(c *comment) Comment {
	return Comment{ID: c.id, Owner: c.owner, Repo: c.repo, Issue: c.number, Body: c.body, User: c.author,
		UserType: s.userLocked(c.author).typ, CreatedAt: c.createdAt, UpdatedAt: c.updatedAt, ViaApp: c.viaSlug}
}

// Reactions returns the reactions on a comment, in the order given.
func (s *Server) Reactions(commentID int64) []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.comment[commentID]
	if !ok {
		return nil
	}
	return append([]Reaction(nil), c.reactions...)
}

// Labels returns the names of the labels on an issue, sorted.
func (s *Server) Labels(owner, name string, number int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.repos[key(owner, name)]
	if !ok || r.issues[number] == nil {
		return nil
	}
	return append([]string(nil), r.issues[number].labels...)
}

// Issue returns an issue (or pull request) by number.
func (s *Server) Issue(owner, name string, number int) (Issue, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.repos[key(owner, name)]
	if !ok || r.issues[number] == nil {
		return Issue{}, false
	}
	return exportIssue(r.issues[number]), true
}

// Issues returns every issue and pull request of a repository by number.
func (s *Server) Issues(owner, name string) []Issue {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.repos[key(owner, name)]
	if !ok {
		return nil
	}
	out := make([]Issue, 0, len(r.issues))
	for _, is := range r.issues {
		out = append(out, exportIssue(is))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out
}

func exportIssue(is *issue) Issue {
	return Issue{Number: is.number, Title: is.title, Body: is.body, State: is.state, Author: is.author,
		Labels: append([]string(nil), is.labels...), IsPullRequest: is.pr != nil, CreatedAt: is.createdAt}
}

// SetIssueState opens or closes an issue ("open" or "closed").
func (s *Server) SetIssueState(owner, name string, number int, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if is := s.repoLocked(owner, name).issues[number]; is != nil {
		is.state = state
		if is.pr != nil {
			is.pr.State = state
		}
	}
}

// Statuses returns the statuses set on sha, oldest first.
func (s *Server) Statuses(owner, name, sha string) []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.repos[key(owner, name)]
	if !ok {
		return nil
	}
	var out []Status
	for _, st := range r.statuses[sha] {
		out = append(out, exportStatus(st))
	}
	return out
}

// LatestStatus returns the newest status of a context on sha.
func (s *Server) LatestStatus(owner, name, sha, context string) (Status, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.repos[key(owner, name)]
	if !ok {
		return Status{}, false
	}
	list := r.statuses[sha]
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].context == context {
			return exportStatus(list[i]), true
		}
	}
	return Status{}, false
}

func exportStatus(st *status) Status {
	return Status{ID: st.id, SHA: st.sha, State: st.state, Context: st.context, Description: st.desc,
		TargetURL: st.targetURL, Creator: st.creator, CreatedAt: st.createdAt}
}

// RateRemaining returns the primary rate limit left for login.
func (s *Server) RateRemaining(login string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.rateLocked(strings.ToLower(login))
	return st.limit - st.used
}

func (s *Server) rateLocked(identity string) *rateState {
	st, ok := s.rate[identity]
	now := s.now()
	if !ok {
		st = &rateState{limit: s.limit, reset: now.Add(time.Hour)}
		s.rate[identity] = st
	}
	if !now.Before(st.reset) {
		st.used = 0
		st.reset = now.Add(time.Hour)
	}
	return st
}
