package ghclient

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/ghfake"
)

const zeros = "0000000000000000000000000000000000000000"

func TestRefPushes(t *testing.T) {
	tests := []struct {
		name  string
		setup func(f *ghfake.Server, clock *ghfake.ManualClock)
		ref   string
		want  []Push
	}{
		{name: "a push", ref: "feature",
			setup: func(f *ghfake.Server, _ *ghfake.ManualClock) {
				f.SetBranch(owner, repo, "feature", "a1")
				f.Push(owner, repo, ghfake.Push{Ref: "feature", After: "a2", Actor: "alice"})
			},
			want: []Push{{Actor: "alice", Type: "push", Ref: "refs/heads/feature", Before: "a1", After: "a2", At: epoch}}},
		{name: "a force push", ref: "feature",
			setup: func(f *ghfake.Server, _ *ghfake.ManualClock) {
				f.SetBranch(owner, repo, "feature", "a1")
				f.Push(owner, repo, ghfake.Push{Ref: "feature", After: "b1", Actor: "mallory", Force: true})
			},
			want: []Push{{Actor: "mallory", Type: "force_push", Ref: "refs/heads/feature", Before: "a1", After: "b1", At: epoch}}},
		{name: "a branch creation", ref: "feature",
			setup: func(f *ghfake.Server, _ *ghfake.ManualClock) {
				f.Push(owner, repo, ghfake.Push{Ref: "feature", After: "a1", Actor: "alice"})
			},
			want: []Push{{Actor: "alice", Type: "branch_creation", Ref: "refs/heads/feature", Before: zeros, After: "a1", At: epoch}}},
		{name: "a push with no account (actor null)", ref: "feature",
			setup: func(f *ghfake.Server, _ *ghfake.ManualClock) {
				f.SetBranch(owner, repo, "feature", "a1")
				f.Push(owner, repo, ghfake.Push{Ref: "feature", After: "a2"})
			},
			want: []Push{{Actor: "", Type: "push", Ref: "refs/heads/feature", Before: "a1", After: "a2", At: epoch}}},
		{name: "deletions, merges and other branches are left out, newest first", ref: "refs/heads/main",
			setup: func(f *ghfake.Server, clock *ghfake.ManualClock) {
				f.Push(owner, repo, ghfake.Push{Ref: "main", After: "m1", Actor: "alice"})
				clock.Advance(time.Minute)
				f.Push(owner, repo, ghfake.Push{Ref: "feature", After: "f1", Actor: "bob"})
				f.AddActivity(owner, repo, ghfake.Activity{Type: "pr_merge", Ref: "main", Before: "m1", After: "m2", Actor: "carol"})
				f.AddActivity(owner, repo, ghfake.Activity{Type: "merge_queue_merge", Ref: "main", Before: "m2", After: "m3", Actor: "carol"})
				clock.Advance(time.Minute)
				f.DeleteBranch(owner, repo, "main", "alice")
				f.Push(owner, repo, ghfake.Push{Ref: "main", After: "m9", Actor: "bob"})
			},
			want: []Push{
				{Actor: "bob", Type: "branch_creation", Ref: "refs/heads/main", Before: zeros, After: "m9", At: epoch.Add(2 * time.Minute)},
				{Actor: "alice", Type: "branch_creation", Ref: "refs/heads/main", Before: zeros, After: "m1", At: epoch},
			}},
		{name: "a ref with no activity", ref: "nothing", want: []Push{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Options{})
			if tt.setup != nil {
				tt.setup(e.fake, e.clock)
			}
			got, err := e.c.RefPushes(ctxT(t), owner, repo, tt.ref)
			if err != nil {
				t.Fatalf("RefPushes: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
			calls := e.fake.Calls()
			if len(calls) != 1 || calls[0].Path != "/repos/acme/widgets/activity" ||
				strings.Contains(calls[0].Query, "activity_type") || !strings.Contains(calls[0].Query, "per_page=100") ||
				!strings.Contains(calls[0].Query, "ref=refs%2Fheads%2F") {
				t.Fatalf("calls %+v, want one listing of the ref's activity", calls)
			}
		})
	}
}

// pushes records n pushes to main (the first creates it), one second apart,
// and returns their after shas newest first.
func pushes(f *ghfake.Server, clock *ghfake.ManualClock, n int) []string {
	var afters []string
	for i := range n {
		after := fmt.Sprintf("%040d", i+1)
		f.Push(owner, repo, ghfake.Push{Ref: "main", After: after, Actor: "alice", Force: i%10 == 9})
		afters = append([]string{after}, afters...)
		clock.Advance(time.Second)
	}
	return afters
}

func TestRefPushesPagination(t *testing.T) {
	tests := []struct {
		name          string
		pushes        int
		wantPages     int
		wantLen       int
		wantTruncated bool
	}{
		{name: "one page", pushes: smallPage, wantPages: 1, wantLen: smallPage},
		{name: "three pages by cursor", pushes: 2*smallPage + 3, wantPages: 3, wantLen: 2*smallPage + 3},
		{name: "ten full pages", pushes: 10 * smallPage, wantPages: 10, wantLen: 10 * smallPage},
		{name: "more than ten pages is truncated", pushes: 10*smallPage + 1, wantPages: 10, wantLen: 10 * smallPage, wantTruncated: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each on its own fake
			e := newEnv(t, Options{perPage: smallPage})
			afters := pushes(e.fake, e.clock, tt.pushes)
			got, err := e.c.RefPushes(ctxT(t), owner, repo, "main")
			if tt.wantTruncated != errors.Is(err, ErrTruncated) || (!tt.wantTruncated && err != nil) {
				t.Fatalf("err = %v, want truncated %v", err, tt.wantTruncated)
			}
			if tt.wantTruncated && !strings.Contains(err.Error(), "acme/widgets") {
				t.Fatalf("error %q does not name the repository", err)
			}
			if len(got) != tt.wantLen {
				t.Fatalf("%d pushes, want %d", len(got), tt.wantLen)
			}
			for i, p := range got {
				if p.After != afters[i] {
					t.Fatalf("push %d is %s, want %s (newest first)", i, p.After, afters[i])
				}
			}
			var queries []string
			for _, c := range e.fake.Calls() {
				queries = append(queries, c.Query)
			}
			if len(queries) != tt.wantPages {
				t.Fatalf("%d requests, want %d", len(queries), tt.wantPages)
			}
			for i, q := range queries {
				v, err := url.ParseQuery(q)
				if err != nil || (i > 0) != (v.Get("after") != "") || v.Get("page") != "" || v.Get("per_page") != fmt.Sprint(smallPage) {
					t.Fatalf("request %d query %q: want per_page=%d and an after cursor from the second page on", i, q, smallPage)
				}
			}
		})
	}
}

func TestRefPushesConditional(t *testing.T) {
	e := newEnv(t, Options{perPage: smallPage})
	pushes(e.fake, e.clock, smallPage+smallPage/2) // a full page and a partial one
	ctx := ctxT(t)
	first, err := e.c.RefPushes(ctx, owner, repo, "main")
	if err != nil {
		t.Fatal(err)
	}
	before := e.c.Stats().NotModified
	again, err := e.c.RefPushes(ctx, owner, repo, "refs/heads/main") // the same request as "main"
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(first, again) {
		t.Fatal("a re-read of unchanged activity differs")
	}
	if got := e.c.Stats().NotModified - before; got != 2 {
		t.Fatalf("%d 304s on the re-read, want 2 (both pages)", got)
	}
	if got := statuses(e.fake, "GET", "/repos/acme/widgets/activity"); !reflect.DeepEqual(got, []int{200, 200, 304, 304}) {
		t.Fatalf("statuses %v", got)
	}
	e.fake.Push(owner, repo, ghfake.Push{Ref: "main", After: "new", Actor: "bob"})
	third, err := e.c.RefPushes(ctx, owner, repo, "main")
	if err != nil || len(third) != smallPage+smallPage/2+1 || third[0].After != "new" || third[0].Actor != "bob" {
		t.Fatalf("after a new push: %d pushes, first %+v, %v", len(third), third[0], err)
	}
}

func TestRefPushesErrors(t *testing.T) {
	tests := []struct {
		name         string
		repo, ref    string
		fail         int
		wantNotFound bool
		wantErr      string
	}{
		{name: "unknown repository", repo: "nothing", ref: "main", wantNotFound: true, wantErr: "acme/nothing"},
		{name: "no ref", repo: repo, ref: " ", wantErr: "no ref"},
		{name: "server error", repo: repo, ref: "main", fail: 500, wantErr: "list pushes to refs/heads/main in acme/widgets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Options{MaxAttempts: 1})
			if tt.fail != 0 {
				e.fake.FailNext(1, tt.fail, "/activity")
			}
			got, err := e.c.RefPushes(ctxT(t), owner, tt.repo, tt.ref)
			if err == nil || got != nil || !strings.Contains(err.Error(), tt.wantErr) || IsNotFound(err) != tt.wantNotFound {
				t.Fatalf("got %v, %v; want an error containing %q (404: %v)", got, err, tt.wantErr, tt.wantNotFound)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	files := []ghfake.File{{Filename: "a.yaml", Status: "added"}, {Filename: "new.yaml", Status: "renamed", PreviousFilename: "old.yaml"}}
	wantFiles := map[string]string{"a.yaml": "added", "new.yaml": "renamed", "old.yaml": "removed"}
	tests := []struct {
		name string
		cmp  ghfake.Comparison
		want Comparison
	}{
		{name: "ahead", cmp: ghfake.Comparison{Status: "ahead", Files: files},
			want: Comparison{Status: "ahead", Files: wantFiles, MergeBase: "b1"}},
		{name: "behind", cmp: ghfake.Comparison{Status: "behind", BehindBy: 3},
			want: Comparison{Status: "behind", Files: map[string]string{}, MergeBase: "h1"}},
		{name: "diverged", cmp: ghfake.Comparison{Status: "diverged", MergeBase: "mb", Files: files},
			want: Comparison{Status: "diverged", Files: wantFiles, MergeBase: "mb"}},
		{name: "identical", cmp: ghfake.Comparison{Status: "identical"},
			want: Comparison{Status: "identical", Files: map[string]string{}, MergeBase: "b1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Options{})
			e.fake.SetBranch(owner, repo, "main", "b1")
			e.fake.SetBranch(owner, repo, "feature", "h1")
			e.fake.SetComparison(owner, repo, "main", "feature", tt.cmp)
			got, err := e.c.Compare(ctxT(t), owner, repo, "main", "feature")
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, %v\nwant %+v", got, err, tt.want)
			}
		})
	}
	t.Run("over 300 files is truncated", func(t *testing.T) {
		e := newEnv(t, Options{})
		var many []ghfake.File
		for i := range 301 {
			many = append(many, ghfake.File{Filename: fmt.Sprintf("f%d", i), Status: "modified"})
		}
		e.fake.SetCompare(owner, repo, "a", "b", many)
		got, err := e.c.Compare(ctxT(t), owner, repo, "a", "b")
		if !errors.Is(err, ErrTruncated) || len(got.Files) != 300 || got.Status != "ahead" {
			t.Fatalf("%d files, status %q, %v", len(got.Files), got.Status, err)
		}
	})
	t.Run("unknown comparison", func(t *testing.T) {
		e := newEnv(t, Options{})
		if _, err := e.c.Compare(ctxT(t), owner, repo, "a", "b"); !IsNotFound(err) || !strings.Contains(err.Error(), "acme/widgets") {
			t.Fatalf("err = %v, want a 404 naming the repository", err)
		}
	})
}

func TestStatusHistory(t *testing.T) {
	e := newEnv(t, Options{})
	ctx := ctxT(t)
	set := []Status{
		{State: "pending", Context: "phasegate/decisions", Description: "1"},
		{State: "success", Context: "phasegate/contracts", Description: "2"},
		{State: "pending", Context: "ci", Description: "3"},
		{State: "failure", Context: "phasegate/decisions", Description: "4"},
		{State: "success", Context: "phasegate/decisions", Description: "5"},
		{State: "failure", Context: "phasegate/contracts", Description: "6"},
	}
	for _, s := range set {
		if err := e.c.CreateStatus(ctx, owner, repo, "c1", s); err != nil {
			t.Fatal(err)
		}
	}
	descs := func(list []Status) string {
		var out []string
		for _, s := range list {
			out = append(out, s.Context+":"+s.State+":"+s.Description)
		}
		return strings.Join(out, " ")
	}
	tests := []struct {
		name     string
		contexts []string
		want     string
	}{
		{name: "one context", contexts: []string{"phasegate/decisions"},
			want: "phasegate/decisions:success:5 phasegate/decisions:failure:4 phasegate/decisions:pending:1"},
		{name: "two contexts, interleaved newest first", contexts: []string{"phasegate/decisions", "phasegate/contracts"},
			want: "phasegate/contracts:failure:6 phasegate/decisions:success:5 phasegate/decisions:failure:4 phasegate/contracts:success:2 phasegate/decisions:pending:1"},
		{name: "a context never set", contexts: []string{"nope"}, want: ""},
		{name: "no context: every status", want: "phasegate/contracts:failure:6 phasegate/decisions:success:5 phasegate/decisions:failure:4 ci:pending:3 phasegate/contracts:success:2 phasegate/decisions:pending:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.fake.ResetCalls()
			got, err := e.c.StatusHistory(ctx, owner, repo, "c1", tt.contexts...)
			if err != nil || descs(got) != tt.want {
				t.Fatalf("got %q, %v\nwant %q", descs(got), err, tt.want)
			}
			if n := e.fake.CountCalls("GET", "/repos/acme/widgets/commits/c1/statuses"); n != 1 {
				t.Fatalf("%d listings, want one for all contexts", n)
			}
			for _, s := range got {
				if s.Creator != botLogin {
					t.Fatalf("creator %q", s.Creator)
				}
			}
		})
	}
	t.Run("the history of one context", func(t *testing.T) {
		got, err := e.c.StatusHistory(ctx, owner, repo, "c1", "phasegate/contracts")
		if err != nil || descs(got) != "phasegate/contracts:failure:6 phasegate/contracts:success:2" {
			t.Fatalf("got %q, %v", descs(got), err)
		}
	})
	t.Run("at most three pages", func(t *testing.T) {
		e := newEnv(t, Options{perPage: smallPage})
		for i := range 3*smallPage + 3 {
			if err := e.c.CreateStatus(ctx, owner, repo, "c2", Status{State: "pending", Context: "ci", Description: fmt.Sprint(i)}); err != nil {
				t.Fatal(err)
			}
		}
		e.fake.ResetCalls()
		got, err := e.c.StatusHistory(ctx, owner, repo, "c2", "ci")
		if err != nil || len(got) != 3*smallPage || got[0].Description != fmt.Sprint(3*smallPage+2) {
			t.Fatalf("%d statuses, %v", len(got), err)
		}
		if n := e.fake.CountCalls("GET", "/repos/acme/widgets/commits/c2/statuses"); n != 3 {
			t.Fatalf("%d pages read, want 3", n)
		}
	})
}

// TestLabelEvents: who labelled an issue, oldest first; past 10 pages the
// events read come with ErrTruncated, never as the whole history.
func TestLabelEvents(t *testing.T) {
	tests := []struct {
		name          string
		labels        int
		wantTruncated bool
		wantLen       int
	}{
		{name: "within 10 pages", labels: 2*smallPage + 1, wantLen: 2*smallPage + 1},
		{name: "past 10 pages", labels: 10*smallPage + 1, wantTruncated: true, wantLen: 10 * smallPage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Options{perPage: smallPage})
			n := e.fake.AddIssue(owner, repo, "Feature", "", "alice")
			var labels []string
			for i := range tt.labels {
				labels = append(labels, fmt.Sprintf("l%02d", i))
			}
			if err := e.c.AddLabels(ctxT(t), owner, repo, n, labels); err != nil {
				t.Fatal(err)
			}
			got, err := e.c.LabelEvents(ctxT(t), owner, repo, n)
			if tt.wantTruncated != errors.Is(err, ErrTruncated) || (!tt.wantTruncated && err != nil) {
				t.Fatalf("err = %v, want truncated %v", err, tt.wantTruncated)
			}
			if len(got) != tt.wantLen || got[0] != (LabelEvent{Event: "labeled", Label: "l00", Actor: botLogin}) {
				t.Fatalf("%d events, first %+v; want %d", len(got), got[0], tt.wantLen)
			}
		})
	}
}
