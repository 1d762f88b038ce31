package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/testutil/outcometest"
)

// Red-team tests of issue 34's trust rules (docs/security.md rows 41-43):
// each fails when its defence is removed.

// deploymentEvent is a deployment_protection_rule payload as GitHub sends
// it, with the callback URL given.
func deploymentEvent(run int64, env, sha, callback string) []byte {
	return mustJSON(map[string]any{
		"action": "requested", "environment": env, "event": "push", "sha": sha, "ref": "main",
		"deployment_callback_url": callback, "deployment": map[string]any{"id": run * 10},
		"pull_requests": []any{}, "installation": map[string]any{"id": installation},
		"repository": repoJSON(owner, repo), "sender": userJSON("agent-bot"),
	})
}

// TestRedTeamDeploymentUnsigned: a deployment request that GitHub did not
// sign (or signed with another secret) is refused before anything is
// read, and nothing is answered.
func TestRedTeamDeploymentUnsigned(t *testing.T) {
	t.Parallel()
	g := newDeployGate(t)
	body := deploymentEvent(9301, "production", appHead2, g.fake.URL()+"/repos/acme/shop/actions/runs/9301/deployment_protection_rule")
	for name, d := range map[string]delivery{
		"wrong secret":   {event: "deployment_protection_rule", body: body, secret: []byte("not the secret")},
		"no signature":   {event: "deployment_protection_rule", body: body, headers: map[string]string{"X-Hub-Signature-256": ""}},
		"signed another": {event: "deployment_protection_rule", body: body, headers: map[string]string{"X-Hub-Signature-256": ghfake.SignWebhook(testSecret, []byte("{}"))}},
	} {
		if code, _ := g.send(d); code != http.StatusUnauthorized {
			t.Errorf("%s: answer %d, want 401", name, code)
		}
	}
	g.srv.reconcileOnce(context.Background())
	if got := g.fake.DeploymentReviews(owner, repo, 9301); len(got) != 0 {
		t.Fatalf("an unsigned request was answered: %+v", got)
	}
}

// TestRedTeamDeploymentReplayed: GitHub's signed request re-sent under a
// fresh delivery ID is a replay: dropped, not answered again.
func TestRedTeamDeploymentReplayed(t *testing.T) {
	t.Parallel()
	g := newDeployGate(t)
	body := deploymentEvent(9351, "production", appHead2, g.fake.URL()+"/repos/acme/shop/actions/runs/9351/deployment_protection_rule")
	g.deliver("deployment_protection_rule", body)
	if code, answer := g.send(delivery{event: "deployment_protection_rule", body: body}); code != http.StatusOK || answer != "duplicate" {
		t.Fatalf("the replayed request: %d %q, want 200 duplicate", code, answer)
	}
	if got := g.answers(9351); len(got) != 1 {
		t.Fatalf("reviews %v, want the one comment of the first delivery", got)
	}
}

// TestRedTeamDeploymentCallbackHost: the answer goes to the configured
// API with the run id, never to the host the payload's callback URL
// names; a callback URL naming another repository's run is refused.
func TestRedTeamDeploymentCallbackHost(t *testing.T) {
	t.Parallel()
	var stolen atomic.Int32
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer evil.Close()
	g := newDeployGate(t)
	g.resolve("/resolve D-001 approve")
	code, err := g.fake.RequestDeployment(ghfake.DeploymentRequest{Owner: owner, Repo: repo, RunID: 9401, Environment: "production", SHA: appHead2,
		Ref: "feature", InstallationID: installation, CallbackURL: evil.URL + "/repos/acme/shop/actions/runs/9401/deployment_protection_rule"})
	if err != nil || code != http.StatusAccepted {
		t.Fatalf("request: %d %v", code, err)
	}
	if got := final(t, g.answered(9401)); got.State != "approved" {
		t.Fatalf("answer %+v", got)
	}
	if n := stolen.Load(); n != 0 {
		t.Fatalf("%d requests went to the callback URL's host", n)
	}
	// Another repository's run in the callback URL: not a request of
	// this repository at all.
	other := deploymentEvent(9402, "production", appHead2, g.fake.URL()+"/repos/acme/other/actions/runs/9402/deployment_protection_rule")
	if code, answer := g.send(delivery{event: "deployment_protection_rule", body: other}); code != http.StatusBadRequest {
		t.Fatalf("a callback URL of another repository: %d %q, want 400", code, answer)
	}
}

// TestRedTeamDeploymentReadsFresh: D-001 was approved, then phasegate's
// resolution comment is deleted without any delivery telling phasegate
// (the webhook lost). A deployment requested afterwards is answered from
// the thread as it is now, not from what was folded before: the thread
// is frozen, and the deployment rejected.
func TestRedTeamDeploymentReadsFresh(t *testing.T) {
	t.Parallel()
	g := newDeployGate(t)
	g.request(9501, "production", appHead2)
	g.resolve("/resolve D-001 approve")
	if got := final(t, g.answered(9501)); got.State != "approved" {
		t.Fatalf("answer %+v", got)
	}
	for _, c := range g.fake.Comments(owner, repo, g.issue) {
		if c.User == appBot && strings.Contains(c.Body, "phasegate:resolution v1") {
			g.fake.DeleteComment(c.ID)
		}
	}
	g.request(9502, "production", appHead2)
	got := final(t, g.fake.DeploymentReviews(owner, repo, 9502))
	if got.State != "rejected" || !strings.Contains(got.Comment, "tampering on #") {
		t.Fatalf("after the resolution was deleted: %+v, want rejected for tampering (the thread is frozen)", got)
	}
}

// TestRedTeamDeploymentPerCommit: a commit's approval is never another
// commit's: after D-001 is approved for appHead2, a deployment of a commit
// that carries another pending decision waits, to the same environment
// and from the same branch.
func TestRedTeamDeploymentPerCommit(t *testing.T) {
	t.Parallel()
	g := newDeployGate(t)
	g.resolve("/resolve D-001 approve")
	g.request(9601, "production", appHead2)
	if got := g.answers(9601); len(got) != 1 || got[0] != "approved" {
		t.Fatalf("the decided commit: %v", got)
	}
	// appHead1 (not checked yet) carries feature 2's outcome, with its
	// own D-001 pending.
	f := g.fake
	issue2 := f.AddIssue(owner, repo, "Feature 2", "", "alice")
	const src = "outcomes/feature-002-requirements.outcome.yaml"
	f.SetTreeFiles(owner, repo, appHead1, map[string]string{"README.md": "# shop\n", src: outcometest.SeedFor(issue2)})
	f.AddCommit(owner, repo, ghfake.Commit{SHA: appHead1, Author: "agent-bot", Committer: "agent-bot", Files: []ghfake.File{{Filename: src, Status: "added"}}})
	f.SetComparison(owner, repo, "main", appHead1, ghfake.Comparison{Status: "behind"}) // on the default branch: its own change
	postOutcomeOn(t, f, issue2, src, appHead1)
	g.request(9602, "production", appHead1)
	if got := g.answers(9602); len(got) != 1 || got[0] != "" {
		t.Fatalf("another commit, its decision pending: %v, want a comment that answers nothing", got)
	}
}

// TestRedTeamDeploymentNeverUnchecked: a commit the App never checked is
// checked before it is answered (a phasegate/contracts of another App, a
// workflow's, does not count): one with a broken artifact holds (HOLD)
// and is not approved; one that passes (ADVISORY) is approved only once
// its phasegate/contracts is there.
func TestRedTeamDeploymentNeverUnchecked(t *testing.T) {
	t.Parallel()
	g := newDeployGate(t)
	f := g.fake
	const broken = "b100000000000000000000000000000000000001"
	const clean = "c100000000000000000000000000000000000001"
	f.SetTreeFiles(owner, repo, broken, map[string]string{"README.md": "# shop\n", "outcomes/feature-009-broken.outcome.yaml": brokenYAML})
	f.AddCommit(owner, repo, ghfake.Commit{SHA: broken, Files: []ghfake.File{{Filename: "README.md", Status: "modified"}}})
	f.SetTreeFiles(owner, repo, clean, map[string]string{"README.md": "# shop, clean\n"})
	f.AddCommit(owner, repo, ghfake.Commit{SHA: clean, Files: []ghfake.File{{Filename: "README.md", Status: "modified"}}})
	for _, sha := range []string{broken, clean} { // on the default branch: their own changes
		f.SetComparison(owner, repo, "main", sha, ghfake.Comparison{Status: "behind"})
	}

	// A workflow of the agent's forges phasegate/contracts on it first.
	f.AddAppToken("ghs_workflow", ghfake.GitHubActionsAppID, "github-actions")
	wf, err := ghclient.New(ghclient.Options{Token: "ghs_workflow", BaseURL: f.URL()})
	if err != nil {
		t.Fatal(err)
	}
	forged := ghclient.CheckRun{Name: decide.ContextContracts, HeadSHA: broken, Status: "completed", Conclusion: "success",
		ExternalID: decide.Record{State: "success"}.ExternalID(), Title: "SHIP: forged", Summary: "forged"}
	if _, err := wf.CreateCheckRun(context.Background(), owner, repo, forged); err != nil {
		t.Fatal(err)
	}
	g.request(9701, "production", broken)
	if c := newest(t, f, broken, decide.ContextContracts); c.Conclusion != "failure" {
		t.Fatalf("contracts of the unchecked broken commit: %s", c.Conclusion)
	}
	if got := g.answers(9701); len(got) != 1 || got[0] != "" {
		t.Fatalf("a commit that holds: %v, want a comment that answers nothing", got)
	}
	if c := g.fake.DeploymentReviews(owner, repo, 9701)[0].Comment; !strings.Contains(c, "are HOLD") {
		t.Fatalf("the waiting comment does not say the contracts hold:\n%s", c)
	}

	g.request(9702, "production", clean)
	if c := newest(t, f, clean, decide.ContextContracts); c.Conclusion != "neutral" { // ADVISORY: no artifact at all
		t.Fatalf("contracts of the unchecked clean commit: %s", c.Conclusion)
	}
	if got := g.answers(9702); len(got) != 1 || got[0] != "approved" {
		t.Fatalf("a clean commit, checked now: %v, want approved", got)
	}
}

// TestRedTeamDeploymentAnsweredOnce: many wakes at once (replicas, a
// reconcile pass and a comment's fold) answer a request exactly once.
func TestRedTeamDeploymentAnsweredOnce(t *testing.T) {
	t.Parallel()
	g := newDeployGate(t)
	g.resolve("/resolve D-001 approve") // nothing waits yet: no wake
	dep := decide.Deployment{Installation: installation, Owner: owner, Repo: repo, RunID: 9802, Environment: "production", SHA: appHead2}
	if err := g.srv.cfg.Deployments.Put(context.Background(), dep); err != nil {
		t.Fatal(err)
	}
	gh, err := g.srv.client(installation)
	if err != nil {
		t.Fatal(err)
	}
	// Each as its own replica's would, under no common lock: only the
	// store's Take keeps them to one answer.
	g.srv.cfg.Locker = noLocker{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_ = g.srv.answerDeployment(context.Background(), gh, g.srv.decider(g.srv.log, nil), dep.Key(), g.srv.log)
		})
	}
	wg.Wait()
	if got := g.answers(9802); len(got) != 1 || got[0] != "approved" {
		t.Fatalf("answers %v, want exactly one approval", got)
	}
}

// noLocker excludes nothing.
type noLocker struct{}

func (noLocker) Lock(context.Context, string) (func(), error) { return func() {}, nil }

// TestRedTeamDeploymentStatusesMode: with --publish statuses, only the
// App's own phasegate/contracts status says a commit was checked: a
// workflow's forged success status on a commit the App never checked does
// not approve it, and the App's own check (HOLD) keeps it waiting.
func TestRedTeamDeploymentStatusesMode(t *testing.T) {
	t.Parallel()
	g := newDeployGate(t, func(c *Config) { c.Publish = decide.PublishStatuses })
	f := g.fake
	const broken = "b200000000000000000000000000000000000002"
	f.SetTreeFiles(owner, repo, broken, map[string]string{"README.md": "# shop\n", "outcomes/feature-009-broken.outcome.yaml": brokenYAML})
	f.AddCommit(owner, repo, ghfake.Commit{SHA: broken, Files: []ghfake.File{{Filename: "README.md", Status: "modified"}}})
	f.SetComparison(owner, repo, "main", broken, ghfake.Comparison{Status: "behind"})
	f.AddAppToken("ghs_workflow", ghfake.GitHubActionsAppID, "github-actions")
	wf, err := ghclient.New(ghclient.Options{Token: "ghs_workflow", BaseURL: f.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if err := wf.CreateStatus(context.Background(), owner, repo, broken, ghclient.Status{Context: decide.ContextContracts, State: "success", Description: "SHIP: forged"}); err != nil {
		t.Fatal(err)
	}
	g.request(9901, "production", broken)
	if got := g.answers(9901); len(got) != 1 || got[0] != "" {
		t.Fatalf("a forged status on an unchecked broken commit: %v, want a comment that answers nothing", got)
	}
	if st, _ := f.LatestStatus(owner, repo, broken, decide.ContextContracts); st.State != "failure" || st.Creator != appBot {
		t.Fatalf("the App did not check the commit: latest %+v", st)
	}
	// The decided path works the same with statuses.
	g.request(9902, "production", appHead2)
	g.resolve("/resolve D-001 approve")
	if got := final(t, g.answered(9902)); got.State != "approved" {
		t.Fatalf("answer %+v", got)
	}
}
