package decide

import (
	"context"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/ghclient"
)

// TestCheckRunRecords: a status recorded as a check run reads back as the
// same status, and a pending or error state is never a passing conclusion.
func TestCheckRunRecords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		state, wantConclusion string
	}{
		{state: "success", wantConclusion: "success"},
		{state: "failure", wantConclusion: "failure"},
		{state: "pending", wantConclusion: "action_required"},
		{state: "error", wantConclusion: "failure"},
	}
	for _, tt := range tests {
		t.Run(tt.state, func(t *testing.T) {
			s := ghclient.Status{Context: ContextDecisions, State: tt.state, Description: "1 decision pending", TargetURL: "https://github.com/o/r/issues/1#issuecomment-2"}
			cr := CheckRunOf("abc", s)
			if cr.Status != "completed" || cr.Conclusion != tt.wantConclusion || cr.Name != ContextDecisions || cr.DetailsURL != s.TargetURL {
				t.Fatalf("check run %+v", cr)
			}
			cr.AppSlug = "phasegate"
			back := StatusOf(cr)
			s.Creator = "phasegate[bot]"
			if back != s {
				t.Fatalf("read back %+v, want %+v", back, s)
			}
		})
	}
	// A check run phasegate did not write (no external id) reads by its
	// conclusion, and in progress is pending.
	if got := StatusOf(ghclient.CheckRun{Status: "in_progress"}); got.State != "pending" {
		t.Fatalf("in progress reads %q", got.State)
	}
	if got := StatusOf(ghclient.CheckRun{Status: "completed", Conclusion: "timed_out"}); got.State != "failure" {
		t.Fatalf("timed out reads %q", got.State)
	}
}

// TestRecordHistoryByPublishMode: the App's records are its check runs;
// with both, the statuses written before still count, after the runs.
func TestRecordHistoryByPublishMode(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.fake.AddAppToken("tok-app", 4242, "phasegate")
	app, err := ghclient.New(ghclient.Options{BaseURL: w.fake.URL(), Token: "tok-app"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	old := ghclient.Status{Context: ContextLedger, State: "success", TargetURL: "https://github.com/acme/shop/issues/42#issuecomment-1"}
	if err := app.CreateStatus(ctx, owner, repo, headSHA, old); err != nil {
		t.Fatal(err)
	}
	now := ghclient.Status{Context: ContextLedger, State: "failure", TargetURL: "https://github.com/acme/shop/issues/42#issuecomment-2", Description: "frozen"}
	if _, err := app.CreateCheckRun(ctx, owner, repo, CheckRunOf(headSHA, now)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		publish string
		want    []string // target URLs, newest first
	}{
		{publish: PublishStatuses, want: []string{old.TargetURL}},
		{publish: PublishChecks, want: []string{now.TargetURL}},
		{publish: PublishBoth, want: []string{now.TargetURL, old.TargetURL}},
	}
	for _, tt := range tests {
		t.Run(tt.publish, func(t *testing.T) {
			h := &Handler{Publish: tt.publish}
			hs, err := h.recordHistory(ctx, app, owner, repo, headSHA, ContextLedger)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range hs {
				got = append(got, s.TargetURL)
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Fatalf("history %v, want %v", got, tt.want)
			}
		})
	}
}
