package web

import (
	"bytes"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/testutil"
)

// signIn runs /login and /oauth/callback and returns the callback's
// response and the state cookie /login set.
func signIn(t *testing.T, f *fixture, next string) (*http.Response, []*http.Cookie) {
	t.Helper()
	w := f.do("GET", "/login?next="+url.QueryEscape(next), nil, nil)
	if w.Code != http.StatusFound {
		t.Fatalf("/login: %d", w.Code)
	}
	loc, _ := url.Parse(w.Header().Get("Location"))
	state := loc.Query().Get("state")
	cookies := w.Result().Cookies()
	if len(cookies) != 1 || cookies[0].Path != "/oauth" || !cookies[0].HttpOnly || !cookies[0].Secure || cookies[0].SameSite != http.SameSiteLaxMode {
		t.Fatalf("state cookie: %+v", cookies)
	}
	var st oauthState
	if !f.p.states.open(cookies[0].Value, &st) || st.State != state {
		t.Fatal("state cookie does not hold the state")
	}
	f.oauth.codes["good"] = st.Verifier
	cb := f.do("GET", "/oauth/callback?code=good&state="+url.QueryEscape(state), nil, nil, cookies[0])
	return cb.Result(), cookies
}

func sessionCookieOf(f *fixture, resp *http.Response) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == f.p.sessionCookie && c.MaxAge > 0 {
			return c
		}
	}
	return nil
}

func TestSignIn(t *testing.T) {
	f := newFixture(t)
	f.oauth.tokenExp = f.now.Add(2 * time.Hour)
	resp, _ := signIn(t, f, "/acme/app/issues/7")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/acme/app/issues/7" {
		t.Fatalf("callback: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	c := sessionCookieOf(f, resp)
	if c == nil {
		t.Fatal("no session cookie")
	}
	if c.Name != "__Host-phasegate_session" || c.Path != "/" || !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteLaxMode {
		t.Errorf("session cookie attributes: %+v", c)
	}
	if c.MaxAge != int((2 * time.Hour).Seconds()) {
		t.Errorf("session lasts %ds, want the token's 2h", c.MaxAge)
	}
	s := f.sess(t, c)
	if s.Login != "alice" || s.Token != testToken || s.Expires != f.now.Add(2*time.Hour).Unix() {
		t.Errorf("session %+v", s)
	}
	w := f.do("GET", "/acme/app/issues/7", nil, nil, c)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "Ship the plan?") {
		t.Errorf("issue page with the new session: %d", w.Code)
	}
}

func TestCallbackRefused(t *testing.T) {
	tests := []struct {
		name   string
		query  func(state string) string
		cookie func(f *fixture, c *http.Cookie) *http.Cookie
		want   int
	}{
		{name: "forged state", query: func(string) string { return "code=good&state=forged" }, want: http.StatusBadRequest},
		{name: "no state", query: func(string) string { return "code=good" }, want: http.StatusBadRequest},
		{name: "missing state cookie", query: func(s string) string { return "code=good&state=" + s },
			cookie: func(*fixture, *http.Cookie) *http.Cookie { return nil }, want: http.StatusBadRequest},
		{name: "state cookie of another sign-in", query: func(s string) string { return "code=good&state=" + s },
			cookie: func(f *fixture, c *http.Cookie) *http.Cookie {
				v, _ := f.p.states.seal(oauthState{State: "other", Verifier: "v", Next: "/inbox", Expires: f.now.Add(time.Minute).Unix()})
				return &http.Cookie{Name: c.Name, Value: v}
			}, want: http.StatusBadRequest},
		{name: "expired state cookie", query: func(s string) string { return "code=good&state=" + s },
			cookie: func(f *fixture, c *http.Cookie) *http.Cookie { f.now = f.now.Add(stateTTL); return c }, want: http.StatusBadRequest},
		{name: "session cookie as state cookie", query: func(s string) string { return "code=good&state=" + s },
			cookie: func(f *fixture, c *http.Cookie) *http.Cookie {
				return &http.Cookie{Name: c.Name, Value: f.cookie(t).Value}
			}, want: http.StatusBadRequest},
		{name: "denied on GitHub", query: func(s string) string { return "error=access_denied&state=" + s }, want: http.StatusBadRequest},
		{name: "code not exchanged", query: func(s string) string { return "code=bad&state=" + s }, want: http.StatusBadGateway},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			w := f.do("GET", "/login", nil, nil)
			loc, _ := url.Parse(w.Header().Get("Location"))
			state := loc.Query().Get("state")
			c := w.Result().Cookies()[0]
			var st oauthState
			f.p.states.open(c.Value, &st)
			f.oauth.codes["good"] = st.Verifier
			if tt.cookie != nil {
				c = tt.cookie(f, c)
			}
			cb := f.do("GET", "/oauth/callback?"+tt.query(url.QueryEscape(state)), nil, nil, c)
			if cb.Code != tt.want {
				t.Errorf("status %d, want %d", cb.Code, tt.want)
			}
			if sessionCookieOf(f, cb.Result()) != nil {
				t.Error("a session was set")
			}
		})
	}
}

func TestSessionRejected(t *testing.T) {
	tests := []struct {
		name   string
		cookie func(t *testing.T, f *fixture) *http.Cookie
	}{
		{name: "none", cookie: func(*testing.T, *fixture) *http.Cookie { return nil }},
		{name: "expired", cookie: func(t *testing.T, f *fixture) *http.Cookie {
			c := f.cookie(t)
			f.now = f.now.Add(MaxSessionTTL)
			return c
		}},
		{name: "token expired", cookie: func(t *testing.T, f *fixture) *http.Cookie {
			s := newSession(f.user.viewer, Token{AccessToken: testToken, Expiry: f.now.Add(time.Hour)}, f.now, MaxSessionTTL)
			v, _ := f.p.sessions.seal(s)
			f.now = f.now.Add(time.Hour)
			return &http.Cookie{Name: f.p.sessionCookie, Value: v}
		}},
		{name: "tampered", cookie: func(t *testing.T, f *fixture) *http.Cookie {
			// Flip one bit of the sealed bytes (not of their text, where a
			// character can map back to itself): the value always changes.
			c := f.cookie(t)
			raw, err := base64.RawURLEncoding.DecodeString(c.Value)
			if err != nil {
				t.Fatal(err)
			}
			raw[len(raw)/2] ^= 1
			c.Value = base64.RawURLEncoding.EncodeToString(raw)
			return c
		}},
		{name: "wrong key", cookie: func(t *testing.T, f *fixture) *http.Cookie {
			c := f.cookie(t)
			f.keys = [][]byte{bytes.Repeat([]byte("k"), 32)}
			f.build(t)
			return c
		}},
		{name: "lifetime over eight hours", cookie: func(t *testing.T, f *fixture) *http.Cookie {
			s := newSession(f.user.viewer, Token{AccessToken: testToken}, f.now, MaxSessionTTL)
			s.Expires += 3600
			v, _ := f.p.sessions.seal(s)
			return &http.Cookie{Name: f.p.sessionCookie, Value: v}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			c := tt.cookie(t, f)
			w := f.do("GET", "/inbox", nil, nil, c)
			if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/login?next=%2Finbox" {
				t.Errorf("%d to %q, want 303 to the sign-in", w.Code, w.Header().Get("Location"))
			}
		})
	}
}

func TestKeyRotation(t *testing.T) {
	f := newFixture(t)
	old := f.cookie(t)
	f.keys = [][]byte{bytes.Repeat([]byte("n"), 32), testKey}
	f.build(t)
	if w := f.do("GET", "/inbox", nil, nil, old); w.Code != http.StatusOK {
		t.Fatalf("a session sealed with the old key: %d", w.Code)
	}
	newer := f.cookie(t)
	f.keys = [][]byte{bytes.Repeat([]byte("n"), 32)}
	f.build(t)
	if w := f.do("GET", "/inbox", nil, nil, newer); w.Code != http.StatusOK {
		t.Errorf("a session sealed with the new first key once the old is dropped: %d", w.Code)
	}
	if w := f.do("GET", "/inbox", nil, nil, old); w.Code != http.StatusSeeOther {
		t.Errorf("a session of a dropped key: %d", w.Code)
	}
}

func TestLogout(t *testing.T) {
	tests := []struct {
		name    string
		csrf    func(s *session) string
		headers map[string]string
		want    int
		cleared bool
	}{
		{name: "signed out", csrf: func(s *session) string { return s.csrfToken("logout") }, headers: sameOrigin, want: http.StatusOK, cleared: true},
		{name: "no token", csrf: func(*session) string { return "" }, headers: sameOrigin, want: http.StatusForbidden},
		{name: "another action's token", csrf: func(s *session) string { return s.csrfToken("resolve acme/app#7") }, headers: sameOrigin, want: http.StatusForbidden},
		{name: "cross-site", csrf: func(s *session) string { return s.csrfToken("logout") },
			headers: map[string]string{"Sec-Fetch-Site": "cross-site"}, want: http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			c := f.cookie(t)
			w := f.do("POST", "/logout", url.Values{"csrf": {tt.csrf(f.sess(t, c))}}, tt.headers, c)
			if w.Code != tt.want {
				t.Errorf("status %d, want %d", w.Code, tt.want)
			}
			cleared := false
			for _, sc := range w.Result().Cookies() {
				cleared = cleared || (sc.Name == f.p.sessionCookie && sc.MaxAge < 0)
			}
			if cleared != tt.cleared {
				t.Errorf("session cleared: %v, want %v", cleared, tt.cleared)
			}
		})
	}
}

func TestResolveRefusedBeforeTheSource(t *testing.T) {
	tests := []struct {
		name    string
		form    func(s *session) url.Values
		headers map[string]string
		noCook  bool
		want    int
	}{
		{name: "cross-site", headers: map[string]string{"Sec-Fetch-Site": "cross-site"}, want: http.StatusForbidden},
		{name: "origin mismatch", headers: map[string]string{"Origin": "https://evil.example"}, want: http.StatusForbidden},
		{name: "same-site but another origin", headers: map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "https://evil.phasegate.example.com"}, want: http.StatusForbidden},
		{name: "no CSRF token", headers: sameOrigin, form: func(*session) url.Values {
			return url.Values{"decision": {"D-001"}, "option": {"approve"}}
		}, want: http.StatusForbidden},
		{name: "wrong CSRF token", headers: sameOrigin, form: func(*session) url.Values {
			return url.Values{"decision": {"D-001"}, "option": {"approve"}, "csrf": {"AAAA"}}
		}, want: http.StatusForbidden},
		{name: "another issue's CSRF token", headers: sameOrigin, form: func(s *session) url.Values {
			return url.Values{"decision": {"D-001"}, "option": {"approve"}, "csrf": {s.csrfToken(resolveAction("acme", "app", 8))}}
		}, want: http.StatusForbidden},
		{name: "no option", headers: sameOrigin, form: func(s *session) url.Values {
			return url.Values{"decision": {"D-001"}, "csrf": {s.csrfToken(resolveAction("acme", "app", 7))}}
		}, want: http.StatusBadRequest},
		{name: "reason too long", headers: sameOrigin, form: func(s *session) url.Values {
			return url.Values{"decision": {"D-001"}, "option": {"approve"}, "reason": {strings.Repeat("é", maxReason+1)},
				"csrf": {s.csrfToken(resolveAction("acme", "app", 7))}}
		}, want: http.StatusBadRequest},
		{name: "no session", headers: sameOrigin, noCook: true, want: http.StatusSeeOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			c := f.cookie(t)
			form := url.Values{"decision": {"D-001"}, "option": {"approve"}, "csrf": {f.sess(t, c).csrfToken(resolveAction("acme", "app", 7))}}
			if tt.form != nil {
				form = tt.form(f.sess(t, c))
			}
			if tt.noCook {
				c = nil
			}
			w := f.do("POST", "/acme/app/issues/7/resolve", form, tt.headers, c)
			if w.Code != tt.want {
				t.Errorf("status %d, want %d: %s", w.Code, tt.want, w.Body.String())
			}
			if len(f.src.resolved) != 0 {
				t.Errorf("the source was asked to resolve: %+v", f.src.resolved)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	f := newFixture(t)
	c := f.cookie(t)
	form := url.Values{"decision": {"D-001"}, "option": {"approve"}, "reason": {"  looks\n good\t to me "},
		"csrf": {f.sess(t, c).csrfToken(resolveAction("acme", "app", 7))}}
	w := f.do("POST", "/acme/app/issues/7/resolve", form, sameOrigin, c)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/acme/app/issues/7#D-001" {
		t.Fatalf("%d to %q", w.Code, w.Header().Get("Location"))
	}
	want := ResolveRequest{Owner: "acme", Repo: "app", Issue: 7, Decision: "D-001", Option: "approve", Reason: "looks good to me", Viewer: "alice"}
	if len(f.src.resolved) != 1 || f.src.resolved[0] != want || f.src.tokens[0].AccessToken != testToken {
		t.Fatalf("resolved %+v", f.src.resolved)
	}
	var fl *http.Cookie
	for _, sc := range w.Result().Cookies() {
		if sc.Name == f.p.flashCookie {
			fl = sc
		}
	}
	if fl == nil {
		t.Fatal("no flash")
	}
	page := f.do("GET", "/acme/app/issues/7", nil, nil, c, fl)
	if !strings.Contains(page.Body.String(), "phasegate applies it in a moment") {
		t.Error("the issue page does not show the flash")
	}
	if other := f.do("GET", "/acme/app/issues/7", nil, nil, c); strings.Contains(other.Body.String(), "applies it in a moment") {
		t.Error("the flash shows without its cookie")
	}
}

func TestResolveRefusedBySource(t *testing.T) {
	tests := []struct {
		name    string
		refusal *RefusedError
		want    int
	}{
		{name: "may not", refusal: &RefusedError{Why: "only members of @acme/leads may resolve D-001"}, want: http.StatusForbidden},
		{name: "no longer applies", refusal: &RefusedError{Why: "D-001 was resolved meanwhile by bob", Conflict: true}, want: http.StatusConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.src.refuse = tt.refusal
			c := f.cookie(t)
			form := url.Values{"decision": {"D-001"}, "option": {"approve"}, "csrf": {f.sess(t, c).csrfToken(resolveAction("acme", "app", 7))}}
			w := f.do("POST", "/acme/app/issues/7/resolve", form, sameOrigin, c)
			if w.Code != tt.want {
				t.Errorf("status %d, want %d", w.Code, tt.want)
			}
			if !strings.Contains(w.Body.String(), tt.refusal.Why) {
				t.Errorf("the reason is not shown:\n%s", w.Body.String())
			}
		})
	}
}

func TestNoSessionRedirects(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/inbox", "/acme/app/issues/7", "/acme/app/pull/8", "/acme/app/commit/0123456789abcdef0123456789abcdef01234567", "/nope/nope/issues/1?x=1"} {
		w := f.do("GET", path, nil, nil)
		if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/login?next="+url.QueryEscape(path) {
			t.Errorf("%s: %d to %q", path, w.Code, w.Header().Get("Location"))
		}
	}
	if w := f.do("GET", "/events", nil, nil); w.Code != http.StatusUnauthorized {
		t.Errorf("/events: %d", w.Code)
	}
	if w := f.do("GET", "/", nil, nil); w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/inbox" {
		t.Errorf("/: %d to %q", w.Code, w.Header().Get("Location"))
	}
}

// A repository the person cannot see answers exactly as one that does not
// exist, whichever way it is reached.
func TestNotFoundIdentical(t *testing.T) {
	f := newFixture(t)
	f.src.issues["acme/private#7"] = f.src.issues["acme/app#7"]
	f.src.heads["acme/private#8"] = f.src.heads["acme/app#8"]
	c := f.cookie(t)
	ref := f.do("GET", "/acme/nosuch/issues/7", nil, nil, c)
	if ref.Code != http.StatusNotFound {
		t.Fatalf("reference: %d", ref.Code)
	}
	resolveForm := func(repo string) url.Values {
		return url.Values{"decision": {"D-001"}, "option": {"approve"}, "csrf": {f.sess(t, c).csrfToken(resolveAction("acme", repo, 7))}}
	}
	tests := []struct {
		name, method, path string
		form               url.Values
	}{
		{name: "issue of a repository they cannot see", method: "GET", path: "/acme/private/issues/7"},
		{name: "pull of a repository they cannot see", method: "GET", path: "/acme/private/pull/8"},
		{name: "commit of a repository they cannot see", method: "GET", path: "/acme/private/commit/0123456789abcdef0123456789abcdef01234567"},
		{name: "resolve in a repository they cannot see", method: "POST", path: "/acme/private/issues/7/resolve", form: resolveForm("private")},
		{name: "issue that does not exist", method: "GET", path: "/acme/app/issues/99"},
		{name: "commit that does not exist", method: "GET", path: "/acme/app/commit/ffffffffffffffffffffffffffffffffffffffff"},
		{name: "not a repository name", method: "GET", path: "/acme/..%2f/issues/7"},
		{name: "not an issue number", method: "POST", path: "/acme/app/issues/0/resolve",
			form: url.Values{"decision": {"D-001"}, "option": {"approve"}, "csrf": {f.sess(t, c).csrfToken(resolveAction("acme", "app", 0))}}},
		{name: "unknown path", method: "GET", path: "/acme/app/wiki/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := f.do(tt.method, tt.path, tt.form, sameOrigin, c)
			if w.Code != ref.Code || !bytes.Equal(w.Body.Bytes(), ref.Body.Bytes()) {
				t.Errorf("status %d, body differs from the missing repository's", w.Code)
			}
			if len(w.Header()) != len(ref.Header()) {
				t.Errorf("headers %v, want %v", w.Header(), ref.Header())
			}
			for k := range ref.Header() {
				if w.Header().Get(k) != ref.Header().Get(k) {
					t.Errorf("header %s: %q, want %q", k, w.Header().Get(k), ref.Header().Get(k))
				}
			}
		})
	}
	if len(f.src.resolved) != 0 {
		t.Error("resolved in a repository the person cannot see")
	}
}

// responses are one of each kind of the pages' answers.
func responses(t *testing.T, f *fixture) map[string]*http.Response {
	t.Helper()
	c := f.cookie(t)
	s := f.sess(t, c)
	out := map[string]*http.Response{}
	for _, p := range []string{"/inbox", "/inbox?mine=1", "/acme/app/issues/7", "/acme/app/pull/8",
		"/acme/app/commit/0123456789abcdef0123456789abcdef01234567", "/acme/private/issues/7", "/static/app.js", "/static/app.css", "/"} {
		out["GET "+p] = f.do("GET", p, nil, nil, c).Result()
	}
	out["GET /login"] = f.do("GET", "/login", nil, nil).Result()
	out["GET /inbox signed out"] = f.do("GET", "/inbox", nil, nil).Result()
	out["GET /oauth/callback forged"] = f.do("GET", "/oauth/callback?code=x&state=y", nil, nil).Result()
	out["POST resolve"] = f.do("POST", "/acme/app/issues/7/resolve", url.Values{"decision": {"D-001"}, "option": {"approve"},
		"csrf": {s.csrfToken(resolveAction("acme", "app", 7))}}, sameOrigin, c).Result()
	out["POST resolve cross-site"] = f.do("POST", "/acme/app/issues/7/resolve", url.Values{}, map[string]string{"Sec-Fetch-Site": "cross-site"}, c).Result()
	out["POST logout"] = f.do("POST", "/logout", url.Values{"csrf": {s.csrfToken("logout")}}, sameOrigin, c).Result()
	out["PUT inbox"] = f.do("PUT", "/inbox", nil, sameOrigin, c).Result()
	return out
}

func TestSecurityHeadersOnEveryResponse(t *testing.T) {
	f := newFixture(t)
	for name, resp := range responses(t, f) {
		h := resp.Header
		if got := h.Get("Content-Security-Policy"); got != "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https://avatars.githubusercontent.com; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'" {
			t.Errorf("%s: CSP %q", name, got)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "same-origin" {
			t.Errorf("%s: nosniff %q, referrer %q", name, h.Get("X-Content-Type-Options"), h.Get("Referrer-Policy"))
		}
		if !strings.HasPrefix(name, "GET /static/") && h.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: Cache-Control %q", name, h.Get("Cache-Control"))
		}
	}
}

func TestTokenNeverShown(t *testing.T) {
	f := newFixture(t)
	resp, _ := signIn(t, f, "/inbox")
	all := responses(t, f)
	all["callback"] = resp
	for name, resp := range all {
		var body bytes.Buffer
		_, _ = body.ReadFrom(resp.Body)
		if strings.Contains(body.String(), testToken) {
			t.Errorf("%s: the token is in the body", name)
		}
		for k, vs := range resp.Header {
			for _, v := range vs {
				if strings.Contains(v, testToken) {
					t.Errorf("%s: the token is in header %s", name, k)
				}
			}
		}
	}
}

func TestGHESPolicy(t *testing.T) {
	f := newFixture(t)
	p, err := New(Config{PublicURL: "https://pg.corp.example", SessionKeys: f.keys, GitHubURL: "https://ghe.corp.example"}, f.oauth, f.src)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.csp, "img-src 'self' https://avatars.githubusercontent.com https://ghe.corp.example;") {
		t.Errorf("CSP %q", p.csp)
	}
	if p.link("https://ghe.corp.example/acme/app/issues/1") == "" || p.link("https://github.com/acme/app") != "" {
		t.Error("links follow GitHub's host")
	}
}

// Links follow the configured origins: https on GitHub's host or ours, and
// http only where the configured origin is a loopback http one.
func TestLinkOrigins(t *testing.T) {
	f := newFixture(t)
	p, err := New(Config{PublicURL: "http://127.0.0.1:8080", SessionKeys: f.keys, GitHubURL: "http://127.0.0.1:9090"}, f.oauth, f.src)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		url  string
		link bool
	}{
		{url: "http://127.0.0.1:9090/acme/app/blob/abc/a.yaml#L3", link: true},
		{url: "http://127.0.0.1:8080/acme/app/issues/1", link: true},
		{url: "https://127.0.0.1:9090/acme/app", link: true},
		{url: "http://127.0.0.1:7070/acme/app", link: false},
		{url: "https://github.com/acme/app", link: false},
		{url: "javascript:alert(1)", link: false},
		{url: "http://user@127.0.0.1:9090/acme/app", link: false},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			if got := p.link(tt.url) != ""; got != tt.link {
				t.Errorf("link(%q) shown: %v, want %v", tt.url, got, tt.link)
			}
		})
	}
}

func TestPagesGolden(t *testing.T) {
	tests := []struct {
		name, method, path string
		form               bool
		status             int
	}{
		{name: "inbox", method: "GET", path: "/inbox", status: 200},
		{name: "inbox_filtered", method: "GET", path: "/inbox?repo=acme%2Fapp&mine=1", status: 200},
		{name: "issue", method: "GET", path: "/acme/app/issues/7", status: 200},
		{name: "commit", method: "GET", path: "/acme/app/commit/0123456789abcdef0123456789abcdef01234567", status: 200},
		{name: "pull", method: "GET", path: "/acme/app/pull/8", status: 200},
		{name: "notfound", method: "GET", path: "/acme/private/issues/7", status: 404},
		{name: "refused", method: "POST", path: "/acme/app/issues/7/resolve", form: true, status: 403},
		{name: "signedout", method: "POST", path: "/logout", form: true, status: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.src.refuse = &RefusedError{Why: "only members of @acme/leads may resolve D-001"}
			c := f.cookie(t)
			s := f.sess(t, c)
			s.CSRF = bytes.Repeat([]byte{7}, 32) // fixed, so the tokens are
			v, _ := f.p.sessions.seal(s)
			c.Value = v
			var form url.Values
			if tt.form {
				form = url.Values{"decision": {"D-001"}, "option": {"approve"}, "csrf": {s.csrfToken(resolveAction("acme", "app", 7))}}
				if tt.path == "/logout" {
					form = url.Values{"csrf": {s.csrfToken("logout")}}
				}
			}
			w := f.do(tt.method, tt.path, form, sameOrigin, c)
			if w.Code != tt.status {
				t.Errorf("status %d, want %d", w.Code, tt.status)
			}
			testutil.Golden(t, "testdata/golden/"+tt.name+".html", w.Body.Bytes())
		})
	}
}

// A path that names no repository, issue number or commit is the pages'
// 404 before the person's token asks GitHub anything: with GitHub failing,
// it is still the 404, never the 502 of a question asked.
func TestBadPathAsksGitHubNothing(t *testing.T) {
	f := newFixture(t)
	c := f.cookie(t)
	f.user.err = errors.New("GitHub is down")
	for _, path := range []string{"/acme/app/issues/0", "/acme/app/pull/0", "/acme/app/commit/not-a-sha", "/acme/..%2f/issues/7", "/-acme/app/pull/8"} {
		if w := f.do("GET", path, nil, nil, c); w.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404 without asking GitHub", path, w.Code)
		}
	}
	if w := f.do("GET", "/acme/app/issues/7", nil, nil, c); w.Code != http.StatusBadGateway {
		t.Errorf("GET a good path with GitHub down: %d, want 502 (the test's GitHub must fail)", w.Code)
	}
}
