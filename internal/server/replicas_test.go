//go:build integration

// The tests of this file, durable_replicas_test.go and
// replicas_door_test.go run `phasegate serve` replicas as processes of the
// test binary (main_test.go's TestMain) against private redis-servers, and
// kill them: integration tests, run by `go test -race -tags integration
// ./...` (.ci/run), not by the developer's `go test -race ./...`.

package server

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/testutil/redistest"
)

// replica is one `phasegate serve` process.
type replica struct {
	t      *testing.T
	name   string
	url    string // http://127.0.0.1:port
	cmd    *exec.Cmd
	logs   *syncBuffer
	exited chan struct{}
	code   int
}

// replicaEnv is the environment of every replica of a test.
type replicaEnv struct {
	fake           *ghfake.Server
	redisURL       string
	reconcileEvery string
	lockTTL        string
	keyFile        string
	extra          []string // more variables (KEY=value)
}

// replicaWorld is a private Redis, the fake GitHub with the seed feature,
// and the environment of replicas on them, reconciling every
// reconcileEvery ("0": never) with a 2 s lock lease.
func replicaWorld(t *testing.T, reconcileEvery string) (*redistest.Server, *ghfake.Server, replicaEnv) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs serve processes and redis-server")
	}
	rdb := redistest.Start(t)
	f := newFake(t)
	seedFeature(t, f)
	key := filepath.Join(t.TempDir(), "app.pem")
	if err := os.WriteFile(key, pemOf(appKey(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	return rdb, f, replicaEnv{fake: f, redisURL: rdb.URL(), reconcileEvery: reconcileEvery, lockTTL: "2s", keyFile: key}
}

// start runs a replica and waits until /readyz answers 200.
func (e replicaEnv) start(t *testing.T, name string) *replica {
	t.Helper()
	var last error
	for range 5 { // a free port can be taken before the child binds it
		r, err := e.tryStart(t, name)
		if err == nil {
			return r
		}
		last = err
	}
	t.Fatalf("starting replica %s: %v", name, last)
	return nil
}

func (e replicaEnv) tryStart(t *testing.T, name string) (*replica, error) {
	port, err := redistest.FreePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(),
		childEnv+"="+name,
		"PHASEGATE_ADDR="+addr,
		"PHASEGATE_WEBHOOK_SECRET="+string(testSecret),
		"PHASEGATE_APP_ID="+strconv.Itoa(appID),
		"PHASEGATE_PRIVATE_KEY_FILE="+e.keyFile,
		"PHASEGATE_GITHUB_API_URL="+e.fake.URL(),
		"PHASEGATE_REDIS_URL="+e.redisURL,
		"PHASEGATE_RECONCILE_EVERY="+e.reconcileEvery,
		"PHASEGATE_LOCK_TTL="+e.lockTTL,
		"PHASEGATE_PUBLISH=statuses",
	)
	cmd.Env = append(cmd.Env, e.extra...)
	r := &replica{t: t, name: name, url: "http://" + addr, cmd: cmd, logs: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = r.logs, r.logs
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", os.Args[0], err)
	}
	go func() {
		_ = cmd.Wait()
		r.code = cmd.ProcessState.ExitCode()
		close(r.exited)
	}()
	t.Cleanup(func() {
		r.stop()
		if t.Failed() {
			t.Logf("replica %s logs:\n%s", name, r.logs.String())
		}
		if strings.Contains(r.logs.String(), "PRIVATE KEY") || strings.Contains(r.logs.String(), string(testSecret)) {
			t.Errorf("a secret reached replica %s's logs", name)
		}
	})
	deadline := time.Now().Add(guard)
	for {
		select {
		case <-r.exited:
			return nil, fmt.Errorf("replica %s exited %d:\n%s", name, r.code, r.logs.String())
		default:
		}
		// Only once the replica says it listens: until then the port may
		// be another process's (the free port was taken in between, as by
		// another package's fake GitHub, whose conformance check a stray
		// GET /readyz fails).
		if !strings.Contains(r.logs.String(), `"msg":"serving"`) {
			time.Sleep(10 * time.Millisecond)
			if time.Now().After(deadline) {
				r.kill()
				return nil, fmt.Errorf("replica %s never listened:\n%s", name, r.logs.String())
			}
			continue
		}
		if resp, err := http.Get(r.url + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return r, nil
			}
		}
		if time.Now().After(deadline) {
			r.kill()
			return nil, fmt.Errorf("replica %s never ready:\n%s", name, r.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// kill ends the replica at once (SIGKILL): no drain, no unlock.
func (r *replica) kill() {
	_ = r.cmd.Process.Kill()
	<-r.exited
}

// stop ends the replica gracefully (SIGTERM) and checks that it drained
// and exited 0; a replica already killed is left alone.
func (r *replica) stop() {
	select {
	case <-r.exited:
		return
	default:
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
		if r.code != 0 {
			r.t.Errorf("replica %s exited %d after SIGTERM", r.name, r.code)
		}
	case <-time.After(guard):
		r.kill()
		r.t.Errorf("replica %s did not stop on SIGTERM", r.name)
	}
}

// send posts a signed delivery and returns the status and body.
func (r *replica) send(event, id string, body []byte) (int, string) {
	req, err := http.NewRequest(http.MethodPost, r.url+"/webhook", bytes.NewReader(body))
	if err != nil {
		panic(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("X-Hub-Signature-256", ghfake.SignWebhook(testSecret, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// metric sums the samples of one metric whose labels contain every one of
// labels (`name="value"` pairs) on the replica's /metrics.
func (r *replica) metric(name string, labels ...string) float64 {
	resp, err := http.Get(r.url + "/metrics")
	if err != nil {
		r.t.Fatalf("GET /metrics on %s: %v", r.name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		r.t.Fatalf("reading /metrics of %s: %v", r.name, err)
	}
	return sumMetric(string(body), name, labels...)
}

// idle reports whether the replica has handled every delivery it accepted.
func (r *replica) idle() bool {
	accepted := r.metric("phasegate_webhook_deliveries_total", `result="accepted"`)
	handled := r.metric("phasegate_handler_duration_seconds_count")
	return handled == accepted && r.metric("phasegate_queue_depth") == 0 && r.metric("phasegate_queue_inflight") == 0
}

// until polls cond until it holds, within guard.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// settled waits until the replicas, together, completed two more
// reconcile passes (whichever of them ran each period's).
func settled(t *testing.T, f *ghfake.Server, rs ...*replica) {
	t.Helper()
	ok := func() float64 {
		n := 0.0
		for _, r := range rs {
			n += r.metric("phasegate_reconcile_runs_total", `result="ok"`)
		}
		return n
	}
	// Until two passes write nothing to GitHub: at start each replica
	// checks the pull request's head, and a pass can still be re-checking
	// it after two others completed (seen under CI's load).
	writes := func() int {
		return f.CountCalls(http.MethodPost, "/repos/") + f.CountCalls(http.MethodPatch, "/repos/")
	}
	for range 10 {
		n0, w0 := ok(), writes()
		until(t, "two more reconcile passes", func() bool { return ok() >= n0+2 })
		if writes() == w0 {
			return
		}
	}
	t.Fatal("the reconcile passes never stop writing")
}

// resolutions are the resolution comments on the feature issue, by
// decision id.
func resolutions(f *ghfake.Server) map[string]int {
	out := map[string]int{}
	for _, c := range f.Comments(owner, repo, featureIssue) {
		if c.User != appBot || !strings.Contains(c.Body, "phasegate:resolution v1") {
			continue
		}
		for _, id := range []string{"D-001", "D-002"} {
			if strings.Contains(c.Body, "decision="+id) {
				out[id]++
			}
		}
	}
	return out
}

// captured counts the follow-up issues phasegate opened.
func captured(f *ghfake.Server) int {
	n := 0
	for _, is := range f.Issues(owner, repo) {
		for _, l := range is.Labels {
			if l == "phasegate:captured" {
				n++
			}
		}
	}
	return n
}

func decisionsStatus(f *ghfake.Server) string {
	st, _ := f.LatestStatus(owner, repo, headSHA, decide.ContextDecisions)
	return st.State
}

func hasLabel(f *ghfake.Server, name string) bool {
	for _, l := range f.Labels(owner, repo, featureIssue) {
		if l == name {
			return true
		}
	}
	return false
}

// TestReplicasShareRedis: two serve processes on one Redis. The same
// delivery sent to both is accepted once; fifty copies of one command spread
// over both give one resolution (and one follow-up issue).
func TestReplicasShareRedis(t *testing.T) {
	t.Parallel() // real time (processes, Redis, leases) overlaps the other tests' CPU
	_, f, env := replicaWorld(t, "0")
	a, b := env.start(t, "replica-a"), env.start(t, "replica-b")
	replicas := []*replica{a, b}

	// 1. The same delivery to both replicas at once.
	const approve = "/resolve D-001 approve"
	approveID := f.AddComment(owner, repo, featureIssue, "alice", approve)
	payload := commentEvent("created", featureIssue, approveID, "alice", "alice", approve)
	codes := make([]int, 2)
	var wg sync.WaitGroup
	for i, r := range replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _ = r.send("issue_comment", "same-delivery", payload)
		}()
	}
	wg.Wait()
	if !(codes[0] == 202 && codes[1] == 200 || codes[0] == 200 && codes[1] == 202) {
		t.Fatalf("answers %v, want one 202 (accepted) and one 200 (duplicate)", codes)
	}

	// 2. Fifty copies of one command (fifty delivery ids: a redelivery storm,
	// a misbehaving proxy or a captured body replayed), spread over both, all
	// at once: one is accepted, the others are duplicates of its body.
	const capture = "/resolve D-002 capture"
	captureID := f.AddComment(owner, repo, featureIssue, "alice", capture)
	payload = commentEvent("created", featureIssue, captureID, "alice", "alice", capture)
	accepted := make([]int, 50)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			accepted[i], _ = replicas[i%2].send("issue_comment", fmt.Sprintf("copy-%d", i), payload)
		}()
	}
	wg.Wait()
	n202 := 0
	for i, code := range accepted {
		switch code {
		case http.StatusAccepted:
			n202++
		case http.StatusOK:
		default:
			t.Fatalf("copy %d answered %d", i, code)
		}
	}
	if n202 != 1 {
		t.Fatalf("%d copies accepted, want 1", n202)
	}
	until(t, "both replicas handled every delivery", func() bool { return a.idle() && b.idle() })
	handled := a.metric("phasegate_handler_duration_seconds_count") + b.metric("phasegate_handler_duration_seconds_count")
	if handled != 2 {
		t.Errorf("%v deliveries handled, want 2 (1 + 1)", handled)
	}

	if got := resolutions(f); got["D-001"] != 1 || got["D-002"] != 1 {
		t.Errorf("resolution comments %v, want exactly one per decision", got)
	}
	if n := captured(f); n != 1 {
		t.Errorf("%d follow-up issues, want 1", n)
	}
	if s := decisionsStatus(f); s != "success" {
		t.Errorf("%s = %q, want success", decide.ContextDecisions, s)
	}
	if hasLabel(f, "phasegate:pending") {
		t.Errorf("labels %v still say pending", f.Labels(owner, repo, featureIssue))
	}
	// One repository_dispatch per resolution, and one for the phase the
	// approval advanced, whichever replica handled which copy.
	var types []string
	for _, d := range f.Dispatches(owner, repo) {
		types = append(types, d.EventType)
	}
	sort.Strings(types)
	if got := strings.Join(types, ","); got != "phasegate.phase-advanced,phasegate.resolved,phasegate.resolved" {
		t.Errorf("dispatches %s, want one phasegate.resolved per decision and one phasegate.phase-advanced", got)
	}
}

// TestReplicaKilledMidHandling: the replica handling a command is killed at
// a given step; the other replica's reconcile loop completes the work once
// the dead replica's lock lease expired, and nothing is lost or doubled.
func TestReplicaKilledMidHandling(t *testing.T) {
	t.Parallel() // real time (processes, Redis, leases) overlaps the other tests' CPU
	tests := []struct {
		name       string
		holdMethod string
		holdPath   string
		// written: the resolution comment existed when the replica died.
		written bool
	}{
		{name: "before the resolution comment", holdMethod: http.MethodPost, holdPath: fmt.Sprintf("/issues/%d/comments", featureIssue)},
		{name: "after the resolution, before the labels", holdMethod: http.MethodPost, holdPath: fmt.Sprintf("/issues/%d/labels", featureIssue), written: true},
		{name: "after the labels, before the status", holdMethod: http.MethodPost, holdPath: "/statuses/" + headSHA, written: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case has its own Redis, fake GitHub and replicas
			_, f, env := replicaWorld(t, "500ms")
			byName := map[string]*replica{}
			for _, n := range []string{"replica-a", "replica-b"} {
				byName[n] = env.start(t, n)
			}
			// The first reconcile passes have brought the issue's labels
			// and status up to date: from here on, the held write is the
			// command's.
			settled(t, f, byName["replica-a"], byName["replica-b"])
			hold := f.HoldNext(tc.holdMethod, tc.holdPath)
			const approve = "/resolve D-001 approve"
			id := f.AddComment(owner, repo, featureIssue, "alice", approve)
			if code, body := byName["replica-a"].send("issue_comment", "the-delivery", commentEvent("created", featureIssue, id, "alice", "alice", approve)); code != http.StatusAccepted {
				t.Fatalf("answer %d %q", code, body)
			}
			// Whichever replica gets there first (the delivery's, or the
			// other's reconcile pass) is the one that dies.
			var held ghfake.Call
			select {
			case held = <-hold.Arrived():
			case <-time.After(guard):
				t.Fatal("no replica reached the held step")
			}
			victim := byName[strings.TrimPrefix(held.UserAgent, "phasegate/")]
			if victim == nil {
				t.Fatalf("held a request from %q", held.UserAgent)
			}
			if got := resolutions(f)["D-001"]; got != map[bool]int{true: 1, false: 0}[tc.written] {
				t.Fatalf("%d resolution comments when the replica died", got)
			}
			victim.kill()
			select {
			case <-hold.Gone():
			case <-time.After(guard):
				t.Fatal("the fake never saw the dead replica's request end")
			}
			var survivor *replica
			for _, r := range byName {
				if r != victim {
					survivor = r
				}
			}
			until(t, "the survivor completed the command", func() bool {
				return resolutions(f)["D-001"] == 1 && decisionsStatus(f) == "success" && !hasLabel(f, "phasegate:pending")
			})
			// A few more reconcile passes change nothing.
			settled(t, f, survivor)
			if got := resolutions(f); got["D-001"] != 1 || got["D-002"] != 0 {
				t.Errorf("resolution comments %v, want D-001 once", got)
			}
			if s := decisionsStatus(f); s != "success" {
				t.Errorf("%s = %q", decide.ContextDecisions, s)
			}
		})
	}
}

// TestRedisGoesAway: with Redis gone, the replicas keep answering (503 to
// a delivery they cannot check for replays, so GitHub records it as failed;
// /healthz stays 200) and act on nothing; once Redis is back, the reconcile
// loop applies the command, once.
func TestRedisGoesAway(t *testing.T) {
	t.Parallel() // real time (processes, Redis, leases) overlaps the other tests' CPU
	rdb, f, env := replicaWorld(t, "300ms")
	a, b := env.start(t, "replica-a"), env.start(t, "replica-b")
	settled(t, f, a, b)

	// The replicas share one pass per period: over several periods they run
	// at most one each (give or take a pass in flight at either end), and
	// one of them skips because the other ran it.
	passes := func() float64 {
		return a.metric("phasegate_reconcile_runs_total") + b.metric("phasegate_reconcile_runs_total")
	}
	const period = 300 * time.Millisecond
	t0, p0 := time.Now(), passes()
	until(t, "other-replica skips", func() bool {
		return a.metric("phasegate_reconcile_skipped_passes_total", `reason="other_replica"`)+
			b.metric("phasegate_reconcile_skipped_passes_total", `reason="other_replica"`) >= 4
	})
	p1, t1 := passes(), time.Now()
	if periods := float64(t1.Truncate(period).Sub(t0.Truncate(period))/period) + 1; p1-p0 > periods+2 {
		t.Errorf("%v reconcile passes in %v periods of %v: the replicas do not share them", p1-p0, periods, period)
	}

	rdb.Kill()
	const approve = "/resolve D-001 approve"
	id := f.AddComment(owner, repo, featureIssue, "alice", approve)
	if code, body := a.send("issue_comment", "while-redis-is-down", commentEvent("created", featureIssue, id, "alice", "alice", approve)); code != http.StatusServiceUnavailable {
		t.Fatalf("delivery while Redis is down: %d %q, want 503", code, body)
	}
	for _, r := range []*replica{a, b} {
		resp, err := http.Get(r.url + "/healthz")
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s /healthz while Redis is down: %v %v", r.name, resp, err)
		}
		resp.Body.Close()
	}
	// The reconcile loop goes on, and skips its passes: nothing is acted on.
	unavailable := func() float64 {
		return a.metric("phasegate_reconcile_skipped_passes_total", `reason="store_unavailable"`) +
			b.metric("phasegate_reconcile_skipped_passes_total", `reason="store_unavailable"`)
	}
	u0 := unavailable()
	until(t, "two passes skipped without Redis", func() bool { return unavailable() >= u0+2 })
	if got := resolutions(f)["D-001"]; got != 0 {
		t.Fatalf("%d resolutions while Redis was down: acted without a lock", got)
	}

	rdb.Restart()
	until(t, "the command applied once Redis is back", func() bool {
		return resolutions(f)["D-001"] == 1 && decisionsStatus(f) == "success"
	})
	settled(t, f, a, b)
	if got := resolutions(f); got["D-001"] != 1 {
		t.Errorf("resolution comments %v, want D-001 once", got)
	}
}
