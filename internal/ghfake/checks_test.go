package ghfake

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

const (
	appTok   = "tok-app"
	otherTok = "tok-other-app"
)

func checksServer(t *testing.T) *Server {
	t.Helper()
	s := newTestServer(t)
	s.AddAppToken(appTok, 4242, "phasegate")
	s.AddAppToken(otherTok, 99, "other")
	return s
}

func annotationsJSON(n int) string {
	var parts []string
	for i := 0; i < n; i++ {
		parts = append(parts, fmt.Sprintf(`{"path":"a.yaml","start_line":%d,"end_line":%d,"annotation_level":"warning","message":"m%d"}`, i+1, i+1, i))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func TestCreateCheckRun(t *testing.T) {
	sha := strings.Repeat("c", 40)
	out := func(extra string) string {
		return `,"output":{"title":"t","summary":"s"` + extra + `}}`
	}
	tests := []struct {
		name       string
		token      string
		body       string
		wantStatus int
		wantMsg    string
	}{
		{name: "an app", token: appTok, body: `{"name":"phasegate","head_sha":"` + sha + `","status":"in_progress"}`, wantStatus: 201},
		{name: "a user's token", token: tok, body: `{"name":"phasegate","head_sha":"` + sha + `"}`, wantStatus: 403, wantMsg: "GitHub App"},
		{name: "no name", token: appTok, body: `{"head_sha":"` + sha + `"}`, wantStatus: 422},
		{name: "not a sha", token: appTok, body: `{"name":"x","head_sha":"main"}`, wantStatus: 422},
		{name: "completed without conclusion", token: appTok, body: `{"name":"x","head_sha":"` + sha + `","status":"completed"}`, wantStatus: 422},
		{name: "stale is GitHub's", token: appTok, body: `{"name":"x","head_sha":"` + sha + `","conclusion":"stale"}`, wantStatus: 422},
		{name: "50 annotations", token: appTok, body: `{"name":"x","head_sha":"` + sha + `"` + out(`,"annotations":`+annotationsJSON(50)), wantStatus: 201},
		{name: "51 annotations", token: appTok, body: `{"name":"x","head_sha":"` + sha + `"` + out(`,"annotations":`+annotationsJSON(51)), wantStatus: 422, wantMsg: "annotations"},
		{name: "summary over 65535 bytes", token: appTok, body: `{"name":"x","head_sha":"` + sha + `","output":{"title":"t","summary":"` + strings.Repeat("é", 32768) + `"}}`, wantStatus: 422, wantMsg: "bytesize"},
		{name: "output without summary", token: appTok, body: `{"name":"x","head_sha":"` + sha + `","output":{"title":"t"}}`, wantStatus: 422},
		{name: "columns across lines", token: appTok, body: `{"name":"x","head_sha":"` + sha + `"` + out(`,"annotations":[{"path":"a","start_line":1,"end_line":2,"start_column":1,"end_column":3,"annotation_level":"notice","message":"m"}]`), wantStatus: 422},
		{name: "bad level", token: appTok, body: `{"name":"x","head_sha":"` + sha + `"` + out(`,"annotations":[{"path":"a","start_line":1,"end_line":1,"annotation_level":"error","message":"m"}]`), wantStatus: 422},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := checksServer(t)
			a := do(t, s, "POST", "/repos/acme/widgets/check-runs", tt.token, tt.body)
			if a.status != tt.wantStatus || !strings.Contains(string(a.body), tt.wantMsg) {
				t.Fatalf("%d %s, want %d with %q", a.status, a.body, tt.wantStatus, tt.wantMsg)
			}
			runs := s.CheckRuns("acme", "widgets", sha)
			if (tt.wantStatus == 201) != (len(runs) == 1) {
				t.Fatalf("runs stored: %+v", runs)
			}
			if len(runs) == 1 && (runs[0].AppID != 4242 || runs[0].AppSlug != "phasegate" || runs[0].Creator != "phasegate[bot]") {
				t.Fatalf("creator of %+v", runs[0])
			}
		})
	}
}

func TestUpdateCheckRun(t *testing.T) {
	sha := strings.Repeat("c", 40)
	tests := []struct {
		name       string
		token      string
		body       string
		wantStatus int
		wantRun    string // Status/Conclusion/annotations after
	}{
		{name: "its app completes it", token: appTok, body: `{"name":"phasegate","conclusion":"failure","output":{"title":"t","summary":"s","annotations":` + annotationsJSON(50) + `}}`,
			wantStatus: 200, wantRun: "completed/failure/52"},
		{name: "another app", token: otherTok, body: `{"name":"phasegate","status":"completed","conclusion":"success"}`, wantStatus: 403, wantRun: "in_progress//2"},
		{name: "a user", token: tok, body: `{"name":"phasegate","status":"completed","conclusion":"success"}`, wantStatus: 403, wantRun: "in_progress//2"},
		{name: "51 annotations", token: appTok, body: `{"name":"phasegate","output":{"title":"t","summary":"s","annotations":` + annotationsJSON(51) + `}}`, wantStatus: 422, wantRun: "in_progress//2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := checksServer(t)
			a := do(t, s, "POST", "/repos/acme/widgets/check-runs", appTok,
				`{"name":"phasegate","head_sha":"`+sha+`","status":"in_progress","output":{"title":"t","summary":"s","annotations":`+annotationsJSON(2)+`}}`)
			var cr struct{ ID int64 }
			if err := json.Unmarshal(a.body, &cr); err != nil || a.status != 201 {
				t.Fatalf("create: %d %s", a.status, a.body)
			}
			a = do(t, s, "PATCH", fmt.Sprintf("/repos/acme/widgets/check-runs/%d", cr.ID), tt.token, tt.body)
			if a.status != tt.wantStatus {
				t.Fatalf("update: %d %s", a.status, a.body)
			}
			r := s.CheckRuns("acme", "widgets", sha)[0]
			if got := fmt.Sprintf("%s/%s/%d", r.Status, r.Conclusion, len(r.Annotations)); got != tt.wantRun {
				t.Fatalf("run %s, want %s", got, tt.wantRun)
			}
			if a := do(t, s, "PATCH", "/repos/acme/widgets/check-runs/1", appTok, `{"name":"x"}`); a.status != 404 {
				t.Fatalf("unknown run: %d", a.status)
			}
		})
	}
}

func TestListCheckRunsForRef(t *testing.T) {
	s := checksServer(t)
	sha := strings.Repeat("c", 40)
	s.SetBranch("acme", "widgets", "main", sha)
	for i, r := range []struct{ tok, name string }{
		{appTok, "phasegate"}, {appTok, "phasegate"}, {appTok, "lint"}, {otherTok, "phasegate"},
	} {
		body := fmt.Sprintf(`{"name":%q,"head_sha":%q,"external_id":"%d"}`, r.name, sha, i)
		if a := do(t, s, "POST", "/repos/acme/widgets/check-runs", r.tok, body); a.status != 201 {
			t.Fatalf("create: %d %s", a.status, a.body)
		}
	}
	tests := []struct {
		name      string
		query     string
		wantTotal int
		wantIDs   string // external ids on the page
		wantNext  bool
	}{
		{name: "latest of each name and app", query: "", wantTotal: 3, wantIDs: "3,2,1"},
		{name: "all", query: "?filter=all", wantTotal: 4, wantIDs: "3,2,1,0"},
		{name: "by name", query: "?check_name=phasegate&filter=latest", wantTotal: 2, wantIDs: "3,1"},
		{name: "by app", query: "?check_name=phasegate&app_id=4242&filter=all", wantTotal: 2, wantIDs: "1,0"},
		{name: "paginated", query: "?filter=all&per_page=3", wantTotal: 4, wantIDs: "3,2,1", wantNext: true},
		{name: "second page", query: "?filter=all&per_page=3&page=2", wantTotal: 4, wantIDs: "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := do(t, s, "GET", "/repos/acme/widgets/commits/main/check-runs"+tt.query, tok, "")
			var res struct {
				TotalCount int `json:"total_count"`
				CheckRuns  []struct {
					ExternalID string `json:"external_id"`
				} `json:"check_runs"`
			}
			if err := json.Unmarshal(a.body, &res); err != nil {
				t.Fatalf("%d %s", a.status, a.body)
			}
			var ids []string
			for _, r := range res.CheckRuns {
				ids = append(ids, r.ExternalID)
			}
			next := strings.Contains(a.header.Get("Link"), `rel="next"`)
			if res.TotalCount != tt.wantTotal || strings.Join(ids, ",") != tt.wantIDs || next != tt.wantNext {
				t.Fatalf("total %d, ids %v, next %v", res.TotalCount, ids, next)
			}
		})
	}
}

func TestListAnnotations(t *testing.T) {
	s := checksServer(t)
	sha := strings.Repeat("c", 40)
	a := do(t, s, "POST", "/repos/acme/widgets/check-runs", appTok,
		`{"name":"p","head_sha":"`+sha+`","output":{"title":"t","summary":"s","annotations":`+annotationsJSON(40)+`}}`)
	var cr struct{ ID int64 }
	_ = json.Unmarshal(a.body, &cr)
	a = do(t, s, "GET", fmt.Sprintf("/repos/acme/widgets/check-runs/%d/annotations?per_page=30&page=2", cr.ID), tok, "")
	var list []struct {
		Message   string `json:"message"`
		StartLine int    `json:"start_line"`
	}
	if err := json.Unmarshal(a.body, &list); err != nil || len(list) != 10 || list[0].Message != "m30" || list[0].StartLine != 31 {
		t.Fatalf("%d %s", a.status, a.body)
	}
}
