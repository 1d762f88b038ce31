package server_test

// The differential suite: the App's verdict and findings for a commit,
// read through the GitHub API after a sequence of webhook deliveries, must
// equal `phasegate gate --base BASE` on a checkout of the same commit
// (issue 30, "A green check covers exactly what merges"). Each scenario is
// a repository made by the real git binary (differential_gen_test.go),
// served by ghfake as GitHub would (the tree and blobs from git's objects,
// the tarball from `git archive`, a pull request's files capped at 3,000
// and a comparison's at 300, the configuration from the default branch),
// driven through the real server with signed deliveries, on the in-memory
// queue or asynq on redis-server.
//
// The seed is random unless PHASEGATE_DIFF_SEED gives it; every failure
// names it, with the scenario and the command that replays it.
// PHASEGATE_DIFF_N sets how many scenarios run (default 6: each sequence
// once; scenario i plays sequence i mod 6, on the in-memory queue or Redis
// by turns, so that 12 play each sequence on both).

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/checkjob"
	"github.com/phasegate/phasegate/internal/cli"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/gate"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/ghfake/ghfaketest"
	"github.com/phasegate/phasegate/internal/redisx"
	"github.com/phasegate/phasegate/internal/server"
	"github.com/phasegate/phasegate/internal/testutil/redistest"
)

const (
	diffAppID = 4243
	diffSlug  = "phasegate"
	diffInst  = 78
	diffOwner = "acme"
	diffRepo  = "shop"
	zeroSHA   = "0000000000000000000000000000000000000000"
	// diffWait bounds every wait of the suite: a hang fails it.
	diffWait = 4 * time.Minute
	// maxAnnotations is what one check run annotates (internal/checkjob).
	maxAnnotations = 500
)

var diffSecret = []byte("differential webhook secret")

var (
	diffKeyOnce sync.Once
	diffKey     *rsa.PrivateKey
)

func diffAppKey() *rsa.PrivateKey {
	diffKeyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 1024) // the fake's check, not strength
		if err != nil {
			panic(err)
		}
		diffKey = k
	})
	return diffKey
}

// diffSeed is PHASEGATE_DIFF_SEED, else a random seed; n is
// PHASEGATE_DIFF_N, else one scenario per sequence.
func diffSeed(t *testing.T) (seed uint64, n int) {
	t.Helper()
	n = len(sequences)
	if s := os.Getenv("PHASEGATE_DIFF_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("PHASEGATE_DIFF_N=%q: want a positive number", s)
		}
		n = v
	}
	if s := os.Getenv("PHASEGATE_DIFF_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("PHASEGATE_DIFF_SEED=%q: want an unsigned number", s)
		}
		return v, n
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:]) % 1_000_000_000, n
}

// TestDifferential: for every scenario, the App's final phasegate/contracts
// of the head equals what `phasegate gate` says on a checkout of it.
func TestDifferential(t *testing.T) {
	t.Parallel()
	seed, n := diffSeed(t)
	for _, c := range append([]string{loosened}, configs...) {
		if _, probs := config.Parse([]byte(c)); len(probs) > 0 {
			t.Fatalf("the suite's configuration %q is invalid: %v", c, probs)
		}
	}
	t.Logf("seed %d, %d scenarios (PHASEGATE_DIFF_SEED=%d PHASEGATE_DIFF_N=%d to replay)", seed, n, seed, n)
	for i := range n {
		name := fmt.Sprintf("%d-%s-%s", i, sequences[i%len(sequences)], queueOf(i))
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sc := generate(t, seed, i)
			app, exp := playApp(t, sc)
			want := checkout(t, sc, exp)
			diffs := compare(want, app)
			if len(diffs) == 0 {
				t.Logf("%s: both %s, %d findings with a file", sc, want.verdict, want.withFile)
				return
			}
			t.Errorf("%s: the App and the checkout differ (replay: PHASEGATE_DIFF_SEED=%d PHASEGATE_DIFF_N=%d go test -race -run 'TestDifferential/%s$' ./internal/server)\n"+
				"  base %s, head %s, pull request: %v; App: %q; App jobs: %s\n  %s",
				sc, seed, n, name, short(exp.base), short(sc.head), exp.pr, app.title, strings.Join(app.jobs, " "), strings.Join(diffs, "\n  "))
		})
	}
}

// expectation is what the final check of the head must have measured: the
// change from base, as a pull request (the gate-change guard applies) or a
// push, with the default branch's configuration cfg.
type expectation struct {
	base string
	pr   bool
	cfg  string
}

// result is a verdict and the findings a check run annotates, as
// comparable keys: at most 500 of those with a file, errors first (as
// internal/checkjob's annotations), and how many have a file.
type result struct {
	verdict  gate.Verdict
	title    string
	findings map[string]int
	withFile int
	jobs     []string // the App's jobs: kind=outcome, and its checks
}

// ---- the App ----

// diffApp is a fake GitHub serving a scenario's commits, and the server.
type diffApp struct {
	t        *testing.T
	sc       *scenario
	f        *ghfake.Server
	srv      *server.Server
	logs     *lockedLog
	accepted int
	reg      *prometheus.Registry
	done     chan string
	jobs     []string
}

type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	lines := strings.Split(l.b.String(), "\n")
	return strings.Join(lines[max(0, len(lines)-40):], "\n")
}

// newDiffApp serves sc's commits from a fake GitHub and starts the App
// on it.
func newDiffApp(t *testing.T, sc *scenario) *diffApp {
	t.Helper()
	f := ghfake.New()
	t.Cleanup(f.Close)
	ghfaketest.Verify(t, f)
	key := diffAppKey()
	f.AddApp(diffAppID, diffSlug, &key.PublicKey)
	f.AddInstallation(diffAppID, diffInst)
	f.AddRepo(diffOwner, diffRepo, "main")
	for range 50 { // the outcomes' issues exist (feature-042, -043, -050)
		f.AddIssue(diffOwner, diffRepo, "Feature", "", "alice")
	}
	g := sc.repo
	shas := []string{sc.base, sc.mid, sc.head}
	if sc.next != "" {
		shas = append(shas, sc.next)
	}
	trees := g.treeFiles(shas)
	want := strings.Fields(g.line(append([]string{"rev-parse"}, mapSlice(shas, func(s string) string { return s + "^{tree}" })...)...))
	for i, sha := range shas {
		if tree := f.SetTree(diffOwner, diffRepo, sha, trees[sha]); tree != want[i] {
			t.Fatalf("the fake's tree of %s is %s, git's %s: the suite does not serve what git holds", short(sha), tree, want[i])
		}
		if sc.archiveOver > 0 { // else the App reads blobs: it never asks for one
			f.SetArchive(diffOwner, diffRepo, sha, g.archive(sha, diffOwner, diffRepo))
		}
	}
	serveComparisons(t, f, sc)
	f.SetBranch(diffOwner, diffRepo, "main", sc.base)
	a := &diffApp{t: t, sc: sc, f: f, logs: &lockedLog{}, reg: prometheus.NewRegistry(), done: make(chan string, 1000)}
	cfg := server.Config{
		Secrets:       [][]byte{diffSecret},
		AppID:         diffAppID,
		PrivateKeyPEM: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		APIURL:        f.URL(),
		QueueSize:     64,
		Workers:       2,
		ReadyRetry:    5 * time.Millisecond,
		Publish:       decide.PublishChecks,
		Registry:      a.reg,
		Logger:        slog.New(slog.NewJSONHandler(a.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		TreeLimits:    ghclient.TreeLimits{ArchiveOver: sc.archiveOver},
		GitHubOptions: func(o *ghclient.Options) {
			o.BackoffBase, o.BackoffMax, o.MaxAttempts = time.Millisecond, 2*time.Millisecond, 3
		},
	}
	if sc.queue == "redis" {
		useDiffRedis(t, &cfg)
	}
	s, err := server.New(cfg)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	server.SetJobDoneHook(s, func(kind, outcome string) { a.done <- kind + "=" + outcome })
	a.srv = s
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-served:
		case <-time.After(diffWait):
			t.Error("Serve did not return")
		}
	})
	a.until("the server is ready", s.Ready)
	return a
}

// serveComparisons sets the comparison of each commit the App may check
// (the head, main's next commit) with every other of sc's commits, as
// GitHub compares any two: status, counts and merge base from the
// commits' parents, and the files from git (the fake lists 300 of them,
// as GitHub does).
func serveComparisons(t *testing.T, f *ghfake.Server, sc *scenario) {
	t.Helper()
	parent := map[string]string{sc.mid: sc.base, sc.head: sc.mid, sc.next: sc.base}
	chain := func(sha string) []string { // sha and its ancestors, newest first
		var out []string
		for ; sha != ""; sha = parent[sha] {
			out = append(out, sha)
		}
		return out
	}
	for _, head := range []string{sc.head, sc.next} {
		for _, base := range []string{sc.base, sc.mid, sc.head, sc.next} {
			if head == "" || base == "" || base == head {
				continue
			}
			hc, bc := chain(head), chain(base)
			c := ghfake.Comparison{}
			for i, sha := range hc {
				if j := slices.Index(bc, sha); j >= 0 {
					c.MergeBase, c.AheadBy, c.BehindBy = sha, i, j
					break
				}
			}
			switch {
			case c.BehindBy == 0:
				c.Status = "ahead"
			case c.AheadBy == 0:
				c.Status = "behind"
			default:
				c.Status = "diverged"
			}
			c.Files = sc.repo.diff(base, head)
			f.SetComparison(diffOwner, diffRepo, base, head, c)
		}
	}
}

// useDiffRedis puts the server's durable jobs, locks and delivery ids on a
// database of the shared redis-server, as serve --redis-url does.
func useDiffRedis(t *testing.T, cfg *server.Config) {
	t.Helper()
	rdb := redistest.SharedDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), diffWait)
	defer cancel()
	st, err := redisx.Open(ctx, rdb.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	q := st.Queue(redisx.QueueOptions{Poll: 50 * time.Millisecond, RetryBase: 20 * time.Millisecond, RetryMax: 50 * time.Millisecond,
		ShutdownTimeout: 200 * time.Millisecond, MaxRetry: 3, Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { _ = q.Close() })
	cfg.Tasks = q
	cfg.Locker = st.Locker("phasegate:lock:", time.Minute)
	cfg.Seen = st.Seen("phasegate:seen:", time.Hour)
	cfg.InstallSlots = st.Semaphore("phasegate:installation-jobs:", 2*time.Second)
	cfg.InstallationConcurrency = 4
}

func (a *diffApp) until(what string, cond func() bool) {
	a.t.Helper()
	deadline := time.Now().Add(diffWait)
	for pause := time.Millisecond; !cond(); pause = min(2*pause, 16*time.Millisecond) {
		if time.Now().After(deadline) {
			a.t.Fatalf("%s: never: %s; logs:\n%s", a.sc, what, a.logs.tail())
		}
		time.Sleep(pause)
	}
}

var deliveries atomic.Int64

// send delivers a signed webhook; a delivery that makes a job is counted.
func (a *diffApp) send(event string, body []byte) {
	a.t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("diff-%d", deliveries.Add(1)))
	req.Header.Set("X-Hub-Signature-256", ghfake.SignWebhook(diffSecret, body))
	rec := httptest.NewRecorder()
	a.srv.Handler().ServeHTTP(rec, req)
	answer := strings.TrimSpace(rec.Body.String())
	switch {
	case rec.Code == http.StatusAccepted && answer == "accepted":
		a.accepted++
	case rec.Code == http.StatusAccepted || rec.Code == http.StatusOK:
		a.jobs = append(a.jobs, fmt.Sprintf("[%s: %s]", event, answer))
	default:
		a.t.Fatalf("%s: %s delivery answered %d %q", a.sc, event, rec.Code, answer)
	}
}

// settle waits until the job of every accepted delivery and every job the
// queues took (a job may enqueue others: a re-check) is done, the
// in-memory queue is idle and no job ended for a while.
func (a *diffApp) settle() {
	a.t.Helper()
	deadline := time.After(diffWait)
	quiet := time.NewTimer(0)
	defer quiet.Stop()
	for {
		done := len(a.jobs) - a.notes()
		select {
		case j := <-a.done:
			a.jobs = append(a.jobs, j)
			quiet.Reset(300 * time.Millisecond)
		case <-quiet.C:
			if done >= a.accepted && float64(done) >= a.gauge("phasegate_queue_enqueued_total", "enqueued") &&
				a.gauge("phasegate_queue_depth", "")+a.gauge("phasegate_queue_inflight", "") == 0 && a.headSettled() {
				return
			}
			quiet.Reset(100 * time.Millisecond)
		case <-deadline:
			a.t.Fatalf("%s: %d of %d jobs done; logs:\n%s", a.sc, done, a.accepted, a.logs.tail())
		}
	}
}

// headSettled says whether the head's newest phasegate/contracts of the
// App, if any, is completed (a job retried after an error starts another).
func (a *diffApp) headSettled() bool {
	run := a.newestRun()
	return run == nil || run.Status == "completed"
}

// newestRun is the App's newest phasegate/contracts check run of the head.
func (a *diffApp) newestRun() *ghfake.CheckRun {
	var run *ghfake.CheckRun
	for _, r := range a.f.CheckRuns(diffOwner, diffRepo, a.sc.head) {
		if r.Name == decide.ContextContracts && r.AppSlug == diffSlug {
			run = &r
		}
	}
	return run
}

// gauge sums the samples of the metric name (with a label of that value,
// unless it is "") of the App's registry.
func (a *diffApp) gauge(name, label string) float64 {
	mfs, err := a.reg.Gather()
	if err != nil {
		a.t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.Metric {
			match := label == ""
			for _, l := range m.Label {
				match = match || l.GetValue() == label
			}
			if match {
				sum += m.GetGauge().GetValue() + m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// checks are the App's "checked a commit" log lines: which delivery
// checked what, with which verdict.
func (a *diffApp) checks() []string {
	a.logs.mu.Lock()
	defer a.logs.mu.Unlock()
	var out []string
	for _, l := range strings.Split(a.logs.b.String(), "\n") {
		var m map[string]any
		switch {
		case json.Unmarshal([]byte(l), &m) != nil:
		case m["msg"] == "checked a commit":
			out = append(out, fmt.Sprintf("{%v of %v: %v, %v findings}", m["event"], short(fmt.Sprint(m["head"])), m["verdict"], m["findings"]))
		case m["error"] != nil:
			e := fmt.Sprint(m["error"])
			out = append(out, fmt.Sprintf("{%v: %s}", m["msg"], e[:min(len(e), 300)]))
		}
	}
	return out
}

// notes counts the entries of a.jobs that are answers, not jobs.
func (a *diffApp) notes() int {
	n := 0
	for _, j := range a.jobs {
		if strings.HasPrefix(j, "[") {
			n++
		}
	}
	return n
}

func diffRepoJSON() map[string]any {
	return map[string]any{"id": 1, "name": diffRepo, "full_name": diffOwner + "/" + diffRepo, "html_url": "https://github.com/" + diffOwner + "/" + diffRepo,
		"owner": map[string]any{"login": diffOwner, "type": "Organization"}}
}

func pushJSON(branch, before, after string) []byte {
	b, _ := json.Marshal(map[string]any{"ref": "refs/heads/" + branch, "before": before, "after": after,
		"installation": map[string]any{"id": diffInst}, "repository": diffRepoJSON(),
		"sender": map[string]any{"login": "agent-bot", "type": "User"}, "pusher": map[string]any{"name": "agent-bot"}})
	return b
}

func pullJSON(action string, number int, state, head, base, baseRef string, changes map[string]any) []byte {
	p := map[string]any{"action": action, "number": number,
		"installation": map[string]any{"id": diffInst}, "repository": diffRepoJSON(),
		"sender": map[string]any{"login": "agent-bot", "type": "User"},
		"pull_request": map[string]any{"number": number, "state": state, "user": map[string]any{"login": "agent-bot", "type": "User"},
			"head": map[string]any{"sha": head, "ref": "feature", "repo": map[string]any{"full_name": diffOwner + "/" + diffRepo}},
			"base": map[string]any{"sha": base, "ref": baseRef}}}
	if changes != nil {
		p["changes"] = changes
	}
	b, _ := json.Marshal(p)
	return b
}

// openPR opens the pull request of the feature branch (head) against
// baseRef at base, as GitHub lists it, and delivers "opened".
func (a *diffApp) openPR(base, baseRef string) int {
	sc := a.sc
	n := a.f.AddPullRequest(diffOwner, diffRepo, ghfake.PullRequest{HeadSHA: sc.head, BaseSHA: base, HeadRef: "feature", BaseRef: baseRef, Author: "agent-bot"})
	a.f.SetPullRequestFiles(diffOwner, diffRepo, n, sc.repo.diff(base, sc.head))
	a.send("pull_request", pullJSON("opened", n, "open", sc.head, base, baseRef, nil))
	return n
}

// playApp plays sc's sequence on the App and returns the final
// phasegate/contracts of the head, and what it must have measured.
func playApp(t *testing.T, sc *scenario) (result, expectation) {
	a := newDiffApp(t, sc)
	f, g := a.f, sc.repo
	exp := expectation{base: sc.base, pr: true, cfg: sc.cfgMain}
	switch sc.seq {
	case "pr":
		a.openPR(sc.base, "main")
	case "push-pr-race":
		// The branch is pushed; its job is held on its first tree read
		// while the agent opens the pull request.
		hold := f.HoldNext("GET", "/git/trees/")
		f.Push(diffOwner, diffRepo, ghfake.Push{Ref: "feature", After: sc.head, Actor: "agent-bot"})
		a.send("push", pushJSON("feature", zeroSHA, sc.head))
		select {
		case <-hold.Arrived():
		case <-time.After(diffWait):
			t.Fatalf("%s: the push's job never read the tree; logs:\n%s", sc, a.logs.tail())
		}
		a.openPR(sc.base, "main")
		hold.Release()
	case "base-edit":
		// Opened against the agent's own branch, then retargeted at main.
		f.SetBranch(diffOwner, diffRepo, "scratch", sc.mid)
		n := a.openPR(sc.mid, "scratch")
		a.settle()
		f.AddPullRequest(diffOwner, diffRepo, ghfake.PullRequest{Number: n, HeadSHA: sc.head, BaseSHA: sc.base, HeadRef: "feature", BaseRef: "main", Author: "agent-bot"})
		f.SetPullRequestFiles(diffOwner, diffRepo, n, g.diff(sc.base, sc.head))
		a.send("pull_request", pullJSON("edited", n, "open", sc.head, sc.base, "main",
			map[string]any{"base": map[string]any{"ref": map[string]any{"from": "scratch"}, "sha": map[string]any{"from": sc.mid}}}))
	case "close-reopen":
		n := a.openPR(sc.base, "main")
		a.settle()
		f.SetIssueState(diffOwner, diffRepo, n, "closed")
		a.send("pull_request", pullJSON("closed", n, "closed", sc.head, sc.base, "main", nil))
		a.settle()
		f.SetIssueState(diffOwner, diffRepo, n, "open")
		a.send("pull_request", pullJSON("reopened", n, "open", sc.head, sc.base, "main", nil))
	case "config-change":
		a.openPR(sc.base, "main")
		a.settle()
		f.Push(diffOwner, diffRepo, ghfake.Push{Ref: "main", After: sc.next, Actor: "alice"})
		a.send("push", pushJSON("main", sc.base, sc.next))
		exp.cfg = sc.cfgNext
	case "push":
		f.SetBranch(diffOwner, diffRepo, "feature", sc.mid)
		f.Push(diffOwner, diffRepo, ghfake.Push{Ref: "feature", After: sc.head, Actor: "agent-bot"})
		a.send("push", pushJSON("feature", sc.mid, sc.head))
		exp = expectation{base: sc.mid, cfg: sc.cfgMain}
	default:
		t.Fatalf("unknown sequence %q", sc.seq)
	}
	a.settle()
	return a.contracts(), exp
}

// contracts is the App's newest phasegate/contracts check run of the head.
func (a *diffApp) contracts() result {
	res := result{findings: map[string]int{}, jobs: append(a.jobs, a.checks()...)}
	run := a.newestRun()
	switch {
	case run == nil:
		res.verdict, res.title = "none", "no phasegate/contracts check run"
		return res
	case run.Status != "completed":
		res.verdict, res.title = gate.Verdict(run.Status), run.Title
		return res
	}
	res.title = run.Title
	res.verdict = map[string]gate.Verdict{"failure": gate.Hold, "neutral": gate.Advisory, "success": gate.Ship}[run.Conclusion]
	for _, an := range run.Annotations {
		sev := check.SeverityError
		if an.Level == "warning" {
			sev = check.SeverityWarning
		}
		res.findings[key(an.Path, an.StartLine, an.StartColumn, an.Title, sev)]++
	}
	res.withFile = len(run.Annotations)
	if m := annotatedRE.FindStringSubmatch(run.Summary); m != nil {
		res.withFile, _ = strconv.Atoi(m[1])
	}
	return res
}

// annotatedRE reads the count of findings with a file from a summary
// whose findings were not all annotated.
var annotatedRE = regexp.MustCompile(`\*\*\d+ of (\d+) findings are annotated\*\*`)

func key(file string, line, col int, rule string, sev check.Severity) string {
	return fmt.Sprintf("%s:%d:%d %s (%s)", file, max(line, 1), col, rule, sev)
}

// ---- the checkout ----

// checkout is `phasegate gate --format json --base BASE DIR` on the
// checkout of the head, with the default branch's configuration, plus the
// App's gate-change guard of a pull request computed from git.
func checkout(t *testing.T, sc *scenario, exp expectation) result {
	t.Helper()
	cfgFile := filepath.Join(t.TempDir(), "phasegate.yml")
	if err := os.WriteFile(cfgFile, []byte(exp.cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"gate", "--format", "json", "--config", cfgFile}
	if exp.base != "" {
		args = append(args, "--base", exp.base)
	}
	var out, errb bytes.Buffer
	if code := cli.Main(append(args, sc.repo.dir), func(string) string { return "" }, &out, &errb); code == cli.ExitUsage {
		t.Fatalf("%s: phasegate gate could not run: %s", sc, errb.String())
	}
	var rep struct {
		Findings []check.Finding `json:"findings"`
		Pipeline []check.Status  `json:"pipeline"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%s: phasegate gate's JSON: %v\n%s", sc, err, out.String())
	}
	if exp.pr {
		rep.Findings = append(rep.Findings, guard(sc, exp.base)...)
	}
	check.Sort(rep.Findings)
	res := result{verdict: gate.Compute(rep.Findings, rep.Pipeline).Verdict, findings: map[string]int{}}
	for _, sev := range []check.Severity{check.SeverityError, check.SeverityWarning} {
		for _, f := range rep.Findings {
			if f.File == cfgFile {
				f.File = configPath // the App names the default branch's file
			}
			if f.Severity != sev || f.File == "" {
				continue
			}
			if res.withFile++; res.withFile <= maxAnnotations {
				res.findings[key(f.File, f.Line, f.Column, f.Rule, f.Severity)]++
			}
		}
	}
	return res
}

// guard is the App's gate-change guard (internal/checkjob, guard.go) of a
// pull request from base to the head, computed from git: every changed
// file that is the configuration, or a workflow that mentions phasegate at
// the head or at base, is an error until approved (no scenario approves).
func guard(sc *scenario, base string) []check.Finding {
	g := sc.repo
	var out []check.Finding
	for name, st := range g.changed(base, sc.head) {
		gated := name == configPath
		if ext := strings.ToLower(path.Ext(name)); !gated && path.Dir(name) == ".github/workflows" && (ext == ".yml" || ext == ".yaml") {
			if st != "D" {
				data, _ := g.show(sc.head, name)
				gated = mentionsPhasegate(data)
			}
			if !gated && st != "A" {
				data, _ := g.show(base, name)
				gated = mentionsPhasegate(data)
			}
		}
		if gated {
			out = append(out, check.Finding{File: name, Line: 1, Column: 1, Kind: "config", Rule: checkjob.RuleGateChange, Severity: check.SeverityError})
		}
	}
	return out
}

func mentionsPhasegate(data []byte) bool {
	return bytes.Contains(bytes.ToLower(data[:min(len(data), 1<<20)]), []byte("phasegate"))
}

// compare lists every difference between the checkout's result and the
// App's.
func compare(want, got result) []string {
	var out []string
	if want.verdict != got.verdict {
		out = append(out, fmt.Sprintf("verdict: App %s (%q), checkout %s", got.verdict, got.title, want.verdict))
	}
	if want.withFile != got.withFile {
		out = append(out, fmt.Sprintf("findings with a file: App %d, checkout %d", got.withFile, want.withFile))
	}
	var keys []string
	for k := range want.findings {
		keys = append(keys, k)
	}
	for k := range got.findings {
		if _, ok := want.findings[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		switch w, g := want.findings[k], got.findings[k]; {
		case w > g:
			out = append(out, fmt.Sprintf("only in the checkout (%d×): %s", w-g, k))
		case g > w:
			out = append(out, fmt.Sprintf("only in the App (%d×): %s", g-w, k))
		}
	}
	return out
}

func mapSlice(in []string, f func(string) string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = f(s)
	}
	return out
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// TestDifferentialCompare: the comparison reports every difference of
// verdict, annotation and count, and nothing when the two agree (a
// comparison that could not fail would make the suite pass on anything).
func TestDifferentialCompare(t *testing.T) {
	t.Parallel()
	broken := key("a.yaml", 3, 1, "schema", check.SeverityError)
	warned := key("b.yaml", 0, 0, "pace.day-matches-dir", check.SeverityWarning)
	base := result{verdict: gate.Hold, findings: map[string]int{broken: 1, warned: 1}, withFile: 2}
	tests := []struct {
		name string
		app  result
		want []string
	}{
		{"the same", base, nil},
		{"another verdict", result{verdict: gate.Ship, title: "SHIP: fine", findings: base.findings, withFile: 2},
			[]string{`verdict: App SHIP ("SHIP: fine"), checkout HOLD`}},
		{"a finding missing", result{verdict: gate.Hold, findings: map[string]int{warned: 1}, withFile: 1},
			[]string{"findings with a file: App 1, checkout 2", "only in the checkout (1×): a.yaml:3:1 schema (error)"}},
		{"a finding twice", result{verdict: gate.Hold, findings: map[string]int{broken: 1, warned: 2}, withFile: 3},
			[]string{"findings with a file: App 3, checkout 2", "only in the App (1×): b.yaml:1:0 pace.day-matches-dir (warning)"}},
		{"beyond the annotations", result{verdict: gate.Hold, findings: base.findings, withFile: 600},
			[]string{"findings with a file: App 600, checkout 2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := compare(base, tt.app); !slices.Equal(got, tt.want) {
				t.Errorf("compare = %q, want %q", got, tt.want)
			}
		})
	}
}
