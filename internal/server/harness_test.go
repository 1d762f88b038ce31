package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/phasegate/phasegate/internal/checkjob"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/ghfake/ghfaketest"
	"github.com/phasegate/phasegate/internal/ledger"
)

const (
	appID        = 4242
	appSlug      = "phasegate"
	appBot       = "phasegate[bot]"
	installation = 77
	owner        = "acme"
	repo         = "shop"
)

var testSecret = []byte("It's a Secret to Everybody")

// guard bounds every wait of a test: a deadlock fails the test instead of
// hanging it. No test asserts on how long anything took.
const guard = 30 * time.Second

var (
	keyOnce sync.Once
	testKey *rsa.PrivateKey
)

func appKey(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	keyOnce.Do(func() {
		// 1024 bits, the least crypto/rsa generates: the tests need a
		// key the fake GitHub verifies, not its strength; under -race it
		// generates in a third of the time and signs each App JWT in a
		// quarter (0.6 ms against 2-3 ms).
		k, err := rsa.GenerateKey(rand.Reader, 1024)
		if err != nil {
			panic(err)
		}
		testKey = k
	})
	return testKey
}

func pemOf(k *rsa.PrivateKey) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
}

// syncBuffer is a log sink safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lines returns the JSON log lines with msg containing substr.
func (b *syncBuffer) lines(substr string) []map[string]any {
	var out []map[string]any
	for _, l := range strings.Split(b.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && strings.Contains(fmt.Sprint(m["msg"]), substr) {
			out = append(out, m)
		}
	}
	return out
}

// call is one call a fakeDecider received.
type call struct {
	method   string
	owner    string
	repo     string
	number   int
	event    decide.Event
	identity string
	// SyncCommit
	sha, targetURL string
}

// fakeDecider records calls; it can block them, panic or fail.
type fakeDecider struct {
	mu       sync.Mutex
	calls    []call
	entered  chan call     // each call is sent here when set (buffered by the test)
	gate     chan struct{} // when set, each call waits for a receive-able value or ctx
	panics   atomic.Int32  // panic in this many calls
	identity string
}

func (f *fakeDecider) record(ctx context.Context, c call) error {
	f.mu.Lock()
	c.identity = f.identity
	f.calls = append(f.calls, c)
	entered, gate := f.entered, f.gate
	f.mu.Unlock()
	if entered != nil {
		entered <- c
	}
	if f.panics.Add(-1) >= 0 {
		panic("decider exploded")
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (f *fakeDecider) HandleComment(ctx context.Context, gh decide.GitHub, ev decide.Event) (decide.Result, error) {
	return decide.Result{}, f.record(ctx, call{method: "HandleComment", owner: ev.Owner, repo: ev.Repo, number: ev.Issue, event: ev})
}

func (f *fakeDecider) ReconcileIssue(ctx context.Context, gh decide.GitHub, owner, repo string, issue int) (decide.Result, error) {
	return decide.Result{}, f.record(ctx, call{method: "ReconcileIssue", owner: owner, repo: repo, number: issue})
}

func (f *fakeDecider) ReconcileRepo(ctx context.Context, gh decide.GitHub, owner, repo string) (decide.Result, error) {
	return decide.Result{}, f.record(ctx, call{method: "ReconcileRepo", owner: owner, repo: repo})
}

func (f *fakeDecider) SyncPullRequest(ctx context.Context, gh decide.GitHub, owner, repo string, number int) error {
	return f.record(ctx, call{method: "SyncPullRequest", owner: owner, repo: repo, number: number})
}

func (f *fakeDecider) SyncCommit(ctx context.Context, gh decide.GitHub, owner, repo, sha string, opts decide.CommitOptions) (ghclient.Status, error) {
	return ghclient.Status{}, f.record(ctx, call{method: "SyncCommit", owner: owner, repo: repo, sha: sha, targetURL: opts.TargetURL})
}

func (f *fakeDecider) RecordDeletion(ctx context.Context, gh decide.GitHub, d decide.Deletion) (decide.Result, error) {
	return decide.Result{}, f.record(ctx, call{method: "RecordDeletion", owner: d.Owner, repo: d.Repo, number: d.Issue})
}

func (f *fakeDecider) CheckCommit(ctx context.Context, gh checkjob.GitHub, req checkjob.Request) (checkjob.Summary, error) {
	return checkjob.Summary{}, f.record(ctx, call{method: "CheckCommit", owner: req.Owner, repo: req.Repo, sha: req.SHA, number: reqPR(req)})
}

func (f *fakeDecider) DeploymentDecisions(ctx context.Context, gh decide.GitHub, owner, repo, sha string) (decide.DeploymentRead, error) {
	err := f.record(ctx, call{method: "DeploymentDecisions", owner: owner, repo: repo, sha: sha})
	return decide.DeploymentRead{State: ledger.DeployState{SHA: sha, Read: sha}}, err
}

func (f *fakeDecider) Calls() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call(nil), f.calls...)
}

// summary renders calls as "Method owner/repo#n".
func summary(cs []call) []string {
	out := []string{}
	for _, c := range cs {
		s := c.method + " " + c.owner + "/" + c.repo
		if c.number > 0 {
			s += fmt.Sprintf("#%d", c.number)
		}
		if c.sha != "" {
			s += "@" + c.sha + " " + c.targetURL
		}
		out = append(out, s)
	}
	return out
}

type jobDone struct {
	kind, delivery, outcome string
}

// harness is a fake GitHub with the App installed, and a Server for it.
type harness struct {
	t       testing.TB
	fake    *ghfake.Server
	srv     *Server
	decider *fakeDecider
	logs    *syncBuffer
	done    chan jobDone
	cancel  context.CancelFunc
	served  chan error
	seq     atomic.Int64
}

// newFake is a fake GitHub with the App installed on owner/repo.
func newFake(t testing.TB) *ghfake.Server {
	t.Helper()
	f := ghfake.New() // real clock: ghinstallation signs JWTs with time.Now
	t.Cleanup(f.Close)
	ghfaketest.Verify(t, f)
	f.AddApp(appID, appSlug, &appKey(t).PublicKey)
	f.AddInstallation(appID, installation)
	f.AddRepo(owner, repo, "main")
	return f
}

// newHarness builds the server (not started) with a fakeDecider; opts
// adjust the Config.
func newHarness(t testing.TB, opts ...func(*Config)) *harness {
	t.Helper()
	key := appKey(t)
	f := newFake(t)
	h := &harness{t: t, fake: f, decider: &fakeDecider{}, logs: &syncBuffer{}, done: make(chan jobDone, 1000)}
	cfg := Config{
		Secrets:       [][]byte{testSecret},
		AppID:         appID,
		PrivateKeyPEM: pemOf(key),
		APIURL:        f.URL(),
		QueueSize:     64,
		Workers:       4,
		ReadyRetry:    5 * time.Millisecond,
		// The deciding tests read phasegate/decisions as a status; the
		// App's check runs are tested in check_test.go.
		Publish: "statuses",
		// The server's metrics without the Go runtime and process
		// collectors of the default registry (TestMetrics keeps them):
		// building the Go collector and collecting it on every scrape
		// cost about 3 % of the package's CPU under -race.
		Registry: prometheus.NewRegistry(),
		Logger:   slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		GitHubOptions: func(o *ghclient.Options) {
			o.BackoffBase, o.BackoffMax, o.MaxAttempts = time.Millisecond, 2*time.Millisecond, 3
		},
		NewDecider: func(o DeciderOptions) Decider {
			h.decider.mu.Lock()
			h.decider.identity = o.Identity
			h.decider.mu.Unlock()
			return h.decider
		},
	}
	for _, o := range opts {
		o(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	s.onJobDone = func(j *job, outcome string) { h.done <- jobDone{kind: j.Kind, delivery: j.Delivery, outcome: outcome} }
	h.srv = s
	t.Cleanup(func() {
		if strings.Contains(h.logs.String(), "PRIVATE KEY") || strings.Contains(h.logs.String(), string(testSecret)) {
			t.Error("a secret reached the logs")
		}
	})
	return h
}

// start serves on a loopback listener until the test ends (or stop).
func (h *harness) start() {
	h.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.served = make(chan error, 1)
	go func() { h.served <- h.srv.Serve(ctx, ln) }()
	h.t.Cleanup(func() { _ = h.stop() })
}

// stop asks the server to shut down and returns what Serve returned.
func (h *harness) stop() error {
	if h.cancel == nil {
		return nil
	}
	h.cancel()
	select {
	case err := <-h.served:
		h.served <- err // a second stop gets the same answer
		return err
	case <-time.After(guard):
		h.t.Fatal("Serve did not return")
		return nil
	}
}

func (h *harness) waitReady() {
	h.t.Helper()
	select {
	case <-h.srv.readyCh:
	case <-time.After(guard):
		h.t.Fatalf("never ready; logs:\n%s", h.logs.String())
	}
}

// waitJobs waits for n jobs to finish and returns them.
func (h *harness) waitJobs(n int) []jobDone {
	h.t.Helper()
	var out []jobDone
	for len(out) < n {
		select {
		case d := <-h.done:
			out = append(out, d)
		case <-time.After(guard):
			h.t.Fatalf("%d of %d jobs done; logs:\n%s", len(out), n, h.logs.String())
		}
	}
	return out
}

// until polls cond (a state change made by another goroutine) until it
// holds: at once, then at growing intervals (1 ms doubling to 16 ms), so
// that a condition that takes seconds (one that reads /metrics, say) does
// not spend a core on polling.
func (h *harness) until(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(guard)
	for pause := time.Millisecond; !cond(); pause = min(2*pause, 16*time.Millisecond) {
		if time.Now().After(deadline) {
			h.t.Fatalf("never: %s", what)
		}
		time.Sleep(pause)
	}
}

// delivery is a webhook request.
type delivery struct {
	method  string // default POST
	path    string // default /webhook
	event   string
	id      string // X-GitHub-Delivery; default a fresh one
	body    []byte
	headers map[string]string // set last; an empty value deletes the header
	secret  []byte            // default testSecret; signs body
}

func (h *harness) newID() string { return fmt.Sprintf("delivery-%d", h.seq.Add(1)) }

// send serves a delivery through the server's handler and returns the
// status and body.
func (h *harness) send(d delivery) (int, string) {
	h.t.Helper()
	if d.method == "" {
		d.method = http.MethodPost
	}
	if d.path == "" {
		d.path = "/webhook"
	}
	if d.id == "" {
		d.id = h.newID()
	}
	if d.secret == nil {
		d.secret = testSecret
	}
	req := httptest.NewRequest(d.method, d.path, bytes.NewReader(d.body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", d.event)
	req.Header.Set("X-GitHub-Delivery", d.id)
	req.Header.Set("X-Hub-Signature-256", ghfake.SignWebhook(d.secret, d.body))
	for k, v := range d.headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	if v, ok := d.headers["Content-Length"]; ok && v == "" {
		req.ContentLength = -1 // unknown: the cap applies while reading
	}
	rec := httptest.NewRecorder()
	h.srv.Handler().ServeHTTP(rec, req)
	return rec.Code, strings.TrimSpace(rec.Body.String())
}

func (h *harness) get(path string) (int, string) {
	rec := httptest.NewRecorder()
	h.srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func userJSON(login string) map[string]any {
	typ := "User"
	if strings.HasSuffix(login, "[bot]") {
		typ = "Bot"
	}
	return map[string]any{"login": login, "type": typ}
}

func repoJSON(owner, name string) map[string]any {
	return map[string]any{"id": 1, "name": name, "full_name": owner + "/" + name, "owner": userJSON(owner)}
}

// commentEvent is an issue_comment payload: author wrote the comment,
// sender did the action.
func commentEvent(action string, issue int, commentID int64, author, sender, body string) []byte {
	return mustJSON(map[string]any{
		"action":       action,
		"installation": map[string]any{"id": installation},
		"repository":   repoJSON(owner, repo),
		"sender":       userJSON(sender),
		"issue":        map[string]any{"number": issue, "title": "Feature"},
		"comment": map[string]any{"id": commentID, "body": body, "user": userJSON(author),
			"html_url": fmt.Sprintf("https://github.com/%s/%s/issues/%d#issuecomment-%d", owner, repo, issue, commentID)},
	})
}

func pullRequestEvent(action string, number int, head string) []byte {
	return mustJSON(map[string]any{
		"action":       action,
		"number":       number,
		"installation": map[string]any{"id": installation},
		"repository":   repoJSON(owner, repo),
		"sender":       userJSON("alice"),
		"pull_request": map[string]any{"number": number, "head": map[string]any{"sha": head}},
	})
}

// mergeGroupEvent is a merge_group payload in the shape GitHub sends it.
func mergeGroupEvent(action, head, base string) []byte {
	r := repoJSON(owner, repo)
	r["html_url"] = "https://github.com/" + owner + "/" + repo
	return mustJSON(map[string]any{
		"action": action,
		"merge_group": map[string]any{
			"head_sha": head, "head_ref": "refs/heads/gh-readonly-queue/main/pr-100-" + base,
			"base_sha": base, "base_ref": "refs/heads/main",
			"head_commit": map[string]any{
				"id": head, "tree_id": "1111111111111111111111111111111111111111", "message": "Merge pull request #100 from acme/feature",
				"timestamp": "2026-03-13T05:00:00Z",
				"author":    map[string]any{"name": "alice", "email": "alice@example.com"},
				"committer": map[string]any{"name": "GitHub", "email": "noreply@github.com"},
			},
		},
		"installation": map[string]any{"id": installation, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ=="},
		"repository":   r,
		"sender":       userJSON("alice"),
	})
}

func statusEvent(context, sender, sha, state string) []byte {
	return mustJSON(map[string]any{
		"sha": sha, "context": context, "state": state, "description": "looks fine to me",
		"installation": map[string]any{"id": installation},
		"repository":   repoJSON(owner, repo),
		"sender":       userJSON(sender),
	})
}

func installationEvent(event, action string, repos ...string) []byte {
	list := []any{}
	for _, r := range repos {
		_, name, _ := strings.Cut(r, "/")
		list = append(list, map[string]any{"id": 1, "name": name, "full_name": r})
	}
	p := map[string]any{
		"action":       action,
		"installation": map[string]any{"id": installation, "account": userJSON(owner)},
		"sender":       userJSON("erin"),
	}
	switch {
	case event == "installation":
		p["repositories"] = list
	case action == "added":
		p["repositories_added"] = list
	default:
		p["repositories_removed"] = list
	}
	return mustJSON(p)
}

func reqPR(req checkjob.Request) int {
	if req.PR == nil {
		return 0
	}
	return req.PR.Number
}

// metricValue sums one metric's samples (see sumMetric) on the harness's
// /metrics.
func metricValue(t *testing.T, h *harness, name string, labels ...string) float64 {
	t.Helper()
	_, body := h.get("/metrics")
	return sumMetric(body, name, labels...)
}

// sumMetric sums the samples of the metric name in a Prometheus text
// exposition whose labels contain every one of labels (`name="value"`).
func sumMetric(exposition, name string, labels ...string) float64 {
	sum := 0.0
	for _, line := range strings.Split(exposition, "\n") {
		series, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") || (series != name && !strings.HasPrefix(series, name+"{")) {
			continue
		}
		match := true
		for _, l := range labels {
			match = match && strings.Contains(series, l)
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil && match {
			sum += v
		}
	}
	return sum
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
