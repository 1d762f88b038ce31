// Package report renders a run's findings and verdict: text for people,
// JSON (the public shape the README documents under output formats), SARIF 2.1.0 for code scanning, and
// GitHub workflow-command annotations. It is pure: it writes to the writer it
// is given and nothing else. Everything an agent wrote is escaped for the
// medium it lands in.
package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/gate"
)

// Report is what every format renders.
type Report struct {
	Verdict   gate.Result
	Artifacts int
	Findings  []check.Finding
	// Version of phasegate, for formats that name the tool.
	Version string
	// Pipeline, when not nil, is where each pipeline unit stands
	// (phasegate gate): the text format prints it as a table with the
	// verdict's reasons, the JSON format as "pipeline".
	Pipeline []check.Status
	// SourceRoot, when not empty, is the absolute "file:" URI (ending in
	// '/', see DirURI) of the repository root, and the findings' files are
	// relative to it rather than to the checked root: SARIF
	// declares it as %SRCROOT%. Only SARIF reads it; callers set it (and
	// rebase the files) for SARIF only, since the other formats keep files
	// relative to the checked root.
	SourceRoot string
	// Color asks the text format for ANSI colours (severities, the verdict),
	// for a terminal. Everything an artifact says stays escaped.
	Color bool
}

// Formats are the names accepted by --format.
var Formats = []string{"text", "json", "sarif", "github"}

// Write renders r in the named format.
func Write(w io.Writer, format string, r Report) error {
	switch format {
	case "text":
		return Text(w, r)
	case "json":
		return JSON(w, r)
	case "sarif":
		return SARIF(w, r)
	case "github":
		return GitHub(w, r)
	}
	return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(Formats, ", "))
}

// jsonFormatVersion is the JSON report's format_version: raised only when a
// key changes meaning or goes away (docs/cli.md), never for an added key.
const jsonFormatVersion = 1

type jsonReport struct {
	FormatVersion int             `json:"format_version"`
	Verdict       gate.Verdict    `json:"verdict"`
	Reasons       []string        `json:"reasons"`
	Artifacts     int             `json:"artifacts"`
	Findings      []check.Finding `json:"findings"`
	// Pipeline is present for phasegate gate only, always a list (empty
	// when no pipeline artifact was found); an addition to the four keys
	// validate prints, which it leaves as they are.
	Pipeline *[]check.Status `json:"pipeline,omitempty"`
}

// JSON writes the one-object shape the README documents. Lists are never null.
// Bidirectional controls and C1 controls in strings are written as \u
// escapes (the decoded values are unchanged), so the JSON is safe to print.
func JSON(w io.Writer, r Report) error {
	out := jsonReport{FormatVersion: jsonFormatVersion, Verdict: r.Verdict.Verdict, Reasons: append([]string{}, r.Verdict.Reasons...), Artifacts: r.Artifacts, Findings: r.Findings}
	if r.Pipeline != nil {
		out.Pipeline = &r.Pipeline
	}
	if out.Findings == nil {
		out.Findings = []check.Finding{}
	}
	data, err := EncodeJSON(out)
	if err != nil {
		return fmt.Errorf("encoding json report: %w", err)
	}
	return flush(w, string(data), "json report")
}

// Text writes `file:line:col: severity rule: message`, one line per finding,
// a blank line between files, then a one-line summary. With r.Color, the
// location is bold and the severities and the verdict are coloured.
func Text(w io.Writer, r Report) error {
	c := palette{on: r.Color}
	var b strings.Builder
	prev := ""
	for i, f := range r.Findings {
		if i > 0 && f.File != prev {
			b.WriteByte('\n')
		}
		prev = f.File
		if f.File == "" {
			// A finding about the run, not a file (nothing found).
			fmt.Fprintf(&b, "phasegate: %s %s: %s\n", c.word(string(f.Severity)), Terminal(f.Rule), Terminal(f.Message))
			continue
		}
		fmt.Fprintf(&b, "%s: %s %s: %s\n", c.paint(sgrBold, fmt.Sprintf("%s:%d:%d", Terminal(f.File), f.Line, f.Column)), c.word(string(f.Severity)), Terminal(f.Rule), Terminal(f.Message))
	}
	if len(r.Findings) > 0 {
		b.WriteByte('\n')
	}
	if r.Pipeline != nil {
		writePipeline(&b, r.Pipeline)
		if len(r.Verdict.Reasons) > 0 {
			fmt.Fprintf(&b, "Verdict %s because:\n", c.word(string(r.Verdict.Verdict)))
			for _, reason := range r.Verdict.Reasons {
				fmt.Fprintf(&b, "  %s\n", Terminal(reason))
			}
			b.WriteByte('\n')
		}
	}
	errs, warns := check.Count(r.Findings)
	fmt.Fprintf(&b, "%s checked: %s, %s — %s\n", plural(r.Artifacts, "artifact"), plural(errs, "error"), plural(warns, "warning"), c.word(string(r.Verdict.Verdict)))
	return flush(w, b.String(), "text report")
}

// flush writes a rendered report to w; what names it in the error.
func flush(w io.Writer, s, what string) error {
	if _, err := io.WriteString(w, s); err != nil {
		return fmt.Errorf("writing %s: %w", what, err)
	}
	return nil
}

// ANSI SGR sequences of the text format's colours.
const (
	sgrReset  = "\x1b[0m"
	sgrBold   = "\x1b[1m"
	sgrRed    = "\x1b[1;31m"
	sgrYellow = "\x1b[33m"
	sgrGreen  = "\x1b[1;32m"
)

// palette colours text when on; off, it returns the text as it is. Its
// arguments are phasegate's own words or already escaped.
type palette struct{ on bool }

func (p palette) paint(sgr, s string) string {
	if !p.on {
		return s
	}
	return sgr + s + sgrReset
}

// colours are the SGR colours of the severities and the verdicts.
var colours = map[string]string{
	string(check.SeverityError): sgrRed, string(check.SeverityWarning): sgrYellow,
	string(gate.Ship): sgrGreen, string(gate.Advisory): sgrYellow, string(gate.Hold): sgrRed,
}

// word paints a severity or a verdict in its colour.
func (p palette) word(s string) string {
	if sgr, ok := colours[s]; ok {
		return p.paint(sgr, s)
	}
	return Terminal(s)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// writePipeline prints one compact line per unit, grouped by family.
func writePipeline(b *strings.Builder, statuses []check.Status) {
	if len(statuses) == 0 {
		b.WriteString("Pipeline: no pipeline artifacts found\n\n")
		return
	}
	width := 0
	for _, st := range statuses {
		width = max(width, len([]rune(Terminal(st.Unit))))
	}
	b.WriteString("Pipeline:\n")
	for _, fam := range artifact.Families() {
		for _, st := range statuses {
			if st.Family != fam.ID {
				continue
			}
			unit := Terminal(st.Unit)
			fmt.Fprintf(b, "  %s%s  %s\n", unit, strings.Repeat(" ", width-len([]rune(unit))), Terminal(st.State))
		}
	}
	b.WriteByte('\n')
}
