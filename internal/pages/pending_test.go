package pages

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/ghfake/ghfaketest"
	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/web"
)

const (
	owner        = "acme"
	repo         = "shop"
	installation = int64(7)
	appBot       = "phasegate[bot]"
	appID        = int64(1)
)

// stubMay answers MayResolve for the pages and counts the questions.
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

// testSource is a Source over a fake GitHub holding owner/repo, read with
// the token of App appID (phasegate[bot]), its MayResolve answered by may
// and its records read as publish says.
func testSource(t *testing.T, may MayResolver, publish string) (*Source, *ghfake.Server) {
	t.Helper()
	f := ghfake.New()
	t.Cleanup(f.Close)
	ghfaketest.Verify(t, f)
	f.AddRepo(owner, repo, "main")
	f.AddAppToken("ghs_app", appID, "phasegate")
	gh, err := ghclient.New(ghclient.Options{Token: "ghs_app", BaseURL: f.URL()})
	if err != nil {
		t.Fatal(err)
	}
	return New(Config{
		Handler: func() (*decide.Handler, error) { return &decide.Handler{Identity: appBot, Publish: publish}, nil },
		Client:  func(context.Context, string, string, int64) (*ghclient.Client, error) { return gh, nil },
		AppID:   appID, Now: time.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), May: may,
	}), f
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
				got = append(got, fmt.Sprintf("%d %s", r.entry.issue, r.item.Decision))
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
	may := &stubMay{}
	p, _ := testSource(t, may, "")
	for i := 1; i <= maxMayChecksPerRequest+5; i++ {
		p.Observe(folded(owner, repo, i, "plan", time.Unix(int64(i), 0), map[string]bool{"D-001": true}))
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
	p, f := testSource(t, &stubMay{}, "")
	n := maxTitleReadsPerRequest + 3
	for i := 1; i <= n; i++ {
		f.AddIssue(owner, repo, fmt.Sprintf("issue %d", i), "", "alice")
		p.Observe(folded(owner, repo, i, "plan", time.Unix(int64(i), 0), map[string]bool{"D-001": true}))
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
