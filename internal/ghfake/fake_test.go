package ghfake

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

const tok = "tok-test"

func newTestServer(t *testing.T) *Server {
	t.Helper()
	s := New()
	t.Cleanup(s.Close)
	s.AddToken(tok, "bot")
	s.AddRepo("acme", "widgets", "main")
	return s
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func do(t *testing.T, s *Server, method, path, token, body string, hdr ...string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL()+strings.TrimPrefix(path, "/"), rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "token "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
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

func TestPagination(t *testing.T) {
	s := newTestServer(t)
	n := s.AddIssue("acme", "widgets", "x", "", "alice")
	for i := 0; i < 250; i++ {
		s.AddComment("acme", "widgets", n, "alice", strconv.Itoa(i))
	}
	tests := []struct {
		name      string
		query     string
		wantLen   int
		wantFirst string
		wantRels  []string
	}{
		{name: "default page size is 30", query: "", wantLen: 30, wantFirst: "0", wantRels: []string{"next", "last"}},
		{name: "middle page", query: "?per_page=100&page=2", wantLen: 100, wantFirst: "100", wantRels: []string{"prev", "next", "last", "first"}},
		{name: "last page", query: "?per_page=100&page=3", wantLen: 50, wantFirst: "200", wantRels: []string{"prev", "first"}},
		{name: "a small page, as ghclient's tests ask", query: "?per_page=5&page=3", wantLen: 5, wantFirst: "10", wantRels: []string{"prev", "next", "last", "first"}},
		{name: "per_page is capped at 100", query: "?per_page=500", wantLen: 100, wantFirst: "0", wantRels: []string{"next", "last"}},
		{name: "beyond the end", query: "?per_page=100&page=9", wantLen: 0, wantRels: []string{"prev", "first"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := do(t, s, "GET", fmt.Sprintf("/repos/acme/widgets/issues/%d/comments%s", n, tt.query), tok, "")
			var list []struct {
				Body string `json:"body"`
			}
			if err := json.Unmarshal(a.body, &list); err != nil || a.status != 200 {
				t.Fatalf("status %d, %v", a.status, err)
			}
			if len(list) != tt.wantLen || (tt.wantLen > 0 && list[0].Body != tt.wantFirst) {
				t.Fatalf("%d items, first %+v", len(list), list)
			}
			var rels []string
			for _, part := range strings.Split(a.header.Get("Link"), ", ") {
				if i := strings.Index(part, `rel="`); i >= 0 {
					rels = append(rels, strings.TrimSuffix(part[i+5:], `"`))
					if !strings.HasPrefix(part, "<http://") || !strings.Contains(part, "per_page=") {
						t.Fatalf("link %q", part)
					}
				}
			}
			if !reflect.DeepEqual(rels, tt.wantRels) {
				t.Fatalf("rels %v, want %v (Link %q)", rels, tt.wantRels, a.header.Get("Link"))
			}
		})
	}
}

func TestConditionalRequestsAreFree(t *testing.T) {
	s := newTestServer(t)
	first := do(t, s, "GET", "/repos/acme/widgets", tok, "")
	etag := first.header.Get("ETag")
	if first.status != 200 || !strings.HasPrefix(etag, `W/"`) {
		t.Fatalf("status %d etag %q", first.status, etag)
	}
	remaining := first.header.Get("X-RateLimit-Remaining")
	second := do(t, s, "GET", "/repos/acme/widgets", tok, "", "If-None-Match", etag)
	if second.status != 304 || len(second.body) != 0 {
		t.Fatalf("status %d, %d bytes", second.status, len(second.body))
	}
	if got := second.header.Get("X-RateLimit-Remaining"); got != remaining {
		t.Fatalf("remaining %s after a 304, was %s", got, remaining)
	}
	s.AddRepo("acme", "widgets", "trunk") // the default branch changes
	third := do(t, s, "GET", "/repos/acme/widgets", tok, "", "If-None-Match", etag)
	if third.status != 200 || third.header.Get("ETag") == etag {
		t.Fatalf("status %d after a change", third.status)
	}
}

func TestErrorsAndHeaders(t *testing.T) {
	s := newTestServer(t)
	n := s.AddIssue("acme", "widgets", "x", "", "alice")
	tests := []struct {
		name       string
		method     string
		path       string
		token      string
		body       string
		wantStatus int
		wantMsg    string
	}{
		{name: "unknown repository", method: "GET", path: "/repos/acme/nope", token: tok, wantStatus: 404, wantMsg: "Not Found"},
		{name: "unknown route", method: "GET", path: "/nope", token: tok, wantStatus: 404, wantMsg: "Not Found"},
		{name: "bad token", method: "GET", path: "/repos/acme/widgets", token: "wrong", wantStatus: 401, wantMsg: "Bad credentials"},
		{name: "anonymous write", method: "POST", path: fmt.Sprintf("/repos/acme/widgets/issues/%d/comments", n), body: `{"body":"x"}`,
			wantStatus: 401, wantMsg: "Requires authentication"},
		{name: "anonymous read", method: "GET", path: "/repos/acme/widgets", wantStatus: 200},
		{name: "status description too long", method: "POST", path: "/repos/acme/widgets/statuses/abc", token: tok,
			body: fmt.Sprintf(`{"state":"success","description":%q}`, strings.Repeat("x", 141)), wantStatus: 422, wantMsg: "Validation Failed"},
		{name: "bad status state", method: "POST", path: "/repos/acme/widgets/statuses/abc", token: tok,
			body: `{"state":"green"}`, wantStatus: 422, wantMsg: "Validation Failed"},
		{name: "empty comment", method: "POST", path: fmt.Sprintf("/repos/acme/widgets/issues/%d/comments", n), token: tok,
			body: `{"body":""}`, wantStatus: 422, wantMsg: "Validation Failed"},
		{name: "comment too long", method: "POST", path: fmt.Sprintf("/repos/acme/widgets/issues/%d/comments", n), token: tok,
			body: fmt.Sprintf(`{"body":%q}`, strings.Repeat("x", MaxBodyChars+1)), wantStatus: 422, wantMsg: "Validation Failed"},
		{name: "removing an absent label", method: "DELETE", path: fmt.Sprintf("/repos/acme/widgets/issues/%d/labels/nope", n), token: tok,
			wantStatus: 404, wantMsg: "Label does not exist"},
		{name: "reaction on an unknown comment", method: "POST", path: "/repos/acme/widgets/issues/comments/1/reactions", token: tok,
			body: `{"content":"+1"}`, wantStatus: 404, wantMsg: "Not Found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := do(t, s, tt.method, tt.path, tt.token, tt.body)
			if a.status != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", a.status, tt.wantStatus, a.body)
			}
			for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Used", "X-RateLimit-Resource"} {
				if a.header.Get(h) == "" {
					t.Fatalf("no %s header", h)
				}
			}
			if tt.wantMsg == "" {
				return
			}
			var e struct {
				Message string `json:"message"`
				DocURL  string `json:"documentation_url"`
			}
			if err := json.Unmarshal(a.body, &e); err != nil || e.Message != tt.wantMsg || e.DocURL == "" {
				t.Fatalf("body %s, want message %q", a.body, tt.wantMsg)
			}
		})
	}
}

func TestFaultsAreDeterministic(t *testing.T) {
	run := func() []string {
		s := newTestServer(t)
		s.SetFaults(Faults{Seed: 42, ServerErrorRate: 0.3, SecondaryRate: 0.1})
		var out []string
		for i := 0; i < 50; i++ {
			do(t, s, "GET", "/repos/acme/widgets", tok, "")
		}
		for _, c := range s.Calls() {
			out = append(out, fmt.Sprintf("%d %s", c.Status, c.Fault))
		}
		return out
	}
	a, b := run(), run()
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("two runs with one seed differ:\n%v\n%v", a, b)
	}
	faults := 0
	for _, c := range a {
		if !strings.HasPrefix(c, "200") {
			faults++
		}
	}
	if faults < 5 || faults > 35 {
		t.Fatalf("%d faults in 50 requests at a 37%% rate", faults)
	}
}

func TestMaxHangs(t *testing.T) {
	tests := []struct {
		name     string
		maxHangs int
		want     int
	}{
		{name: "no cap", maxHangs: 0, want: 10},
		{name: "capped", maxHangs: 3, want: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t)
			s.SetFaults(Faults{Seed: 1, HangRate: 1, MaxHangs: tt.maxHangs}) // HangFor 0: a hang that ends at once
			for range 10 {
				do(t, s, "GET", "/repos/acme/widgets", tok, "")
			}
			if got := countFault(s.Calls(), "hang"); got != tt.want {
				t.Errorf("%d requests hung, want %d", got, tt.want)
			}
			s.SetFaults(Faults{Seed: 1, HangRate: 1, MaxHangs: tt.maxHangs}) // a new configuration, a new count
			do(t, s, "GET", "/repos/acme/widgets", tok, "")
			if got := countFault(s.Calls(), "hang"); got != tt.want+1 {
				t.Errorf("after SetFaults, %d requests hung in all, want %d", got, tt.want+1)
			}
		})
	}
}

func countFault(calls []Call, fault string) int {
	n := 0
	for _, c := range calls {
		if c.Fault == fault {
			n++
		}
	}
	return n
}

func TestRateLimits(t *testing.T) {
	clock := NewManualClock(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	tests := []struct {
		name       string
		setup      func(s *Server)
		wantStatus int
		wantHeader map[string]string
	}{
		{name: "primary exhausted, 403", setup: func(s *Server) { s.ExhaustPrimary("bot", time.Minute) }, wantStatus: 403,
			wantHeader: map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": strconv.FormatInt(clock.Now().Add(time.Minute).Unix(), 10)}},
		{name: "primary exhausted, 429", setup: func(s *Server) { s.SetPrimaryLimitStatus(429); s.ExhaustPrimary("bot", time.Minute) }, wantStatus: 429,
			wantHeader: map[string]string{"X-RateLimit-Remaining": "0"}},
		{name: "secondary with Retry-After", setup: func(s *Server) { s.SecondaryLimit(90*time.Second, 403) }, wantStatus: 403,
			wantHeader: map[string]string{"Retry-After": "90"}},
		{name: "secondary, 429", setup: func(s *Server) { s.SecondaryLimit(1500*time.Millisecond, 429) }, wantStatus: 429,
			wantHeader: map[string]string{"Retry-After": "2"}},
		{name: "window passed", setup: func(s *Server) { s.SecondaryLimit(time.Second, 403); clock.Advance(time.Second) }, wantStatus: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t)
			s.SetClock(clock.Now)
			tt.setup(s)
			a := do(t, s, "GET", "/repos/acme/widgets", tok, "")
			if a.status != tt.wantStatus {
				t.Fatalf("status %d, want %d", a.status, tt.wantStatus)
			}
			for k, v := range tt.wantHeader {
				if got := a.header.Get(k); got != v {
					t.Fatalf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestJWTClock(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	h, _ := json.Marshal(map[string]any{"alg": "RS256", "typ": "JWT"})
	c, _ := json.Marshal(map[string]any{"iss": "7", "iat": now.Add(-30 * time.Second).Unix(), "exp": now.Add(9 * time.Minute).Unix()})
	in := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	sum := sha256.Sum256([]byte(in))
	sig, _ := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	jwt := in + "." + base64.RawURLEncoding.EncodeToString(sig)
	ahead := func() time.Time { return time.Now().Add(15 * time.Minute) } // a clock that jumped ahead
	tests := []struct {
		name       string
		jwtClock   func() time.Time
		wantStatus int
	}{
		{name: "checked on the fake's clock", wantStatus: 401},
		{name: "checked on the JWT clock", jwtClock: time.Now, wantStatus: 201},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t)
			s.SetClock(ahead)
			if tt.jwtClock != nil {
				s.SetJWTClock(tt.jwtClock)
			}
			s.AddApp(7, "phasegate", &key.PublicKey)
			s.AddInstallation(7, 11)
			if a := do(t, s, "POST", "/app/installations/11/access_tokens", "", "", "Authorization", "Bearer "+jwt); a.status != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", a.status, tt.wantStatus, a.body)
			}
		})
	}
}

func TestJWT(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	sign := func(k *rsa.PrivateKey, alg string, iss any, iat, exp time.Time) string {
		h, _ := json.Marshal(map[string]any{"alg": alg, "typ": "JWT"})
		c, _ := json.Marshal(map[string]any{"iss": iss, "iat": iat.Unix(), "exp": exp.Unix()})
		in := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
		sum := sha256.Sum256([]byte(in))
		sig, _ := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:])
		return in + "." + base64.RawURLEncoding.EncodeToString(sig)
	}
	tests := []struct {
		name       string
		jwt        string
		path       string
		wantStatus int
	}{
		{name: "valid, iss as a string", jwt: sign(key, "RS256", "7", now.Add(-30*time.Second), now.Add(time.Minute)), wantStatus: 201},
		{name: "valid, iss as a number", jwt: sign(key, "RS256", 7, now, now.Add(time.Minute)), wantStatus: 201},
		{name: "other key", jwt: sign(other, "RS256", "7", now, now.Add(time.Minute)), wantStatus: 401},
		{name: "expired", jwt: sign(key, "RS256", "7", now.Add(-5*time.Minute), now.Add(-time.Minute)), wantStatus: 401},
		{name: "valid too long", jwt: sign(key, "RS256", "7", now, now.Add(time.Hour)), wantStatus: 401},
		{name: "alg none", jwt: sign(key, "none", "7", now, now.Add(time.Minute)), wantStatus: 401},
		{name: "unknown app", jwt: sign(key, "RS256", "8", now, now.Add(time.Minute)), wantStatus: 401},
		{name: "unknown installation", jwt: sign(key, "RS256", "7", now, now.Add(time.Minute)), path: "/app/installations/99/access_tokens", wantStatus: 404},
		{name: "a JWT is no API token", jwt: sign(key, "RS256", "7", now, now.Add(time.Minute)), path: "/repos/acme/widgets", wantStatus: 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t)
			s.AddApp(7, "phasegate", &key.PublicKey)
			s.AddInstallation(7, 11)
			path, method := tt.path, "POST"
			if path == "" {
				path = "/app/installations/11/access_tokens"
			}
			if strings.HasPrefix(path, "/repos") {
				method = "GET"
			}
			a := do(t, s, method, path, "", "", "Authorization", "Bearer "+tt.jwt)
			if a.status != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", a.status, tt.wantStatus, a.body)
			}
			if a.status != 201 {
				return
			}
			var out struct {
				Token     string    `json:"token"`
				ExpiresAt time.Time `json:"expires_at"`
			}
			if err := json.Unmarshal(a.body, &out); err != nil || out.Token == "" || out.ExpiresAt.Before(now.Add(50*time.Minute)) {
				t.Fatalf("token answer %s", a.body)
			}
			n := s.AddIssue("acme", "widgets", "x", "", "alice")
			if c := do(t, s, "POST", fmt.Sprintf("/repos/acme/widgets/issues/%d/comments", n), out.Token, `{"body":"hi"}`); c.status != 201 {
				t.Fatalf("comment with the installation token: %d", c.status)
			}
			if cs := s.Comments("acme", "widgets", n); len(cs) != 1 || cs[0].User != "phasegate[bot]" || cs[0].UserType != "Bot" {
				t.Fatalf("comments %+v", cs)
			}
		})
	}
}

func TestOverlappingWritesDetector(t *testing.T) {
	s := newTestServer(t)
	s.SetFaults(Faults{Latency: 30 * time.Millisecond})
	done := make(chan struct{})
	for i := 0; i < 3; i++ {
		go func() {
			defer func() { done <- struct{}{} }()
			req, _ := http.NewRequest("POST", s.URL()+"repos/acme/widgets/statuses/abc", strings.NewReader(`{"state":"success"}`))
			req.Header.Set("Authorization", "token "+tok)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	for i := 0; i < 3; i++ {
		<-done
	}
	if s.MaxConcurrentWrites() < 2 || s.OverlappingWrites() == 0 {
		t.Fatalf("max %d overlaps %d for three parallel writes", s.MaxConcurrentWrites(), s.OverlappingWrites())
	}
	// Reads never count.
	before := s.OverlappingWrites()
	do(t, s, "GET", "/repos/acme/widgets", tok, "")
	if s.OverlappingWrites() != before {
		t.Fatal("a read counted as a write")
	}
}

func TestHold(t *testing.T) {
	t.Run("released: processed", func(t *testing.T) {
		s := newTestServer(t)
		is := s.AddIssue("acme", "widgets", "t", "", "bot")
		h := s.HoldNext("POST", "/comments")
		done := make(chan answer, 1)
		go func() {
			done <- do(t, s, "POST", fmt.Sprintf("/repos/acme/widgets/issues/%d/comments", is), tok, `{"body":"hi"}`, "User-Agent", "replica-a")
		}()
		c := <-h.Arrived()
		if c.UserAgent != "replica-a" || c.Method != "POST" {
			t.Fatalf("held %+v", c)
		}
		if n := len(s.Comments("acme", "widgets", is)); n != 0 {
			t.Fatalf("%d comments while held, want 0", n)
		}
		h.Release()
		if a := <-done; a.status != http.StatusCreated {
			t.Fatalf("status %d", a.status)
		}
		if n := len(s.Comments("acme", "widgets", is)); n != 1 {
			t.Fatalf("%d comments, want 1", n)
		}
		// A hold catches one request only.
		if a := do(t, s, "POST", fmt.Sprintf("/repos/acme/widgets/issues/%d/comments", is), tok, `{"body":"again"}`); a.status != http.StatusCreated {
			t.Fatalf("second request: %d", a.status)
		}
	})
	t.Run("client gone: not processed", func(t *testing.T) {
		s := newTestServer(t)
		is := s.AddIssue("acme", "widgets", "t", "", "bot")
		h := s.HoldNext("POST", "/comments")
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "POST", s.URL()+fmt.Sprintf("repos/acme/widgets/issues/%d/comments", is), strings.NewReader(`{"body":"hi"}`))
			req.Header.Set("Authorization", "token "+tok)
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			errc <- err
		}()
		<-h.Arrived()
		cancel()
		if err := <-errc; err == nil {
			t.Fatal("the cancelled request got an answer")
		}
		select {
		case <-h.Gone():
		case <-time.After(30 * time.Second):
			t.Fatal("the fake never noticed the client went away")
		}
		if n := len(s.Comments("acme", "widgets", is)); n != 0 {
			t.Fatalf("%d comments, want 0: a request whose client died was processed", n)
		}
		calls := s.Calls()
		if last := calls[len(calls)-1]; last.Fault != "held" || last.Status != 0 {
			t.Fatalf("last call %+v", last)
		}
	})
}
