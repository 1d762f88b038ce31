package web

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// failingRevocations is a store of sign-outs that cannot be read or
// written (Redis down).
type failingRevocations struct{ read, write bool }

func (f failingRevocations) Revoke(context.Context, string, time.Time) error {
	if f.write {
		return errors.New("redis unavailable")
	}
	return nil
}

func (f failingRevocations) Revoked(context.Context, string) (bool, error) {
	if f.read {
		return false, errors.New("redis unavailable")
	}
	return false, nil
}

// replay is a copied session cookie used on the inbox and on a resolve
// POST: the inbox's status, the resolve's status, and whether the source
// was asked to resolve.
func replay(t *testing.T, f *fixture, c *http.Cookie) (inbox, resolve int, resolved bool) {
	t.Helper()
	form := url.Values{"decision": {"D-001"}, "option": {"approve"}, "csrf": {f.sess(t, c).csrfToken(resolveAction("acme", "app", 7))}}
	inbox = f.do("GET", "/inbox", nil, nil, c).Code
	resolve = f.do("POST", "/acme/app/issues/7/resolve", form, sameOrigin, c).Code
	f.src.mu.Lock()
	defer f.src.mu.Unlock()
	return inbox, resolve, len(f.src.resolved) > 0
}

// TestSignOutEndsTheSession (red team, attack 5): a session cookie copied
// before sign-out opens nothing after it — neither the inbox nor a
// resolution — even when GitHub refuses to revoke the token; sign-out
// revokes the person's GitHub token; when the sign-outs cannot be read, a
// cookie never proceeds as signed in, and when the sign-out cannot be
// recorded, the person is told and keeps the cookie to try again.
func TestSignOutEndsTheSession(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		revokeErr error               // GitHub's answer to the token's revocation
		store     *failingRevocations // nil: the default, in memory
		// what sign-out answers, and the copied cookie's inbox and resolve
		wantLogout, wantInbox, wantResolve int
		wantRevoked                        bool // the GitHub token was revoked
	}{
		{name: "signed out", wantLogout: http.StatusOK, wantInbox: http.StatusSeeOther, wantResolve: http.StatusSeeOther, wantRevoked: true},
		{name: "GitHub refuses the token's revocation", revokeErr: errors.New("github answered 500"),
			wantLogout: http.StatusOK, wantInbox: http.StatusSeeOther, wantResolve: http.StatusSeeOther},
		{name: "the sign-outs cannot be read", store: &failingRevocations{read: true},
			wantLogout: http.StatusOK, wantInbox: http.StatusServiceUnavailable, wantResolve: http.StatusServiceUnavailable, wantRevoked: true},
		{name: "the sign-out cannot be recorded", store: &failingRevocations{write: true},
			wantLogout: http.StatusServiceUnavailable, wantInbox: http.StatusOK, wantResolve: http.StatusSeeOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			if tt.store != nil {
				f.p.cfg.Revocations = tt.store
			}
			f.oauth.revokeErr = tt.revokeErr
			c := f.cookie(t)
			copied := *c
			if inbox, _, _ := replay(t, f, &copied); inbox != http.StatusOK && tt.store == nil {
				t.Fatalf("the inbox before sign-out: %d", inbox)
			}
			f.src.resolved = nil
			w := f.do("POST", "/logout", url.Values{"csrf": {f.sess(t, c).csrfToken("logout")}}, sameOrigin, c)
			if w.Code != tt.wantLogout {
				t.Fatalf("sign-out answered %d, want %d: %s", w.Code, tt.wantLogout, w.Body.String())
			}
			cleared := strings.Contains(w.Header().Get("Set-Cookie"), f.p.sessionCookie+"=;")
			if cleared != (tt.wantLogout == http.StatusOK) {
				t.Errorf("the cookie cleared: %v (Set-Cookie %q)", cleared, w.Header().Get("Set-Cookie"))
			}
			if revoked := len(f.oauth.revoked) == 1 && f.oauth.revoked[0] == testToken; revoked != tt.wantRevoked {
				t.Errorf("the GitHub token revoked: %v (%v), want %v", revoked, f.oauth.revoked, tt.wantRevoked)
			}
			inbox, resolve, resolved := replay(t, f, &copied)
			if inbox != tt.wantInbox || resolve != tt.wantResolve {
				t.Errorf("the copied cookie after sign-out: inbox %d, resolve %d; want %d and %d", inbox, resolve, tt.wantInbox, tt.wantResolve)
			}
			if resolved && tt.wantLogout == http.StatusOK {
				t.Errorf("the copied cookie resolved after sign-out: %+v", f.src.resolved)
			}
		})
	}
}

// TestSignOutHoldsUntilTheSessionWouldEnd: a sign-out is kept as long as
// the session would have lasted, and a fresh sign-in is a new session.
func TestSignOutHoldsUntilTheSessionWouldEnd(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.cookie(t)
	other := f.cookie(t) // another sign-in of the same person
	if w := f.do("POST", "/logout", url.Values{"csrf": {f.sess(t, c).csrfToken("logout")}}, sameOrigin, c); w.Code != http.StatusOK {
		t.Fatalf("sign-out: %d", w.Code)
	}
	f.now = f.now.Add(MaxSessionTTL - time.Minute)
	if code := f.do("GET", "/inbox", nil, nil, c).Code; code != http.StatusSeeOther {
		t.Errorf("the signed-out session a minute before its end: %d, want the sign-in", code)
	}
	if code := f.do("GET", "/inbox", nil, nil, other).Code; code != http.StatusOK {
		t.Errorf("another session of the same person: %d, want the inbox", code)
	}
}

// TestMemRevocationsBounded: the in-memory sign-outs forget only those
// whose sessions ended, and refuse a new one rather than forget a live one.
func TestMemRevocationsBounded(t *testing.T) {
	t.Parallel()
	now := testNow
	var mu sync.Mutex
	m := newMemRevocations(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	ctx := context.Background()
	if m.max != 1<<20 {
		t.Fatalf("the bound is %d, want 1<<20", m.max)
	}
	m.max = 3
	for i := range m.max {
		m.ids[itoa(i)] = now.Add(time.Hour)
	}
	if err := m.Revoke(ctx, "new", now.Add(time.Hour)); err == nil {
		t.Fatal("a full store recorded a sign-out by forgetting another")
	}
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	if err := m.Revoke(ctx, "new", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, _ := m.Revoked(ctx, "new"); !got || len(m.ids) != 1 {
		t.Fatalf("revoked %v, %d kept; want only the new one", got, len(m.ids))
	}
}

// TestEventsEndAtSignOut (red team): a stream opened with a session ends
// at its first heartbeat after the session is signed out of (say, from
// another browser holding a copy of the cookie).
func TestEventsEndAtSignOut(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.p.cfg.Heartbeat = 5 * time.Millisecond
	srv := httptest.NewServer(f.p.Handler())
	defer srv.Close()
	c := f.cookie(t)
	req, _ := http.NewRequest("GET", srv.URL+"/events", nil)
	req.AddCookie(c)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "retry:") {
		t.Fatalf("the stream's first line: %q, %v", line, err)
	}
	if w := f.do("POST", "/logout", url.Values{"csrf": {f.sess(t, c).csrfToken("logout")}}, sameOrigin, c); w.Code != http.StatusOK {
		t.Fatalf("sign-out: %d", w.Code)
	}
	for pings := 0; ; {
		line, err := r.ReadString('\n')
		if err != nil {
			return // ended
		}
		if line == ": ping\n" {
			if pings++; pings > 1000 { // far more than arrive while signing out
				t.Fatalf("the stream goes on after the sign-out (%d heartbeats)", pings)
			}
		}
	}
}
