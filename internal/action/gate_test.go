package action

import (
	"strings"
	"testing"
)

// TestDecisionsStatusIsAFunctionOfTheCommit: whichever event computes
// phasegate/decisions of a commit, and in whatever order, it says the same;
// when the change cannot be read it says error, never success.
func TestDecisionsStatusIsAFunctionOfTheCommit(t *testing.T) {
	t.Parallel()
	seedFiles := map[string]string{rtSource: seedOutcome}
	t.Run("a push run after the pull request run leaves pending", func(t *testing.T) {
		t.Parallel() // its own fake GitHub
		rt := newRedTeam(t, "")
		rt.open(seedFiles)
		if st := rt.decisions(); st.State != "pending" {
			t.Fatalf("after the pull request run: %+v", st)
		}
		// A later commit of the pull request's branch, pushed: the push
		// event's before..after holds only that commit.
		prev := rt.head
		rt.head = rt.commit(map[string]string{"src/app.go": "package app\n"})
		rt.fake.SetPullRequestHead(rtOwner, rtRepo, rt.pr, rt.head)
		rt.fake.SetPullRequestFiles(rtOwner, rtRepo, rt.pr, rt.diff(rt.base, rt.head))
		if code, log := rt.runAction(rt.env("push", pushEvent(prev, rt.head))); code != exitOK {
			t.Fatalf("push: exit %d\n%s", code, log)
		}
		if st := rt.decisions(); st.State != "pending" || !strings.Contains(st.Description, "D-001") {
			t.Errorf("after the push run: %+v, want pending on D-001 (the pull request still carries the outcome)", st)
		}
	})
	t.Run("a compare that fails gives error", func(t *testing.T) {
		t.Parallel() // its own fake GitHub
		rt := newRedTeam(t, "")
		base := rt.base
		rt.head = rt.commit(seedFiles)
		rt.fake.FailNext(20, 502, "/compare/") // GitHub keeps failing the compare
		code, log := rt.runAction(rt.env("push", pushEvent(base, rt.head)))
		if st := rt.decisions(); st.State != "error" {
			t.Errorf("phasegate/decisions = %+v, want error (exit %d)\n%s", st, code, log)
		}
	})
	t.Run("a new branch is judged by its change from the default branch", func(t *testing.T) {
		t.Parallel() // its own fake GitHub
		rt := newRedTeam(t, "")
		rt.head = rt.commit(seedFiles)
		ev := pushEvent(strings.Repeat("0", 40), rt.head)
		if code, log := rt.runAction(rt.env("push", ev)); code != exitOK {
			t.Fatalf("push: exit %d\n%s", code, log)
		}
		if st := rt.decisions(); st.State != "pending" {
			t.Errorf("phasegate/decisions = %+v, want pending: the branch carries an outcome with a blocking decision", st)
		}
	})
}

// TestActionDispatches: the action sends phasegate.resolved for each
// resolution and phasegate.phase-advanced when it moved the phase, once:
// not for a refused command, not again on a rerun or a scheduled reconcile.
func TestActionDispatches(t *testing.T) {
	t.Parallel()
	rt := newRedTeam(t, "")
	rt.open(map[string]string{rtSource: seedOutcome})
	types := func() string {
		var out []string
		for _, d := range rt.fake.Dispatches(rtOwner, rtRepo) {
			out = append(out, d.EventType)
		}
		return strings.Join(out, ",")
	}
	rt.say("bob", "/resolve D-001 approve") // read permission: refused
	if got := types(); got != "" {
		t.Fatalf("a refused command dispatched: %s", got)
	}
	id := rt.say("alice", "/resolve D-001 approve")
	want := "phasegate.resolved,phasegate.phase-advanced"
	if got := types(); got != want {
		t.Fatalf("after the approval: %s, want %s", got, want)
	}
	rt.deliver(id, "alice", "/resolve D-001 approve") // the workflow re-run
	rt.reconcile()
	if got := types(); got != want {
		t.Errorf("after a rerun and a reconcile: %s, want %s", got, want)
	}
}

// TestActionWarnsWhenItCannotDispatch: without contents: write the
// resolution stands, nothing is dispatched, and the run says so with a
// warning annotation, not a failure.
func TestActionWarnsWhenItCannotDispatch(t *testing.T) {
	t.Parallel()
	rt := newRedTeam(t, "")
	rt.open(map[string]string{rtSource: seedOutcome})
	rt.fake.SetTokenPermissions("github-actions[bot]", map[string]string{"issues": "write", "pull_requests": "write", "statuses": "write", "contents": "read"})
	id := rt.fake.AddComment(rtOwner, rtRepo, rt.issue, "alice", "/resolve D-001 approve")
	ev := map[string]any{
		"action":     "created",
		"issue":      map[string]any{"number": rt.issue},
		"comment":    map[string]any{"id": id, "body": "/resolve D-001 approve", "user": map[string]any{"login": "alice", "type": "User"}},
		"repository": map[string]any{"default_branch": "main"},
	}
	code, log := rt.runAction(rt.env("issue_comment", ev))
	if code != exitOK {
		t.Fatalf("exit %d, want 0: a dispatch the token may not send is never a failure\n%s", code, log)
	}
	if !strings.HasPrefix(rt.d001(), "approve by alice") {
		t.Errorf("D-001 = %q, want alice's approve", rt.d001())
	}
	if n := len(rt.fake.Dispatches(rtOwner, rtRepo)); n != 0 {
		t.Errorf("%d dispatches without contents: write", n)
	}
	if !strings.Contains(log, "::warning::phasegate: the token may not send repository_dispatch") {
		t.Errorf("no warning annotation:\n%s", log)
	}
}
