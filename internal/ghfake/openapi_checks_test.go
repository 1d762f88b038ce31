package ghfake

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// The answers of the git tree, blob and check-run endpoints, checked against
// the schemas of testdata/openapi-schemas-git-checks.json (copied from the
// same @octokit/openapi version as openapi-schemas.json, kept in a file of
// their own so the two merge easily) with the checker of openapi_test.go.

var (
	gitChecksOnce    sync.Once
	gitChecksSchemas map[string]any
	gitChecksErr     error
)

// conformGitChecks is conform over both schema files.
func conformGitChecks(t *testing.T, name string, v any) []string {
	t.Helper()
	gitChecksOnce.Do(func() {
		var doc struct {
			Components struct {
				Schemas map[string]any `json:"schemas"`
			} `json:"components"`
		}
		b, err := os.ReadFile("testdata/openapi-schemas-git-checks.json")
		if err == nil {
			err = json.Unmarshal(b, &doc)
		}
		gitChecksSchemas, gitChecksErr = doc.Components.Schemas, err
	})
	if gitChecksErr != nil {
		t.Fatalf("read the OpenAPI schemas: %v", gitChecksErr)
	}
	all := map[string]any{}
	for k, v := range openAPISchemas(t) {
		all[k] = v
	}
	for k, v := range gitChecksSchemas {
		all[k] = v
	}
	s, ok := all[name].(map[string]any)
	if !ok {
		t.Fatalf("no schema %q", name)
	}
	var errs []string
	check(all, s, v, "$", &errs)
	return errs
}

func TestGitAndChecksAnswersMatchOpenAPISchemas(t *testing.T) {
	s := checksServer(t)
	s.SetTree("acme", "widgets", commitA, gitFiles)
	s.AddPullRequest("acme", "widgets", PullRequest{Author: "alice", HeadSHA: commitA, BaseSHA: strings.Repeat("b", 40)})
	a := do(t, s, "POST", "/repos/acme/widgets/check-runs", appTok, `{"name":"phasegate","head_sha":"`+commitA+`","status":"in_progress"}`)
	var created struct{ ID int64 }
	_ = json.Unmarshal(a.body, &created)
	patch := do(t, s, "PATCH", fmt.Sprintf("/repos/acme/widgets/check-runs/%d", created.ID), appTok,
		`{"name":"phasegate","conclusion":"failure","details_url":"https://example.com/d","output":{"title":"t","summary":"s","text":"x","annotations":[`+
			`{"path":"a.txt","start_line":1,"end_line":1,"start_column":2,"end_column":3,"annotation_level":"failure","message":"m","title":"T","raw_details":"r"},`+
			`{"path":"a.txt","start_line":2,"end_line":4,"annotation_level":"notice","message":"m"}]}}`)
	run := fmt.Sprintf("/repos/acme/widgets/check-runs/%d", created.ID)
	tests := []struct {
		name, method, path, schema string
		answer                     *answer
		list                       string // "" one object; "[]" an array; else the key of the array
	}{
		{name: "tree", path: "/repos/acme/widgets/git/trees/" + commitA + "?recursive=1", schema: "git-tree"},
		{name: "blob", path: "/repos/acme/widgets/git/blobs/ce013625030ba8dba906f756967f9e9ca394464a", schema: "blob"},
		{name: "created check run", answer: &a, schema: "check-run"},
		{name: "updated check run", answer: &patch, schema: "check-run"},
		{name: "check run", path: run, schema: "check-run"},
		{name: "check runs for ref", path: "/repos/acme/widgets/commits/" + commitA + "/check-runs", schema: "check-run", list: "check_runs"},
		{name: "annotations", path: run + "/annotations", schema: "check-annotation", list: "[]"},
		{name: "403 of another app", method: "PATCH", path: run, schema: "basic-error"},
		{name: "422 of 51 annotations", method: "POST", path: "/repos/acme/widgets/check-runs", schema: "validation-error"},
	}
	bodies := map[string]string{
		"403 of another app":    `{"name":"phasegate","status":"queued"}`,
		"422 of 51 annotations": `{"name":"x","head_sha":"` + commitA + `","output":{"title":"t","summary":"s","annotations":` + annotationsJSON(51) + `}}`,
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ans := tt.answer
			if ans == nil {
				method, token := "GET", tok
				if tt.method != "" {
					method, token = tt.method, otherTok
				}
				got := do(t, s, method, tt.path, token, bodies[tt.name])
				ans = &got
			}
			var v any
			if err := json.Unmarshal(ans.body, &v); err != nil {
				t.Fatalf("%d %s: %v", ans.status, ans.body, err)
			}
			docs := []any{v}
			switch tt.list {
			case "":
			case "[]":
				docs, _ = v.([]any)
			default:
				m, _ := v.(map[string]any)
				if _, ok := m["total_count"].(float64); !ok {
					t.Errorf("no total_count in %s", ans.body)
				}
				docs, _ = m[tt.list].([]any)
			}
			if len(docs) == 0 {
				t.Fatalf("nothing to check in %d %s", ans.status, ans.body)
			}
			for i, d := range docs {
				if errs := conformGitChecks(t, tt.schema, d); len(errs) > 0 {
					t.Errorf("item %d does not match %s:\n%s", i, tt.schema, strings.Join(errs, "\n"))
				}
			}
		})
	}
}
