package check

import (
	"fmt"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/testutil"
)

const (
	jgDir     = ".pipeline/ISSUE-42/"
	jgPlan    = jgDir + "plan.json"
	jgWorker  = jgDir + "worker-result.json"
	jgTest    = jgDir + "test-result.json"
	jgReview  = jgDir + "review-result.json"
	jgDebug   = jgDir + "debug-diagnosis.json"
	jgGit     = jgDir + "git-result.json"
	jgState   = jgDir + "state.yaml"
	jgLessons = ".pipeline/lessons.yaml"
)

// A consistent issue folder whose review passed and that was committed:
// every JG rule is silent on it.
var jgShipIssue = map[string]string{
	jgPlan: `{
  "affected_files": [
    "src/a.py",
    "tests/test_a.py"
  ],
  "complexity": "complex",
  "steps": [
    {"order": 1, "action": "modify", "file": "src/a.py", "description": "Add X", "depends_on": []},
    {"order": 2, "action": "test", "file": "tests/test_a.py", "description": "Test X", "depends_on": [1]},
    {"order": 3, "action": "verify", "file": null, "description": "Run the suite", "depends_on": [1, 2]}
  ],
  "acceptance_mapping": {"AC-1: Implement X": "tests/test_a.py::test_x"},
  "produced_by": "jg-subplanner-high"
}
`,
	jgWorker: `{
  "status": "completed",
  "files_changed": [
    "src/a.py",
    "tests/test_a.py"
  ],
  "blockers": [],
  "summary": "Implemented X and its test.",
  "tier_used": "high",
  "escalation_history": [
    {"from_tier": "standard", "to_tier": "high", "reason": "new abstraction"}
  ],
  "produced_by": "jg-worker-high"
}
`,
	jgTest: `{
  "verdict": "PASS",
  "phase_1": {
    "lint": {"result": "PASS", "output": "clean"},
    "unit": {"result": "PASS"}
  },
  "phase_2": {"integration": {"result": "PASS"}},
  "classification": null,
  "inline_triage": false,
  "tier_used": "standard",
  "produced_by": "jg-tester"
}
`,
	jgReview: `{
  "verdict": "PASS",
  "blockers": [],
  "concerns": [],
  "nits": [
    {"file": "src/a.py", "line": 3, "description": "docstring", "fix": "add one"}
  ],
  "trim_instructions": null,
  "tier_used": "high",
  "produced_by": "jg-reviewer-high"
}
`,
	jgGit: `{
  "branch": "feature/issue-42",
  "commit_sha": "abc1234",
  "commit_message": "feat: add X",
  "pr_number": 42,
  "produced_by": "jg-git"
}
`,
	jgState: `issue: "ISSUE-42"
status: in_progress
current_stage: git
stages:
  plan:
    agent: jg-subplanner-high
    result: PASS
    artifact_path: .pipeline/ISSUE-42/plan.json
  implement:
    agent: jg-worker-high
    result: PASS
    artifact_path: worker-result.json
  trace:
    agent: jg-planner
    artifact_path: .pipeline/ISSUE-42/pipeline-trace.json
  other:
    agent: jg-planner
    artifact_path: .pipeline/ISSUE-7/plan.json
`,
	jgLessons: `lessons:
  - date: "2026-03-13"
    issue: ISSUE-41
    pattern: "forgot the migration"
    frequency: 2
    mitigation: "planner adds a migration step"
`,
}

// A folder in a debug round: the test failed and the debugger diagnosed it.
var jgFailIssue = jgTree(jgShipIssue,
	jgEdit{File: jgTest, New: `{
  "verdict": "FAIL",
  "phase_1": {
    "lint": {"result": "PASS"},
    "unit": {"result": "FAIL", "output": "test_x: AssertionError"}
  },
  "phase_2": null,
  "classification": "fix_target",
  "inline_triage": true,
  "fix_instruction": "default Y is 1",
  "produced_by": "jg-tester"
}
`},
	jgEdit{File: jgDebug, New: `{
  "failure_source": "tester Phase 1",
  "failure_description": "test_x failed",
  "root_cause": "wrong default",
  "root_cause_file": "src/a.py",
  "root_cause_line": "42",
  "classification": "fix_target",
  "escalation_sub": null,
  "fix_instructions": "set the default to 1",
  "plan_fix_instructions": null,
  "produced_by": "jg-debugger"
}
`},
	jgEdit{File: jgReview}, jgEdit{File: jgGit},
)

// jgEdit changes one file of a tree (see testutil.Edit).
type jgEdit = testutil.Edit

// jgTree is base with edits.
func jgTree(base map[string]string, edits ...jgEdit) map[string]string {
	return testutil.EditTree(base, edits...)
}

// jgChanged is a diff that implements exactly the plan.
func jgChanged(extra ...string) map[string]Change {
	m := map[string]Change{"src/a.py": Modified, "tests/test_a.py": Added, jgWorker: Added}
	for _, p := range extra {
		m[p] = Modified
	}
	return m
}

func init() {
	ship := jgTree(jgShipIssue)
	fire := func(rule, name, file string, line int, base map[string]string, edits ...jgEdit) ruleCase {
		return ruleCase{name: name, rule: rule, fires: true, file: file, line: line, tree: jgTree(base, edits...)}
	}
	silent := func(rule, name string, base map[string]string, edits ...jgEdit) ruleCase {
		return ruleCase{name: name, rule: rule, tree: jgTree(base, edits...)}
	}
	var cases []ruleCase
	for _, r := range Rules() {
		if strings.HasPrefix(r.ID, "jg.") {
			cases = append(cases, ruleCase{name: "consistent issue", rule: r.ID, tree: ship, changed: jgChanged()})
		}
	}
	var lessons51 strings.Builder
	lessons51.WriteString("lessons:\n")
	for i := 0; i < 51; i++ {
		fmt.Fprintf(&lessons51, "  - {date: \"2026-03-13\", issue: I-%d, pattern: \"pattern %d\"}\n", i, i)
	}
	blockerReview := jgEdit{File: jgReview, Old: `"blockers": []`, New: `"blockers": [{"file": "src/a.py", "line": 9, "description": "SQL injection", "fix": "bind parameters"}]`}
	cases = append(cases,
		// Debug-round folders.
		silent("jg.test.phase-2-gated", "phase 1 failed and phase 2 null", jgFailIssue),
		silent("jg.test.verdict-matches-results", "FAIL with a failed check", jgFailIssue),
		silent("jg.test.inline-triage-fix", "inline triage with fix_target and instruction", jgFailIssue),
		silent("jg.test.classification-needs-triage", "classification with inline triage", jgFailIssue),
		silent("jg.debug.after-test-fail", "diagnosis after a FAIL", jgFailIssue),
		silent("jg.debug.after-test-fail", "diagnosis beside a kept failing round and a passing re-run", jgFailIssue,
			jgEdit{File: jgDir + "test-result-fail.json", New: jgFailIssue[jgTest]},
			jgEdit{File: jgDir + "test-result-pass.json", New: jgShipIssue[jgTest]},
			jgEdit{File: jgTest}),
		silent("jg.debug.after-test-fail", "diagnosis without any test result", jgFailIssue, jgEdit{File: jgTest}),
		silent("jg.debug.escalate-iff-sub", "escalate with a reason", jgFailIssue,
			jgEdit{File: jgDebug, Old: `"classification": "fix_target",
  "escalation_sub": null`, New: `"classification": "escalate",
  "escalation_sub": "ambiguous_requirement"`}),
		silent("jg.debug.instructions", "plan_defect with plan instructions", jgFailIssue,
			jgEdit{File: jgDebug, Old: `"classification": "fix_target"`, New: `"classification": "plan_defect"`},
			jgEdit{File: jgDebug, Old: `"plan_fix_instructions": null`, New: `"plan_fix_instructions": "add a migration step"`}),

		// check.py plan rules.
		fire("jg.plan.file-has-step", "affected file without a step", jgPlan, 4, ship,
			jgEdit{File: jgPlan, Old: `"file": "tests/test_a.py"`, New: `"file": "src/a.py"`}),
		fire("jg.plan.step-in-affected", "step file not affected", jgPlan, 9, ship,
			jgEdit{File: jgPlan, Old: `"file": "tests/test_a.py"`, New: `"file": "tests/test_b.py"`}),
		silent("jg.plan.step-in-affected", "steps numbered with step (upstream solutions)", ship,
			jgEdit{File: jgPlan, Old: `{"order": 1, "action": "modify", `, New: `{"step": 1, `},
			jgEdit{File: jgPlan, Old: `{"order": 2, "action": "test", `, New: `{"step": 2, `},
			jgEdit{File: jgPlan, Old: `{"order": 3, "action": "verify", `, New: `{"step": 3, `}),
		silent("jg.plan.step-order", "steps numbered with step (upstream solutions)", ship,
			jgEdit{File: jgPlan, Old: `{"order": 1, "action": "modify", `, New: `{"step": 1, `},
			jgEdit{File: jgPlan, Old: `{"order": 2, "action": "test", `, New: `{"step": 2, `},
			jgEdit{File: jgPlan, Old: `{"order": 3, "action": "verify", `, New: `{"step": 3, `}),
		silent("jg.plan.depends-on", "steps numbered with step (upstream solutions)", ship,
			jgEdit{File: jgPlan, Old: `{"order": 1, "action": "modify", `, New: `{"step": 1, `},
			jgEdit{File: jgPlan, Old: `{"order": 2, "action": "test", `, New: `{"step": 2, `},
			jgEdit{File: jgPlan, Old: `{"order": 3, "action": "verify", `, New: `{"step": 3, `}),
		fire("jg.plan.step-order", "order used twice", jgPlan, 9, ship,
			jgEdit{File: jgPlan, Old: `{"order": 2,`, New: `{"order": 1,`}),
		fire("jg.plan.step-order", "order not a number", jgPlan, 10, ship,
			jgEdit{File: jgPlan, Old: `{"order": 3,`, New: `{"order": "three",`}),
		fire("jg.plan.depends-on", "depends on a missing step", jgPlan, 10, ship,
			jgEdit{File: jgPlan, Old: `"depends_on": [1, 2]`, New: `"depends_on": [1, 5]`}),
		fire("jg.plan.depends-on", "depends on itself", jgPlan, 9, ship,
			jgEdit{File: jgPlan, Old: `"depends_on": [1]}`, New: `"depends_on": [2]}`}),
		fire("jg.plan.depends-on-acyclic", "1 and 2 depend on each other", jgPlan, 8, ship,
			jgEdit{File: jgPlan, Old: `"depends_on": []}`, New: `"depends_on": [2]}`}),
		fire("jg.provenance.produced-by", "plan written by the worker", jgPlan, 13, ship,
			jgEdit{File: jgPlan, Old: `"produced_by": "jg-subplanner-high"`, New: `"produced_by": "jg-worker"`}),
		fire("jg.provenance.produced-by", "unknown tier suffix", jgGit, 6, ship,
			jgEdit{File: jgGit, Old: `"jg-git"`, New: `"jg-git-turbo"`}),
		silent("jg.provenance.produced-by", "no produced_by", ship,
			jgEdit{File: jgGit, Old: `,
  "produced_by": "jg-git"`, New: ``}),

		// Scope (needs a diff base).
		func() ruleCase {
			c := fire("jg.scope.extra", "file outside the plan changed", jgPlan, 2, ship)
			c.changed = jgChanged("src/b.py")
			return c
		}(),
		func() ruleCase {
			c := silent("jg.scope.extra", "no base given", ship)
			c.changed = nil
			return c
		}(),
		func() ruleCase {
			c := silent("jg.scope.extra", "diff touches another active issue too", ship)
			c.changed = jgChanged("src/b.py", ".pipeline/ISSUE-43/plan.json")
			return c
		}(),
		func() ruleCase {
			c := silent("jg.scope.extra", "diff does not touch this issue folder", ship)
			c.changed = map[string]Change{"src/b.py": Modified}
			return c
		}(),
		func() ruleCase {
			c := silent("jg.scope.extra", "archived issue", jgTree(nil))
			for p, content := range ship {
				c.tree[strings.Replace(p, ".pipeline/", ".pipeline/completed/", 1)] = content
			}
			c.changed = map[string]Change{"src/b.py": Modified, ".pipeline/completed/ISSUE-42/plan.json": Added}
			return c
		}(),
		func() ruleCase {
			c := fire("jg.scope.missing", "affected file unchanged", jgPlan, 4, ship)
			c.changed = map[string]Change{"src/a.py": Modified, jgWorker: Added}
			return c
		}(),
		func() ruleCase {
			c := silent("jg.scope.missing", "worker has not completed", ship, jgEdit{File: jgWorker})
			c.changed = map[string]Change{"src/a.py": Modified, jgPlan: Added}
			return c
		}(),
		func() ruleCase {
			// a monorepo project: affected_files are relative to the project.
			tree := map[string]string{}
			for p, content := range ship {
				tree["svc/"+p] = content
			}
			return ruleCase{name: "monorepo project paths", rule: "jg.scope.extra", tree: tree,
				changed: map[string]Change{"svc/src/a.py": Modified, "svc/tests/test_a.py": Added, "other/x.go": Modified, "svc/" + jgWorker: Added}}
		}(),

		// Tiers.
		fire("jg.tier.complex-no-fast", "fast worker on a complex issue", jgWorker, 9, ship,
			jgEdit{File: jgWorker, Old: `"tier_used": "high"`, New: `"tier_used": "fast"`}),
		silent("jg.tier.complex-no-fast", "fast worker on a standard issue", ship,
			jgEdit{File: jgPlan, Old: `"complexity": "complex"`, New: `"complexity": "standard"`},
			jgEdit{File: jgWorker, Old: `"tier_used": "high"`, New: `"tier_used": "fast"`}),
		fire("jg.tier.escalation-progression", "escalation goes down", jgWorker, 11, ship,
			jgEdit{File: jgWorker, Old: `"to_tier": "high"`, New: `"to_tier": "fast"`}),

		// Worker.
		fire("jg.worker.blocked-iff-blockers", "blocked without blockers", jgWorker, 2, ship,
			jgEdit{File: jgWorker, Old: `"status": "completed"`, New: `"status": "blocked"`}),
		fire("jg.worker.blocked-iff-blockers", "completed with blockers", jgWorker, 7, ship,
			jgEdit{File: jgWorker, Old: `"blockers": []`, New: `"blockers": ["missing API key"]`}),
		silent("jg.worker.blocked-iff-blockers", "escalate with its reason in blockers", ship,
			jgEdit{File: jgWorker, Old: `"status": "completed"`, New: `"status": "escalate"`},
			jgEdit{File: jgWorker, Old: `"blockers": []`, New: `"blockers": ["exceeds fast scope"]`}),
		fire("jg.worker.files-in-plan", "worker changed an unplanned file", jgWorker, 5, ship,
			jgEdit{File: jgWorker, Old: `"tests/test_a.py"`, New: `"tests/test_b.py"`}),

		// Test.
		fire("jg.test.phase-2-gated", "phase 2 after a phase 1 failure", jgTest, 7, jgFailIssue,
			jgEdit{File: jgTest, Old: `"phase_2": null`, New: `"phase_2": {"integration": {"result": "PASS"}}`}),
		fire("jg.test.verdict-matches-results", "PASS with a failed check", jgTest, 2, ship,
			jgEdit{File: jgTest, Old: `"unit": {"result": "PASS"}`, New: `"unit": {"result": "FAIL"}`}),
		fire("jg.test.verdict-matches-results", "PASS with a bare FAIL in a kept round", jgDir+"test-result-pass.json", 2, ship,
			jgEdit{File: jgDir + "test-result-pass.json", New: strings.Replace(jgShipIssue[jgTest], `"unit": {"result": "PASS"}`, `"unit": "FAIL"`, 1)}),
		fire("jg.test.verdict-matches-results", "PASS with {status: FAIL}", jgTest, 2, ship,
			jgEdit{File: jgTest, Old: `"unit": {"result": "PASS"}`, New: `"unit": {"status": "FAIL"}`}),
		silent("jg.test.verdict-matches-results", "FAIL with {status: FAIL}, the walkthrough's form", ship,
			jgEdit{File: jgTest, Old: `"verdict": "PASS"`, New: `"verdict": "FAIL"`},
			jgEdit{File: jgTest, Old: `"unit": {"result": "PASS"}`, New: `"unit": {"status": "FAIL"}`},
			jgEdit{File: jgTest, Old: `"phase_2": {"integration": {"result": "PASS"}}`, New: `"phase_2": null`}),
		fire("jg.test.check-object", "bare string in test-result.json (check.py crashes)", jgTest, 5, ship,
			jgEdit{File: jgTest, Old: `"unit": {"result": "PASS"}`, New: `"unit": "PASS"`}),
		silent("jg.test.check-object", "bare string in test-result-pass.json (check.py does not read it)", ship,
			jgEdit{File: jgDir + "test-result-pass.json", New: strings.Replace(jgShipIssue[jgTest], `"unit": {"result": "PASS"}`, `"unit": "PASS"`, 1)}),
		fire("jg.test.verdict-matches-results", "PASS with a phase 2 failure", jgTest, 2, ship,
			jgEdit{File: jgTest, Old: `"phase_2": {"integration": {"result": "PASS"}}`, New: `"phase_2": {"checks": [{"name": "e2e", "result": "FAIL"}]}`}),
		fire("jg.test.verdict-matches-results", "FAIL without a failed check", jgTest, 2, ship,
			jgEdit{File: jgTest, Old: `"verdict": "PASS"`, New: `"verdict": "FAIL"`}),
		silent("jg.test.verdict-matches-results", "FAIL with a phase 2 stack trace", ship,
			jgEdit{File: jgTest, Old: `"verdict": "PASS"`, New: `"verdict": "FAIL"`},
			jgEdit{File: jgTest, Old: `"phase_2": {"integration": {"result": "PASS"}}`, New: `"phase_2": {"stack_trace": "TypeError at x.py:3", "reproduction": "pytest -k x"}`}),
		fire("jg.test.check-result", "lower-case result", jgTest, 5, ship,
			jgEdit{File: jgTest, Old: `"unit": {"result": "PASS"}`, New: `"unit": {"result": "passed"}`}),
		fire("jg.test.inline-triage-fix", "inline triage without a classification", jgTest, 9, jgFailIssue,
			jgEdit{File: jgTest, Old: `"classification": "fix_target"`, New: `"classification": null`}),
		fire("jg.test.inline-triage-fix", "inline triage without an instruction", jgTest, 9, jgFailIssue,
			jgEdit{File: jgTest, Old: `"fix_instruction": "default Y is 1"`, New: `"fix_instruction": " "`}),
		fire("jg.test.classification-needs-triage", "classification without triage", jgTest, 8, jgFailIssue,
			jgEdit{File: jgTest, Old: `"inline_triage": true`, New: `"inline_triage": false`}),

		// Review.
		fire("jg.review.verdict-consistent", "PASS with a blocker", jgReview, 2, ship, blockerReview),
		fire("jg.review.pass-with-concerns", "PASS with a concern", jgReview, 4, ship,
			jgEdit{File: jgReview, Old: `"concerns": []`, New: `"concerns": [{"file": "src/a.py", "line": 5, "description": "naming", "fix": "rename"}]`}),
		fire("jg.review.fail-without-findings", "FAIL with nits only", jgReview, 2, ship,
			jgEdit{File: jgReview, Old: `"verdict": "PASS"`, New: `"verdict": "FAIL"`},
			jgEdit{File: jgReview, Old: `"trim_instructions": null`, New: `"trim_instructions": "drop the helper"`}),
		fire("jg.review.fail-without-trim", "FAIL without trim instructions", jgReview, 8, ship,
			blockerReview, jgEdit{File: jgReview, Old: `"verdict": "PASS"`, New: `"verdict": "FAIL"`}),
		silent("jg.review.fail-without-trim", "FAIL with a blocker and trim instructions", ship,
			blockerReview, jgEdit{File: jgReview, Old: `"verdict": "PASS"`, New: `"verdict": "FAIL"`},
			jgEdit{File: jgReview, Old: `"trim_instructions": null`, New: `"trim_instructions": "bind parameters in query()"`}),
		silent("jg.review.fail-without-findings", "FAIL with a blocker and trim instructions", ship,
			blockerReview, jgEdit{File: jgReview, Old: `"verdict": "PASS"`, New: `"verdict": "FAIL"`},
			jgEdit{File: jgReview, Old: `"trim_instructions": null`, New: `"trim_instructions": "bind parameters in query()"`}),

		// Debug.
		fire("jg.debug.escalate-iff-sub", "escalate without a reason", jgDebug, 7, jgFailIssue,
			jgEdit{File: jgDebug, Old: `"classification": "fix_target"`, New: `"classification": "escalate"`}),
		silent("jg.debug.escalate-iff-sub", "escalation_sub of the wrong type (the schema reports it)", jgFailIssue,
			jgEdit{File: jgDebug, Old: `"classification": "fix_target",
  "escalation_sub": null`, New: `"classification": "escalate",
  "escalation_sub": 4`}),
		fire("jg.debug.escalate-iff-sub", "reason without escalating", jgDebug, 8, jgFailIssue,
			jgEdit{File: jgDebug, Old: `"escalation_sub": null`, New: `"escalation_sub": "technical_complexity"`}),
		fire("jg.debug.instructions", "fix_target without instructions", jgDebug, 7, jgFailIssue,
			jgEdit{File: jgDebug, Old: `"fix_instructions": "set the default to 1"`, New: `"fix_instructions": null`}),
		fire("jg.debug.instructions", "plan_defect without plan instructions", jgDebug, 7, jgFailIssue,
			jgEdit{File: jgDebug, Old: `"classification": "fix_target"`, New: `"classification": "plan_defect"`}),
		fire("jg.debug.after-test-fail", "diagnosis beside a passing test", jgDebug, 1, ship,
			jgEdit{File: jgDebug, New: jgFailIssue[jgDebug]}),

		// Git.
		fire("jg.git.after-review-pass", "git after a failed review", jgGit, 1, ship,
			blockerReview, jgEdit{File: jgReview, Old: `"verdict": "PASS"`, New: `"verdict": "FAIL"`},
			jgEdit{File: jgReview, Old: `"trim_instructions": null`, New: `"trim_instructions": "bind parameters"`}),
		silent("jg.git.after-review-pass", "git without a review in the folder", ship, jgEdit{File: jgReview}),

		// State.
		fire("jg.state.artifact-path", "stage artifact missing from the folder", jgState, 12, ship,
			jgEdit{File: jgState, Old: "artifact_path: worker-result.json", New: "artifact_path: worker-result-fast.json"}),
		fire("jg.state.artifact-path", "full path to a missing artifact", jgState, 8, ship,
			jgEdit{File: jgPlan}),

		// Lessons.
		fire("jg.lessons.frequency-positive", "frequency 0", jgLessons, 5, ship,
			jgEdit{File: jgLessons, Old: "frequency: 2", New: "frequency: 0"}),
		fire("jg.lessons.duplicate-pattern", "pattern twice", jgLessons, 2, ship,
			jgEdit{File: jgLessons, New: "- {date: \"2026-03-12\", issue: I-1, pattern: \"Forgot the migration\"}\n- {date: \"2026-03-13\", issue: I-2, pattern: \"forgot the migration.\"}\n"}),
		silent("jg.lessons.duplicate-pattern", "top-level list shape", ship,
			jgEdit{File: jgLessons, New: "- {date: \"2026-03-12\", issue: I-1, pattern: \"forgot the migration\"}\n- {date: \"2026-03-13\", issue: I-2, pattern: \"stale mocks\"}\n"}),
		fire("jg.lessons.max-entries", "51 lessons", jgLessons, 52, ship,
			jgEdit{File: jgLessons, New: lessons51.String()}),
	)
	addRuleCases("jg", cases...)
}

// TestJGStatus: what each active issue folder records for the gate.
func TestJGStatus(t *testing.T) {
	type want struct {
		unit, state string
		decisions   []string // "EFFECT file: reason"
	}
	kept := jgTree(jgFailIssue,
		jgEdit{File: jgDir + "test-result-fail.json", New: jgFailIssue[jgTest]},
		jgEdit{File: jgDir + "test-result-pass.json", New: jgShipIssue[jgTest]},
		jgEdit{File: jgTest})
	for _, tc := range []struct {
		name string
		tree map[string]string
		want []want
	}{
		{"committed", jgShipIssue, []want{{"JG ISSUE-42", "stage git, PR #42", []string{
			"SHIP " + jgTest + ": tester PASS",
			"SHIP " + jgReview + ": reviewer PASS",
		}}}},
		{"debug round", jgFailIssue, []want{{"JG ISSUE-42", "stage debug, fix_target", []string{
			"HOLD " + jgTest + ": tester FAIL: unit failed; debugger: fix_target",
		}}}},
		{"passing re-run supersedes the kept failing round", kept, []want{{"JG ISSUE-42", "stage test, PASS", []string{
			"SHIP " + jgDir + "test-result-pass.json: tester PASS",
		}}}},
		{"review failed", jgTree(jgShipIssue,
			jgEdit{File: jgReview, Old: `"verdict": "PASS"`, New: `"verdict": "FAIL"`},
			jgEdit{File: jgReview, Old: `"blockers": []`, New: `"blockers": [{"file": "a", "line": 1, "description": "d", "fix": "f"}, {"file": "a", "line": 2, "description": "d", "fix": "f"}]`},
			jgEdit{File: jgGit}), []want{{"JG ISSUE-42", "stage review, FAIL", []string{
			"SHIP " + jgTest + ": tester PASS",
			"HOLD " + jgReview + ": reviewer FAIL: 2 blockers",
		}}}},
		{"review failed on trim instructions alone", jgTree(jgShipIssue,
			jgEdit{File: jgReview, Old: `"verdict": "PASS"`, New: `"verdict": "FAIL"`},
			jgEdit{File: jgReview, Old: `"trim_instructions": null`, New: `"trim_instructions": "drop the helper"`},
			jgEdit{File: jgGit}), []want{{"JG ISSUE-42", "stage review, FAIL", []string{
			"SHIP " + jgTest + ": tester PASS",
			"HOLD " + jgReview + ": reviewer FAIL: drop the helper",
		}}}},
		{"worker blocked", map[string]string{
			jgPlan:   jgShipIssue[jgPlan],
			jgWorker: strings.Replace(strings.Replace(jgShipIssue[jgWorker], `"completed"`, `"blocked"`, 1), `"blockers": []`, `"blockers": ["no DB access"]`, 1),
		}, []want{{"JG ISSUE-42", "stage implement, blocked", []string{
			"HOLD " + jgWorker + ": worker blocked: no DB access",
		}}}},
		{"fast worker escalated, higher tier done", map[string]string{
			jgPlan:                            jgShipIssue[jgPlan],
			jgDir + "worker-result-fast.json": `{"status": "escalate", "tier_used": "fast", "files_changed": [], "blockers": ["too big"], "summary": "s"}`,
			jgWorker:                          jgShipIssue[jgWorker],
		}, []want{{"JG ISSUE-42", "stage implement, completed", nil}}},
		{"fast worker escalated alone", map[string]string{
			jgDir + "worker-result-fast.json": `{"status": "escalate", "tier_used": "fast", "files_changed": [], "blockers": ["too big"], "summary": "s"}`,
		}, []want{{"JG ISSUE-42", "stage implement, escalate", []string{
			"ADVISORY " + jgDir + "worker-result-fast.json: worker escalated from the fast tier: too big (no higher-tier result committed yet)",
		}}}},
		{"state only", map[string]string{jgState: "issue: ISSUE-42\nstatus: failed\ncurrent_stage: test\nrunning_summary: \"gave up after 2 retries\"\n"},
			[]want{{"JG ISSUE-42", "stage test, failed (state failed)", []string{
				"HOLD " + jgState + ": planner state failed: gave up after 2 retries",
			}}}},
		{"archived issue has no status", func() map[string]string {
			m := map[string]string{}
			for p, c := range jgFailIssue {
				m[strings.Replace(p, ".pipeline/", ".pipeline/completed/", 1)] = c
			}
			return m
		}(), nil},
		{"monorepo project", map[string]string{"svc/" + jgTest: jgShipIssue[jgTest]}, []want{{"JG svc/ISSUE-42", "stage test, PASS", []string{
			"SHIP svc/" + jgTest + ": tester PASS",
		}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runTree(t, tc.tree, nil, nil)
			var got []want
			for _, st := range res.Statuses {
				if st.Family != "jg" {
					continue
				}
				w := want{unit: st.Unit, state: st.State}
				for _, d := range st.Decisions {
					w.decisions = append(w.decisions, d.Effect+" "+d.File+": "+d.Reason)
				}
				got = append(got, w)
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tc.want) {
				t.Errorf("statuses:\n got %q\nwant %q", got, tc.want)
			}
			for _, f := range res.Findings {
				if f.Severity == SeverityError {
					t.Errorf("unexpected error finding: %s", formatFinding(f))
				}
			}
		})
	}
}

// TestJGConsistentIssueIsClean: the consistent folders raise no finding at
// all, from the schema or any rule (so the rule cases test what they say).
func TestJGConsistentIssueIsClean(t *testing.T) {
	for name, tree := range map[string]map[string]string{"ship": jgShipIssue, "fail": jgFailIssue} {
		res := runTree(t, tree, nil, jgChanged())
		for _, f := range res.Findings {
			t.Errorf("%s: %s", name, formatFinding(f))
		}
	}
}
