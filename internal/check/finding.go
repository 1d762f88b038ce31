// Package check turns artifacts into findings: the schema layer (one JSON
// Schema per kind, draft 2020-12) and the rule layer. It is pure: it reads
// the files it checks through an fs.FS (Validator.RunFS; Validator.Run is
// the same on an os.Root of a directory), so no rule knows where its files
// came from; it never prints and never talks to GitHub. Output is
// deterministic.
package check

import (
	"cmp"
	"slices"
	"strings"
)

// Severity of a finding.
type Severity string

const (
	// SeverityError fails the check.
	SeverityError Severity = "error"
	// SeverityWarning annotates only.
	SeverityWarning Severity = "warning"
)

// Finding is one located problem. Its JSON form is a public interface
// (docs/architecture.md): keep the field names stable.
type Finding struct {
	// File is relative to the checked root, with '/' separators.
	File string `json:"file"`
	// Line and Column are 1-based and point at the offending key or value.
	Line   int `json:"line"`
	Column int `json:"column"`
	// Kind is the artifact kind, e.g. "pace.gate-report".
	Kind string `json:"kind"`
	// Rule is a stable ID: "schema" for JSON Schema violations, a dotted ID
	// for everything else.
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
}

// RuleSchema is the rule ID of every JSON Schema violation.
const RuleSchema = "schema"

// RuleNothingFound is the warning that a checked directory holds no
// artifact: a gate that checked nothing must not look like one that passed.
const RuleNothingFound = "discovery.nothing-found"

// RuleUnknownKind is the error that a file named on the command line matches
// no artifact kind (nothing in it could be checked).
const RuleUnknownKind = "discovery.unknown-kind"

// RuleConvention is the rule ID of a JSON Schema violation in a part of the
// schema marked `"x-tier": "convention"`: the shape upstream documents but
// neither enforces nor needs. It is a warning by default and can be set to
// error or off like a rule of the rule layer.
const RuleConvention = "schema.convention"

// Sort orders findings by file, line, column, rule and message, so output is
// the same on every run whatever the order of work.
func Sort(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column),
			strings.Compare(a.Rule, b.Rule), strings.Compare(a.Message, b.Message))
	})
}

// Count returns the number of error and warning findings.
func Count(fs []Finding) (errors, warnings int) {
	for _, f := range fs {
		if f.Severity == SeverityError {
			errors++
		} else {
			warnings++
		}
	}
	return errors, warnings
}
