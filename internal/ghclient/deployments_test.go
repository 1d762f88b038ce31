package ghclient

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/ghfake"
)

func TestReviewDeployment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                string
		runID               int64
		env, state, comment string
		perms               map[string]string
		want                *ghfake.DeploymentReview // nil: nothing reaches GitHub
		wantErr             string
	}{
		{name: "approve", runID: 7, env: "production", state: DeploymentApproved, comment: "gate holds",
			want: &ghfake.DeploymentReview{RunID: 7, Environment: "production", State: "approved", Comment: "gate holds"}},
		{name: "reject", runID: 7, env: "production", state: DeploymentRejected,
			want: &ghfake.DeploymentReview{RunID: 7, Environment: "production", State: "rejected"}},
		{name: "comment only", runID: 7, env: "prod eus/1", comment: "waiting on D-001",
			want: &ghfake.DeploymentReview{RunID: 7, Environment: "prod eus/1", Comment: "waiting on D-001"}},
		{name: "no deployments write", runID: 7, env: "production", state: DeploymentApproved, perms: map[string]string{"deployments": "read"}, wantErr: "403"},
		{name: "unknown state", runID: 7, env: "production", state: "pending", wantErr: "unknown state"},
		{name: "nothing to say", runID: 7, env: "production", wantErr: "neither a state nor a comment"},
		{name: "no environment", runID: 7, state: DeploymentApproved, wantErr: "no run id or environment"},
		{name: "no run", env: "production", state: DeploymentApproved, wantErr: "no run id or environment"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, Options{})
			e.fake.SetTokenPermissions(botLogin, tc.perms)
			err := e.c.ReviewDeployment(ctxT(t), owner, repo, tc.runID, tc.env, tc.state, tc.comment)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			got := e.fake.DeploymentReviews(owner, repo, tc.runID)
			if tc.want == nil {
				if len(got) != 0 {
					t.Fatalf("GitHub got %+v, want nothing", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("GitHub got %d reviews, want 1", len(got))
			}
			g := got[0]
			g.At, tc.want.Sender = tc.want.At, botLogin
			if g != *tc.want {
				t.Errorf("GitHub got %+v, want %+v", g, *tc.want)
			}
		})
	}
}

// TestReviewDeploymentAtTheAPIBase: the answer goes to the configured API
// base (here GitHub Enterprise Server's /api/v3), wherever the event said
// to call back.
func TestReviewDeploymentAtTheAPIBase(t *testing.T) {
	t.Parallel()
	f := ghfake.New()
	t.Cleanup(f.Close)
	e := newEnvOn(t, f, Options{BaseURL: f.EnterpriseURL()})
	if err := e.c.ReviewDeployment(ctxT(t), owner, repo, 9, "production", DeploymentApproved, ""); err != nil {
		t.Fatal(err)
	}
	calls := f.Calls()
	if got := f.DeploymentReviews(owner, repo, 9); len(got) != 1 || len(calls) != 1 || !calls[0].Enterprise || calls[0].Path != "/repos/"+owner+"/"+repo+"/actions/runs/9/deployment_protection_rule" {
		t.Fatalf("reviews %+v after calls %+v, want one at /api/v3", got, calls)
	}
}

func TestDeploymentRunID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		url     string
		want    int64
		wantErr bool
	}{
		{name: "github.com", url: "https://api.github.com/repos/acme/widgets/actions/runs/42/deployment_protection_rule", want: 42},
		{name: "enterprise server", url: "https://ghe.example/api/v3/repos/acme/widgets/actions/runs/7/deployment_protection_rule", want: 7},
		{name: "owner and repo ignore case", url: "https://api.github.com/repos/ACME/Widgets/actions/runs/9/deployment_protection_rule", want: 9},
		{name: "another host is only ignored", url: "https://attacker.example/repos/acme/widgets/actions/runs/5/deployment_protection_rule", want: 5},
		{name: "another repository's run", url: "https://api.github.com/repos/acme/other/actions/runs/42/deployment_protection_rule", wantErr: true},
		{name: "another owner's run", url: "https://api.github.com/repos/evil/widgets/actions/runs/42/deployment_protection_rule", wantErr: true},
		{name: "another endpoint", url: "https://api.github.com/repos/acme/widgets/actions/runs/42/pending_deployments", wantErr: true},
		{name: "signed run id", url: "https://api.github.com/repos/acme/widgets/actions/runs/+42/deployment_protection_rule", wantErr: true},
		{name: "leading zero", url: "https://api.github.com/repos/acme/widgets/actions/runs/042/deployment_protection_rule", wantErr: true},
		{name: "zero", url: "https://api.github.com/repos/acme/widgets/actions/runs/0/deployment_protection_rule", wantErr: true},
		{name: "over int64", url: "https://api.github.com/repos/acme/widgets/actions/runs/9223372036854775808/deployment_protection_rule", wantErr: true},
		{name: "trailing slash", url: "https://api.github.com/repos/acme/widgets/actions/runs/42/deployment_protection_rule/", wantErr: true},
		{name: "escaped slash in the repository", url: "https://api.github.com/repos/acme/wid%2Fgets/actions/runs/42/deployment_protection_rule", wantErr: true},
		{name: "empty", url: "", wantErr: true},
		{name: "not a url", url: "://\x00", wantErr: true},
		{name: "too long", url: "https://api.github.com/repos/acme/widgets/actions/runs/42/deployment_protection_rule?" + strings.Repeat("a", maxCallbackURL), wantErr: true},
	}
	for _, tc := range tests {
		got, err := DeploymentRunID(tc.url, owner, repo)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("%s: DeploymentRunID = %d, %v; want %d (error %v)", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
}

// FuzzDeploymentRunID: any callback URL is refused or names a positive run
// of the given repository, whose canonical URL names the same run.
func FuzzDeploymentRunID(f *testing.F) {
	f.Add("https://api.github.com/repos/acme/widgets/actions/runs/42/deployment_protection_rule")
	f.Add("https://ghe.example/api/v3/repos/acme/widgets/actions/runs/7/deployment_protection_rule")
	f.Add("https://api.github.com/repos/acme/widgets/actions/runs/-1/deployment_protection_rule")
	f.Add("/repos/acme/widgets/actions/runs/1/deployment_protection_rule?x=/repos/a/b/actions/runs/2/deployment_protection_rule")
	f.Fuzz(func(t *testing.T, u string) {
		id, err := DeploymentRunID(u, owner, repo)
		if err != nil {
			if id != 0 {
				t.Fatalf("error %v with run %d", err, id)
			}
			return
		}
		if id <= 0 {
			t.Fatalf("run %d from %q", id, u)
		}
		canonical := fmt.Sprintf("https://api.github.com/repos/%s/%s/actions/runs/%d/deployment_protection_rule", owner, repo, id)
		if again, err := DeploymentRunID(canonical, owner, repo); err != nil || again != id {
			t.Fatalf("%q: run %d, but its canonical URL gives %d, %v", u, id, again, err)
		}
	})
}

// requestRuns has the fake request deployments of runs 1 to n to
// production, run i i hours after epoch, then answers the runs of approve
// and reject.
func requestRuns(t *testing.T, e *env, n int, approve, reject []int64) {
	t.Helper()
	for id := int64(1); id <= int64(n); id++ {
		e.clock.Advance(epoch.Add(time.Duration(id) * time.Hour).Sub(e.clock.Now()))
		if _, err := e.fake.DeploymentRequestPayload(ghfake.DeploymentRequest{Owner: owner, Repo: repo, RunID: id,
			Environment: "production", SHA: strings.Repeat("a", 40), Ref: "refs/heads/main"}); err != nil {
			t.Fatal(err)
		}
	}
	for state, ids := range map[string][]int64{DeploymentApproved: approve, DeploymentRejected: reject} {
		for _, id := range ids {
			if err := e.c.ReviewDeployment(ctxT(t), owner, repo, id, "production", state, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestWaitingRuns: the waiting runs are read across pages (smallPage a
// page), newest first, since the given time, without the answered ones,
// and never past the bound without saying so.
func TestWaitingRuns(t *testing.T) {
	t.Parallel()
	ids := func(hi, lo int64) []int64 {
		out := []int64{}
		for id := hi; id >= lo; id-- {
			out = append(out, id)
		}
		return out
	}
	bound := maxWaitingRunPages * smallPage
	tests := []struct {
		name            string
		runs            int
		approve, reject []int64
		since           time.Time
		perms           map[string]string
		want            []int64
		wantErr         string
		wantTruncated   bool
	}{
		{name: "none", want: []int64{}},
		{name: "across pages", runs: 12, want: ids(12, 1)},
		{name: "since", runs: 12, since: epoch.Add(6 * time.Hour), want: ids(12, 6)},
		{name: "since between runs", runs: 12, since: epoch.Add(6*time.Hour + time.Second), want: ids(12, 7)},
		{name: "answered runs are gone", runs: 6, approve: []int64{2, 6}, reject: []int64{5}, want: []int64{4, 3, 1}},
		{name: "actions read granted", runs: 2, perms: map[string]string{"actions": "read", "deployments": "write"}, want: ids(2, 1)},
		{name: "no actions read", runs: 2, perms: map[string]string{"deployments": "write"}, wantErr: "403"},
		{name: "one under the bound", runs: bound - 1, want: ids(int64(bound-1), 1)},
		{name: "at the bound", runs: bound, want: ids(int64(bound), 1), wantTruncated: true},
		{name: "past the bound", runs: bound + 5, want: ids(int64(bound+5), 6), wantTruncated: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, Options{perPage: smallPage})
			requestRuns(t, e, tc.runs, tc.approve, tc.reject)
			e.fake.SetTokenPermissions(botLogin, tc.perms)
			got, err := e.c.WaitingRuns(ctxT(t), owner, repo, tc.since)
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), owner+"/"+repo) || got != nil {
					t.Fatalf("WaitingRuns = %v, %v; want no runs and an error naming %s/%s with %q", got, err, owner, repo, tc.wantErr)
				}
				return
			case tc.wantTruncated:
				if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), fmt.Sprintf("%d runs", bound)) {
					t.Fatalf("err %v, want ErrTruncated naming the bound, %d runs", err, bound)
				}
			case err != nil:
				t.Fatal(err)
			}
			gotIDs := []int64{}
			for _, r := range got {
				gotIDs = append(gotIDs, r.ID)
			}
			if !slices.Equal(gotIDs, tc.want) {
				t.Fatalf("runs %v, want %v", gotIDs, tc.want)
			}
			if len(got) > 0 {
				r := got[len(got)-1]
				if want := (WaitingRun{ID: r.ID, HeadSHA: strings.Repeat("a", 40), HeadBranch: "main", Event: "push", CreatedAt: epoch.Add(time.Duration(r.ID) * time.Hour)}); !r.CreatedAt.Equal(want.CreatedAt) || r.HeadSHA != want.HeadSHA || r.HeadBranch != want.HeadBranch || r.Event != want.Event {
					t.Errorf("run %+v, want %+v", r, want)
				}
			}
		})
	}
}

// TestWaitingRunsSendsGitHubsFilter: the listing asks GitHub for
// status=waiting and, unless since is zero, created=>=SINCE in UTC to
// the second (TestListingsAskForGitHubsMaximum: 100 runs a page).
func TestWaitingRunsSendsGitHubsFilter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		since       time.Time
		wantCreated []string
	}{
		{name: "since, in UTC", since: time.Date(2024, 4, 1, 14, 30, 5, 999, time.FixedZone("CEST", 2*3600)), wantCreated: []string{">=2024-04-01T12:30:05Z"}},
		{name: "no since"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, Options{})
			if _, err := e.c.WaitingRuns(ctxT(t), owner, repo, tc.since); err != nil {
				t.Fatal(err)
			}
			calls := e.fake.Calls()
			if len(calls) != 1 {
				t.Fatalf("calls %+v, want one", calls)
			}
			q, err := url.ParseQuery(calls[0].Query)
			if err != nil || q.Get("status") != "waiting" || !slices.Equal(q["created"], tc.wantCreated) {
				t.Fatalf("query %q, want status=waiting, created=%q", calls[0].Query, tc.wantCreated)
			}
		})
	}
}

func TestPendingDeployments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		run     int64
		answer  []string // environments approved before the read
		comment bool     // a comment without state on production before the read
		perms   map[string]string
		want    []string
		wantErr string
	}{
		{name: "two waiting", run: 1, want: []string{"staging", "production"}},
		{name: "one answered", run: 1, answer: []string{"staging"}, want: []string{"production"}},
		{name: "both answered", run: 1, answer: []string{"staging", "production"}, want: []string{}},
		{name: "a comment answers nothing", run: 1, comment: true, want: []string{"staging", "production"}},
		{name: "actions read granted", run: 1, perms: map[string]string{"actions": "read", "deployments": "write"}, want: []string{"staging", "production"}},
		{name: "no actions read", run: 1, perms: map[string]string{"deployments": "write"}, wantErr: "403"},
		{name: "unknown run", run: 99, wantErr: "404"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, Options{})
			for _, env := range []string{"staging", "production"} {
				if _, err := e.fake.DeploymentRequestPayload(ghfake.DeploymentRequest{Owner: owner, Repo: repo, RunID: 1,
					Environment: env, SHA: strings.Repeat("a", 40), Ref: "refs/heads/main"}); err != nil {
					t.Fatal(err)
				}
			}
			for _, env := range tc.answer {
				if err := e.c.ReviewDeployment(ctxT(t), owner, repo, 1, env, DeploymentApproved, ""); err != nil {
					t.Fatal(err)
				}
			}
			if tc.comment {
				if err := e.c.ReviewDeployment(ctxT(t), owner, repo, 1, "production", "", "waiting on D-001"); err != nil {
					t.Fatal(err)
				}
			}
			e.fake.SetTokenPermissions(botLogin, tc.perms)
			got, err := e.c.PendingDeployments(ctxT(t), owner, repo, tc.run)
			if tc.wantErr != "" {
				if where := fmt.Sprintf("run %d of %s/%s", tc.run, owner, repo); err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), where) {
					t.Fatalf("err %v, want %q naming %s", err, tc.wantErr, where)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("PendingDeployments = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
