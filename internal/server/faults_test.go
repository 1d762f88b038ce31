package server

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
)

// TestCommandsUnderFaults: GitHub misbehaves the whole time — 30% of
// requests answer 5xx, some hang past the client's timeout, some hit a
// secondary rate limit with Retry-After, some writes are committed but
// answered 502 — while five features each get their /resolve. Deliveries
// fail, the reconcile loop takes over, and every command ends resolved
// exactly once: one resolution comment per issue and nothing else, labels
// and the pull request's status final.
//
// The fake and the App's clients share a JumpClock: backoff, Retry-After
// and secondary-limit waits are honoured in full (the fake sees the time
// move past them) without being slept. Only a hang costs real time: the
// client's attempt timeout, a real-time timer. It is long enough that no
// answer of the fake outlasts it on a loaded machine under -race (a 100 ms
// timeout made every slow answer a hang, and the clean passes at the end
// never came), so only two requests hang (MaxHangs): they exercise the
// timeout as well as dozens would. They are the first two requests once
// the faults start (HangRate 1), which the reconcile pass and the
// deliveries' workers send at once: the hangs overlap, and cost one
// attempt timeout of real time instead of one each (three drawn at 3 %
// hung one after the other: 6 of the test's 9 s).
//
// Every command re-syncs the pull request's phasegate/decisions, which
// reads every feature's thread: the requests grow with the square of the
// features. Five make 450 to 700 requests (100 to 200 of them faults)
// where ten made 2,100, at a third of the CPU under -race; a quarter of
// their successful writes answer 502, so that lost responses still happen
// every run.
func TestCommandsUnderFaults(t *testing.T) {
	t.Parallel() // the hang's real-time wait overlaps the other tests' CPU
	if testing.Short() {
		t.Skip("runs for several seconds")
	}
	clock := ghfake.NewJumpClock()
	h := newHarness(t, func(c *Config) {
		c.NewDecider = nil // the real decide.Handler
		c.ReconcileEvery = 200 * time.Millisecond
		c.GitHubOptions = func(o *ghclient.Options) {
			o.BackoffBase, o.BackoffMax, o.MaxAttempts = time.Millisecond, 5*time.Millisecond, 3
			o.AttemptTimeout = 2 * time.Second
			o.MaxRateLimitWait = 3 * time.Second
			o.Now, o.Sleep = clock.Now, clock.Sleep
		}
	})
	f := h.fake
	f.SetClock(clock.Now)
	f.SetJWTClock(time.Now) // the App's JWTs are signed on real time; the jumps would expire them
	f.AddPullRequest(owner, repo, ghfake.PullRequest{Number: prNumber, HeadSHA: headSHA, BaseSHA: addedSHA, Author: "agent-bot"})
	f.SetPermission(owner, repo, "alice", "write")
	const n = 5
	type feature struct {
		issue   int
		comment int64
	}
	var features []feature
	for i := range n {
		issue := 50 + i
		src := fmt.Sprintf("outcomes/feature-%03d-requirements.outcome.yaml", issue)
		f.AddCommit(owner, repo, ghfake.Commit{SHA: fmt.Sprintf("%040x", issue), Author: "agent-bot", Committer: "agent-bot", Files: []ghfake.File{{Filename: src, Status: "added"}}})
		postOutcomeOn(t, f, issue, src, fmt.Sprintf("%040x", issue))
		f.LabelIssue(owner, repo, issue, "phasegate:pending")
		features = append(features, feature{issue: issue})
	}
	h.start()
	h.waitReady()

	f.SetFaults(ghfake.Faults{
		Seed:            7,
		ServerErrorRate: 0.30,
		HangRate:        1,           // the first MaxHangs requests (the draw of the other faults is unchanged)
		HangFor:         time.Minute, // until the client gives up
		MaxHangs:        2,
		SecondaryRate:   0.02,
		RetryAfter:      time.Second,
		// Of the writes past the 5xx, about 40 with five features: at 0.10,
		// one run in twenty drew no lost response at all.
		LostResponseRate: 0.25,
	})
	const command = "/resolve D-001 approve"
	for i := range features {
		fe := &features[i]
		fe.comment = f.AddComment(owner, repo, fe.issue, "alice", command)
		payload := commentEvent("created", fe.issue, fe.comment, "alice", "alice", command)
		if code, body := h.send(delivery{event: "issue_comment", body: payload}); code != http.StatusAccepted {
			t.Fatalf("delivery for #%d: %d %q", fe.issue, code, body)
		}
	}
	// And a burst of secondary rate limiting (429 with Retry-After) right
	// as the deliveries are handled.
	f.SecondaryLimit(time.Second, http.StatusTooManyRequests)
	done := func() bool {
		for _, fe := range features {
			if countResolutions(f, fe.issue) < 1 || hasLabelOn(f, fe.issue, "phasegate:pending") {
				return false
			}
		}
		st, _ := f.LatestStatus(owner, repo, headSHA, decide.ContextDecisions)
		return st.State == "success"
	}
	began := time.Now()
	deadline := began.Add(2 * time.Minute)
	for !done() {
		if time.Now().After(deadline) {
			for _, fe := range features {
				t.Logf("#%d: %d resolutions, labels %v", fe.issue, countResolutions(f, fe.issue), f.Labels(owner, repo, fe.issue))
			}
			t.Fatalf("the commands never all completed under faults; logs:\n%s", tail(h.logs.String(), 60))
		}
		time.Sleep(20 * time.Millisecond)
	}

	t.Logf("all commands completed under faults in %s", time.Since(began).Round(time.Millisecond))

	// GitHub heals; two more reconcile passes change nothing.
	f.SetFaults(ghfake.Faults{})
	runs := metricValue(t, h, "phasegate_reconcile_runs_total", `result="ok"`)
	h.until("two clean reconcile passes", func() bool {
		return metricValue(t, h, "phasegate_reconcile_runs_total", `result="ok"`) >= runs+2
	})

	faults := map[string]int{}
	notModified := 0
	for _, c := range f.Calls() {
		faults[c.Fault]++
		if c.Status == http.StatusNotModified {
			notModified++
		}
	}
	sleeps, ahead := clock.Skipped()
	t.Logf("%d calls; by fault: %v; 304 answers: %d; %d waits skipped, %s in all", len(f.Calls()), faults, notModified, sleeps, ahead)
	if ahead == 0 {
		t.Error("no wait was skipped: the clients did not wait on the shared clock")
	}
	for _, kind := range []string{"5xx", "hang", "secondary", "lost-response"} {
		if faults[kind] == 0 {
			t.Errorf("no %q fault was injected: the test did not exercise it", kind)
		}
	}
	if notModified == 0 {
		t.Error("no conditional read was answered 304")
	}
	for _, fe := range features {
		var mine []string
		for _, c := range f.Comments(owner, repo, fe.issue) {
			if c.User == appBot {
				mine = append(mine, firstLine(c.Body))
			}
		}
		// The outcome and its one resolution; no second resolution, no
		// error reply.
		if len(mine) != 2 || countResolutions(f, fe.issue) != 1 {
			t.Errorf("#%d: phasegate comments %q, want the outcome and one resolution", fe.issue, mine)
		}
		if got := f.Labels(owner, repo, fe.issue); strings.Contains(strings.Join(got, ","), "phasegate:pending") || !strings.Contains(strings.Join(got, ","), "phase:planning") {
			t.Errorf("#%d labels %v, want phase:planning and no phasegate:pending", fe.issue, got)
		}
	}
	if st, _ := f.LatestStatus(owner, repo, headSHA, decide.ContextDecisions); st.State != "success" || st.Creator != appBot {
		t.Errorf("%s = %+v", decide.ContextDecisions, st)
	}
}

func countResolutions(f *ghfake.Server, issue int) int {
	n := 0
	for _, c := range f.Comments(owner, repo, issue) {
		if c.User == appBot && strings.Contains(c.Body, "phasegate:resolution v1") {
			n++
		}
	}
	return n
}

func hasLabelOn(f *ghfake.Server, issue int, name string) bool {
	for _, l := range f.Labels(owner, repo, issue) {
		if l == name {
			return true
		}
	}
	return false
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

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
