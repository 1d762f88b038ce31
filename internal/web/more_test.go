package web

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestEventsDeliverOnlyVisibleChanges(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(f.p.Handler())
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/events", nil)
	req.AddCookie(f.cookie(t))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	f.src.changes <- Change{Owner: "other", Repo: "secret", Issue: 1}
	f.src.changes <- Change{Owner: "acme", Repo: "hidden", SHA: "abc"}
	f.src.changes <- Change{Owner: "ACME", Repo: "App", Issue: 7}
	f.src.changes <- Change{Owner: "acme", Repo: "tools", SHA: "0123456"}
	r := bufio.NewReader(resp.Body)
	var data []string
	for len(data) < 2 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v (got %q)", err, data)
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data = append(data, strings.TrimSpace(d))
		}
	}
	want := []string{`{"repo":"ACME/App","issue":7}`, `{"repo":"acme/tools","sha":"0123456"}`}
	if strings.Join(data, "\n") != strings.Join(want, "\n") {
		t.Errorf("events %q, want %q", data, want)
	}
}

func TestEventsLimits(t *testing.T) {
	f := newFixture(t)
	f.p.streams.perPerson = 1
	srv := httptest.NewServer(f.p.Handler())
	defer srv.Close()
	c := f.cookie(t)
	get := func() *http.Response {
		req, _ := http.NewRequest("GET", srv.URL+"/events", nil)
		req.AddCookie(c)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first := get()
	defer first.Body.Close()
	second := get()
	second.Body.Close()
	if first.StatusCode != http.StatusOK || second.StatusCode != http.StatusTooManyRequests {
		t.Errorf("first %d, second %d; want 200 then 429", first.StatusCode, second.StatusCode)
	}
}

// Agent-written text reaches the page only escaped, and a URL from the
// Source is linked only when it is https on GitHub's host or ours.
func TestHostileTextEscaped(t *testing.T) {
	f := newFixture(t)
	page := f.src.issues["acme/app#7"]
	page.Title = `<script>alert("title")</script>`
	page.URL = "javascript:alert(1)"
	o := &page.Outcomes[0]
	o.Summary = `<img src=x onerror=alert(1)><script>alert(2)</script>`
	o.Phase = `"><svg onload=alert(3)>`
	o.CommentURL = "https://evil.example/acme/app/issues/7"
	o.Decisions[0].Question = `</h4><a href="javascript:alert(4)">click</a>`
	o.Decisions[0].Options[0].Label = `<b onclick=alert(5)>Approve</b>`
	o.Decisions[0].Options[0].Key = `approve" onfocus="alert(6)`
	o.Decisions[2].ResolutionURL = "http://github.com/acme/app/issues/7#issuecomment-3"
	page.History[0].CommentURL = "https://github.com.evil.example/x"
	page.History[1].CommentURL = "//evil.example/x"
	page.History[0].What = "<style>body{display:none}</style>"
	f.src.commits["acme/app@0123456789abcdef0123456789abcdef01234567"].Findings[0].URL = "data:text/html,<script>alert(7)</script>"
	f.src.commits["acme/app@0123456789abcdef0123456789abcdef01234567"].Findings[0].Message = "<script>alert(8)</script>"
	c := f.cookie(t)
	for _, path := range []string{"/acme/app/issues/7", "/acme/app/commit/0123456789abcdef0123456789abcdef01234567"} {
		body := f.do("GET", path, nil, nil, c).Body.String()
		for _, bad := range []string{"<script>alert", "<img src=x", "<svg", `href="javascript`, `href="data`, "evil.example", "http://github.com", "data:text",
			"<b onclick", `" onfocus="`, "<style>", `<a href="javascript`} {
			if strings.Contains(body, bad) {
				t.Errorf("%s: the page contains %q", path, bad)
			}
		}
		if path == "/acme/app/issues/7" && !strings.Contains(body, "&lt;script&gt;alert(&#34;title&#34;)&lt;/script&gt;") {
			t.Errorf("%s: the hostile title is not shown escaped", path)
		}
		if n := strings.Count(body, "<script"); n != 1 {
			t.Errorf("%s: %d script elements, want only our own", path, n)
		}
	}
}

func TestSafeNext(t *testing.T) {
	tests := []struct{ next, want string }{
		{next: "/acme/app/issues/7", want: "/acme/app/issues/7"},
		{next: "/inbox?repo=acme%2Fapp&mine=1", want: "/inbox?repo=acme%2Fapp&mine=1"},
		{next: "", want: "/inbox"},
		{next: "https://evil.example/", want: "/inbox"},
		{next: "//evil.example/", want: "/inbox"},
		{next: "/\\evil.example", want: "/inbox"},
		{next: "\\\\evil.example", want: "/inbox"},
		{next: "javascript:alert(1)", want: "/inbox"},
		{next: "/%2F%2Fevil.example", want: "/%2F%2Fevil.example"},
		{next: "/\t/evil.example", want: "/inbox"},
		{next: "/login?next=/x", want: "/inbox"},
		{next: "/oauth/callback?code=x", want: "/inbox"},
		{next: "evil.example", want: "/inbox"},
	}
	for _, tt := range tests {
		t.Run(tt.next, func(t *testing.T) {
			if got := safeNext(tt.next); got != tt.want {
				t.Errorf("safeNext(%q) = %q, want %q", tt.next, got, tt.want)
			}
		})
	}
}

func TestCheckPublicURL(t *testing.T) {
	tests := []struct {
		raw string
		ok  bool
	}{
		{raw: "https://phasegate.example.com", ok: true},
		{raw: "https://phasegate.example.com/", ok: true},
		{raw: "https://phasegate.example.com:8443", ok: true},
		{raw: "http://localhost:8080", ok: true},
		{raw: "http://127.0.0.1:8080", ok: true},
		{raw: "http://[::1]:8080", ok: true},
		{raw: "http://phasegate.example.com", ok: false},
		{raw: "https://phasegate.example.com/pages", ok: false},
		{raw: "https://user:pw@phasegate.example.com", ok: false},
		{raw: "https://phasegate.example.com?x=1", ok: false},
		{raw: "phasegate.example.com", ok: false},
		{raw: "", ok: false},
		{raw: "ftp://phasegate.example.com", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			_, err := CheckPublicURL(tt.raw)
			if (err == nil) != tt.ok {
				t.Errorf("CheckPublicURL(%q): %v, want ok %v", tt.raw, err, tt.ok)
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name string
		cfg  Config
	}{
		{name: "short key", cfg: Config{PublicURL: "https://x.example", SessionKeys: [][]byte{[]byte("short")}}},
		{name: "no key", cfg: Config{PublicURL: "https://x.example"}},
		{name: "http public URL", cfg: Config{PublicURL: "http://x.example", SessionKeys: f.keys}},
		{name: "TTL over eight hours", cfg: Config{PublicURL: "https://x.example", SessionKeys: f.keys, SessionTTL: 9 * time.Hour}},
		{name: "http GitHub", cfg: Config{PublicURL: "https://x.example", SessionKeys: f.keys, GitHubURL: "http://ghe.example"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.cfg, f.oauth, f.src); err == nil {
				t.Error("New accepted it")
			}
		})
	}
}

func FuzzOpenSession(f *testing.F) {
	fx := &fixture{now: testNow, keys: [][]byte{testKey}}
	fx.user = &stubUser{viewer: Viewer{Login: "alice", ID: 42}}
	fx.oauth = &stubOAuth{user: fx.user}
	fx.src = sampleSource()
	fx.build(f)
	good, _ := fx.p.sessions.seal(newSession(fx.user.viewer, Token{AccessToken: testToken}, testNow, MaxSessionTTL))
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(good[:len(good)-1] + "B")
	f.Add("AQ")
	f.Add("")
	f.Add(strings.Repeat("A", 5000))
	// Only a value sealed under the key opens: a fuzzed one that opens
	// can only be the seed itself (each process seals its own), a whole
	// session of alice's.
	f.Fuzz(func(t *testing.T, v string) {
		var s session
		if fx.p.sessions.open(v, &s) && (s.Login != "alice" || s.Token != testToken || len(s.CSRF) != 32) {
			t.Fatalf("%q opened as %+v", v, s)
		}
		r := httptest.NewRequest("GET", "/inbox", nil)
		r.AddCookie(&http.Cookie{Name: fx.p.sessionCookie, Value: v})
		if s, _ := fx.p.session(r); s != nil && s.Login != "alice" {
			t.Fatalf("a session from %q: %+v", v, s)
		}
	})
}

// A frozen ledger offers no resolve form, even to someone who may resolve.
func TestFrozenOffersNoForm(t *testing.T) {
	f := newFixture(t)
	f.src.issues["acme/app#7"].Frozen = true
	f.src.issues["acme/app#7"].Tampering = []TamperView{{CommentID: 11, Reason: "the outcome comment was edited"}}
	body := f.do("GET", "/acme/app/issues/7", nil, nil, f.cookie(t)).Body.String()
	if strings.Contains(body, "<form class=\"resolve\"") || !strings.Contains(body, "the outcome comment was edited") {
		t.Errorf("frozen page:\n%s", body)
	}
}

// A stream outlives the server's read and write timeouts (serve's are a
// minute): heartbeats renew the write deadline, and no read deadline ends
// the request.
func TestEventsOutliveServerTimeouts(t *testing.T) {
	f := newFixture(t)
	f.p.cfg.Heartbeat = 20 * time.Millisecond
	srv := httptest.NewUnstartedServer(f.p.Handler())
	srv.Config.ReadTimeout, srv.Config.WriteTimeout = 100*time.Millisecond, 100*time.Millisecond
	srv.Start()
	defer srv.Close()
	cookie := f.cookie(t)
	var resp *http.Response
	var err error
	// The server's ReadTimeout runs from the connection's accept, before
	// the handler can lift it: on a loaded machine the server may give up
	// on reading the request itself. That is not the stream (which ends
	// only once its headers came): ask again.
	for range 5 {
		req, _ := http.NewRequest("GET", srv.URL+"/events", nil)
		req.AddCookie(cookie)
		if resp, err = srv.Client().Do(req); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	pings := 0
	for pings < 15 { // 300 ms of heartbeats: past both timeouts
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended after %d heartbeats: %v", pings, err)
		}
		if line == ": ping\n" {
			pings++
		}
	}
	f.src.changes <- Change{Owner: "acme", Repo: "app", Issue: 7}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("no event after the timeouts: %v", err)
		}
		if strings.HasPrefix(line, "data: ") {
			break
		}
	}
}
