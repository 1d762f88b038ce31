package report

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/gate"
	"github.com/phasegate/phasegate/internal/testutil"
)

func pipelineReport() Report {
	r := realisticReport()
	r.Pipeline = []check.Status{
		{Family: "pace", Unit: "PACE day 3", State: "GATE SHIP, SENTINEL HOLD, CONDUIT —", Decisions: []check.Decision{
			{File: ".pace/day-3/gate.md", Line: 12, Effect: "SHIP", Reason: "GATE decided SHIP"},
			{File: ".pace/day-3/sentinel.md", Line: 10, Effect: "HOLD", Reason: "SENTINEL decided HOLD: rotate the key"},
		}},
		{Family: "jg", Unit: "JG ISSUE-42 \"]:::x\n<script>", State: "stage review, FAIL #60; @org/team", Decisions: []check.Decision{
			{File: ".pipeline/ISSUE-42/review-result.json", Line: 2, Effect: "HOLD", Reason: "reviewer FAIL: 1 blocker"},
		}},
		{Family: "outcome", Unit: "Outcome feature-42 requirements", State: "2 decisions pending (1 blocking)"},
	}
	r.Verdict = gate.Compute(r.Findings, r.Pipeline)
	return r
}

func TestMarkdownGolden(t *testing.T) {
	withFixedCatalogue(t)
	tests := []struct {
		name   string
		report Report
		links  SummaryLinks
	}{
		{name: "summary-realistic", report: pipelineReport(), links: SummaryLinks{BlobBase: "https://github.com/acme/shop/blob/0123456789abcdef0123456789abcdef01234567/", Commit: "0123456789abcdef0123456789abcdef01234567"}},
		{name: "summary-empty", report: emptyReport()},
		{name: "summary-run", report: pipelineReport(), links: SummaryLinks{Commit: "0123456789abcdef0123456789abcdef01234567", Run: &RunSummary{
			Posted: []PostedLink{{Source: "outcomes/feature-042-requirements.outcome.yaml", Issue: 42, URL: "https://github.com/acme/shop/issues/42#issuecomment-7"}},
			Statuses: []StatusLine{
				{Context: "phasegate/contracts", State: "failure", Description: "HOLD: .pace/day-3/sentinel.md — SENTINEL decided HOLD", URL: "https://github.com/acme/shop/actions/runs/77"},
				{Context: "phasegate/decisions", State: "pending", Description: "D-001 of feature-042 requirements is unresolved", URL: "https://github.com/acme/shop/issues/42#issuecomment-7"},
			},
			StatusSHA: "0123456789abcdef0123456789abcdef01234567",
			Skipped:   []string{"commit-aware checks: this event has no base commit (a new branch)"},
		}}},
		{name: "summary-failed", report: emptyReport(), links: SummaryLinks{Commit: "0123456789abcdef0123456789abcdef01234567", Run: &RunSummary{
			Failed:   true,
			Statuses: []StatusLine{{Context: "phasegate/contracts", State: "success", Description: "SHIP: 0 artifacts, 0 errors, 0 warnings", URL: "https://github.com/acme/shop/actions/runs/77"}},
			Failures: []string{"could not set the phasegate/decisions status: setting phasegate/decisions on 0123: 502 Server Error"},
		}}},
		{name: "summary-read-only", report: emptyReport(), links: SummaryLinks{Run: &RunSummary{
			ReadOnly: "this pull request comes from the fork mallory/shop: its token is read-only",
			Notes:    []string{"the results were saved to phasegate-results.json for a workflow_run run to publish"},
		}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Markdown(&buf, tc.report, tc.links); err != nil {
				t.Fatal(err)
			}
			testutil.Golden(t, filepath.Join("testdata", "golden", tc.name+".md"), buf.Bytes())
		})
	}
}

// TestMarkdownStaysUnderTheLimit: with far more findings than fit, the
// summary stays under GitHub's 1 MiB and says how many were left out.
func TestMarkdownStaysUnderTheLimit(t *testing.T) {
	// The longest line Markdown writes past the limit: the note saying how
	// many findings were left out.
	const note = 200
	if summaryLimit != maxSummary || maxSummary+note > 1<<20 {
		t.Fatalf("Markdown caps the findings at %d bytes (maxSummary %d): over GitHub's 1 MiB with its note", summaryLimit, maxSummary)
	}
	// The cap, lowered: filling 900 KiB took 10 s under -race. Not
	// parallel: the parallel tests run after this one has restored it.
	summaryLimit = 64 << 10
	t.Cleanup(func() { summaryLimit = maxSummary })
	var fs []check.Finding
	for i := 0; i < 2000; i++ {
		fs = append(fs, check.Finding{File: fmt.Sprintf("a/b/c/%05d.yaml", i), Line: i + 1, Column: 1, Kind: "pace.gate-report", Rule: "schema", Severity: check.SeverityError, Message: strings.Repeat("long message ", 8)})
	}
	r := Report{Artifacts: len(fs), Findings: fs, Verdict: gate.FromFindings(fs)}
	var buf bytes.Buffer
	if err := Markdown(&buf, r, SummaryLinks{BlobBase: "https://github.com/o/r/blob/sha/"}); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > summaryLimit+note {
		t.Fatalf("summary is %d bytes, over its limit of %d and the note", buf.Len(), summaryLimit)
	}
	if !strings.Contains(buf.String(), "more findings are not listed here") {
		t.Error("the summary does not say that findings were left out")
	}
}

// TestMarkdownEscapesAgentText: unit names and states (from artifacts) cannot
// break the Mermaid block or the tables.
func TestMarkdownEscapesAgentText(t *testing.T) {
	var buf bytes.Buffer
	if err := Markdown(&buf, pipelineReport(), SummaryLinks{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	mermaid := out[strings.Index(out, "```mermaid"):]
	mermaid = mermaid[:strings.Index(mermaid[3:], "```")+6]
	for _, bad := range []string{"<script>", "#60;", "\"]:::x"} {
		if strings.Contains(mermaid, bad) {
			t.Errorf("mermaid block contains %q:\n%s", bad, mermaid)
		}
	}
	if strings.Contains(out, "@org/team") {
		t.Error("a mention survived outside the Mermaid block")
	}
}

// TestRunSummaryEscapes: what a run did carries agent text (file names,
// status descriptions) and GitHub URLs; neither may add markup or links.
func TestRunSummaryEscapes(t *testing.T) {
	var buf bytes.Buffer
	run := RunSummary{
		Posted:   []PostedLink{{Source: "outcomes/[x](https://evil.example)@team.yaml", Issue: 1, URL: "https://github.com/a/b/issues/1#c) [y](https://evil.example"}},
		Statuses: []StatusLine{{Context: "phasegate/contracts", State: "failure", Description: "HOLD: <img src=x> @org/team\n## pwned", URL: "javascript:alert(1)"}},
		Failures: []string{"::error::pwned <script>"},
	}
	if err := Markdown(&buf, emptyReport(), SummaryLinks{Run: &run}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, bad := range []string{"[x](", "<img", "@org/team", "\n## pwned", "javascript:", "<script>", ") [y]("} {
		if strings.Contains(out, bad) {
			t.Errorf("the summary contains %q:\n%s", bad, out)
		}
	}
}
