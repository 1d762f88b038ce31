package checkjob

import (
	"cmp"
	"fmt"
	"math"
	"strings"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/gate"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/report"
)

// defaultMaxAnnotations caps one check run's annotations: GitHub takes 50
// per request, so 500 is ten requests.
const defaultMaxAnnotations = 500

// contracts is phasegate/contracts for a report: failure on HOLD (never
// success), neutral on ADVISORY, success on SHIP; the job summary's
// Markdown as output; one annotation per finding with a file.
func (j *Job) contracts(rep report.Report, req Request, details string) decide.Contracts {
	c := decide.Contracts{State: "success", Conclusion: "success", DetailsURL: details}
	switch rep.Verdict.Verdict {
	case gate.Hold:
		c.State, c.Conclusion = "failure", "failure"
	case gate.Advisory:
		c.Conclusion = "neutral"
	}
	c.Title = ContractsTitle(rep)
	links := report.SummaryLinks{Commit: req.SHA}
	if req.HTMLURL != "" {
		links.BlobBase = req.HTMLURL + "/blob/" + req.SHA + "/"
	}
	var b strings.Builder
	if err := report.Markdown(&b, rep, links); err != nil {
		b.Reset()
		b.WriteString("phasegate could not render the summary: " + report.Terminal(err.Error()))
	}
	limit := cmp.Or(max(j.MaxAnnotations, 0), defaultMaxAnnotations)
	c.Annotations, c.Summary = annotations(rep.Findings, limit), b.String()
	if n := len(annotations(rep.Findings, math.MaxInt)); n > len(c.Annotations) {
		c.Summary = fmt.Sprintf("> **%d of %d findings are annotated** (at most %d per check run); every finding is listed below.\n\n", len(c.Annotations), n, limit) + c.Summary
	}
	return c
}

// ContractsTitle is phasegate/contracts' one line, for the App's check run
// and the action's status alike: the verdict and its first reason, or the
// counts.
func ContractsTitle(rep report.Report) string {
	d := string(rep.Verdict.Verdict)
	if len(rep.Verdict.Reasons) > 0 {
		// A reason starts with its verdict ("HOLD: …").
		r := report.Terminal(rep.Verdict.Reasons[0])
		if strings.HasPrefix(r, d+": ") {
			return r
		}
		return d + ": " + r
	}
	errs, warns := check.Count(rep.Findings)
	return d + fmt.Sprintf(": %d artifacts, %d errors, %d warnings", rep.Artifacts, errs, warns)
}

// annotations are the findings with a file, errors first, at most limit.
// Annotation text is shown as plain text: the message is made terminal-safe
// (no control or bidi characters) and the rule is the title.
func annotations(fs []check.Finding, limit int) []ghclient.Annotation {
	var out []ghclient.Annotation
	for _, sev := range []check.Severity{check.SeverityError, check.SeverityWarning} {
		for _, f := range fs {
			if f.Severity != sev || f.File == "" || len(out) >= limit {
				continue
			}
			line := max(f.Line, 1)
			a := ghclient.Annotation{Path: f.File, StartLine: line, EndLine: line, Level: "failure",
				Title: report.Terminal(f.Rule), Message: report.Terminal(f.Message)}
			if sev == check.SeverityWarning {
				a.Level = "warning"
			}
			if f.Column > 0 {
				a.StartColumn, a.EndColumn = f.Column, f.Column
			}
			out = append(out, a)
		}
	}
	return out
}
