package report

import (
	"fmt"
	"strings"
	"sync"
	"unicode"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/check"
)

// RulesDocURL is the page that documents every rule. It has one heading per
// rule whose text is the rule ID, so GitHub's heading anchor for the rule is
// RuleAnchor(ID).
const RulesDocURL = "https://github.com/phasegate/phasegate/blob/main/docs/rules.md"

// RuleHelpURI is the documentation link of a rule.
func RuleHelpURI(id string) string { return RulesDocURL + "#" + RuleAnchor(id) }

// RuleAnchor is the anchor GitHub gives a Markdown heading whose text is id
// (with or without backticks): lower case, spaces to hyphens, and every
// character that is not a letter, a digit, '-' or '_' dropped. So
// "pace.gate.hold-iff-fail" becomes "pacegatehold-iff-fail".
func RuleAnchor(id string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(id) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ruleName is a rule's SARIF name: a PascalCase identifier built from its ID
// ("pace.gate.hold-iff-fail" → "PaceGateHoldIffFail").
func ruleName(id string) string {
	var b strings.Builder
	upper := true
	for _, r := range id {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			upper = true
			continue
		}
		if upper {
			r = unicode.ToUpper(r)
			upper = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ruleDoc describes one rule for formats that carry rule metadata.
type ruleDoc struct {
	// Short is one sentence; Full adds how to act on it.
	Short, Full string
	// Level is the default severity.
	Level check.Severity
}

// builtinRules are the rules that are not in the rule layer's catalogue:
// the schema layer, the decoder's and the config file's.
var builtinRules = map[string]ruleDoc{
	check.RuleSchema: {Level: check.SeverityError,
		Short: "The artifact conforms to the JSON Schema of its kind.",
		Full:  "Every artifact kind has a JSON Schema (draft 2020-12), embedded in phasegate; `phasegate schema KIND` prints it. The finding points at the offending key or value and says what the schema expects there."},
	check.RuleConvention: {Level: check.SeverityWarning,
		Short: "The artifact follows the shape its pipeline documents where upstream does not enforce it.",
		Full:  "Schemas mark with `\"x-tier\": \"convention\"` (and the upstream evidence in `x-basis`) what upstream documents but neither enforces nor needs; a departure there is this warning, not a `schema` error, so phasegate never holds a file upstream's own validators accept. Set `rules: {schema.convention: error}` to enforce the documented shape, or `off`. The convention places are listed below.",
	},
	check.RuleNothingFound: {Level: check.SeverityWarning,
		Short: "A checked directory holds at least one artifact.",
		Full:  "A directory in which no file is where a kind lives (or has a kind's content) is reported instead of passing silently: `0 artifacts checked` is never a plain SHIP. The verdict is ADVISORY; point phasegate at the project root, add an `artifacts:` glob, or name the files with `--kind`. A directory inside a marker directory (`phasegate validate .pace`) is checked in its place, as `.pace/…`.",
	},
	check.RuleUnknownKind: {Level: check.SeverityError,
		Short: "A file named on the command line is an artifact.",
		Full:  "A file given as PATH that matches no kind by its path or content could not be checked, so it is an error naming the closest kind (the one under which its content has the fewest schema findings, preferring a kind that lives under the same file name). Check it as that kind with `--kind KIND`.",
	},
	artifact.RuleSyntax: {Level: check.SeverityError,
		Short: "The file is well-formed YAML or JSON.",
		Full:  "The file could not be parsed, so none of its contract could be checked. The finding points at the first place the parser stopped."},
	artifact.RuleEncoding: {Level: check.SeverityError,
		Short: "The file is UTF-8 text.",
		Full:  "Artifacts are UTF-8 text. A file with a NUL byte or an invalid UTF-8 sequence is not checked further."},
	artifact.RuleFileSize: {Level: check.SeverityError,
		Short: "The file is within the size limit.",
		Full:  "Files over the limit (1 MiB by default) are not parsed. Raise `limits.max_file_size` in .github/phasegate.yml if an artifact is meant to be that big."},
	artifact.RuleDepth: {Level: check.SeverityError,
		Short: "The document does not nest deeper than the limit.",
		Full:  "Deeply nested documents are refused before they are checked. The limit is `limits.max_depth` in .github/phasegate.yml."},
	artifact.RuleAliasBudget: {Level: check.SeverityError,
		Short: "YAML aliases do not expand beyond the budget.",
		Full:  "Anchors and aliases that expand to more nodes than `limits.max_alias_nodes` (or into themselves) are refused: write the values out instead."},
	artifact.RuleNodeCount: {Level: check.SeverityError,
		Short: "The document does not have more values than the limit.",
		Full:  "Documents with more values than the limit are refused before they are checked."},
	artifact.RuleDuplicateKey: {Level: check.SeverityError,
		Short: "No mapping repeats a key.",
		Full:  "With a duplicate key, the later value would silently replace the earlier one in most readers. Keep one of them."},
	artifact.RuleTag: {Level: check.SeverityError,
		Short: "The document uses only the YAML core-schema tags.",
		Full:  "Artifacts are plain data. Application tags (such as !!python/object) can construct objects in other tools and are refused."},
	artifact.RuleMergeKey: {Level: check.SeverityError,
		Short: "The document uses no YAML merge keys.",
		Full:  "Merge keys (<<) are not part of YAML 1.2 and readers disagree about them: write the fields out."},
	artifact.RuleComplexKey: {Level: check.SeverityError,
		Short: "Every mapping key is a plain string.",
		Full:  "Keys that are sequences or mappings cannot be represented in JSON and are refused."},
	artifact.RuleMultiDocument: {Level: check.SeverityError,
		Short: "The file holds exactly one YAML document.",
		Full:  "An artifact is one document; a second document after '---' would be ignored by most readers."},
	artifact.RuleSymlink: {Level: check.SeverityError,
		Short: "No symlink leads outside the checked root.",
		Full:  "A symlink that points outside the checked root is not followed, so the artifact it stands for is not checked."},
	artifact.RuleRead: {Level: check.SeverityError,
		Short: "The file can be read, and the directory listed.",
		Full:  "phasegate could not read the file, or list the directory below the checked root, so what it holds could not be checked; it is never skipped silently. A .json or .yaml file whose path says nothing counts too (its content might make it an artifact, such as a Phase Outcome). List what holds no artifact under `ignore:` in .github/phasegate.yml."},
	"config": {Level: check.SeverityError,
		Short: "The configuration file is valid.",
		Full:  "An invalid .github/phasegate.yml is reported with its line, and phasegate uses the defaults for everything until it is fixed (never \"allow everything\")."},
}

var basisText = map[string]string{
	"S": "It is stated in the source document of the pipeline.",
	"R": "It is confirmed in the pipeline's upstream code or schemas.",
	"I": "It is inferred (a judgement call), so it is a warning or off by default.",
}

var catalogue = sync.OnceValue(func() map[string]check.Rule {
	m := map[string]check.Rule{}
	for _, r := range check.Rules() {
		m[r.ID] = r
	}
	return m
})

// describeRule returns the documentation of a rule. seen is the severity of
// the findings of that rule in this run, used as the default level of a rule
// phasegate has no documentation for.
func describeRule(id string, seen check.Severity) ruleDoc {
	if d, ok := builtinRules[id]; ok {
		return d
	}
	if r, ok := catalogue()[id]; ok {
		full := r.Summary
		if t := basisText[r.Basis]; t != "" {
			full += " " + t
		}
		full += fmt.Sprintf(" Default severity: %s. To change it, list `%s: error`, `warning` or `off` under `rules:` in .github/phasegate.yml.", r.Severity, id)
		return ruleDoc{Short: r.Summary, Full: full, Level: r.Severity}
	}
	return ruleDoc{
		Short: fmt.Sprintf("phasegate rule %s.", id),
		Full:  fmt.Sprintf("phasegate rule %s: a contract of the pipeline's artifacts. What it requires and how to fix a finding is in the rules documentation.", id),
		Level: seen,
	}
}
