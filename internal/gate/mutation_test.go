package gate

import (
	"reflect"
	"testing"

	"github.com/phasegate/phasegate/internal/check"
)

// TestMutationRunLevelFindings: findings about the run rather than a file
// (nothing to check was found, the root could not be read) are reasons of
// their own: an error among them holds the commit — a run that checked
// nothing must never ship — and a warning advises. Found by bench/mutation
// (issue 18): without this test the HOLD could turn into SHIP unnoticed.
func TestMutationRunLevelFindings(t *testing.T) {
	nothing := check.Finding{Severity: check.SeverityError, Rule: "run", Message: "no artifact found under the root"}
	note := check.Finding{Severity: check.SeverityWarning, Rule: "run", Message: "3 files skipped"}
	warnB := check.Finding{File: "b.yaml", Line: 2, Severity: check.SeverityWarning, Rule: "x.y", Message: "meh b"}
	tests := []struct {
		name     string
		findings []check.Finding
		want     Result
	}{
		{name: "an error about the run holds", findings: []check.Finding{nothing},
			want: Result{Verdict: Hold, Reasons: []string{"HOLD: no artifact found under the root"}}},
		{name: "a warning about the run advises", findings: []check.Finding{note},
			want: Result{Verdict: Advisory, Reasons: []string{"ADVISORY: 3 files skipped"}}},
		{name: "both, with a file's warning", findings: []check.Finding{warnB, note, nothing},
			want: Result{Verdict: Hold, Reasons: []string{"HOLD: no artifact found under the root",
				"ADVISORY: b.yaml — 1 warning, first at line 2: meh b", "ADVISORY: 3 files skipped"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := FromFindings(tc.findings); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("FromFindings =\n%#v\nwant\n%#v", got, tc.want)
			}
		})
	}
}
