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
	"github.com/phasegate/phasegate/internal/redisx"
	"github.com/phasegate/phasegate/internal/testutil/outcometest"
	"github.com/phasegate/phasegate/internal/testutil/redistest"
)

// deployGate is a served App whose pull request's head (appHead2) was
// checked (SHIP) and carries a Phase Outcome with the blocking decision
// D-001 pending on issue, and the fake sends its deliveries to the server.
type deployGate struct {
	*harness
	issue int
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
	g := deployGate{harness: h, issue: issue}
	g.deliver("pull_request", prOpenEvent("opened", pr, appHead2, appBaseSHA, "feature", "agent-bot"))
	if c := newest(t, f, appHead2, decide.ContextContracts); c.Conclusion != "success" {
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
