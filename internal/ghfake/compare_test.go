package ghfake

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestComparison(t *testing.T) {
	type answerShape struct {
		Status          string `json:"status"`
		AheadBy         int    `json:"ahead_by"`
		BehindBy        int    `json:"behind_by"`
		TotalCommits    int    `json:"total_commits"`
		MergeBaseCommit struct {
			SHA string `json:"sha"`
		} `json:"merge_base_commit"`
		Files []struct {
			Filename string `json:"filename"`
		} `json:"files"`
	}
	tests := []struct {
		name string
		set  func(s *Server)
		want answerShape
	}{
		{name: "SetCompare stays ahead by one", set: func(s *Server) {
			s.SetCompare("acme", "widgets", "main", "feature", []File{{Filename: "a", Status: "added"}})
		}, want: answerShape{Status: "ahead", AheadBy: 1, TotalCommits: 1}},
		{name: "ahead by three", set: func(s *Server) {
			s.SetComparison("acme", "widgets", "main", "feature", Comparison{Status: "ahead", AheadBy: 3})
		}, want: answerShape{Status: "ahead", AheadBy: 3, TotalCommits: 3}},
		{name: "behind: the merge base is head", set: func(s *Server) {
			s.SetComparison("acme", "widgets", "main", "feature", Comparison{Status: "behind", BehindBy: 2})
		}, want: answerShape{Status: "behind", BehindBy: 2}},
		{name: "diverged with a merge base", set: func(s *Server) {
			s.SetComparison("acme", "widgets", "main", "feature", Comparison{Status: "diverged", MergeBase: "mb1"})
		}, want: answerShape{Status: "diverged", AheadBy: 1, BehindBy: 1, TotalCommits: 1}},
		{name: "identical", set: func(s *Server) {
			s.SetComparison("acme", "widgets", "main", "feature", Comparison{Status: "identical", AheadBy: 5})
		}, want: answerShape{Status: "identical"}},
	}
	wantBase := map[string]string{"ahead": "m1", "behind": "f1", "diverged": "mb1", "identical": "m1"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := activityServer(t)
			s.SetBranch("acme", "widgets", "main", "m1")
			s.SetBranch("acme", "widgets", "feature", "f1")
			tt.set(s)
			a := do(t, s, "GET", "/repos/acme/widgets/compare/main...feature", tok, "")
			var got answerShape
			if err := json.Unmarshal(a.body, &got); err != nil || a.status != 200 {
				t.Fatalf("%d %s", a.status, a.body)
			}
			tt.want.MergeBaseCommit.SHA = wantBase[tt.want.Status]
			tt.want.Files = got.Files
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestComparisonCapsFilesAt300(t *testing.T) {
	s, _ := activityServer(t)
	var files []File
	for i := range 301 {
		files = append(files, File{Filename: fmt.Sprintf("f%03d", i), Status: "added"})
	}
	s.SetCompare("acme", "widgets", "a", "b", files)
	a := do(t, s, "GET", "/repos/acme/widgets/compare/a...b", tok, "")
	var got struct {
		Files []any `json:"files"`
	}
	if err := json.Unmarshal(a.body, &got); err != nil || len(got.Files) != 300 {
		t.Fatalf("%d files (%v), want GitHub's 300", len(got.Files), err)
	}
	if a := do(t, s, "GET", "/repos/acme/widgets/compare/a...c", tok, ""); a.status != 404 {
		t.Fatalf("a comparison never set: %d", a.status)
	}
}

// TestStatusesAreAHistory: statuses cannot be deleted or edited, and a
// commit's listing has every context, newest first, paginated at per_page.
func TestStatusesAreAHistory(t *testing.T) {
	s, _ := activityServer(t)
	s.SetBranch("acme", "widgets", "main", "c1")
	var want []string
	for i := range 7 {
		ctx := []string{"ci", "lint", "phasegate/contracts"}[i%3]
		body := fmt.Sprintf(`{"state":"pending","context":%q,"description":"%d"}`, ctx, i)
		if a := do(t, s, "POST", "/repos/acme/widgets/statuses/c1", tok, body); a.status != 201 {
			t.Fatalf("create: %d %s", a.status, a.body)
		}
		want = append([]string{fmt.Sprintf("%s %d", ctx, i)}, want...)
	}
	for _, m := range []string{"DELETE", "PATCH", "PUT"} {
		for _, path := range []string{"/repos/acme/widgets/statuses/c1", "/repos/acme/widgets/commits/c1/statuses"} {
			if a := do(t, s, m, path, tok, `{"state":"success"}`); a.status != 404 {
				t.Fatalf("%s %s: %d, want 404 (no such endpoint)", m, path, a.status)
			}
		}
	}
	var got []string
	for page := 1; page <= 3; page++ {
		a := do(t, s, "GET", fmt.Sprintf("/repos/acme/widgets/commits/main/statuses?per_page=3&page=%d", page), tok, "")
		var list []struct {
			Context     string `json:"context"`
			Description string `json:"description"`
		}
		if err := json.Unmarshal(a.body, &list); err != nil || a.status != 200 {
			t.Fatalf("page %d: %d %s", page, a.status, a.body)
		}
		if len(list) > 3 || (page < 3) != strings.Contains(a.header.Get("Link"), `rel="next"`) {
			t.Fatalf("page %d: %d items, Link %q", page, len(list), a.header.Get("Link"))
		}
		for _, st := range list {
			got = append(got, st.Context+" "+st.Description)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("listing %q, want %q", got, want)
	}
	if n := len(s.Statuses("acme", "widgets", "c1")); n != 7 {
		t.Fatalf("%d statuses stored, want 7", n)
	}
}

func TestStatusLimitPerContext(t *testing.T) {
	s, _ := activityServer(t)
	// All but one of the limit are stored directly (a thousand validated
	// exchanges were most of this package's CPU under -race): the limit
	// counts what is stored, however it got there. The last one under the
	// limit is created through the API.
	s.mu.Lock()
	rp := s.repos[key("acme", "widgets")]
	for range maxStatusesPerContext - 1 {
		rp.statuses["c1"] = append(rp.statuses["c1"], &status{id: s.nextID(), sha: "c1", state: "pending", context: "ci", creator: "alice", createdAt: s.now().UTC()})
	}
	s.mu.Unlock()
	if a := do(t, s, "POST", "/repos/acme/widgets/statuses/c1", tok, `{"state":"pending","context":"ci"}`); a.status != 201 {
		t.Fatalf("status %d of a context: %d, want 201", maxStatusesPerContext, a.status)
	}
	if n := len(s.Statuses("acme", "widgets", "c1")); n != maxStatusesPerContext {
		t.Fatalf("%d statuses stored, want %d", n, maxStatusesPerContext)
	}
	if a := do(t, s, "POST", "/repos/acme/widgets/statuses/c1", tok, `{"state":"success","context":"ci"}`); a.status != 422 {
		t.Fatalf("status 1001 of a context: %d, want 422", a.status)
	}
	if a := do(t, s, "POST", "/repos/acme/widgets/statuses/c1", tok, `{"state":"success","context":"lint"}`); a.status != 201 {
		t.Fatalf("another context: %d", a.status)
	}
}
