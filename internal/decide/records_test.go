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

// TestRecordExternalID: the input and pull request phasegate/contracts
// records read back as written, within GitHub's external_id; a record of
// before them reads as its state alone, matching no input.
func TestRecordExternalID(t *testing.T) {
	t.Parallel()
	digest := strings.Repeat("f", 64)
	tests := []struct {
		name   string
		id     string
		want   Record
		wantOK bool
	}{
		{name: "the state alone (as before)", id: "phasegate:success", want: Record{State: "success"}, wantOK: true},
		{name: "an input", id: "phasegate:failure;in=" + digest, want: Record{State: "failure", Input: digest}, wantOK: true},
		{name: "an input and a pull request", id: "phasegate:success;in=" + digest + ";pr=12", want: Record{State: "success", Input: digest, PR: 12}, wantOK: true},
		{name: "a pull request that is no number", id: "phasegate:success;pr=-1;pr=x", want: Record{State: "success"}, wantOK: true},
		{name: "an unknown key", id: "phasegate:success;zz=1", want: Record{State: "success"}, wantOK: true},
		{name: "not phasegate's", id: "ci:success;in=" + digest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := RecordOf(tt.id)
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("RecordOf(%q) = %+v, %v; want %+v, %v", tt.id, got, ok, tt.want, tt.wantOK)
			}
			if !ok || strings.Contains(tt.name, "no number") || strings.Contains(tt.name, "unknown") {
				return
			}
			if back := got.ExternalID(); back != tt.id {
				t.Fatalf("written back as %q, want %q", back, tt.id)
			}
			if st := StatusOf(ghclient.CheckRun{Status: "completed", Conclusion: "neutral", ExternalID: tt.id}); st.State != tt.want.State {
				t.Fatalf("StatusOf reads the state %q, want %q", st.State, tt.want.State)
			}
		})
	}
	longest := Record{State: "success", Input: digest, PR: 1<<31 - 1}.ExternalID()
	if len(longest) > 99 {
		t.Fatalf("external_id of %d characters: %q", len(longest), longest)
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
