package server

import (
	"bytes"
	"container/list"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/phasegate/phasegate/internal/checkjob"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/redisx"
	"github.com/phasegate/phasegate/internal/testutil/redistest"
)

// allKinds are the kinds of job: each must survive the durable queue's
// JSON, durable or not yet.
var allKinds = []string{kindComment, kindTamper, kindPullRequest, kindInstallRepos, kindUninstall, kindStatus, kindMergeGroup, kindCheck}

// fill sets every field of v (a struct, exported or not) to a value that
// is not its zero value, so that a field the wire form forgets is caught.
func fill(t *testing.T, v reflect.Value, name string) {
	t.Helper()
	if !v.CanSet() {
		v = reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
	}
	switch {
	case v.Type() == reflect.TypeOf(time.Time{}):
		v.Set(reflect.ValueOf(time.Date(2026, 3, 13, 5, 0, 0, 123456789, time.UTC)))
		return
	case v.Type() == reflect.TypeOf(list.New().Front()):
		return // the in-memory queue's; not carried
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(name + "-value")
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(len(name)) + 7)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(t, v.Field(i), name+"."+v.Type().Field(i).Name)
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(t, s.Index(i), fmt.Sprintf("%s[%d]", name, i))
		}
		v.Set(s)
	default:
		t.Fatalf("field %s has a type (%s) the test cannot fill: teach fill about it", name, v.Type())
	}
}

// TestJobWireRoundTrip: every field of a job of every kind survives the
// durable queue's JSON; nil and empty label lists stay apart.
func TestJobWireRoundTrip(t *testing.T) {
	t.Parallel()
	for _, kind := range allKinds {
		t.Run(kind, func(t *testing.T) {
			var j job
			fill(t, reflect.ValueOf(&j).Elem(), "job")
			j.Kind = kind
			b, err := encodeJob(&j)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeJob(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, j) {
				t.Errorf("round trip changed the job:\n got %#v\nwant %#v\njson %s", *got, j, b)
			}
		})
	}
	for _, tt := range []struct {
		name   string
		labels []string
	}{{"nil labels", nil}, {"no labels", []string{}}} {
		t.Run(tt.name, func(t *testing.T) {
			j := &job{Kind: kindComment, Installation: 1, Labels: tt.labels}
			b, _ := encodeJob(j)
			got, err := decodeJob(b)
			if err != nil {
				t.Fatal(err)
			}
			if (got.Labels == nil) != (tt.labels == nil) || len(got.Labels) != 0 {
				t.Errorf("labels %#v became %#v", tt.labels, got.Labels)
			}
		})
	}
}

// TestDecodeJobOfTheOldWire: a job queued by the phasegate before job
// carried its own JSON tags (jobWire, lower-case comment keys) decodes to
// the same job.
func TestDecodeJobOfTheOldWire(t *testing.T) {
	t.Parallel()
	old := `{"v":1,"kind":"comment","delivery":"d-1","event":"issue_comment","action":"created","installation":7,` +
		`"owner":"acme","repo":"shop","issue":5,"comment":{"id":42,"author":"alice","bot":true,"body":"/resolve D-001 approve"},` +
		`"labels":[],"sender":"alice","replay_key":"comment acme/shop 42 created","enqueued":"2026-03-13T05:00:00Z"}`
	want := job{Kind: kindComment, Delivery: "d-1", Event: "issue_comment", Action: "created", Installation: 7, Owner: "acme", Repo: "shop",
		Issue: 5, Comment: decide.Comment{ID: 42, Author: "alice", Bot: true, Body: "/resolve D-001 approve"}, Labels: []string{},
		Sender: "alice", ReplayKey: "comment acme/shop 42 created", Enqueued: time.Date(2026, 3, 13, 5, 0, 0, 0, time.UTC)}
	got, err := decodeJob([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("got %#v\nwant %#v", *got, want)
	}
}

func TestDecodeJobRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, json string }{
		{"not json", `{`},
		{"another version", `{"v":2,"kind":"pull_request","installation":1}`},
		{"no kind", `{"v":1,"installation":1}`},
		{"no installation", `{"v":1,"kind":"pull_request"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if j, err := decodeJob([]byte(tt.json)); err == nil {
				t.Errorf("decoded %+v", j)
			}
		})
	}
}

func TestTaskKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		j    job
		want string // the key but its input's digest
	}{
		{"commit", job{Kind: kindPullRequest, Owner: "Acme", Repo: "Shop", PR: 3, SHA: "ABC123"}, "pull_request:acme/shop:abc123"},
		{"merge group", job{Kind: kindMergeGroup, Owner: "acme", Repo: "shop", SHA: "def"}, "merge_group:acme/shop:def"},
		{"pull request without a head", job{Kind: kindPullRequest, Owner: "acme", Repo: "shop", PR: 3}, "pull_request:acme/shop:pr-3"},
		{"issue", job{Kind: kindComment, Owner: "acme", Repo: "shop", Issue: 9}, "comment:acme/shop:issue-9"},
		{"nothing else", job{Kind: kindInstallRepos, Delivery: "d-1"}, "install_repos::delivery-d-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.j.taskKey()
			if err != nil {
				t.Fatal(err)
			}
			if prefix, digest, ok := strings.Cut(got, tt.want+":"); !ok || prefix != "" || len(digest) != 64 {
				t.Errorf("taskKey = %q, want %q and the input's digest", got, tt.want+":")
			}
		})
	}
}

// TestTaskKeyIsTheInput: two deliveries share a task key (and may be
// coalesced) only when their jobs are the same but for the delivery's ID,
// replay key and arrival; anything else the job acts on keeps them apart.
func TestTaskKeyIsTheInput(t *testing.T) {
	t.Parallel()
	push := job{Kind: kindCheck, Event: "push", Delivery: "d-1", Installation: 7, Owner: "acme", Repo: "shop",
		SHA: sha1st, Base: sha2nd, Ref: "refs/heads/loosen", Sender: "agent-bot", Pusher: "agent-bot",
		Enqueued: time.Date(2026, 3, 13, 5, 0, 0, 0, time.UTC)}
	pull := push
	pull.Event, pull.Action, pull.PR, pull.Ref = "pull_request", "opened", 4, "loosen"
	tests := []struct {
		name string
		edit func(j *job)
		same bool
	}{
		{name: "another delivery of it", same: true, edit: func(j *job) {
			j.Delivery, j.ReplayKey, j.Enqueued = "d-2", "replay", j.Enqueued.Add(time.Hour)
		}},
		{name: "its pull request opened", edit: func(j *job) { *j = pull }},
		{name: "a pull request", edit: func(j *job) { j.PR = 4 }},
		{name: "another base", edit: func(j *job) { j.Base = sha1st }},
		{name: "no base", edit: func(j *job) { j.Base = "" }},
		{name: "from a fork", edit: func(j *job) { j.Fork = "mallory/shop" }},
		{name: "another branch", edit: func(j *job) { j.Ref = "refs/heads/main" }},
		{name: "another pusher", edit: func(j *job) { j.Pusher = "mallory" }},
		{name: "a re-run asked", edit: func(j *job) { j.Event, j.Action = "check_run", "rerequested" }},
		{name: "another action", edit: func(j *job) { j.Action = "synchronize" }},
		{name: "another installation", edit: func(j *job) { j.Installation = 8 }},
	}
	key := func(j job) string {
		k, err := j.taskKey()
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := push
			tt.edit(&j)
			if got := key(j) == key(push); got != tt.same {
				t.Errorf("same key %v, want %v:\n%s\n%s", got, tt.same, key(push), key(j))
			}
		})
	}
}

// scriptDecider is a fakeDecider whose SyncPullRequest and CheckCommit
// run sync.
type scriptDecider struct {
	*fakeDecider
	sync func(ctx context.Context, owner, repo string, number int) error
}

func (d *scriptDecider) SyncPullRequest(ctx context.Context, gh decide.GitHub, owner, repo string, number int) error {
	return d.sync(ctx, owner, repo, number)
}

func (d *scriptDecider) CheckCommit(ctx context.Context, gh checkjob.GitHub, req checkjob.Request) (checkjob.Summary, error) {
	return checkjob.Summary{}, d.sync(ctx, req.Owner, req.Repo, reqPR(req))
}

// durableHarness is a harness whose durable kinds go through a queue on
// rdb (fast polling, short backoff), with sync as the pull requests'
// handler.
func durableHarness(t *testing.T, rdb redistest.DB, sync func(ctx context.Context, owner, repo string, number int) error, opts ...func(*Config)) *harness {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	st, err := redisx.Open(ctx, rdb.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	q := st.Queue(redisx.QueueOptions{Poll: 20 * time.Millisecond, RetryBase: 20 * time.Millisecond, RetryMax: 50 * time.Millisecond,
		ShutdownTimeout: 200 * time.Millisecond, MaxRetry: 3, Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { _ = q.Close() })
	dec := &scriptDecider{fakeDecider: &fakeDecider{}, sync: sync}
	return newHarness(t, append([]func(*Config){func(c *Config) {
		c.Tasks = q
		c.InstallSlots = st.Semaphore("phasegate:installation-jobs:", 2*time.Second)
		c.Seen = st.Seen("phasegate:seen:", time.Hour)
		c.InstallationConcurrency = 4
		c.NewDecider = func(DeciderOptions) Decider { return dec }
		c.statsCacheFor = 10 * time.Millisecond // metricsTextFresh waits it out
	}}, opts...)...)
}

// prEvent is a pull_request opened payload of installation inst.
func prEvent(inst int64, owner, name string, number int, sha string) []byte {
	return mustJSON(map[string]any{
		"action": "opened", "number": number,
		"installation": map[string]any{"id": inst},
		"repository":   repoJSON(owner, name),
		"sender":       userJSON("alice"),
		"pull_request": map[string]any{"number": number, "head": map[string]any{"sha": sha}},
	})
}

func shaOf(i int) string { return fmt.Sprintf("%040x", i+1) }

// TestDurableBusyInstallationDoesNotStarveOthers: fifty jobs of one
// installation are running or waiting, four at a time; another
// installation's single job runs while they all still wait.
func TestDurableBusyInstallationDoesNotStarveOthers(t *testing.T) {
	t.Parallel() // real time (processes, Redis, leases) overlaps the other tests' CPU
	rdb := redistest.SharedDB(t)
	gate := make(chan struct{})
	var mu sync.Mutex
	running, most := 0, 0
	h := durableHarness(t, rdb, func(ctx context.Context, owner, repo string, number int) error {
		if owner != "busy" {
			return nil
		}
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		defer func() { mu.Lock(); running--; mu.Unlock() }()
		select {
		case <-gate:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	h.start()
	h.waitReady()
	for i := range 50 {
		if code, body := h.send(delivery{event: "pull_request", body: prEvent(installation, "busy", "repo", i+1, shaOf(i))}); code != http.StatusAccepted {
			t.Fatalf("delivery %d: %d %s", i, code, body)
		}
	}
	h.until("four busy jobs running", func() bool { mu.Lock(); defer mu.Unlock(); return running == 4 })
	if code, body := h.send(delivery{event: "pull_request", body: prEvent(installation+1, "quiet", "repo", 1, shaOf(99))}); code != http.StatusAccepted {
		t.Fatalf("the quiet installation's delivery: %d %s", code, body)
	}
	if d := h.waitJobs(1)[0]; d.outcome != "ok" {
		t.Fatalf("first job done: %+v", d)
	}
	mu.Lock()
	if most > 4 {
		t.Errorf("%d jobs of one installation ran at once, want at most 4", most)
	}
	mu.Unlock()
	if n := len(h.done); n != 0 {
		t.Fatalf("%d more jobs done before the busy ones were let go", n)
	}
	close(gate)
	h.waitJobs(50)
	if got := sumMetric(metricsText(t, h), "phasegate_queue_job_retries_total", `reason="installation_busy"`); got == 0 {
		t.Error("no job was deferred for its busy installation")
	}
	if got := sumMetric(metricsText(t, h), "phasegate_queue_job_failures_total"); got != 0 {
		t.Errorf("%v failures: deferrals were counted as failures", got)
	}
}

func metricsText(t *testing.T, h *harness) string {
	t.Helper()
	code, body := h.get("/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	return body
}

// TestDurableRetries: an error is retried with backoff and counted as a
// failure; GitHub's rate limit defers the job until its reset without
// counting one; the last failure archives the job.
func TestDurableRetries(t *testing.T) {
	t.Parallel() // real time (processes, Redis, leases) overlaps the other tests' CPU
	errBoom := errors.New("boom")
	tests := []struct {
		name         string
		answers      func(until time.Time) []error
		runs         int
		failures     float64
		retryReason  string
		waitsUntil   bool
		wantArchived bool
	}{
		{name: "errors are retried", answers: func(time.Time) []error { return []error{errBoom, errBoom} }, runs: 3, failures: 2, retryReason: "error"},
		{name: "a secondary rate limit waits for its reset", runs: 2, retryReason: "rate_limited", waitsUntil: true,
			answers: func(until time.Time) []error {
				return []error{fmt.Errorf("syncing: %w", &ghclient.RateLimitError{Secondary: true, Status: 403, Until: until})}
			}},
		{name: "out of retries", answers: func(time.Time) []error { return []error{errBoom, errBoom, errBoom, errBoom} }, runs: 4, failures: 4,
			retryReason: "error", wantArchived: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each case has its own Redis
			rdb := redistest.SharedDB(t)
			// The rate limit resets 300 ms after the first run (not after
			// the test's start, which the harness's start-up could
			// outlast): an error's retry (20-50 ms, polled every 20) would
			// come before it, the deferral (to the second, plus one) after.
			var until time.Time
			var answers []error
			var mu sync.Mutex
			var starts []time.Time
			h := durableHarness(t, rdb, func(ctx context.Context, owner, repo string, number int) error {
				mu.Lock()
				defer mu.Unlock()
				starts = append(starts, time.Now())
				if len(starts) == 1 {
					until = starts[0].Add(300 * time.Millisecond)
					answers = tt.answers(until)
				}
				if n := len(starts); n <= len(answers) {
					return answers[n-1]
				}
				return nil
			})
			h.start()
			h.waitReady()
			if code, body := h.send(delivery{event: "pull_request", body: prEvent(installation, owner, repo, 1, shaOf(1))}); code != http.StatusAccepted {
				t.Fatalf("%d %s", code, body)
			}
			h.waitJobs(tt.runs)
			m := ""
			h.until("the queue is empty", func() bool {
				m = metricsTextFresh(t, h)
				return sumMetric(m, "phasegate_queue_tasks", `state="pending"`)+sumMetric(m, "phasegate_queue_tasks", `state="retry"`)+
					sumMetric(m, "phasegate_queue_tasks", `state="active"`) == 0
			})
			if got := sumMetric(m, "phasegate_queue_job_failures_total"); got != tt.failures {
				t.Errorf("%v failures, want %v", got, tt.failures)
			}
			if got := sumMetric(m, "phasegate_queue_job_retries_total", `reason="`+tt.retryReason+`"`); got == 0 {
				t.Errorf("no retry for %s", tt.retryReason)
			}
			if got := sumMetric(m, "phasegate_queue_tasks", `state="archived"`); (got == 1) != tt.wantArchived {
				t.Errorf("%v archived tasks", got)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(starts) != tt.runs {
				t.Errorf("%d runs, want %d", len(starts), tt.runs)
			}
			if tt.waitsUntil && starts[1].Before(until) {
				t.Errorf("ran again %v before the rate limit's reset", until.Sub(starts[1]))
			}
		})
	}
}

// metricsTextFresh waits out the queue counts' cache (the harness's
// shortened Config.statsCacheFor), then scrapes.
func metricsTextFresh(t *testing.T, h *harness) string {
	time.Sleep(h.srv.cfg.statsCacheFor)
	return metricsText(t, h)
}

// TestDurableCoalesces: a delivery whose job is running is not covered by
// it (the job may have read GitHub before the delivery's news): it is
// queued behind it, and runs once it is done (redisx's tests show the
// deliveries after it coalesced into it while it waits); a replay of a
// delivery is a duplicate; once the jobs are done, a new delivery runs
// again.
func TestDurableCoalesces(t *testing.T) {
	t.Parallel() // real time (processes, Redis, leases) overlaps the other tests' CPU
	rdb := redistest.SharedDB(t)
	gate := make(chan struct{})
	entered := make(chan struct{}, 10)
	h := durableHarness(t, rdb, func(ctx context.Context, owner, repo string, number int) error {
		entered <- struct{}{}
		select {
		case <-gate:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	h.start()
	h.waitReady()
	body := prEvent(installation, owner, repo, 1, shaOf(1))
	send := func(id string) (int, string) { return h.send(delivery{event: "pull_request", id: id, body: body}) }
	if code, answer := send("first"); code != http.StatusAccepted || answer != "accepted" {
		t.Fatalf("first: %d %s", code, answer)
	}
	<-entered
	key := "check:acme/shop:" + shaOf(1)
	tests := []struct {
		id, answer string
		code       int
	}{
		{"second", "accepted: queued behind the running job " + key, http.StatusAccepted},
		{"first", "duplicate", http.StatusOK},
	}
	for _, tt := range tests {
		if code, answer := send(tt.id); code != tt.code || !strings.HasPrefix(answer, tt.answer) {
			t.Errorf("delivery %s: %d %q, want %d %q…", tt.id, code, answer, tt.code, tt.answer)
		}
	}
	close(gate)
	h.waitJobs(2) // the first, then the one queued behind it
	if n := len(entered); n != 1 {
		t.Errorf("%d runs after the running one, want 1 (the second delivery's)", n)
	}
	<-entered
	h.until("the jobs are gone", func() bool {
		code, answer := send(fmt.Sprintf("later-%d", time.Now().UnixNano()))
		return code == http.StatusAccepted && answer == "accepted"
	})
	h.waitJobs(1)
	if n := len(entered); n != 1 {
		t.Errorf("%d runs after the jobs were done, want 1", n)
	}
}

// TestDurableShutdownPutsJobsBack: a replica shut down mid-job lets it
// run for the shutdown timeout, then puts it back; another replica runs it.
func TestDurableShutdownPutsJobsBack(t *testing.T) {
	t.Parallel() // real time (processes, Redis, leases) overlaps the other tests' CPU
	rdb := redistest.SharedDB(t)
	entered := make(chan string, 10)
	block := func(ctx context.Context, owner, repo string, number int) error {
		entered <- "first"
		<-ctx.Done()
		return ctx.Err()
	}
	first := durableHarness(t, rdb, block)
	first.start()
	first.waitReady()
	if code, body := first.send(delivery{event: "pull_request", body: prEvent(installation, owner, repo, 1, shaOf(1))}); code != http.StatusAccepted {
		t.Fatalf("%d %s", code, body)
	}
	<-entered
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}
	second := durableHarness(t, rdb, func(ctx context.Context, owner, repo string, number int) error { return nil })
	second.start()
	second.waitReady()
	if d := second.waitJobs(1)[0]; d.outcome != "ok" || d.kind != kindCheck {
		t.Errorf("the other replica's run: %+v", d)
	}
	if !strings.Contains(first.logs.String(), "shutting down") {
		t.Error("the first replica did not drain")
	}
}

func TestParseServeInstallationConcurrency(t *testing.T) {
	t.Parallel()
	key := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(key, []byte("-----BEGIN RSA PRIVATE KEY-----\nnot checked here\n-----END RSA PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		env     string
		args    []string
		want    int
		wantErr bool
	}{
		{name: "default", want: DefaultInstallationConcurrency},
		{name: "variable", env: "8", want: 8},
		{name: "flag wins", env: "8", args: []string{"--installation-concurrency", "2"}, want: 2},
		{name: "zero", env: "0", wantErr: true},
		{name: "not a number", args: []string{"--installation-concurrency", "many"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"PHASEGATE_APP_ID": "42", "PHASEGATE_PRIVATE_KEY_FILE": key, "PHASEGATE_WEBHOOK_SECRET": "s1",
				"PHASEGATE_INSTALLATION_CONCURRENCY": tt.env}
			var out, errb bytes.Buffer
			s, err := parseServe(tt.args, func(k string) string { return env[k] }, &out, &errb)
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "--installation-concurrency") {
					t.Fatalf("err = %v, want one naming the flag", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.cfg.InstallationConcurrency != tt.want {
				t.Errorf("installation concurrency %d, want %d", s.cfg.InstallationConcurrency, tt.want)
			}
		})
	}
}

// failingTasks is a durable queue whose Enqueue fails.
type failingTasks struct{}

func (failingTasks) Name() string { return "failing" }
func (failingTasks) Enqueue(context.Context, redisx.Task) (redisx.Enqueued, error) {
	return redisx.Enqueued{}, fmt.Errorf("enqueueing: %w", redisx.ErrUnavailable)
}
func (failingTasks) Start(redisx.TaskHandler) error { return nil }
func (failingTasks) Shutdown()                      {}
func (failingTasks) Stats(context.Context) (redisx.QueueStats, error) {
	return redisx.QueueStats{}, redisx.ErrUnavailable
}

// forgettingSeen is a MemSeen that records what it was told to forget.
type forgettingSeen struct {
	*MemSeen
	mu     sync.Mutex
	forgot []string
}

func (f *forgettingSeen) Forget(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forgot = append(f.forgot, id)
	return nil
}

// TestDurableEnqueueFails: a durable job the queue cannot take is refused
// (503) and its delivery forgotten, so that GitHub's redelivery is taken.
func TestDurableEnqueueFails(t *testing.T) {
	t.Parallel()
	seen := &forgettingSeen{MemSeen: NewMemSeen(time.Hour, 100)}
	h := newHarness(t, func(c *Config) { c.Tasks, c.Seen = failingTasks{}, seen })
	code, body := h.send(delivery{event: "pull_request", id: "lost", body: prEvent(installation, owner, repo, 1, shaOf(1))})
	if code != http.StatusServiceUnavailable || body != "cannot queue the job now" {
		t.Errorf("answer %d %q, want 503", code, body)
	}
	if len(seen.forgot) != 1 || seen.forgot[0] != "lost" {
		t.Errorf("forgot %v, want the delivery", seen.forgot)
	}
	if got := sumMetric(metricsText(t, h), "phasegate_queue_enqueued_total", `result="error"`); got != 1 {
		t.Errorf("%v enqueue errors counted", got)
	}
	// The other kinds still go through the in-memory queue.
	if code, _ := h.send(delivery{event: "status", body: statusEvent(decide.ContextDecisions, "mallory", shaOf(1), "success")}); code != http.StatusAccepted {
		t.Errorf("a status delivery: %d", code)
	}
}
