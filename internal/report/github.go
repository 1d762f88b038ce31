package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/phasegate/phasegate/internal/check"
)

// GitHub writes one workflow command per finding (::error / ::warning with
// file, line, col and title), errors first (GitHub shows only the first few
// annotations of each kind per step), then a ::notice with the verdict.
// Values are escaped as the Actions toolkit does, so nothing an agent wrote
// can end the command or start another one; control and bidirectional
// characters are made visible first (see Terminal), since the command line
// is also printed as is in the job log.
func GitHub(w io.Writer, r Report) error {
	var b strings.Builder
	for _, sev := range []check.Severity{check.SeverityError, check.SeverityWarning} {
		for _, f := range r.Findings {
			if (f.Severity == check.SeverityError) != (sev == check.SeverityError) {
				continue
			}
			var props []string
			fields := Annotation(f)
			for _, k := range []string{"file", "line", "col", "title"} {
				if v, ok := fields[k]; ok {
					props = append(props, k+"="+escapeProperty(v))
				}
			}
			fmt.Fprintf(&b, "::%s %s::%s\n", sev, strings.Join(props, ","), escapeData(Terminal(f.Message)))
		}
	}
	errs, warns := check.Count(r.Findings)
	fmt.Fprintf(&b, "::notice title=phasegate::%s\n", escapeData(Terminal(fmt.Sprintf("%s checked: %s, %s — %s", plural(r.Artifacts, "artifact"), plural(errs, "error"), plural(warns, "warning"), r.Verdict.Verdict))))
	return flush(w, b.String(), "github annotations")
}

// Annotation is the properties of f's workflow command, made
// terminal-safe but not escaped: the rule (and kind) as title, and the
// file, line and column when f has a file. The action's annotations
// (go-githubactions) and GitHub's share them.
func Annotation(f check.Finding) map[string]string {
	title := "phasegate " + f.Rule
	if f.Kind != "" {
		title += " (" + f.Kind + ")"
	}
	fields := map[string]string{"title": Terminal(title)}
	if f.File != "" {
		fields["file"], fields["line"], fields["col"] = Terminal(f.File), strconv.Itoa(max(1, f.Line)), strconv.Itoa(max(1, f.Column))
	}
	return fields
}

// escapeData escapes a workflow command's message; escapeProperty a
// property value.
var (
	escapeData     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace
	escapeProperty = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace
)
