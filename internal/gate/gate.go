// Package gate turns findings and the decisions the artifacts record into one
// verdict per commit — SHIP, ADVISORY or HOLD — with one human-readable
// reason per cause (docs/contracts/README.md). It is pure.
package gate

import (
	"fmt"
	"slices"

	"github.com/phasegate/phasegate/internal/check"
)

// Verdict of a commit.
type Verdict string

const (
	// Ship: no error or warning finding, and no pipeline holds or advises.
	Ship Verdict = "SHIP"
	// Advisory: warnings or ADVISORY decisions, and nothing holds.
	Advisory Verdict = "ADVISORY"
	// Hold: an error finding, or a pipeline's latest decision holds.
	Hold Verdict = "HOLD"
)

// Result is a verdict and why.
type Result struct {
	Verdict Verdict
	// Reasons has one entry per cause, most severe first, each naming its
	// file: "HOLD: .pace/day-3/sentinel-report.yaml — SENTINEL decided HOLD: …".
	Reasons []string
}

// FromFindings is the contract verdict of findings alone (phasegate validate).
func FromFindings(fs []check.Finding) Result { return Compute(fs, nil) }

// Compute is the verdict of docs/contracts/README.md: HOLD when any error finding exists or
// any pipeline unit's latest decision holds (a PACE agent's HOLD, a JG
// tester's or reviewer's FAIL, an SCC REJECT/ESCALATE, a failed Autopilot run
// or an open circuit breaker); ADVISORY when there are warnings or ADVISORY
// decisions and nothing holds; SHIP otherwise. Findings give one reason per
// file, naming the file's first error (or warning); decisions one reason each.
func Compute(fs []check.Finding, statuses []check.Status) Result {
	var holds, advisories []string
	type perFile struct {
		errors, warnings int
		firstErr, first  *check.Finding
	}
	var order []string
	files := map[string]*perFile{}
	for i := range fs {
		f := &fs[i]
		pf := files[f.File]
		if pf == nil {
			pf = &perFile{first: f}
			files[f.File] = pf
			order = append(order, f.File)
		}
		if f.Severity == check.SeverityError {
			pf.errors++
			if pf.firstErr == nil {
				pf.firstErr = f
			}
		} else {
			pf.warnings++
		}
	}
	for _, name := range order {
		pf := files[name]
		if name == "" {
			// Findings about the run, not a file (nothing found): their
			// messages are the reasons.
			for i := range fs {
				if f := &fs[i]; f.File == "" && f.Severity == check.SeverityError {
					holds = append(holds, "HOLD: "+f.Message)
				} else if f.File == "" {
					advisories = append(advisories, "ADVISORY: "+f.Message)
				}
			}
			continue
		}
		if pf.errors > 0 {
			holds = append(holds, fmt.Sprintf("HOLD: %s — %s, first at line %d: %s", name, count(pf.errors, "error"), pf.firstErr.Line, pf.firstErr.Message))
		} else {
			advisories = append(advisories, fmt.Sprintf("ADVISORY: %s — %s, first at line %d: %s", name, count(pf.warnings, "warning"), pf.first.Line, pf.first.Message))
		}
	}
	decisions := map[string][]string{} // by effect, HOLD or ADVISORY
	for _, st := range statuses {
		for _, d := range st.Decisions {
			if d.Effect == "HOLD" || d.Effect == "ADVISORY" {
				decisions[d.Effect] = append(decisions[d.Effect], fmt.Sprintf("%s: %s — %s", d.Effect, d.File, d.Reason))
			}
		}
	}
	holds = append(slices.Sorted(slices.Values(decisions["HOLD"])), holds...)
	advisories = append(slices.Sorted(slices.Values(decisions["ADVISORY"])), advisories...)
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
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
