package check

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/testutil"
)

// sccID is the task of the consistent folder (a UUID, so that the UUID
// rules can be exercised on it).
const sccID = "7c1e4b2a-5d3f-4e8a-9b6c-0d2e4f6a8b1c"

// sccFolder is a consistent task folder, with <ID> for the task ID: a DONE
// submit within the task's pins, its evidence, and a DONE verdict. Every SCC
// rule is silent on it. Line numbers in the cases below refer to it.
var sccFolder = map[string]string{
	"artifacts/<ID>/task.json": `{
  "task_id": "<ID>",
  "goal": "Fix the login redirect",
  "role": "engineer",
  "files": ["src/auth/login.go"],
  "allowedTests": ["go test ./src/auth/..."],
  "allowedExecutors": ["codex"],
  "timeoutMs": 600000,
  "pins": {
    "allowed_paths": ["src/auth/"],
    "forbidden_paths": ["src/auth/secrets/**"]
  }
}
`,
	"artifacts/<ID>/submit.json": `{
  "schema_version": "scc.submit.v1",
  "task_id": "<ID>",
  "status": "DONE",
  "changed_files": ["src/auth/login.go"],
  "new_files": ["src/auth/login_test.go"],
  "allow_paths": {"read": ["**"], "write": ["src/"]},
  "tests": {
    "commands": ["go test ./src/auth/..."],
    "passed": true,
    "summary": "2 tests passed"
  },
  "artifacts": {
    "report_md": "artifacts/<ID>/report.md",
    "selftest_log": "artifacts/<ID>/selftest.log",
    "evidence_dir": "artifacts/<ID>/evidence/",
    "patch_diff": "artifacts/<ID>/patch.diff",
    "submit_json": "artifacts/<ID>/submit.json"
  },
  "exit_code": 0,
  "needs_input": []
}
`,
	"artifacts/<ID>/verdict.json": `{
  "schema_version": "scc.verdict.v1",
  "task_id": "<ID>",
  "verdict": "DONE",
  "reasons": ["All gates passed (schema, scope, tests, hygiene)."],
  "actions": [{"type": "DONE", "notes": "No follow-up required."}]
}
`,
	"artifacts/<ID>/report.md":    "# Fix the login redirect\n\nChanged src/auth/login.go, added src/auth/login_test.go.\n",
	"artifacts/<ID>/selftest.log": "$ go test ./src/auth/...\nok  \texample.com/src/auth\t0.01s\nEXIT_CODE=0\n",
	"artifacts/<ID>/patch.diff": `diff --git a/src/auth/login.go b/src/auth/login.go
--- a/src/auth/login.go
+++ b/src/auth/login.go
@@ -1 +1 @@
-old
+new
diff --git a/src/auth/login_test.go b/src/auth/login_test.go
new file mode 100644
--- /dev/null
+++ b/src/auth/login_test.go
@@ -0,0 +1 @@
+test
`,
	"artifacts/<ID>/evidence/notes.txt": "before and after\n",
}

// sccSeedVerdict is the seed-shape verdict that matches the folder.
const sccSeedVerdict = `{
  "task_id": "<ID>",
  "verdict": "DONE",
  "reason": "all checks pass",
  "checks": {
    "schema_valid": true,
    "scope_clean": true,
    "tests_passed": true,
    "artifacts_complete": true,
    "changed_files_match": true
  },
  "next_action": "none"
}
`

// sccEdit changes one file of the folder (see testutil.Edit); its File is
// relative to artifacts/<ID>/, and <ID> in its Old and New is the task id.
type sccEdit = testutil.Edit

// sccDelete as an edit's New deletes the file.
const sccDelete = ""

const (
	sccFTask    = "task.json"
	sccFSubmit  = "submit.json"
	sccFVerdict = "verdict.json"
	sccFReport  = "report.md"
	sccFLog     = "selftest.log"
	sccFPatch   = "patch.diff"
)

// sccWithID builds the folder for task id with edits applied.
func sccWithID(id string, edits ...sccEdit) map[string]string {
	base := map[string]string{}
	for k, v := range sccFolder {
		base[strings.ReplaceAll(k, "<ID>", id)] = strings.ReplaceAll(v, "<ID>", id)
	}
	inFolder := make([]sccEdit, len(edits))
	for i, e := range edits {
		e.File = "artifacts/" + id + "/" + e.File
		e.Old = strings.ReplaceAll(e.Old, "<ID>", id)
		e.New = strings.ReplaceAll(e.New, "<ID>", id)
		inFolder[i] = e
	}
	return testutil.EditTree(base, inFolder...)
}

func sccWith(edits ...sccEdit) map[string]string { return sccWithID(sccID, edits...) }

func sccFile(file string) string { return "artifacts/" + sccID + "/" + file }

// sccStrict is a config under which the configurable rules are active.
var sccStrict = &config.Config{SCC: config.SCC{RequireUUIDTaskID: true, Roles: []string{"engineer", "reviewer"}}}

func init() {
	fire := func(rule, name, file string, line int, edits ...sccEdit) ruleCase {
		return ruleCase{name: name, rule: rule, fires: true, file: sccFile(file), line: line, tree: sccWith(edits...)}
	}
	silent := func(rule, name string, edits ...sccEdit) ruleCase {
		return ruleCase{name: name, rule: rule, tree: sccWith(edits...)}
	}
	withConfig := func(tc ruleCase, cfg *config.Config) ruleCase {
		tc.config = cfg
		return tc
	}
	var cases []ruleCase
	for _, r := range Rules() {
		if strings.HasPrefix(r.ID, "scc.") {
			cases = append(cases, withConfig(silent(r.ID, "consistent folder"), sccStrict))
		}
	}
	// Building blocks.
	status := func(s string) sccEdit {
		return sccEdit{File: sccFSubmit, Old: `"status": "DONE",`, New: `"status": ` + s + `,`}
	}
	exit := func(n string) sccEdit {
		return sccEdit{File: sccFSubmit, Old: `"exit_code": 0`, New: `"exit_code": ` + n}
	}
	logExit := func(n string) sccEdit { return sccEdit{File: sccFLog, Old: "EXIT_CODE=0", New: "EXIT_CODE=" + n} }
	testsFailed := sccEdit{File: sccFSubmit, Old: `"passed": true`, New: `"passed": false`}
	verdict := func(v string) sccEdit {
		return sccEdit{File: sccFVerdict, Old: `"verdict": "DONE"`, New: `"verdict": "` + v + `"`}
	}
	seed := sccEdit{File: sccFVerdict, New: sccSeedVerdict}
	seedVerdict := func(v, next string) []sccEdit {
		return []sccEdit{seed, {File: sccFVerdict, Old: `"verdict": "DONE"`, New: `"verdict": "` + v + `"`}, {File: sccFVerdict, Old: `"next_action": "none"`, New: `"next_action": "` + next + `"`}}
	}
	check := func(name string) sccEdit {
		return sccEdit{File: sccFVerdict, Old: `"` + name + `": true`, New: `"` + name + `": false`}
	}
	needInput := []sccEdit{status(`"NEED_INPUT"`), {File: sccFSubmit, Old: `"needs_input": []`, New: `"needs_input": ["Which session store should the redirect use?"]`}}
	failedSubmit := []sccEdit{status(`"FAILED", "reason_code": "CI_FAILED"`), testsFailed, exit("1"), logExit("1")}
	failedCI := append(append([]sccEdit{}, failedSubmit...), verdict("RETRY"))
	join := func(parts ...[]sccEdit) []sccEdit {
		var out []sccEdit
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}

	cases = append(cases,
		// submit.json on its own.
		fire("scc.submit.task-id-nonblank", "blank task_id", sccFSubmit, 3, sccEdit{File: sccFSubmit, Old: `"task_id": "<ID>"`, New: `"task_id": "  "`}),
		withConfig(ruleCase{name: "not a UUID", rule: "scc.submit.task-id-uuid", fires: true, file: "artifacts/task-1/submit.json", line: 3, tree: sccWithID("task-1")}, sccStrict),
		ruleCase{name: "not a UUID, UUIDs not required", rule: "scc.submit.task-id-uuid", tree: sccWithID("task-1")},
		fire("scc.submit.task-id-matches-dir", "other task's id", sccFSubmit, 3, sccEdit{File: sccFSubmit, Old: `"task_id": "<ID>"`, New: `"task_id": "other-task"`}),
		ruleCase{name: "submit found by content elsewhere", rule: "scc.submit.task-id-matches-dir", tree: map[string]string{"runs/last-submit.json": sccWith()[sccFile(sccFSubmit)]}},
		fire("scc.submit.need-input-has-questions", "NEED_INPUT with no questions", sccFSubmit, 21, status(`"NEED_INPUT"`), sccEdit{File: sccFSubmit, Old: `"needs_input": []`, New: `"needs_input": [" "]`}),
		silent("scc.submit.need-input-has-questions", "NEED_INPUT with a question", needInput...),
		fire("scc.submit.needs-input-empty", "DONE with a question", sccFSubmit, 21, sccEdit{File: sccFSubmit, Old: `"needs_input": []`, New: `"needs_input": ["anything else?"]`}),
		silent("scc.submit.needs-input-empty", "NEED_INPUT with a question", needInput...),
		fire("scc.submit.done-needs-exit-0", "DONE with exit 1", sccFSubmit, 20, exit("1"), logExit("1")),
		silent("scc.submit.done-needs-exit-0", "FAILED with exit 1", failedCI...),
		fire("scc.submit.done-needs-tests-passed", "DONE with failed tests", sccFSubmit, 10, testsFailed),
		silent("scc.submit.done-needs-tests-passed", "FAILED with failed tests", failedCI...),
		fire("scc.submit.done-needs-tests", "DONE without tests", sccFSubmit, 9, sccEdit{File: sccFSubmit, Old: `"commands": ["go test ./src/auth/..."]`, New: `"commands": []`}),
		fire("scc.submit.tests-failed-status", "failed tests, other reason", sccFSubmit, 4, status(`"FAILED", "reason_code": "TIMEOUT_EXCEEDED"`), testsFailed, exit("1"), logExit("1")),
		silent("scc.submit.tests-failed-status", "failed tests, CI_FAILED (lower case)", status(`"FAILED", "reason_code": "ci_failed"`), testsFailed, exit("1"), logExit("1")),
		fire("scc.submit.failed-has-reason", "FAILED without reason_code", sccFSubmit, 4, status(`"FAILED"`), testsFailed, exit("1"), logExit("1")),
		fire("scc.submit.failed-has-reason", "FAILED with a blank reason_code", sccFSubmit, 4, status(`"FAILED", "reason_code": ""`), exit("1"), logExit("1")),
		silent("scc.submit.failed-has-reason", "FAILED with CI_FAILED", failedCI...),
		fire("scc.submit.exit-0-not-failed", "FAILED with exit 0", sccFSubmit, 20, status(`"FAILED", "reason_code": "CI_FAILED"`), testsFailed),
		silent("scc.submit.exit-0-not-failed", "FAILED with exit 1", failedCI...),
		fire("scc.submit.artifact-under-task", "report outside the task folder", sccFSubmit, 14, sccEdit{File: sccFSubmit, Old: `"report_md": "artifacts/<ID>/report.md"`, New: `"report_md": "docs/report.md"`}),
		fire("scc.submit.artifact-under-task", "report escapes with ..", sccFSubmit, 14, sccEdit{File: sccFSubmit, Old: `"report_md": "artifacts/<ID>/report.md"`, New: `"report_md": "artifacts/<ID>/../../README.md"`}),
		silent("scc.submit.artifact-under-task", "./ and backslashes", sccEdit{File: sccFSubmit, Old: `"report_md": "artifacts/<ID>/report.md"`, New: `"report_md": "./artifacts\\<ID>\\report.md"`}),
		fire("scc.submit.artifact-exists", "report.md missing", sccFSubmit, 14, sccEdit{File: sccFReport, New: sccDelete}),
		fire("scc.submit.artifact-exists", "evidence/ missing", sccFSubmit, 16, sccEdit{File: "evidence/notes.txt", New: sccDelete}),
		ruleCase{name: "folder below the root", rule: "scc.submit.artifact-exists", tree: func() map[string]string {
			tree := map[string]string{}
			for k, v := range sccWith() {
				tree["services/api/"+k] = v
			}
			return tree
		}()},
		withConfig(fire("scc.submit.evidence-readable", "selftest.log over the size limit", sccFSubmit, 15, sccEdit{File: sccFLog, New: strings.Repeat("ok\n", 400) + "EXIT_CODE=0\n"}), &config.Config{Limits: config.Limits{MaxFileSize: 1024}}),
		fire("scc.submit.submit-json-path", "names another file", sccFSubmit, 18, sccEdit{File: sccFSubmit, Old: `"submit_json": "artifacts/<ID>/submit.json"`, New: `"submit_json": "artifacts/<ID>/submit-2.json"`}),
		fire("scc.submit.write-allowed", "outside allow_paths.write", sccFSubmit, 5, sccEdit{File: sccFSubmit, Old: `"write": ["src/"]`, New: `"write": ["lib/"]`}),
		silent("scc.submit.write-allowed", "write glob", sccEdit{File: sccFSubmit, Old: `"write": ["src/"]`, New: `"write": ["src/**"]`}),
		silent("scc.submit.write-allowed", "no allow_paths", sccEdit{File: sccFSubmit, Old: `  "allow_paths": {"read": ["**"], "write": ["src/"]},` + "\n", New: ""}),
		fire("scc.submit.hygiene", "tmp directory", sccFSubmit, 6, sccEdit{File: sccFSubmit, Old: `"new_files": ["src/auth/login_test.go"]`, New: `"new_files": ["src/auth/tmp/scratch.go"]`}),
		fire("scc.submit.hygiene", ".bak file", sccFSubmit, 5, sccEdit{File: sccFSubmit, Old: `"changed_files": ["src/auth/login.go"]`, New: `"changed_files": ["src/auth/login.go.bak"]`}),
		silent("scc.submit.hygiene", "debug/ under artifacts/", sccEdit{File: sccFSubmit, Old: `"new_files": ["src/auth/login_test.go"]`, New: `"new_files": ["src/auth/login_test.go", "artifacts/<ID>/debug/trace.txt"]`}),
		silent("scc.submit.hygiene", "tmp in a file name", sccEdit{File: sccFSubmit, Old: `"new_files": ["src/auth/login_test.go"]`, New: `"new_files": ["src/auth/tmpl.go"]`}),
		fire("scc.submit.changed-new-disjoint", "file both changed and new", sccFSubmit, 6, sccEdit{File: sccFSubmit, Old: `"new_files": ["src/auth/login_test.go"]`, New: `"new_files": ["src/auth/login_test.go", "./src/auth/login.go"]`}),
		fire("scc.submit.report-nonempty", "empty report", sccFSubmit, 14, sccEdit{File: sccFReport, New: " \n"}),
		fire("scc.submit.selftest-exit-line", "no EXIT_CODE line", sccFSubmit, 15, sccEdit{File: sccFLog, Old: "EXIT_CODE=0\n", New: "done\n"}),
		fire("scc.submit.selftest-exit-line", "EXIT_CODE not last", sccFSubmit, 15, sccEdit{File: sccFLog, Old: "EXIT_CODE=0\n", New: "EXIT_CODE=0\ncleanup\n"}),
		silent("scc.submit.selftest-exit-line", "CRLF and trailing blank lines", sccEdit{File: sccFLog, Old: "EXIT_CODE=0\n", New: "EXIT_CODE=0\r\n\r\n\r\n"}),
		fire("scc.submit.selftest-exit-matches", "log says 2", sccFSubmit, 20, logExit("2")),
		silent("scc.submit.selftest-exit-matches", "negative exit code in both", status(`"FAILED", "reason_code": "EXECUTOR_ERROR"`), exit("-1"), logExit("-1")),
		fire("scc.submit.patch-parseable", "not a diff", sccFSubmit, 17, sccEdit{File: sccFPatch, New: "changed the login redirect\n"}),
		silent("scc.submit.patch-parseable", "plain ---/+++ diff", sccEdit{File: sccFPatch, New: "--- src/auth/login.go\t2026-01-01\n+++ src/auth/login.go\t2026-01-02\n@@ -1 +1 @@\n-old\n+new\n--- /dev/null\n+++ src/auth/login_test.go\n@@ -0,0 +1 @@\n+test\n"}),
		fire("scc.submit.patch-in-files", "patch changes an unlisted file", sccFSubmit, 5, sccEdit{File: sccFPatch, Old: "diff --git a/src/auth/login_test.go", New: "diff --git a/src/auth/session.go b/src/auth/session.go\n--- a/src/auth/session.go\n+++ b/src/auth/session.go\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/src/auth/login_test.go"}),
		silent("scc.submit.patch-in-files", "empty patch, no files", sccEdit{File: sccFSubmit, Old: `"changed_files": ["src/auth/login.go"]`, New: `"changed_files": []`}, sccEdit{File: sccFSubmit, Old: `"new_files": ["src/auth/login_test.go"]`, New: `"new_files": []`}, sccEdit{File: sccFPatch, New: "\n"}),
		fire("scc.submit.files-in-patch", "new file not in the patch", sccFSubmit, 6, sccEdit{File: sccFPatch, Old: "diff --git a/src/auth/login_test.go b/src/auth/login_test.go\nnew file mode 100644\n--- /dev/null\n+++ b/src/auth/login_test.go\n@@ -0,0 +1 @@\n+test\n", New: ""}),
		fire("scc.submit.files-in-patch", "empty patch", sccFSubmit, 5, sccEdit{File: sccFPatch, New: "\n"}),
		// submit.json against the task input.
		fire("scc.submit.task-id-matches-task", "task input has another id", sccFSubmit, 3, sccEdit{File: sccFTask, Old: `"task_id": "<ID>"`, New: `"task_id": "00000000-0000-4000-8000-000000000000"`}),
		silent("scc.submit.task-id-matches-task", "child task without task_id", sccEdit{File: sccFTask, Old: `"task_id": "<ID>"`, New: `"title": "Fix login"`}),
		silent("scc.submit.task-id-matches-task", "no task input", sccEdit{File: sccFTask, New: sccDelete}),
		fire("scc.submit.scope-conflict", "forbidden file", sccFSubmit, 6, sccEdit{File: sccFSubmit, Old: `"new_files": ["src/auth/login_test.go"]`, New: `"new_files": ["src/auth/secrets/key.go"]`}),
		fire("scc.submit.scope-conflict", "file outside the pins", sccFSubmit, 5, sccEdit{File: sccFSubmit, Old: `"changed_files": ["src/auth/login.go"]`, New: `"changed_files": ["src/db/schema.go"]`}),
		silent("scc.submit.scope-conflict", "glob pins", sccEdit{File: sccFTask, Old: `"allowed_paths": ["src/auth/"]`, New: `"allowed_paths": ["src/**/*.go"]`}),
		silent("scc.submit.scope-conflict", "pins_instance adds the path", sccEdit{File: sccFTask, Old: `"allowed_paths": ["src/auth/"]`, New: `"allowed_paths": ["src/auth/login.go"]`}, sccEdit{File: sccFTask, Old: `"timeoutMs": 600000,`, New: `"timeoutMs": 600000, "pins_instance": {"allowed_paths_add": ["src/auth/login_test.go"]},`}),
		silent("scc.submit.scope-conflict", "the task's own evidence", sccEdit{File: sccFSubmit, Old: `"new_files": ["src/auth/login_test.go"]`, New: `"new_files": ["src/auth/login_test.go", "artifacts/<ID>/evidence/notes.txt"]`}),
		fire("scc.submit.done-ran-allowed-tests", "lint not run", sccFSubmit, 9, sccEdit{File: sccFTask, Old: `"allowedTests": ["go test ./src/auth/..."]`, New: `"allowedTests": ["go test ./src/auth/...", "make lint"]`}),
		silent("scc.submit.done-ran-allowed-tests", "spacing differs", sccEdit{File: sccFSubmit, Old: `"commands": ["go test ./src/auth/..."]`, New: `"commands": ["go  test ./src/auth/... "]`}),
		// verdict.json.
		fire("scc.verdict.task-id-matches-submit", "verdict for another task", sccFVerdict, 3, sccEdit{File: sccFVerdict, Old: `"task_id": "<ID>"`, New: `"task_id": "unknown"`}),
		fire("scc.verdict.task-id-matches-dir", "verdict in another task's folder", sccFVerdict, 3, sccEdit{File: sccFVerdict, Old: `"task_id": "<ID>"`, New: `"task_id": "unknown"`}),
		fire("scc.verdict.done-needs-submit-done", "DONE on a FAILED submit", sccFVerdict, 4, failedSubmit...),
		fire("scc.verdict.done-needs-submit-done", "seed DONE on failing tests", sccFVerdict, 3, seed, testsFailed),
		silent("scc.verdict.done-needs-submit-done", "RETRY on a FAILED submit", failedCI...),
		fire("scc.verdict.need-input-escalates", "NEED_INPUT retried", sccFVerdict, 4, join(needInput, []sccEdit{verdict("RETRY")})...),
		fire("scc.verdict.need-input-escalates", "ESCALATE without needs_input action", sccFVerdict, 6, join(needInput, []sccEdit{verdict("ESCALATE")})...),
		fire("scc.verdict.need-input-escalates", "seed shape NEED_INPUT retried", sccFVerdict, 3, join(needInput, seedVerdict("RETRY", "retry"), []sccEdit{check("tests_passed")})...),
		silent("scc.verdict.need-input-escalates", "ESCALATE with needs_input", join(needInput, []sccEdit{verdict("ESCALATE"), {File: sccFVerdict, Old: `{"type": "DONE", "notes": "No follow-up required."}`, New: `{"type": "needs_input", "notes": "needs_input=[\"Which session store?\"]"}`}})...),
		silent("scc.verdict.need-input-escalates", "seed shape ESCALATE to a human", join(needInput, seedVerdict("ESCALATE", "human"))...),
		fire("scc.verdict.done-iff-checks", "DONE with a failed check", sccFVerdict, 3, seed, check("artifacts_complete")),
		fire("scc.verdict.done-iff-checks", "RETRY with all checks passing", sccFVerdict, 3, seedVerdict("RETRY", "retry")...),
		silent("scc.verdict.done-iff-checks", "seed DONE", seed),
		silent("scc.verdict.done-iff-checks", "all checks pass on a NEED_INPUT submit", join(needInput, seedVerdict("ESCALATE", "human"))...),
		fire("scc.verdict.reject-on-policy", "scope breach escalated", sccFVerdict, 3, join(seedVerdict("ESCALATE", "human"), []sccEdit{check("scope_clean")})...),
		silent("scc.verdict.reject-on-policy", "scope breach rejected", join(seedVerdict("REJECT", "dlq"), []sccEdit{check("scope_clean")})...),
		fire("scc.verdict.retry-needs-failed-tests", "RETRY with passing tests", sccFVerdict, 3, join(seedVerdict("RETRY", "retry"), []sccEdit{check("changed_files_match")})...),
		silent("scc.verdict.retry-needs-failed-tests", "RETRY with failing tests", join(failedSubmit, seedVerdict("RETRY", "retry"), []sccEdit{check("tests_passed")})...),
		fire("scc.verdict.next-action", "DONE then retry", sccFVerdict, 12, join(seedVerdict("DONE", "retry"))...),
		silent("scc.verdict.next-action", "REJECT to the DLQ", join(seedVerdict("REJECT", "dlq"), []sccEdit{check("schema_valid")})...),
		// Task input.
		withConfig(ruleCase{name: "not a UUID", rule: "scc.task.task-id-uuid", fires: true, file: "artifacts/task-1/task.json", line: 2, tree: sccWithID("task-1")}, sccStrict),
		fire("scc.task.pins-disjoint", "path allowed and forbidden", sccFTask, 11, sccEdit{File: sccFTask, Old: `"forbidden_paths": ["src/auth/secrets/**"]`, New: `"forbidden_paths": ["src/auth/secrets/**", "./src/auth"]`}),
		silent("scc.task.pins-disjoint", "forbidden narrows allowed", sccEdit{File: sccFTask, Old: `"forbidden_paths": ["src/auth/secrets/**"]`, New: `"forbidden_paths": ["src/auth/secrets/"]`}),
		fire("scc.task.files-allowed", "target outside the pins", sccFTask, 5, sccEdit{File: sccFTask, Old: `"files": ["src/auth/login.go"]`, New: `"files": ["src/db/schema.go"]`}),
		fire("scc.task.files-allowed", "forbidden target", sccFTask, 5, sccEdit{File: sccFTask, Old: `"files": ["src/auth/login.go"]`, New: `"files": ["src/auth/login.go", "src/auth/secrets/key.go"]`}),
		fire("scc.task.executor-known", "renamed executor", sccFTask, 7, sccEdit{File: sccFTask, Old: `"allowedExecutors": ["codex"]`, New: `"allowedExecutors": ["codex", "oltcli"]`}),
		withConfig(silent("scc.task.executor-known", "renamed executor configured", sccEdit{File: sccFTask, Old: `"allowedExecutors": ["codex"]`, New: `"allowedExecutors": ["codex", "oltcli"]`}), &config.Config{SCC: config.SCC{Executors: []string{"codex", "oltcli"}}}),
		withConfig(fire("scc.task.role-known", "unregistered role", sccFTask, 4, sccEdit{File: sccFTask, Old: `"role": "engineer"`, New: `"role": "wizard"`}), sccStrict),
		silent("scc.task.role-known", "any role without scc.roles", sccEdit{File: sccFTask, Old: `"role": "engineer"`, New: `"role": "wizard"`}),
		fire("scc.task.timeout-positive", "zero timeout", sccFTask, 8, sccEdit{File: sccFTask, Old: `"timeoutMs": 600000`, New: `"timeoutMs": 0`}),
	)
	addRuleCases("scc", cases...)
}

// TestSCCConsistentFolder: the consistent folder has no finding at all,
// schema included, so the silent cases above are meaningful.
func TestSCCConsistentFolder(t *testing.T) {
	for _, tree := range []map[string]string{sccWith(), sccWith(sccEdit{File: sccFVerdict, New: sccSeedVerdict})} {
		res := runTree(t, tree, sccStrict, nil)
		for _, f := range res.Findings {
			t.Errorf("unexpected finding: %s", formatFinding(f))
		}
	}
}

// TestSCCStatus: what each task folder means for the gate.
func TestSCCStatus(t *testing.T) {
	needInput := []sccEdit{{File: sccFSubmit, Old: `"status": "DONE",`, New: `"status": "NEED_INPUT",`}, {File: sccFSubmit, Old: `"needs_input": []`, New: `"needs_input": ["Which store?"]`}}
	failed := func(code string) []sccEdit {
		return []sccEdit{{File: sccFSubmit, Old: `"status": "DONE",`, New: `"status": "FAILED", "reason_code": "` + code + `",`}, {File: sccFVerdict, New: sccDelete}}
	}
	verdict := func(v string) sccEdit {
		return sccEdit{File: sccFVerdict, Old: `"verdict": "DONE"`, New: `"verdict": "` + v + `"`}
	}
	noVerdict := sccEdit{File: sccFVerdict, New: sccDelete}
	seedReject := []sccEdit{{File: sccFVerdict, New: sccSeedVerdict}, {File: sccFVerdict, Old: `"verdict": "DONE"`, New: `"verdict": "REJECT"`}, {File: sccFVerdict, Old: `"next_action": "none"`, New: `"next_action": "dlq"`}}
	for _, tc := range []struct {
		name         string
		edits        []sccEdit
		state        string
		effect, file string
	}{
		{"verdict DONE", nil, "submit DONE, verdict DONE", "SHIP", sccFVerdict},
		{"verdict RETRY", []sccEdit{verdict("RETRY")}, "submit DONE, verdict RETRY", "ADVISORY", sccFVerdict},
		{"verdict ESCALATE", []sccEdit{verdict("ESCALATE")}, "submit DONE, verdict ESCALATE", "HOLD", sccFVerdict},
		{"seed verdict REJECT", seedReject, "submit DONE, verdict REJECT (next: dlq)", "HOLD", sccFVerdict},
		{"submit DONE, no verdict", []sccEdit{noVerdict}, "submit DONE, no verdict", "SHIP", sccFSubmit},
		{"submit NEED_INPUT, no verdict", append(needInput, noVerdict), "submit NEED_INPUT, no verdict", "HOLD", sccFSubmit},
		{"submit FAILED CI_FAILED", failed("CI_FAILED"), "submit FAILED, no verdict", "ADVISORY", sccFSubmit},
		{"submit FAILED SCOPE_CONFLICT", failed("SCOPE_CONFLICT"), "submit FAILED, no verdict", "HOLD", sccFSubmit},
		{"task only", []sccEdit{{File: sccFSubmit, New: sccDelete}, noVerdict}, "task input only, not run yet", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runTree(t, sccWith(tc.edits...), nil, nil)
			var got []Status
			for _, s := range res.Statuses {
				if s.Family == "scc" {
					got = append(got, s)
				}
			}
			if len(got) != 1 {
				t.Fatalf("want one SCC status, got %+v", got)
			}
			s := got[0]
			if s.Unit != "SCC "+sccID || s.State != tc.state {
				t.Errorf("status %q %q, want %q %q", s.Unit, s.State, "SCC "+sccID, tc.state)
			}
			if tc.effect == "" {
				if len(s.Decisions) != 0 {
					t.Errorf("want no decision, got %+v", s.Decisions)
				}
				return
			}
			if len(s.Decisions) != 1 {
				t.Fatalf("want one decision, got %+v", s.Decisions)
			}
			d := s.Decisions[0]
			if d.Effect != tc.effect || d.File != sccFile(tc.file) || d.Line < 1 || d.Reason == "" {
				t.Errorf("decision %+v, want %s in %s", d, tc.effect, sccFile(tc.file))
			}
		})
	}
}

// TestSCCWrongTypes: rules read documents that also have schema findings;
// values of the wrong type are absent for them, never a panic.
func TestSCCWrongTypes(t *testing.T) {
	dir := "artifacts/" + sccID + "/"
	for name, tree := range map[string]map[string]string{
		"scalars everywhere": {
			dir + "submit.json":  `{"schema_version": "scc.submit.v1", "task_id": 7, "status": ["DONE"], "changed_files": "src/x", "new_files": [1, null, {}], "allow_paths": [], "tests": "passed", "artifacts": ["report.md"], "exit_code": "0", "needs_input": "none"}`,
			dir + "verdict.json": `{"task_id": {}, "verdict": 3, "reason": [], "checks": ["scope_clean"], "next_action": {}}`,
			dir + "task.json":    `{"task_id": [], "goal": 1, "role": {}, "files": "x", "allowedTests": {}, "allowedExecutors": "codex", "timeoutMs": "soon", "pins": ["src/"]}`,
		},
		"nested wrong types": {
			dir + "submit.json":  `{"schema_version": "scc.submit.v1", "task_id": "` + sccID + `", "status": "DONE", "changed_files": [], "allow_paths": {"write": "src/"}, "tests": {"commands": "go test", "passed": "yes"}, "artifacts": {"report_md": 1, "selftest_log": null, "patch_diff": [], "submit_json": {}}, "exit_code": 1.5, "needs_input": [null]}`,
			dir + "verdict.json": `{"schema_version": "scc.verdict.v1", "task_id": "` + sccID + `", "verdict": "DONE", "reasons": "ok", "actions": [1, "x", {"type": 2}]}`,
			dir + "task.json":    `{"goal": "g", "role": "r", "files": [1], "allowedTests": ["t"], "pins": {"allowed_paths": "src/", "forbidden_paths": [null, 3]}, "pins_instance": []}`,
		},
		"not objects": {
			dir + "submit.json":  `["scc.submit.v1"]`,
			dir + "verdict.json": `"DONE"`,
			dir + "task.json":    `null`,
		},
		"hostile paths": {
			dir + "submit.json": strings.NewReplacer(`"artifacts/<ID>/report.md"`, `"/etc/passwd"`, `"artifacts/<ID>/patch.diff"`, `"../../outside.diff"`, `"artifacts/<ID>/selftest.log"`, `"artifacts/<ID>/evidence"`, "<ID>", sccID).Replace(sccFolder["artifacts/<ID>/submit.json"]),
		},
	} {
		t.Run(name, func(t *testing.T) {
			runTree(t, tree, sccStrict, nil) // must not panic
		})
	}
}

// TestSCCWithoutTree: without a tree accessor (a single file is checked),
// the rules that read evidence files stay silent and nothing breaks.
func TestSCCWithoutTree(t *testing.T) {
	saved := sccTreeOf
	sccTreeOf = func(*Group) *Group { return nil }
	defer func() { sccTreeOf = saved }()
	res := runTree(t, sccWith(sccEdit{File: sccFReport, New: sccDelete}, sccEdit{File: sccFLog, New: "no exit line\n"}, sccEdit{File: sccFPatch, New: "not a diff\n"}), nil, nil)
	for _, f := range res.Findings {
		t.Errorf("unexpected finding without a tree: %s", formatFinding(f))
	}
}

// TestSCCSingleFileSkipsEvidence: a submit.json checked on its own (the
// file named, no tree around it) is not judged on evidence files it cannot
// see: none is reported missing, empty or unreadable.
func TestSCCSingleFileSkipsEvidence(t *testing.T) {
	root := testutil.WriteTree(t, t.TempDir(), sccWith())
	res, err := sharedValidator.Run(context.Background(), filepath.Join(root, filepath.FromSlash(sccFile(sccFSubmit))), Options{Config: config.Default()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Artifacts != 1 {
		t.Fatalf("checked %d artifacts, want the one submit", res.Artifacts)
	}
	for _, f := range res.Findings {
		t.Errorf("unexpected finding on a submit checked alone: %s", formatFinding(f))
	}
}

// TestSCCFaithfulEdges: where upstream's own validators report one problem,
// or none, phasegate reports one finding, at the severity upstream implies.
// Every finding of the folder is listed ("line rule severity").
func TestSCCFaithfulEdges(t *testing.T) {
	placeholder := func(key, value string) sccEdit {
		return sccEdit{File: sccFSubmit, Old: `"` + key + `": "artifacts/<ID>/` + map[string]string{"report_md": "report.md", "submit_json": "submit.json"}[key] + `"`, New: `"` + key + `": "` + value + `"`}
	}
	tests := []struct {
		name   string
		edits  []sccEdit
		config *config.Config
		want   []string
	}{
		{
			// hygiene_validator: "artifact submit_json must be under
			// artifacts/<id>/", then `continue`: one error, not three.
			name:  "a placeholder submit_json is one finding",
			edits: []sccEdit{placeholder("submit_json", "<path to submit.json>")},
			want:  []string{"18 scc.submit.artifact-under-task error"},
		},
		{
			name:  "a placeholder report_md is one finding, and its file is not read",
			edits: []sccEdit{placeholder("report_md", "TODO/report.md")},
			want:  []string{"14 scc.submit.artifact-under-task error"},
		},
		{
			name:   "with artifact-under-task off, the consequences are still reported",
			edits:  []sccEdit{placeholder("submit_json", "<path to submit.json>")},
			config: &config.Config{Rules: map[string]string{"scc.submit.artifact-under-task": "off"}},
			want:   []string{"18 scc.submit.artifact-exists warning", "18 scc.submit.submit-json-path warning"},
		},
		{
			name:  "a path in the task folder that is missing is only missing",
			edits: []sccEdit{placeholder("report_md", "artifacts/<ID>/REPORT.md")},
			want:  []string{"14 scc.submit.artifact-exists warning"},
		},
		{
			// verifier_judge copies the submit's task_id into the verdict,
			// but no validator compares the two: a warning.
			name:  "a verdict naming another task is a warning",
			edits: []sccEdit{{File: sccFVerdict, Old: `"task_id": "<ID>"`, New: `"task_id": "00000000-0000-4000-8000-000000000000"`}},
			want:  []string{"3 scc.verdict.task-id-matches-dir warning", "3 scc.verdict.task-id-matches-submit warning"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.config
			if cfg == nil {
				cfg = &config.Config{}
			}
			res := runTree(t, sccWith(tc.edits...), cfg, nil)
			var got []string
			for _, f := range res.Findings {
				got = append(got, fmt.Sprintf("%d %s %s", f.Line, f.Rule, f.Severity))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("findings:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}
