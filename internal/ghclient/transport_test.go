package ghclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/ghfake"
)

func TestConditionalRequests(t *testing.T) {
	e := newEnv(t, Options{perPage: smallPage})
	ctx := ctxT(t)
	n := e.fake.AddIssue(owner, repo, "Feature", "", "alice")
	for i := 0; i < 2*smallPage+3; i++ { // three pages, the last partial
		e.fake.AddComment(owner, repo, n, "alice", fmt.Sprintf("comment %d", i))
	}
	first, err := e.c.ListIssueComments(ctx, owner, repo, n)
	if err != nil {
		t.Fatal(err)
	}
	remaining := e.fake.RateRemaining(botLogin)

	e.fake.ResetCalls()
	second, err := e.c.ListIssueComments(ctx, owner, repo, n)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(first, second) {
		t.Fatal("the revalidated listing differs from the first")
	}
	calls := e.fake.Calls()
	if len(calls) != 3 {
		t.Fatalf("%d requests, want 3", len(calls))
	}
	for _, c := range calls {
		if !c.Conditional || c.Status != http.StatusNotModified {
			t.Fatalf("call %+v, want a conditional request answered 304", c)
		}
	}
	if got := e.c.Stats().NotModified; got != 3 {
		t.Fatalf("NotModified = %d, want 3", got)
	}
	if got := e.fake.RateRemaining(botLogin); got != remaining {
		t.Fatalf("rate remaining %d after 304s, was %d: 304s must be free", got, remaining)
	}
	if r, ok := e.c.RateLimit(); !ok || r.Remaining != remaining || r.Limit != ghfake.DefaultRateLimit {
		t.Fatalf("RateLimit() = %+v, %v; want remaining %d", r, ok, remaining)
	}

	// A new comment changes only the last page.
	e.fake.AddComment(owner, repo, n, "bob", "new")
	e.fake.ResetCalls()
	third, err := e.c.ListIssueComments(ctx, owner, repo, n)
	if err != nil {
		t.Fatal(err)
	}
	if len(third) != 2*smallPage+4 || third[2*smallPage+3].Body != "new" {
		t.Fatalf("%d comments, last %q", len(third), third[len(third)-1].Body)
	}
	if got, want := statuses(e.fake, "GET", "/repos/acme/widgets/issues/"), []int{304, 304, 200}; !reflect.DeepEqual(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}

	// An edited comment (tampering) is seen at once: its page's ETag changes.
	e.fake.EditComment(third[5].ID, "edited")
	fourth, err := e.c.ListIssueComments(ctx, owner, repo, n)
	if err != nil || fourth[5].Body != "edited" {
		t.Fatalf("after an edit: %v, body %q", err, fourth[5].Body)
	}
}

func TestConditionalRequestsPerIdentity(t *testing.T) {
	e := newEnv(t, Options{})
	e.fake.AddToken("tok-other", "other")
	other, err := New(Options{BaseURL: e.fake.URL(), Token: "tok-other", Now: e.clock.Now, Sleep: e.clock.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	if _, err := e.c.DefaultBranch(ctx, owner, repo); err != nil {
		t.Fatal(err)
	}
	e.fake.ResetCalls()
	if _, err := other.DefaultBranch(ctx, owner, repo); err != nil {
		t.Fatal(err)
	}
	if c := e.fake.Calls(); len(c) != 1 || c[0].Conditional {
		t.Fatalf("calls %+v: another identity must not revalidate this one's cache", c)
	}
}

func TestETagCacheBounds(t *testing.T) {
	tests := []struct {
		name       string
		maxEntries int
		maxBytes   int64
		puts       []int // body sizes
		wantKeys   []string
	}{
		{name: "entries bound evicts least recently used", maxEntries: 2, maxBytes: 1 << 20, puts: []int{10, 10, 10},
			wantKeys: []string{"k1", "k2"}},
		{name: "bytes bound", maxEntries: 100, maxBytes: 8000, puts: []int{1000, 1000, 1000, 1000, 1000, 1000},
			wantKeys: []string{"k1", "k2", "k3", "k4", "k5"}},
		{name: "oversized entry is not kept", maxEntries: 100, maxBytes: 4 * 1024, puts: []int{10, 5000},
			wantKeys: []string{"k0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newETagCache(tt.maxEntries, tt.maxBytes)
			for i, size := range tt.puts {
				c.put(&cacheEntry{key: fmt.Sprintf("k%d", i), etag: "e", header: http.Header{}, body: make([]byte, size)})
			}
			var keys []string
			for i := range tt.puts {
				if _, ok := c.get(fmt.Sprintf("k%d", i)); ok {
					keys = append(keys, fmt.Sprintf("k%d", i))
				}
			}
			if !reflect.DeepEqual(keys, tt.wantKeys) {
				t.Fatalf("kept %v, want %v", keys, tt.wantKeys)
			}
			if c.bytes > tt.maxBytes || c.ll.Len() > tt.maxEntries {
				t.Fatalf("cache over its bounds: %d bytes, %d entries", c.bytes, c.ll.Len())
			}
		})
	}
	t.Run("get refreshes recency", func(t *testing.T) {
		c := newETagCache(2, 1<<20)
		c.put(&cacheEntry{key: "a", header: http.Header{}})
		c.put(&cacheEntry{key: "b", header: http.Header{}})
		c.get("a")
		c.put(&cacheEntry{key: "c", header: http.Header{}})
		if _, ok := c.get("b"); ok {
			t.Fatal("b should have been evicted")
		}
		if _, ok := c.get("a"); !ok {
			t.Fatal("a was used recently and should stay")
		}
	})
}

// scenario exercises every method once or more; its result is compared
// between a clean run and a faulty one.
func scenario(ctx context.Context, t *testing.T, e *env) []string {
	t.Helper()
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("scenario: %v", err)
		}
	}
	br, err := e.c.DefaultBranch(ctx, owner, repo)
	must(err)
	add("branch %s", br)
	cfg, found, err := e.c.FileContent(ctx, owner, repo, ".github/phasegate.yml", "")
	must(err)
	add("config %v %q", found, cfg)
	comments, err := e.c.ListIssueComments(ctx, owner, repo, 1)
	must(err)
	add("comments %d, first %d %s %q, last %d %s %q", len(comments), comments[0].ID, comments[0].User, comments[0].Body,
		comments[len(comments)-1].ID, comments[len(comments)-1].User, comments[len(comments)-1].Body)
	for i := 0; i < 3; i++ {
		c, err := e.c.CreateIssueComment(ctx, owner, repo, 1, fmt.Sprintf("<!-- phasegate:resolution v1 n=%d -->", i))
		must(err)
		add("posted %q by %s", c.Body, c.User)
	}
	must(e.c.AddLabels(ctx, owner, repo, 1, []string{"phasegate:pending", "phase:qa"}))
	must(e.c.RemoveLabel(ctx, owner, repo, 1, "phase:qa"))
	must(e.c.RemoveLabel(ctx, owner, repo, 1, "phase:qa"))
	labels, err := e.c.ListLabels(ctx, owner, repo, 1)
	must(err)
	add("labels %q", labels)
	must(e.c.CreateStatus(ctx, owner, repo, "h1", Status{State: "pending", Context: "phasegate/decisions", Description: "D-001 pending"}))
	must(e.c.CreateStatus(ctx, owner, repo, "h1", Status{State: "success", Context: "phasegate/contracts", Description: "SHIP"}))
	must(e.c.CreateCommentReaction(ctx, owner, repo, comments[0].ID, "eyes"))
	num, url, err := e.c.CreateIssue(ctx, owner, repo, "Captured: follow-up", "from #1", []string{"phasegate:captured"})
	must(err)
	add("issue %d %s", num, url)
	perm, err := e.c.CollaboratorPermission(ctx, owner, repo, "alice")
	must(err)
	member, err := e.c.TeamMember(ctx, owner, "leads", "alice")
	must(err)
	add("alice %s %v", perm, member)
	pr, err := e.c.PullRequest(ctx, owner, repo, 2)
	must(err)
	add("pr %+v", pr)
	prs, err := e.c.ListOpenPullRequests(ctx, owner, repo)
	must(err)
	add("open prs %d", len(prs))
	prs, err = e.c.PullRequestsForCommit(ctx, owner, repo, "h1")
	must(err)
	add("prs for h1 %d", len(prs))
	cmp, err := e.c.Compare(ctx, owner, repo, "b1", "h1")
	must(err)
	add("compare %v", cmp.Files)
	ci, err := e.c.Commit(ctx, owner, repo, "h1")
	must(err)
	add("commit %s %s", ci.Author, ci.Committer)
	// The resulting state on the server.
	for _, c := range e.fake.Comments(owner, repo, 1) {
		if c.User == botLogin {
			add("state comment %s %q", c.User, c.Body)
		}
	}
	add("state comments %d", len(e.fake.Comments(owner, repo, 1)))
	// A status set twice is one status: the latest per context is what
	// GitHub shows and branch protection reads.
	for _, ctxName := range []string{"phasegate/contracts", "phasegate/decisions"} {
		s, _ := e.fake.LatestStatus(owner, repo, "h1", ctxName)
		add("state status %s %s %q", s.Context, s.State, s.Description)
	}
	for _, r := range e.fake.Reactions(comments[0].ID) {
		add("state reaction %s %s", r.User, r.Content)
	}
	for _, is := range e.fake.Issues(owner, repo) {
		add("state issue %d %q %q", is.Number, is.Title, is.Labels)
	}
	return out
}

func seedScenario(f *ghfake.Server) {
	f.SetFile(owner, repo, "", ".github/phasegate.yml", []byte("resolvers:\n  permission: write\n"))
	n := f.AddIssue(owner, repo, "Feature 1", "", "alice")
	for i := 0; i < 2*smallPage+3; i++ { // three pages, as 230 comments on GitHub's 100
		f.AddComment(owner, repo, n, "alice", fmt.Sprintf("comment %d", i))
	}
	f.AddPullRequest(owner, repo, ghfake.PullRequest{Author: "alice", HeadSHA: "h1", BaseSHA: "b1"})
	f.SetPullRequestFiles(owner, repo, 2, []ghfake.File{{Filename: "a.yaml", Status: "added"}})
	f.SetCompare(owner, repo, "b1", "h1", []ghfake.File{{Filename: "a.yaml", Status: "added"}, {Filename: "b.yaml", Status: "modified"}})
	f.AddCommit(owner, repo, ghfake.Commit{SHA: "h0", Author: "agent", Files: []ghfake.File{{Filename: ".phase-outcomes/po.yaml", Status: "added"}}})
	f.AddCommit(owner, repo, ghfake.Commit{SHA: "h1", Author: "alice", Committer: "web-flow", Files: []ghfake.File{{Filename: "a.yaml", Status: "added"}}})
	f.SetPermission(owner, repo, "alice", "maintain")
	f.AddTeamMember(owner, "leads", "alice", "active")
}

func TestFaultsGiveTheSameResult(t *testing.T) {
	t.Parallel() // its own fakes; it runs beside the tests that wait in real time
	clean := newEnv(t, Options{perPage: smallPage})
	seedScenario(clean.fake)
	want := scenario(ctxT(t), t, clean)

	tests := []struct {
		name   string
		faults ghfake.Faults
		check  func(t *testing.T, e *env)
	}{
		{name: "30% 5xx", faults: ghfake.Faults{Seed: 7, ServerErrorRate: 0.3}, check: func(t *testing.T, e *env) {
			if n := countFault(e.fake, "5xx"); n < 5 {
				t.Fatalf("only %d injected 5xx", n)
			}
		}},
		{name: "30% 5xx, another seed", faults: ghfake.Faults{Seed: 12345, ServerErrorRate: 0.3}},
		{name: "secondary limits", faults: ghfake.Faults{Seed: 3, SecondaryRate: 0.2, RetryAfter: 3 * time.Second}, check: func(t *testing.T, e *env) {
			if e.c.Stats().RateLimitWaits == 0 {
				t.Fatal("no rate-limit wait")
			}
		}},
		{name: "lost responses to writes", faults: ghfake.Faults{Seed: 5, LostResponseRate: 0.5}, check: func(t *testing.T, e *env) {
			if countFault(e.fake, "lost-response") == 0 || e.c.Stats().GuardHits == 0 {
				t.Fatalf("lost responses %d, guard hits %d", countFault(e.fake, "lost-response"), e.c.Stats().GuardHits)
			}
		}},
		{name: "everything at once", faults: ghfake.Faults{Seed: 99, ServerErrorRate: 0.2, SecondaryRate: 0.05, LostResponseRate: 0.3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // a fake and a clock of its own
			e := newEnv(t, Options{perPage: smallPage})
			seedScenario(e.fake)
			e.fake.SetFaults(tt.faults)
			got := scenario(ctxT(t), t, e)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("result under faults differs:\n got %q\nwant %q", got, want)
			}
			if e.c.Stats().Retries == 0 {
				t.Fatal("no retries: the faults did not bite")
			}
			if tt.check != nil {
				tt.check(t, e)
			}
		})
	}
}

func countFault(f *ghfake.Server, fault string) int {
	n := 0
	for _, c := range f.Calls() {
		if c.Fault == fault {
			n++
		}
	}
	return n
}

func TestNonIdempotentWritesAreNotRepeatedBlindly(t *testing.T) {
	tests := []struct {
		name      string
		faults    ghfake.Faults
		wantPosts int // POSTs to the comments endpoint
		wantGuard int64
	}{
		// 5xx before processing: the guard finds nothing and posts again.
		{name: "5xx", faults: ghfake.Faults{Seed: 1, ServerErrorRate: 1, WritesOnly: true}, wantPosts: DefaultMaxAttempts},
		// The write happened but the answer was lost: the guard finds it.
		{name: "lost response", faults: ghfake.Faults{Seed: 1, LostResponseRate: 1}, wantPosts: 1, wantGuard: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Options{})
			n := e.fake.AddIssue(owner, repo, "Feature", "", "alice")
			e.fake.SetFaults(tt.faults)
			_, err := e.c.CreateIssueComment(ctxT(t), owner, repo, n, "resolution")
			posts := e.fake.CountCalls("POST", "/repos/acme/widgets/issues/")
			if posts != tt.wantPosts {
				t.Fatalf("%d POSTs, want %d", posts, tt.wantPosts)
			}
			stored := len(e.fake.Comments(owner, repo, n))
			if tt.wantGuard > 0 {
				if err != nil || stored != 1 || e.c.Stats().GuardHits != tt.wantGuard {
					t.Fatalf("err %v, %d comments, guard hits %d", err, stored, e.c.Stats().GuardHits)
				}
				return
			}
			if err == nil || StatusCode(err) < 500 || stored != 0 {
				t.Fatalf("err %v, %d comments: want the 5xx after the attempts ran out and nothing stored", err, stored)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		limitFor   time.Duration
		maxWait    time.Duration
		wantErr    bool
		wantMinSlp time.Duration
	}{
		{name: "403 honoured", status: 403, limitFor: 30 * time.Second, wantMinSlp: 30 * time.Second},
		{name: "429 honoured", status: 429, limitFor: 45 * time.Second, wantMinSlp: 45 * time.Second},
		{name: "beyond the max wait fails at once", status: 403, limitFor: 10 * time.Minute, maxWait: 2 * time.Minute, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Options{MaxRateLimitWait: tt.maxWait})
			e.fake.SecondaryLimit(tt.limitFor, tt.status)
			start := e.clock.Now()
			_, err := e.c.DefaultBranch(ctxT(t), owner, repo)
			if tt.wantErr {
				var rl *RateLimitError
				if !errors.As(err, &rl) || !rl.Secondary || rl.Status != tt.status {
					t.Fatalf("err = %v, want a secondary *RateLimitError", err)
				}
				if e.clock.TotalSlept() != 0 {
					t.Fatalf("slept %v before giving up", e.clock.TotalSlept())
				}
				if !strings.Contains(err.Error(), "secondary rate limit") {
					t.Fatalf("message %q", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("DefaultBranch: %v", err)
			}
			if waited := e.clock.Now().Sub(start); waited < tt.wantMinSlp || waited > tt.wantMinSlp+5*time.Second {
				t.Fatalf("waited %v, want about %v", waited, tt.wantMinSlp)
			}
			if got := statuses(e.fake, "GET", "/repos/"); !reflect.DeepEqual(got, []int{tt.status, 200}) {
				t.Fatalf("statuses %v: want exactly one refused and one retry after the wait", got)
			}
		})
	}
}

func TestRateLimitGateIsClientWide(t *testing.T) {
	e := newEnv(t, Options{MaxRateLimitWait: 10 * time.Second})
	n := e.fake.AddIssue(owner, repo, "Feature", "", "alice")
	e.fake.SecondaryLimit(20*time.Second, 403)
	var rl *RateLimitError
	if _, err := e.c.DefaultBranch(ctxT(t), owner, repo); !errors.As(err, &rl) {
		t.Fatalf("err = %v, want *RateLimitError", err)
	}
	// Another request, to another endpoint, made while the secondary limit
	// lasts is not sent at all: GitHub asks for no requests until then.
	e.fake.ResetCalls()
	if _, err := e.c.ListLabels(ctxT(t), owner, repo, n); !errors.As(err, &rl) || !rl.Secondary {
		t.Fatalf("err = %v, want a secondary *RateLimitError", err)
	}
	if calls := len(e.fake.Calls()); calls != 0 {
		t.Fatalf("%d requests sent during the limit", calls)
	}
	// Once the window has passed, requests flow again.
	e.clock.Advance(21 * time.Second)
	if _, err := e.c.ListLabels(ctxT(t), owner, repo, n); err != nil {
		t.Fatal(err)
	}
}

func TestPrimaryRateLimit(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		resetIn  time.Duration
		wantErr  bool
		wantWait time.Duration
	}{
		{name: "403 waits for the reset", status: 403, resetIn: 90 * time.Second, wantWait: 91 * time.Second},
		{name: "429 waits for the reset", status: 429, resetIn: 10 * time.Second, wantWait: 11 * time.Second},
		{name: "a reset beyond the max wait fails at once", status: 403, resetIn: 2 * time.Hour, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Options{})
			e.fake.SetPrimaryLimitStatus(tt.status)
			e.fake.ExhaustPrimary(botLogin, tt.resetIn)
			start := e.clock.Now()
			got, err := e.c.DefaultBranch(ctxT(t), owner, repo)
			if tt.wantErr {
				var rl *RateLimitError
				if !errors.As(err, &rl) || rl.Secondary || !rl.Until.After(start.Add(time.Hour)) {
					t.Fatalf("err = %v, want a primary *RateLimitError", err)
				}
				if e.clock.TotalSlept() != 0 {
					t.Fatalf("slept %v", e.clock.TotalSlept())
				}
				// The next call fails without asking GitHub again.
				e.fake.ResetCalls()
				if _, err := e.c.DefaultBranch(ctxT(t), owner, repo); !errors.As(err, &rl) || len(e.fake.Calls()) != 0 {
					t.Fatalf("second call: %v, %d requests", err, len(e.fake.Calls()))
				}
				return
			}
			if err != nil || got != "main" {
				t.Fatalf("got %q, %v", got, err)
			}
			if waited := e.clock.Now().Sub(start); waited != tt.wantWait {
				t.Fatalf("waited %v, want %v", waited, tt.wantWait)
			}
		})
	}
}

func TestPrimaryRateLimitIsAnticipated(t *testing.T) {
	e := newEnv(t, Options{MaxRateLimitWait: 2 * time.Hour})
	e.fake.SetRateLimit(3)
	ctx := ctxT(t)
	for i := 0; i < 3; i++ {
		if _, err := e.c.DefaultBranch(ctx, owner, "repo-"+fmt.Sprint(i)); !IsNotFound(err) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if r, _ := e.c.RateLimit(); r.Remaining != 0 {
		t.Fatalf("remaining %d, want 0", r.Remaining)
	}
	e.fake.ResetCalls()
	if _, err := e.c.DefaultBranch(ctx, owner, repo); err != nil {
		t.Fatal(err)
	}
	// The client waited for the reset instead of being refused.
	if got := statuses(e.fake, "GET", "/repos/"); !reflect.DeepEqual(got, []int{200}) {
		t.Fatalf("statuses %v, want [200]", got)
	}
	if e.clock.TotalSlept() < time.Hour {
		t.Fatalf("slept %v, want the hour to the reset", e.clock.TotalSlept())
	}
}

// The tests that wait in real time (TestContextCancellation,
// TestWritesAreSerialised, TestReadsAreNotSerialised, TestAttemptTimeout)
// run in parallel, each on fakes of its own, so that their waits overlap
// each other and the work of the other parallel tests.
func TestContextCancellation(t *testing.T) {
	t.Parallel()
	t.Run("while waiting for Retry-After", func(t *testing.T) {
		t.Parallel()
		f := ghfake.New()
		defer f.Close()
		f.AddToken(botToken, botLogin)
		f.AddRepo(owner, repo, "main")
		c, err := New(Options{BaseURL: f.URL(), Token: botToken}) // the real clock
		if err != nil {
			t.Fatal(err)
		}
		f.SecondaryLimit(60*time.Second, 403)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err = c.DefaultBranch(ctx, owner, repo)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want context.DeadlineExceeded", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("returned after %v", d)
		}
	})
	t.Run("while waiting for backoff", func(t *testing.T) {
		t.Parallel()
		f := ghfake.New()
		defer f.Close()
		f.AddToken(botToken, botLogin)
		f.AddRepo(owner, repo, "main")
		f.SetFaults(ghfake.Faults{ServerErrorRate: 1})
		c, err := New(Options{BaseURL: f.URL(), Token: botToken, BackoffBase: time.Minute, BackoffMax: time.Minute, MaxRetryWait: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err = c.DefaultBranch(ctx, owner, repo)
		if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
			t.Fatalf("err = %v after %v, want context.Canceled soon", err, time.Since(start))
		}
	})
	t.Run("while waiting for the write slot", func(t *testing.T) {
		t.Parallel()
		f := ghfake.New()
		defer f.Close()
		f.AddToken(botToken, botLogin)
		f.AddRepo(owner, repo, "main")
		n := f.AddIssue(owner, repo, "Feature", "", "alice")
		f.SetFaults(ghfake.Faults{HangRate: 1, HangFor: time.Minute, PathContains: "/comments"})
		c, err := New(Options{BaseURL: f.URL(), Token: botToken})
		if err != nil {
			t.Fatal(err)
		}
		slow, cancelSlow := context.WithCancel(context.Background())
		defer cancelSlow()
		done := make(chan error, 1)
		go func() {
			_, err := c.CreateIssueComment(slow, owner, repo, n, "first")
			done <- err
		}()
		waitFor(t, func() bool { return inflight(f) })
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		err = c.CreateStatus(ctx, owner, repo, "abc", Status{State: "success", Context: "x"})
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
			t.Fatalf("err = %v after %v", err, time.Since(start))
		}
		if got := f.CountCalls("POST", "/repos/acme/widgets/statuses"); got != 0 {
			t.Fatalf("the queued write reached the server %d times", got)
		}
		cancelSlow()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("slow write: %v", err)
		}
	})
}

// inflight reports whether the fake is handling a hanging write: it has not
// logged it yet, so look at the overlap detector's high-water mark.
func inflight(f *ghfake.Server) bool { return f.MaxConcurrentWrites() > 0 }

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestWritesAreSerialised(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	n := e.fake.AddIssue(owner, repo, "Feature", "", "alice")
	e.fake.SetFaults(ghfake.Faults{Latency: 3 * time.Millisecond})
	ctx := ctxT(t)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := 0; i < 20; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, err := e.c.CreateIssueComment(ctx, owner, repo, n, fmt.Sprintf("comment %d", i))
			errs <- err
		}()
		go func() {
			defer wg.Done()
			errs <- e.c.CreateStatus(ctx, owner, repo, "abc", Status{State: "pending", Context: fmt.Sprintf("c%d", i)})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := len(e.fake.Comments(owner, repo, n)); got != 20 {
		t.Fatalf("%d comments, want 20", got)
	}
	if m, o := e.fake.MaxConcurrentWrites(), e.fake.OverlappingWrites(); m != 1 || o != 0 {
		t.Fatalf("max concurrent writes %d, overlaps %d: writes overlapped", m, o)
	}

	t.Run("the detector sees unserialised writes", func(t *testing.T) {
		f := ghfake.New()
		defer f.Close()
		f.AddToken(botToken, botLogin)
		f.AddRepo(owner, repo, "main")
		f.SetFaults(ghfake.Faults{Latency: 20 * time.Millisecond})
		var wg sync.WaitGroup
		for i := 0; i < 5; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest("POST", f.URL()+"repos/acme/widgets/statuses/abc", strings.NewReader(`{"state":"success"}`))
				req.Header.Set("Authorization", "token "+botToken)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}()
		}
		wg.Wait()
		if f.OverlappingWrites() == 0 {
			t.Fatal("five parallel raw writes did not overlap: the detector is blind")
		}
	})
}

func TestReadsAreNotSerialised(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.fake.SetFaults(ghfake.Faults{Latency: 50 * time.Millisecond})
	ctx := ctxT(t)
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = e.c.DefaultBranch(ctx, owner, repo)
		}()
	}
	wg.Wait()
	if got := e.fake.MaxConcurrentRequests(); got < 2 {
		t.Fatalf("at most %d read in flight: reads were serialised", got)
	}
}

func TestAttemptTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{AttemptTimeout: 100 * time.Millisecond})
	n := e.fake.AddIssue(owner, repo, "Feature", "", "alice")
	ctx := ctxT(t)
	// Each hang costs its attempt's timeout in real time, so exactly two
	// requests hang: the first read, then the first write (the fake hangs
	// a request before processing it, until its client gives up: longer
	// than ctx, but for the attempt timeout); the other requests go
	// through.
	hangNext := func(writesOnly bool) {
		e.fake.SetFaults(ghfake.Faults{HangRate: 1, MaxHangs: 1, HangFor: time.Hour, WritesOnly: writesOnly})
	}
	for i := 0; i < 10; i++ {
		if i == 0 {
			hangNext(false)
		}
		if _, err := e.c.DefaultBranch(ctx, owner, repo); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		if i == 0 {
			hangNext(true)
		}
		if _, err := e.c.CreateIssueComment(ctx, owner, repo, n, fmt.Sprintf("c%d", i)); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	var hung []string
	for _, c := range e.fake.Calls() {
		if c.Fault == "hang" {
			hung = append(hung, c.Method+" "+c.Path)
		}
	}
	want := []string{"GET /repos/acme/widgets", "POST /repos/acme/widgets/issues/1/comments"}
	if !reflect.DeepEqual(hung, want) {
		t.Fatalf("hung: %q, want %q", hung, want)
	}
	if got := len(e.fake.Comments(owner, repo, n)); got != 10 {
		t.Fatalf("%d comments, want 10", got)
	}
}

func TestOnCallHook(t *testing.T) {
	var mu sync.Mutex
	counts := map[string]int{}
	e := newEnv(t, Options{OnCall: func(c Call) {
		mu.Lock()
		defer mu.Unlock()
		counts[fmt.Sprintf("%s %s %d", c.Op, c.Method, c.Status)]++
	}})
	ctx := ctxT(t)
	n := e.fake.AddIssue(owner, repo, "Feature", "", "alice")
	e.fake.SetFaults(ghfake.Faults{ServerErrorRate: 1, PathContains: "/labels"})
	_ = e.c.AddLabels(ctx, owner, repo, n, []string{"x"})
	e.fake.SetFaults(ghfake.Faults{})
	_, _ = e.c.ListIssueComments(ctx, owner, repo, n)
	_, _ = e.c.ListIssueComments(ctx, owner, repo, n)
	mu.Lock()
	defer mu.Unlock()
	var fiveXX int
	for k, v := range counts {
		if strings.HasPrefix(k, "AddLabels POST 5") {
			fiveXX += v
		}
	}
	if fiveXX != DefaultMaxAttempts {
		t.Fatalf("AddLabels 5xx attempts %d, want %d; counts %v", fiveXX, DefaultMaxAttempts, counts)
	}
	if counts["ListIssueComments GET 200"] != 1 || counts["ListIssueComments GET 304"] != 1 {
		t.Fatalf("counts %v", counts)
	}
	if got := e.c.Stats(); got.Requests != int64(DefaultMaxAttempts+2) || got.Retries != int64(DefaultMaxAttempts-1) {
		t.Fatalf("stats %+v", got)
	}
}

func TestBaseURLs(t *testing.T) {
	tests := []struct {
		name, in           string
		wantBase, wantUpld string
		wantErr            bool
	}{
		{name: "github.com", in: "", wantBase: "https://api.github.com/", wantUpld: "https://uploads.github.com/"},
		{name: "github.com as GITHUB_API_URL", in: "https://api.github.com", wantBase: "https://api.github.com/", wantUpld: "https://uploads.github.com/"},
		{name: "enterprise", in: "https://ghe.example.com/api/v3", wantBase: "https://ghe.example.com/api/v3/", wantUpld: "https://ghe.example.com/api/uploads/"},
		{name: "enterprise host only", in: "https://ghe.example.com", wantBase: "https://ghe.example.com/api/v3/", wantUpld: "https://ghe.example.com/api/uploads/"},
		{name: "enterprise with a path prefix", in: "https://example.com/github/api/v3/", wantBase: "https://example.com/github/api/v3/", wantUpld: "https://example.com/github/api/uploads/"},
		{name: "ghe.com data residency", in: "https://api.acme.ghe.com", wantBase: "https://api.acme.ghe.com/", wantUpld: "https://uploads.acme.ghe.com/"},
		{name: "not a url", in: "ghe.example.com", wantErr: true},
		{name: "bad scheme", in: "ftp://ghe.example.com", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(Options{BaseURL: tt.in})
			if tt.wantErr {
				if err == nil {
					t.Fatalf("New(%q) accepted", tt.in)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.gh.BaseURL.String() != tt.wantBase || c.gh.UploadURL.String() != tt.wantUpld {
				t.Fatalf("base %q upload %q, want %q %q", c.gh.BaseURL.String(), c.gh.UploadURL.String(), tt.wantBase, tt.wantUpld)
			}
		})
	}
}

func TestEnterpriseServer(t *testing.T) {
	f := ghfake.New()
	defer f.Close()
	f.AddToken(botToken, botLogin)
	f.AddRepo(owner, repo, "trunk")
	n := f.AddIssue(owner, repo, "Feature", "", "alice")
	for i := 0; i < smallPage+3; i++ { // two pages
		f.AddComment(owner, repo, n, "alice", "x")
	}
	base := strings.TrimSuffix(f.EnterpriseURL(), "/") // as GITHUB_API_URL gives it
	c, err := New(Options{BaseURL: base, Token: botToken, Version: "1.2.3", perPage: smallPage})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	if br, err := c.DefaultBranch(ctx, owner, repo); err != nil || br != "trunk" {
		t.Fatalf("got %q, %v", br, err)
	}
	if cs, err := c.ListIssueComments(ctx, owner, repo, n); err != nil || len(cs) != smallPage+3 {
		t.Fatalf("%d comments, %v", len(cs), err)
	}
	calls := f.Calls()
	if len(calls) != 3 {
		t.Fatalf("%d calls", len(calls))
	}
	for _, call := range calls {
		if !call.Enterprise {
			t.Fatalf("call %+v did not use /api/v3", call)
		}
		if call.UserAgent != "phasegate/1.2.3" {
			t.Fatalf("user agent %q", call.UserAgent)
		}
	}
	if !strings.HasSuffix(c.gh.UploadURL.String(), "/api/uploads/") {
		t.Fatalf("upload url %q", c.gh.UploadURL.String())
	}
}

func TestClassify(t *testing.T) {
	now := epoch
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	tests := []struct {
		name          string
		status        int
		header        http.Header
		body          string
		streak        int
		wantKind      int
		wantWait      time.Duration
		wantSecondary bool
	}{
		{name: "ok", status: 200, header: hdr(), wantKind: done},
		{name: "permission 403", status: 403, header: hdr("X-RateLimit-Remaining", "4999"),
			body: `{"message":"Resource not accessible by integration"}`, wantKind: done},
		{name: "primary 403", status: 403, header: hdr("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", fmt.Sprint(now.Add(time.Minute).Unix())),
			wantKind: rateLimited, wantWait: 61 * time.Second},
		{name: "primary with reset in the past", status: 429, header: hdr("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", fmt.Sprint(now.Add(-time.Minute).Unix())),
			wantKind: rateLimited, wantWait: time.Second},
		{name: "secondary with Retry-After seconds", status: 403, header: hdr("Retry-After", "17"),
			wantKind: rateLimited, wantWait: 17 * time.Second, wantSecondary: true},
		{name: "secondary with Retry-After date", status: 429, header: hdr("Retry-After", now.Add(30*time.Second).Format(http.TimeFormat)),
			wantKind: rateLimited, wantWait: 30 * time.Second, wantSecondary: true},
		{name: "secondary message without headers waits a minute", status: 403, header: hdr(),
			body: `{"message":"You have exceeded a secondary rate limit."}`, wantKind: rateLimited, wantWait: time.Minute, wantSecondary: true},
		{name: "secondary documentation url without headers", status: 403, header: hdr(),
			body:     `{"message":"Slow down.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`,
			wantKind: rateLimited, wantWait: time.Minute, wantSecondary: true},
		{name: "bare 429 waits longer each time", status: 429, header: hdr(), streak: 2,
			wantKind: rateLimited, wantWait: 4 * time.Minute, wantSecondary: true},
		{name: "502", status: 502, header: hdr(), wantKind: serverError},
		{name: "501 is final", status: 501, header: hdr(), wantKind: done},
		{name: "404", status: 404, header: hdr(), wantKind: done},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, wait, secondary := classify(&http.Response{StatusCode: tt.status, Header: tt.header}, []byte(tt.body), now, tt.streak)
			if kind != tt.wantKind || wait != tt.wantWait || secondary != tt.wantSecondary {
				t.Fatalf("got %d %v %v, want %d %v %v", kind, wait, secondary, tt.wantKind, tt.wantWait, tt.wantSecondary)
			}
		})
	}
}

func TestBackoffIsBoundedAndJittered(t *testing.T) {
	c := &Client{opts: Options{BackoffBase: 500 * time.Millisecond, BackoffMax: 8 * time.Second}}
	for attempt := 1; attempt <= 30; attempt++ {
		seen := map[time.Duration]bool{}
		for i := 0; i < 50; i++ {
			d := c.backoff(attempt)
			ceil := min(500*time.Millisecond<<min(attempt-1, 20), 8*time.Second)
			if d < ceil/2 || d > ceil {
				t.Fatalf("attempt %d: %v outside [%v, %v]", attempt, d, ceil/2, ceil)
			}
			seen[d] = true
		}
		if len(seen) < 2 {
			t.Fatalf("attempt %d: no jitter", attempt)
		}
	}
}

// TestAttemptTimeoutOnClock: with Options.AfterFunc, the attempt timer is
// the clock's, and a fake that hangs a request fires it (ExpireHangs): the
// attempt ends as a timeout at once (an hour-long timeout, not waited out)
// and the retry succeeds; the hung call ends with its client gone.
func TestAttemptTimeoutOnClock(t *testing.T) {
	t.Parallel()
	clock := ghfake.NewJumpClock()
	var mu sync.Mutex
	var errs []error
	e := newEnv(t, Options{AttemptTimeout: time.Hour, AfterFunc: clock.AfterFunc, OnCall: func(c Call) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, c.Err)
	}})
	e.fake.ExpireHangs(clock.Expire)
	e.fake.SetFaults(ghfake.Faults{HangRate: 1, MaxHangs: 1, HangFor: time.Hour})
	if _, err := e.c.DefaultBranch(ctxT(t), owner, repo); err != nil {
		t.Fatalf("DefaultBranch: %v", err)
	}
	var te *timeoutError
	if len(errs) != 2 || !errors.As(errs[0], &te) || errs[1] != nil {
		t.Fatalf("attempts ended %v, want a timeout then success", errs)
	}
	if clock.Expired() != 1 {
		t.Fatalf("%d timers expired, want 1", clock.Expired())
	}
	for _, c := range e.fake.Calls() {
		if c.Fault == "hang" && c.Status != 0 {
			t.Fatalf("the hung call was answered %d", c.Status)
		}
	}
}
