package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/web"
)

const (
	oauthClientID     = "Iv23liPAGES"
	oauthClientSecret = "pages-client-secret-never-shown"
)

// flowHarness is a started server with the real decision handler and its
// pages wired as serve wires them (ghclient's OAuth flow, the person's
// client, the server's Source) against the fake GitHub, which plays the
// OAuth provider; the public URL is the server's own loopback address.
func flowHarness(t *testing.T, pages ...func(*PagesOptions)) (*harness, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	public := "http://" + ln.Addr().String()
	var webURL string
	h := newHarness(t, func(c *Config) {
		c.NewDecider = nil
		webURL = strings.TrimSuffix(c.APIURL, "/")
		o := PagesOptions{PublicURL: public, ClientID: oauthClientID, ClientSecret: oauthClientSecret,
			SessionKeys: [][]byte{[]byte(strings.Repeat("k", 48))}, GitHubWebURL: webURL}
		for _, set := range pages {
			set(&o)
		}
		if err := WithPages(c, o); err != nil {
			t.Fatal(err)
		}
	})
	if webURL != h.fake.WebURL() {
		t.Fatalf("the fake's web URL is %s, not %s", h.fake.WebURL(), webURL)
	}
	h.fake.SetOAuthApp(appID, oauthClientID, oauthClientSecret, public+"/oauth/callback")
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.served = make(chan error, 1)
	go func() { h.served <- h.srv.Serve(ctx, ln) }()
	t.Cleanup(func() { _ = h.stop() })
	h.waitReady()
	return h, public
}

// browser is a person's browser: cookies kept, redirects followed.
func browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar}
}

func fetch(t *testing.T, c *http.Client, req *http.Request) (int, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func getPage(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fetch(t, c, req)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// TestPagesSignInResolveFlipsCheck is the whole path of a resolution made
// from a page, wired as serve wires it: the person signs in through GitHub's
// OAuth web flow (the fake's authorize and token endpoints, PKCE), sees the
// pending decision in their inbox and on the issue's page, resolves it with
// the form; the comment lands as *their* comment, posted through the App,
// and the normal webhook path applies it and flips phasegate/decisions. A
// person who cannot see the repository gets the same 404 as for a
// repository that does not exist.
func TestPagesSignInResolveFlipsCheck(t *testing.T) {
	t.Parallel()
	h, public := flowHarness(t)
	f := h.fake
	for i := 0; i < featureIssue; i++ {
		f.AddIssue(owner, repo, fmt.Sprintf("issue %d", i+1), "", "alice")
	}
	seedFeature(t, f)
	// A reconcile pass folds the thread, as after a restart.
	h.srv.reconcileOnce(context.Background())
	if st, ok := f.LatestStatus(owner, repo, headSHA, decide.ContextDecisions); ok && st.State == "success" {
		t.Fatalf("decisions already success before the resolution: %+v", st)
	}

	f.SetOAuthUser("alice")
	alice := browser(t)
	code, inbox := getPage(t, alice, public+"/login?next=/inbox")
	if code != http.StatusOK || !strings.Contains(inbox, "D-001") {
		t.Fatalf("inbox after sign-in: %d\n%s", code, inbox)
	}
	if strings.Contains(inbox, oauthClientSecret) {
		t.Fatal("the client secret reached a page")
	}
	issueURL := fmt.Sprintf("%s/%s/%s/issues/%d", public, owner, repo, featureIssue)
	code, page := getPage(t, alice, issueURL)
	if code != http.StatusOK || !strings.Contains(page, `value="D-001"`) {
		t.Fatalf("issue page: %d (no resolve form for D-001)\n%s", code, page)
	}
	m := csrfRE.FindAllStringSubmatch(page, -1)
	if len(m) == 0 {
		t.Fatal("no CSRF token on the issue page")
	}
	form := url.Values{"csrf": {m[len(m)-1][1]}, "decision": {"D-001"}, "option": {"approve"}, "reason": {"looks right"}}
	req, _ := http.NewRequest(http.MethodPost, issueURL+"/resolve", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", public)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if code, body := fetch(t, alice, req); code != http.StatusOK {
		t.Fatalf("resolve: %d\n%s", code, body)
	}
	var posted *struct {
		id   int64
		body string
	}
	for _, c := range f.Comments(owner, repo, featureIssue) {
		if c.User == "alice" && strings.HasPrefix(c.Body, "/resolve D-001 approve") {
			if c.ViaApp == "" {
				t.Errorf("the page's comment is not marked as posted through the App: %+v", c)
			}
			posted = &struct {
				id   int64
				body string
			}{c.ID, c.Body}
		}
	}
	if posted == nil {
		t.Fatalf("no /resolve comment by alice; comments: %+v", f.Comments(owner, repo, featureIssue))
	}
	// GitHub now delivers the comment; the webhook path applies it.
	h.deliver("issue_comment", commentEvent("created", featureIssue, posted.id, "alice", "alice", posted.body))
	if st, ok := f.LatestStatus(owner, repo, headSHA, decide.ContextDecisions); !ok || st.State != "success" {
		t.Errorf("phasegate/decisions after the page's resolution: %+v (ok %v); logs:\n%s", st, ok, h.logs.String())
	}

	// Someone who can read the repository but may not resolve: no form, and
	// a forged POST (with their own valid CSRF token) posts nothing.
	f.SetPermission(owner, repo, "carol", "read")
	f.SetOAuthUser("carol")
	carol := browser(t)
	if code, _ := getPage(t, carol, public+"/login?next=/inbox"); code != http.StatusOK {
		t.Fatalf("carol's sign-in: %d", code)
	}
	code, page = getPage(t, carol, issueURL)
	if code != http.StatusOK || strings.Contains(page, `name="option"`) {
		t.Fatalf("carol's issue page: %d, resolve form offered: %v", code, strings.Contains(page, `name="option"`))
	}
	before := len(f.Comments(owner, repo, featureIssue))
	m = csrfRE.FindAllStringSubmatch(page, -1)
	token := ""
	if len(m) > 0 {
		token = m[len(m)-1][1] // the sign-out form's: a valid token of another action
	}
	form = url.Values{"csrf": {token}, "decision": {"D-002"}, "option": {"capture"}}
	req, _ = http.NewRequest(http.MethodPost, issueURL+"/resolve", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", public)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if code, _ := fetch(t, carol, req); code < 400 {
		t.Errorf("carol's forged resolve answered %d", code)
	}
	// Past the CSRF check too (a request the pages would accept), the
	// resolution itself is refused: the authorisation a typed /resolve meets.
	f.AddUserToken("carol-token", "carol", appID)
	_, err := h.srv.pages.Resolve(context.Background(), web.Token{AccessToken: "carol-token"},
		web.ResolveRequest{Owner: owner, Repo: repo, Issue: featureIssue, Decision: "D-002", Option: "capture", Viewer: "carol"})
	var refused *web.RefusedError
	if !errors.As(err, &refused) || !strings.Contains(refused.Why, "permission") {
		t.Errorf("carol's resolution: %v, want a refusal naming the permission she lacks", err)
	}
	if after := len(f.Comments(owner, repo, featureIssue)); after != before {
		t.Errorf("carol's forged resolve posted %d comment(s)", after-before)
	}

	// Someone who cannot see the repository: the same 404 as none.
	f.SetRepoPrivate(owner, repo, true)
	f.SetOAuthUser("mallory")
	mallory := browser(t)
	if code, _ := getPage(t, mallory, public+"/login?next=/inbox"); code != http.StatusOK {
		t.Fatalf("mallory's sign-in: %d", code)
	}
	code1, hidden := getPage(t, mallory, issueURL)
	code2, missing := getPage(t, mallory, fmt.Sprintf("%s/%s/%s/issues/%d", public, owner, "no-such-repo", featureIssue))
	if code1 != http.StatusNotFound || code2 != http.StatusNotFound || hidden != missing {
		t.Errorf("a private repository answers %d, a missing one %d; bodies equal: %v", code1, code2, hidden == missing)
	}
}

// WithPages refuses settings the pages cannot run with, naming the
// problem, and leaves the Config without pages then.
func TestWithPagesRefuses(t *testing.T) {
	t.Parallel()
	key := [][]byte{[]byte(strings.Repeat("k", 32))}
	tests := []struct {
		name string
		o    PagesOptions
		want string // in the error; "" for none
	}{
		{name: "complete", o: PagesOptions{PublicURL: "https://pg.example", ClientID: "Iv1.x", ClientSecret: "s", SessionKeys: key}},
		{name: "plain http elsewhere", o: PagesOptions{PublicURL: "http://pg.example", ClientID: "Iv1.x", ClientSecret: "s", SessionKeys: key}, want: "must be https"},
		{name: "no client", o: PagesOptions{PublicURL: "https://pg.example", ClientSecret: "s", SessionKeys: key}, want: "OAuth client ID and secret"},
		{name: "no secret", o: PagesOptions{PublicURL: "https://pg.example", ClientID: "Iv1.x", SessionKeys: key}, want: "OAuth client ID and secret"},
		{name: "no key", o: PagesOptions{PublicURL: "https://pg.example", ClientID: "Iv1.x", ClientSecret: "s"}, want: "a session key is required"},
		{name: "short key", o: PagesOptions{PublicURL: "https://pg.example", ClientID: "Iv1.x", ClientSecret: "s", SessionKeys: [][]byte{key[0], []byte("short")}}, want: "session key 2 is 5 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Config
			err := WithPages(&c, tt.o)
			switch {
			case tt.want == "" && (err != nil || c.Pages == nil || c.PublicURL != tt.o.PublicURL):
				t.Fatalf("WithPages: %v; pages set %v, public URL %q", err, c.Pages != nil, c.PublicURL)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("WithPages: %v, want an error with %q", err, tt.want)
			case tt.want != "" && (c.Pages != nil || c.PublicURL != ""):
				t.Fatal("a refused WithPages changed the Config")
			}
		})
	}
}
