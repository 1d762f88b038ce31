package decide

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
)

// TestPushersFailClosed: when GitHub cannot say who pushed the change's
// branch, nobody can be shown not to have pushed it, so the outcome's
// decisions cannot be resolved; the reply says why. Never "nobody pushed".
func TestPushersFailClosed(t *testing.T) {
	t.Parallel()
	const branch = "feature-100"
	tests := []struct {
		name  string
		setup func(w *world)
		// gh, when set, is how the handler reaches GitHub (the client
		// itself otherwise).
		gh   func(*ghclient.Client) GitHub
		want string // a substring of the reply; "" when alice may resolve
	}{
		{name: "every push has an account and none is alice's", setup: func(w *world) {}},
		{name: "alice pushed the branch", setup: func(w *world) {
			w.fake.Push(owner, repo, ghfake.Push{Ref: branch, After: headSHA, Actor: "alice", Force: true})
		}, want: "you pushed commits to `feature-100`"},
		{name: "a push with no account", setup: func(w *world) {
			w.fake.Push(owner, repo, ghfake.Push{Ref: branch, After: headSHA, Actor: "", Force: true})
		}, want: "has no GitHub account"},
		{name: "no push listed at all", setup: func(w *world) {
			w.fake.ForgetActivity(owner, repo)
		}, want: "does not show who pushed its head"},
		{name: "the push of the head is not listed", setup: func(w *world) {
			w.fake.ForgetActivity(owner, repo)
			w.fake.AddActivity(owner, repo, ghfake.Activity{Type: "push", Ref: "refs/heads/" + branch, Before: strings.Repeat("b", 40), After: strings.Repeat("c", 40), Actor: "agent-bot"})
		}, want: "does not show who pushed its head"},
		// The client's bound (1,000 pushes, then ErrTruncated with what it
		// read) is ghclient's TestRefPushesPagination; here the client
		// answers as it does past it, without 1,002 pushes of JSON.
		{name: "more pushes than phasegate reads", gh: func(c *ghclient.Client) GitHub { return truncatedPushes{c} }, setup: func(w *world) {
			w.fake.Push(owner, repo, ghfake.Push{Ref: branch, After: headSHA, Actor: "agent-bot"})
		}, want: "more pushes than phasegate reads"},
		{name: "GitHub refuses the activity", setup: func(w *world) {
			w.fake.FailNext(1, 404, "/activity")
		}, want: "did not say who pushed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			w := newWorld(t)
			w.postOutcome(seed, source, bot)
			tc.setup(w)
			var gh GitHub = w.gh
			if tc.gh != nil {
				gh = tc.gh(w.gh)
			}
			w.sayThrough(gh, "alice", "/resolve D-001 approve")
			d := w.state().Outcome(w.ids[source]).Decision("D-001")
			if tc.want == "" {
				if d.Resolution == nil {
					t.Fatalf("alice was refused:\n%s", w.lastReply())
				}
				return
			}
			if d.Resolution != nil {
				t.Fatalf("resolved by %s although %s", d.Resolution.By, tc.want)
			}
			if !strings.Contains(w.lastReply(), tc.want) {
				t.Errorf("reply does not say %q:\n%s", tc.want, w.lastReply())
			}
		})
	}
}

// TestPushersAreReadAgainOnANewHead: the pushers of one head are kept for
// the process, but a new head is read again.
func TestPushersAreReadAgainOnANewHead(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.postOutcome(seed, source, bot)
	ctx := context.Background()
	if err := w.h.SyncPullRequest(ctx, w.gh, owner, repo, prNumber); err != nil { // reads the pushers of headSHA
		t.Fatal(err)
	}
	const moved = "abad1deaabad1deaabad1deaabad1deaabad1dea"
	w.fake.SetFile(owner, repo, moved, source, []byte(seed))
	w.fake.Push(owner, repo, ghfake.Push{Ref: "feature-100", After: moved, Actor: "alice"})
	w.say("alice", "/resolve D-001 approve")
	if d := w.state().Outcome(w.ids[source]).Decision("D-001"); d.Resolution != nil {
		t.Fatalf("alice, who pushed the new head, resolved it:\n%s", w.lastReply())
	}
}

// TestPostRecordsPushers: an outcome's marker records every account GitHub's
// activity lists as having pushed the change's branch, besides the
// accounts the event attests.
func TestPostRecordsPushers(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.fake.Push(owner, repo, ghfake.Push{Ref: "feature-100", After: headSHA, Actor: "agent-bot", Force: true})
	w.fake.Push(owner, repo, ghfake.Push{Ref: "feature-100", After: headSHA, Actor: "helper-bot", Force: true})
	w.fake.SetFile(owner, repo, headSHA, source, []byte(seed))
	posted, err := w.h.PostOutcomes(context.Background(), w.gh, owner, repo, []NewOutcome{seedOutcome(t)},
		PostMeta{Commit: headSHA, PR: prNumber, Actors: []string{"dave"}, Ref: "feature-100"})
	if err != nil || len(posted) != 1 {
		t.Fatalf("posted %d: %v", len(posted), err)
	}
	o := w.state().Outcomes[0]
	if got := strings.Join(o.Actors, ","); got != "dave,helper-bot,agent-bot" {
		t.Errorf("actors %q, want dave and every pusher of the branch, newest first", got)
	}
}

// truncatedPushes is the client, whose listing of a ref's pushes stops at
// its bound: what it read, with an error wrapping ghclient.ErrTruncated.
type truncatedPushes struct{ *ghclient.Client }

func (c truncatedPushes) RefPushes(ctx context.Context, owner, repo, ref string) ([]ghclient.Push, error) {
	pushes, err := c.Client.RefPushes(ctx, owner, repo, ref)
	if err != nil {
		return pushes, err
	}
	return pushes, fmt.Errorf("read the activity of %s/%s: more than 10 pages of activity: %w", owner, repo, ghclient.ErrTruncated)
}
