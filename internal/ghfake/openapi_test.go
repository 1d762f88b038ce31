package ghfake

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The fake's answers are checked against component schemas of GitHub's
// published OpenAPI description, copied into testdata/openapi-schemas.json
// (its $comment names the @octokit/openapi version). The checker below
// covers the keywords those schemas use: $ref, type, nullable, required,
// properties, additionalProperties: false, items, enum, oneOf, anyOf,
// allOf, minLength, maxLength and format date-time.

var (
	schemasOnce sync.Once
	schemas     map[string]any
	schemasErr  error
)

func openAPISchemas(t *testing.T) map[string]any {
	t.Helper()
	schemasOnce.Do(func() {
		var doc struct {
			Components struct {
				Schemas map[string]any `json:"schemas"`
			} `json:"components"`
		}
		b, err := os.ReadFile("testdata/openapi-schemas.json")
		if err == nil {
			err = json.Unmarshal(b, &doc)
		}
		schemas, schemasErr = doc.Components.Schemas, err
	})
	if schemasErr != nil {
		t.Fatalf("read the OpenAPI schemas: %v", schemasErr)
	}
	return schemas
}

// conform checks a decoded JSON value against the named component schema
// and returns every violation, each with its JSON path.
func conform(t *testing.T, name string, v any) []string {
	t.Helper()
	all := openAPISchemas(t)
	s, ok := all[name]
	if !ok {
		t.Fatalf("no schema %q in testdata/openapi-schemas.json", name)
	}
	var errs []string
	check(all, s.(map[string]any), v, "$", &errs)
	return errs
}

func check(all map[string]any, s map[string]any, v any, path string, errs *[]string) {
	if ref, ok := s["$ref"].(string); ok {
		check(all, all[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any), v, path, errs)
		return
	}
	if v == nil {
		if s["nullable"] != true {
			*errs = append(*errs, path+": null, schema is not nullable")
		}
		return
	}
	if !checkCombinators(all, s, v, path, errs) {
		return
	}
	if typ, ok := s["type"].(string); ok && !hasType(typ, v) {
		*errs = append(*errs, fmt.Sprintf("%s: %T, want %s", path, v, typ))
		return
	}
	if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, v) {
		*errs = append(*errs, fmt.Sprintf("%s: %v is not one of %v", path, v, enum))
	}
	switch x := v.(type) {
	case string:
		checkString(s, x, path, errs)
	case []any:
		if items, ok := s["items"].(map[string]any); ok {
			for i, it := range x {
				check(all, items, it, fmt.Sprintf("%s[%d]", path, i), errs)
			}
		}
	case map[string]any:
		checkObject(all, s, x, path, errs)
	}
}

// checkCombinators applies oneOf, anyOf and allOf; false when v failed one.
func checkCombinators(all map[string]any, s map[string]any, v any, path string, errs *[]string) bool {
	count := func(list []any) int {
		n := 0
		for _, sub := range list {
			var e []string
			check(all, sub.(map[string]any), v, path, &e)
			if len(e) == 0 {
				n++
			}
		}
		return n
	}
	if list, ok := s["oneOf"].([]any); ok && count(list) != 1 {
		*errs = append(*errs, fmt.Sprintf("%s: matches %d of oneOf, want 1", path, count(list)))
		return false
	}
	if list, ok := s["anyOf"].([]any); ok && count(list) == 0 {
		*errs = append(*errs, path+": matches none of anyOf")
		return false
	}
	for _, sub := range sliceOf(s["allOf"]) {
		check(all, sub.(map[string]any), v, path, errs)
	}
	return true
}

func sliceOf(v any) []any {
	list, _ := v.([]any)
	return list
}

func hasType(typ string, v any) bool {
	switch typ {
	case "string":
		_, ok := v.(string)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	case "number":
		_, ok := v.(float64)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	}
	return false
}

func checkString(s map[string]any, x, path string, errs *[]string) {
	n := len([]rune(x))
	if m, ok := s["minLength"].(float64); ok && n < int(m) {
		*errs = append(*errs, fmt.Sprintf("%s: %q is shorter than %v", path, x, m))
	}
	if m, ok := s["maxLength"].(float64); ok && n > int(m) {
		*errs = append(*errs, fmt.Sprintf("%s: %q is longer than %v", path, x, m))
	}
	if s["format"] == "date-time" {
		if _, err := time.Parse(time.RFC3339, x); err != nil {
			*errs = append(*errs, fmt.Sprintf("%s: %q is not a date-time", path, x))
		}
	}
}

func checkObject(all map[string]any, s map[string]any, x map[string]any, path string, errs *[]string) {
	for _, r := range sliceOf(s["required"]) {
		if _, ok := x[r.(string)]; !ok {
			*errs = append(*errs, fmt.Sprintf("%s: required %q missing", path, r))
		}
	}
	props, _ := s["properties"].(map[string]any)
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ps, ok := props[k].(map[string]any)
		if !ok {
			if s["additionalProperties"] == false {
				*errs = append(*errs, fmt.Sprintf("%s: %q is not allowed", path, k))
			}
			continue
		}
		check(all, ps, x[k], path+"."+k, errs)
	}
}

// TestSchemaChecker makes sure the checker rejects what the schemas forbid,
// so that a clean answer below means something.
func TestSchemaChecker(t *testing.T) {
	good := `{"id":1,"node_id":"RA_1","before":"a","after":"b","ref":"refs/heads/main","timestamp":"2024-05-01T12:00:00Z","activity_type":"push","actor":null}`
	tests := []struct {
		name    string
		schema  string
		doc     string
		wantErr string
	}{
		{name: "valid activity", schema: "activity", doc: good},
		{name: "missing required key", schema: "activity", doc: strings.Replace(good, `"node_id":"RA_1",`, "", 1), wantErr: `required "node_id" missing`},
		{name: "wrong type", schema: "activity", doc: strings.Replace(good, `"id":1`, `"id":"1"`, 1), wantErr: "$.id: string, want integer"},
		{name: "not in enum", schema: "activity", doc: strings.Replace(good, `"push"`, `"pushed"`, 1), wantErr: "is not one of"},
		{name: "bad date-time", schema: "activity", doc: strings.Replace(good, `2024-05-01T12:00:00Z`, `yesterday`, 1), wantErr: "not a date-time"},
		{name: "incomplete user", schema: "activity", doc: strings.Replace(good, `"actor":null`, `"actor":{"login":"x"}`, 1), wantErr: `$.actor: required "avatar_url" missing`},
		{name: "null where not nullable", schema: "activity", doc: strings.Replace(good, `"ref":"refs/heads/main"`, `"ref":null`, 1), wantErr: "$.ref: null"},
		{name: "oneOf with no match", schema: "commit", doc: `{"url":"u","sha":"s","node_id":"n","html_url":"h","comments_url":"c","parents":[],"committer":null,"author":{"login":"x"},"commit":{"url":"u","author":null,"committer":null,"comment_count":0,"message":"m","tree":{"sha":"t","url":"u"}}}`, wantErr: "matches 0 of oneOf"},
		{name: "sha length", schema: "git-ref", doc: `{"ref":"refs/heads/x","node_id":"n","url":"u","object":{"type":"commit","sha":"abc","url":"u"}}`, wantErr: "shorter than 40"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v any
			if err := json.Unmarshal([]byte(tt.doc), &v); err != nil {
				t.Fatal(err)
			}
			errs := strings.Join(conform(t, tt.schema, v), "\n")
			if tt.wantErr == "" && errs != "" || tt.wantErr != "" && !strings.Contains(errs, tt.wantErr) {
				t.Fatalf("violations:\n%s\nwant %q", errs, tt.wantErr)
			}
		})
	}
}

// TestAnswersMatchOpenAPISchemas checks the fake's activity items, commit
// comparisons, statuses and git refs against GitHub's published schemas.
func TestAnswersMatchOpenAPISchemas(t *testing.T) {
	s, _ := activityServer(t)
	s.SetBranch("acme", "widgets", "main", strings.Repeat("a", 40))
	s.Push("acme", "widgets", Push{Ref: "main", After: strings.Repeat("b", 40), Actor: "alice"})
	s.Push("acme", "widgets", Push{Ref: "main", After: strings.Repeat("c", 40)}) // actor null
	s.Push("acme", "widgets", Push{Ref: "feature", After: strings.Repeat("d", 40), Actor: "bob"})
	s.AddActivity("acme", "widgets", Activity{Type: "pr_merge", Ref: "main", Before: strings.Repeat("c", 40), After: strings.Repeat("e", 40), Actor: "carol"})
	s.AddCommit("acme", "widgets", Commit{SHA: strings.Repeat("a", 40), Author: "alice", Message: "base", Verified: true})
	files := []File{{Filename: "a.txt", Status: "added"}, {Filename: "b.txt", Status: "renamed", PreviousFilename: "old.txt"}}
	for _, st := range []string{"ahead", "behind", "diverged", "identical"} {
		s.SetComparison("acme", "widgets", "main", st, Comparison{Status: st, Files: files})
	}
	for _, ctx := range []string{"ci", "lint", "ci"} {
		if a := do(t, s, "POST", "/repos/acme/widgets/statuses/"+strings.Repeat("c", 40), tok, `{"state":"success","context":"`+ctx+`"}`); a.status != 201 {
			t.Fatalf("create status: %d", a.status)
		}
	}
	tests := []struct {
		name, path, schema string
		list               bool
	}{
		{name: "activity", path: "/repos/acme/widgets/activity", schema: "activity", list: true},
		{name: "activity of a ref", path: "/repos/acme/widgets/activity?ref=main&per_page=1", schema: "activity", list: true},
		{name: "compare ahead", path: "/repos/acme/widgets/compare/main...ahead", schema: "commit-comparison"},
		{name: "compare behind", path: "/repos/acme/widgets/compare/main...behind", schema: "commit-comparison"},
		{name: "compare diverged", path: "/repos/acme/widgets/compare/main...diverged", schema: "commit-comparison"},
		{name: "compare identical", path: "/repos/acme/widgets/compare/main...identical", schema: "commit-comparison"},
		{name: "statuses", path: "/repos/acme/widgets/commits/main/statuses", schema: "status", list: true},
		{name: "git ref", path: "/repos/acme/widgets/git/ref/heads/feature", schema: "git-ref"},
		{name: "422", path: "/repos/acme/widgets/activity?time_period=decade", schema: "validation-error-simple"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := do(t, s, "GET", tt.path, tok, "")
			var v any
			if err := json.Unmarshal(a.body, &v); err != nil {
				t.Fatalf("%d %s: %v", a.status, a.body, err)
			}
			docs := []any{v}
			if tt.list {
				docs, _ = v.([]any)
				if len(docs) == 0 {
					t.Fatalf("empty listing: %s", a.body)
				}
			}
			for i, d := range docs {
				if errs := conform(t, tt.schema, d); len(errs) > 0 {
					t.Errorf("item %d does not match %s:\n%s", i, tt.schema, strings.Join(errs, "\n"))
				}
			}
		})
	}
}
