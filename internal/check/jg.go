package check

import (
	"cmp"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/phasegate/phasegate/internal/artifact"
)

// JG pipeline rules (docs/contracts/jg.md, docs/rules.md). A group is one issue
// folder, .pipeline/<issue>/ or .pipeline/completed/<issue>/, holding plan,
// worker, test, review, debug and git results and state.yaml;
// .pipeline/lessons.yaml is a group of its own.
//
// Several files of one kind can sit in one folder: the tiered agents write
// worker-result-fast.json / -high.json beside worker-result.json, and
// upstream's tutorial solutions keep test-result-fail.json beside
// test-result-pass.json. Rules about one artifact apply to every file of the
// kind; cross-file rules and the status use the kind's *current* file, the
// first present of (jgVariantRank):
//
//	<kind>-high.json   the planner only ever upgrades a tier (fast → standard
//	                   → high, on `status: escalate`), never downgrades, so the
//	                   highest tier's file is the newest;
//	<kind>.json        the name the pipeline writes and check.py reads;
//	<kind>-standard.json
//	<kind>-pass.json   a passing re-run after a debug round supersedes the
//	                   failing run kept beside it;
//	<kind>-fast.json   superseded by any higher tier;
//	<kind>-fail.json   the record of a failed round.
//
// "Latest" for the gate (docs/contracts/jg.md) is each issue folder not under
// completed/ (archived runs are history): its current test result and
// current review result decide — FAIL holds, PASS ships, SKIP is advisory —
// and a current worker result that is blocked holds (the worker says the plan
// could not be implemented; the planner hands it to a human, so the change is
// incomplete) while one that escalated is advisory (a tier hand-off the
// planner makes without counting a retry; no higher-tier result is committed
// yet). A state.yaml whose status is failed holds. A later artifact
// supersedes an earlier one only where the pipeline says so: a file of a
// higher rank above, nothing else — a debug diagnosis does not clear a FAIL
// test result (only a new test result does), and a review does not clear a
// FAIL test result either.

var _ = registerFamily(&family{
	name:  "jg",
	check: checkJG,
	rules: append([]Rule{
		// check.py stage-gate invariants. ac_test_mapped, classification_valid,
		// finding_has_file and finding_has_line are enforced by the schemas
		// (non-blank acceptance_mapping values, the classification enum,
		// non-blank finding file and integer line ≥ 1), so they are not rules.
		{ID: "jg.plan.file-has-step", Severity: SeverityError, Basis: "R", Summary: "Every file in `affected_files` has a step whose `file` is that file (check.py file_has_step)."},
		{ID: "jg.plan.step-in-affected", Severity: SeverityError, Basis: "R", Summary: "Every step's non-null `file` is in `affected_files` (check.py step_in_affected, an error there: upstream's own expert walkthrough, issue-3 step 7, breaks it, and check.py --stage plan rejects that plan too)."},
		{ID: "jg.scope.extra", Severity: SeverityError, Basis: "R", Summary: "With a diff base, every file changed in the diff (outside .pipeline/) is in the active issue's plan `affected_files` (check.py scope_extra). Only for an issue folder not under completed/ that the diff touches, and only when the diff touches no other active issue folder."},
		{ID: "jg.scope.missing", Severity: SeverityWarning, Basis: "R", Summary: "With a diff base, every file in `affected_files` changed in the diff once the worker completed (check.py scope_missing)."},
		{ID: "jg.test.phase-2-gated", Severity: SeverityError, Basis: "R", Summary: "`phase_2` is null or absent when a `phase_1` check failed (check.py phase_2_gated; \"If any Phase 1 check fails: STOP\")."},
		{ID: "jg.review.verdict-consistent", Severity: SeverityError, Basis: "R", Summary: "A review with verdict PASS has no blockers (check.py verdict_consistent)."},
		{ID: "jg.tier.complex-no-fast", Severity: SeverityError, Basis: "R", Summary: "When the plan's `complexity` is complex, the current worker, test and review results do not have `tier_used: fast` (expert check.py tier_complex_no_fast; a fast result superseded by a higher tier's is history)."},
		{ID: "jg.tier.escalation-progression", Severity: SeverityError, Basis: "R", Summary: "Each `escalation_history` entry goes up a tier: fast < standard < high (expert check.py escalation_tier_progression)."},

		// Agent docs and README.
		{ID: "jg.worker.blocked-iff-blockers", Severity: SeverityError, Basis: "S", Summary: "A worker result is `blocked` exactly when `blockers` is non-empty (\"empty array when unblocked\"); `escalate` may carry its reason in `blockers`."},
		{ID: "jg.worker.files-in-plan", Severity: SeverityWarning, Basis: "I", Summary: "Every `files_changed` entry is in the plan's `affected_files` (mirrors scope_extra without a diff)."},
		{ID: "jg.review.pass-with-concerns", Severity: SeverityWarning, Basis: "R", Summary: "A review with verdict PASS has no concerns (the reviewer doc: \"APPROVE only when all remaining findings are Nits\"; a warning because check.py checks blockers only and upstream's own walkthrough passes reviews with concerns)."},
		{ID: "jg.review.fail-without-findings", Severity: SeverityWarning, Basis: "R", Summary: "A review with verdict FAIL lists at least one blocker or concern (nits alone never fail a review)."},
		{ID: "jg.review.fail-without-trim", Severity: SeverityWarning, Basis: "R", Summary: "A review with verdict FAIL carries non-empty `trim_instructions` (\"FAIL with concrete trim instructions\")."},
		{ID: "jg.test.verdict-matches-results", Severity: SeverityWarning, Basis: "I", Summary: "A test verdict PASS has no failed check in phase 1 or phase 2, and FAIL has at least one failed check (or a phase 2 stack trace)."},
		{ID: "jg.test.check-object", Severity: SeverityError, Basis: "R", Summary: "Every `phase_1` entry of test-result.json is a mapping: check.py --stage test calls .get on each one and crashes on a bare string such as \"lint\": \"PASS\". In the other test results (test-result-pass.json, test-result-fail.json, …), which check.py does not read, a bare string is reported as schema.convention."},
		{ID: "jg.test.check-result", Severity: SeverityWarning, Basis: "I", Summary: "Each phase 1 check's result ({result} or the bare string) is PASS, FAIL or SKIP."},
		{ID: "jg.test.inline-triage-fix", Severity: SeverityError, Basis: "S", Summary: "`inline_triage: true` goes with `classification: fix_target` and a non-empty `fix_instruction`."},
		{ID: "jg.test.classification-needs-triage", Severity: SeverityWarning, Basis: "I", Summary: "A tester sets `classification` only with `inline_triage: true`; otherwise it leaves it null for the debugger."},
		{ID: "jg.debug.escalate-iff-sub", Severity: SeverityError, Basis: "S", Summary: "A debug diagnosis has a non-null `escalation_sub` exactly when its classification is escalate."},
		{ID: "jg.debug.instructions", Severity: SeverityWarning, Basis: "I", Summary: "A fix_target diagnosis has `fix_instructions`; a plan_defect diagnosis has `plan_fix_instructions`."},
		{ID: "jg.debug.after-test-fail", Severity: SeverityWarning, Basis: "I", Summary: "A debug diagnosis sits beside a test result that failed (the debugger runs only on a tester FAIL); unchecked when the folder has no test result."},
		{ID: "jg.git.after-review-pass", Severity: SeverityWarning, Basis: "R", Summary: "A git result sits beside a review whose verdict is PASS (\"Reviewer PASS -> invoke git\"); unchecked when the folder has no review result."},
		{ID: "jg.plan.step-order", Severity: SeverityWarning, Basis: "I", Summary: "Each step's number (`order`, or upstream solutions' `step`) is a whole number, unique within the plan."},
		{ID: "jg.plan.depends-on", Severity: SeverityWarning, Basis: "I", Summary: "Each `depends_on` entry is the number of another step of the plan."},
		{ID: "jg.plan.depends-on-acyclic", Severity: SeverityWarning, Basis: "I", Summary: "Steps' `depends_on` have no cycle."},
		{ID: "jg.provenance.produced-by", Severity: SeverityWarning, Basis: "R", Summary: "`produced_by`, when present, names the kind's writer (jg-subplanner, jg-worker, jg-tester, jg-reviewer, jg-debugger, jg-git, jg-planner for state.yaml), optionally with a tier suffix (-fast, -standard, -high)."},
		{ID: "jg.state.artifact-path", Severity: SeverityWarning, Basis: "I", Summary: "A state.yaml `stages.<id>.artifact_path` that names an artifact of the same issue folder exists there (paths into other folders, and files that are not JG artifacts, cannot be seen and are not checked)."},
		{ID: "jg.lessons.frequency-positive", Severity: SeverityWarning, Basis: "I", Summary: "A lesson's `frequency` is at least 1."},
		{ID: "jg.lessons.duplicate-pattern", Severity: SeverityWarning, Basis: "I", Summary: "A lesson's pattern is recorded once (raise its `frequency` instead of repeating it)."},
		{ID: "jg.lessons.max-entries", Severity: SeverityWarning, Basis: "R", Summary: "lessons.yaml holds at most 50 entries (the template: \"Cap at ~50 entries; drop oldest when exceeded\")."},
	}, jgTraceRules...),
})

// jgMaxLessons is the template's cap on lessons.yaml entries.
const jgMaxLessons = 50

// jgVariantRank orders the files of one kind in a folder by how current they
// are (lower is more current); see the comment at the top of this file.
var jgVariantRank = map[string]int{"high": 0, "": 1, "standard": 2, "pass": 3, "fast": 4, "fail": 5}

// jgVariant is the suffix of an artifact's file name after its kind name:
// "fast" for worker-result-fast.json, "" for worker-result.json.
func jgVariant(d *artifact.Document) string {
	base := strings.TrimSuffix(path.Base(d.Path), path.Ext(d.Path))
	return strings.TrimPrefix(strings.TrimPrefix(base, d.Kind.Name), "-")
}

// jgCurrent is the most current of docs (nil when empty).
func jgCurrent(docs []*artifact.Document) *artifact.Document {
	var best *artifact.Document
	bestRank := 0
	for _, d := range docs {
		r, ok := jgVariantRank[jgVariant(d)]
		if !ok {
			r = len(jgVariantRank)
		}
		if best == nil || r < bestRank {
			best, bestRank = d, r
		}
	}
	return best
}

// jgWriters is the writer agent of each kind (provenance, docs/contracts/jg.md).
var jgWriters = map[string]string{
	"jg.plan": "jg-subplanner", "jg.worker-result": "jg-worker", "jg.test-result": "jg-tester",
	"jg.review-result": "jg-reviewer", "jg.debug-diagnosis": "jg-debugger", "jg.git-result": "jg-git",
	"jg.state": "jg-planner", "jg.pipeline-trace": "jg-planner",
}

// jgTiers orders the model tiers.
var jgTiers = map[string]int{"fast": 0, "standard": 1, "high": 2}

type jgIssue struct {
	// key is the group key without the run's prefix: the folder's path.
	key                        string
	completed                  bool
	plans, workers, tests      []*artifact.Document
	reviews, debugs, gits      []*artifact.Document
	plan, worker, test, review *artifact.Document // current files
	debug, git, state          *artifact.Document
	affected                   map[string]bool // the current plan's affected_files; nil without one
}

// checkJG checks an issue folder (or .pipeline/lessons.yaml): each artifact
// on its own, then the cross-file rules on the kinds' current files, and
// records the status of a folder not under completed/.
func checkJG(c *ruleCtx, g *Group) {
	is := &jgIssue{key: strings.TrimPrefix(g.Key, c.opts.Prefix)}
	states, lessons := jgCollect(c, g, is)
	for _, d := range lessons {
		jgCheckLessons(c, d)
	}
	if len(g.Docs) == len(lessons) {
		return
	}
	is.pickCurrent(states)

	for _, d := range is.plans {
		jgCheckPlan(c, d)
	}
	if obj := asObj(valueOf(is.plan)); obj != nil {
		if files, ok := stringList(obj, "affected_files"); ok {
			is.affected = map[string]bool{}
			for _, f := range files {
				is.affected[f] = true
			}
		}
	}
	for _, d := range is.workers {
		jgCheckWorker(c, is, d)
	}
	for _, d := range is.tests {
		jgCheckTest(c, d)
	}
	for _, d := range is.reviews {
		jgCheckReview(c, d)
	}
	for _, d := range is.debugs {
		jgCheckDebug(c, is, d)
	}
	for _, d := range is.gits {
		jgCheckGit(c, is, d)
	}
	for _, d := range g.Docs {
		jgCheckEscalation(c, d)
	}
	jgCheckTiers(c, is)
	for _, d := range states {
		jgCheckState(c, is, d)
	}
	jgCheckScope(c, is)
	if !is.completed {
		jgStatus(c, is)
	}
}

// jgCollect sorts a group's documents by kind into the issue folder is, its
// state files and its lessons files, checking on the way what needs no other
// file: pipeline traces and provenance.
func jgCollect(c *ruleCtx, g *Group, is *jgIssue) (states, lessons []*artifact.Document) {
	is.plans, is.workers, is.tests = g.Of("jg.plan"), g.Of("jg.worker-result"), g.Of("jg.test-result")
	is.reviews, is.debugs, is.gits = g.Of("jg.review-result"), g.Of("jg.debug-diagnosis"), g.Of("jg.git-result")
	for _, d := range g.Of("jg.pipeline-trace") {
		jgCheckTrace(c, d)
	}
	for _, d := range g.Docs {
		if w, ok := jgWriters[d.Kind.ID]; ok {
			jgCheckProducedBy(c, d, w)
		}
	}
	return g.Of("jg.state"), g.Of("jg.lessons")
}

// pickCurrent sets each kind's current file, the state file (the first of
// states) and whether the folder is under .pipeline/completed/.
func (is *jgIssue) pickCurrent(states []*artifact.Document) {
	is.plan, is.worker, is.test = jgCurrent(is.plans), jgCurrent(is.workers), jgCurrent(is.tests)
	is.review, is.debug, is.git = jgCurrent(is.reviews), jgCurrent(is.debugs), jgCurrent(is.gits)
	if len(states) > 0 {
		is.state = states[0]
	}
	segs := strings.Split(is.key, "/")
	for i := len(segs) - 2; i >= 0; i-- {
		if segs[i] == ".pipeline" {
			is.completed = i+1 < len(segs) && segs[i+1] == "completed"
			break
		}
	}
}

// jgCheckProducedBy checks provenance against the kind's writer.
func jgCheckProducedBy(c *ruleCtx, d *artifact.Document, writer string) {
	got, ok := str(asObj(d.Value), "produced_by")
	if !ok {
		return
	}
	if got == writer {
		return
	}
	if tier, found := strings.CutPrefix(got, writer+"-"); found {
		if _, ok := jgTiers[tier]; ok {
			return
		}
	}
	c.report("jg.provenance.produced-by", d, ptr("produced_by"), "`produced_by` is %s but %s is written by %s (or a tier of it, e.g. %s-high): correct the provenance or move the file", display(got), path.Base(d.Path), writer, writer)
}

// jgStepNumber is a step's number: `order`, or `step` in upstream's
// solutions; key says which field holds it ("" when neither).
func jgStepNumber(step map[string]any) (n int64, key string, ok bool) {
	for _, k := range []string{"order", "step"} {
		if _, has := step[k]; has {
			n, ok = toInt(step[k])
			return n, k, ok
		}
	}
	return 0, "", false
}

// jgCheckPlan checks a plan: its affected files against its steps' files,
// the steps' numbers, and their dependencies.
func jgCheckPlan(c *ruleCtx, d *artifact.Document) {
	obj := asObj(d.Value)
	if obj == nil {
		return
	}
	steps := asList(obj["steps"])
	jgCheckPlanFiles(c, d, obj, steps)
	numbers := map[int64]int{} // step number → index of its first step
	jgCheckPlanSteps(c, d, obj, steps, numbers)
	jgCheckPlanDeps(c, d, steps, numbers)
}

// jgCheckPlanFiles checks that every affected file has a step changing it
// (when the plan has steps).
func jgCheckPlanFiles(c *ruleCtx, d *artifact.Document, obj map[string]any, steps []any) {
	if steps == nil {
		return
	}
	stepFiles := map[string]bool{}
	for _, e := range steps {
		if f, ok := str(asObj(e), "file"); ok {
			stepFiles[f] = true
		}
	}
	for i, e := range asList(obj["affected_files"]) {
		f, ok := e.(string)
		if !ok || stepFiles[f] {
			continue
		}
		c.report("jg.plan.file-has-step", d, ptr("affected_files", i), "%s is in `affected_files` but no step has `\"file\": %s`: add a step that changes it, or drop it from `affected_files`", display(f), display(f))
	}
}

// jgCheckPlanSteps checks that each step's file is an affected file and that
// the steps are numbered, each with its own number. It records in numbers
// each step number's index of its first step.
func jgCheckPlanSteps(c *ruleCtx, d *artifact.Document, obj map[string]any, steps []any, numbers map[int64]int) {
	affected, hasAffected := stringList(obj, "affected_files")
	inAffected := map[string]bool{}
	for _, f := range affected {
		inAffected[f] = true
	}
	for i, e := range steps {
		st := asObj(e)
		if st == nil {
			continue
		}
		if f, ok := str(st, "file"); ok && !blank(f) && hasAffected && !inAffected[f] {
			c.report("jg.plan.step-in-affected", d, ptr("steps", i, "file"), "step %d changes %s, which is not in `affected_files`: add it there (the worker may touch only affected files, so check.py's scope_extra would fail the change) or point the step at an affected file", i+1, display(f))
		}
		n, key, ok := jgStepNumber(st)
		switch {
		case key == "":
			// the schema reports a step without a number
		case !ok:
			c.report("jg.plan.step-order", d, ptr("steps", i, key), "step %d's `%s` is %s, not a whole number: number the steps 1, 2, … so that `depends_on` can refer to them", i+1, key, display(st[key]))
		default:
			if first, dup := numbers[n]; dup {
				c.report("jg.plan.step-order", d, ptr("steps", i, key), "step number %d is used twice (also by `steps[%d]`): give each step its own number", n, first)
			} else {
				numbers[n] = i
			}
		}
	}
}

// jgCheckPlanDeps checks the steps' depends_on over their numbers:
// references to existing other steps, and no cycle.
func jgCheckPlanDeps(c *ruleCtx, d *artifact.Document, steps []any, numbers map[int64]int) {
	deps := map[int64][]int64{}
	for i, e := range steps {
		st := asObj(e)
		n, _, ok := jgStepNumber(st)
		for j, dep := range asList(st["depends_on"]) {
			m, isInt := toInt(dep)
			switch {
			case !isInt:
				c.report("jg.plan.depends-on", d, ptr("steps", i, "depends_on", j), "`depends_on` entry %s is not a step number: list the numbers of the steps that must be done first", display(dep))
			case ok && m == n:
				c.report("jg.plan.depends-on", d, ptr("steps", i, "depends_on", j), "step %d depends on itself: remove %d from its `depends_on`", n, m)
			default:
				if _, exists := numbers[m]; !exists {
					c.report("jg.plan.depends-on", d, ptr("steps", i, "depends_on", j), "`depends_on` names step %d, but the plan has no step %d: refer to an existing step's number", m, m)
				} else if ok && numbers[n] == i {
					deps[n] = append(deps[n], m)
				}
			}
		}
	}
	if cycle := jgFindCycle(deps); cycle != nil {
		names := make([]string, len(cycle))
		for k, n := range cycle {
			names[k] = fmt.Sprint(n)
		}
		i := numbers[cycle[0]]
		c.report("jg.plan.depends-on-acyclic", d, ptr("steps", i, "depends_on"), "steps depend on each other in a cycle (%s): no order can satisfy it; remove one of these dependencies", strings.Join(names, " → "))
	}
}

// jgFindCycle returns one cycle of the dependency graph (its first node
// repeated at the end), or nil. Deterministic: nodes in ascending order.
func jgFindCycle(deps map[int64][]int64) []int64 {
	const (
		white = iota
		grey
		black
	)
	color := map[int64]int{}
	var stack []int64
	var found []int64
	var visit func(n int64) bool
	visit = func(n int64) bool {
		color[n] = grey
		stack = append(stack, n)
		for _, m := range deps[n] {
			switch color[m] {
			case grey: // m is on the stack
				found = append(slices.Clone(stack[slices.Index(stack, m):]), m)
				return true
			case white:
				if visit(m) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[n] = black
		return false
	}
	for _, n := range slices.Sorted(maps.Keys(deps)) {
		if color[n] == white && visit(n) {
			return found
		}
	}
	return nil
}

func jgCheckWorker(c *ruleCtx, is *jgIssue, d *artifact.Document) {
	obj := asObj(d.Value)
	if obj == nil {
		return
	}
	status, _ := str(obj, "status")
	blockers, hasBlockers := obj["blockers"].([]any)
	switch {
	case !hasBlockers:
	case status == "blocked" && len(blockers) == 0:
		c.report("jg.worker.blocked-iff-blockers", d, ptr("status"), "the worker is blocked but `blockers` is empty: say what blocks it, so the planner can route it")
	case status == "completed" && len(blockers) > 0:
		c.report("jg.worker.blocked-iff-blockers", d, ptr("blockers"), "the worker completed but lists %s (first: %s): set `status` to blocked, or empty `blockers` once resolved", countWord(len(blockers), "blocker", "blockers"), display(blockers[0]))
	}
	if is.affected == nil {
		return
	}
	for i, e := range asList(obj["files_changed"]) {
		f, ok := e.(string)
		if !ok || is.affected[f] {
			continue
		}
		c.report("jg.worker.files-in-plan", d, ptr("files_changed", i), "the worker changed %s, which is not in `affected_files` of %s: revert it, or re-plan to include it (check.py's scope_extra fails such a change)", display(f), is.plan.Path)
	}
}

// jgCheckResult is one phase_1 check: its name and result.
type jgCheckResult struct {
	name, result string
	known        bool // a result string was found
}

// jgCheckResults reads a map of checks, {name: {result}} or {name: "PASS"},
// in name order.
func jgCheckResults(m map[string]any) []jgCheckResult {
	names := slices.Sorted(maps.Keys(m))
	var out []jgCheckResult
	for _, k := range names {
		switch v := m[k].(type) {
		case string:
			out = append(out, jgCheckResult{name: k, result: v, known: true})
		case map[string]any:
			// The documented key is result; upstream's walkthrough writes
			// status, and check.py reads neither strictly.
			r, ok := str(v, "result")
			if !ok {
				r, ok = str(v, "status")
			}
			out = append(out, jgCheckResult{name: k, result: r, known: ok})
		}
	}
	return out
}

// jgFailed lists the checks of m whose result is FAIL.
func jgFailed(m map[string]any) []string {
	var out []string
	for _, r := range jgCheckResults(m) {
		if r.result == "FAIL" {
			out = append(out, r.name)
		}
	}
	return out
}

// jgPhase2Failed lists the failed checks of phase 2 (whose inner shape
// varies upstream: {check: {result}}, {checks: {…}} or {checks: [{name,
// result}]}), and whether it carries a stack trace.
func jgPhase2Failed(p2 map[string]any) (failed []string, trace bool) {
	failed = jgFailed(p2)
	switch checks := p2["checks"].(type) {
	case map[string]any:
		failed = append(failed, jgFailed(checks)...)
	case []any:
		for i, e := range checks {
			ch := asObj(e)
			if strOr(ch, "result") == "FAIL" {
				failed = append(failed, cmp.Or(strOr(ch, "name"), fmt.Sprintf("checks[%d]", i)))
			}
		}
	}
	if s, ok := str(p2, "stack_trace"); ok && !blank(s) {
		trace = true
	}
	return failed, trace
}

func jgCheckTest(c *ruleCtx, d *artifact.Document) {
	obj := asObj(d.Value)
	if obj == nil {
		return
	}
	p1 := asObj(obj["phase_1"])
	for _, k := range slices.Sorted(maps.Keys(p1)) {
		if _, bare := p1[k].(map[string]any); bare || p1[k] == nil {
			continue
		}
		if path.Base(d.Path) == "test-result.json" {
			c.report("jg.test.check-object", d, ptr("phase_1", k), "phase 1 check %s is %s, not a mapping: check.py --stage test calls .get on each check of test-result.json and crashes on it — write {\"result\": %s}", display(k), display(p1[k]), display(p1[k]))
			continue
		}
		c.report(RuleConvention, d, ptr("phase_1", k), "phase 1 check %s is %s, not a mapping: the documented shape is {\"result\": %s, \"output\": …} (check.py reads only test-result.json, so it does not see this file; it would crash on this form there)", display(k), display(p1[k]), display(p1[k]))
	}
	for _, r := range jgCheckResults(p1) {
		if !r.known {
			continue // the schema requires result
		}
		if r.result != "PASS" && r.result != "FAIL" && r.result != "SKIP" {
			at := ptr("phase_1", r.name, "result")
			if _, bare := p1[r.name].(string); bare {
				at = ptr("phase_1", r.name)
			}
			c.report("jg.test.check-result", d, at, "phase 1 check %s has result %s: write PASS, FAIL or SKIP in capitals (the verdict rules read FAIL only)", display(r.name), display(r.result))
		}
	}
	failed1 := jgFailed(p1)
	p2, hasP2 := obj["phase_2"].(map[string]any)
	if len(failed1) > 0 && hasP2 {
		c.report("jg.test.phase-2-gated", d, ptr("phase_2"), "phase 2 ran although phase 1 failed (%s): the tester stops after a phase 1 failure; set `phase_2` to null", strings.Join(failed1, ", "))
	}
	var failed2 []string
	trace := false
	if hasP2 {
		failed2, trace = jgPhase2Failed(p2)
	}
	verdict, _ := str(obj, "verdict")
	switch {
	case verdict == "PASS" && len(failed1)+len(failed2) > 0:
		c.report("jg.test.verdict-matches-results", d, ptr("verdict"), "the verdict is PASS but %s failed: a failed check makes the verdict FAIL", strings.Join(append(failed1, failed2...), ", "))
	case verdict == "FAIL" && len(failed1)+len(failed2) == 0 && !trace && p1 != nil:
		c.report("jg.test.verdict-matches-results", d, ptr("verdict"), "the verdict is FAIL but no phase 1 or phase 2 check failed: record the failing check (result FAIL, with its output) so the debugger can reproduce it, or correct the verdict")
	}

	triage, hasTriage := boolean(obj, "inline_triage")
	class, hasClass := str(obj, "classification")
	if triage {
		fix, _ := str(obj, "fix_instruction")
		switch {
		case class != "fix_target":
			c.report("jg.test.inline-triage-fix", d, ptr("inline_triage"), "`inline_triage` is true but `classification` is %s: an inline triage classifies the failure as fix_target (anything else goes to the debugger)", jgShow(obj["classification"], hasClass))
		case blank(fix):
			c.report("jg.test.inline-triage-fix", d, ptr("inline_triage"), "`inline_triage` is true but `fix_instruction` is empty: give the worker the one-line fix")
		}
	}
	if hasClass && !triage {
		state := "absent"
		if hasTriage {
			state = "false"
		}
		c.report("jg.test.classification-needs-triage", d, ptr("classification"), "`classification` is %s while `inline_triage` is %s: the tester leaves classification null unless it triaged inline (the debugger classifies)", display(class), state)
	}
}

// jgShow displays a field's value, or "absent or null" when it has none.
func jgShow(v any, present bool) string {
	if !present && v == nil {
		return "absent or null"
	}
	return display(v)
}

func jgCheckReview(c *ruleCtx, d *artifact.Document) {
	obj := asObj(d.Value)
	if obj == nil {
		return
	}
	verdict, _ := str(obj, "verdict")
	blockers, hasBlockers := obj["blockers"].([]any)
	concerns, hasConcerns := obj["concerns"].([]any)
	switch verdict {
	case "PASS":
		if len(blockers) > 0 {
			c.report("jg.review.verdict-consistent", d, ptr("verdict"), "the verdict is PASS but the review lists %s: a blocker fails the review — set the verdict to FAIL with trim instructions, or drop blockers that were resolved", countWord(len(blockers), "blocker", "blockers"))
		}
		if len(concerns) > 0 {
			c.report("jg.review.pass-with-concerns", d, ptr("concerns"), "the verdict is PASS but the review lists %s: the reviewer approves only when all remaining findings are nits (check.py checks blockers only, and upstream's own walkthrough passes reviews with concerns, so this is a warning) — fail the review, or downgrade the concerns to nits", countWord(len(concerns), "concern", "concerns"))
		}
	case "FAIL":
		if hasBlockers && hasConcerns && len(blockers)+len(concerns) == 0 {
			c.report("jg.review.fail-without-findings", d, ptr("verdict"), "the verdict is FAIL but there are no blockers or concerns: list the finding that fails the review (nits alone never fail it), or PASS")
		}
		if t, _ := str(obj, "trim_instructions"); blank(t) {
			at := ptr("trim_instructions")
			if _, has := obj["trim_instructions"]; !has {
				at = ptr("verdict")
			}
			c.report("jg.review.fail-without-trim", d, at, "the verdict is FAIL but `trim_instructions` is empty: tell the worker concretely what to change or cut")
		}
	}
}

func jgCheckDebug(c *ruleCtx, is *jgIssue, d *artifact.Document) {
	obj := asObj(d.Value)
	if obj == nil {
		return
	}
	class, _ := str(obj, "classification")
	sub, hasSub := str(obj, "escalation_sub")
	wrongType := !hasSub && obj["escalation_sub"] != nil // the schema reports it
	switch {
	case class == "escalate" && !hasSub && !wrongType:
		c.report("jg.debug.escalate-iff-sub", d, ptr("classification"), "the diagnosis escalates but `escalation_sub` is not set: say why — technical_complexity or ambiguous_requirement")
	case hasSub && (class == "fix_target" || class == "plan_defect"):
		c.report("jg.debug.escalate-iff-sub", d, ptr("escalation_sub"), "`escalation_sub` is %s but the classification is %s, not escalate: set it to null, or escalate", display(sub), class)
	}
	switch class {
	case "fix_target":
		if s, _ := str(obj, "fix_instructions"); blank(s) {
			c.report("jg.debug.instructions", d, ptr("classification"), "a fix_target diagnosis goes to the worker, but `fix_instructions` is empty: say what to change")
		}
	case "plan_defect":
		if s, _ := str(obj, "plan_fix_instructions"); blank(s) {
			c.report("jg.debug.instructions", d, ptr("classification"), "a plan_defect diagnosis goes to the subplanner, but `plan_fix_instructions` is empty: say what the plan must change")
		}
	}
	if len(is.tests) == 0 {
		return
	}
	var verdicts []string
	for _, t := range is.tests {
		v, _ := str(asObj(t.Value), "verdict")
		if v == "FAIL" {
			return
		}
		verdicts = append(verdicts, fmt.Sprintf("%s: %s", t.Path, cmp.Or(v, "no verdict")))
	}
	c.report("jg.debug.after-test-fail", d, nil, "this diagnosis sits beside no failed test result (%s): the debugger runs only after a tester FAIL — if it belongs to an earlier round whose failing result was overwritten, keep that result (e.g. as test-result-fail.json) or remove the stale diagnosis", strings.Join(verdicts, "; "))
}

func jgCheckGit(c *ruleCtx, is *jgIssue, d *artifact.Document) {
	if is.review == nil {
		return
	}
	v, _ := str(asObj(is.review.Value), "verdict")
	if v == "PASS" {
		return
	}
	c.report("jg.git.after-review-pass", d, nil, "a git result exists but the review in %s is %s, not PASS: the git agent runs only after a reviewer PASS — re-review, or remove this result", is.review.Path, cmp.Or(v, "without a verdict"))
}

// jgCheckEscalation checks that each escalation goes up a tier.
func jgCheckEscalation(c *ruleCtx, d *artifact.Document) {
	for i, e := range asList(asObj(d.Value)["escalation_history"]) {
		en := asObj(e)
		from, _ := str(en, "from_tier")
		to, _ := str(en, "to_tier")
		f, okF := jgTiers[from]
		t, okT := jgTiers[to]
		if okF && okT && f >= t {
			c.report("jg.tier.escalation-progression", d, ptr("escalation_history", i, "to_tier"), "escalation %d goes from %s to %s: an escalation moves up a tier (fast → standard → high)", i+1, from, to)
		}
	}
}

// jgCheckTiers checks tier routing against the plan's complexity, on the
// current worker, test and review results (check.py reads the plain files):
// a fast result superseded by a higher tier's shows the routing was already
// corrected by an escalation.
func jgCheckTiers(c *ruleCtx, is *jgIssue) {
	if strOr(asObj(valueOf(is.plan)), "complexity") != "complex" {
		return
	}
	for _, d := range []*artifact.Document{is.worker, is.test, is.review} {
		if d != nil && strOr(asObj(d.Value), "tier_used") == "fast" {
			c.report("jg.tier.complex-no-fast", d, ptr("tier_used"), "%s classifies the issue as complex, but this result was produced by the fast tier: route complex work to jg-worker-high, jg-tester or jg-reviewer-high and re-run the stage", is.plan.Path)
		}
	}
}

// jgArtifactName reports whether name is the file name of a JG artifact of
// an issue folder.
func jgArtifactName(name string) bool {
	if name == "state.yaml" {
		return true
	}
	base, ok := strings.CutSuffix(name, ".json")
	if !ok {
		return false
	}
	for _, k := range []string{"plan", "worker-result", "test-result", "review-result", "debug-diagnosis", "git-result"} {
		if rest, found := strings.CutPrefix(base, k); found {
			_, known := jgVariantRank[strings.TrimPrefix(rest, "-")]
			return known && (rest == "" || strings.HasPrefix(rest, "-"))
		}
	}
	return false
}

// jgCheckState checks state.yaml's artifact paths that point into the same
// folder. Paths into another folder, and files that are not JG artifacts
// (pipeline-trace.json, source files), are not visible to a rule and are not
// checked.
func jgCheckState(c *ruleCtx, is *jgIssue, d *artifact.Document) {
	stages := asObj(asObj(d.Value)["stages"])
	names := slices.Sorted(maps.Keys(stages))
	present := map[string]bool{}
	for _, list := range [][]*artifact.Document{is.plans, is.workers, is.tests, is.reviews, is.debugs, is.gits} {
		for _, x := range list {
			present[path.Base(x.Path)] = true
		}
	}
	present["state.yaml"] = true
	folder := path.Base(is.key)
	for _, id := range names {
		p, ok := str(asObj(stages[id]), "artifact_path")
		if !ok || blank(p) {
			continue
		}
		clean := path.Clean(strings.TrimSpace(p))
		dir, name := path.Split(clean)
		dir = strings.TrimSuffix(dir, "/")
		same := dir == "" || dir == "." || path.Base(dir) == folder && strings.Contains("/"+dir, "/.pipeline/")
		if !same || !jgArtifactName(name) || present[name] {
			continue
		}
		c.report("jg.state.artifact-path", d, ptr("stages", id, "artifact_path"), "stage %s's artifact %s is not in this folder: commit it, or correct `artifact_path`", display(id), display(p))
	}
}

// jgCheckScope compares the diff with the plan's affected_files (check.py
// scope_extra / scope_missing). It runs only with a diff base, for an issue
// folder not under completed/ that the diff touches. A diff that touches
// several active issue folders cannot be attributed to one plan, so
// scope_extra is skipped then. Paths are matched relative to the root and to
// the directory holding .pipeline (a monorepo's project); changes under any
// .pipeline directory are ignored, as check.py does.
func jgCheckScope(c *ruleCtx, is *jgIssue) {
	if c.opts.Changed == nil || is.completed || is.plan == nil || is.affected == nil {
		return
	}
	segs := strings.Split(is.key, "/")
	if len(segs) < 2 || segs[len(segs)-2] != ".pipeline" {
		return
	}
	issue := segs[len(segs)-1]
	parent := strings.Join(segs[:len(segs)-2], "/")
	pipelineDir := ".pipeline/"
	if parent != "" {
		pipelineDir = parent + "/.pipeline/"
	}
	// Only a diff that touches the issue's folder is checked: a result
	// depends on the rest of the diff only then.
	if !c.touches(pipelineDir + issue + "/") {
		return
	}
	touched, others := false, false
	var code []string
	for p := range c.allChanged() {
		if rest, ok := strings.CutPrefix(p, pipelineDir); ok {
			if folder, _, isDir := strings.Cut(rest, "/"); isDir && folder != "completed" {
				if folder == issue {
					touched = true
				} else {
					others = true
				}
			}
			continue
		}
		if strings.HasPrefix(p, ".pipeline/") || strings.Contains(p, "/.pipeline/") {
			continue
		}
		code = append(code, p)
	}
	if !touched {
		return
	}
	sort.Strings(code)
	rel := func(p string) (string, bool) {
		if parent == "" {
			return p, true
		}
		return strings.CutPrefix(p, parent+"/")
	}
	changed := map[string]bool{}
	for _, p := range code {
		changed[p] = true
		r, inProject := rel(p)
		if inProject {
			changed[r] = true
		}
		if others || !inProject || is.affected[p] || is.affected[r] {
			continue
		}
		c.report("jg.scope.extra", is.plan, ptr("affected_files"), "%s changed in this diff but is not in `affected_files`: revert the change, or re-plan to include it", display(p))
	}
	if is.worker == nil || strOr(asObj(is.worker.Value), "status") != "completed" {
		return
	}
	for i, e := range asList(asObj(is.plan.Value)["affected_files"]) {
		f, ok := e.(string)
		if !ok || changed[f] {
			continue
		}
		c.report("jg.scope.missing", is.plan, ptr("affected_files", i), "%s is in `affected_files` but did not change in this diff although %s says the worker completed: implement it, or drop it from the plan", display(f), is.worker.Path)
	}
}

// jgCheckLessons checks lessons.yaml, either shape.
func jgCheckLessons(c *ruleCtx, d *artifact.Document) {
	list, ok := d.Value.([]any)
	prefix := []any{}
	if !ok {
		list = asList(asObj(d.Value)["lessons"])
		prefix = []any{"lessons"}
	}
	at := func(tokens ...any) []string { return ptr(append(append([]any{}, prefix...), tokens...)...) }
	if len(list) > jgMaxLessons {
		c.report("jg.lessons.max-entries", d, at(jgMaxLessons), "lessons.yaml holds %d entries: keep at most %d and drop the oldest", len(list), jgMaxLessons)
	}
	seen := map[string]int{}
	for i, e := range list {
		l := asObj(e)
		if l == nil {
			continue
		}
		if f, ok := toInt(l["frequency"]); ok && f < 1 {
			c.report("jg.lessons.frequency-positive", d, at(i, "frequency"), "`frequency` is %d: a recorded lesson was seen at least once", f)
		}
		p, ok := str(l, "pattern")
		if !ok || blank(p) {
			continue
		}
		key := normalize(p)
		if first, dup := seen[key]; dup {
			c.report("jg.lessons.duplicate-pattern", d, at(i, "pattern"), "pattern %s is already recorded (entry %d): raise that entry's `frequency` instead of repeating it", display(p), first+1)
			continue
		}
		seen[key] = i
	}
}

// jgStatus records where an active issue folder stands and the decisions that
// count for the gate (see the comment at the top of this file).
func jgStatus(c *ruleCtx, is *jgIssue) {
	st := Status{Family: "jg", Unit: jgUnit(is.key)}
	workerStatus := jgWorkerDecision(&st, is)
	testVerdict := jgTestDecision(&st, is)
	reviewVerdict := jgReviewDecision(&st, is)
	stateStatus := jgStateDecision(&st, is)

	stage, result := jgStage(is, workerStatus, testVerdict, reviewVerdict, stateStatus)
	st.State = "stage " + cmp.Or(stage, "—")
	if result != "" {
		st.State += ", " + result
	}
	if workerStatus == "blocked" && stage != "implement" {
		st.State += " (worker blocked)"
	}
	if stateStatus == "failed" || stateStatus == "paused" {
		st.State += " (state " + stateStatus + ")"
	}
	c.status(st)
}

// jgUnit names an issue folder in the status: "JG <issue>", or
// "JG <project>/<issue>" for a .pipeline below the root.
func jgUnit(key string) string {
	segs := strings.Split(key, "/")
	if n := len(segs); n >= 2 && segs[n-2] == ".pipeline" {
		return "JG " + strings.Join(append(slices.Clone(segs[:n-2]), segs[n-1]), "/")
	}
	return "JG " + key
}

func jgDecide(st *Status, d *artifact.Document, field, effect, reason string) {
	st.Decisions = append(st.Decisions, Decision{File: d.Path, Line: d.Locate(ptr(field)).Line, Effect: effect, Reason: reason})
}

// jgWorkerDecision decides on the current worker result (blocked holds,
// escalate is advisory) and returns its status.
func jgWorkerDecision(st *Status, is *jgIssue) string {
	w := asObj(valueOf(is.worker)) // nil without one: no status, no decision
	workerStatus := strOr(w, "status")
	blockers, _ := stringList(w, "blockers")
	why := ""
	if len(blockers) > 0 {
		why = ": " + strings.Join(blockers, "; ")
	}
	switch workerStatus {
	case "blocked":
		jgDecide(st, is.worker, "status", "HOLD", "worker blocked"+why)
	case "escalate":
		tier := cmp.Or(strOr(w, "tier_used"), jgVariant(is.worker))
		if tier != "" {
			tier = " from the " + tier + " tier"
		}
		jgDecide(st, is.worker, "status", "ADVISORY", "worker escalated"+tier+why+" (no higher-tier result committed yet)")
	}
	return workerStatus
}

// jgTestDecision decides on the current test result (FAIL holds, with the
// failed checks and the debugger's diagnosis; PASS ships; SKIP is advisory)
// and returns its verdict.
func jgTestDecision(st *Status, is *jgIssue) string {
	t := asObj(valueOf(is.test)) // nil without one: no verdict, no decision
	testVerdict := strOr(t, "verdict")
	switch testVerdict {
	case "FAIL":
		failed := jgFailed(asObj(t["phase_1"]))
		if p2, ok := t["phase_2"].(map[string]any); ok {
			f2, _ := jgPhase2Failed(p2)
			failed = append(failed, f2...)
		}
		reason := "tester FAIL"
		if len(failed) > 0 {
			reason += ": " + strings.Join(failed, ", ") + " failed"
		}
		if dg := asObj(valueOf(is.debug)); dg != nil {
			if class, ok := str(dg, "classification"); ok {
				reason += "; debugger: " + class
				if sub, ok := str(dg, "escalation_sub"); ok {
					reason += " (" + sub + ")"
				}
			}
		}
		jgDecide(st, is.test, "verdict", "HOLD", reason)
	case "PASS":
		jgDecide(st, is.test, "verdict", "SHIP", "tester PASS")
	case "SKIP":
		jgDecide(st, is.test, "verdict", "ADVISORY", "tester SKIP: the checks were not run")
	}
	return testVerdict
}

// jgReviewDecision decides on the current review result (FAIL holds, PASS
// ships, SKIP is advisory) and returns its verdict.
func jgReviewDecision(st *Status, is *jgIssue) string {
	r := asObj(valueOf(is.review)) // nil without one: no verdict, no decision
	reviewVerdict := strOr(r, "verdict")
	blockers, concerns := len(asList(r["blockers"])), len(asList(r["concerns"]))
	switch reviewVerdict {
	case "FAIL":
		var found []string
		if blockers > 0 {
			found = append(found, countWord(blockers, "blocker", "blockers"))
		}
		if concerns > 0 {
			found = append(found, countWord(concerns, "concern", "concerns"))
		}
		jgDecide(st, is.review, "verdict", "HOLD", because("reviewer FAIL", cmp.Or(strings.Join(found, ", "), strOr(r, "trim_instructions"))))
	case "PASS":
		reason := "reviewer PASS"
		if concerns > 0 {
			reason += " with " + countWord(concerns, "concern", "concerns")
		}
		jgDecide(st, is.review, "verdict", "SHIP", reason)
	case "SKIP":
		jgDecide(st, is.review, "verdict", "ADVISORY", "reviewer SKIP: the change was not reviewed")
	}
	return reviewVerdict
}

// jgStateDecision decides on state.yaml (failed holds) and returns its
// status.
func jgStateDecision(st *Status, is *jgIssue) string {
	s := asObj(valueOf(is.state)) // nil without one: no status, no decision
	stateStatus := strOr(s, "status")
	if stateStatus == "failed" {
		jgDecide(st, is.state, "status", "HOLD", because("planner state failed", strOr(s, "running_summary")))
	}
	return stateStatus
}

// jgStage is the stage the folder stands at, and its result there: a failed
// test holds the pipeline at test (or at debug once diagnosed); otherwise
// the furthest artifact of plan → implement → test → review → git (a debug
// diagnosis only counts while no test result follows it). The stage is ""
// when no artifact says.
func jgStage(is *jgIssue, workerStatus, testVerdict, reviewVerdict, stateStatus string) (stage, result string) {
	switch {
	case testVerdict == "FAIL" && is.debug != nil:
		stage, result = "debug", strOr(asObj(is.debug.Value), "classification")
	case testVerdict == "FAIL":
		stage, result = "test", "FAIL"
	case is.git != nil:
		g := asObj(is.git.Value)
		stage = "git"
		if n, ok := toInt(g["pr_number"]); ok {
			result = fmt.Sprintf("PR #%d", n)
		} else if sha, ok := str(g, "commit_sha"); ok && !blank(sha) {
			result = "committed " + sha
		}
	case is.review != nil:
		stage, result = "review", reviewVerdict
	case is.test != nil:
		// A test result that did not fail follows any debug round.
		stage, result = "test", testVerdict
	case is.debug != nil:
		stage, result = "debug", strOr(asObj(is.debug.Value), "classification")
	case is.worker != nil:
		stage, result = "implement", workerStatus
	case is.plan != nil:
		stage = "plan"
		if n := len(asList(asObj(is.plan.Value)["steps"])); n > 0 {
			result = countWord(n, "step", "steps")
		}
	case is.state != nil:
		stage, result = strOr(asObj(is.state.Value), "current_stage"), stateStatus
	}
	return stage, result
}
