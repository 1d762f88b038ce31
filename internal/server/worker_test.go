package server

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghfake"
)

func TestFullQueue(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.Workers, c.QueueSize = 1, 1 })
	h.decider.entered = make(chan call, 10)
	h.decider.gate = make(chan struct{})
	h.start()
	h.waitReady()
	send := func(id string) int { // one comment per delivery ID: one comment re-sent is a replay
		n, _ := strconv.Atoi(id[len("d-"):])
		code, _ := h.send(delivery{event: "issue_comment", id: id, body: commentEvent("created", 5, int64(100+n), "alice", "alice", "/decisions")})
		return code
	}
	if code := send("d-1"); code != http.StatusAccepted {
		t.Fatalf("d-1: %d", code)
	}
	<-h.decider.entered // the worker holds d-1
	if code := send("d-2"); code != http.StatusAccepted {
		t.Fatalf("d-2 (queued): %d", code)
	}
	if code := send("d-3"); code != http.StatusServiceUnavailable {
		t.Fatalf("d-3 on a full queue: %d, want 503", code)
	}
	close(h.decider.gate)
	h.waitJobs(2)
	// GitHub's redelivery of the refused delivery is not a replay.
	if code := send("d-3"); code != http.StatusAccepted {
		t.Fatalf("d-3 redelivered: %d, want 202", code)
	}
	h.waitJobs(1)
	if code := send("d-3"); code != http.StatusOK {
		t.Fatalf("d-3 once more: %d, want 200 duplicate", code)
	}
}

func TestPanicIsRecovered(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.Workers = 1 })
	h.decider.panics.Store(1)
	h.start()
	h.waitReady()
	for i, id := range []string{"boom", "after"} {
		if code, _ := h.send(delivery{event: "issue_comment", id: id, body: commentEvent("created", 5, int64(99+i), "alice", "alice", "/decisions")}); code != http.StatusAccepted {
			t.Fatalf("%s: %d", id, code)
		}
	}
	done := h.waitJobs(2)
	if done[0].delivery != "boom" || done[0].outcome != "panic" || done[1].delivery != "after" || done[1].outcome != "ok" {
		t.Fatalf("jobs %+v, want the panic recovered and the next job handled", done)
	}
	if l := h.logs.lines("panic while handling"); len(l) != 1 || l[0]["delivery"] != "boom" || !strings.Contains(l[0]["stack"].(string), "fakeDecider") {
		t.Fatalf("panic log lines %v", l)
	}
	if _, m := h.get("/metrics"); !strings.Contains(m, "phasegate_handler_panics_total 1") {
		t.Fatal("panic not counted")
	}
}

func TestShutdownDrainsTheQueue(t *testing.T) {
	t.Parallel()
	const n = 6
	h := newHarness(t, func(c *Config) { c.Workers = 1 })
	h.decider.entered = make(chan call, n)
	h.decider.gate = make(chan struct{})
	h.start()
	h.waitReady()
	for i := 0; i < n; i++ {
		if code, _ := h.send(delivery{event: "issue_comment", body: commentEvent("created", 5, int64(100+i), "alice", "alice", "/decisions")}); code != http.StatusAccepted {
			t.Fatalf("delivery %d: %d", i, code)
		}
	}
	<-h.decider.entered // busy with the first; the rest queued
	stopped := make(chan error, 1)
	go func() { stopped <- h.stop() }()
	h.until("draining", h.srv.draining.Load)
	if code, body := h.send(delivery{event: "issue_comment", body: commentEvent("created", 5, 999, "alice", "alice", "/decisions")}); code != http.StatusServiceUnavailable {
		t.Fatalf("a delivery while draining: %d %q, want 503", code, body)
	}
	if code, _ := h.get("/readyz"); code != http.StatusServiceUnavailable {
		t.Fatalf("readyz while draining: %d", code)
	}
	close(h.decider.gate)
	if err := <-stopped; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	done := h.waitJobs(n)
	for _, d := range done {
		if d.outcome != "ok" {
			t.Fatalf("job %+v was not handled", d)
		}
	}
	if got := len(h.decider.Calls()); got != n {
		t.Fatalf("%d calls, want %d: the queue was not drained", got, n)
	}
}

func TestShutdownTimeoutCancelsTheRest(t *testing.T) {
	t.Parallel()
	const n = 4
	h := newHarness(t, func(c *Config) { c.Workers, c.ShutdownTimeout = 1, 20*time.Millisecond })
	h.decider.entered = make(chan call, n)
	h.decider.gate = make(chan struct{}) // never opened: only cancellation ends the call
	h.start()
	h.waitReady()
	for i := 0; i < n; i++ {
		h.send(delivery{event: "issue_comment", body: commentEvent("created", 5, int64(100+i), "alice", "alice", "/decisions")})
	}
	<-h.decider.entered
	if err := h.stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	outcomes := map[string]int{}
	for _, d := range h.waitJobs(n) {
		outcomes[d.outcome]++
	}
	if outcomes["error"] != 1 || outcomes["dropped"] != n-1 {
		t.Fatalf("outcomes %v: want the running job cancelled and the queued ones dropped", outcomes)
	}
	if l := h.logs.lines("dropped at shutdown"); len(l) != n-1 {
		t.Fatalf("%d drop log lines", len(l))
	}
}

func TestDispatch(t *testing.T) {
	t.Parallel()
	const head = "feedfacefeedfacefeedfacefeedfacefeedface"
	tests := []struct {
		name      string
		setup     func(f *ghfake.Server)
		event     string
		body      []byte
		wantCalls []string
		wantAudit string // an audit log line's "audit" value
		early     bool   // sent before the server learnt its identity
	}{
		{name: "a command", event: "issue_comment",
			body:      commentEvent("created", 5, 99, "alice", "alice", "/resolve D-001 approve"),
			wantCalls: []string{"HandleComment acme/shop#5"}},
		{name: "phasegate's comment edited", event: "issue_comment",
			body:      commentEvent("edited", 5, 99, appBot, "mallory", "edited"),
			wantCalls: []string{"ReconcileIssue acme/shop#5"}, wantAudit: "tamper"},
		{name: "phasegate's comment deleted", event: "issue_comment",
			body:      commentEvent("deleted", 5, 99, appBot, "mallory", "gone"),
			wantCalls: []string{"RecordDeletion acme/shop#5"}, wantAudit: "tamper"},
		{name: "another bot's comment edited, before the identity was known", event: "issue_comment", early: true,
			body: commentEvent("edited", 5, 99, "other[bot]", "other[bot]", "edited")},
		{name: "a pull request opened", event: "pull_request", body: pullRequestEvent("opened", 7, head),
			setup: func(f *ghfake.Server) {
				f.AddPullRequest(owner, repo, ghfake.PullRequest{Number: 7, HeadSHA: head, Author: "alice"})
			},
			wantCalls: []string{"CheckCommit acme/shop#7@" + head + " "}},
		{name: "a pull request pushed to", event: "pull_request", body: pullRequestEvent("synchronize", 7, head),
			setup: func(f *ghfake.Server) {
				f.AddPullRequest(owner, repo, ghfake.PullRequest{Number: 7, HeadSHA: head, Author: "alice"})
			},
			wantCalls: []string{"CheckCommit acme/shop#7@" + head + " "}},
		{name: "a merge group's checks requested", event: "merge_group", body: mergeGroupEvent("checks_requested", head, addedSHA),
			wantCalls: []string{"CheckCommit acme/shop@" + head + " "}},
		{name: "a push to a pull request's head checks it as the pull request", event: "push",
			setup: func(f *ghfake.Server) {
				f.AddPullRequest(owner, repo, ghfake.PullRequest{Number: 7, HeadSHA: head, Author: "alice"})
			},
			body:      pushEvent("refs/heads/feature", sha1st, head, false),
			wantCalls: []string{"CheckCommit acme/shop#7@" + head + " "}},
		{name: "a push to a branch without a pull request", event: "push", body: pushEvent("refs/heads/main", sha1st, head, false),
			wantCalls: []string{"CheckCommit acme/shop@" + head + " "}},
		{name: "a re-run requested", event: "check_run", body: checkRunEvent("rerequested", head),
			wantCalls: []string{"CheckCommit acme/shop@" + head + " "}},
		{name: "a review submitted", event: "pull_request_review", body: reviewEvent("submitted", 7, head),
			setup: func(f *ghfake.Server) {
				f.AddPullRequest(owner, repo, ghfake.PullRequest{Number: 7, HeadSHA: head, Author: "alice"})
			},
			wantCalls: []string{"CheckCommit acme/shop#7@" + head + " "}},
		{name: "phasegate/decisions overwritten on a head", event: "status",
			setup: func(f *ghfake.Server) {
				f.AddPullRequest(owner, repo, ghfake.PullRequest{Number: 7, HeadSHA: head, Author: "alice"})
				f.AddPullRequest(owner, repo, ghfake.PullRequest{Number: 8, HeadSHA: "0000000000000000000000000000000000000008", Commits: []string{head}, Author: "bob"})
				f.AddPullRequest(owner, repo, ghfake.PullRequest{Number: 9, HeadSHA: head, State: "closed", Author: "bob"})
			},
			body:      statusEvent(decide.ContextDecisions, "mallory", head, "success"),
			wantCalls: []string{"SyncPullRequest acme/shop#7"}, wantAudit: "status-overwrite"},
		{name: "phasegate/decisions overwritten on no head", event: "status",
			body: statusEvent(decide.ContextDecisions, "mallory", head, "success"), wantAudit: "status-overwrite"},
		{name: "installed with repositories", event: "installation",
			body:      installationEvent("installation", "created", "acme/shop", "acme/web"),
			wantCalls: []string{"ReconcileRepo acme/shop", "ReconcileRepo acme/web"}},
		{name: "installed on all repositories", event: "installation",
			setup: func(f *ghfake.Server) {
				f.AddRepo(owner, "docs", "main")
				f.SetInstallationRepos(installation, owner, "acme/shop", "acme/docs")
			},
			body:      installationEvent("installation", "created"),
			wantCalls: []string{"ReconcileRepo acme/docs", "ReconcileRepo acme/shop"}},
		{name: "repositories added", event: "installation_repositories",
			body:      installationEvent("installation_repositories", "added", "acme/web"),
			wantCalls: []string{"ReconcileRepo acme/web"}},
		{name: "repositories removed", event: "installation_repositories",
			body: installationEvent("installation_repositories", "removed", "acme/web")},
		{name: "uninstalled", event: "installation", body: installationEvent("installation", "deleted")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			if tt.setup != nil {
				tt.setup(h.fake)
			}
			id := h.newID()
			send := func() {
				if code, body := h.send(delivery{event: tt.event, id: id, body: tt.body}); code != http.StatusAccepted {
					t.Fatalf("answer %d %q", code, body)
				}
			}
			if tt.early {
				send()
			}
			h.start()
			h.waitReady()
			if !tt.early {
				send()
			}
			if d := h.waitJobs(1)[0]; d.outcome != "ok" {
				t.Fatalf("job %+v; logs:\n%s", d, h.logs.String())
			}
			calls := h.decider.Calls()
			got := summary(calls)
			sort.Strings(got)
			want := append([]string{}, tt.wantCalls...)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("calls %v, want %v", got, want)
			}
			for _, c := range calls {
				if c.identity != appBot {
					t.Fatalf("the decider got identity %q, want %q (learnt from GET /app)", c.identity, appBot)
				}
				if c.method == "HandleComment" && (c.event.Delivery != id || c.event.Comment.ID != 99 || c.event.Comment.Author != "alice" || c.event.Comment.Bot) {
					t.Fatalf("event %+v", c.event)
				}
			}
			audits := h.logs.lines("audit:")
			if tt.wantAudit == "" {
				if len(audits) != 0 {
					t.Fatalf("unexpected audit lines %v", audits)
				}
				return
			}
			if len(audits) != 1 || audits[0]["audit"] != tt.wantAudit || audits[0]["delivery"] != id ||
				audits[0]["repository"] != "acme/shop" || audits[0]["installation"] != float64(installation) || audits[0]["sender"] != "mallory" {
				t.Fatalf("audit lines %v", audits)
			}
		})
	}
}

func TestReadiness(t *testing.T) {
	t.Parallel()
	key := appKey(t)
	f := ghfake.New()
	t.Cleanup(f.Close)
	// A server whose App GitHub does not know (yet).
	h2 := newHarness(t, func(c *Config) { c.APIURL = f.URL() })
	h2.start()
	if code, _ := h2.get("/healthz"); code != http.StatusOK {
		t.Fatalf("healthz %d", code)
	}
	h2.until("a failed probe", func() bool { return f.CountCalls("GET", "/app") > 0 })
	if code, body := h2.get("/readyz"); code != http.StatusServiceUnavailable {
		t.Fatalf("readyz before GitHub answered: %d %s", code, body)
	}
	// Deliveries are still accepted, and wait for readiness.
	if code, _ := h2.send(delivery{event: "issue_comment", body: commentEvent("created", 5, 99, "alice", "alice", "/decisions")}); code != http.StatusAccepted {
		t.Fatalf("delivery before ready: %d", code)
	}
	if calls := h2.decider.Calls(); len(calls) != 0 {
		t.Fatalf("handled before ready: %v", calls)
	}
	f.AddApp(appID, appSlug, &key.PublicKey)
	f.AddInstallation(appID, installation)
	h2.until("ready", func() bool { code, _ := h2.get("/readyz"); return code == http.StatusOK })
	if d := h2.waitJobs(1)[0]; d.outcome != "ok" {
		t.Fatalf("job %+v", d)
	}
	if h2.srv.Identity() != appBot {
		t.Fatalf("identity %q", h2.srv.Identity())
	}
	if _, m := h2.get("/metrics"); !strings.Contains(m, "phasegate_ready 1") {
		t.Fatal("phasegate_ready is not 1")
	}
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	// The default registry, with the Go runtime's collector.
	h := newHarness(t, func(c *Config) { c.Identity, c.Registry = appBot, nil })
	h.start()
	h.waitReady()
	h.send(delivery{event: "issue_comment", body: commentEvent("created", 5, 99, "alice", "alice", "/decisions")})
	h.send(delivery{event: "issue_comment", body: commentEvent("edited", 5, 98, appBot, "mallory", "x")})
	h.send(delivery{event: "status", body: statusEvent(decide.ContextDecisions, "mallory", "abc", "success")})
	h.send(delivery{event: "star", body: []byte(`{}`)})
	h.send(delivery{event: "issue_comment", body: []byte(`{}`), secret: []byte("wrong")})
	h.waitJobs(3)
	code, m := h.get("/metrics")
	if code != http.StatusOK {
		t.Fatalf("metrics %d", code)
	}
	for _, want := range []string{
		`phasegate_webhook_deliveries_total{event="issue_comment",result="accepted"} 2`,
		`phasegate_webhook_deliveries_total{event="status",result="accepted"} 1`,
		`phasegate_webhook_deliveries_total{event="other",result="ignored"} 1`,
		`phasegate_webhook_deliveries_total{event="issue_comment",result="unauthorized"} 1`,
		`phasegate_webhook_ack_seconds_count 5`,
		`phasegate_queue_depth 0`,
		`phasegate_queue_oldest_age_seconds 0`,
		`phasegate_queue_capacity 64`,
		`phasegate_handler_duration_seconds_count{event="issue_comment",outcome="ok"} 2`,
		`phasegate_tamper_reports_total{action="edited"} 1`,
		`phasegate_status_overwrites_total 1`,
		`phasegate_github_api_calls_total{op="App",status="200"} 1`,
		`phasegate_github_api_calls_total{op="PullRequestsForCommit",status="200"} 1`,
		`phasegate_github_rate_limit_remaining{installation="77"}`,
		`phasegate_github_rate_limit_remaining{installation="app"}`,
		`phasegate_ready 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestQueueAge(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 13, 5, 0, 0, 0, time.UTC)
	h := newHarness(t, func(c *Config) { c.Now = func() time.Time { return now } })
	h.send(delivery{event: "issue_comment", body: commentEvent("created", 5, 99, "alice", "alice", "/decisions")})
	now = now.Add(90 * time.Second)
	if _, m := h.get("/metrics"); !strings.Contains(m, "phasegate_queue_depth 1") || !strings.Contains(m, "phasegate_queue_oldest_age_seconds 90") {
		t.Fatalf("queue metrics:\n%s", grep(m, "phasegate_queue"))
	}
}

func grep(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// brokenSeen is a seen store that is down (Redis gone) or panics.
type brokenSeen struct{ panics bool }

func (b brokenSeen) SeenBefore(context.Context, string) (bool, error) {
	if b.panics {
		panic("seen store exploded")
	}
	return false, errors.New("redis: connection refused")
}

func TestSeenStoreFailure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		seen   brokenSeen
		want   int
		panics bool
	}{
		{name: "down: 503, nothing acted on", seen: brokenSeen{}, want: http.StatusServiceUnavailable},
		{name: "panicking: the slot is given back", seen: brokenSeen{panics: true}, panics: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(c *Config) { c.Seen, c.QueueSize = tt.seen, 1 })
			for i := 0; i < 3; i++ { // more than the queue holds: every slot came back
				func() {
					defer func() {
						if r := recover(); (r != nil) != tt.panics {
							t.Fatalf("recovered %v", r)
						}
					}()
					code, body := h.send(delivery{event: "issue_comment", body: commentEvent("created", 5, 99, "alice", "alice", "/decisions")})
					if code != tt.want {
						t.Fatalf("answer %d %q, want %d", code, body, tt.want)
					}
				}()
			}
			if waiting, _, _ := h.srv.queue.stats(h.srv.cfg.Now()); waiting != 0 {
				t.Fatalf("%d queued", waiting)
			}
			h.srv.queue.close() // returns only when no slot is held
		})
	}
}

func TestReconcilePanicIsRecovered(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.Identity = appBot })
	h.decider.panics.Store(1)
	h.srv.reconcileOnce(context.Background())
	if _, m := h.get("/metrics"); !strings.Contains(m, `phasegate_reconcile_runs_total{result="panic"} 1`) {
		t.Fatalf("metrics:\n%s", grep(m, "reconcile"))
	}
	h.srv.reconcileOnce(context.Background())
	if got := summary(h.decider.Calls()); len(got) != 2 {
		t.Fatalf("calls %v: the second pass did not run", got)
	}
}
