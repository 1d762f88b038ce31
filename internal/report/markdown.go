package report

import (
	"cmp"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/gate"
	"github.com/phasegate/phasegate/internal/outcome"
)

// SummaryLinks tell the job summary where findings live on GitHub.
type SummaryLinks struct {
	// BlobBase is the URL a finding's file path is appended to, e.g.
	// "https://github.com/o/r/blob/<sha>/" (with the checked subdirectory,
	// if any). Empty: no links.
	BlobBase string
	// Commit is the checked commit, shown in the heading line.
	Commit string
	// Run is what the action run did on GitHub; nil: nothing to say (the
	// CLI).
	Run *RunSummary
}

// RunSummary is what one action run did on GitHub, for its job summary.
type RunSummary struct {
	// Failed: the run could not do its job (it exits 2); the headline then
	// never shows the verdict as if all went well.
	Failed bool
	// ReadOnly says why the run wrote nothing to GitHub ("": it could).
	ReadOnly string
	// Posted are the outcome comments posted.
	Posted []PostedLink
	// Statuses are the commit statuses set, on StatusSHA.
	Statuses  []StatusLine
	StatusSHA string
	// Skipped are the checks or steps skipped, each with why.
	Skipped []string
	// Failures are the GitHub calls that failed, each with what it was for.
	Failures []string
	// Notes are anything else the run did (a results file saved).
	Notes []string
}

// PostedLink is an outcome comment a run posted.
type PostedLink struct {
	Source string
	Issue  int
	URL    string
}

// StatusLine is a commit status a run set.
type StatusLine struct {
	Context, State, Description, URL string
}

// maxSummary keeps the job summary under GitHub's 1 MiB limit per step, with
// room for the other steps' summaries in the same job.
const maxSummary = 900 << 10

// summaryLimit is the cap Markdown applies: maxSummary, lowered only by a
// test, so that proving the cap does not take rendering 900 KiB.
var summaryLimit = maxSummary

// Bounds on the parts before the findings, so that the findings table always
// has room: a diagram of more units than this is unreadable anyway.
const (
	maxReasons      = 50
	maxPipelineRows = 200
	maxDiagramUnits = 60
)

// Markdown writes the job summary: the verdict, its reasons, where each
// pipeline stands (a Mermaid diagram and a table), and the findings with
// links to their lines. Everything an artifact contains is escaped with
// outcome.Inline, so it renders as text: no mention, no link, no HTML. When
// the findings would not fit GitHub's limit, the table stops and says how
// many more are in the log.
func Markdown(w io.Writer, r Report, links SummaryLinks) error {
	var b strings.Builder
	if links.Run != nil && links.Run.Failed {
		fmt.Fprintf(&b, "## ❌ phasegate: the run failed (the checks alone say %s)\n\n", r.Verdict.Verdict)
	} else {
		icon := map[gate.Verdict]string{gate.Ship: "✅", gate.Advisory: "⚠️", gate.Hold: "⛔"}[r.Verdict.Verdict]
		fmt.Fprintf(&b, "## %s phasegate: %s\n\n", icon, r.Verdict.Verdict)
	}
	errs, warns := check.Count(r.Findings)
	at := ""
	if links.Commit != "" {
		at = " at `" + outcome.ShortSHA(links.Commit) + "`"
	}
	fmt.Fprintf(&b, "**%s** checked%s: **%s**, **%s**.\n\n", plural(r.Artifacts, "artifact"), at, plural(errs, "error"), plural(warns, "warning"))
	if links.Run != nil {
		writeRun(&b, *links.Run)
	}
	if len(r.Verdict.Reasons) > 0 {
		b.WriteString("### Why\n\n")
		for i, reason := range r.Verdict.Reasons {
			if i == maxReasons {
				fmt.Fprintf(&b, "- … and %d more (see the findings and the log)\n", len(r.Verdict.Reasons)-i)
				break
			}
			fmt.Fprintf(&b, "- %s\n", outcome.Inline(reason))
		}
		b.WriteByte('\n')
	}
	if len(r.Pipeline) > 0 {
		b.WriteString("### Pipelines\n\n")
		if len(r.Pipeline) <= maxDiagramUnits {
			writeMermaid(&b, r.Pipeline)
		}
		b.WriteString("| pipeline | where it stands | gate |\n| --- | --- | --- |\n")
		for i, st := range r.Pipeline {
			if i == maxPipelineRows {
				fmt.Fprintf(&b, "\n… and %d more pipeline units (see the log).\n", len(r.Pipeline)-i)
				break
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", outcome.Inline(st.Unit), outcome.Inline(st.State), cmp.Or(map[string]string{"HOLD": "⛔ HOLD", "ADVISORY": "⚠️ ADVISORY", "SHIP": "✅ SHIP"}[worstEffect(st)], "—"))
		}
		b.WriteByte('\n')
	}
	if len(r.Findings) > 0 {
		b.WriteString("### Findings\n\n| | file | rule | message |\n| --- | --- | --- | --- |\n")
		ordered := slices.Clone(r.Findings) // errors before warnings, each in the usual order
		slices.SortStableFunc(ordered, func(a, b check.Finding) int { return cmp.Compare(a.Severity, b.Severity) })
		for i, f := range ordered {
			row := fmt.Sprintf("| %s | %s | `%s` | %s |\n", cmp.Or(map[check.Severity]string{check.SeverityError: "❌ error"}[f.Severity], "⚠️ warning"), fileLink(f, links), codeSafe(f.Rule), outcome.Inline(f.Message))
			if b.Len()+len(row) > summaryLimit {
				fmt.Fprintf(&b, "\n%d more findings are not listed here (GitHub limits a job summary to 1 MiB): see the step's log.\n", len(ordered)-i)
				break
			}
			b.WriteString(row)
		}
	}
	return flush(w, b.String(), "job summary")
}

// worstEffect is the most severe decision of a unit: HOLD, ADVISORY, SHIP or "".
func worstEffect(st check.Status) string {
	rank := map[string]int{"": 0, "SHIP": 1, "ADVISORY": 2, "HOLD": 3}
	worst := ""
	for _, d := range st.Decisions {
		if rank[d.Effect] > rank[worst] {
			worst = d.Effect
		}
	}
	return worst
}

// fileLink renders "file:line" as a link to the line at the checked commit.
func fileLink(f check.Finding, links SummaryLinks) string {
	text := outcome.Inline(fmt.Sprintf("%s:%d", f.File, f.Line))
	if links.BlobBase == "" || f.File == "" {
		return text
	}
	var segs []string
	for _, s := range strings.Split(f.File, "/") {
		segs = append(segs, url.PathEscape(s))
	}
	return fmt.Sprintf("[%s](%s%s#L%d)", text, links.BlobBase, strings.Join(segs, "/"), max(f.Line, 1))
}

// codeSafe keeps a rule ID inside backquotes: IDs are phasegate's own, but
// drop anything that could end the code span.
func codeSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '`' || r == '|' || r < 0x20 {
			return -1
		}
		return r
	}, s)
}

// writeMermaid draws one node per pipeline unit, grouped by family and
// coloured by its most severe decision. GitHub renders ```mermaid blocks.
func writeMermaid(b *strings.Builder, statuses []check.Status) {
	b.WriteString("```mermaid\nflowchart LR\n")
	n := 0
	for _, fam := range artifact.Families() {
		var units []check.Status
		for _, st := range statuses {
			if st.Family == fam.ID {
				units = append(units, st)
			}
		}
		if len(units) == 0 {
			continue
		}
		fmt.Fprintf(b, "  subgraph %s[\"%s\"]\n    direction LR\n", fam.ID, fam.Title)
		for _, st := range units {
			n++
			class := map[string]string{"HOLD": "hold", "ADVISORY": "advisory", "SHIP": "ship", "": "none"}[worstEffect(st)]
			fmt.Fprintf(b, "    u%d[\"%s<br/>%s\"]:::%s\n", n, mermaidText(st.Unit), mermaidText(st.State), class)
		}
		b.WriteString("  end\n")
	}
	// Light fills with dark text: readable on GitHub's light and dark
	// themes alike (the dark theme's default text colour is light).
	b.WriteString("  classDef ship fill:#dafbe1,stroke:#1a7f37,color:#1f2328\n")
	b.WriteString("  classDef advisory fill:#fff8c5,stroke:#9a6700,color:#1f2328\n")
	b.WriteString("  classDef hold fill:#ffebe9,stroke:#cf222e,color:#1f2328\n")
	b.WriteString("  classDef none fill:#f6f8fa,stroke:#8c959f,color:#1f2328\n")
	b.WriteString("```\n\n")
}

// mermaidText keeps a label to characters that cannot end it, inject markup
// or spell a Mermaid entity: letters, digits, spaces and plain punctuation;
// the rest becomes a space. Labels are at most 80 characters.
func mermaidText(s string) string {
	var out []rune
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune(" .,:/()+-_—–", r): // no '#' or ';': Mermaid reads #60; as '<'

		case r > 0x7f && r != '\u2028' && r != '\u2029' && !strings.ContainsRune("\u200b\u200c\u200d\u2060\ufeff\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069", r):
		default:
			r = ' '
		}
		out = append(out, r)
		if len(out) >= 80 {
			out = append(out, '…')
			break
		}
	}
	return strings.TrimSpace(string(out))
}

// RunMarkdown writes the job summary of a run that published what another
// run checked (workflow_run): a headline and what it did.
func RunMarkdown(w io.Writer, headline string, run RunSummary) error {
	var b strings.Builder
	icon := "✅"
	if run.Failed {
		icon = "❌"
	}
	fmt.Fprintf(&b, "## %s phasegate: %s\n\n", icon, outcome.Inline(headline))
	writeRun(&b, run)
	return flush(w, b.String(), "job summary")
}

// Bound on each list of what a run did (a run posts at most
// outcome.max_per_push outcomes; failures could repeat).
const maxRunLines = 50

// writeRun writes "What this run did": the outcomes posted, the statuses
// set and their states, what was skipped and why, and every GitHub call
// that failed. Text that comes from artifacts or GitHub is escaped.
func writeRun(b *strings.Builder, run RunSummary) {
	b.WriteString("### What this run did\n\n")
	if run.ReadOnly != "" {
		fmt.Fprintf(b, "**Nothing was written to GitHub**: %s\n\n", outcome.Inline(run.ReadOnly))
	}
	if len(run.Statuses) == 0 {
		b.WriteString("**Statuses set**: none.\n\n")
	} else {
		at := ""
		if run.StatusSHA != "" {
			at = " on `" + codeSafe(outcome.ShortSHA(run.StatusSHA)) + "`"
		}
		fmt.Fprintf(b, "**Statuses set**%s:\n\n| status | state | description |\n| --- | --- | --- |\n", at)
		for _, s := range run.Statuses {
			fmt.Fprintf(b, "| %s | %s | %s |\n", link(outcome.Inline(s.Context), s.URL), cmp.Or(map[string]string{"success": "✅ success", "failure": "❌ failure", "error": "❌ error", "pending": "⏳ pending"}[s.State], outcome.Inline(s.State)), outcome.Inline(s.Description))
		}
		b.WriteByte('\n')
	}
	if len(run.Posted) == 0 {
		b.WriteString("**Outcomes posted**: none.\n\n")
	} else {
		b.WriteString("**Outcomes posted**:\n\n")
		for i, p := range run.Posted {
			if i == maxRunLines {
				fmt.Fprintf(b, "- … and %d more\n", len(run.Posted)-i)
				break
			}
			fmt.Fprintf(b, "- %s on #%d\n", link(outcome.Inline(p.Source), p.URL), p.Issue)
		}
		b.WriteByte('\n')
	}
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(b, "**%s**:\n\n", title)
		for i, it := range items {
			if i == maxRunLines {
				fmt.Fprintf(b, "- … and %d more (see the log)\n", len(items)-i)
				break
			}
			fmt.Fprintf(b, "- %s\n", outcome.Inline(it))
		}
		b.WriteByte('\n')
	}
	list("Skipped", run.Skipped)
	list("Also", run.Notes)
	list("GitHub failures", run.Failures)
}

// link renders text as a link to u when u is an http(s) URL; the URL is
// re-encoded so that it cannot end the link or add markup.
func link(text, u string) string {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
		return text
	}
	return "[" + text + "](" + strings.NewReplacer("(", "%28", ")", "%29", " ", "%20", "<", "%3C", ">", "%3E").Replace(p.String()) + ")"
}
