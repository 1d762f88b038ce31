package decide

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/testutil/outcometest"
)

// The attacks of these tests break a defence that bench/mutation (issue 18)
// found could be removed with every other test green: each test names the
// attack, and the named mutation of bench/mutation/mutations.txt it kills.

// postOutcomeMeta posts the seed outcome as phasegate would, with the
// actors and pull request given (postOutcome's are agent-bot and #100),
// and returns its id.
func (w *world) postOutcomeMeta(actors []string, pr int) string {
	w.t.Helper()
	body, id := outcometest.Render(w.t, seed, outcome.Meta{Source: source, Commit: addedSHA, PR: pr, Key: w.h.Key, Actors: actors, Prev: w.state().Tip})
	w.fake.SetFile(owner, repo, addedSHA, source, []byte(seed))
	if pr > 0 {
		w.fake.SetFile(owner, repo, headSHA, source, []byte(seed))
		w.fake.AddPullRequestFile(owner, repo, pr, ghfake.File{Filename: source, Status: "added"})
	}
	w.fake.AddComment(owner, repo, w.issue, w.identity(), body)
	w.ids[source] = id
	return id
}

func (w *world) identity() string {
	if w.h.Identity != "" {
		return w.h.Identity
	}
	return bot
}

// handleRaw is say without failing on an error: it returns the command's
// id and HandleComment's error.
func (w *world) handleRaw(user, body string) (int64, error) {
	w.t.Helper()
	id := w.fake.AddComment(owner, repo, w.issue, user, body)
	_, err := w.h.HandleComment(context.Background(), w.gh, Event{Owner: owner, Repo: repo, Issue: w.issue,
		Comment: Comment{ID: id, Author: user, Bot: strings.HasSuffix(user, "[bot]"), Body: body}})
	return id, err
}

// phasegateComments counts the comments phasegate's identity posted, and
// those of them that are resolutions.
func (w *world) phasegateComments() (all, resolutions int) {
	for _, c := range w.fake.Comments(owner, repo, w.issue) {
		if strings.EqualFold(c.User, w.identity()) {
			all++
			if strings.Contains(c.Body, "phasegate:resolution") {
				resolutions++
			}
		}
	}
	return all, resolutions
}

// TestMutationOutcomeWithoutActors: an outcome whose marker records no
// account that pushed it (an outcome pushed straight to a branch by a commit
// whose author GitHub could not attest, or posted by an older phasegate)
// cannot be resolved by anyone: the agent that pushed it would otherwise
// approve its own work, since nothing shows it pushed it.
// Kills a/no-actors-refusal.
func TestMutationOutcomeWithoutActors(t *testing.T) {
	t.Parallel()
	for _, user := range []string{"agent-bot", "alice"} {
		t.Run(user, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			w := newWorld(t)
			id := w.postOutcomeMeta(nil, 0)
			w.say(user, "/resolve D-001 approve")
			if reply := w.lastReply(); !strings.Contains(reply, "records no account that pushed it") {
				t.Errorf("reply:\n%s", reply)
			}
			if d := w.state().Outcome(id).Decision("D-001"); d.Resolution != nil {
				t.Errorf("%s resolved an outcome that records no actors: %+v", user, d.Resolution)
			}
		})
	}
}

// TestMutationPermissionLookupFails: when GitHub fails to say what
// permission (or team membership) the commenter has — a 5xx outage, or a
// 403 for a token that may not read it — the command is neither resolved nor
// refused: the run fails, nothing is posted, and the command stays
// unanswered for reconcile, which resolves it once GitHub answers again. A
// failed lookup must never lead to a resolution, nor to a final refusal.
// Kills b/permission-error-ignored and b/team-error-ignored.
func TestMutationPermissionLookupFails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		config string // .github/phasegate.yml; "" none
		fail   func(f *ghfake.Server)
		heal   func(t *testing.T, w *world)
	}{
		{
			name: "the permission endpoint answers 500",
			fail: func(f *ghfake.Server) {
				f.SetFaults(ghfake.Faults{ServerErrorRate: 1, PathContains: "/collaborators/"})
			},
			heal: func(t *testing.T, w *world) { w.fake.SetFaults(ghfake.Faults{}) },
		},
		{
			name: "the permission endpoint answers 403",
			fail: func(f *ghfake.Server) { f.FailNext(ghclient.DefaultMaxAttempts, 403, "/collaborators/") },
			heal: func(t *testing.T, w *world) {
				drain(t, func() error {
					_, err := w.gh.CollaboratorPermission(context.Background(), owner, repo, "alice")
					return err
				})
			},
		},
		{
			// alice has write permission: falling through to it would resolve.
			name:   "the team membership endpoint answers 500",
			config: "resolvers:\n  teams: [acme/reviewers]\n",
			fail: func(f *ghfake.Server) {
				f.SetFaults(ghfake.Faults{ServerErrorRate: 1, PathContains: "/memberships/"})
			},
			heal: func(t *testing.T, w *world) { w.fake.SetFaults(ghfake.Faults{}) },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			w := newWorld(t)
			if tc.config != "" {
				w.fake.SetFile(owner, repo, "main", ".github/phasegate.yml", []byte(tc.config))
			}
			id := w.postOutcome(seed, source, bot)
			before, _ := w.phasegateComments()
			tc.fail(w.fake)
			cmd, err := w.handleRaw("alice", "/resolve D-001 approve")
			if err == nil {
				t.Error("HandleComment succeeded although GitHub did not say what alice may do")
			}
			if after, resolutions := w.phasegateComments(); after != before || resolutions != 0 {
				t.Fatalf("phasegate posted %d comment(s) (%d resolutions) while the lookup failed:\n%s", after-before, resolutions, w.lastReply())
			}
			if got := w.reactions(cmd); got != "" {
				t.Errorf("reactions = %q, want none", got)
			}
			if st := w.state(); st.Answered(cmd) || len(st.Unanswered) != 1 || st.Unanswered[0].ID != cmd {
				t.Errorf("unanswered = %+v, want alice's command left for reconcile", st.Unanswered)
			}
			tc.heal(t, w)
			if _, err := w.h.ReconcileIssue(context.Background(), w.gh, owner, repo, w.issue); err != nil {
				t.Fatal(err)
			}
			if r := w.state().Outcome(id).Decision("D-001").Resolution; r == nil || r.By != "alice" {
				t.Errorf("after GitHub recovered, reconcile did not resolve alice's command: %+v\n%s", r, w.lastReply())
			}
		})
	}
}

// drain calls f until it succeeds, so that scripted failures left unused
// do not fail the next request.
func drain(t *testing.T, f func() error) {
	t.Helper()
	for i := 0; i <= ghclient.DefaultMaxAttempts; i++ {
		if f() == nil {
			return
		}
	}
	t.Fatal("GitHub kept failing")
}

// TestMutationPullRequestAuthor: the author of the open pull request that
// carries an outcome may not resolve it even when the marker's actors leave
// them out (another account pushed the commit into their branch).
// Kills authorise/pr-author.
func TestMutationPullRequestAuthor(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.postOutcomeMeta([]string{"release-bot"}, prNumber) // #100 is agent-bot's
	w.say("agent-bot", "/resolve D-001 approve")
	if reply := w.lastReply(); !strings.Contains(reply, "you pushed or authored the change") {
		t.Errorf("reply:\n%s", reply)
	}
	if d := w.state().Outcome(id).Decision("D-001"); d.Resolution != nil {
		t.Errorf("the pull request's author resolved its outcome: %+v", d.Resolution)
	}
}

// TestMutationIdentityNeverResolves: phasegate's identity never resolves,
// also when it is a machine user (which neither is a bot nor ends in
// [bot]) with write access: whoever holds its token must not decide.
// Kills authorise/identity.
func TestMutationIdentityNeverResolves(t *testing.T) {
	t.Parallel()
	const machine = "phasegate-machine"
	w := newWorld(t)
	w.fake.AddToken("tok-machine", machine)
	w.fake.AddUser(machine, "User")
	w.fake.SetPermission(owner, repo, machine, "write")
	clock := ghfake.NewManualClock(time.Date(2026, 3, 13, 5, 0, 0, 0, time.UTC))
	gh, err := ghclient.New(ghclient.Options{BaseURL: w.fake.URL(), Token: "tok-machine", Now: clock.Now, Sleep: clock.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	w.gh, w.h.Identity = gh, machine
	id := w.postOutcomeMeta([]string{"agent-bot"}, prNumber)
	w.say(machine, "/resolve D-001 approve")
	if reply := w.lastReply(); !strings.Contains(reply, "phasegate's own identity never resolves") {
		t.Errorf("reply:\n%s", reply)
	}
	if _, resolutions := w.phasegateComments(); resolutions != 0 {
		t.Errorf("phasegate's identity resolved D-001 (%d resolution comments)", resolutions)
	}
	if st := ledgerState(w); st.Frozen() || st.Outcome(id).Decision("D-001").Resolution != nil {
		t.Errorf("frozen = %v, D-001 = %+v", st.Frozen(), st.Outcome(id).Decision("D-001").Resolution)
	}
}

// TestMutationCapturedIssue: a capture resolution reuses the follow-up
// issue an interrupted attempt of phasegate's opened, found by the marker
// in its body. Someone who can open issues (or, without a key, any
// workflow posting as github-actions[bot]) could pre-create one carrying the
// marker, to have phasegate link the decision to an issue they control
// (their text, their later edits). Only an issue phasegate's identity
// opened counts, and with a key only one whose marker carries phasegate's
// signature of the outcome, decision and issue.
//
// What is checked today: the author (phasegate's identity), the label
// (phasegate:captured, open issues only) and the whole marker line as
// phasegate writes it, signature included (with a key an HMAC of
// "phasegate:captured v1\n" and its fields, without one "-"). Not checked:
// where the marker sits in the body, nor the title or the rest of the body
// (the signature covers neither); without a key, a workflow posting as
// phasegate's identity can write the marker (docs/security.md, "What
// remains possible").
// Kills f/captured-issue-any-author, f/captured-marker-signature-ignored
// and f/captured-marker-unsigned.
func TestMutationCapturedIssue(t *testing.T) {
	t.Parallel()
	key := []byte("s3cret")
	tests := []struct {
		name     string
		key      []byte
		author   string
		sig      func(fields string) string
		wantUsed bool
	}{
		{name: "opened by someone else, with the exact marker", author: "mallory", sig: func(string) string { return "-" }},
		{name: "with a key: opened as phasegate's identity, signed with another key", key: key, author: bot,
			sig: func(fields string) string {
				return outcome.SignText([]byte("not the key"), "phasegate:captured v1\n"+fields)
			}},
		{name: "with a key: opened as phasegate's identity, unsigned", key: key, author: bot, sig: func(string) string { return "-" }},
		{name: "phasegate's own, from an interrupted attempt", author: bot, sig: func(string) string { return "-" }, wantUsed: true},
		{name: "with a key: phasegate's own, from an interrupted attempt", key: key, author: bot, wantUsed: true,
			sig: func(fields string) string { return outcome.SignText(key, "phasegate:captured v1\n"+fields) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			w := newWorld(t)
			w.h.Key = tc.key
			id := w.postOutcome(seed, source, bot)
			fields := fmt.Sprintf("outcome=%s decision=D-002 issue=%d", id, w.issue)
			pre := w.fake.AddIssue(owner, repo, "User avatar upload sizing", fmt.Sprintf("Captured from #%d.\n\n<!-- phasegate:captured v1 %s sig=%s -->", w.issue, fields, tc.sig(fields)), tc.author)
			w.fake.LabelIssue(owner, repo, pre, LabelCaptured)
			r, _ := w.say("alice", "/resolve D-002 capture")
			if r.Resolutions != 1 {
				t.Fatalf("capture: %+v\n%s", r, w.lastReply())
			}
			captured := w.state().Outcome(id).Decision("D-002").Resolution.Captured
			if used := captured == pre; used != tc.wantUsed {
				t.Errorf("captured as #%d, pre-created #%d: used = %v, want %v", captured, pre, used, tc.wantUsed)
			}
			if !tc.wantUsed {
				is, ok := w.fake.Issue(owner, repo, captured)
				if !ok || !strings.EqualFold(is.Author, bot) {
					t.Errorf("the captured issue #%d = %+v, want one phasegate opened", captured, is)
				}
			}
		})
	}
}

// ledgerState folds the thread as phasegate's identity sees it (state
// folds as github-actions[bot]).
func ledgerState(w *world) *ledger.State {
	var cs []ledger.Comment
	for _, c := range w.fake.Comments(owner, repo, w.issue) {
		cs = append(cs, ledger.Comment{ID: c.ID, Author: c.User, Body: c.Body, CreatedAt: c.CreatedAt, Edited: c.UpdatedAt.After(c.CreatedAt)})
	}
	return ledger.Fold(cs, ledger.Options{Identity: w.identity(), Key: w.h.Key})
}
