package ghclient

import (
	"fmt"
	"strings"
	"testing"

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
