package decide

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/ghclient"
)

// tellingLocker is a Locker that tells the test every key asked for,
// before it waits for it.
type tellingLocker struct {
	Locker
	asked chan string
}

func (l tellingLocker) Lock(ctx context.Context, key string) (func(), error) {
	select {
	case l.asked <- key:
	default:
	}
	return l.Locker.Lock(ctx, key)
}

// TestSyncCommitRaceAcrossIssues: one pull request's head carries the
// outcomes of two issues, and two replicas resolve their blocking
// decisions at once. Replica A folds B's issue before B's resolution lands
// and is held just before it writes phasegate/decisions ("pending": B's
// issue still waits as A read it); B then resolves, reads #42 with A's resolution
// and computes "success". Whatever order their writes reach GitHub in, the
// head must end "success": a required check stuck pending over decided
// work is a trust bug, and once both threads are folded unchanged no
// reconcile pass syncs the commit again.
func TestSyncCommitRaceAcrossIssues(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	locks := tellingLocker{Locker: NewMemLocker(), asked: make(chan string, 64)}
	w.h.Locks = locks
	// Each replica has its own client: a client sends its writes one at a
	// time, and A's is held.
	replicaB := &Handler{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Locks: locks}
	ghB, err := ghclient.New(ghclient.Options{BaseURL: w.fake.URL(), Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}

	issueA := w.issue // #42
	issueB := w.fake.AddIssue(owner, repo, "another feature", "", "alice")
	w.postOutcome(seed, source, bot)
	w.issue = issueB
	w.postOutcome(strings.Replace(seed, "feature-042", fmt.Sprintf("feature-%03d", issueB), 1), fmt.Sprintf("outcomes/feature-%03d-requirements.outcome.yaml", issueB), bot)
	w.issue = issueA

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if st, err := w.h.SyncCommit(ctx, w.gh, owner, repo, headSHA, CommitOptions{}); err != nil || st.State != "pending" {
		t.Fatalf("before any resolution: %s = %+v, %v; want pending", ContextDecisions, st, err)
	}

	const body = "/resolve D-001 approve"
	cmdA := w.fake.AddComment(owner, repo, issueA, "alice", body)
	cmdB := w.fake.AddComment(owner, repo, issueB, "erin", body)
	handle := func(h *Handler, gh GitHub, issue int, cmd int64, user string) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := h.HandleComment(ctx, gh, Event{Owner: owner, Repo: repo, Issue: issue, Comment: Comment{ID: cmd, Author: user, Body: body}})
			done <- err
		}()
		return done
	}

	// A computes the head's status from #43 as it was, and is held just
	// before writing it.
	hold := w.fake.HoldNext("POST", "/statuses/"+headSHA)
	doneA := handle(w.h, w.gh, issueA, cmdA, "alice")
	select {
	case <-hold.Arrived():
	case err := <-doneA:
		t.Fatalf("A finished without writing %s on the head: %v", ContextDecisions, err)
	}
	for len(locks.asked) > 0 {
		<-locks.asked // A's own keys
	}

	// B resolves #43 and syncs the head: to its end, or until it waits
	// for a lock on that commit, which A holds.
	doneB := handle(replicaB, ghB, issueB, cmdB, "erin")
	var errB error
	finishedB := false
wait:
	for {
		select {
		case key := <-locks.asked:
			if strings.Contains(key, headSHA) {
				break wait
			}
		case errB = <-doneB:
			finishedB = true
			break wait
		}
	}
	hold.Release()
	if err := <-doneA; err != nil {
		t.Fatalf("A: %v", err)
	}
	if !finishedB {
		errB = <-doneB
	}
	if errB != nil {
		t.Fatalf("B: %v", errB)
	}

	for _, issue := range []int{issueA, issueB} {
		if !strings.Contains(strings.Join(w.fake.Labels(owner, repo, issue), ","), "phase:planning") {
			t.Errorf("#%d labels = %v, want phase:planning", issue, w.fake.Labels(owner, repo, issue))
		}
	}
	st, ok := w.fake.LatestStatus(owner, repo, headSHA, ContextDecisions)
	if !ok || st.State != "success" {
		t.Errorf("%s on the head = %s (%s), want success: both blocking decisions are resolved", ContextDecisions, st.State, st.Description)
	}
}
