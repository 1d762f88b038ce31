package check

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/phasegate/phasegate/internal/artifact"
)

// SCC rules (docs/contracts/scc.md, docs/rules.md). A group is one task folder
// artifacts/<task_id>/ — its submit.json, verdict.json and task input(s)
// (task.json, *.task.json) — or a submit/verdict classified by content
// elsewhere, alone.
//
// Paths inside a submit (artifacts.*, changed_files, new_files) are
// repository-relative. They are resolved against the directory holding the
// submit's artifacts/ folder (for artifacts/<id>/submit.json, the checked
// root; for x/artifacts/<id>/submit.json, x/), and against the checked root
// for a submit found by content elsewhere.
//
// Evidence files that are not artifacts (report.md, selftest.log,
// patch.diff, evidence/) are read through the group's tree accessor
// (Group.ReadFile and Group.Exists). Without one — when a single
// file is checked, or the tree cannot see the submit itself — the rules that
// need those files are skipped silently.
//
// Status ("latest" for SCC): one Status per task folder, from the folder's
// current artifacts (upstream overwrites submit.json and verdict.json on each
// attempt, so the folder holds the latest attempt). Unit "SCC <task_id>"
// (the submit's task_id, else the verdict's, else the folder name); State
// e.g. "submit DONE, verdict DONE". The decision that counts for the gate:
//
//   - With a verdict, the verdict decides: DONE → SHIP;
//     ESCALATE and REJECT → HOLD; RETRY → ADVISORY: the task is not done,
//     but nothing was escalated or rejected — the judge scheduled another
//     attempt — and only REJECT and ESCALATE hold the gate, so a
//     retry annotates without blocking.
//   - Without a verdict (the judge has not run yet), the submit decides as
//     the judge deterministically would (verifier_judge), so that the gate
//     does not depend on whether the judge's file is committed yet:
//     NEED_INPUT → HOLD (the judge escalates every NEED_INPUT; the task waits
//     for a person); FAILED → ADVISORY (the judge retries), but HOLD when
//     reason_code is a scope conflict or an escalation fast-track
//     (SCOPE_CONFLICT, POLICY_VIOLATION, PINS_INSUFFICIENT, BUDGET_EXCEEDED,
//     CONSTITUTION_VIOLATION — norms/contracts/escalation.md); DONE → SHIP:
//     the rule layer has checked the judge's own DONE conditions (status,
//     exit_code 0, tests passed, hygiene, scope), and any violation is an
//     error finding that holds anyway.
//   - A folder with only a task input records its state and no decision.

var _ = registerFamily(&family{
	name:  "scc",
	check: checkSCC,
	rules: []Rule{
		// submit.json on its own.
		{ID: "scc.submit.task-id-nonblank", Severity: SeverityError, Basis: "R", Summary: "`task_id` is not blank after trimming (contract_validator.validate_submit_v1)."},
		{ID: "scc.submit.task-id-uuid", Severity: SeverityError, Basis: "R", Summary: "`task_id` is a UUID — only when scc.require_uuid_task_id is set (the L8 doc's MUST; upstream's own examples use \"example-task-id\")."},
		{ID: "scc.submit.task-id-matches-dir", Severity: SeverityWarning, Basis: "R", Summary: "A submit at artifacts/<dir>/submit.json has `task_id` == <dir> (the judge writes the verdict to artifacts/<task_id>/)."},
		{ID: "scc.submit.need-input-has-questions", Severity: SeverityError, Basis: "S", Summary: "`status: NEED_INPUT` lists at least one non-blank entry in `needs_input`."},
		{ID: "scc.submit.needs-input-empty", Severity: SeverityWarning, Basis: "I", Summary: "`needs_input` is [] unless `status` is NEED_INPUT."},
		{ID: "scc.submit.done-needs-exit-0", Severity: SeverityError, Basis: "R", Summary: "`status: DONE` has `exit_code: 0`."},
		{ID: "scc.submit.done-needs-tests-passed", Severity: SeverityError, Basis: "R", Summary: "`status: DONE` has `tests.passed: true`."},
		{ID: "scc.submit.done-needs-tests", Severity: SeverityError, Basis: "R", Summary: "`status: DONE` lists the test commands run in `tests.commands` (fail code ci_skipped)."},
		{ID: "scc.submit.tests-failed-status", Severity: SeverityWarning, Basis: "R", Summary: "A FAILED submit with `tests.passed: false` has `reason_code: CI_FAILED` (the L8 doc's SHOULD)."},
		{ID: "scc.submit.failed-has-reason", Severity: SeverityWarning, Basis: "I", Summary: "`status: FAILED` gives a `reason_code`."},
		{ID: "scc.submit.exit-0-not-failed", Severity: SeverityWarning, Basis: "I", Summary: "`exit_code: 0` is not reported with `status: FAILED`."},
		{ID: "scc.submit.artifact-under-task", Severity: SeverityError, Basis: "R", Summary: "Every `artifacts.*` path is under artifacts/<task_id>/ and stays there (hygiene_validator)."},
		{ID: "scc.submit.artifact-exists", Severity: SeverityWarning, Basis: "R", Summary: "Every `artifacts.*` path exists in the checked tree (the L8 doc's MUST; a warning because upstream's own example names files it does not ship)."},
		{ID: "scc.submit.evidence-readable", Severity: SeverityWarning, Basis: "I", Summary: "The report.md, selftest.log and patch.diff that `artifacts.*` names can be read, so the rules on their content run (an unreadable or oversized file is reported, not skipped)."},
		{ID: "scc.submit.submit-json-path", Severity: SeverityWarning, Basis: "I", Summary: "`artifacts.submit_json` is the path of the submit file itself."},
		{ID: "scc.submit.write-allowed", Severity: SeverityError, Basis: "R", Summary: "With a non-empty `allow_paths.write`, every changed or new file is under one of its prefixes (hygiene_validator)."},
		{ID: "scc.submit.hygiene", Severity: SeverityError, Basis: "R", Summary: "No changed or new file outside artifacts/ is in a tmp/ or debug/ directory or ends in .bak (hygiene_validator)."},
		{ID: "scc.submit.changed-new-disjoint", Severity: SeverityWarning, Basis: "I", Summary: "No path is in both `changed_files` and `new_files`."},
		{ID: "scc.submit.report-nonempty", Severity: SeverityError, Basis: "R", Summary: "The report.md that `artifacts.report_md` names is not empty (L8 evidence spec)."},
		{ID: "scc.submit.selftest-exit-line", Severity: SeverityError, Basis: "R", Summary: "The selftest.log that `artifacts.selftest_log` names ends with a line EXIT_CODE=<int> (L8 evidence spec)."},
		{ID: "scc.submit.selftest-exit-matches", Severity: SeverityWarning, Basis: "I", Summary: "The selftest.log's final EXIT_CODE equals `exit_code`."},
		{ID: "scc.submit.patch-parseable", Severity: SeverityError, Basis: "R", Summary: "A non-empty patch.diff (`artifacts.patch_diff`) is a unified diff: it names the files it changes (L8 evidence spec)."},
		{ID: "scc.submit.patch-in-files", Severity: SeverityError, Basis: "R", Summary: "Every file patch.diff changes is listed in `changed_files` or `new_files` (L8: they MUST match the actual diff scope)."},
		{ID: "scc.submit.files-in-patch", Severity: SeverityWarning, Basis: "R", Summary: "Every file in `changed_files` and `new_files` appears in patch.diff (L8: the diff SHOULD include them)."},
		// submit.json against the task input in the same folder.
		{ID: "scc.submit.task-id-matches-task", Severity: SeverityError, Basis: "S", Summary: "The submit's `task_id` equals the `task_id` of the task input in the same folder."},
		{ID: "scc.submit.scope-conflict", Severity: SeverityError, Basis: "S", Summary: "Every changed or new file matches the task's `pins.allowed_paths` and no `pins.forbidden_paths` (else SCOPE_CONFLICT)."},
		{ID: "scc.submit.done-ran-allowed-tests", Severity: SeverityWarning, Basis: "R", Summary: "A DONE submit ran every command of the task's `allowedTests` (policies/hard.md; a warning because commands are compared as text)."},
		// verdict.json, both shapes.
		{ID: "scc.verdict.task-id-matches-submit", Severity: SeverityWarning, Basis: "R", Summary: "The verdict's `task_id` equals the submit's `task_id` (verifier_judge copies it; a warning because no upstream validator compares them)."},
		{ID: "scc.verdict.task-id-matches-dir", Severity: SeverityWarning, Basis: "R", Summary: "A verdict at artifacts/<dir>/verdict.json has `task_id` == <dir> (where the judge writes it)."},
		{ID: "scc.verdict.done-needs-submit-done", Severity: SeverityError, Basis: "R", Summary: "A DONE verdict judges a submit with `status: DONE`, `exit_code: 0` and `tests.passed: true` (verifier_judge)."},
		{ID: "scc.verdict.need-input-escalates", Severity: SeverityError, Basis: "R", Summary: "A NEED_INPUT submit gets an ESCALATE verdict — with a `needs_input` action in scc.verdict.v1 (verifier_judge); the seed shape may also REJECT."},
		{ID: "scc.verdict.done-iff-checks", Severity: SeverityError, Basis: "S", Summary: "Seed shape: the verdict is DONE exactly when all five `checks` are true (a non-DONE submit may be judged otherwise)."},
		{ID: "scc.verdict.reject-on-policy", Severity: SeverityError, Basis: "S", Summary: "Seed shape: `checks.scope_clean: false` or `checks.schema_valid: false` means REJECT."},
		{ID: "scc.verdict.retry-needs-failed-tests", Severity: SeverityError, Basis: "S", Summary: "Seed shape: RETRY only with `checks.tests_passed: false`."},
		{ID: "scc.verdict.next-action", Severity: SeverityWarning, Basis: "I", Summary: "Seed shape: `next_action` fits the verdict — DONE→none, RETRY→retry, ESCALATE→model_upgrade|role_escalation|human, REJECT→human|dlq."},
		// Task input.
		{ID: "scc.task.task-id-uuid", Severity: SeverityError, Basis: "R", Summary: "A task input's `task_id` is a UUID — only when scc.require_uuid_task_id is set."},
		{ID: "scc.task.pins-disjoint", Severity: SeverityError, Basis: "R", Summary: "No path is in both `pins.allowed_paths` and `pins.forbidden_paths` (L8 doc)."},
		{ID: "scc.task.files-allowed", Severity: SeverityWarning, Basis: "R", Summary: "Every target in `files` matches `pins.allowed_paths` and no `pins.forbidden_paths` (the L8 doc's SHOULD)."},
		{ID: "scc.task.executor-known", Severity: SeverityWarning, Basis: "R", Summary: "Every `allowedExecutors` entry is in scc.executors (default codex, opencodecli; a warning because upstream renames executors)."},
		{ID: "scc.task.role-known", Severity: SeverityWarning, Basis: "I", Summary: "`role` is in scc.roles, when that list is configured (upstream's registry has 27 roles, the seed 7)."},
		{ID: "scc.task.timeout-positive", Severity: SeverityWarning, Basis: "I", Summary: "`timeoutMs` is more than 0."},
	},
})

// sccTreeOf is the group whose tree the evidence rules read (Group.ReadFile,
// Group.Exists), or nil to skip them; a variable so that a test can take
// the tree away.
var sccTreeOf = func(g *Group) *Group { return g }

var (
	sccUUID      = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	sccExitLine  = regexp.MustCompile(`^EXIT_CODE=(-?[0-9]+)$`)
	sccHygieneRE = regexp.MustCompile(`(^|/)(tmp|debug)/|\.bak$`)
	sccGitHeader = regexp.MustCompile(`^diff --git "?a/(.*?)"? "?b/(.*?)"?\s*$`)
)

// sccDefaultExecutors is child_task.schema.json's allowedExecutors enum.
var sccDefaultExecutors = []string{"codex", "opencodecli"}

// sccEscalatingReasons are the reason codes a FAILED submit escalates on
// (the judge escalates scope violations; escalation.md fast-tracks the rest
// to a human or the dead-letter queue).
var sccEscalatingReasons = map[string]bool{"SCOPE_CONFLICT": true, "POLICY_VIOLATION": true, "PINS_INSUFFICIENT": true, "BUDGET_EXCEEDED": true, "CONSTITUTION_VIOLATION": true}

// sccPath is one changed or new file of a submit, with where it is listed.
type sccPath struct {
	raw, norm string
	field     string // changed_files or new_files
	index     int
}

func (p sccPath) at() []string { return ptr(p.field, p.index) }

// sccSubmit is what the rules read from a submit.json.
type sccSubmit struct {
	doc       *artifact.Document
	obj       map[string]any
	rel       string // root-relative path of the file
	base      string // root-relative directory repository paths resolve against ("" or "x/")
	dir       string // the task folder name, when the file is artifacts/<dir>/submit.json
	taskID    string
	hasTaskID bool
	status    string
	reason    string
	hasReason bool
	exit      int64
	hasExit   bool
	passed    bool
	hasPassed bool
	commands  []string
	hasCmds   bool
	paths     []sccPath // changed_files then new_files
}

func checkSCC(c *ruleCtx, g *Group) {
	submitDoc, verdictDoc := g.One("scc.submit"), g.One("scc.verdict")
	tasks := g.Of("scc.task")
	for _, t := range tasks {
		sccCheckTask(c, t)
	}
	task := sccPickTask(tasks)
	var s *sccSubmit
	if submitDoc != nil {
		s = sccReadSubmit(c, submitDoc)
		tree := sccTreeOf(g)
		if tree != nil && !tree.Exists(s.rel) {
			tree = nil // the accessor cannot see this tree (a single file is checked)
		}
		sccCheckSubmit(c, s)
		sccCheckArtifacts(c, s, tree)
		sccCheckAgainstTask(c, s, task)
	}
	sccCheckVerdict(c, verdictDoc, s)
	sccStatus(c, g, s, verdictDoc, task)
}

// sccTaskDir returns the base (the directory holding artifacts/, with a
// trailing slash, or "") and the task folder name of a file at
// <base>artifacts/<dir>/<name>; ok is false elsewhere.
func sccTaskDir(rel string) (base, dir string, ok bool) {
	segs := strings.Split(rel, "/")
	n := len(segs)
	if n < 3 || segs[n-3] != "artifacts" {
		return "", "", false
	}
	if n > 3 {
		base = strings.Join(segs[:n-3], "/") + "/"
	}
	return base, segs[n-2], true
}

// sccNorm normalises an agent-written repository path as upstream's
// norm_rel does: '/' separators, no leading "./" or "/".
func sccNorm(p string) string {
	p = strings.ReplaceAll(strings.TrimSpace(p), `\`, "/")
	for {
		switch {
		case strings.HasPrefix(p, "./"):
			p = p[2:]
		case strings.HasPrefix(p, "/"):
			p = p[1:]
		default:
			return p
		}
	}
}

func sccReadSubmit(c *ruleCtx, d *artifact.Document) *sccSubmit {
	s := &sccSubmit{doc: d, obj: asObj(d.Value), rel: strings.TrimPrefix(d.Path, c.opts.Prefix)}
	s.base, s.dir, _ = sccTaskDir(s.rel)
	if s.obj == nil {
		return s
	}
	s.taskID, s.hasTaskID = str(s.obj, "task_id")
	switch st := strOr(s.obj, "status"); st {
	case "DONE", "NEED_INPUT", "FAILED":
		s.status = st // anything else is a schema finding, and no status for the rules
	}
	s.reason, s.hasReason = str(s.obj, "reason_code")
	s.exit, s.hasExit = toInt(s.obj["exit_code"])
	tests := asObj(s.obj["tests"])
	s.passed, s.hasPassed = boolean(tests, "passed")
	s.commands, s.hasCmds = stringList(tests, "commands")
	for _, field := range []string{"changed_files", "new_files"} {
		for i, e := range asList(s.obj[field]) {
			if p, ok := e.(string); ok && !blank(p) {
				s.paths = append(s.paths, sccPath{raw: p, norm: path.Clean(sccNorm(p)), field: field, index: i})
			}
		}
	}
	return s
}

// sccCheckSubmit checks a submit.json on its own: its task_id, its status
// against the rest of the report, and its changed and new files.
func sccCheckSubmit(c *ruleCtx, s *sccSubmit) {
	if s.obj == nil {
		return
	}
	sccCheckSubmitTaskID(c, s)
	sccCheckSubmitStatus(c, s)
	sccCheckSubmitPaths(c, s)
}

// sccCheckSubmitTaskID checks that task_id is non-blank, a UUID when the
// config requires one, and the name of the task folder.
func sccCheckSubmitTaskID(c *ruleCtx, s *sccSubmit) {
	if !s.hasTaskID {
		return
	}
	d := s.doc
	switch {
	case blank(s.taskID):
		c.report("scc.submit.task-id-nonblank", d, ptr("task_id"), "`task_id` is blank: echo the task input's task_id")
	case c.opts.Config.SCC.RequireUUIDTaskID && !sccUUID.MatchString(strings.TrimSpace(s.taskID)):
		c.report("scc.submit.task-id-uuid", d, ptr("task_id"), "`task_id` %s is not a UUID, and scc.require_uuid_task_id is set: use the task's UUID", display(s.taskID))
	}
	if s.dir != "" && !blank(s.taskID) && strings.TrimSpace(s.taskID) != s.dir {
		c.report("scc.submit.task-id-matches-dir", d, ptr("task_id"), "`task_id` is %s but the file is in artifacts/%s/: the judge reads and writes artifacts/<task_id>/ — move the folder or correct `task_id`", display(s.taskID), s.dir)
	}
}

// sccCheckSubmitStatus checks the status against needs_input, and what
// DONE and FAILED require of the exit code, the tests and the reason code.
func sccCheckSubmitStatus(c *ruleCtx, s *sccSubmit) {
	d := s.doc
	needs, hasNeeds := stringList(s.obj, "needs_input")
	nonBlank := len(slices.DeleteFunc(needs, blank))
	switch {
	case s.status == "NEED_INPUT" && hasNeeds && nonBlank == 0:
		c.report("scc.submit.need-input-has-questions", d, ptr("needs_input"), "status is NEED_INPUT but `needs_input` lists nothing: write each question or missing input the task is blocked on")
	case s.status != "NEED_INPUT" && s.status != "" && nonBlank > 0:
		c.report("scc.submit.needs-input-empty", d, ptr("needs_input"), "status is %s but `needs_input` lists %s: report NEED_INPUT if the task is blocked, or write []", s.status, countWord(nonBlank, "entry", "entries"))
	}
	if s.status == "DONE" {
		if s.hasExit && s.exit != 0 {
			c.report("scc.submit.done-needs-exit-0", d, ptr("exit_code"), "status is DONE but `exit_code` is %d: DONE needs exit code 0 — fix the failure, or report FAILED", s.exit)
		}
		if s.hasPassed && !s.passed {
			c.report("scc.submit.done-needs-tests-passed", d, ptr("tests", "passed"), "status is DONE but `tests.passed` is false: DONE needs passing tests — fix them, or report FAILED with reason_code CI_FAILED")
		}
		if s.hasCmds && !slices.ContainsFunc(s.commands, filled) {
			c.report("scc.submit.done-needs-tests", d, ptr("tests", "commands"), "status is DONE but `tests.commands` is empty: run the task's tests and list each command (an empty list is fail code ci_skipped)")
		}
	}
	if s.status == "FAILED" {
		switch {
		case blank(s.reason):
			at := ptr("reason_code")
			if !s.hasReason {
				at = ptr("status")
			}
			c.report("scc.submit.failed-has-reason", d, at, "status is FAILED without a `reason_code`: give the fail code (e.g. CI_FAILED, SCOPE_CONFLICT, PINS_INSUFFICIENT) so the failure can be routed")
		case s.hasPassed && !s.passed && !strings.EqualFold(strings.TrimSpace(s.reason), "CI_FAILED"):
			c.report("scc.submit.tests-failed-status", d, ptr("reason_code"), "`tests.passed` is false but `reason_code` is %s: the L8 doc says failing tests are reported as CI_FAILED (keep %s only if it is the primary cause)", display(s.reason), display(s.reason))
		}
		if s.hasExit && s.exit == 0 {
			c.report("scc.submit.exit-0-not-failed", d, ptr("exit_code"), "status is FAILED but `exit_code` is 0: a failed attempt exits non-zero — set the real exit code, or report DONE")
		}
	}
}

// sccCheckSubmitPaths checks the changed and new files: no file in both,
// each under allow_paths.write, and no scratch file.
func sccCheckSubmitPaths(c *ruleCtx, s *sccSubmit) {
	d := s.doc
	seen := map[string]sccPath{}
	for _, p := range s.paths {
		if p.field == "changed_files" {
			seen[p.norm] = p
		}
	}
	for _, p := range s.paths {
		if first, dup := seen[p.norm]; dup && p.field == "new_files" {
			c.report("scc.submit.changed-new-disjoint", d, p.at(), "%s is in `new_files` and also `changed_files[%d]`: list a created file only in new_files, a modified one only in changed_files", display(p.raw), first.index)
		}
	}
	writes, _ := stringList(asObj(s.obj["allow_paths"]), "write")
	writes = slices.DeleteFunc(writes, blank)
	for _, p := range s.paths {
		if len(writes) > 0 && !sccUnderAnyPrefix(p.norm, writes) {
			c.report("scc.submit.write-allowed", d, p.at(), "%s is outside `allow_paths.write` (%s): the executor may only write under those prefixes", display(p.raw), listOrNone(writes))
		}
		if !strings.HasPrefix(p.norm, "artifacts/") && sccHygieneRE.MatchString(p.norm) {
			c.report("scc.submit.hygiene", d, p.at(), "%s is a scratch file (a tmp/ or debug/ directory, or a .bak file): remove it from the change, or keep such files under artifacts/", display(p.raw))
		}
	}
}

// sccUnderAnyPrefix: upstream compares write paths as string prefixes; a
// glob is accepted too (e.g. "**").
func sccUnderAnyPrefix(p string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(w string) bool { return strings.HasPrefix(p, sccNorm(w)) || sccGlobMatch(p, w) })
}

// sccGlobMatch matches a repository path against a pin: the path itself, a
// directory prefix ("src/auth/" or "src/auth" cover everything below), or a
// doublestar glob ("src/**/*.go"; a glob also covers what is below a
// directory it matches). An invalid glob matches only literally.
func sccGlobMatch(p, pattern string) bool {
	pat := strings.TrimSuffix(sccNorm(pattern), "/")
	if pat == "" {
		return false
	}
	if p == pat || strings.HasPrefix(p, pat+"/") {
		return true
	}
	if ok, err := doublestar.Match(pat, p); err == nil && ok {
		return true
	}
	ok, err := doublestar.Match(pat+"/**", p)
	return err == nil && ok
}

func sccMatchAny(p string, patterns []string) (string, bool) {
	for _, pat := range patterns {
		if sccGlobMatch(p, pat) {
			return pat, true
		}
	}
	return "", false
}

var sccArtifactKeys = []string{"report_md", "selftest_log", "evidence_dir", "patch_diff", "submit_json"}

// sccCheckArtifacts checks the artifacts.* paths and, with a tree, the
// evidence files they name.
func sccCheckArtifacts(c *ruleCtx, s *sccSubmit, tree *Group) {
	d := s.doc
	arts := asObj(s.obj["artifacts"])
	if arts == nil {
		return
	}
	id := strings.TrimSpace(s.taskID)
	misplaced := map[string]bool{} // reported under artifact-under-task: nothing more about them
	for _, key := range sccArtifactKeys {
		raw, ok := str(arts, key)
		if !ok || blank(raw) {
			continue // the schema reports a missing or empty path
		}
		norm := sccNorm(raw)
		if id != "" {
			want := "artifacts/" + id + "/"
			clean := path.Clean(norm)
			if (!strings.HasPrefix(norm, want) || !strings.HasPrefix(clean+"/", want)) && c.severity("scc.submit.artifact-under-task") != SeverityOff {
				// The root cause, reported once: hygiene_validator stops at
				// it for this key (`continue`), so a placeholder path is not
				// also "missing" and "not this file".
				c.report("scc.submit.artifact-under-task", d, ptr("artifacts", key), "`artifacts.%s` is %s, not under %s: every evidence file belongs in the task's folder", key, display(raw), want)
				misplaced[key] = true
				continue
			}
		}
		if key == "submit_json" && path.Clean(norm) != strings.TrimPrefix(s.rel, s.base) {
			c.report("scc.submit.submit-json-path", d, ptr("artifacts", key), "`artifacts.submit_json` is %s but this file is %s: name the submit's own path", display(raw), strings.TrimPrefix(s.rel, s.base))
		}
		if tree != nil && !tree.Exists(s.base+path.Clean(norm)) {
			where := "which is not in the tree"
			if s.base != "" {
				where = "which is not in the tree (looked for " + c.opts.Prefix + s.base + path.Clean(norm) + ")"
			}
			c.report("scc.submit.artifact-exists", d, ptr("artifacts", key), "`artifacts.%s` names %s, %s: commit it or correct the path (the L8 evidence spec requires every artifacts.* path to exist)", key, display(raw), where)
		}
	}
	if tree == nil {
		return
	}
	read := func(key string) ([]byte, bool) {
		raw, ok := str(arts, key)
		if !ok || blank(raw) || misplaced[key] {
			return nil, false
		}
		rel := s.base + path.Clean(sccNorm(raw))
		data, err := tree.ReadFile(rel)
		if err != nil && tree.Exists(rel) { // one that is not there is artifact-exists's
			c.report("scc.submit.evidence-readable", d, ptr("artifacts", key), "%s could not be read (%v): the rules on its content were not applied", display(raw), err)
		}
		return data, err == nil
	}
	if data, ok := read("report_md"); ok && blank(string(data)) {
		c.report("scc.submit.report-nonempty", d, ptr("artifacts", "report_md"), "%s is empty: the report lists the goal, the key decisions and the changed files", display(strOr(arts, "report_md")))
	}
	if data, ok := read("selftest_log"); ok {
		sccCheckSelftest(c, s, strOr(arts, "selftest_log"), string(data))
	}
	if data, ok := read("patch_diff"); ok {
		sccCheckPatch(c, s, strOr(arts, "patch_diff"), string(data))
	}
}

func sccCheckSelftest(c *ruleCtx, s *sccSubmit, name, log string) {
	lines := strings.Split(strings.TrimSpace(log), "\n")
	last := strings.TrimSpace(lines[len(lines)-1]) // the last non-blank line
	m := sccExitLine.FindStringSubmatch(last)
	if m == nil {
		shown := "nothing"
		if last != "" {
			shown = display(last)
		}
		c.report("scc.submit.selftest-exit-line", s.doc, ptr("artifacts", "selftest_log"), "%s ends with %s, not a line EXIT_CODE=<n>: end the log with the selftest's exit code", display(name), shown)
		return
	}
	if s.hasExit && m[1] != fmt.Sprint(s.exit) {
		c.report("scc.submit.selftest-exit-matches", s.doc, ptr("exit_code"), "`exit_code` is %d but %s ends with EXIT_CODE=%s: report the selftest's exit code", s.exit, display(name), m[1])
	}
}

// sccPatchFiles lists the files a unified diff changes, as upstream's
// unified_diff_guard does: the a/ and b/ paths of "diff --git" headers, else
// the ---/+++ pairs. ok is false when the text has neither.
func sccPatchFiles(diff string) (files map[string]bool, ok bool) {
	files = map[string]bool{}
	lines := strings.Split(strings.ReplaceAll(diff, "\r\n", "\n"), "\n")
	for _, l := range lines {
		if m := sccGitHeader.FindStringSubmatch(l); m != nil {
			ok = true
			for _, p := range m[1:] {
				if p = path.Clean(sccNorm(p)); p != "." && p != "dev/null" {
					files[p] = true
				}
			}
		}
	}
	if ok {
		return files, true
	}
	for i := 0; i+1 < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "--- ") || !strings.HasPrefix(lines[i+1], "+++ ") {
			continue
		}
		ok = true
		for _, side := range []struct{ text, prefix string }{{lines[i][4:], "a/"}, {lines[i+1][4:], "b/"}} {
			p := strings.TrimSpace(side.text)
			if tab := strings.IndexByte(p, '\t'); tab >= 0 {
				p = p[:tab] // a timestamp follows
			}
			if p == "/dev/null" {
				continue
			}
			p = strings.TrimPrefix(strings.Trim(p, `"`), side.prefix)
			if p = path.Clean(sccNorm(p)); p != "." {
				files[p] = true
			}
		}
	}
	return files, ok
}

func sccCheckPatch(c *ruleCtx, s *sccSubmit, name, diff string) {
	d := s.doc
	if blank(diff) {
		for _, p := range s.paths {
			c.report("scc.submit.files-in-patch", d, p.at(), "%s is listed but %s is empty: the patch should carry every change the submit reports", display(p.raw), display(name))
		}
		return
	}
	files, ok := sccPatchFiles(diff)
	if !ok {
		c.report("scc.submit.patch-parseable", d, ptr("artifacts", "patch_diff"), "%s is not a unified diff (no \"diff --git\" header and no ---/+++ pair): write the change as `git diff` prints it", display(name))
		return
	}
	listed := map[string]bool{}
	for _, p := range s.paths {
		listed[p.norm] = true
		if !files[p.norm] {
			c.report("scc.submit.files-in-patch", d, p.at(), "%s is listed but %s does not change it: list only files the patch changes, or regenerate the patch", display(p.raw), display(name))
		}
	}
	if extra := slices.DeleteFunc(slices.Sorted(maps.Keys(files)), func(f string) bool { return listed[f] }); len(extra) > 0 {
		at := ptr("changed_files")
		if _, has := s.obj["changed_files"]; !has {
			at = nil
		}
		c.report("scc.submit.patch-in-files", d, at, "%s changes %s, which `changed_files`/`new_files` do not list: list every file the patch changes (the judge compares them)", display(name), listOrNone(extra))
	}
}

// sccPickTask is the task input the submit answers: task.json, else the
// folder's only task input.
func sccPickTask(tasks []*artifact.Document) *artifact.Document {
	if i := slices.IndexFunc(tasks, func(t *artifact.Document) bool { return path.Base(t.Path) == "task.json" }); i >= 0 {
		return tasks[i]
	}
	if len(tasks) == 1 {
		return tasks[0]
	}
	return nil
}

// sccPins returns a task's allowed and forbidden paths (pins plus
// pins_instance additions).
func sccPins(obj map[string]any) (allowed, forbidden []string) {
	pins, inst := asObj(obj["pins"]), asObj(obj["pins_instance"])
	add := func(dst []string, m map[string]any, k string) []string {
		l, _ := stringList(m, k)
		return append(dst, slices.DeleteFunc(l, blank)...)
	}
	allowed = add(add(nil, pins, "allowed_paths"), inst, "allowed_paths_add")
	forbidden = add(add(nil, pins, "forbidden_paths"), inst, "forbidden_paths_add")
	return allowed, forbidden
}

func sccCheckTask(c *ruleCtx, d *artifact.Document) {
	obj := asObj(d.Value)
	if obj == nil {
		return
	}
	if id, ok := str(obj, "task_id"); ok && !blank(id) && c.opts.Config.SCC.RequireUUIDTaskID && !sccUUID.MatchString(strings.TrimSpace(id)) {
		c.report("scc.task.task-id-uuid", d, ptr("task_id"), "`task_id` %s is not a UUID, and scc.require_uuid_task_id is set: give the task a UUID", display(id))
	}
	pins := asObj(obj["pins"])
	allowedList, _ := stringList(pins, "allowed_paths")
	allowed := map[string]bool{}
	for _, a := range allowedList {
		allowed[sccPinKey(a)] = true
	}
	forbiddenList := asList(pins["forbidden_paths"])
	for i, e := range forbiddenList {
		if f, ok := e.(string); ok && !blank(f) && allowed[sccPinKey(f)] {
			c.report("scc.task.pins-disjoint", d, ptr("pins", "forbidden_paths", i), "%s is both allowed and forbidden: remove it from one of `pins.allowed_paths` and `pins.forbidden_paths`", display(f))
		}
	}
	allowedAll, forbiddenAll := sccPins(obj)
	for i, e := range asList(obj["files"]) {
		f, ok := e.(string)
		if !ok || blank(f) {
			continue
		}
		p := path.Clean(sccNorm(f))
		if pat, hit := sccMatchAny(p, forbiddenAll); hit {
			c.report("scc.task.files-allowed", d, ptr("files", i), "target file %s is forbidden by %s: the executor cannot change it — fix `files` or the pins", display(f), display(pat))
		} else if len(allowedAll) > 0 {
			if _, hit := sccMatchAny(p, allowedAll); !hit {
				c.report("scc.task.files-allowed", d, ptr("files", i), "target file %s is outside `pins.allowed_paths` (%s): pin it, or drop it from `files`", display(f), listOrNone(allowedAll))
			}
		}
	}
	executors := c.opts.Config.SCC.Executors
	if len(executors) == 0 {
		executors = sccDefaultExecutors
	}
	for i, e := range asList(obj["allowedExecutors"]) {
		if x, ok := e.(string); ok && !blank(x) && !slices.Contains(executors, x) {
			c.report("scc.task.executor-known", d, ptr("allowedExecutors", i), "executor %s is not one of %s: use a known executor, or list it in scc.executors of .github/phasegate.yml", display(x), strings.Join(executors, ", "))
		}
	}
	if roles := c.opts.Config.SCC.Roles; len(roles) > 0 {
		if r, ok := str(obj, "role"); ok && !blank(r) && !slices.Contains(roles, r) {
			c.report("scc.task.role-known", d, ptr("role"), "role %s is not in scc.roles (%s): use a registered role, or add it to the config", display(r), strings.Join(roles, ", "))
		}
	}
	if t, ok := toFloat(obj["timeoutMs"]); ok && t <= 0 {
		c.report("scc.task.timeout-positive", d, ptr("timeoutMs"), "`timeoutMs` is %v: give the executor a positive time budget in milliseconds", t)
	}
}

// sccPinKey compares pins textually, ignoring "./" and a trailing slash.
func sccPinKey(p string) string { return strings.TrimSuffix(sccNorm(p), "/") }

func sccCheckAgainstTask(c *ruleCtx, s *sccSubmit, task *artifact.Document) {
	tobj := asObj(valueOf(task))
	if tobj == nil || s.obj == nil {
		return
	}
	d := s.doc
	if want, ok := str(tobj, "task_id"); ok && !blank(want) && s.hasTaskID && !blank(s.taskID) && strings.TrimSpace(want) != strings.TrimSpace(s.taskID) {
		c.report("scc.submit.task-id-matches-task", d, ptr("task_id"), "`task_id` is %s but the task input %s has task_id %s: the submit must echo the input's task_id", display(s.taskID), task.Path, display(want))
	}
	allowed, forbidden := sccPins(tobj)
	own := "artifacts/" + strings.TrimSpace(s.taskID) + "/"
	for _, p := range s.paths {
		if !blank(s.taskID) && strings.HasPrefix(p.norm, own) {
			continue // the task's own evidence, which the executor must write
		}
		if pat, hit := sccMatchAny(p.norm, forbidden); hit {
			c.report("scc.submit.scope-conflict", d, p.at(), "%s matches forbidden path %s of %s: SCOPE_CONFLICT — revert the change, or report FAILED with reason_code SCOPE_CONFLICT", display(p.raw), display(pat), task.Path)
			continue
		}
		if len(allowed) > 0 {
			if _, hit := sccMatchAny(p.norm, allowed); !hit {
				c.report("scc.submit.scope-conflict", d, p.at(), "%s is outside the pins of %s (allowed: %s): SCOPE_CONFLICT — revert the change, or ask for the path to be pinned", display(p.raw), task.Path, listOrNone(allowed))
			}
		}
	}
	if s.status == "DONE" && s.hasCmds {
		tests, _ := stringList(tobj, "allowedTests")
		ran := map[string]bool{}
		for _, cmd := range s.commands {
			ran[strings.Join(strings.Fields(cmd), " ")] = true
		}
		var missing []string
		for _, t := range tests {
			if k := strings.Join(strings.Fields(t), " "); k != "" && !ran[k] {
				missing = append(missing, t)
			}
		}
		if len(missing) > 0 {
			c.report("scc.submit.done-ran-allowed-tests", d, ptr("tests", "commands"), "status is DONE but `tests.commands` lacks %s of the task's allowedTests in %s: DONE requires running all of them", listOrNone(missing), task.Path)
		}
	}
}

// sccIsV1 reports whether a verdict is the shipped scc.verdict.v1
// (it has schema_version) rather than the seed shape — as the schema decides.
func sccIsV1(obj map[string]any) bool {
	_, ok := obj["schema_version"]
	return ok
}

func sccCheckVerdict(c *ruleCtx, d *artifact.Document, s *sccSubmit) {
	obj := asObj(valueOf(d))
	if obj == nil {
		return
	}
	v1 := sccIsV1(obj)
	verdict := strOr(obj, "verdict")
	switch verdict {
	case "DONE", "RETRY", "ESCALATE":
	case "REJECT":
		if v1 {
			verdict = "" // not in scc.verdict.v1: the schema reports it
		}
	default:
		verdict = ""
	}
	id, hasID := str(obj, "task_id")
	if hasID && !blank(id) {
		if _, dir, ok := sccTaskDir(strings.TrimPrefix(d.Path, c.opts.Prefix)); ok && strings.TrimSpace(id) != dir {
			c.report("scc.verdict.task-id-matches-dir", d, ptr("task_id"), "`task_id` is %s but the file is in artifacts/%s/: the judge writes the verdict to artifacts/<task_id>/", display(id), dir)
		}
		if s != nil && s.hasTaskID && !blank(s.taskID) && strings.TrimSpace(id) != strings.TrimSpace(s.taskID) {
			c.report("scc.verdict.task-id-matches-submit", d, ptr("task_id"), "`task_id` is %s but %s has task_id %s: a verdict judges its folder's submit", display(id), s.doc.Path, display(s.taskID))
		}
	}
	if verdict == "" {
		return
	}
	if s != nil && s.obj != nil {
		if verdict == "DONE" {
			var why []string
			if s.status != "" && s.status != "DONE" {
				why = append(why, "its status is "+s.status)
			}
			if s.hasExit && s.exit != 0 {
				why = append(why, fmt.Sprintf("its exit_code is %d", s.exit))
			}
			if s.hasPassed && !s.passed {
				why = append(why, "its tests did not pass")
			}
			if len(why) > 0 {
				c.report("scc.verdict.done-needs-submit-done", d, ptr("verdict"), "the verdict is DONE but %s: %s — the judge accepts only a DONE submit with exit code 0 and passing tests", s.doc.Path, strings.Join(why, ", "))
			}
		}
		if s.status == "NEED_INPUT" {
			switch {
			case v1 && verdict != "ESCALATE":
				c.report("scc.verdict.need-input-escalates", d, ptr("verdict"), "%s needs input (NEED_INPUT) but the verdict is %s: the judge escalates NEED_INPUT with a needs_input action", s.doc.Path, verdict)
			case v1 && !slices.ContainsFunc(asList(obj["actions"]), func(e any) bool { return strings.TrimSpace(strOr(asObj(e), "type")) == "needs_input" }):
				c.report("scc.verdict.need-input-escalates", d, ptr("actions"), "%s needs input (NEED_INPUT) but no action has type needs_input: add {\"type\": \"needs_input\"} with the questions in notes", s.doc.Path)
			case !v1 && verdict != "ESCALATE" && verdict != "REJECT":
				c.report("scc.verdict.need-input-escalates", d, ptr("verdict"), "%s needs input (NEED_INPUT) but the verdict is %s: a blocked task escalates to a person (ESCALATE, next_action human)", s.doc.Path, verdict)
			}
		}
	}
	if !v1 {
		sccCheckSeedVerdict(c, d, obj, verdict, s)
	}
}

var sccCheckNames = []string{"schema_valid", "scope_clean", "tests_passed", "artifacts_complete", "changed_files_match"}

// sccNextActions maps a seed verdict to the next actions that fit it.
var sccNextActions = map[string][]string{
	"DONE":     {"none"},
	"RETRY":    {"retry"},
	"ESCALATE": {"model_upgrade", "role_escalation", "human"},
	"REJECT":   {"human", "dlq"},
}

func sccCheckSeedVerdict(c *ruleCtx, d *artifact.Document, obj map[string]any, verdict string, s *sccSubmit) {
	checks := asObj(obj["checks"])
	if checks != nil {
		var falses []string
		trues := 0
		for _, name := range sccCheckNames {
			if b, ok := boolean(checks, name); ok {
				if b {
					trues++
				} else {
					falses = append(falses, name)
				}
			}
		}
		submitDone := s == nil || s.obj == nil || s.status == "" || s.status == "DONE"
		switch {
		case verdict == "DONE" && len(falses) > 0:
			c.report("scc.verdict.done-iff-checks", d, ptr("verdict"), "the verdict is DONE but %s: DONE needs all five checks to pass", countWord(len(falses), "check is false", "checks are false")+" ("+strings.Join(falses, ", ")+")")
		case verdict != "DONE" && trues == len(sccCheckNames) && submitDone:
			c.report("scc.verdict.done-iff-checks", d, ptr("verdict"), "all five checks are true but the verdict is %s: all checks passing means DONE — or set the failing check to false", verdict)
		}
		var which []string
		for _, name := range []string{"scope_clean", "schema_valid"} {
			if b, ok := boolean(checks, name); ok && !b {
				which = append(which, name)
			}
		}
		if verdict != "REJECT" && verdict != "DONE" && len(which) > 0 {
			c.report("scc.verdict.reject-on-policy", d, ptr("verdict"), "%s is false but the verdict is %s: output that breaks scope or schema policy is REJECTed", strings.Join(which, " and "), verdict)
		}
		if tp, ok := boolean(checks, "tests_passed"); ok && tp && verdict == "RETRY" {
			c.report("scc.verdict.retry-needs-failed-tests", d, ptr("verdict"), "the verdict is RETRY but checks.tests_passed is true: RETRY is for failed tests with attempts left — ESCALATE other failures")
		}
	}
	if na, ok := str(obj, "next_action"); ok {
		if fits := sccNextActions[verdict]; len(fits) > 0 && !slices.Contains(fits, na) {
			c.report("scc.verdict.next-action", d, ptr("next_action"), "`next_action` is %s but the verdict is %s, which goes with %s", display(na), verdict, strings.Join(fits, " or "))
		}
	}
}

// sccStatus records where the task stands (see the top of this file).
func sccStatus(c *ruleCtx, g *Group, s *sccSubmit, verdictDoc *artifact.Document, task *artifact.Document) {
	st := Status{Family: "scc", Unit: "SCC " + sccUnit(c, g, verdictDoc, task)}
	var parts []string
	if s != nil && s.status != "" {
		parts = append(parts, "submit "+s.status)
	} else if s != nil {
		parts = append(parts, "submit —")
	}
	vobj := asObj(valueOf(verdictDoc))
	verdict := strOr(vobj, "verdict")
	switch verdict {
	case "DONE", "RETRY", "ESCALATE", "REJECT":
	default:
		verdict = ""
	}
	switch {
	case verdictDoc != nil && verdict != "":
		dec, state := sccVerdictDecision(verdictDoc, vobj, verdict)
		parts = append(parts, state)
		st.Decisions = append(st.Decisions, dec)
	case verdictDoc != nil:
		parts = append(parts, "verdict —")
	case s != nil:
		parts = append(parts, "no verdict")
		if dec := sccSubmitDecision(s); dec.Effect != "" {
			st.Decisions = append(st.Decisions, dec)
		}
	}
	if s == nil && verdictDoc == nil {
		if task == nil {
			return
		}
		parts = append(parts, "task input only, not run yet")
	}
	st.State = strings.Join(parts, ", ")
	c.status(st)
}

// sccUnit names the task in the status: the task folder (its name is the
// task_id); a submit or verdict found by content elsewhere is named by its
// task_id, else by the group key.
func sccUnit(c *ruleCtx, g *Group, verdictDoc, task *artifact.Document) string {
	if _, dir, ok := sccTaskDir(strings.TrimPrefix(g.Key, c.opts.Prefix) + "/x"); ok {
		return dir
	}
	for _, d := range []*artifact.Document{g.One("scc.submit"), verdictDoc, task} {
		if id := strOr(asObj(valueOf(d)), "task_id"); !blank(id) {
			return strings.TrimSpace(id)
		}
	}
	return g.Key
}

// sccVerdictDecision is the decision of a verdict (DONE → SHIP, RETRY →
// ADVISORY, ESCALATE and REJECT → HOLD) and its part of the status.
func sccVerdictDecision(verdictDoc *artifact.Document, vobj map[string]any, verdict string) (dec Decision, state string) {
	state = "verdict " + verdict
	dec = Decision{File: verdictDoc.Path, Line: verdictDoc.Locate(ptr("verdict")).Line}
	var why string
	if sccIsV1(vobj) {
		r, _ := stringList(vobj, "reasons")
		why = strings.Join(r, "; ")
	} else {
		why = strOr(vobj, "reason")
		if na := strOr(vobj, "next_action"); na != "" {
			state += " (next: " + na + ")"
		}
	}
	switch verdict {
	case "DONE":
		dec.Effect = "SHIP"
	case "RETRY":
		dec.Effect = "ADVISORY"
	default:
		dec.Effect = "HOLD"
	}
	dec.Reason = "SCC verdict " + verdict
	if verdict == "RETRY" {
		dec.Reason += " (task not done, another attempt is due)"
	}
	dec.Reason = because(dec.Reason, why)
	return dec, state
}

// sccSubmitDecision is the decision of a submit not judged yet, as the judge
// would decide it (see the top of this file); its Effect is "" when the
// submit has no status.
func sccSubmitDecision(s *sccSubmit) Decision {
	dec := Decision{File: s.doc.Path, Line: s.doc.Locate(ptr("status")).Line}
	switch s.status {
	case "DONE":
		dec.Effect, dec.Reason = "SHIP", "SCC submit DONE, not judged yet"
	case "NEED_INPUT":
		dec.Effect, dec.Reason = "HOLD", "SCC submit NEED_INPUT (the judge escalates it)"
		if needs, _ := stringList(s.obj, "needs_input"); slices.ContainsFunc(needs, filled) {
			dec.Reason += ": needs " + strings.Join(needs, "; ")
		}
	case "FAILED":
		code := strings.ToUpper(strings.TrimSpace(s.reason))
		if sccEscalatingReasons[code] {
			dec.Effect, dec.Reason = "HOLD", "SCC submit FAILED with "+code+" (escalated, not retried)"
		} else {
			dec.Effect, dec.Reason = "ADVISORY", because("SCC submit FAILED (the judge retries)", code)
		}
	}
	return dec
}
