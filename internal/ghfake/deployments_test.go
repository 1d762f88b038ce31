package ghfake

import (
	"testing"
)

func TestDeploymentReviewEndpoint(t *testing.T) {
	t.Parallel()
	const path = "/repos/acme/widgets/actions/runs/42/deployment_protection_rule"
	tests := []struct {
		name       string
		path       string
		perms      map[string]string
		body       string
		wantStatus int
		want       *DeploymentReview // nil: nothing recorded
	}{
		{name: "approved", body: `{"environment_name":"production","state":"approved","comment":"ok"}`, wantStatus: 204,
			want: &DeploymentReview{RunID: 42, Environment: "production", State: "approved", Comment: "ok", Sender: "bot"}},
		{name: "rejected without comment", body: `{"environment_name":"production","state":"rejected"}`, wantStatus: 204,
			want: &DeploymentReview{RunID: 42, Environment: "production", State: "rejected", Sender: "bot"}},
		{name: "comment only leaves it waiting", body: `{"environment_name":"staging","comment":"waiting on D-001"}`, wantStatus: 204,
			want: &DeploymentReview{RunID: 42, Environment: "staging", Comment: "waiting on D-001", Sender: "bot"}},
		{name: "deployments write granted", perms: map[string]string{"deployments": "write", "actions": "read"}, body: `{"environment_name":"production","state":"approved"}`, wantStatus: 204,
			want: &DeploymentReview{RunID: 42, Environment: "production", State: "approved", Sender: "bot"}},
		{name: "deployments read is refused", perms: map[string]string{"deployments": "read"}, body: `{"environment_name":"production","state":"approved"}`, wantStatus: 403},
		{name: "no environment", body: `{"state":"approved"}`, wantStatus: 422},
		{name: "empty environment", body: `{"environment_name":"","state":"approved"}`, wantStatus: 422},
		{name: "neither state nor comment", body: `{"environment_name":"production"}`, wantStatus: 422},
		{name: "unknown state", body: `{"environment_name":"production","state":"pending"}`, wantStatus: 422},
		{name: "not json", body: `{`, wantStatus: 400},
		{name: "unknown repository", path: "/repos/acme/nope/actions/runs/42/deployment_protection_rule", body: `{"environment_name":"production","state":"approved"}`, wantStatus: 404},
		{name: "run id not a number", path: "/repos/acme/widgets/actions/runs/x/deployment_protection_rule", body: `{"environment_name":"production","state":"approved"}`, wantStatus: 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newTestServer(t)
			s.SetTokenPermissions("bot", tc.perms)
			p := tc.path
			if p == "" {
				p = path
			}
			a := do(t, s, "POST", p, tok, tc.body)
			if a.status != tc.wantStatus {
				t.Fatalf("status %d, want %d (%s)", a.status, tc.wantStatus, a.body)
			}
			if a.status == 204 && len(a.body) != 0 {
				t.Errorf("204 with a body: %s", a.body)
			}
			got := s.DeploymentReviews("acme", "widgets", 42)
			if tc.want == nil {
				if len(got) != 0 {
					t.Fatalf("recorded %+v, want nothing", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("recorded %d reviews, want 1", len(got))
			}
			g := got[0]
			g.At = tc.want.At
			if g != *tc.want {
				t.Errorf("recorded %+v, want %+v", g, *tc.want)
			}
			if other := s.DeploymentReviews("acme", "widgets", 43); len(other) != 0 {
				t.Errorf("run 43 has %+v, want nothing", other)
			}
		})
	}
}
