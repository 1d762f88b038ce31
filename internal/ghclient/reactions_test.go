package ghclient

import (
	"strings"
	"testing"
)

// A listed comment carries its reactions rollup, and CommentReactors tells
// who reacted: the bookkeeping "phasegate reacted 🚀 to its resolution
// after sending its event" cannot be faked by someone else's 🚀.
func TestCommentReactions(t *testing.T) {
	e := newEnv(t, Options{})
	e.fake.AddToken("tok-alice", "alice")
	id := e.fake.AddComment(owner, repo, 7, botLogin, "D-001 → approve")
	other := e.fake.AddComment(owner, repo, 7, "alice", "/resolve D-001 approve")
	alice, err := New(Options{BaseURL: e.fake.URL(), Token: "tok-alice", Now: e.clock.Now, Sleep: e.clock.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	if err := alice.CreateCommentReaction(ctx, owner, repo, id, "rocket"); err != nil {
		t.Fatal(err)
	}
	who, err := e.c.CommentReactors(ctx, owner, repo, id, "rocket")
	if err != nil || strings.Join(who, ",") != "alice" {
		t.Fatalf("rocket reactors %v (%v), want alice only", who, err)
	}
	if err := e.c.CreateCommentReaction(ctx, owner, repo, id, "rocket"); err != nil {
		t.Fatal(err)
	}
	if err := e.c.CreateCommentReaction(ctx, owner, repo, id, "hooray"); err != nil {
		t.Fatal(err)
	}
	cs, err := e.c.ListIssueComments(ctx, owner, repo, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].ID != id || cs[0].Reactions["rocket"] != 2 || cs[0].Reactions["hooray"] != 1 || len(cs[0].Reactions) != 2 {
		t.Fatalf("comments %+v, want rocket 2 and hooray 1 on %d", cs, id)
	}
	if cs[1].ID != other || cs[1].Reactions != nil {
		t.Errorf("comment without reactions has %v", cs[1].Reactions)
	}
	who, err = e.c.CommentReactors(ctx, owner, repo, id, "rocket")
	if err != nil || strings.Join(who, ",") != "alice,"+botLogin {
		t.Errorf("rocket reactors %v (%v), want alice and %s", who, err, botLogin)
	}
	if _, err := e.c.CommentReactors(ctx, owner, repo, id, "party"); err == nil {
		t.Error("an unknown reaction content was accepted")
	}
}
