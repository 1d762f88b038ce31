package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/decide"
)

// TestActionNeverPassesWhatItCouldNotCheck: issue 31 runs the action
// through the App's checking job, whose rule is that a commit it could not
// check never passes. Each case is a way to have phasegate/contracts judge
// less than the gate: the default branch's configuration unreadable (the
// defaults would check instead), the change unlistable (the commit-aware
// rules, outcome.immutable here, would be skipped), an outcome that cannot
// be posted (it names no issue, on a push). None may leave the head with a
// green phasegate/contracts.
func TestActionNeverPassesWhatItCouldNotCheck(t *testing.T) {
	t.Parallel()
	const path = "outcomes/feature-001-requirements.outcome.yaml"
	tests := []struct {
		name      string
		base      map[string]string
		head      map[string]string
		shallow   bool   // a checkout without history: the change comes from the API
		fail      string // the API path that keeps failing
		wantCode  int
		wantState string // phasegate/contracts on the head ("": none)
		wantLog   string
	}{
		{name: "the configuration cannot be read", base: map[string]string{"README.md": "shop\n"},
			head: map[string]string{".pace/day-1/gate-report.yaml": goodGate}, fail: "/contents/.github/phasegate.yml",
			wantCode: exitCouldNot, wantLog: "reading .github/phasegate.yml from the default branch"},
		{name: "the change cannot be listed", base: map[string]string{path: seedOutcome},
			head:    map[string]string{path: strings.Replace(seedOutcome, "blocking: true", "blocking: false", 1)},
			shallow: true, fail: "/compare/", wantCode: exitCouldNot, wantLog: "listing the files changed since"},
		{name: "an outcome that names no issue, on a push", base: map[string]string{"README.md": "shop\n"},
			head:     map[string]string{"outcomes/avatar-requirements.outcome.yaml": strings.Replace(seedOutcome, "feature: feature-001", "feature: avatar-upload", 1)},
			wantCode: exitFindings, wantState: "failure", wantLog: "outcome.issue"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub and checkout
			f := newRepoFixture(t)
			base := f.commit(tc.base)
			head := f.commit(tc.head)
			if tc.shallow {
				if err := os.RemoveAll(filepath.Join(f.dir, ".git")); err != nil {
					t.Fatal(err)
				}
			}
			if tc.fail != "" {
				f.fake.FailNext(50, 502, tc.fail) // GitHub keeps failing it
			}
			code, log := f.runAction(f.env("push", pushEvent(base, head), nil))
			st, set := f.fake.LatestStatus("acme", "shop", head, decide.ContextContracts)
			if code != tc.wantCode || st.State != tc.wantState || !strings.Contains(log, tc.wantLog) {
				t.Fatalf("exit %d, %s %q (set: %t); want exit %d, %q, a log saying %q:\n%s", code, decide.ContextContracts, st.State, set, tc.wantCode, tc.wantState, tc.wantLog, log)
			}
		})
	}
}

// TestWorkflowRunNeverPublishesWhatItCouldNotCheck: the workflow_run run
// that publishes a fork's results checks the head itself, with the same
// job: when the default branch's configuration cannot be read it refuses
// (an error status on the head), never publishes a verdict computed with
// the defaults, which the fork's change could count on being looser.
func TestWorkflowRunNeverPublishesWhatItCouldNotCheck(t *testing.T) {
	t.Parallel()
	f := newRepoFixture(t)
	head, _, workspace := forkRun(t, f, map[string]string{".pace/day-1/gate-report.yaml": goodGate})
	f.fake.FailNext(50, 502, "/contents/.github/phasegate.yml") // GitHub keeps failing it
	code, log := f.runAction(f.env("workflow_run", workflowRunEvent(head, "mallory/shop"), map[string]string{
		"INPUT_RESULTS-FILE": resultsFile, "GITHUB_WORKSPACE": workspace}))
	contracts, _ := f.fake.LatestStatus("acme", "shop", head, decide.ContextContracts)
	if code != exitCouldNot || contracts.State != "error" || !strings.Contains(log, "reading .github/phasegate.yml from the default branch") {
		t.Fatalf("exit %d, %s = %+v; want exit %d and error, refusing to publish:\n%s", code, decide.ContextContracts, contracts, exitCouldNot, log)
	}
}
