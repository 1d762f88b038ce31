package outcome

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

var featureRE = regexp.MustCompile(`(?i)^feature-([0-9]+)$`)

// IssueOf resolves the issue a Phase Outcome belongs to (docs/contracts/
// outcome.md): the outcome's `issue` field when present; else the number in
// `feature: feature-042` (→ 42); else prNumber, the pull request of the
// current run, when it is positive. v is the outcome's decoded value. An
// `issue` field that is present but not a positive whole number resolves
// nothing (the schema reports it; guessing another issue could post the
// outcome in the wrong place). A feature number of 0 names no issue.
func IssueOf(v any, prNumber int) (issue int, ok bool) {
	obj, _ := v.(map[string]any)
	if raw, present := obj["issue"]; present {
		n, isInt := wholeNumber(raw)
		if !isInt || n < 1 || n > math.MaxInt32 {
			return 0, false
		}
		return int(n), true
	}
	feature, _ := obj["feature"].(string)
	if m := featureRE.FindStringSubmatch(strings.TrimSpace(feature)); m != nil {
		if n, err := strconv.ParseInt(m[1], 10, 32); err == nil && n >= 1 {
			return int(n), true
		}
	}
	if prNumber > 0 {
		return prNumber, true
	}
	return 0, false
}
