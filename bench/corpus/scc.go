package corpus

import (
	"fmt"
	"path"
	"strings"
)

// scc generates SCC task folders artifacts/<task_id>/: submit.json, usually
// verdict.json, sometimes the task input, plus the non-artifact files the
// submit points at (report.md, selftest.log, patch.diff, evidence/).
func (g *gen) scc(base string) {
	r := g.r
	for k := r.between(3, 15); k > 0; k-- {
		id := r.uuid()
		if r.chance(0.3) {
			id = fmt.Sprintf("task-%s-%d", pick(r, areas), r.between(100, 9999))
		}
		if g.taken("scc/" + id) {
			continue
		}
		g.sccTask(base, id)
	}
}

func (g *gen) sccTask(base, id string) {
	r := g.r
	dir := base + "/artifacts/" + id
	area := pick(r, areas)
	l := pick(r, langs)
	write := path.Dir(fmt.Sprintf(l.src, area, "x")) + "/"
	var changed, added []string
	seen := map[string]bool{}
	for k := r.between(1, 5); k > 0; k-- {
		f := fmt.Sprintf(l.src, area, pick(r, fileStems))
		if seen[f] {
			continue
		}
		seen[f] = true
		if r.chance(0.25) {
			added = append(added, f)
		} else {
			changed = append(changed, f)
		}
	}
	if len(changed) == 0 {
		changed, added = added, nil
	}
	status := "DONE"
	switch x := r.Float64(); {
	case x < 0.2:
		status = "FAILED"
	case x < 0.3:
		status = "NEED_INPUT"
	}
	exit := 0
	passed := true
	commands := []any{l.testCmd}
	if r.chance(0.5) {
		commands = append(commands, "npm --prefix oc-scc-local run selfcheck:role-system")
	}
	summary := fmt.Sprintf("%d tests passed.", r.between(3, 300))
	needs := []any{}
	submit := obj{{"schema_version", "scc.submit.v1"}, {"task_id", id}, {"status", status}}
	switch status {
	case "FAILED":
		exit, passed = 1, false
		summary = fmt.Sprintf("%d passed, %d failed.", r.between(3, 300), r.between(1, 5))
		submit = append(submit, kv{"reason_code", "CI_FAILED"})
	case "NEED_INPUT":
		commands = []any{}
		summary = "Not run: waiting for input."
		needs = []any{fmt.Sprintf("Which %s should own %s?", pick(r, nouns), pick(r, outcomes))}
		submit = append(submit, kv{"reason_code", "NEED_INPUT_REQUIRED"})
	}
	if added == nil {
		added = []string{}
	}
	submit = append(submit,
		kv{"changed_files", strs(changed)},
		kv{"new_files", strs(added)},
		kv{"allow_paths", obj{{"read", []any{"**"}}, {"write", []any{write}}}},
		kv{"tests", obj{{"commands", commands}, {"passed", passed}, {"summary", summary}}},
	)
	if r.chance(0.4) {
		submit = append(submit, kv{"summary", r.words(r.between(10, 40)) + "."})
	}
	prefix := "artifacts/" + id + "/"
	submit = append(submit,
		kv{"artifacts", obj{
			{"report_md", prefix + "report.md"},
			{"selftest_log", prefix + "selftest.log"},
			{"evidence_dir", prefix + "evidence/"},
			{"patch_diff", prefix + "patch.diff"},
			{"submit_json", prefix + "submit.json"},
		}},
		kv{"exit_code", exit},
		kv{"needs_input", needs},
	)
	if r.chance(0.4) {
		var files []any
		for _, f := range append(append([]string{}, changed...), added...) {
			files = append(files, f)
		}
		role := pick(r, []string{"engineer", "engineer", "reviewer", "doc", "designer", "planner"})
		g.add(dir+"/task.json", "scc.task", encJSON, obj{
			{"task_id", id},
			{"title", fmt.Sprintf("%s %s", pick(r, verbs), pick(r, nouns))},
			{"goal", r.words(r.between(20, 60)) + "."},
			{"role", role},
			{"files", files},
			{"allowedTests", []any{l.testCmd}},
			{"allowedExecutors", []any{pick(r, []string{"codex", "opencodecli"})}},
			{"allowedModels", []any{pick(r, []string{"gpt-5-codex", "claude-sonnet-4", "o4-mini"})}},
			{"runner", pick(r, []string{"external", "internal"})},
			{"timeoutMs", r.between(60, 1800) * 1000},
			{"pins", obj{
				{"allowed_paths", []any{write + "**"}},
				{"forbidden_paths", []any{"secrets/**", ".github/**"}},
				{"max_files", r.between(5, 40)},
				{"max_loc", r.between(100, 2000)},
			}},
		})
	}
	g.add(dir+"/submit.json", "scc.submit", encJSON, submit)

	if r.chance(0.9) {
		if r.chance(0.85) {
			verdict := "DONE"
			reasons := []any{"All gates passed (schema, scope, tests, hygiene)."}
			actions := []any{obj{{"type", "DONE"}, {"notes", "No follow-up required."}}}
			switch status {
			case "FAILED":
				verdict = "RETRY"
				reasons = []any{"tests failed: " + summary}
				actions = []any{obj{{"type", "retry"}, {"notes", "Fix the failing tests and resubmit."}}}
			case "NEED_INPUT":
				verdict = "ESCALATE"
				reasons = []any{"executor needs input"}
				actions = []any{obj{{"type", "needs_input"}, {"notes", needs[0]}}}
			}
			g.add(dir+"/verdict.json", "scc.verdict", encJSON, obj{
				{"schema_version", "scc.verdict.v1"}, {"task_id", id}, {"verdict", verdict}, {"reasons", reasons}, {"actions", actions},
			})
		} else {
			// The seed's shape: checks and next_action.
			verdict, next, reason := "DONE", "none", "All checks pass"
			tp := true
			switch status {
			case "FAILED":
				verdict, next, reason, tp = "RETRY", "retry", "Tests failed; attempts remaining", false
			case "NEED_INPUT":
				verdict, next, reason = "ESCALATE", "human", "Executor needs input"
			}
			all := verdict == "DONE"
			g.add(dir+"/verdict.json", "scc.verdict", encJSON, obj{
				{"task_id", id}, {"verdict", verdict}, {"reason", reason},
				{"checks", obj{{"schema_valid", true}, {"scope_clean", true}, {"tests_passed", tp}, {"artifacts_complete", all || status == "FAILED"}, {"changed_files_match", true}}},
				{"next_action", next},
			})
		}
	}

	// Companion files the submit points at: not artifacts, but discovery
	// walks past them (and reads evidence JSON to see if it is one).
	var patch strings.Builder
	for _, f := range changed {
		fmt.Fprintf(&patch, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -%d,3 +%d,4 @@\n context\n-old line\n+new line\n+added line\n", f, f, f, f, r.between(1, 200), r.between(1, 200))
	}
	for _, f := range added {
		fmt.Fprintf(&patch, "diff --git a/%s b/%s\nnew file mode 100644\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,2 @@\n+package %s\n+// generated\n", f, f, f, area)
	}
	g.companion(dir+"/patch.diff", patch.String())
	g.companion(dir+"/report.md", fmt.Sprintf("# Report for %s\n\n%s.\n", id, r.words(40)))
	g.companion(dir+"/selftest.log", fmt.Sprintf("$ %s\n%s\nEXIT_CODE=%d\n", l.testCmd, summary, exit))
	g.companion(dir+"/evidence/pre_state.json", string(encodeJSON(obj{{"git_head", r.hex(40)}, {"dirty", false}, {"files", r.between(100, 5000)}})))
	if r.chance(0.5) {
		g.companion(dir+"/evidence/post_state.json", string(encodeJSON(obj{{"git_head", r.hex(40)}, {"dirty", false}, {"files", r.between(100, 5000)}})))
	}
}

// companion queues a non-artifact file (Kind ""): it does not count towards
// the corpus size.
func (g *gen) companion(path, data string) {
	g.pending = append(g.pending, File{Path: path, Data: []byte(data), Valid: true})
}
