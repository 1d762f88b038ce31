package ghfake

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
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

// waitingRuns is a fake on a manual clock with acme/widgets's workflow
// runs 1 to 5, run i requested i hours after epoch: 1 waits on
// production (push to main); 2 on staging and production, staging since
// approved (a pull_request run of feature); 3 was approved, 4 rejected;
// 5 waits on production with a comment posted, no answer.
func waitingRuns(t *testing.T) (*Server, time.Time) {
	t.Helper()
	s := newTestServer(t)
	epoch := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	clock := NewManualClock(epoch)
	s.SetClock(clock.Now)
	for _, r := range []DeploymentRequest{
		{RunID: 1, Environment: "production", SHA: strings.Repeat("a", 40), Ref: "refs/heads/main"},
		{RunID: 2, Environment: "staging", SHA: strings.Repeat("b", 40), Ref: "refs/heads/feature", Event: "pull_request"},
		{RunID: 2, Environment: "production", SHA: strings.Repeat("b", 40), Ref: "refs/heads/feature", Event: "pull_request"},
		{RunID: 3, Environment: "production", SHA: strings.Repeat("c", 40), Ref: "refs/heads/main"},
		{RunID: 4, Environment: "production", SHA: strings.Repeat("d", 40), Ref: "refs/heads/main"},
		{RunID: 5, Environment: "production", SHA: strings.Repeat("e", 40), Ref: "refs/tags/v1"},
	} {
		clock.Advance(epoch.Add(time.Duration(r.RunID) * time.Hour).Sub(clock.Now()))
		r.Owner, r.Repo = "acme", "widgets"
		if _, err := s.DeploymentRequestPayload(r); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []struct {
		run  int
		body string
	}{
		{2, `{"environment_name":"staging","state":"approved"}`},
		{3, `{"environment_name":"production","state":"approved"}`},
		{4, `{"environment_name":"production","state":"rejected","comment":"HOLD"}`},
		{5, `{"environment_name":"production","comment":"waiting on D-001"}`},
		{5, `{"environment_name":"staging","state":"approved"}`}, // not pending on 5: changes nothing
	} {
		if a := do(t, s, "POST", fmt.Sprintf("/repos/acme/widgets/actions/runs/%d/deployment_protection_rule", r.run), tok, r.body); a.status != 204 {
			t.Fatalf("review of run %d: %d %s", r.run, a.status, a.body)
		}
	}
	return s, epoch
}

func TestListWorkflowRuns(t *testing.T) {
	t.Parallel()
	s, epoch := waitingRuns(t)
	tests := []struct {
		name       string
		query      string
		perms      map[string]string
		wantStatus int
		wantIDs    []int64 // newest first
		wantTotal  int
	}{
		{name: "waiting", query: "status=waiting", wantStatus: 200, wantIDs: []int64{5, 2, 1}, wantTotal: 3},
		{name: "every run", wantStatus: 200, wantIDs: []int64{5, 4, 3, 2, 1}, wantTotal: 5},
		{name: "approved goes on", query: "status=in_progress", wantStatus: 200, wantIDs: []int64{3}, wantTotal: 1},
		{name: "rejected fails, by status", query: "status=completed", wantStatus: 200, wantIDs: []int64{4}, wantTotal: 1},
		{name: "rejected fails, by conclusion", query: "status=failure", wantStatus: 200, wantIDs: []int64{4}, wantTotal: 1},
		{name: "created since a time", query: "status=waiting&created=" + url.QueryEscape(">="+epoch.Add(2*time.Hour).Format(time.RFC3339)), wantStatus: 200, wantIDs: []int64{5, 2}, wantTotal: 2},
		{name: "created since a date", query: "status=waiting&created=" + url.QueryEscape(">=2024-05-01"), wantStatus: 200, wantIDs: []int64{5, 2, 1}, wantTotal: 3},
		{name: "created after the last", query: "created=" + url.QueryEscape(">="+epoch.Add(6*time.Hour).Format(time.RFC3339)), wantStatus: 200, wantIDs: []int64{}, wantTotal: 0},
		{name: "second page", query: "status=waiting&per_page=2&page=2", wantStatus: 200, wantIDs: []int64{1}, wantTotal: 3},
		{name: "actions read granted", query: "status=waiting", perms: map[string]string{"actions": "read", "deployments": "write"}, wantStatus: 200, wantIDs: []int64{5, 2, 1}, wantTotal: 3},
		{name: "no actions read", query: "status=waiting", perms: map[string]string{"deployments": "write"}, wantStatus: 403},
		{name: "created before", query: "created=" + url.QueryEscape("<2024-05-01"), wantStatus: 422},
		{name: "created not a date", query: "created=" + url.QueryEscape(">=yesterday"), wantStatus: 422},
		{name: "a filter the fake lacks", query: "status=waiting&actor=alice", wantStatus: 422},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s.SetTokenPermissions("bot", tc.perms)
			a := do(t, s, "GET", "/repos/acme/widgets/actions/runs?"+tc.query, tok, "")
			if a.status != tc.wantStatus {
				t.Fatalf("status %d, want %d (%s)", a.status, tc.wantStatus, a.body)
			}
			if a.status != 200 {
				return
			}
			var got struct {
				Total int `json:"total_count"`
				Runs  []struct {
					ID int64 `json:"id"`
				} `json:"workflow_runs"`
			}
			if err := json.Unmarshal(a.body, &got); err != nil {
				t.Fatal(err)
			}
			ids := []int64{}
			for _, r := range got.Runs {
				ids = append(ids, r.ID)
			}
			if !slices.Equal(ids, tc.wantIDs) || got.Total != tc.wantTotal {
				t.Errorf("runs %v of %d, want %v of %d", ids, got.Total, tc.wantIDs, tc.wantTotal)
			}
		})
	}
}

// TestWorkflowRunShape: a listed run carries what the request said, and
// its status and conclusion follow the answers.
func TestWorkflowRunShape(t *testing.T) {
	t.Parallel()
	s, epoch := waitingRuns(t)
	if !s.AgeWorkflowRun("acme", "widgets", 1, 24*time.Hour) || s.AgeWorkflowRun("acme", "widgets", 99, time.Hour) {
		t.Fatal("AgeWorkflowRun found no run 1, or a run 99")
	}
	a := do(t, s, "GET", "/repos/acme/widgets/actions/runs", tok, "")
	type run struct {
		ID         int64     `json:"id"`
		HeadSHA    string    `json:"head_sha"`
		HeadBranch string    `json:"head_branch"`
		Event      string    `json:"event"`
		Status     string    `json:"status"`
		Conclusion string    `json:"conclusion"` // "" for null
		CreatedAt  time.Time `json:"created_at"`
	}
	var got struct {
		Runs []run `json:"workflow_runs"`
	}
	if err := json.Unmarshal(a.body, &got); err != nil {
		t.Fatal(err)
	}
	at := func(h int) time.Time { return epoch.Add(time.Duration(h) * time.Hour) }
	want := []run{
		{ID: 5, HeadSHA: strings.Repeat("e", 40), HeadBranch: "v1", Event: "push", Status: "waiting", CreatedAt: at(5)},
		{ID: 4, HeadSHA: strings.Repeat("d", 40), HeadBranch: "main", Event: "push", Status: "completed", Conclusion: "failure", CreatedAt: at(4)},
		{ID: 3, HeadSHA: strings.Repeat("c", 40), HeadBranch: "main", Event: "push", Status: "in_progress", CreatedAt: at(3)},
		{ID: 2, HeadSHA: strings.Repeat("b", 40), HeadBranch: "feature", Event: "pull_request", Status: "waiting", CreatedAt: at(2)},
		{ID: 1, HeadSHA: strings.Repeat("a", 40), HeadBranch: "main", Event: "push", Status: "waiting", CreatedAt: at(1 - 24)},
	}
	if !slices.Equal(got.Runs, want) {
		t.Errorf("runs\n%+v\nwant\n%+v", got.Runs, want)
	}
}

func TestPendingDeploymentsEndpoint(t *testing.T) {
	t.Parallel()
	s, _ := waitingRuns(t)
	tests := []struct {
		name       string
		run        string
		perms      map[string]string
		wantStatus int
		want       []string
	}{
		{name: "one environment", run: "1", wantStatus: 200, want: []string{"production"}},
		{name: "one of two answered", run: "2", wantStatus: 200, want: []string{"production"}},
		{name: "approved", run: "3", wantStatus: 200, want: []string{}},
		{name: "rejected", run: "4", wantStatus: 200, want: []string{}},
		{name: "a comment answers nothing", run: "5", wantStatus: 200, want: []string{"production"}},
		{name: "actions read granted", run: "1", perms: map[string]string{"actions": "read"}, wantStatus: 200, want: []string{"production"}},
		{name: "no actions read", run: "1", perms: map[string]string{"deployments": "write"}, wantStatus: 403},
		{name: "unknown run", run: "99", wantStatus: 404},
		{name: "not a run id", run: "x", wantStatus: 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s.SetTokenPermissions("bot", tc.perms)
			a := do(t, s, "GET", "/repos/acme/widgets/actions/runs/"+tc.run+"/pending_deployments", tok, "")
			if a.status != tc.wantStatus {
				t.Fatalf("status %d, want %d (%s)", a.status, tc.wantStatus, a.body)
			}
			if a.status != 200 {
				return
			}
			var got []struct {
				Environment struct {
					Name string `json:"name"`
				} `json:"environment"`
			}
			if err := json.Unmarshal(a.body, &got); err != nil {
				t.Fatal(err)
			}
			envs := []string{}
			for _, p := range got {
				envs = append(envs, p.Environment.Name)
			}
			if !slices.Equal(envs, tc.want) {
				t.Errorf("pending %v, want %v", envs, tc.want)
			}
		})
	}
}

// TestWorkflowRunsAtMostAThousand: a filtered listing ends after 1,000
// runs, as GitHub's does, while total_count counts them all.
func TestWorkflowRunsAtMostAThousand(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	if maxRunResults != 1000 {
		t.Fatalf("maxRunResults = %d, want GitHub's 1,000", maxRunResults)
	}
	for id := int64(1); id <= maxRunResults+1; id++ {
		if _, err := s.DeploymentRequestPayload(DeploymentRequest{Owner: "acme", Repo: "widgets", RunID: id, Environment: "production", SHA: strings.Repeat("a", 40), Ref: "main"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		query    string
		wantRuns int
	}{
		{query: "status=waiting&per_page=1&page=1000", wantRuns: 1},
		{query: "status=waiting&per_page=1&page=1001", wantRuns: 0},
		{query: "per_page=1&page=1001", wantRuns: 1},
	} {
		a := do(t, s, "GET", "/repos/acme/widgets/actions/runs?"+tc.query, tok, "")
		var got struct {
			Total int   `json:"total_count"`
			Runs  []any `json:"workflow_runs"`
		}
		if err := json.Unmarshal(a.body, &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Runs) != tc.wantRuns || got.Total != maxRunResults+1 || strings.Contains(a.header.Get("Link"), `rel="next"`) {
			t.Errorf("%s: %d runs of %d, Link %q; want %d of %d and no next page", tc.query, len(got.Runs), got.Total, a.header.Get("Link"), tc.wantRuns, maxRunResults+1)
		}
	}
}
