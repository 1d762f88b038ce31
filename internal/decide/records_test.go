package decide

import (
	"testing"

	"github.com/phasegate/phasegate/internal/ghclient"
)

// TestCheckRunRecords: a status recorded as a check run reads back as the
// same status, and a pending or error state is never a passing conclusion.
func TestCheckRunRecords(t *testing.T) {
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
