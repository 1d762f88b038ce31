package web

import (
	"strings"
	"testing"
)

// TestHostileDeploymentEscaped (red team): an environment's name and a ref
// are the repository's workflows' words; they reach the inbox and the
// issue page only escaped, and the links to the commit and the run are
// built from escaped path segments (no markup, no dot segment, no other
// host).
func TestHostileDeploymentEscaped(t *testing.T) {
	f := newFixture(t)
	hostile := Deployment{Repo: RepoRef{Owner: "acme", Name: "app"}, Environment: `<script>alert(1)</script>`,
		SHA: `../../evil"><img src=x onerror=alert(2)>`, Ref: `"><img src=x onerror=alert(3)>`, RunID: 12,
		Reason: `<svg onload=alert(4)>`, Waits: []Wait{{Decision: `D-001" onclick="alert(5)`, Issue: 7}}}
	quoted := hostile
	quoted.Environment, quoted.Waits = `"><img src=x onerror=alert(6)>`, nil
	dots := quoted
	dots.Environment, dots.SHA = "dots", ".."
	f.src.deploys = []Deployment{hostile, quoted, dots}
	f.src.issues["acme/app#7"].Outcomes[0].Decisions[0].Deployments = f.src.deploys
	c := f.cookie(t)
	for _, path := range []string{"/inbox", "/acme/app/issues/7"} {
		body := f.do("GET", path, nil, nil, c).Body.String()
		for _, bad := range []string{"<script>alert", "<img src=x", "<svg", `" onclick="`, "/commit/../", "/commit/..%2f", `/commit/.."`} {
			if strings.Contains(body, bad) {
				t.Errorf("%s: the page contains %q", path, bad)
			}
		}
		for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&#34;&gt;&lt;img src=x onerror=alert(6)&gt;",
			`href="/acme/app/commit/..%2F..%2Fevil%22%3E%3Cimg%20src=x%20onerror=alert%282%29%3E"`} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: the page lacks %q", path, want)
			}
		}
		if n := strings.Count(body, "<script"); n != 1 {
			t.Errorf("%s: %d script elements, want only our own", path, n)
		}
	}
}

// TestDeploymentsShownOnlyWhenWaiting: the inbox shows the deployments of
// the repositories the person can read, none of another's, and no section
// at all when none waits; the issue page shows one under the decision it
// waits on only.
func TestDeploymentsShownOnlyWhenWaiting(t *testing.T) {
	tests := []struct {
		name      string
		path      string
		change    func(f *fixture)
		want, not []string
	}{
		{name: "inbox", path: "/inbox", want: []string{"Deployments waiting", "production", "staging"}, not: []string{"hidden-env", "other/secret"}},
		{name: "inbox, a repository the person no longer reads", path: "/inbox",
			change: func(f *fixture) { f.user.repos = f.user.repos[:1] }, want: []string{"production"}, not: []string{"staging", "hidden-env"}},
		{name: "inbox, none waiting", path: "/inbox", change: func(f *fixture) { f.src.deploys = nil },
			want: []string{"D-001 · Ship the plan?"}, not: []string{"Deployments waiting", `class="deployments"`}},
		{name: "inbox, deployments but no decision pending", path: "/inbox", change: func(f *fixture) { f.src.pending = nil },
			want: []string{"Deployments waiting", "No decision is pending."}, not: []string{"Nothing is waiting"}},
		{name: "inbox, nothing at all", path: "/inbox", change: func(f *fixture) { f.src.pending, f.src.deploys = nil, nil },
			want: []string{"Nothing is waiting."}, not: []string{"Deployments waiting"}},
		{name: "issue", path: "/acme/app/issues/7", want: []string{"Deployments waiting on it", "production"}, not: []string{"staging", "hidden-env"}},
		{name: "issue, none waiting", path: "/acme/app/issues/7",
			change: func(f *fixture) { f.src.issues["acme/app#7"].Outcomes[0].Decisions[0].Deployments = nil },
			want:   []string{"Ship the plan?"}, not: []string{"Deployments waiting", `class="waiting"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			if tt.change != nil {
				tt.change(f)
			}
			body := f.do("GET", tt.path, nil, nil, f.cookie(t)).Body.String()
			for _, s := range tt.want {
				if !strings.Contains(body, s) {
					t.Errorf("the page lacks %q", s)
				}
			}
			for _, s := range tt.not {
				if strings.Contains(body, s) {
					t.Errorf("the page shows %q", s)
				}
			}
		})
	}
}
