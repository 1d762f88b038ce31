package check

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/testutil"
	"github.com/phasegate/phasegate/internal/testutil/outcometest"
)

// outcomeSeed is the Phase Outcome skill's own example: every outcome rule is silent on it.
const outcomeSeed = outcometest.Seed

const outcomePath = ".devwork/feature-042/requirements.outcome.yaml"

// outcomeTree is a one-file tree holding content at outcomePath.
func outcomeTree(content string) map[string]string {
	return map[string]string{outcomePath: content}
}

// outcomeEdit is the seed outcome with old replaced by new (once).
func outcomeEdit(old, new string) map[string]string {
	return outcomeTree(testutil.Replace(outcomeSeed, old, new, 1))
}

// outcomeDevelop is a develop-phase outcome with a blocking finding and the
// decision about it.
const outcomeDevelop = `phase: develop
feature: feature-7
produced:
  - artifact: code
    location: src/login.go
findings:
  - type: qa-finding
    title: "SQL injection in login form"
    reasoning: "User input reaches the query unescaped"
    proposed_category: in-scope-blocking
pending_decisions:
  - id: D-001
    type: approval
    question: "Approve UAT?"
    options: [approve, request-changes, reject]
    blocking: true
  - id: D-002
    type: fix-or-defer
    question: "Fix 'SQL injection in login form' before QA?"
    options: [fix, defer]
    recommended: fix
    blocking: true
`

// outcomeDevelopEdit is the develop outcome with old replaced by new (once).
func outcomeDevelopEdit(old, new string) map[string]string {
	return outcomeTree(testutil.Replace(outcomeDevelop, old, new, 1))
}

func init() {
	onlyPhases := func(phases ...string) *config.Config {
		cfg := config.Default()
		cfg.Outcome.ApprovalPhases = phases
		return &cfg
	}
	addRuleCases("outcome",
		// decision-id-unique
		ruleCase{name: "duplicate id", rule: "outcome.decision-id-unique", fires: true, tree: outcomeEdit("id: D-002", "id: D-001"), file: outcomePath, line: 17},
		ruleCase{name: "distinct ids", rule: "outcome.decision-id-unique", tree: outcomeTree(outcomeSeed)},
		ruleCase{name: "same id in two outcomes", rule: "outcome.decision-id-unique", tree: map[string]string{
			outcomePath: outcomeSeed,
			".devwork/feature-042/requirements-2.outcome.yaml": outcomeSeed,
		}},

		// decision-id-format
		ruleCase{name: "lower-case id", rule: "outcome.decision-id-format", fires: true, tree: outcomeEdit("id: D-002", "id: d2"), file: outcomePath, line: 17},
		ruleCase{name: "id with a space", rule: "outcome.decision-id-format", fires: true, tree: outcomeEdit("id: D-002", `id: "D 002"`), file: outcomePath, line: 17},
		ruleCase{name: "id with a colon", rule: "outcome.decision-id-format", fires: true, tree: outcomeEdit("id: D-002", `id: "req:D-002"`), file: outcomePath, line: 17},
		ruleCase{name: "four digits", rule: "outcome.decision-id-format", tree: outcomeEdit("id: D-002", "id: D-1002")},

		// options-count
		ruleCase{name: "one option", rule: "outcome.options-count", fires: true, tree: outcomeEdit("options: [capture, discard]\n    recommended: capture", "options: [capture]\n    recommended: capture"), file: outcomePath, line: 20},
		ruleCase{name: "two options", rule: "outcome.options-count", tree: outcomeTree(outcomeSeed)},

		// options-unique
		ruleCase{name: "repeated option", rule: "outcome.options-unique", fires: true, tree: outcomeEdit("[approve, request-changes, reject]", "[approve, reject, approve]"), file: outcomePath, line: 15},
		ruleCase{name: "options differing in case", rule: "outcome.options-unique", fires: true, tree: outcomeEdit("[approve, request-changes, reject]", "[approve, reject, Approve]"), file: outcomePath, line: 15},
		ruleCase{name: "distinct options", rule: "outcome.options-unique", tree: outcomeTree(outcomeSeed)},

		// option-single-word
		ruleCase{name: "two-word option", rule: "outcome.option-single-word", fires: true, tree: outcomeEdit("[approve, request-changes, reject]", "[approve, request changes, reject]"), file: outcomePath, line: 15},
		ruleCase{name: "hyphenated option", rule: "outcome.option-single-word", tree: outcomeTree(outcomeSeed)},

		// option-reserved
		ruleCase{name: "option called recommended", rule: "outcome.option-reserved", fires: true, tree: outcomeEdit("options: [capture, discard]", "options: [capture, recommended]"), file: outcomePath, line: 20},
		ruleCase{name: "option called Recommended without a recommendation", rule: "outcome.option-reserved", fires: true, tree: outcomeEdit("[approve, request-changes, reject]", "[approve, Recommended]"), file: outcomePath, line: 15},
		ruleCase{name: "the recommended option is called recommended", rule: "outcome.option-reserved", tree: outcomeEdit("options: [capture, discard]\n    recommended: capture", "options: [recommended, discard]\n    recommended: recommended")},
		ruleCase{name: "no such option", rule: "outcome.option-reserved", tree: outcomeTree(outcomeSeed)},

		// recommended-in-options
		ruleCase{name: "recommended not an option", rule: "outcome.recommended-in-options", fires: true, tree: outcomeEdit("recommended: capture", "recommended: defer"), file: outcomePath, line: 21},
		ruleCase{name: "recommended in another case", rule: "outcome.recommended-in-options", fires: true, tree: outcomeEdit("recommended: capture", "recommended: Capture"), file: outcomePath, line: 21},
		ruleCase{name: "recommended is an option", rule: "outcome.recommended-in-options", tree: outcomeTree(outcomeSeed)},

		// recommended-missing
		ruleCase{name: "capture without recommendation", rule: "outcome.recommended-missing", fires: true, tree: outcomeEdit("    recommended: capture\n", ""), file: outcomePath, line: 17},
		ruleCase{name: "approval without recommendation", rule: "outcome.recommended-missing", tree: outcomeTree(outcomeSeed)},

		// approval-blocking
		ruleCase{name: "non-blocking approval", rule: "outcome.approval-blocking", fires: true, tree: outcomeEdit("blocking: true", "blocking: false"), file: outcomePath, line: 16},
		ruleCase{name: "blocking approval", rule: "outcome.approval-blocking", tree: outcomeTree(outcomeSeed)},
		ruleCase{name: "blocking as a string is the schema's", rule: "outcome.approval-blocking", tree: outcomeEdit("blocking: true", `blocking: "false"`)},

		// approval-has-approve
		ruleCase{name: "approval without approve", rule: "outcome.approval-has-approve", fires: true, tree: outcomeEdit("[approve, request-changes, reject]", "[accept, reject]"), file: outcomePath, line: 15},
		ruleCase{name: "approval with approve", rule: "outcome.approval-has-approve", tree: outcomeTree(outcomeSeed)},

		// phase-needs-approval
		ruleCase{name: "requirements without approval", rule: "outcome.phase-needs-approval", fires: true, tree: outcomeEdit("type: approval", "type: review"), file: outcomePath, line: 11},
		ruleCase{name: "configured phase without approval", rule: "outcome.phase-needs-approval", fires: true, config: onlyPhases("code-validate"), tree: outcomeTree(strings.NewReplacer("phase: develop", "phase: code-validate", "type: approval", "type: review").Replace(outcomeDevelop)), file: outcomePath, line: 11},
		ruleCase{name: "requirements without decisions", rule: "outcome.phase-needs-approval", fires: true, tree: outcomeTree("phase: requirements\nfeature: feature-1\nproduced: []\nfindings: []\npending_decisions: []\n"), file: outcomePath, line: 5},
		ruleCase{name: "requirements with approval", rule: "outcome.phase-needs-approval", tree: outcomeTree(outcomeSeed)},
		ruleCase{name: "phase without a gate", rule: "outcome.phase-needs-approval", tree: outcomeEdit("phase: requirements\n", "phase: simplify\n")},
		ruleCase{name: "phase not configured", rule: "outcome.phase-needs-approval", config: onlyPhases("develop"), tree: outcomeEdit("type: approval", "type: review")},

		// capture-has-capture
		ruleCase{name: "capture decision without capture", rule: "outcome.capture-has-capture", fires: true, tree: outcomeEdit("options: [capture, discard]\n    recommended: capture", "options: [open-issue, discard]\n    recommended: open-issue"), file: outcomePath, line: 20},
		ruleCase{name: "capture decision with capture", rule: "outcome.capture-has-capture", tree: outcomeTree(outcomeSeed)},

		// capture-names-finding
		ruleCase{name: "question names no finding", rule: "outcome.capture-names-finding", fires: true, tree: outcomeEdit("Capture 'User avatar upload sizing' as separate issue?", "Capture the profile work as a separate issue?"), file: outcomePath, line: 19},
		ruleCase{name: "no findings at all", rule: "outcome.capture-names-finding", fires: true, tree: outcomeEdit(`findings:
  - type: out-of-scope-item
    title: "User avatar upload sizing"
    reasoning: "Mentioned by user, not part of this feature's user stories"
    proposed_category: out-of-scope
`, "findings: []\n"), file: outcomePath, line: 15},
		ruleCase{name: "question quotes the finding", rule: "outcome.capture-names-finding", tree: outcomeTree(outcomeSeed)},

		// finding-category
		ruleCase{name: "category missing", rule: "outcome.finding-category", fires: true, tree: outcomeEdit("    proposed_category: out-of-scope\n", ""), file: outcomePath, line: 7},
		ruleCase{name: "category unknown", rule: "outcome.finding-category", fires: true, tree: outcomeEdit("proposed_category: out-of-scope", "proposed_category: nice-to-have"), file: outcomePath, line: 10},
		ruleCase{name: "category stated", rule: "outcome.finding-category", tree: outcomeTree(outcomeSeed)},

		// blocking-finding-has-decision
		ruleCase{name: "blocking finding without decision", rule: "outcome.blocking-finding-has-decision", fires: true, tree: outcomeDevelopEdit("question: \"Fix 'SQL injection in login form' before QA?\"", "question: \"Fix the flaky tests before QA?\""), file: outcomePath, line: 8},
		ruleCase{name: "decision about it not blocking", rule: "outcome.blocking-finding-has-decision", fires: true, tree: outcomeDevelopEdit("recommended: fix\n    blocking: true", "recommended: fix\n    blocking: false"), file: outcomePath, line: 8},
		ruleCase{name: "finding blocking by default", rule: "outcome.blocking-finding-has-decision", fires: true, tree: outcomeEdit("    proposed_category: out-of-scope\n", ""), file: outcomePath, line: 8},
		ruleCase{name: "blocking finding with blocking decision", rule: "outcome.blocking-finding-has-decision", tree: outcomeTree(outcomeDevelop)},
		ruleCase{name: "out-of-scope finding", rule: "outcome.blocking-finding-has-decision", tree: outcomeTree(outcomeSeed)},

		// issue-resolvable
		ruleCase{name: "feature without number", rule: "outcome.issue-resolvable", fires: true, tree: outcomeEdit("feature: feature-042", "feature: avatar-upload"), file: outcomePath, line: 2},
		ruleCase{name: "feature numbered", rule: "outcome.issue-resolvable", tree: outcomeTree(outcomeSeed)},
		ruleCase{name: "issue given", rule: "outcome.issue-resolvable", tree: outcomeEdit("feature: feature-042", "feature: avatar-upload\nissue: 17")},
		ruleCase{name: "invalid issue is the schema's", rule: "outcome.issue-resolvable", tree: outcomeEdit("feature: feature-042", "feature: avatar-upload\nissue: \"#17\"")},
		ruleCase{name: "feature of the wrong type is the schema's", rule: "outcome.issue-resolvable", tree: outcomeEdit("feature: feature-042", "feature: 42")},
		ruleCase{name: "no feature", rule: "outcome.issue-resolvable", fires: true, tree: outcomeEdit("feature: feature-042\n", ""), file: outcomePath, line: 1},

		// immutable
		ruleCase{name: "outcome modified", rule: "outcome.immutable", fires: true, tree: outcomeTree(outcomeSeed), changed: map[string]Change{outcomePath: Modified}, file: outcomePath, line: 1},
		ruleCase{name: "outcome added", rule: "outcome.immutable", tree: outcomeTree(outcomeSeed), changed: map[string]Change{outcomePath: Added}},
		ruleCase{name: "another file modified", rule: "outcome.immutable", tree: outcomeTree(outcomeSeed), changed: map[string]Change{"README.md": Modified}},
		ruleCase{name: "no base", rule: "outcome.immutable", tree: outcomeTree(outcomeSeed)},
		ruleCase{name: "outcome removed", rule: "outcome.immutable", fires: true, tree: map[string]string{"README.md": "x"},
			changed: map[string]Change{outcomePath: Deleted}, file: outcomePath, line: 1},
		ruleCase{name: "outcome renamed, same content", rule: "outcome.immutable", fires: true, tree: map[string]string{outcomeRenamed: outcomeSeed},
			changed: map[string]Change{outcomePath: Deleted, outcomeRenamed: Added}, file: outcomePath, line: 1},
		ruleCase{name: "outcome renamed, new content", rule: "outcome.immutable", fires: true,
			tree:    map[string]string{outcomeRenamed: strings.Replace(outcomeSeed, "request-changes", "revise", 1)},
			changed: map[string]Change{outcomePath: Deleted, outcomeRenamed: Added}, file: outcomePath, line: 1},
		ruleCase{name: "outcome removed under a configured glob", rule: "outcome.immutable", fires: true, tree: map[string]string{"README.md": "x"},
			config:  &config.Config{Artifacts: map[string][]string{"outcome.phase-outcome": {"outcomes/*.yaml"}}},
			changed: map[string]Change{"outcomes/requirements.yaml": Deleted}, file: "outcomes/requirements.yaml", line: 1},
		ruleCase{name: "removed file that is not an outcome", rule: "outcome.immutable", tree: outcomeTree(outcomeSeed),
			changed: map[string]Change{"notes/requirements.yaml": Deleted, ".pace/day-1/gate.md": Deleted}},
		ruleCase{name: "removed outcome under an ignored path", rule: "outcome.immutable", tree: map[string]string{"README.md": "x"},
			config:  &config.Config{Ignore: []string{".devwork/**"}},
			changed: map[string]Change{outcomePath: Deleted}},
		ruleCase{name: "removed path a glob gives another kind", rule: "outcome.immutable", tree: map[string]string{"README.md": "x"},
			config:  &config.Config{Artifacts: map[string][]string{"pace.gate-report": {"**/*.outcome.yaml"}}},
			changed: map[string]Change{outcomePath: Deleted}},
	)
}

// TestOutcomeSeedSilent: no outcome rule says anything about the seed's own
// example, nor about the consistent develop outcome.
func TestOutcomeSeedSilent(t *testing.T) {
	for name, content := range map[string]string{"seed": outcomeSeed, "develop": outcomeDevelop} {
		res := runTree(t, outcomeTree(content), nil, map[string]Change{outcomePath: Added})
		for _, f := range res.Findings {
			t.Errorf("%s: %s", name, formatFinding(f))
		}
	}
}

// TestOutcomeNoPanic: rules tolerate values of every wrong type.
func TestOutcomeNoPanic(t *testing.T) {
	for _, content := range []string{
		"phase: requirements\npending_decisions: 3\nfindings: x\n",
		"phase: [1]\nfeature: 42\npending_decisions: [1, null, {id: [x], options: x, blocking: yes}]\nfindings: [null, {proposed_category: 3, title: [t]}]\n",
		"phase: develop\npending_decisions:\n  - {id: D-001, type: approval, options: [1, null, \"\"], recommended: 2}\nfindings: [{title: \"\"}]\nissue: 0\n",
		"phase: requirements\npending_decisions: []\n",
	} {
		res := runTree(t, outcomeTree(content), nil, map[string]Change{outcomePath: Modified})
		if len(res.Statuses) != 1 {
			t.Errorf("%q: %d statuses, want 1", content, len(res.Statuses))
		}
	}
}

func TestOutcomeStatus(t *testing.T) {
	for _, tc := range []struct {
		name, content, unit, state string
	}{
		{"seed", outcomeSeed, "Outcome feature-042 requirements", "2 decisions pending (1 blocking), 1 finding, issue #42"},
		{"develop", outcomeDevelop, "Outcome feature-7 develop", "2 decisions pending (2 blocking), 1 finding, issue #7"},
		{"empty", "phase: simplify\nfeature: feature-3\nissue: 9\nproduced: []\nfindings: []\npending_decisions: []\n", "Outcome feature-3 simplify", "no decisions pending, issue #9"},
		{"no issue", "phase: simplify\nfeature: misc\nproduced: []\nfindings: []\npending_decisions: []\n", "Outcome misc simplify", "no decisions pending, issue: the run's pull request"},
		{"no feature", "phase: simplify\nproduced: []\nfindings: []\npending_decisions: []\n", "Outcome " + outcomePath, "no decisions pending, issue: the run's pull request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runTree(t, outcomeTree(tc.content), nil, nil)
			if len(res.Statuses) != 1 {
				t.Fatalf("%d statuses, want 1: %+v", len(res.Statuses), res.Statuses)
			}
			st := res.Statuses[0]
			if st.Family != "outcome" || st.Unit != tc.unit || st.State != tc.state || len(st.Decisions) != 0 {
				t.Errorf("status = %+v, want unit %q state %q and no decisions", st, tc.unit, tc.state)
			}
		})
	}
}

// TestOutcomeImmutablePrefix: with several roots, document paths carry the
// run's prefix while the changed files are relative to the root.
func TestOutcomeImmutablePrefix(t *testing.T) {
	root := testutil.WriteTree(t, t.TempDir(), outcomeTree(outcomeSeed))
	opts := Options{Config: config.Default(), Prefix: "svc/", Changed: map[string]Change{outcomePath: Modified}}
	res, err := sharedValidator.Run(context.Background(), root, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 || res.Findings[0].Rule != "outcome.immutable" || res.Findings[0].File != "svc/"+outcomePath || res.Findings[0].Severity != SeverityError {
		t.Errorf("findings = %+v, want one outcome.immutable error on svc/%s", res.Findings, outcomePath)
	}
}

// outcomeRenamed is where the rename cases move the outcome.
const outcomeRenamed = ".devwork/feature-042/archive/requirements.outcome.yaml"

// TestOutcomeRemovedFinding: a removed or renamed outcome is reported on
// its old path, with the run's prefix, naming where it went when an added
// outcome has its file name.
func TestOutcomeRemovedFinding(t *testing.T) {
	tests := []struct {
		name    string
		tree    map[string]string
		changed map[string]Change
		want    []string // substrings of the one finding's message
	}{
		{name: "removed", tree: map[string]string{"README.md": "x"}, changed: map[string]Change{outcomePath: Deleted},
			want: []string{"was removed after it was committed:", "restore it at \"svc/" + outcomePath + "\""}},
		{name: "renamed", tree: map[string]string{outcomeRenamed: outcomeSeed}, changed: map[string]Change{outcomePath: Deleted, outcomeRenamed: Added},
			want: []string{"renamed to \"svc/" + outcomeRenamed + "\"?", "write a new Phase Outcome instead"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := testutil.WriteTree(t, t.TempDir(), tc.tree)
			res, err := sharedValidator.Run(context.Background(), root, Options{Config: config.Default(), Prefix: "svc/", Changed: tc.changed})
			if err != nil {
				t.Fatal(err)
			}
			var hits []Finding
			for _, f := range res.Findings {
				if f.Rule == "outcome.immutable" {
					hits = append(hits, f)
				}
			}
			if len(hits) != 1 {
				t.Fatalf("findings = %+v, want one outcome.immutable", res.Findings)
			}
			f := hits[0]
			if f.File != "svc/"+outcomePath || f.Line != 1 || f.Column != 1 || f.Severity != SeverityError || f.Kind != "outcome.phase-outcome" {
				t.Errorf("finding = %+v", f)
			}
			for _, w := range tc.want {
				if !strings.Contains(f.Message, w) {
					t.Errorf("message %q lacks %q", f.Message, w)
				}
			}
		})
	}
}

func TestOutcomeIssue(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value any
		pr    int
		want  int
		ok    bool
	}{
		{"issue field", map[string]any{"issue": int64(17), "feature": "feature-042"}, 5, 17, true},
		{"issue as float", map[string]any{"issue": float64(17)}, 0, 17, true},
		{"issue as json number", map[string]any{"issue": json.Number("17")}, 0, 17, true},
		{"feature number", map[string]any{"feature": "feature-042"}, 5, 42, true},
		{"feature upper case and spaces", map[string]any{"feature": " Feature-7 "}, 0, 7, true},
		{"feature without number, pr", map[string]any{"feature": "avatar-upload"}, 5, 5, true},
		{"feature with suffix, pr", map[string]any{"feature": "feature-042-avatar"}, 5, 5, true},
		{"feature zero, pr", map[string]any{"feature": "feature-000"}, 5, 5, true},
		{"feature huge", map[string]any{"feature": "feature-99999999999999999999"}, 0, 0, false},
		{"nothing, pr", map[string]any{}, 8, 8, true},
		{"nothing, no pr", map[string]any{"feature": "misc"}, 0, 0, false},
		{"negative pr", map[string]any{}, -1, 0, false},
		{"invalid issue string", map[string]any{"issue": "#17", "feature": "feature-042"}, 5, 0, false},
		{"issue zero", map[string]any{"issue": int64(0), "feature": "feature-042"}, 5, 0, false},
		{"issue fraction", map[string]any{"issue": 1.5}, 5, 0, false},
		{"issue null", map[string]any{"issue": nil, "feature": "feature-042"}, 5, 0, false},
		{"feature not a string", map[string]any{"feature": int64(42)}, 5, 5, true},
		{"not a mapping", []any{"x"}, 3, 3, true},
		{"nil", nil, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := outcome.IssueOf(tc.value, tc.pr)
			if got != tc.want || ok != tc.ok {
				t.Errorf("IssueOf(%v, %d) = %d, %v; want %d, %v", tc.value, tc.pr, got, ok, tc.want, tc.ok)
			}
		})
	}
}
