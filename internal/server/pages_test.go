package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/web"
)

const publicURL = "https://phasegate.example.com"

// stubMay answers MayResolve for the pages (decide.Handler.MayResolve is
// ghuser's) and counts the questions.
type stubMay struct {
	mu    sync.Mutex
	calls int
}

func (s *stubMay) MayResolve(ctx context.Context, gh decide.GitHub, owner, repo string, issue int, decision, login string) (bool, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if login == "alice" {
		return true, "", nil
	}
	return false, "resolving needs write permission", nil
}

func (s *stubMay) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// pagesHarness is a started server with the real decision handler, its
// pages on publicURL, and the pages' MayResolve stubbed.
func pagesHarness(t *testing.T, opts ...func(*Config)) (*harness, *Pages, *stubMay) {
	t.Helper()
	h := newHarness(t, append([]func(*Config){func(c *Config) { c.NewDecider = nil; c.PublicURL = publicURL }}, opts...)...)
	h.start()
	h.waitReady()
	p := h.srv.Pages()
	may := &stubMay{}
	p.may = may
	return h, p, may
}

func (h *harness) deliver(event string, body []byte) {
	h.t.Helper()
	if code, answer := h.send(delivery{event: event, body: body}); code != http.StatusAccepted {
		h.t.Fatalf("%s: answer %d %q", event, code, answer)
	}
	if d := h.waitJobs(1)[0]; d.outcome != "ok" {
		h.t.Fatalf("%s: job %+v; logs:\n%s", event, d, h.logs.String())
	}
}

// TestPagesCommitResult: a real check job's result is recorded and served
// with each finding linked to its file at the commit; Details leads to the
// commit's page; an unknown commit is not checked, never a made-up
// verdict; a repository without the App is not found.
func TestPagesCommitResult(t *testing.T) {
	t.Parallel()
	h, p, _ := pagesHarness(t, func(c *Config) { c.Publish = decide.PublishChecks })
	f := h.fake
	f.AddIssue(owner, repo, "Feature 1", "", "alice")
	const brokenPath = "outcomes/feature-001 broken.outcome.yaml"
	f.SetTreeFiles(owner, repo, appBaseSHA, map[string]string{"README.md": "# shop\n"})
	f.SetTreeFiles(owner, repo, appHead1, map[string]string{"README.md": "# shop\n", brokenPath: brokenYAML})
	pr := f.AddPullRequest(owner, repo, ghfake.PullRequest{HeadSHA: appHead1, BaseSHA: appBaseSHA, HeadRef: "feature", BaseRef: "main", Author: "agent-bot"})
	f.SetPullRequestFiles(owner, repo, pr, []ghfake.File{{Filename: brokenPath, Status: "added"}})
	changes, cancel := p.Subscribe()
	defer cancel()
	h.deliver("pull_request", prOpenEvent("opened", pr, appHead1, appBaseSHA, "feature", "agent-bot"))

	if c := newest(t, f, appHead1, decide.ContextContracts); c.DetailsURL != publicURL+"/acme/shop/commit/"+appHead1 {
		t.Errorf("contracts' Details = %q, want the commit's page", c.DetailsURL)
	}
	ctx := context.Background()
	tests := []struct {
		name, owner, repo, sha string
		checked                bool
		err                    error
	}{
		{name: "the checked head", owner: owner, repo: repo, sha: appHead1, checked: true},
		{name: "a commit never checked", owner: owner, repo: repo, sha: appBaseSHA},
		{name: "a repository without the App", owner: "other", repo: "private", sha: appHead1, err: web.ErrNotFound},
		{name: "not a commit", owner: owner, repo: repo, sha: "../etc", err: web.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page, err := p.Commit(ctx, tc.owner, tc.repo, tc.sha, "alice")
			if tc.err != nil || err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if page.Checked != tc.checked {
				t.Fatalf("Checked = %v, want %v", page.Checked, tc.checked)
			}
			if !tc.checked {
				if page.Verdict != "" || len(page.Findings) > 0 {
					t.Errorf("a commit not checked shows verdict %q and %d findings", page.Verdict, len(page.Findings))
				}
				return
			}
			if page.Verdict != "HOLD" || len(page.Reasons) == 0 || page.CheckedAt.IsZero() {
				t.Errorf("verdict %q, reasons %v, at %v", page.Verdict, page.Reasons, page.CheckedAt)
			}
			if len(page.Findings) == 0 {
				t.Fatal("no finding")
			}
			fd := page.Findings[0]
			want := fmt.Sprintf("%s/acme/shop/blob/%s/outcomes/feature-001%%20broken.outcome.yaml#L%d", strings.TrimSuffix(f.URL(), "/"), appHead1, fd.Line)
			if fd.File != brokenPath || fd.Line < 1 || fd.Rule == "" || fd.Severity != "error" || fd.URL != want {
				t.Errorf("finding %+v, want at %s with URL %s", fd, brokenPath, want)
			}
		})
	}
	for {
		select {
		case c := <-changes:
			if c.SHA == "" {
				continue // an issue the job folded
			}
			if c.SHA != appHead1 || c.Owner != owner || c.Repo != repo {
				t.Errorf("change %+v, want the checked commit", c)
			}
			return
		default:
			t.Fatal("no change of the commit on the bus after its check job")
		}
	}
}

// pendingOfPages is the inbox's decisions as "repo#issue D-00n may|why".
func pendingOfPages(t *testing.T, p *Pages, viewer string) []string {
	t.Helper()
	items, err := p.Pending(context.Background(), []web.RepoRef{{Owner: owner, Name: repo, Installation: installation}}, viewer)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range items {
		out = append(out, fmt.Sprintf("%s#%d %s %v", it.Repo.FullName(), it.Issue, it.Decision, it.MayResolve))
	}
	return out
}

// TestPagesPendingIndex: the inbox is fed by the handler's folds — a
// reconcile pass, a comment handled live — and is complete again after a
// restart once one reconcile pass ran, even though the pass after skips
// the unchanged threads.
func TestPagesPendingIndex(t *testing.T) {
	t.Parallel()
	h, p, may := pagesHarness(t)
	f := h.fake
	for i := 0; i < featureIssue; i++ {
		f.AddIssue(owner, repo, fmt.Sprintf("issue %d", i+1), "", "alice")
	}
	seedFeature(t, f)
	ctx := context.Background()
	if got := pendingOfPages(t, p, "alice"); len(got) != 0 {
		t.Fatalf("before any fold the inbox holds %v", got)
	}
	h.srv.reconcileOnce(ctx)
	want := []string{"acme/shop#42 D-001 true", "acme/shop#42 D-002 true"} // blocking first
	if got := pendingOfPages(t, p, "alice"); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("after a reconcile pass: %v, want %v", got, want)
	}
	asked := may.count()
	pendingOfPages(t, p, "alice")
	if may.count() != asked {
		t.Errorf("an unchanged inbox asked MayResolve again (%d → %d)", asked, may.count())
	}
	if got := pendingOfPages(t, p, "bob"); strings.Join(got, ",") != "acme/shop#42 D-001 false,acme/shop#42 D-002 false" {
		t.Errorf("for bob: %v", got)
	}

	const command = "/resolve D-001 approve"
	id := f.AddComment(owner, repo, featureIssue, "alice", command)
	h.deliver("issue_comment", commentEvent("created", featureIssue, id, "alice", "alice", command))
	if got := pendingOfPages(t, p, "alice"); strings.Join(got, ",") != "acme/shop#42 D-002 true" {
		t.Fatalf("after the comment: %v, want D-002 alone", got)
	}

	// A restart: a new server (empty index and memo) on the same GitHub.
	cfg := h.srv.cfg
	cfg.Registry, cfg.Identity = nil, appBot
	s2, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p2 := s2.Pages()
	p2.may = may
	if got := pendingOfPages(t, p2, "alice"); len(got) != 0 {
		t.Fatalf("a new server's inbox holds %v before any pass", got)
	}
	s2.reconcileOnce(ctx)
	if got := pendingOfPages(t, p2, "alice"); strings.Join(got, ",") != "acme/shop#42 D-002 true" {
		t.Fatalf("after the restart and one pass: %v", got)
	}
	s2.reconcileOnce(ctx) // the thread is unchanged: the memo skips it
	if got := pendingOfPages(t, p2, "alice"); strings.Join(got, ",") != "acme/shop#42 D-002 true" {
		t.Fatalf("after a pass that skipped the unchanged thread: %v", got)
	}
	if s2.pending.len() != 1 {
		t.Errorf("index holds %d issues", s2.pending.len())
	}
}

// TestPagesIssue: the issue page folds the thread as the handler does,
// with the ledger's history, who may resolve in words, and MayResolve for
// the viewer; what the App cannot see is not found.
func TestPagesIssue(t *testing.T) {
	t.Parallel()
	h, p, _ := pagesHarness(t)
	f := h.fake
	for i := 0; i < featureIssue; i++ {
		f.AddIssue(owner, repo, fmt.Sprintf("issue %d", i+1), "", "alice")
	}
	seedFeature(t, f)
	const command = "/resolve D-002 discard not now"
	id := f.AddComment(owner, repo, featureIssue, "alice", command)
	h.deliver("issue_comment", commentEvent("created", featureIssue, id, "alice", "alice", command))
	ctx := context.Background()
	page, err := p.Issue(ctx, owner, repo, featureIssue, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if page.Title != "issue 42" || page.URL == "" || page.Frozen || len(page.Outcomes) != 1 {
		t.Fatalf("page %+v", page)
	}
	o := page.Outcomes[0]
	if o.Phase != "requirements" || o.CommentURL == "" || o.Status != "pending" || len(o.Decisions) != 2 {
		t.Fatalf("outcome %+v", o)
	}
	d1, d2 := o.Decisions[0], o.Decisions[1]
	if !d1.Pending || !d1.MayResolve || !strings.Contains(d1.Resolvers, "write permission") {
		t.Errorf("D-001 %+v", d1)
	}
	if d2.Pending || d2.ResolvedBy != "alice" || d2.Option != "discard" || d2.Reason != "not now" || d2.ResolutionURL == "" {
		t.Errorf("D-002 %+v", d2)
	}
	var what []string
	for _, e := range page.History {
		what = append(what, e.Who+": "+e.What)
	}
	joined := strings.Join(what, "\n")
	for _, w := range []string{appBot + ": posted outcome requirements", "alice: " + command, appBot + ": resolved D-002: discard"} {
		if !strings.Contains(joined, w) {
			t.Errorf("history lacks %q:\n%s", w, joined)
		}
	}
	if st, ok := f.LatestStatus(owner, repo, headSHA, decide.ContextDecisions); !ok || !strings.HasPrefix(st.TargetURL, publicURL+"/acme/shop/issues/42#issuecomment-") {
		t.Errorf("%s Details = %q, want the issue's page at the newest comment", decide.ContextDecisions, st.TargetURL)
	}
	for _, tc := range []struct {
		name, owner, repo string
		issue             int
	}{
		{name: "no such issue", owner: owner, repo: repo, issue: 4242},
		{name: "a repository without the App", owner: "other", repo: "private", issue: 1},
		{name: "not a name", owner: "..", repo: repo, issue: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := p.Issue(ctx, tc.owner, tc.repo, tc.issue, "alice"); !errors.Is(err, web.ErrNotFound) {
				t.Errorf("err = %v, want web.ErrNotFound", err)
			}
		})
	}
	if _, err := p.Resolve(ctx, web.Token{}, web.ResolveRequest{Owner: owner, Repo: repo, Issue: featureIssue}); !errors.Is(err, errResolveNotWired) {
		t.Errorf("Resolve before integration: %v", err)
	}
}

// folded is a fold with one outcome of phase, posted at, with decisions
// (id → blocking), none resolved.
func folded(owner, repo string, issue int, phase string, at time.Time, decisions map[string]bool) decide.Folded {
	o := &ledger.Outcome{CommentID: int64(issue) * 10, ID: fmt.Sprint(issue), Outcome: &outcome.Outcome{Phase: phase}}
	for id, blocking := range decisions {
		o.Decisions = append(o.Decisions, &ledger.Decision{Decision: outcome.Decision{ID: id, Blocking: blocking, Options: []string{"approve", "reject"}}})
	}
	return decide.Folded{Owner: owner, Repo: repo, Issue: issue, State: &ledger.State{Outcomes: []*ledger.Outcome{o}, Tip: o.CommentID},
		Comments: []ghclient.Comment{{ID: o.CommentID, CreatedAt: at}}}
}

// TestPendingIndexOrderAndBound: blocking first, then newest; an issue
// with nothing pending leaves; beyond its bound the index forgets the
// least recently folded issue and makes the memo forget it too.
func TestPendingIndexOrderAndBound(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var forgotten []string
	x := newPendingIndex(3, func(owner, repo string, issue int) {
		forgotten = append(forgotten, fmt.Sprintf("%s/%s#%d", owner, repo, issue))
	})
	steps := []struct {
		name    string
		fold    decide.Folded
		changed bool
		want    string
	}{
		{name: "an old blocking one", fold: folded("a", "r", 1, "plan", t0, map[string]bool{"D-001": true}), changed: true, want: "1 D-001"},
		{name: "a newer non-blocking one", fold: folded("a", "r", 2, "plan", t0.Add(time.Hour), map[string]bool{"D-001": false}), changed: true, want: "1 D-001,2 D-001"},
		{name: "a newer blocking one", fold: folded("a", "r", 3, "plan", t0.Add(2*time.Hour), map[string]bool{"D-007": true}), changed: true, want: "3 D-007,1 D-001,2 D-001"},
		{name: "the same fold again", fold: folded("a", "r", 3, "plan", t0.Add(2*time.Hour), map[string]bool{"D-007": true}), want: "3 D-007,1 D-001,2 D-001"},
		{name: "another repository's", fold: folded("b", "r", 4, "plan", t0.Add(3*time.Hour), map[string]bool{"D-001": true}), changed: true, want: "3 D-007,2 D-001"},
		{name: "nothing pending any more", fold: folded("a", "r", 2, "plan", t0, nil), changed: true, want: "3 D-007"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if changed := x.update(st.fold); changed != st.changed {
				t.Errorf("changed = %v, want %v", changed, st.changed)
			}
			var got []string
			for _, r := range x.list([]web.RepoRef{{Owner: "A", Name: "r"}}) {
				got = append(got, fmt.Sprintf("%d %s", r.entry.issue, r.item.decision))
			}
			if strings.Join(got, ",") != st.want {
				t.Errorf("inbox %v, want %s", got, st.want)
			}
		})
	}
	if strings.Join(forgotten, ",") != "a/r#1" {
		t.Errorf("forgotten %v, want a/r#1 (the least recently folded, beyond the bound of 3)", forgotten)
	}
}

// TestPagesPendingBoundsQuestions: one inbox asks MayResolve at most
// maxMayChecksPerRequest times; the rest say they were not checked yet.
func TestPagesPendingBoundsQuestions(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.Identity = appBot })
	p := h.srv.Pages()
	may := &stubMay{}
	p.may = may
	for i := 1; i <= maxMayChecksPerRequest+5; i++ {
		h.srv.pending.update(folded(owner, repo, i, "plan", time.Unix(int64(i), 0), map[string]bool{"D-001": true}))
	}
	items, err := p.Pending(context.Background(), []web.RepoRef{{Owner: owner, Name: repo, Installation: installation}}, "alice")
	if err != nil {
		t.Fatal(err)
	}
	notChecked := 0
	for _, it := range items {
		if it.WhyNot == whyNotChecked {
			notChecked++
		}
	}
	if may.count() != maxMayChecksPerRequest || notChecked != 5 {
		t.Errorf("%d questions, %d not checked; want %d and 5", may.count(), notChecked, maxMayChecksPerRequest)
	}
}

// TestPagesPendingReadsMissingTitles: a fold that knew no title (a check
// job's, a comment's) gets its issue's title read once, bounded per inbox,
// and kept in the index; a title the index has is not read again.
func TestPagesPendingReadsMissingTitles(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.Identity = appBot })
	p := h.srv.Pages()
	n := maxTitleReadsPerRequest + 3
	for i := 1; i <= n; i++ {
		h.fake.AddIssue(owner, repo, fmt.Sprintf("issue %d", i), "", "alice")
		h.srv.pending.update(folded(owner, repo, i, "plan", time.Unix(int64(i), 0), map[string]bool{"D-001": true}))
	}
	titled := func() (with int) {
		items, err := p.Pending(context.Background(), []web.RepoRef{{Owner: owner, Name: repo, Installation: installation}}, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			if it.IssueTitle == fmt.Sprintf("issue %d", it.Issue) {
				with++
			} else if it.IssueTitle != "" {
				t.Errorf("#%d titled %q", it.Issue, it.IssueTitle)
			}
		}
		return with
	}
	if got := titled(); got != maxTitleReadsPerRequest {
		t.Errorf("first inbox: %d titles, want %d (the bound)", got, maxTitleReadsPerRequest)
	}
	if got := titled(); got != n {
		t.Errorf("second inbox: %d titles, want all %d (the first ones kept)", got, n)
	}
}
