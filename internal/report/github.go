package report

import (
	"fmt"
	"io"
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
			if f.File != "" {
				props = append(props,
					"file="+escapeProperty(Terminal(f.File)),
					fmt.Sprintf("line=%d", max(1, f.Line)),
					fmt.Sprintf("col=%d", max(1, f.Column)))
			}
			props = append(props, "title="+escapeProperty(Terminal(title(f))))
			fmt.Fprintf(&b, "::%s %s::%s\n", sev, strings.Join(props, ","), escapeData(Terminal(f.Message)))
		}
	}
	errs, warns := check.Count(r.Findings)
	fmt.Fprintf(&b, "::notice title=phasegate::%s\n", escapeData(Terminal(fmt.Sprintf("%s checked: %s, %s — %s", plural(r.Artifacts, "artifact"), plural(errs, "error"), plural(warns, "warning"), r.Verdict.Verdict))))
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing github annotations: %w", err)
	}
	return nil
}

func title(f check.Finding) string {
	if f.Kind == "" {
		return "phasegate " + f.Rule
	}
	return fmt.Sprintf("phasegate %s (%s)", f.Rule, f.Kind)
}

// escapeData escapes a workflow command's message.
func escapeData(s string) string {
	s = strings.ReplaceAll(s, "%", "%25")
	s = strings.ReplaceAll(s, "\r", "%0D")
	return strings.ReplaceAll(s, "\n", "%0A")
}

// escapeProperty escapes a workflow command's property value.
func escapeProperty(s string) string {
	s = escapeData(s)
	s = strings.ReplaceAll(s, ":", "%3A")
	return strings.ReplaceAll(s, ",", "%2C")
}
