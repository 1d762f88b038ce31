package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/redisx"
	"github.com/phasegate/phasegate/internal/testutil/redistest"
	"github.com/phasegate/phasegate/internal/web"
)

var logoutCSRF = regexp.MustCompile(`action="/logout"><input type="hidden" name="csrf" value="([^"]+)"`)

// TestPagesSignOutEndsTheSessionOnEveryReplica (red team, attack 5): a
// session cookie copied before sign-out, replayed after it, opens neither
// the inbox nor a resolution — on the replica the person signed out on,
// nor on another that shares only Redis with it — and the person's GitHub
// token is revoked at GitHub.
func TestPagesSignOutEndsTheSessionOnEveryReplica(t *testing.T) {
	t.Parallel()
	rdb := redistest.SharedDB(t)
	stores := make([]*redisx.Store, 2)
	for i := range stores {
		st, err := redisx.Open(context.Background(), rdb.URL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		stores[i] = st
	}
	var opts PagesOptions
	h, public := flowHarness(t, func(o *PagesOptions) {
		o.SignedOut = newSharedSignOuts(stores[0])
		opts = *o
	})
	f := h.fake
	for range featureIssue {
		f.AddIssue(owner, repo, "an issue", "", "alice")
	}
	seedFeature(t, f)
	h.srv.reconcileOnce(context.Background())

	// The other replica: its own pages, sharing only Redis.
	other := Config{}
	opts.SignedOut = newSharedSignOuts(stores[1])
	if err := WithPages(&other, opts); err != nil {
		t.Fatal(err)
	}
	replica, err := other.Pages(h.srv.pages, h.srv.ghOptions(nil))
	if err != nil {
		t.Fatal(err)
	}

	f.SetOAuthUser("alice")
	alice := browser(t)
	code, inbox := getPage(t, alice, public+"/login?next=/inbox")
	m := logoutCSRF.FindStringSubmatch(inbox)
	if code != http.StatusOK || m == nil {
		t.Fatalf("inbox after sign-in: %d, no sign-out form\n%s", code, inbox)
	}
	u, _ := url.Parse(public)
	var copied *http.Cookie
	for _, c := range alice.Jar.Cookies(u) {
		if c.Name == "phasegate_session" {
			copied = c
		}
	}
	if copied == nil {
		t.Fatal("no session cookie after sign-in")
	}
	issue := fmt.Sprintf("/%s/%s/issues/%d", owner, repo, featureIssue)
	code, page := getPage(t, alice, public+issue)
	resolveCSRF := csrfRE.FindAllStringSubmatch(page, -1)
	if code != http.StatusOK || !strings.Contains(page, `value="D-001"`) || len(resolveCSRF) == 0 {
		t.Fatalf("issue page: %d (no resolve form for D-001)\n%s", code, page)
	}
	replay := func(where string) {
		t.Helper()
		for _, tc := range []struct{ name, method, path string }{
			{name: "the inbox", method: http.MethodGet, path: "/inbox"},
			{name: "a resolution", method: http.MethodPost, path: issue + "/resolve"},
		} {
			var body *strings.Reader
			if tc.method == http.MethodPost {
				body = strings.NewReader(url.Values{"csrf": {resolveCSRF[len(resolveCSRF)-1][1]}, "decision": {"D-001"}, "option": {"approve"}}.Encode())
			} else {
				body = strings.NewReader("")
			}
			req := httptest.NewRequest(tc.method, public+tc.path, body)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", public)
			req.AddCookie(copied)
			w := httptest.NewRecorder()
			if where == "the same replica" {
				h.srv.Handler().ServeHTTP(w, req)
			} else {
				replica.ServeHTTP(w, req)
			}
			if w.Code != http.StatusSeeOther || !strings.HasPrefix(w.Header().Get("Location"), "/login?") {
				t.Errorf("%s on %s with the copied cookie: %d to %q, want the sign-in", tc.name, where, w.Code, w.Header().Get("Location"))
			}
		}
	}
	// Before the sign-out, the other replica takes the cookie.
	req := httptest.NewRequest(http.MethodGet, public+"/inbox", nil)
	req.AddCookie(copied)
	w := httptest.NewRecorder()
	replica.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		t.Fatalf("the other replica before the sign-out: %d", w.Code)
	}

	form := url.Values{"csrf": {m[1]}}
	req, _ = http.NewRequest(http.MethodPost, public+"/logout", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", public)
	if code, page := fetch(t, alice, req); code != http.StatusOK {
		t.Fatalf("sign-out: %d\n%s", code, page)
	}
	replay("the same replica")
	replay("another replica")
	for _, c := range f.Comments(owner, repo, featureIssue) {
		if c.User == "alice" {
			t.Errorf("a resolution was posted after the sign-out: %q by %s", c.Body, c.User)
		}
	}
	revoked := false
	for _, c := range f.Calls() {
		revoked = revoked || (c.Method == http.MethodDelete && c.Path == "/applications/"+oauthClientID+"/token" && c.Status == http.StatusNoContent)
	}
	if !revoked {
		t.Error("the person's GitHub token was not revoked at sign-out")
	}
}

// TestServeSharesSignOutsInRedis: with --redis-url, serve's pages keep
// their sign-outs in Redis (a sign-out recorded through one store is seen
// through another), not in one replica's memory.
func TestServeSharesSignOutsInRedis(t *testing.T) {
	t.Parallel()
	rdb := redistest.SharedDB(t)
	ctx := context.Background()
	var recorded web.Revocations
	for i := range 2 {
		st, err := redisx.Open(ctx, rdb.URL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		s := serveSettings{pages: &PagesOptions{}, lockTTL: time.Second}
		q := useRedis(&s, st, slog.New(slog.DiscardHandler))
		_ = q.Close()
		got := s.pages.SignedOut
		if got == nil {
			t.Fatal("with Redis, the pages keep their sign-outs in memory")
		}
		if i == 0 {
			if err := got.Revoke(ctx, "session-1", time.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			recorded = got
			continue
		}
		if revoked, err := got.Revoked(ctx, "session-1"); err != nil || !revoked {
			t.Fatalf("a sign-out recorded through one replica's store: revoked %v, %v through another's", revoked, err)
		}
	}
	if revoked, err := recorded.Revoked(ctx, "session-2"); err != nil || revoked {
		t.Fatalf("a session never signed out of: revoked %v, %v", revoked, err)
	}
}
