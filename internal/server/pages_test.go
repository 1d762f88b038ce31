package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/pages"
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
func pagesHarness(t *testing.T, opts ...func(*Config)) (*harness, *pages.Source, *stubMay) {
	t.Helper()
	may := &stubMay{}
	h := newHarness(t, append([]func(*Config){func(c *Config) { c.NewDecider = nil; c.PublicURL = publicURL; c.pagesMay = may }}, opts...)...)
	h.start()
	h.waitReady()
	return h, h.srv.pages, may
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
func pendingOfPages(t *testing.T, p *pages.Source, viewer string) []string {
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
	p2 := s2.pages
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
}
