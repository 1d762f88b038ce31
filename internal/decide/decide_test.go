package decide

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/ghfake/ghfaketest"
	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/testutil/outcometest"
)

const (
	bot      = "github-actions[bot]"
	owner    = "acme"
	repo     = "shop"
	prNumber = 100
	headSHA  = "feedfacefeedfacefeedfacefeedfacefeedface"
	addedSHA = "0123456789abcdef0123456789abcdef01234567"
	source   = "outcomes/feature-042-requirements.outcome.yaml"
)

type world struct {
	t     *testing.T
	fake  *ghfake.Server
	gh    *ghclient.Client
	h     *Handler
	issue int
	ids   map[string]string // outcome source → id
}

func newWorld(t *testing.T) *world {
	t.Helper()
	f := ghfake.New()
	t.Cleanup(f.Close)
	ghfaketest.Verify(t, f)
	clock := ghfake.NewManualClock(time.Date(2026, 3, 13, 5, 0, 0, 0, time.UTC))
	f.SetClock(clock.Now)
	f.AddToken("tok", bot)
	f.AddUser(bot, "Bot")
	f.AddRepo(owner, repo, "main")
	var issue int
	for i := 0; i < 42; i++ { // feature-042 → #42
		issue = f.AddIssue(owner, repo, fmt.Sprintf("issue %d", i+1), "", "alice")
	}
	f.AddPullRequest(owner, repo, ghfake.PullRequest{Number: prNumber, HeadSHA: headSHA, BaseSHA: addedSHA, Author: "agent-bot"})
	f.AddCommit(owner, repo, ghfake.Commit{SHA: addedSHA, Author: "agent-bot", Committer: "agent-bot", Files: []ghfake.File{{Filename: source, Status: "added"}}})
	for login, role := range map[string]string{"alice": "write", "erin": "admin", "bob": "read", "carol": "triage", "agent-bot": "write", "renovate[bot]": "write"} {
		f.SetPermission(owner, repo, login, role)
	}
	f.AddUser("renovate[bot]", "Bot")
	gh, err := ghclient.New(ghclient.Options{BaseURL: f.URL(), Token: "tok", Now: clock.Now, Sleep: clock.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	h := &Handler{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	return &world{t: t, fake: f, gh: gh, h: h, issue: issue, ids: map[string]string{}}
}

// seed is the seed outcome (feature-042 → #42).
const seed = outcometest.Seed

// postOutcome posts an outcome comment as author (phasegate's identity,
// unless forging) and returns its id.
func (w *world) postOutcome(src, path, author string) string {
	w.t.Helper()
	body, id := outcometest.Render(w.t, src, outcome.Meta{Source: path, Commit: addedSHA, PR: prNumber, Key: w.h.Key,
		Actors: []string{"agent-bot"}, Prev: w.state().Tip})
	w.fake.SetFile(owner, repo, addedSHA, path, []byte(src))
	// The pull request's head carries the file.
	w.fake.SetFile(owner, repo, headSHA, path, []byte(src))
	w.fake.AddPullRequestFile(owner, repo, prNumber, ghfake.File{Filename: path, Status: "added"})
	w.fake.AddComment(owner, repo, w.issue, author, body)
	w.ids[path] = id
	return id
}

// say comments as user and runs the handler on it, as a webhook would.
func (w *world) say(user, body string) (Result, int64) {
	w.t.Helper()
	return w.sayThrough(w.gh, user, body)
}

// sayThrough is say, the handler reaching GitHub through gh.
func (w *world) sayThrough(gh GitHub, user, body string) (Result, int64) {
	w.t.Helper()
	id := w.fake.AddComment(owner, repo, w.issue, user, body)
	// The issue's labels, as the webhook's payload lists them.
	labels := append([]string{}, w.fake.Labels(owner, repo, w.issue)...)
	r, err := w.h.HandleComment(context.Background(), gh, Event{Owner: owner, Repo: repo, Issue: w.issue,
		Comment: Comment{ID: id, Author: user, Bot: strings.HasSuffix(user, "[bot]"), Body: body}, Labels: labels})
	if err != nil {
		w.t.Fatalf("handling %q by %s: %v", body, user, err)
	}
	return r, id
}

func (w *world) state() *ledger.State {
	var cs []ledger.Comment
	for _, c := range w.fake.Comments(owner, repo, w.issue) {
		cs = append(cs, ledger.Comment{ID: c.ID, Author: c.User, Body: c.Body, CreatedAt: c.CreatedAt, Edited: c.UpdatedAt.After(c.CreatedAt)})
	}
	return ledger.Fold(cs, ledger.Options{Identity: bot, Key: w.h.Key})
}

func (w *world) lastReply() string {
	cs := w.fake.Comments(owner, repo, w.issue)
	return cs[len(cs)-1].Body
}

func (w *world) reactions(commentID int64) string {
	var out []string
	for _, r := range w.fake.Reactions(commentID) {
		out = append(out, r.Content)
	}
	return strings.Join(out, ",")
}

func (w *world) labels() string { return strings.Join(w.fake.Labels(owner, repo, w.issue), ",") }

// TestSeedStory is the seed outcome's whole story (issue 5): posted; D-002
// captured as a new issue; a typo refused with the options; D-001 approved
// by a writer, which moves the phase label on and turns phasegate/decisions
// green; a second resolution refused as final.
func TestSeedStory(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.postOutcome(seed, source, bot)
	if err := w.gh.AddLabels(context.Background(), owner, repo, w.issue, []string{"phasegate:pending", "phase:requirements"}); err != nil {
		t.Fatal(err)
	}

	r, cmd := w.say("alice", "Sizing is its own story.\n/resolve D-002 capture")
	if r.Resolutions != 1 || r.Captured != 1 {
		t.Fatalf("capture: %+v", r)
	}
	if got := w.reactions(cmd); got != "" {
		t.Errorf("reactions = %s, want none: the resolution comment is the answer", got)
	}
	d2 := w.state().Outcome(id).Decision("D-002")
	if d2.Resolution == nil || d2.Resolution.Option != "capture" || d2.Resolution.Captured == 0 {
		t.Fatalf("D-002 = %+v", d2.Resolution)
	}
	captured, ok := w.fake.Issue(owner, repo, d2.Resolution.Captured)
	if !ok || !strings.Contains(captured.Title, "User avatar upload sizing") || !strings.Contains(captured.Body, fmt.Sprintf("#%d", w.issue)) {
		t.Errorf("captured issue = %+v, want the finding linking back to #%d", captured, w.issue)
	}
	if !strings.Contains(w.lastReply(), fmt.Sprintf("#%d", d2.Resolution.Captured)) {
		t.Errorf("resolution does not say captured as #N:\n%s", w.lastReply())
	}
	if !strings.Contains(w.labels(), "phasegate:pending") {
		t.Errorf("labels = %s: D-001 still blocks", w.labels())
	}

	_, cmd = w.say("alice", "/resolve D-001 maybe")
	reply := w.lastReply()
	for _, want := range []string{"@alice", "`maybe` is not an option", "`approve`", "`request-changes`", "`reject`"} {
		if !strings.Contains(reply, want) {
			t.Errorf("reply lacks %q:\n%s", want, reply)
		}
	}
	if got := w.reactions(cmd); got != "confused" {
		t.Errorf("reactions = %s, want confused", got)
	}

	r, _ = w.say("alice", "/resolve D-001 approve looks complete")
	if r.Resolutions != 1 {
		t.Fatalf("approve: %+v", r)
	}
	if got := w.labels(); got != "phase:planning" {
		t.Errorf("labels = %s, want phase:planning only", got)
	}
	st, ok := w.fake.LatestStatus(owner, repo, headSHA, ContextDecisions)
	if !ok || st.State != "success" {
		t.Errorf("%s = %+v, want success", ContextDecisions, st)
	}

	_, cmd = w.say("bob", "/resolve D-001 reject")
	if reply := w.lastReply(); !strings.Contains(reply, "already resolved") || !strings.Contains(reply, "approve") || !strings.Contains(reply, "#issuecomment-") {
		t.Errorf("second resolution reply:\n%s", reply)
	}
	if got := w.reactions(cmd); got != "confused" {
		t.Errorf("reactions = %s", got)
	}
	if res := w.state().Outcome(id).Decision("D-001").Resolution; res.Option != "approve" || res.By != "alice" {
		t.Errorf("D-001 = %+v, want alice's approve to stand", res)
	}
}

func TestUnauthorised(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, user, want string
	}{
		{name: "read permission", user: "bob", want: "needs write permission"},
		{name: "triage permission", user: "carol", want: "needs write permission"},
		{name: "no permission", user: "dave", want: "needs write permission"},
		{name: "a bot", user: "renovate[bot]", want: "bots never resolve"},
		{name: "the author of the outcome's commit", user: "agent-bot", want: "pushed or authored the change"},
		{name: "phasegate itself", user: bot, want: "bots never resolve"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			w := newWorld(t)
			id := w.postOutcome(seed, source, bot)
			w.say(tc.user, "/resolve D-001 approve")
			if reply := w.lastReply(); !strings.Contains(reply, tc.want) {
				t.Errorf("reply lacks %q:\n%s", tc.want, reply)
			}
			if d := w.state().Outcome(id).Decision("D-001"); d.Resolution != nil {
				t.Errorf("%s resolved D-001", tc.user)
			}
		})
	}
	t.Run("admin may", func(t *testing.T) {
		t.Parallel() // its own fake GitHub
		w := newWorld(t)
		id := w.postOutcome(seed, source, bot)
		w.say("erin", "/resolve D-001 approve")
		if d := w.state().Outcome(id).Decision("D-001"); d.Resolution == nil {
			t.Errorf("an admin could not resolve:\n%s", w.lastReply())
		}
	})
	t.Run("excluded writer", func(t *testing.T) {
		t.Parallel() // its own fake GitHub
		w := newWorld(t)
		w.fake.SetFile(owner, repo, "main", ".github/phasegate.yml", []byte("resolvers:\n  exclude: [alice]\n"))
		w.postOutcome(seed, source, bot)
		w.say("alice", "/resolve D-001 approve")
		if reply := w.lastReply(); !strings.Contains(reply, "excluded") {
			t.Errorf("reply:\n%s", reply)
		}
	})
	t.Run("listed user without write", func(t *testing.T) {
		t.Parallel() // its own fake GitHub
		w := newWorld(t)
		w.fake.SetFile(owner, repo, "main", ".github/phasegate.yml", []byte("resolvers:\n  users: [bob]\n"))
		id := w.postOutcome(seed, source, bot)
		w.say("bob", "/resolve D-001 approve")
		if d := w.state().Outcome(id).Decision("D-001"); d.Resolution == nil {
			t.Errorf("a listed user could not resolve:\n%s", w.lastReply())
		}
	})
}

func TestForgedAndEditedOutcomes(t *testing.T) {
	t.Parallel()
	t.Run("forged by someone else", func(t *testing.T) {
		t.Parallel() // its own fake GitHub
		w := newWorld(t)
		w.postOutcome(seed, source, "mallory")
		w.say("alice", "/resolve D-001 approve")
		if reply := w.lastReply(); !strings.Contains(reply, "no pending decision") {
			t.Errorf("a forged outcome was resolvable:\n%s", reply)
		}
	})
	t.Run("edited outcome comment", func(t *testing.T) {
		t.Parallel() // its own fake GitHub
		w := newWorld(t)
		w.postOutcome(seed, source, bot)
		cs := w.fake.Comments(owner, repo, w.issue)
		w.fake.EditComment(cs[0].ID, strings.Replace(cs[0].Body, "Approve PREQ", "Approve anything", 1))
		r, _ := w.say("alice", "/resolve D-001 approve")
		if r.Resolutions != 0 {
			t.Error("an edited outcome was resolved")
		}
		r, err := w.h.ReconcileIssue(context.Background(), w.gh, owner, repo, w.issue)
		if err != nil {
			t.Fatal(err)
		}
		if r.Tampered != 1 {
			t.Errorf("tampered = %d, want 1", r.Tampered)
		}
	})
}

func TestPhasePrefixPicksTheOutcome(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	req := w.postOutcome(seed, source, bot)
	plan := w.postOutcome(strings.Replace(strings.Replace(seed, "phase: requirements", "phase: technical-plan", 1), "Approve PREQ", "Approve the plan", 1),
		"outcomes/feature-042-technical-plan.outcome.yaml", bot)
	w.say("alice", "/resolve requirements:D-001 approve")
	st := w.state()
	if st.Outcome(req).Decision("D-001").Resolution == nil || st.Outcome(plan).Decision("D-001").Resolution != nil {
		t.Fatal("requirements:D-001 did not resolve the requirements outcome only")
	}
	w.say("alice", "/resolve D-001 request-changes")
	if r := w.state().Outcome(plan).Decision("D-001").Resolution; r == nil || r.Option != "request-changes" {
		t.Errorf("D-001 without a prefix did not resolve the newest unresolved outcome: %+v", r)
	}
	if st, _ := w.fake.LatestStatus(owner, repo, headSHA, ContextDecisions); st.State != "failure" {
		t.Errorf("%s = %q, want failure after request-changes", ContextDecisions, st.State)
	}
}

func TestRecommendedAndListAndHelp(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.postOutcome(seed, source, bot)
	w.say("alice", "/decisions")
	if reply := w.lastReply(); !strings.Contains(reply, "D-001") || !strings.Contains(reply, "D-002") {
		t.Errorf("/decisions:\n%s", reply)
	}
	w.say("alice", "/phasegate help")
	if reply := w.lastReply(); !strings.Contains(reply, "/resolve D-001 approve") {
		t.Errorf("help:\n%s", reply)
	}
	w.say("alice", "/resolve D-002 recommended")
	if r := w.state().Outcome(id).Decision("D-002").Resolution; r == nil || r.Option != "capture" {
		t.Errorf("recommended = %+v", r)
	}
	w.say("alice", "/resolve D-001 recommended")
	if reply := w.lastReply(); !strings.Contains(reply, "no recommended option") {
		t.Errorf("reply:\n%s", reply)
	}
}

// TestConcurrentDeliveries: 8 concurrent deliveries of one command yield
// exactly one resolution comment, and handling it again changes nothing.
// (8, not 50: without the per-issue lock every one of 8 posts its own
// resolution — 20 runs of 20 without -race, 8 of 8 with it, all failed —
// and each delivery is a whole fold's worth of JSON under -race.)
func TestConcurrentDeliveries(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.postOutcome(seed, source, bot)
	body := "/resolve D-001 approve"
	cmd := w.fake.AddComment(owner, repo, w.issue, "alice", body)
	ev := Event{Owner: owner, Repo: repo, Issue: w.issue, Comment: Comment{ID: cmd, Author: "alice", Body: body}}
	const deliveries = 8
	var wg sync.WaitGroup
	errs := make(chan error, deliveries)
	for i := 0; i < deliveries; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := w.h.HandleComment(context.Background(), w.gh, ev); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	n := 0
	for _, c := range w.fake.Comments(owner, repo, w.issue) {
		if strings.Contains(c.Body, "phasegate:resolution") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d resolution comments, want exactly 1", n)
	}
	labels := w.labels()
	if _, err := w.h.HandleComment(context.Background(), w.gh, ev); err != nil {
		t.Fatal(err)
	}
	if got := w.labels(); got != labels {
		t.Errorf("labels changed on a repeat: %s → %s", labels, got)
	}
}

// TestReconcileAppliesLostCommands: a command whose delivery was lost is
// applied by reconcile, once.
func TestReconcileAppliesLostCommands(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.postOutcome(seed, source, bot)
	if err := w.gh.AddLabels(context.Background(), owner, repo, w.issue, []string{LabelPending}); err != nil {
		t.Fatal(err)
	}
	w.fake.AddComment(owner, repo, w.issue, "alice", "/resolve D-001 approve")
	for i := 0; i < 2; i++ {
		if _, err := w.h.ReconcileRepo(context.Background(), w.gh, owner, repo); err != nil {
			t.Fatal(err)
		}
	}
	if r := w.state().Outcome(id).Decision("D-001").Resolution; r == nil || r.By != "alice" {
		t.Fatalf("reconcile did not apply the lost command: %+v", r)
	}
	n := 0
	for _, c := range w.fake.Comments(owner, repo, w.issue) {
		if strings.Contains(c.Body, "phasegate:resolution") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d resolutions after two reconciles, want 1", n)
	}
}
