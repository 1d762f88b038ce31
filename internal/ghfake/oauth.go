package ghfake

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A person's side of GitHub: a GitHub App's OAuth web flow (user-to-server)
// and what the token it issues can do.
//
//	GET  /login/oauth/authorize         the browser's consent page: redirects to redirect_uri?code&state
//	POST /login/oauth/access_token      trades the code (client credentials, PKCE verifier) for a token
//	GET  /user                          the person the token acts as
//	GET  /user/installations            the App's installations the person can access
//	GET  /user/installations/{id}/repositories   their repositories the person can access
//	DELETE /applications/{client_id}/token       the App revokes a person's token (basic auth: its client)
//
// The two /login/oauth endpoints are GitHub's web host's (github.com, or a
// GitHub Enterprise Server's root), not the REST API's, and GitHub's OpenAPI
// description does not cover them (ghfaketest lets them through unchecked,
// as "oauth-web"); the fake serves them at its root (WebURL) as GitHub
// documents them:
// https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-user-access-token-for-a-github-app
//
// Like GitHub, the token endpoint answers a refusal with 200 and an error
// in the body (error, error_description, error_uri), form-encoded unless
// the request accepts application/json. A code is single-use, lives ten
// minutes, and is bound to the client, to the redirect_uri it was issued
// for and to the PKCE challenge (S256) it was asked with: a wrong
// code_verifier is refused (bad_verification_code, the fake's choice of
// code: GitHub does not document the one it uses). A token lasts eight
// hours (expires_in 28800, as for an App with expiring user tokens); its
// refresh token is handed out but not honoured.
//
// A user token acts as the person through the App: it sees a private
// repository only when the person has access to it (owner, or a
// permission from SetPermission) and an installation of the App covers it;
// anyone else is answered 404 on the repository and everything under it,
// exactly as for one that does not exist. A comment it creates is the
// person's, with performed_via_github_app set to the App.

// oauthState is the OAuth web flow's state, guarded by Server.mu.
type oauthState struct {
	clients map[string]*oauthClient // by client_id
	codes   map[string]*oauthCode   // by code
	browser string                  // the browser's signed-in person; "" declines
}

type oauthClient struct {
	appID    int64
	id       string
	secret   string
	callback string
}

type oauthCode struct {
	client    string
	redirect  string // "" when the authorize request named none
	challenge string // "" when it asked for no PKCE
	login     string
	expires   time.Time
	used      bool
}

// codeLifetime is how long GitHub accepts an authorization code.
const codeLifetime = 10 * time.Minute

// UserTokenLifetime is the lifetime of a user access token of an App with
// expiring user tokens (GitHub's default).
const UserTokenLifetime = 8 * time.Hour

func newOAuthState() oauthState {
	return oauthState{clients: map[string]*oauthClient{}, codes: map[string]*oauthCode{}}
}

// WebURL is the fake's web root (no trailing slash), where it serves
// /login/oauth/authorize and /login/oauth/access_token, as
// ghclient derives it from EnterpriseURL. (The html_url links in
// its API answers still name https://github.com.)
func (s *Server) WebURL() string { return s.srv.URL }

// SetOAuthApp gives App appID OAuth client credentials and its callback
// URL (the App registered with AddApp or AddAppToken, or registered now
// with slug "app-<id>").
func (s *Server) SetOAuthApp(appID int64, clientID, clientSecret, callbackURL string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.apps[appID]; !ok {
		s.apps[appID] = &app{id: appID, slug: fmt.Sprintf("app-%d", appID)}
		s.userLocked(s.apps[appID].slug + "[bot]").typ = "Bot"
	}
	s.oauth.clients[clientID] = &oauthClient{appID: appID, id: clientID, secret: clientSecret, callback: callbackURL}
}

// SetOAuthUser signs the fake's browser in as login: the next authorize
// requests consent as that person (a GitHub App's consent is implicit once
// given). "" makes the person decline: GitHub redirects with
// error=access_denied.
func (s *Server) SetOAuthUser(login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if login != "" {
		s.userLocked(login)
	}
	s.oauth.browser = login
}

// AddUserToken makes tok a user access token of login issued through App
// appID's OAuth flow (expiring after UserTokenLifetime), as Exchange would
// return: for tests that need a person's token without the browser steps.
func (s *Server) AddUserToken(tok, login string, appID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.userLocked(login)
	s.tokens[tok] = token{login: login, via: appID, expires: s.now().Add(UserTokenLifetime)}
}

// SetUserName sets the display name /user answers for login.
func (s *Server) SetUserName(login, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.userLocked(login).name = name
}

// SetRepoPrivate makes a repository private (or public again): only its
// owner, accounts with a permission on it (SetPermission) and tokens of an
// App installed on it see it; everyone else gets 404.
func (s *Server) SetRepoPrivate(owner, name string, private bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repoLocked(owner, name).private = private
}

// serveOAuth answers the web flow's two endpoints.
func (s *Server) serveOAuth(w http.ResponseWriter, r *http.Request, path string) {
	call := Call{Method: r.Method, Path: path, Query: r.URL.RawQuery, UserAgent: r.UserAgent()}
	var status int
	switch {
	case path == "/login/oauth/authorize" && r.Method == http.MethodGet:
		status = s.authorize(w, r)
	case path == "/login/oauth/access_token" && r.Method == http.MethodPost:
		status = s.exchange(w, r)
	default:
		status = http.StatusNotFound
		http.NotFound(w, r)
	}
	s.mu.Lock()
	call.Status = status
	s.logLocked(call)
	s.mu.Unlock()
}

// authorize is GitHub's consent page for a signed-in person who consents
// (or, with no person, declines): a redirect to redirect_uri with a code
// and the state, or with an error.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) int {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	cl := s.oauth.clients[q.Get("client_id")]
	if cl == nil {
		http.Error(w, "Not Found", http.StatusNotFound) // GitHub's 404 page
		return http.StatusNotFound
	}
	redirect := q.Get("redirect_uri")
	back := func(target string, v url.Values) int {
		if st := q.Get("state"); st != "" {
			v.Set("state", st)
		}
		sep := "?"
		if strings.Contains(target, "?") {
			sep = "&"
		}
		http.Redirect(w, r, target+sep+v.Encode(), http.StatusFound)
		return http.StatusFound
	}
	oops := func(target, code, desc string) int {
		return back(target, url.Values{"error": {code}, "error_description": {desc},
			"error_uri": {"https://docs.github.com/apps/managing-oauth-apps/troubleshooting-authorization-request-errors/#" + strings.ReplaceAll(code, "_", "-")}})
	}
	switch {
	case redirect != "" && !callbackMatches(cl.callback, redirect):
		return oops(cl.callback, "redirect_uri_mismatch", "The redirect_uri MUST match the registered callback URL for this application.")
	case q.Get("code_challenge") != "" && q.Get("code_challenge_method") != "S256":
		return oops(orDefault(redirect, cl.callback), "invalid_request", "code_challenge_method must be S256.")
	case s.oauth.browser == "":
		return oops(orDefault(redirect, cl.callback), "access_denied", "The user has denied your application access.")
	}
	code := randomHex(10)
	s.oauth.codes[code] = &oauthCode{client: cl.id, redirect: redirect, challenge: q.Get("code_challenge"),
		login: s.oauth.browser, expires: s.now().Add(codeLifetime)}
	return back(orDefault(redirect, cl.callback), url.Values{"code": {code}})
}

func orDefault(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

// callbackMatches is GitHub's rule for a redirect_uri: the callback URL's
// scheme, host and port exactly, and its path or a path below it.
func callbackMatches(callback, redirect string) bool {
	c, err1 := url.Parse(callback)
	u, err2 := url.Parse(redirect)
	if err1 != nil || err2 != nil || c.Scheme != u.Scheme || c.Host != u.Host || u.User != nil {
		return false
	}
	cp := strings.TrimSuffix(c.Path, "/")
	return u.Path == c.Path || u.Path == cp || strings.HasPrefix(u.Path, cp+"/")
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// exchange is POST /login/oauth/access_token.
func (s *Server) exchange(w http.ResponseWriter, r *http.Request) int {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	form, _ := url.ParseQuery(string(body))
	if id, secret, ok := r.BasicAuth(); ok && form.Get("client_id") == "" {
		form.Set("client_id", id)
		form.Set("client_secret", secret)
	}
	s.mu.Lock()
	answer, problem := s.exchangeLocked(form)
	s.mu.Unlock()
	if problem != "" {
		answer = map[string]string{"error": problem, "error_description": exchangeErrors[problem],
			"error_uri": "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#" + strings.ReplaceAll(problem, "_", "-")}
	}
	if strings.Contains(r.Header.Get("Accept"), "application/json") {
		out := map[string]any{}
		for k, v := range answer {
			out[k] = v
			if n, err := strconv.Atoi(v); err == nil && strings.HasSuffix(k, "expires_in") {
				out[k] = n
			}
		}
		b, _ := json.Marshal(out)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write(b)
		return http.StatusOK
	}
	v := url.Values{}
	for k, x := range answer {
		v.Set(k, x)
	}
	w.Header().Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	_, _ = io.WriteString(w, v.Encode())
	return http.StatusOK
}

var exchangeErrors = map[string]string{
	"incorrect_client_credentials": "The client_id and/or client_secret passed are incorrect.",
	"redirect_uri_mismatch":        "The redirect_uri MUST match the registered callback URL for this application.",
	"bad_verification_code":        "The code passed is incorrect or expired.",
	"bad_code_verifier":            "The code_verifier does not match the code_challenge.",
}

// exchangeLocked checks a token request and mints the token, or names the
// error GitHub would answer.
func (s *Server) exchangeLocked(form url.Values) (map[string]string, string) {
	cl := s.oauth.clients[form.Get("client_id")]
	if cl == nil || form.Get("client_secret") != cl.secret {
		return nil, "incorrect_client_credentials"
	}
	c := s.oauth.codes[form.Get("code")]
	if c == nil || c.used || c.client != cl.id || !s.now().Before(c.expires) {
		return nil, "bad_verification_code"
	}
	c.used = true // single-use, whatever follows
	if c.redirect != "" && form.Get("redirect_uri") != c.redirect {
		return nil, "redirect_uri_mismatch"
	}
	if c.challenge != "" {
		sum := sha256.Sum256([]byte(form.Get("code_verifier")))
		if form.Get("code_verifier") == "" || base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge {
			return nil, "bad_code_verifier"
		}
	}
	tok := "ghu_" + randomHex(18)
	s.tokens[tok] = token{login: c.login, via: cl.appID, expires: s.now().Add(UserTokenLifetime)}
	return map[string]string{
		"access_token": tok, "token_type": "bearer", "scope": "",
		"expires_in":    strconv.Itoa(int(UserTokenLifetime / time.Second)),
		"refresh_token": "ghr_" + randomHex(18), "refresh_token_expires_in": "15897600",
	}, ""
}

// ---- what a token may see ----

// tokenOf is the token the request authenticated with.
func (s *Server) tokenOf(q *req) (token, string) {
	_, cred, _ := strings.Cut(q.r.Header.Get("Authorization"), " ")
	return s.tokens[cred], cred
}

// actingApp is the App a write is performed through: the App of a
// person's user token, or of an installation token (github-actions for a
// workflow's token); 0 and "" for a person's own token.
func (s *Server) actingApp(q *req) (int64, string) {
	t, _ := s.tokenOf(q)
	if t.via != 0 {
		if a := s.apps[t.via]; a != nil {
			return a.id, a.slug
		}
	}
	return s.tokenApp(q)
}

// viaJSON is a comment's performed_via_github_app: the App, or null.
func (s *Server) viaJSON(q *req, c *comment) any {
	if c.viaSlug == "" {
		return nil
	}
	return s.appJSON(q, c.viaID, c.viaSlug)
}

// repoAccessLocked refuses a request under /repos/{owner}/{repo} that its
// identity may not make: 404 for a private repository it cannot see
// (exactly GitHub's answer for one that does not exist), 403 for a write
// through an App that is not installed on the repository.
func (s *Server) repoAccessLocked(q *req) *reply {
	if len(q.segs) == 0 || q.segs[0] != "repos" {
		return nil
	}
	rp, ok := s.repos[key(q.params["owner"], q.params["repo"])]
	if !ok {
		return nil
	}
	t, cred := s.tokenOf(q)
	if rp.private && !s.seesPrivateLocked(q, t, cred, rp) {
		rep := notFound()
		return &rep
	}
	if t.via != 0 && isWrite(q.r.Method) && !s.appCoversLocked(t.via, rp) {
		rep := errReply(http.StatusForbidden, "Resource not accessible by integration")
		return &rep
	}
	return nil
}

// seesPrivateLocked reports whether the request's identity sees a private
// repository.
func (s *Server) seesPrivateLocked(q *req, t token, cred string, rp *repo) bool {
	switch {
	case q.login == "" || strings.HasPrefix(q.login, "app:"):
		return false
	case t.app != 0:
		if inst, ok := s.installationOf(q); ok && strings.HasPrefix(cred, "ghs_fake") {
			return s.instCovers(inst, rp)
		}
		return true // a token of AddAppToken: no installation to limit it
	case s.userLocked(q.login).typ == "Bot":
		return true // a workflow's token (github-actions[bot]) reads its repository
	case t.via != 0:
		return s.userAccessLocked(q.login, rp) && s.appCoversLocked(t.via, rp)
	}
	return s.userAccessLocked(q.login, rp)
}

// userAccessLocked reports whether login has explicit access to rp: its
// owner, or a permission on it.
func (s *Server) userAccessLocked(login string, rp *repo) bool {
	if strings.EqualFold(login, rp.owner) {
		return true
	}
	p, ok := rp.perms[strings.ToLower(login)]
	return ok && p.base != "none" && p.base != ""
}

// appCoversLocked reports whether an installation of appID covers rp.
func (s *Server) appCoversLocked(appID int64, rp *repo) bool {
	for inst, a := range s.inst {
		if a == appID && s.instCovers(inst, rp) {
			return true
		}
	}
	return false
}

// instCovers reports whether installation inst covers rp (every repository
// unless SetInstallationRepos named them).
func (s *Server) instCovers(inst int64, rp *repo) bool {
	h := s.hooks()
	h.mu.Lock()
	defer h.mu.Unlock()
	names, selected := h.instRepos[inst]
	if !selected {
		return true
	}
	for _, n := range names {
		if strings.EqualFold(n, rp.owner+"/"+rp.name) {
			return true
		}
	}
	return false
}

// ---- /user ----

func init() {
	routes = append(routes,
		r("GET", "user", (*Server).getUser),
		r("GET", "user/installations", (*Server).userInstallations),
		r("GET", "user/installations/:id/repositories", (*Server).userInstallationRepos),
	)
}

// personOf is the person a request acts as, or the reply refusing it: a
// request without a token, or with an App's own or installation token.
func (s *Server) personOf(q *req) (token, *reply) {
	t, _ := s.tokenOf(q)
	switch {
	case q.login == "":
		rep := errReply(http.StatusUnauthorized, "Requires authentication")
		return t, &rep
	case t.app != 0 || strings.HasPrefix(q.login, "app:"):
		rep := errReply(http.StatusForbidden, "Resource not accessible by integration")
		return t, &rep
	}
	return t, nil
}

func (s *Server) getUser(q *req) reply {
	if _, bad := s.personOf(q); bad != nil {
		return *bad
	}
	u := s.userLocked(q.login)
	m := s.simpleUserJSON(q, u.login).(map[string]any)
	var name any
	if u.name != "" {
		name = u.name
	}
	epoch := ts(time.Unix(1600000000, 0))
	for k, v := range map[string]any{
		"name": name, "company": nil, "blog": "", "location": nil, "email": nil, "hireable": nil, "bio": nil,
		"public_repos": 0, "public_gists": 0, "followers": 0, "following": 0, "created_at": epoch, "updated_at": epoch,
		"private_gists": 0, "total_private_repos": 0, "owned_private_repos": 0, "disk_usage": 0, "collaborators": 0,
		"two_factor_authentication": true, "user_view_type": "private",
	} {
		m[k] = v
	}
	return reply{status: 200, body: m}
}

// userInstallationIDs are the installations the person can access, of the
// App their token was issued through (every App's for a token of their
// own): installed on their account, or covering a repository they have
// access to.
func (s *Server) userInstallationIDs(q *req, t token) []int64 {
	var ids []int64
	for inst, appID := range s.inst {
		if t.via != 0 && appID != t.via {
			continue
		}
		h := s.hooks()
		h.mu.Lock()
		account := h.instAccount[inst]
		h.mu.Unlock()
		ok := strings.EqualFold(account, q.login)
		for _, rp := range s.repos {
			ok = ok || (s.instCovers(inst, rp) && s.userAccessLocked(q.login, rp))
		}
		if ok {
			ids = append(ids, inst)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

func (s *Server) userInstallations(q *req) reply {
	t, bad := s.personOf(q)
	if bad != nil {
		return *bad
	}
	ids := s.userInstallationIDs(q, t)
	items := make([]any, 0, len(ids))
	for _, id := range ids {
		items = append(items, s.installationJSON(q, id))
	}
	return s.pagedObject(q, "installations", items, nil)
}

func (s *Server) userInstallationRepos(q *req) reply {
	t, bad := s.personOf(q)
	if bad != nil {
		return *bad
	}
	inst, err := strconv.ParseInt(q.params["id"], 10, 64)
	listed := false
	for _, id := range s.userInstallationIDs(q, t) {
		listed = listed || id == inst
	}
	if err != nil || !listed {
		return notFound()
	}
	var repos []*repo
	for _, rp := range s.repos {
		if s.instCovers(inst, rp) && s.userAccessLocked(q.login, rp) {
			repos = append(repos, rp)
		}
	}
	sort.Slice(repos, func(i, j int) bool { return key(repos[i].owner, repos[i].name) < key(repos[j].owner, repos[j].name) })
	items := make([]any, 0, len(repos))
	for _, rp := range repos {
		items = append(items, s.repoJSON(q, rp))
	}
	h := s.hooks()
	h.mu.Lock()
	_, selected := h.instRepos[inst]
	h.mu.Unlock()
	return s.pagedObject(q, "repositories", items, map[string]any{"repository_selection": map[bool]string{true: "selected", false: "all"}[selected]})
}

// pagedObject is GitHub's paginated object answer: {"total_count", field:
// one page of items, extra…}, with the Link header of a paginated list.
func (s *Server) pagedObject(q *req, field string, items []any, extra map[string]any) reply {
	page, perPage := pageParams(q.r)
	last := max(1, (len(items)+perPage-1)/perPage)
	lo := min((page-1)*perPage, len(items))
	hi := min(lo+perPage, len(items))
	body := map[string]any{"total_count": len(items), field: items[lo:hi]}
	for k, v := range extra {
		body[k] = v
	}
	rep := reply{status: 200, body: body}
	if l := linkHeader(q.r, page, perPage, last); l != "" {
		rep.header = http.Header{"Link": {l}}
	}
	return rep
}

// ---- the App's OAuth client: revoking a token ----

func init() {
	routes = append(routes, r("DELETE", "applications/:client_id/token", (*Server).deleteAppToken))
}

// oauthClientLocked authenticates an App's OAuth client by its basic
// credentials (client_id:client_secret), as "oauth:<client_id>".
func (s *Server) oauthClientLocked(r *http.Request) (login, fail string) {
	id, secret, ok := r.BasicAuth()
	c := s.oauth.clients[id]
	if !ok || c == nil || subtle.ConstantTimeCompare([]byte(secret), []byte(c.secret)) != 1 {
		return "", "Bad credentials"
	}
	return "oauth:" + id, ""
}

// deleteAppToken revokes a user access token issued through the client's
// App (204): it stops working at once, everywhere. Another client's path,
// or a token that is not one of the App's (unknown, revoked already,
// another App's), is answered 404.
func (s *Server) deleteAppToken(q *req) reply {
	id := q.params["client_id"]
	if q.login != "oauth:"+id {
		return notFound()
	}
	var body struct {
		AccessToken string `json:"access_token"`
	}
	if err := q.decode(&body); err != nil || body.AccessToken == "" {
		return validationFailed("Authorization", "access_token", "missing_field", "")
	}
	t, ok := s.tokens[body.AccessToken]
	if !ok || t.via == 0 || t.via != s.oauth.clients[id].appID {
		return notFound()
	}
	delete(s.tokens, body.AccessToken)
	return reply{status: 204}
}
