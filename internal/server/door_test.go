package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/ghfake"
)

// The attacks of "at the App's door": bodies pushed by clients who know no
// secret, and captured signed bodies re-sent under another event header.

// tripwire is a body that records whether anything read it.
type tripwire struct {
	r    io.Reader
	read atomic.Bool
}

func (t *tripwire) Read(p []byte) (int, error) {
	t.read.Store(true)
	return t.r.Read(p)
}

// rawDelivery builds a webhook request whose body and length are the
// test's; sig is the X-Hub-Signature-256 header ("" for none).
func rawDelivery(id, event string, body io.Reader, length int64, sig string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/webhook", body)
	req.ContentLength = length
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", id)
	if sig != "" {
		req.Header.Set("X-Hub-Signature-256", sig)
	}
	return req
}

func serve(h *harness, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.srv.Handler().ServeHTTP(rec, req)
	return rec
}

func TestBodyBudget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		ops      []int64 // > 0 acquire, < 0 release
		want     []bool  // acquire results, in order
		wantUsed int64
	}{
		{name: "fits", ops: []int64{10, 20}, want: []bool{true, true}, wantUsed: 30},
		{name: "exactly full", ops: []int64{64}, want: []bool{true}, wantUsed: 64},
		{name: "over: nothing reserved", ops: []int64{40, 30}, want: []bool{true, false}, wantUsed: 40},
		{name: "released bytes come back", ops: []int64{40, -40, 60}, want: []bool{true, true}, wantUsed: 60},
		{name: "larger than the whole budget", ops: []int64{65}, want: []bool{false}, wantUsed: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &bodyBudget{max: 64}
			var got []bool
			for _, op := range tt.ops {
				if op > 0 {
					got = append(got, b.acquire(op))
				} else {
					b.release(-op)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) || b.inUse() != tt.wantUsed {
				t.Fatalf("acquired %v, used %d; want %v, %d", got, b.inUse(), tt.want, tt.wantUsed)
			}
		})
	}
}

func TestParseBytes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{in: "1024", want: 1024},
		{in: "64MiB", want: 64 << 20},
		{in: "512 KiB", want: 512 << 10},
		{in: "2GiB", want: 2 << 30},
		{in: "64MB", wantErr: true},
		{in: "-1", wantErr: true},
		{in: "lots", wantErr: true},
		{in: "", wantErr: true},
		{in: "99999999999GiB", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseBytes(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("parseBytes(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// TestUnverifiedBodiesAreNotRead: a request without a well-formed
// signature header is refused before its body is read, however large it
// claims to be.
func TestUnverifiedBodiesAreNotRead(t *testing.T) {
	t.Parallel()
	big := int64(20 << 20)
	tests := []struct {
		name string
		sig  string
	}{
		{name: "no signature", sig: ""},
		{name: "not sha256=", sig: "sha1=" + strings.Repeat("ab", 20)},
		{name: "not hex", sig: "sha256=" + strings.Repeat("zz", 32)},
		{name: "too short", sig: "sha256=abcd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			body := &tripwire{r: io.LimitReader(zeros{}, big)}
			rec := serve(h, rawDelivery(h.newID(), "issue_comment", body, big, tt.sig))
			if rec.Code != http.StatusUnauthorized {
				t.Fatalf("answer %d %q, want 401", rec.Code, rec.Body.String())
			}
			if body.read.Load() {
				t.Fatal("the body of a request without a well-formed signature was read")
			}
		})
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestInflightBudget: bodies being read hold their size in one budget
// across connections; a delivery that does not fit is answered 503 unread,
// and a body of unknown length counts as MaxBody.
func TestInflightBudget(t *testing.T) {
	t.Parallel()
	const maxBody, budget = 4096, 6144
	small := commentEvent("created", 5, 99, "alice", "alice", "/decisions")
	forged := "sha256=" + strings.Repeat("0f", 32)
	tests := []struct {
		name       string
		holdLength int64 // Content-Length of the body held half-read; -1 unknown
		holdBytes  int64 // what it reserves
	}{
		{name: "a known length reserves its length", holdLength: 4000, holdBytes: 4000},
		{name: "an unknown length reserves MaxBody", holdLength: -1, holdBytes: maxBody},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(c *Config) { c.MaxBody, c.MaxInflightBytes = maxBody, budget })
			pr, pw := io.Pipe()
			held := make(chan *httptest.ResponseRecorder, 1)
			go func() { held <- serve(h, rawDelivery(h.newID(), "issue_comment", pr, tt.holdLength, forged)) }()
			h.until("the held body is reserved", func() bool { return h.srv.budget.inUse() == tt.holdBytes })

			// Does not fit in what is left: 503, not read.
			over := budget - tt.holdBytes + 1
			body := &tripwire{r: io.LimitReader(zeros{}, over)}
			rec := serve(h, rawDelivery(h.newID(), "issue_comment", body, over, forged))
			if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
				t.Fatalf("over the budget: %d (Retry-After %q) %q, want 503 with Retry-After", rec.Code, rec.Header().Get("Retry-After"), rec.Body.String())
			}
			if body.read.Load() {
				t.Fatal("a body over the budget was read")
			}
			// A signed delivery that fits is served meanwhile.
			if got := serve(h, rawDelivery(h.newID(), "issue_comment", bytes.NewReader(small), int64(len(small)), ghfake.SignWebhook(testSecret, small))); got.Code != http.StatusAccepted {
				t.Fatalf("a small signed delivery beside the held one: %d %q", got.Code, got.Body.String())
			}

			// The held body ends: its bytes come back.
			go func() {
				_, _ = pw.Write(bytes.Repeat([]byte("x"), 100))
				pw.Close()
			}()
			select {
			case rec := <-held:
				if rec.Code != http.StatusUnauthorized && rec.Code != http.StatusBadRequest {
					t.Fatalf("the held forged delivery: %d %q", rec.Code, rec.Body.String())
				}
			case <-time.After(guard):
				t.Fatal("the held delivery never finished")
			}
			if n := h.srv.budget.inUse(); n != 0 {
				t.Fatalf("%d bytes still reserved after every request ended", n)
			}
			if got := metricValue(t, h, "phasegate_webhook_deliveries_total", `result="over_budget"`); got != 1 {
				t.Fatalf("over_budget deliveries = %v, want 1", got)
			}
			if got := metricValue(t, h, "phasegate_webhook_inflight_body_bytes_limit"); got != budget {
				t.Fatalf("budget gauge = %v", got)
			}
		})
	}
}

func TestNewRefusesABudgetBelowMaxBody(t *testing.T) {
	t.Parallel()
	_, err := New(Config{Secrets: [][]byte{testSecret}, AppID: appID, PrivateKeyPEM: pemOf(appKey(t)), MaxBody: 2048, MaxInflightBytes: 1024})
	if err == nil || !strings.Contains(err.Error(), "below the max body") {
		t.Fatalf("err = %v", err)
	}
}

// TestPayloadMustMatchEvent: X-GitHub-Event is not signed, so a captured
// signed body re-sent under another event's header is refused (400) when
// its shape is not that event's; nothing is queued.
func TestPayloadMustMatchEvent(t *testing.T) {
	t.Parallel()
	comment := commentEvent("created", 5, 99, "alice", "alice", "/resolve D-001 approve")
	prComment := mustJSON(map[string]any{
		"action": "created", "installation": map[string]any{"id": installation},
		"repository": repoJSON(owner, repo), "sender": userJSON("alice"),
		"issue":   map[string]any{"number": 7, "pull_request": map[string]any{"url": "https://api.github.com/repos/acme/shop/pulls/7"}},
		"comment": map[string]any{"id": 5, "body": "/decisions", "user": userJSON("alice")},
	})
	review := mustJSON(map[string]any{
		"action": "opened", "installation": map[string]any{"id": installation},
		"repository": repoJSON(owner, repo), "sender": userJSON("alice"),
		"pull_request": map[string]any{"number": 7, "head": map[string]any{"sha": headSHA}},
		"review":       map[string]any{"id": 1, "state": "approved"},
	})
	install := installationEvent("installation", "created", "acme/shop")
	added := installationEvent("installation_repositories", "added", "acme/web")
	pr := pullRequestEvent("opened", 7, headSHA)
	status := statusEvent("phasegate/decisions", "mallory", "abc", "success")
	mergeGroup := mergeGroupEvent("checks_requested", headSHA, addedSHA)
	// A comment's body with an installation object that has an account
	// (GitHub sends only the id there): still a comment's.
	commentWithAccount := mustJSON(map[string]any{
		"action": "created", "installation": map[string]any{"id": installation, "account": userJSON(owner)},
		"repository": repoJSON(owner, repo), "sender": userJSON("alice"),
		"issue":   map[string]any{"number": 5},
		"comment": map[string]any{"id": 99, "body": "/decisions", "user": userJSON("alice")},
	})
	tests := []struct {
		name     string
		event    string
		body     []byte
		want     int
		wantBody string
	}{
		{name: "a comment re-sent as installation", event: "installation", body: comment, want: 400, wantBody: "not an installation event's"},
		{name: "a comment with an account re-sent as installation", event: "installation", body: commentWithAccount, want: 400, wantBody: "repository"},
		{name: "a comment re-sent as installation_repositories", event: "installation_repositories", body: comment, want: 400},
		{name: "a pull request re-sent as installation", event: "installation", body: pr, want: 400},
		{name: "a status re-sent as installation", event: "installation", body: status, want: 400},
		{name: "repositories added re-sent as installation", event: "installation", body: added, want: 400, wantBody: "repositories_added"},
		{name: "an installation re-sent as installation_repositories", event: "installation_repositories", body: install, want: 400},
		{name: "a pull request re-sent as a comment", event: "issue_comment", body: pr, want: 400},
		{name: "a comment on a pull request re-sent as pull_request", event: "pull_request", body: prComment, want: 400},
		{name: "a review re-sent as pull_request", event: "pull_request", body: review, want: 400, wantBody: "review"},
		{name: "a comment re-sent as status", event: "status", body: comment, want: 400},
		{name: "a status re-sent as pull_request", event: "pull_request", body: status, want: 400},
		{name: "an installation re-sent as a comment", event: "issue_comment", body: install, want: 400},
		{name: "the installation itself", event: "installation", body: install, want: 202},
		{name: "repositories added themselves", event: "installation_repositories", body: added, want: 202},
		{name: "a comment on a pull request itself", event: "issue_comment", body: prComment, want: 202},
		{name: "the pull request itself", event: "pull_request", body: pr, want: 202},
		{name: "the status itself", event: "status", body: status, want: 202},
		{name: "a comment re-sent as merge_group", event: "merge_group", body: comment, want: 400, wantBody: "comment, issue"},
		{name: "a pull request re-sent as merge_group", event: "merge_group", body: pr, want: 400, wantBody: "pull_request"},
		{name: "a merge group re-sent as a pull request", event: "pull_request", body: mergeGroup, want: 400},
		{name: "the merge group itself", event: "merge_group", body: mergeGroup, want: 202},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			code, body := h.send(delivery{event: tt.event, body: tt.body})
			if code != tt.want || !strings.Contains(body, tt.wantBody) {
				t.Fatalf("answer %d %q, want %d %q", code, body, tt.want, tt.wantBody)
			}
			if queued, _, _ := h.srv.queue.stats(h.srv.cfg.Now()); (code == http.StatusAccepted) != (queued == 1) {
				t.Fatalf("answer %d with %d queued", code, queued)
			}
		})
	}
}

// clock is a settable time source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func installationEventFor(id int64, action string, repos ...string) []byte {
	list := []any{}
	for _, r := range repos {
		_, name, _ := strings.Cut(r, "/")
		list = append(list, map[string]any{"id": 1, "name": name, "full_name": r})
	}
	return mustJSON(map[string]any{
		"action": action, "repositories": list, "sender": userJSON("erin"),
		"installation": map[string]any{"id": id, "account": userJSON(owner)},
	})
}

// TestInstallationReplay is the attack: one captured signed installation
// body re-sent with fresh delivery ids, some concurrently. It starts one
// reconcile per installation per InstallReconcileInterval, not one per
// delivery.
func TestInstallationReplay(t *testing.T) {
	t.Parallel()
	const interval = 5 * time.Minute
	clk := &clock{now: time.Date(2026, 3, 13, 5, 0, 0, 0, time.UTC)}
	throttle := NewMemSeen(interval, 100)
	throttle.now = clk.Now
	h := newHarness(t, func(c *Config) { c.InstallReconcileInterval, c.InstallThrottle = interval, throttle })
	h.start()
	h.waitReady()
	captured := installationEvent("installation", "created", "acme/shop")
	addedBody := installationEvent("installation_repositories", "added", "acme/shop")

	answers := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < 24; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			event, body := "installation", captured
			if i%3 == 0 {
				event, body = "installation_repositories", addedBody // the other installation event: the same limit
			}
			code, _ := h.send(delivery{event: event, body: body}) // a fresh delivery id each time
			mu.Lock()
			answers[fmt.Sprint(code)]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if answers["202"] != 1 || answers["200"] != 23 {
		t.Fatalf("answers %v, want one 202 and 23 200s", answers)
	}
	h.waitJobs(1)
	if got := summary(h.decider.Calls()); fmt.Sprint(got) != "[ReconcileRepo acme/shop]" {
		t.Fatalf("calls %v, want one reconcile", got)
	}
	if got := metricValue(t, h, "phasegate_webhook_deliveries_total", `result="throttled"`); got != 23 {
		t.Fatalf("throttled deliveries = %v, want 23", got)
	}
	code, body := h.send(delivery{event: "installation", body: captured})
	if code != http.StatusOK || !strings.Contains(body, "reconciled less than 5m0s ago") {
		t.Fatalf("a later replay within the interval: %d %q", code, body)
	}

	// Another installation has its own limit.
	if code, body := h.send(delivery{event: "installation", body: installationEventFor(78, "created", "acme/web")}); code != http.StatusAccepted {
		t.Fatalf("another installation: %d %q", code, body)
	}
	// Once the interval has passed, one more.
	clk.Add(interval)
	if code, body := h.send(delivery{event: "installation", body: captured}); code != http.StatusAccepted {
		t.Fatalf("after the interval: %d %q", code, body)
	}
	if code, _ := h.send(delivery{event: "installation", body: captured}); code != http.StatusOK {
		t.Fatalf("right after that: %d, want 200", code)
	}
	h.waitJobs(2)
	if got := summary(h.decider.Calls()); len(got) != 3 {
		t.Fatalf("calls %v, want three reconciles in all", got)
	}
	// Removals are not limited (they reconcile nothing).
	if code, body := h.send(delivery{event: "installation", body: installationEvent("installation", "deleted")}); code != http.StatusAccepted {
		t.Fatalf("a removal: %d %q", code, body)
	}
}

func TestInstallThrottleDown(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.InstallThrottle, c.QueueSize = brokenSeen{}, 1 })
	for i := 0; i < 3; i++ { // more than the queue holds: every slot came back
		code, body := h.send(delivery{event: "installation", body: installationEvent("installation", "created", "acme/shop")})
		if code != http.StatusOK || !strings.Contains(body, "cannot be checked") {
			t.Fatalf("answer %d %q, want 200 not acted on", code, body)
		}
	}
	if waiting, _, _ := h.srv.queue.stats(h.srv.cfg.Now()); waiting != 0 {
		t.Fatalf("%d queued", waiting)
	}
	// Commands are not affected.
	if code, body := h.send(delivery{event: "issue_comment", body: commentEvent("created", 5, 99, "alice", "alice", "/decisions")}); code != http.StatusAccepted {
		t.Fatalf("a command: %d %q", code, body)
	}
}

// TestMetricsAddr: with MetricsAddr, /metrics is served there and not on
// the webhook's listener.
func TestMetricsAddr(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.MetricsAddr = "127.0.0.1:0" })
	h.start()
	h.until("the metrics listener is up", func() bool { return h.srv.MetricsAddr() != "" })
	if code, _ := h.get("/metrics"); code != http.StatusNotFound {
		t.Fatalf("/metrics on the webhook listener: %d, want 404", code)
	}
	if code, _ := h.get("/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz: %d", code)
	}
	resp, err := http.Get("http://" + h.srv.MetricsAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "phasegate_webhook_inflight_body_bytes_limit") {
		t.Fatalf("/metrics on the metrics listener: %d\n%s", resp.StatusCode, tail(string(b), 5))
	}
	resp2, err := http.Post("http://"+h.srv.MetricsAddr()+"/webhook", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusNotFound {
		t.Fatalf("the webhook on the metrics listener: %d, want 404", resp2.StatusCode)
	}
	if err := h.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + h.srv.MetricsAddr() + "/metrics"); err == nil {
		t.Fatal("the metrics listener still answers after shutdown")
	}
}

func TestMetricsAddrTaken(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	h := newHarness(t, func(c *Config) { c.MetricsAddr = taken.Addr().String() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	err = h.srv.Serve(context.Background(), ln)
	if err == nil || !strings.Contains(err.Error(), "for /metrics") {
		t.Fatalf("Serve = %v, want a listen error for /metrics", err)
	}
	if _, err := ln.Accept(); err == nil {
		t.Fatal("the webhook listener was left open")
	}
}

// TestSlowBodyLosesItsBudget: a body that trickles in is cut off after the
// body read timeout, and its reservation comes back, well before the
// server's one-minute ReadTimeout.
func TestSlowBodyLosesItsBudget(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.bodyReadTimeout = 50 * time.Millisecond })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-served }()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(guard))
	fmt.Fprintf(conn, "POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n"+
		"X-GitHub-Event: issue_comment\r\nX-GitHub-Delivery: slow-1\r\nX-Hub-Signature-256: sha256=%s\r\n\r\n{\"action\":", strings.Repeat("0f", 32))
	h.until("the body's first chunk is reserved", func() bool { return h.srv.budget.inUse() == bodyChunk })
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("answer %d, want 400", resp.StatusCode)
	}
	h.until("the reservation is given back", func() bool { return h.srv.budget.inUse() == 0 })
}
