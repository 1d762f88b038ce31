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

// TestDerivedComparison: a comparison nobody set is what GitHub's own
// consistency gives: a pull request's files when its base and head are
// exactly the pair, else the difference of the two commits' trees (in path
// order, at most 300 files), else 404. The fake keeps no ancestry: the
// merge base is base.
func TestDerivedComparison(t *testing.T) {
	const base, head, moved = "b1", "h1", "h2"
	baseTree := []TreeFile{{Path: "a", Content: []byte("a\n")}, {Path: "b", Content: []byte("b\n")},
		{Path: "d/x", Content: []byte("x\n")}, {Path: "e", Content: []byte("e\n")}, {Path: "f/y", Content: []byte("y\n")}}
	headTree := []TreeFile{{Path: "a", Content: []byte("a, edited\n")}, {Path: "c/z", Content: []byte("z\n")},
		{Path: "d/x", Content: []byte("x\n")}, {Path: "e", Content: []byte("e\n"), Mode: ModeExecutable}, {Path: "f", Content: []byte("now a file\n")}}
	fromTrees := []string{"a modified", "b removed", "c/z added", "e changed", "f added", "f/y removed"}
	prFiles := []File{{Filename: "z", Status: "added"}, {Filename: "a", Status: "modified"}}
	// 301 files added, after the 5 of base removed (which sort first).
	var many []TreeFile
	var manyWant []string
	for _, f := range baseTree {
		manyWant = append(manyWant, f.Path+" removed")
	}
	for i := range 301 {
		many = append(many, TreeFile{Path: fmt.Sprintf("g%03d", i), Content: []byte("x\n")})
		manyWant = append(manyWant, fmt.Sprintf("g%03d added", i))
	}
	pull := func(s *Server) int {
		return s.AddPullRequest("acme", "widgets", PullRequest{HeadSHA: head, BaseSHA: base, HeadRef: "feature", BaseRef: "main", Author: "alice"})
	}
	tests := []struct {
		name       string
		set        func(s *Server)
		basehead   string
		wantStatus string // "": 404
		want       []string
	}{
		{name: "from the trees", basehead: base + "..." + head, wantStatus: "ahead", want: fromTrees},
		{name: "from the trees, by branch", basehead: "main..." + head, wantStatus: "ahead", want: fromTrees,
			set: func(s *Server) { s.SetBranch("acme", "widgets", "main", base) }},
		{name: "from the pull request of exactly that pair", basehead: base + "..." + head, wantStatus: "ahead",
			want: []string{"a modified", "z added"},
			set:  func(s *Server) { s.SetPullRequestFiles("acme", "widgets", pull(s), prFiles) }},
		{name: "a pull request whose head moved on is not the pair", basehead: base + "..." + head, wantStatus: "ahead", want: fromTrees,
			set: func(s *Server) {
				n := pull(s)
				s.SetPullRequestHead("acme", "widgets", n, moved)
				s.SetPullRequestFiles("acme", "widgets", n, prFiles)
			}},
		{name: "a comparison set wins", basehead: base + "..." + head, wantStatus: "ahead", want: []string{"only added"},
			set: func(s *Server) {
				s.SetCompare("acme", "widgets", base, head, []File{{Filename: "only", Status: "added"}})
			}},
		{name: "a commit with itself", basehead: head + "..." + head, wantStatus: "identical"},
		{name: "cut at GitHub's 300 files", basehead: base + "...many", wantStatus: "ahead", want: manyWant[:300],
			set: func(s *Server) { s.SetTree("acme", "widgets", "many", many) }},
		{name: "a commit the fake does not know", basehead: base + "...unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := activityServer(t)
			s.SetTree("acme", "widgets", base, baseTree)
			s.SetTree("acme", "widgets", head, headTree)
			s.SetTree("acme", "widgets", moved, baseTree)
			if tt.set != nil {
				tt.set(s)
			}
			a := do(t, s, "GET", "/repos/acme/widgets/compare/"+tt.basehead, tok, "")
			if tt.wantStatus == "" {
				if a.status != 404 {
					t.Fatalf("%d %s, want 404", a.status, a.body)
				}
				return
			}
			var got struct {
				Status          string `json:"status"`
				MergeBaseCommit struct {
					SHA string `json:"sha"`
				} `json:"merge_base_commit"`
				Files []struct {
					Filename, Status string
				} `json:"files"`
			}
			if err := json.Unmarshal(a.body, &got); err != nil || a.status != 200 {
				t.Fatalf("%d %s", a.status, a.body)
			}
			var files []string
			for _, f := range got.Files {
				files = append(files, f.Filename+" "+f.Status)
			}
			wantBase := base
			if tt.wantStatus == "identical" {
				wantBase = head
			}
			if got.Status != tt.wantStatus || got.MergeBaseCommit.SHA != wantBase || !reflect.DeepEqual(files, tt.want) {
				t.Fatalf("status %s, merge base %s, files %q; want %s, %s, %q", got.Status, got.MergeBaseCommit.SHA, files, tt.wantStatus, wantBase, tt.want)
			}
		})
	}
}
