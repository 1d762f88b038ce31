package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/redisx"
	"github.com/phasegate/phasegate/internal/testutil"
	"github.com/phasegate/phasegate/internal/testutil/outcometest"
	"github.com/phasegate/phasegate/internal/testutil/redistest"
)

// deployGate is a served App whose pull request's head (appHead2) was
// checked (SHIP) and carries a Phase Outcome with the blocking decision
// D-001 pending on issue, and the fake sends its deliveries to the server.
type deployGate struct {
	*harness
	issue, pr int
}

func newDeployGate(t *testing.T, opts ...func(*Config)) deployGate {
	t.Helper()
	h := newHarness(t, append([]func(*Config){func(c *Config) { c.NewDecider = nil; c.Publish = decide.PublishChecks }}, opts...)...)
	f := h.fake
	issue := f.AddIssue(owner, repo, "Feature 1", "", "alice")
	const goodPath = "outcomes/feature-001-requirements.outcome.yaml"
	f.SetPermission(owner, repo, "alice", "write")
	f.SetTreeFiles(owner, repo, appBaseSHA, map[string]string{"README.md": "# shop\n"})
	f.SetTreeFiles(owner, repo, appHead2, map[string]string{"README.md": "# shop\n", goodPath: outcometest.SeedFor(issue)})
	pr := f.AddPullRequest(owner, repo, ghfake.PullRequest{HeadSHA: appHead2, BaseSHA: appBaseSHA, HeadRef: "feature", BaseRef: "main", Author: "agent-bot"})
	f.SetPullRequestFiles(owner, repo, pr, []ghfake.File{{Filename: goodPath, Status: "added"}})
	h.start()
	h.waitReady()
	f.SetHookTarget(h.srv.Handler(), testSecret)
	g := deployGate{harness: h, issue: issue, pr: pr}
	g.deliver("pull_request", prOpenEvent("opened", pr, appHead2, appBaseSHA, "feature", "agent-bot"))
	if h.srv.cfg.Publish == decide.PublishStatuses {
		if st, _ := f.LatestStatus(owner, repo, appHead2, decide.ContextContracts); st.State != "success" {
			t.Fatalf("contracts of the head: %+v", st)
		}
	} else if c := newest(t, f, appHead2, decide.ContextContracts); c.Conclusion != "success" {
		t.Fatalf("contracts of the head: %s", c.Conclusion)
	}
	return g
}

// deliver sends a signed delivery and waits for its job (and any it woke).
func (g deployGate) deliver(event string, body []byte) {
	g.t.Helper()
	if code, answer := g.send(delivery{event: event, body: body}); code != http.StatusAccepted {
		g.t.Fatalf("%s: answer %d %q", event, code, answer)
	}
	if d := g.waitJobs(1)[0]; d.outcome != "ok" {
		g.t.Fatalf("%s: job %+v; logs:\n%s", event, d, g.logs.String())
	}
}

// request has GitHub ask for a deployment of sha to env by run, signed
// with the App's webhook secret, and waits for phasegate's first review.
func (g deployGate) request(run int64, env, sha string) {
	g.t.Helper()
	code, err := g.fake.RequestDeployment(ghfake.DeploymentRequest{Owner: owner, Repo: repo, RunID: run, Environment: env, SHA: sha,
		Ref: "feature", InstallationID: installation})
	if err != nil || code != http.StatusAccepted {
		g.t.Fatalf("deployment request: %d %v", code, err)
	}
	deadline := time.Now().Add(guard)
	for len(g.answers(run)) == 0 {
		if time.Now().After(deadline) {
			g.t.Fatalf("run %d was never answered nor commented on; logs:\n%s", run, tail(g.logs.String(), 30))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// resolve has alice comment command on the issue.
func (g deployGate) resolve(command string) {
	g.t.Helper()
	id := g.fake.AddComment(owner, repo, g.issue, "alice", command)
	g.deliver("issue_comment", commentEvent("created", g.issue, id, "alice", "alice", command))
}

// answers are the states run's reviews posted ("" for a comment alone).
func (g deployGate) answers(run int64) []string {
	var out []string
	for _, r := range g.fake.DeploymentReviews(owner, repo, run) {
		out = append(out, r.State)
	}
	return out
}

// answered waits until run has an answer and returns the reviews.
func (g deployGate) answered(run int64) []ghfake.DeploymentReview {
	g.t.Helper()
	g.until("the deployment is answered", func() bool {
		for _, s := range g.answers(run) {
			if s != "" {
				return true
			}
		}
		return false
	})
	return g.fake.DeploymentReviews(owner, repo, run)
}

// final is the one answer of reviews (approved or rejected); it fails when
// there is not exactly one.
func final(t *testing.T, reviews []ghfake.DeploymentReview) ghfake.DeploymentReview {
	t.Helper()
	var out []ghfake.DeploymentReview
	for _, r := range reviews {
		if r.State != "" {
			out = append(out, r)
		}
	}
	if len(out) != 1 {
		t.Fatalf("answers %+v, want exactly one", reviews)
	}
	return out[0]
}

// TestDeploymentWaitsForTheDecision is issue 34's done-when: a deployment
// of a commit whose blocking decision is pending is not approved, and
// waits with a comment naming the decision and where to answer it; after
// an authorised /resolve D-001 approve, phasegate approves it by itself,
// once; a later deployment of the commit is approved at once.
func TestDeploymentWaitsForTheDecision(t *testing.T) {
	t.Parallel()
	g := newDeployGate(t)
	g.request(9001, "production", appHead2)
	reviews := g.fake.DeploymentReviews(owner, repo, 9001)
	if len(reviews) != 1 || reviews[0].State != "" || reviews[0].Environment != "production" || reviews[0].Sender != appBot {
		t.Fatalf("reviews %+v, want one comment by the App that answers nothing", reviews)
	}
	comment := reviews[0].Comment
	for _, want := range []string{"holds deploying a20000000000 to production", fmt.Sprintf("D-001 on #%d", g.issue),
		fmt.Sprintf("/issues/%d#issuecomment-", g.issue), "/resolve"} {
		if !strings.Contains(comment, want) {
			t.Errorf("the waiting comment does not say %q:\n%s", want, comment)
		}
	}
	t.Logf("the comment a waiting request gets:\n%s", comment)

	began := time.Now()
	g.resolve("/resolve D-001 approve")
	got := final(t, g.answered(9001))
	t.Logf("approved %v after the /resolve delivery was accepted (the comment's job, then the wake)", time.Since(began))
	if got.State != "approved" || got.Sender != appBot || !strings.Contains(got.Comment, "approves deploying a20000000000 to production") {
		t.Fatalf("answer %+v, want approved by the App", got)
	}
	// Answered once: nothing is left waiting, and a reconcile pass adds
	// nothing.
	if left, _ := g.srv.cfg.Deployments.List(context.Background()); len(left) != 0 {
		t.Fatalf("still recorded after the answer: %+v", left)
	}
	g.srv.reconcileOnce(context.Background())
	final(t, g.fake.DeploymentReviews(owner, repo, 9001))

	g.request(9002, "production", appHead2)
	if got := g.answers(9002); len(got) != 1 || got[0] != "approved" {
		t.Fatalf("a deployment of the decided commit: %v, want approved at once", got)
	}
}

// TestDeploymentRejectedByANegativeResolution: /resolve D-001 reject
// rejects the deployment waiting on it.
func TestDeploymentRejectedByANegativeResolution(t *testing.T) {
	t.Parallel()
	g := newDeployGate(t)
	g.request(9101, "staging", appHead2)
	g.resolve("/resolve D-001 reject")
	got := final(t, g.answered(9101))
	if got.State != "rejected" || !strings.Contains(got.Comment, fmt.Sprintf("D-001 → reject (#%d)", g.issue)) {
		t.Fatalf("answer %+v, want rejected naming the resolution", got)
	}
}

// TestDeploymentWaitsForAStaleApproval: D-001 was approved on the head;
// the agent then pushes a change to the outcome's directory. A deployment
// of the new head waits for D-001 again, and says it is stale.
func TestDeploymentWaitsForAStaleApproval(t *testing.T) {
	t.Parallel()
	g := newDeployGate(t)
	g.resolve("/resolve D-001 approve")
	f := g.fake
	const appHead3 = "a300000000000000000000000000000000000003"
	const goodPath = "outcomes/feature-001-requirements.outcome.yaml"
	f.SetTreeFiles(owner, repo, appHead3, map[string]string{"README.md": "# shop\n", goodPath: outcometest.SeedFor(g.issue), "outcomes/notes.md": "changed after the approval\n"})
	pr := g.pr
	f.SetPullRequestHead(owner, repo, pr, appHead3)
	f.SetPullRequestFiles(owner, repo, pr, []ghfake.File{{Filename: goodPath, Status: "added"}, {Filename: "outcomes/notes.md", Status: "added"}})
	g.deliver("pull_request", prOpenEvent("synchronize", pr, appHead3, appBaseSHA, "feature", "agent-bot"))
	g.request(9061, "production", appHead3)
	reviews := f.DeploymentReviews(owner, repo, 9061)
	if len(reviews) != 1 || reviews[0].State != "" || !strings.Contains(reviews[0].Comment, fmt.Sprintf("D-001 on #%d (its resolution is stale after a push: re-confirm it)", g.issue)) {
		t.Fatalf("reviews %+v, want one comment naming D-001 stale", reviews)
	}
	g.resolve("/resolve D-001 approve")
	if got := final(t, g.answered(9061)); got.State != "approved" {
		t.Fatalf("after the re-confirmation: %+v", got)
	}
}

// TestDeploymentAnsweredElsewhere: the run no longer waits on the
// environment when serve answers (an earlier answer reached GitHub but its
// response was lost, say), and GitHub refuses the answer: the request is
// dropped, not retried for 30 days.
func TestDeploymentAnsweredElsewhere(t *testing.T) {
	t.Parallel()
	g := newDeployGate(t)
	g.request(9071, "production", appHead2)
	gh, err := g.srv.client(installation)
	if err != nil {
		t.Fatal(err)
	}
	if err := gh.ReviewDeployment(context.Background(), owner, repo, 9071, "production", "approved", "an answer whose response was lost"); err != nil {
		t.Fatal(err)
	}
	g.fake.FailNext(1, http.StatusUnprocessableEntity, "/actions/runs/9071/deployment_protection_rule")
	g.resolve("/resolve D-001 approve")
	g.until("the request is dropped", func() bool {
		left, _ := g.srv.cfg.Deployments.List(context.Background())
		return len(left) == 0
	})
	if strings.Contains(g.logs.String(), `"level":"ERROR"`) {
		t.Fatalf("a refused answer of a run that no longer waits is an error:\n%s", tail(g.logs.String(), 10))
	}
}

// TestDeploymentRequiresPerEnvironment: the default branch's
// deployments: says what each environment needs. production requires only
// the uat phase's decisions, so the requirements phase's pending D-001
// does not hold it (in any case of its name); staging ({}) and an
// environment the file does not name need every blocking decision.
func TestDeploymentRequiresPerEnvironment(t *testing.T) {
	t.Parallel()
	g := newDeployGate(t)
	g.fake.SetFile(owner, repo, "", ".github/phasegate.yml", []byte("deployments:\n  production:\n    require: [uat]\n  staging: {}\n"))
	for i, tt := range []struct {
		env, want string
	}{
		{"production", "approved"},
		{"Production", "approved"},
		{"staging", ""},
		{"qa", ""},
	} {
		run := int64(9151 + i)
		g.request(run, tt.env, appHead2)
		if got := g.answers(run); len(got) != 1 || got[0] != tt.want {
			t.Errorf("a deployment to %s: %q, want %q", tt.env, got, tt.want)
		}
	}
}

// TestDeploymentSurvivesARestart: the request arrives, serve restarts
// before the resolution, and the new process answers it: from Redis, and,
// in memory, from the reconcile pass that finds it again through the API.
func TestDeploymentSurvivesARestart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	st, err := redisx.Open(ctx, redistest.SharedDB(t).URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	g := newDeployGate(t, func(c *Config) {
		c.Deployments = sharedDeployments{st.Table("phasegate:deployments", MaxWaitingDeployments)}
	})
	g.request(9201, "production", appHead2)
	g.restart(nil)
	if left, err := g.srv.cfg.Deployments.List(ctx); err != nil || len(left) != 1 {
		t.Fatalf("after the restart, recorded: %+v %v", left, err)
	}
	g.resolve("/resolve D-001 approve")
	if got := final(t, g.answered(9201)); got.State != "approved" {
		t.Fatalf("answer after a restart: %+v", got)
	}
}

// TestDeploymentRefoundAfterARestart: without Redis, the restarted
// process's first reconcile pass finds the request still waiting through
// the API (the waiting runs and their pending environments) and answers
// it when the decision is resolved; a run waiting on an environment that
// refuses phasegate's answers is dropped at the first refusal.
func TestDeploymentRefoundAfterARestart(t *testing.T) {
	t.Parallel()
	g := newDeployGate(t)
	g.request(9251, "production", appHead2)
	g.restart(NewMemDeployments())
	g.srv.reconcileOnce(context.Background())
	left, err := g.srv.cfg.Deployments.List(context.Background())
	if err != nil || len(left) != 1 || left[0].RunID != 9251 || left[0].SHA != appHead2 || !left[0].Refound {
		t.Fatalf("after the restart's reconcile pass, recorded: %+v %v", left, err)
	}
	g.resolve("/resolve D-001 approve")
	if got := final(t, g.answered(9251)); got.State != "approved" {
		t.Fatalf("answer after a restart: %+v", got)
	}
	// Once answered, GitHub no longer lists the run as waiting: a later
	// pass of another process finds nothing.
	g.restart(NewMemDeployments())
	g.srv.reconcileOnce(context.Background())
	if left, _ := g.srv.cfg.Deployments.List(context.Background()); len(left) != 0 {
		t.Fatalf("an answered run was found again: %+v", left)
	}
	final(t, g.fake.DeploymentReviews(owner, repo, 9251))

	// A run found waiting on an environment that refuses phasegate's
	// answers (it does not list the App: GitHub never sent serve the
	// request) is dropped at the refusal.
	if _, err := g.fake.DeploymentRequestPayload(ghfake.DeploymentRequest{Owner: owner, Repo: repo, RunID: 9252, Environment: "qa",
		SHA: appHead2, Ref: "feature", InstallationID: installation}); err != nil {
		t.Fatal(err)
	}
	g.restart(NewMemDeployments())
	g.fake.FailNext(1, http.StatusUnprocessableEntity, "/actions/runs/9252/deployment_protection_rule")
	g.srv.reconcileOnce(context.Background())
	if left, _ := g.srv.cfg.Deployments.List(context.Background()); len(left) != 0 {
		t.Fatalf("a request whose environment refused the answer is still recorded: %+v", left)
	}
	if strings.Contains(g.logs.String(), `"level":"ERROR"`) {
		t.Fatalf("a refused answer to a found request is an error:\n%s", tail(g.logs.String(), 10))
	}
	if got := g.fake.DeploymentReviews(owner, repo, 9252); len(got) != 0 {
		t.Fatalf("the refused answer was taken: %+v", got)
	}
}

// restart stops the server and serves the same configuration from a new
// process: fresh memory (its seen deliveries, locks, and, unless store,
// its deployments), the same Redis.
func (g deployGate) restart(store DeploymentStore) {
	g.t.Helper()
	if err := g.stop(); err != nil {
		g.t.Fatal(err)
	}
	cfg := g.srv.cfg
	cfg.Registry = prometheus.NewRegistry()
	cfg.Seen, cfg.Locker = nil, nil
	if store != nil {
		cfg.Deployments = store
	}
	s, err := New(cfg)
	if err != nil {
		g.t.Fatal(err)
	}
	s.onJobDone = g.srv.onJobDone
	g.harness.srv = s
	g.start()
	g.waitReady()
	g.fake.SetHookTarget(s.Handler(), testSecret)
}

// TestDeploymentComment: what phasegate says on a run, as a golden: the
// answer, its reason, and while waiting each decision and where to
// answer it, at most maxListedWaits of them; text from the repository (an
// environment's name) reaches it as plain text, without controls or
// bidi overrides.
func TestDeploymentComment(t *testing.T) {
	dep := decide.Deployment{Owner: owner, Repo: repo, RunID: 7, Environment: "production", SHA: appHead2}
	var many []ledger.Waiting
	for i := range maxListedWaits + 3 {
		many = append(many, ledger.Waiting{Decision: fmt.Sprintf("D-%03d", i+1), Issue: 12})
	}
	hostile := dep
	hostile.Environment = "prod\u202e\n- D-999 on #1: https://evil.example\x1b[2J"
	tests := []struct {
		name   string
		dep    decide.Deployment
		a      ledger.DeployAnswer
		public string
	}{
		{"waiting", dep, ledger.DeployAnswer{Action: ledger.DeployWait, Reason: "waiting for 2 blocking decision(s)", Waiting: []ledger.Waiting{
			{Decision: "D-001", Issue: 12, Link: "https://github.com/acme/shop/issues/12#issuecomment-5"},
			{Decision: "D-002", Issue: 12, Link: "https://github.com/acme/shop/issues/12#issuecomment-5", Stale: true}}}, ""},
		{"waiting with pages", dep, ledger.DeployAnswer{Action: ledger.DeployWait, Reason: "waiting for 1 blocking decision(s)",
			Waiting: []ledger.Waiting{{Decision: "D-001", Issue: 12, Link: "https://github.com/acme/shop/issues/12#issuecomment-5"}}}, "https://phasegate.example.com/"},
		{"waiting for many", dep, ledger.DeployAnswer{Action: ledger.DeployWait, Reason: "waiting for 23 blocking decision(s)", Waiting: many}, ""},
		{"contracts hold", dep, ledger.DeployAnswer{Action: ledger.DeployWait, Reason: "the contracts of commit a20000000000 are HOLD"}, ""},
		{"approved", dep, ledger.DeployAnswer{Action: ledger.DeployApprove, Reason: "contracts SHIP and every required blocking decision resolved for commit a20000000000"}, ""},
		{"rejected", dep, ledger.DeployAnswer{Action: ledger.DeployReject, Reason: "resolved negatively: D-001 → reject (#12)"}, ""},
		{"hostile environment", hostile, ledger.DeployAnswer{Action: ledger.DeployWait, Reason: "waiting for 1 blocking decision(s)",
			Waiting: []ledger.Waiting{{Decision: "D-001", Issue: 12}}}, ""},
	}
	var b strings.Builder
	for _, tt := range tests {
		fmt.Fprintf(&b, "== %s\n%s\n\n", tt.name, deploymentComment(tt.dep, tt.a, tt.public))
	}
	testutil.Golden(t, "testdata/deployment-comments.golden", []byte(b.String()))
	if got := deploymentComment(hostile, tests[len(tests)-1].a, ""); strings.ContainsAny(got, "\u202e\x1b") || strings.Count(got, "\n- ") != 1 {
		t.Fatalf("the environment's name reached the comment as more than plain text:\n%q", got)
	}
}
