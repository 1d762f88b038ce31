// Package gate turns findings (and, with the rule layer, the decisions the
// artifacts record) into one verdict per commit: SHIP, ADVISORY or HOLD, with
// one human-readable reason per cause. It is pure.
package gate

import (
	"fmt"

	"github.com/phasegate/phasegate/internal/check"
)

// Verdict of a commit.
type Verdict string

const (
	Ship     Verdict = "SHIP"
	Advisory Verdict = "ADVISORY"
	Hold     Verdict = "HOLD"
)

// Result is a verdict and why.
type Result struct {
	Verdict Verdict
	Reasons []string
}

// FromFindings computes the contract verdict: HOLD when any error finding
// exists, ADVISORY when there are warnings only, SHIP otherwise. There is one
// reason per file with findings, naming its first (most severe) finding.
func FromFindings(fs []check.Finding) Result {
	type perFile struct {
		errors, warnings int
		first            check.Finding
		firstErr         *check.Finding
	}
	var order []string
	files := map[string]*perFile{}
	for i, f := range fs {
		pf := files[f.File]
		if pf == nil {
			pf = &perFile{first: f}
			files[f.File] = pf
			order = append(order, f.File)
		}
		if f.Severity == check.SeverityError {
			pf.errors++
			if pf.firstErr == nil {
				pf.firstErr = &fs[i]
			}
		} else {
			pf.warnings++
		}
	}
	var holds, advisories []string
	for _, name := range order {
		pf := files[name]
		if pf.errors > 0 {
			f := *pf.firstErr
			holds = append(holds, fmt.Sprintf("HOLD: %s — %s, first at line %d: %s", name, count(pf.errors, "error"), f.Line, f.Message))
		} else {
			advisories = append(advisories, fmt.Sprintf("ADVISORY: %s — %s, first at line %d: %s", name, count(pf.warnings, "warning"), pf.first.Line, pf.first.Message))
		}
	}
	switch {
	case len(holds) > 0:
		return Result{Verdict: Hold, Reasons: append(holds, advisories...)}
	case len(advisories) > 0:
		return Result{Verdict: Advisory, Reasons: advisories}
	}
	return Result{Verdict: Ship, Reasons: []string{}}
}

func count(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
