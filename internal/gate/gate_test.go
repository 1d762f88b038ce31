package gate

import (
	"reflect"
	"testing"

	"github.com/phasegate/phasegate/internal/check"
)

func TestCompute(t *testing.T) {
	errA := check.Finding{File: "a.yaml", Line: 3, Severity: check.SeverityError, Rule: "schema", Message: "bad a"}
	errA2 := check.Finding{File: "a.yaml", Line: 9, Severity: check.SeverityError, Rule: "schema", Message: "worse a"}
	warnB := check.Finding{File: "b.yaml", Line: 2, Severity: check.SeverityWarning, Rule: "x.y", Message: "meh b"}
	hold := check.Status{Family: "pace", Unit: "PACE day 3", Decisions: []check.Decision{
		{File: ".pace/day-3/gate.md", Effect: "SHIP", Reason: "GATE decided SHIP"},
		{File: ".pace/day-3/sentinel.md", Effect: "HOLD", Reason: "SENTINEL decided HOLD: rotate the key"},
	}}
	advisory := check.Status{Family: "scc", Unit: "SCC t", Decisions: []check.Decision{
		{File: "artifacts/t/verdict.json", Effect: "ADVISORY", Reason: "SCC verdict RETRY"},
	}}
	ship := check.Status{Family: "jg", Unit: "JG 1", Decisions: []check.Decision{{File: ".pipeline/1/review-result.json", Effect: "SHIP", Reason: "reviewer PASS"}}}

	tests := []struct {
		name     string
		findings []check.Finding
		statuses []check.Status
		want     Result
	}{
		{name: "nothing", want: Result{Verdict: Ship, Reasons: []string{}}},
		{name: "shipping decisions only", statuses: []check.Status{ship}, want: Result{Verdict: Ship, Reasons: []string{}}},
		{name: "warning advises", findings: []check.Finding{warnB}, want: Result{Verdict: Advisory, Reasons: []string{
			"ADVISORY: b.yaml — 1 warning, first at line 2: meh b"}}},
		{name: "advisory decision advises", statuses: []check.Status{advisory, ship}, want: Result{Verdict: Advisory, Reasons: []string{
			"ADVISORY: artifacts/t/verdict.json — SCC verdict RETRY"}}},
		{name: "error holds, one reason per file, first error named", findings: []check.Finding{errA, errA2, warnB}, want: Result{Verdict: Hold, Reasons: []string{
			"HOLD: a.yaml — 2 errors, first at line 3: bad a",
			"ADVISORY: b.yaml — 1 warning, first at line 2: meh b"}}},
		{name: "a holding decision holds without findings", statuses: []check.Status{hold}, want: Result{Verdict: Hold, Reasons: []string{
			"HOLD: .pace/day-3/sentinel.md — SENTINEL decided HOLD: rotate the key"}}},
		{name: "decisions come before findings, holds before advisories", findings: []check.Finding{warnB, errA}, statuses: []check.Status{advisory, hold}, want: Result{Verdict: Hold, Reasons: []string{
			"HOLD: .pace/day-3/sentinel.md — SENTINEL decided HOLD: rotate the key",
			"HOLD: a.yaml — 1 error, first at line 3: bad a",
			"ADVISORY: artifacts/t/verdict.json — SCC verdict RETRY",
			"ADVISORY: b.yaml — 1 warning, first at line 2: meh b"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Compute(tc.findings, tc.statuses)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Compute =\n%#v\nwant\n%#v", got, tc.want)
			}
		})
	}
}

func TestFromFindingsIgnoresNothing(t *testing.T) {
	fs := []check.Finding{{File: "x", Line: 1, Severity: check.SeverityError, Message: "m"}}
	if got := FromFindings(fs); got.Verdict != Hold {
		t.Errorf("FromFindings = %v, want HOLD", got.Verdict)
	}
}
