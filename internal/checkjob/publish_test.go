package checkjob

import (
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/gate"
	"github.com/phasegate/phasegate/internal/report"
)

// TestContractsConclusion: the check run is never success on HOLD, neutral
// on ADVISORY, success on SHIP, and the status's state follows.
func TestContractsConclusion(t *testing.T) {
	errF := check.Finding{File: "a.yaml", Line: 3, Column: 2, Rule: "schema", Severity: check.SeverityError, Message: "bad"}
	warnF := check.Finding{File: "b.yaml", Line: 1, Rule: "x.y", Severity: check.SeverityWarning, Message: "meh"}
	tests := []struct {
		name                 string
		findings             []check.Finding
		wantState, wantConcl string
	}{
		{name: "SHIP", wantState: "success", wantConcl: "success"},
		{name: "ADVISORY", findings: []check.Finding{warnF}, wantState: "success", wantConcl: "neutral"},
		{name: "HOLD", findings: []check.Finding{errF, warnF}, wantState: "failure", wantConcl: "failure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := report.Report{Artifacts: 2, Findings: tt.findings, Pipeline: []check.Status{}}
			rep.Verdict = gate.Compute(tt.findings, nil)
			c := (&Job{}).contracts(rep, Request{SHA: strings.Repeat("a", 40), HTMLURL: "https://github.com/o/r"}, "https://github.com/o/r/pull/1")
			if c.State != tt.wantState || c.Conclusion != tt.wantConcl {
				t.Fatalf("state %s conclusion %s, want %s %s", c.State, c.Conclusion, tt.wantState, tt.wantConcl)
			}
			if !strings.HasPrefix(c.Title, string(rep.Verdict.Verdict)+": ") || strings.Contains(c.Title, ": "+string(rep.Verdict.Verdict)+": ") {
				t.Fatalf("title %q: the verdict once, first", c.Title)
			}
			if len(c.Annotations) != len(tt.findings) {
				t.Fatalf("%d annotations for %d findings", len(c.Annotations), len(tt.findings))
			}
		})
	}
}

// TestAnnotations: one per finding with a file, errors first, at its line
// and column; capped, and the summary says how many were cut.
func TestAnnotations(t *testing.T) {
	var fs []check.Finding
	for i := 0; i < 120; i++ {
		fs = append(fs, check.Finding{File: "w.yaml", Line: i + 1, Rule: "w", Severity: check.SeverityWarning, Message: "w\u202e"})
	}
	fs = append(fs, check.Finding{File: "e.yaml", Line: 0, Column: 4, Rule: "e", Severity: check.SeverityError, Message: "e"},
		check.Finding{Rule: "nothing-found", Severity: check.SeverityWarning, Message: "no file"})
	got := annotations(fs, 50)
	if len(got) != 50 {
		t.Fatalf("%d annotations, want 50", len(got))
	}
	if a := got[0]; a.Path != "e.yaml" || a.Level != "failure" || a.StartLine != 1 || a.StartColumn != 4 || a.EndColumn != 4 {
		t.Fatalf("first annotation %+v, want the error at line 1 column 4", a)
	}
	if strings.ContainsRune(got[1].Message, '\u202e') {
		t.Fatalf("a bidi control reached an annotation: %q", got[1].Message)
	}
	rep := report.Report{Findings: fs, Pipeline: []check.Status{}, Verdict: gate.Compute(fs, nil)}
	c := (&Job{MaxAnnotations: 50}).contracts(rep, Request{SHA: strings.Repeat("b", 40)}, "")
	if !strings.Contains(c.Summary, "**50 of 121 findings are annotated**") {
		t.Fatalf("the summary does not say findings were cut:\n%s", c.Summary[:200])
	}
}

// TestRunsPhasegate: a workflow is part of the gate when it mentions
// phasegate anywhere, in any case.
func TestRunsPhasegate(t *testing.T) {
	tests := []struct {
		name string
		wf   string
		want bool
	}{
		{name: "the action", wf: "steps:\n  - uses: phasegate/phasegate@v1\n", want: true},
		{name: "the image", wf: "steps:\n  - uses: docker://ghcr.io/PhaseGate/phasegate:v1\n", want: true},
		{name: "the action in capitals", wf: "steps:\n  - uses: PhaseGate/PhaseGate@v1\n", want: true},
		{name: "another tool", wf: "steps:\n  - run: make test\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runsPhasegate([]byte(tt.wf)); got != tt.want {
				t.Fatalf("runsPhasegate = %v, want %v", got, tt.want)
			}
		})
	}
}
