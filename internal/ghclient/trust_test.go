package ghclient

import (
	"context"
	"testing"
)

// TestEditedComments: GraphQL's lastEditedAt tells an edit that the REST
// timestamps (one-second resolution) cannot, on github.com and GHES URLs.
func TestEditedComments(t *testing.T) {
	for _, enterprise := range []bool{false, true} {
		t.Run(map[bool]string{false: "github.com", true: "enterprise"}[enterprise], func(t *testing.T) {
			opts := Options{}
			e := newEnv(t, opts)
			if enterprise {
				var err error
				o := Options{BaseURL: e.fake.EnterpriseURL(), Token: botToken, Now: e.clock.Now, Sleep: e.clock.Sleep}
				if e.c, err = New(o); err != nil {
					t.Fatal(err)
				}
			}
			issue := e.fake.AddIssue(owner, repo, "t", "", "alice")
			plain := e.fake.AddComment(owner, repo, issue, "alice", "looks good")
			edited := e.fake.AddComment(owner, repo, issue, "alice", "looks good")
			e.fake.EditComment(edited, "looks good\n/resolve D-001 approve") // same instant on the manual clock
			cs, err := e.c.ListIssueComments(context.Background(), owner, repo, issue)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			byID := map[int64]string{}
			for _, c := range cs {
				ids = append(ids, c.NodeID)
				byID[c.ID] = c.NodeID
			}
			got, err := e.c.EditedComments(context.Background(), append(ids, "IC_999999"))
			if err != nil {
				t.Fatal(err)
			}
			if got[byID[plain]] || !got[byID[edited]] {
				t.Errorf("edited = %v, want only comment %d", got, edited)
			}
			if _, ok := got["IC_999999"]; ok {
				t.Error("a missing comment is reported")
			}
		})
	}
}
