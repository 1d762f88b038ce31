package ghfake

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"
)

var epoch = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// activityServer is the test server on a manual clock at epoch.
func activityServer(t *testing.T) (*Server, *ManualClock) {
	t.Helper()
	s := newTestServer(t)
	clock := NewManualClock(epoch)
	s.SetClock(clock.Now)
	return s, clock
}

type activityItem struct {
	ID           int64                   `json:"id"`
	Before       string                  `json:"before"`
	After        string                  `json:"after"`
	Ref          string                  `json:"ref"`
	Timestamp    string                  `json:"timestamp"`
	ActivityType string                  `json:"activity_type"`
	Actor        *struct{ Login string } `json:"actor"`
}

func (a activityItem) String() string {
	actor := "<null>"
	if a.Actor != nil {
		actor = a.Actor.Login
	}
	return fmt.Sprintf("%s %s %s..%s by %s", a.ActivityType, a.Ref, a.Before, a.After, actor)
}

func listActivityOK(t *testing.T, s *Server, query string) ([]activityItem, answer) {
	t.Helper()
	a := do(t, s, "GET", "/repos/acme/widgets/activity"+query, tok, "")
	if a.status != 200 {
		t.Fatalf("GET activity%s: %d %s", query, a.status, a.body)
	}
	var items []activityItem
	if err := json.Unmarshal(a.body, &items); err != nil {
		t.Fatalf("decode %s: %v", a.body, err)
	}
	return items, a
}

func summaries(items []activityItem) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.String())
	}
	return out
}

func TestPushRecordsActivity(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(s *Server)
		push     Push
		wantType string
		want     string
	}{
		{name: "a new branch is a branch_creation from forty zeros",
			push: Push{Ref: "feature", After: "a1", Actor: "alice"}, wantType: "branch_creation",
			want: "branch_creation refs/heads/feature " + zeroSHA + "..a1 by alice"},
		{name: "a fast-forward is a push", setup: func(s *Server) { s.SetBranch("acme", "widgets", "feature", "a1") },
			push: Push{Ref: "feature", After: "a2", Actor: "alice"}, want: "push refs/heads/feature a1..a2 by alice"},
		{name: "a forced update is a force_push", setup: func(s *Server) { s.SetBranch("acme", "widgets", "feature", "a1") },
			push: Push{Ref: "refs/heads/feature", After: "b1", Actor: "mallory", Force: true},
			want: "force_push refs/heads/feature a1..b1 by mallory"},
		{name: "a push with no account has actor null", setup: func(s *Server) { s.SetBranch("acme", "widgets", "main", "m1") },
			push: Push{Ref: "main", After: "m2"}, want: "push refs/heads/main m1..m2 by <null>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := activityServer(t)
			if tt.setup != nil {
				tt.setup(s)
			}
			s.Push("acme", "widgets", tt.push)
			items, _ := listActivityOK(t, s, "")
			if got := summaries(items); !reflect.DeepEqual(got, []string{tt.want}) {
				t.Fatalf("activity %q, want %q", got, tt.want)
			}
			if items[0].Timestamp != "2024-05-01T12:00:00Z" {
				t.Fatalf("timestamp %s, want the fake's clock", items[0].Timestamp)
			}
			log := s.Activity("acme", "widgets")
			if len(log) != 1 || log[0].ID != items[0].ID || log[0].Actor != tt.push.Actor || !log[0].Timestamp.Equal(epoch) {
				t.Fatalf("Activity() = %+v, listing %+v", log, items)
			}
		})
	}
}

func TestPushMovesTheBranch(t *testing.T) {
	// shas of 40 characters: git/ref answers them, and the description
	// requires that length
	a1, a2 := strings.Repeat("1", 40), strings.Repeat("2", 40)
	s, _ := activityServer(t)
	s.SetBranch("acme", "widgets", "feature", a1)
	s.SetFile("acme", "widgets", "feature", "x.txt", []byte("old"))
	s.SetFile("acme", "widgets", a2, "x.txt", []byte("new"))
	pr := s.AddPullRequest("acme", "widgets", PullRequest{HeadRef: "feature", HeadSHA: a1, Author: "alice"})
	if a := do(t, s, "POST", "/repos/acme/widgets/statuses/"+a2, tok, `{"state":"success","context":"ci"}`); a.status != 201 {
		t.Fatalf("create status: %d %s", a.status, a.body)
	}
	s.Push("acme", "widgets", Push{Ref: "feature", After: a2, Actor: "alice"})

	tests := []struct {
		name, path, want string
	}{
		{name: "git ref", path: "/repos/acme/widgets/git/ref/heads/feature", want: `"sha":"` + a2 + `"`},
		{name: "contents by branch name", path: "/repos/acme/widgets/contents/x.txt?ref=feature", want: `"content":"bmV3\n"`},
		{name: "contents of the old sha", path: "/repos/acme/widgets/contents/x.txt?ref=" + a1, want: `"content":"b2xk\n"`},
		{name: "statuses by branch name", path: "/repos/acme/widgets/commits/feature/statuses", want: `"context":"ci"`},
		{name: "the pull request's head", path: fmt.Sprintf("/repos/acme/widgets/pulls/%d", pr), want: `"sha":"` + a2 + `"`},
		{name: "commit pulls by the old head", path: "/repos/acme/widgets/commits/" + a1 + "/pulls", want: fmt.Sprintf(`"number":%d`, pr)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := do(t, s, "GET", tt.path, tok, "")
			if a.status != 200 || !strings.Contains(string(a.body), tt.want) {
				t.Fatalf("GET %s: %d %s, want it to contain %s", tt.path, a.status, a.body, tt.want)
			}
		})
	}
	if a := do(t, s, "GET", "/repos/acme/widgets/git/ref/heads/nope", tok, ""); a.status != 404 {
		t.Fatalf("unknown branch: %d", a.status)
	}
	s.DeleteBranch("acme", "widgets", "feature", "alice")
	if a := do(t, s, "GET", "/repos/acme/widgets/git/ref/heads/feature", tok, ""); a.status != 404 {
		t.Fatalf("deleted branch: %d", a.status)
	}
	items, _ := listActivityOK(t, s, "")
	want := []string{"branch_deletion refs/heads/feature " + a2 + ".." + zeroSHA + " by alice", "push refs/heads/feature " + a1 + ".." + a2 + " by alice"}
	if got := summaries(items); !reflect.DeepEqual(got, want) {
		t.Fatalf("activity %q, want %q", got, want)
	}
}

func TestActivityQueryParameters(t *testing.T) {
	s, clock := activityServer(t)
	s.AddActivity("acme", "widgets", Activity{Type: "push", Ref: "main", Before: "o1", After: "o2", Actor: "alice",
		Timestamp: epoch.AddDate(0, -2, 0)})
	s.SetBranch("acme", "widgets", "main", "m1")
	s.Push("acme", "widgets", Push{Ref: "main", After: "m2", Actor: "alice"})
	clock.Advance(time.Hour)
	s.Push("acme", "widgets", Push{Ref: "feature", After: "f1", Actor: "bob"})
	clock.Advance(time.Hour)
	s.Push("acme", "widgets", Push{Ref: "feature", After: "g1", Actor: "Bob", Force: true})
	s.AddActivity("acme", "widgets", Activity{Type: "pr_merge", Ref: "refs/heads/main", Before: "m2", After: "m3", Actor: "carol"})
	clock.Advance(48 * time.Hour)

	var (
		merge    = "pr_merge refs/heads/main m2..m3 by carol"
		force    = "force_push refs/heads/feature f1..g1 by bob" // the login as the account spells it
		creation = "branch_creation refs/heads/feature " + zeroSHA + "..f1 by bob"
		push     = "push refs/heads/main m1..m2 by alice"
		old      = "push refs/heads/main o1..o2 by alice"
	)
	tests := []struct {
		name  string
		query string
		want  []string
	}{
		{name: "newest first by default", query: "", want: []string{merge, force, creation, push, old}},
		{name: "direction asc", query: "?direction=asc", want: []string{old, push, creation, force, merge}},
		{name: "ref as a branch name", query: "?ref=feature", want: []string{force, creation}},
		{name: "ref as refs/heads/", query: "?ref=refs/heads/main", want: []string{merge, push, old}},
		{name: "unknown ref", query: "?ref=nope", want: []string{}},
		{name: "actor, any case", query: "?actor=BOB", want: []string{force, creation}},
		{name: "activity_type", query: "?activity_type=force_push", want: []string{force}},
		{name: "time_period week", query: "?time_period=week", want: []string{merge, force, creation, push}},
		{name: "time_period day", query: "?time_period=day", want: []string{}},
		{name: "time_period quarter", query: "?time_period=quarter", want: []string{merge, force, creation, push, old}},
		{name: "filters combine", query: "?ref=main&actor=alice&direction=asc", want: []string{old, push}},
		{name: "per_page", query: "?per_page=2", want: []string{merge, force}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, _ := listActivityOK(t, s, tt.query)
			if got := summaries(items); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q\nwant %q", got, tt.want)
			}
		})
	}
	// The 422 bodies are checked against the operation's documented 422
	// (validation-error-simple) by TestMain's validator.
	for _, q := range []string{"?direction=up", "?time_period=decade", "?activity_type=tag_creation", "?after=garbage", "?per_page=0"} {
		t.Run("422 for "+q, func(t *testing.T) {
			a := do(t, s, "GET", "/repos/acme/widgets/activity"+q, tok, "")
			var v any
			if err := json.Unmarshal(a.body, &v); err != nil || a.status != 422 {
				t.Fatalf("%d %s", a.status, a.body)
			}
		})
	}
	if a := do(t, s, "GET", "/repos/acme/nothing/activity", tok, ""); a.status != 404 {
		t.Fatalf("unknown repository: %d", a.status)
	}
}

func TestActivityDefaultAndMaxPageSize(t *testing.T) {
	s, _ := activityServer(t)
	for i := range 150 {
		s.Push("acme", "widgets", Push{Ref: "main", After: fmt.Sprintf("s%03d", i), Actor: "alice"})
	}
	tests := []struct {
		query string
		want  int
	}{{"", 30}, {"?per_page=100", 100}, {"?per_page=500", 100}} // GitHub's default 30 and maximum 100
	for _, tt := range tests {
		t.Run("per_page "+tt.query, func(t *testing.T) {
			items, a := listActivityOK(t, s, tt.query)
			if len(items) != tt.want {
				t.Fatalf("%d items, want %d", len(items), tt.want)
			}
			if next := linkRel(t, a, "next"); next.Get("per_page") != fmt.Sprint(tt.want) {
				t.Fatalf("next link per_page %q, want %d", next.Get("per_page"), tt.want)
			}
		})
	}
}

// linkRel parses the query of the Link header's rel link; nil when absent.
func linkRel(t *testing.T, a answer, rel string) url.Values {
	t.Helper()
	for _, part := range strings.Split(a.header.Get("Link"), ", ") {
		target, r, ok := strings.Cut(part, "; ")
		if !ok || r != `rel="`+rel+`"` {
			continue
		}
		u, err := url.Parse(strings.Trim(target, "<>"))
		if err != nil {
			t.Fatalf("link %q: %v", part, err)
		}
		return u.Query()
	}
	return nil
}

func TestActivityCursorPagination(t *testing.T) {
	s, clock := activityServer(t)
	var want []string
	for i := range 7 {
		s.Push("acme", "widgets", Push{Ref: "main", After: fmt.Sprintf("s%d", i), Actor: "alice"})
		if i%2 == 0 {
			clock.Advance(time.Second) // some share a timestamp: the id breaks the tie
		}
	}
	for _, a := range s.Activity("acme", "widgets") {
		want = append(want, a.After)
	}
	// Forward through every page with the next links.
	var got []string
	var pages []answer
	query := "?ref=main&per_page=3"
	for range 10 {
		items, a := listActivityOK(t, s, query)
		pages = append(pages, a)
		for _, it := range items {
			got = append(got, it.After)
		}
		next := linkRel(t, a, "next")
		if next == nil {
			break
		}
		if next.Get("after") == "" || next.Get("page") != "" || next.Get("ref") != "main" {
			t.Fatalf("next link %v: want an after cursor, no page, the same filters", next)
		}
		if linkRel(t, a, "last") != nil {
			t.Fatal("a cursor listing has no last link")
		}
		query = "?" + next.Encode()
	}
	if !reflect.DeepEqual(got, want) || len(pages) != 3 {
		t.Fatalf("walked %q over %d pages, want %q over 3", got, len(pages), want)
	}
	if linkRel(t, pages[0], "prev") != nil {
		t.Fatal("the first page has a prev link")
	}
	// Back from the last page with the prev link.
	prev := linkRel(t, pages[2], "prev")
	if prev == nil || prev.Get("before") == "" {
		t.Fatalf("last page's prev link %v", prev)
	}
	items, _ := listActivityOK(t, s, "?"+prev.Encode())
	var back []string
	for _, it := range items {
		back = append(back, it.After)
	}
	if !reflect.DeepEqual(back, want[3:6]) {
		t.Fatalf("prev page %q, want %q", back, want[3:6])
	}
	// A cursor stays put when newer activity arrives.
	s.Push("acme", "widgets", Push{Ref: "main", After: "s7", Actor: "alice"})
	next := linkRel(t, pages[0], "next")
	items, _ = listActivityOK(t, s, "?"+next.Encode())
	if items[0].After != want[3] {
		t.Fatalf("page 2 after a new push starts at %s, want %s", items[0].After, want[3])
	}
}

func TestActivityConditionalRequests(t *testing.T) {
	s, _ := activityServer(t)
	s.Push("acme", "widgets", Push{Ref: "main", After: "s1", Actor: "alice"})
	first := do(t, s, "GET", "/repos/acme/widgets/activity?ref=main", tok, "")
	etag := first.header.Get("ETag")
	if first.status != 200 || etag == "" {
		t.Fatalf("%d etag %q", first.status, etag)
	}
	again := do(t, s, "GET", "/repos/acme/widgets/activity?ref=main", tok, "", "If-None-Match", etag)
	if again.status != 304 || len(again.body) != 0 {
		t.Fatalf("unchanged: %d %s", again.status, again.body)
	}
	s.Push("acme", "widgets", Push{Ref: "main", After: "s2", Actor: "alice"})
	changed := do(t, s, "GET", "/repos/acme/widgets/activity?ref=main", tok, "", "If-None-Match", etag)
	if changed.status != 200 || changed.header.Get("ETag") == etag {
		t.Fatalf("after a push: %d etag %q", changed.status, changed.header.Get("ETag"))
	}
	calls := s.Calls()
	var got []string
	for _, c := range calls {
		if c.Path == "/repos/acme/widgets/activity" {
			got = append(got, fmt.Sprintf("%s %s %d %v", c.Method, c.Query, c.Status, c.Conditional))
		}
	}
	want := []string{"GET ref=main 200 false", "GET ref=main 304 true", "GET ref=main 200 true"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("call log %q, want %q", got, want)
	}
}

func TestAddActivityRejectsUnknownTypes(t *testing.T) {
	s, _ := activityServer(t)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for an activity type GitHub does not have")
		}
	}()
	s.AddActivity("acme", "widgets", Activity{Type: "tag_creation", Ref: "main"})
}
