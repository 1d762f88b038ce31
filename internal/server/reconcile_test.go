package server

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/ghfake"
)

// twoInstallations installs the App on acme (shop, web) and globex (site).
func twoInstallations(f *ghfake.Server) {
	f.AddRepo(owner, "web", "main")
	f.AddRepo("globex", "site", "main")
	f.AddInstallation(appID, 78)
	f.SetInstallationRepos(installation, owner, "acme/shop", "acme/web")
	f.SetInstallationRepos(78, "globex", "globex/site")
}

func TestReconcilePass(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		minRate   int
		share     float64
		wantCalls []string
		wantSkips string
		wantCut   string
	}{
		{name: "every repository of every installation",
			wantCalls: []string{"ReconcileRepo acme/shop", "ReconcileRepo acme/web", "ReconcileRepo globex/site"},
			wantSkips: "phasegate_reconcile_skipped_installations_total 0"},
		{name: "installations whose rate limit runs low are skipped", minRate: 1_000_000,
			wantCalls: []string{},
			wantSkips: "phasegate_reconcile_skipped_installations_total 2"},
		// The listings that find lost commands are essential work: a spent
		// share still lets every repository be looked at (decide then
		// reads only the threads that hold a command).
		{name: "a budget spent still looks at every repository", share: 1e-9,
			wantCalls: []string{"ReconcileRepo acme/shop", "ReconcileRepo acme/web", "ReconcileRepo globex/site"},
			wantSkips: "phasegate_reconcile_skipped_installations_total 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(c *Config) { c.Identity, c.MinRateRemaining, c.ReconcileBudgetShare = appBot, tt.minRate, tt.share })
			twoInstallations(h.fake)
			h.srv.reconcileOnce(context.Background())
			got := summary(h.decider.Calls())
			sort.Strings(got)
			if !reflect.DeepEqual(got, tt.wantCalls) {
				t.Fatalf("calls %v, want %v", got, tt.wantCalls)
			}
			_, m := h.get("/metrics")
			if !strings.Contains(m, tt.wantSkips) || !strings.Contains(m, `phasegate_reconcile_runs_total{result="ok"} 1`) {
				t.Fatalf("metrics:\n%s", grep(m, "reconcile"))
			}
			if tt.wantCut != "" {
				if !strings.Contains(m, tt.wantCut) {
					t.Fatalf("no cut-short count:\n%s", grep(m, "reconcile"))
				}
				lines := h.logs.lines("pass cut short")
				if len(lines) != 2 || !strings.Contains(fmt.Sprint(lines), "acme/shop") || !strings.Contains(fmt.Sprint(lines), "globex/site") {
					t.Fatalf("want one log line per installation naming the repositories skipped: %v", lines)
				}
			}
			if tt.minRate > 0 && len(h.logs.lines("rate limit runs low")) != 2 {
				t.Fatalf("no log line for the skipped installations:\n%s", h.logs.String())
			}
		})
	}
}

func TestRedeliverFailedDeliveries(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.Identity = appBot })
	f := h.fake
	f.SetHookTarget(h.srv.Handler(), testSecret)
	now := time.Now().UTC()
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	command := commentEvent("created", 5, 99, "alice", "alice", "/resolve D-001 approve")
	add := func(guid string, code int, at time.Time, redelivery bool, payload []byte) int64 {
		return f.AddHookDelivery(ghfake.HookDelivery{GUID: guid, Event: "issue_comment", Action: "created", StatusCode: code,
			DeliveredAt: at, Redelivery: redelivery, InstallationID: installation, Payload: payload})
	}
	add("g-failed", 503, ago(10*time.Minute), false, command)
	add("g-ok", 202, ago(11*time.Minute), false, command)
	add("g-old", 503, ago(2*time.Hour), false, command)
	add("g-retried", 503, ago(20*time.Minute), false, nil)
	add("g-retried", 503, ago(15*time.Minute), true, nil)
	add("g-twice", 502, ago(30*time.Minute), false, nil)
	latestTwice := add("g-twice", 504, ago(25*time.Minute), false, nil)
	add("g-recovered", 503, ago(40*time.Minute), false, nil)
	add("g-recovered", 200, ago(35*time.Minute), true, nil)

	redelivered := func() []string {
		var out []string
		for _, d := range f.HookDeliveries() {
			if d.Redelivery && d.DeliveredAt.After(now.Add(-time.Minute)) {
				out = append(out, d.GUID)
			}
		}
		sort.Strings(out)
		return out
	}
	for pass := 1; pass <= 2; pass++ {
		h.srv.reconcileOnce(context.Background())
		f.WaitHookDeliveries()
		if got := redelivered(); !reflect.DeepEqual(got, []string{"g-failed", "g-twice"}) {
			t.Fatalf("pass %d: redelivered %v, want g-failed and g-twice, once each", pass, got)
		}
	}
	if n := f.CountCalls("POST", "/app/hook/deliveries/"); n != 2 {
		t.Fatalf("%d redelivery requests, want 2", n)
	}
	if l := h.logs.lines("redelivered a failed delivery"); len(l) != 2 {
		t.Fatalf("redelivery log lines %v", l)
	}
	for _, l := range h.logs.lines("redelivered a failed delivery") {
		if l["delivery"] == "g-twice" && l["status_code"] != "504" {
			t.Fatalf("g-twice: redelivered %v, want its latest attempt (%d)", l, latestTwice)
		}
	}
	// The redelivered command reached the webhook, was accepted and is
	// handled once the server runs.
	for _, d := range f.HookDeliveries() {
		if d.GUID == "g-failed" && d.Redelivery && d.Status != "OK" {
			t.Fatalf("the redelivery was answered %q", d.Status)
		}
	}
	h.start()
	if d := h.waitJobs(1)[0]; d.delivery != "g-failed" || d.outcome != "ok" {
		t.Fatalf("job %+v", d)
	}
	var handled []string
	for _, c := range summary(h.decider.Calls()) {
		if strings.HasPrefix(c, "HandleComment") {
			handled = append(handled, c)
		}
	}
	if len(handled) != 1 || handled[0] != "HandleComment acme/shop#5" {
		t.Fatalf("calls %v, want the redelivered command handled once", handled)
	}
	// GitHub redelivering it again is a replay.
	if code, body := h.send(delivery{event: "issue_comment", id: "g-failed", body: command}); code != http.StatusOK || body != "duplicate" {
		t.Fatalf("replay: %d %q", code, body)
	}
}

func TestReconcileLoop(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.ReconcileEvery = time.Hour })
	h.decider.entered = make(chan call, 10)
	h.start()
	// The first pass runs as soon as the server is ready.
	select {
	case c := <-h.decider.entered:
		if c.method != "ReconcileRepo" || c.owner != owner || c.repo != repo || c.identity != appBot {
			t.Fatalf("call %+v", c)
		}
	case <-time.After(guard):
		t.Fatalf("no reconcile pass; logs:\n%s", h.logs.String())
	}
	h.until("the pass is counted", func() bool {
		_, m := h.get("/metrics")
		return strings.Contains(m, `phasegate_reconcile_runs_total{result="ok"} 1`)
	})
	if err := h.stop(); err != nil {
		t.Fatal(err)
	}
}

// TestClaimPass: one reconcile pass per period, whoever claims it first;
// none while the shared store cannot be asked.
func TestClaimPass(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 10, 7, 0, 0, time.UTC) // 10:07, in the 10:00–10:15 period
	shared := NewMemSeen(time.Hour, 1000)                 // stands for Redis, shared by two replicas
	clock := func() time.Time { return now }
	a := newHarness(t, func(c *Config) { c.Seen, c.Now, c.ReconcileEvery = shared, clock, 15*time.Minute })
	b := newHarness(t, func(c *Config) { c.Seen, c.Now, c.ReconcileEvery = shared, clock, 15*time.Minute })
	down := newHarness(t, func(c *Config) { c.Seen, c.Now, c.ReconcileEvery = brokenSeen{}, clock, 15*time.Minute })
	ctx := context.Background()
	steps := []struct {
		name  string
		h     *harness
		at    time.Time
		want  bool
		label string
	}{
		{name: "a claims the period", h: a, at: now, want: true},
		{name: "b finds it taken", h: b, at: now.Add(5 * time.Minute), want: false, label: `reason="other_replica"`},
		{name: "a again in the same period", h: a, at: now.Add(7 * time.Minute), want: false, label: `reason="other_replica"`},
		{name: "b claims the next period", h: b, at: now.Add(9 * time.Minute), want: true},
		{name: "store down", h: down, at: now, want: false, label: `reason="store_unavailable"`},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			now = st.at
			before := metricValue(t, st.h, "phasegate_reconcile_skipped_passes_total", st.label)
			if got := st.h.srv.claimPass(ctx); got != st.want {
				t.Fatalf("claimPass = %v, want %v", got, st.want)
			}
			if st.label != "" {
				if after := metricValue(t, st.h, "phasegate_reconcile_skipped_passes_total", st.label); after != before+1 {
					t.Errorf("skip counter %v → %v", before, after)
				}
			}
		})
	}
}

// TestReconcileChecksMissedHeads: an open pull request whose head has no
// phasegate/contracts of the App's (its delivery never came) is checked by
// the reconcile pass; one already checked is not checked again.
func TestReconcileChecksMissedHeads(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.Identity, c.NewDecider, c.Publish = appBot, nil, "checks" })
	f := h.fake
	f.SetTreeFiles(owner, repo, appBaseSHA, map[string]string{"README.md": "# shop\n"})
	f.SetTreeFiles(owner, repo, appHead1, map[string]string{"README.md": "# shop\n"})
	f.AddPullRequest(owner, repo, ghfake.PullRequest{HeadSHA: appHead1, BaseSHA: appBaseSHA, HeadRef: "feature", Author: "agent-bot"})
	h.srv.reconcileOnce(context.Background())
	if rs := runs(f, appHead1, "phasegate/contracts"); len(rs) != 1 || rs[0].Status != "completed" {
		t.Fatalf("contracts runs after a pass: %+v; logs:\n%s", rs, h.logs.String())
	}
	h.srv.reconcileOnce(context.Background())
	if rs := runs(f, appHead1, "phasegate/contracts"); len(rs) != 1 {
		t.Fatalf("%d contracts runs after a second pass, want the first only", len(rs))
	}
}
