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

// sccTaskGen is one SCC task as its files must agree on it.
type sccTaskGen struct {
	id, dir         string
	area, write     string // write: the folder the task may write
	l               struct{ src, test, testCmd string }
	changed, added  []string
	status, summary string
	exit            int
	needs           []any
}

func (g *gen) sccTask(base, id string) {
	r := g.r
	t := &sccTaskGen{id: id, dir: base + "/artifacts/" + id}
	t.area = pick(r, areas)
	t.l = pick(r, langs)
	t.write = path.Dir(fmt.Sprintf(t.l.src, t.area, "x")) + "/"
	seen := map[string]bool{}
	for k := r.between(1, 5); k > 0; k-- {
		f := fmt.Sprintf(t.l.src, t.area, pick(r, fileStems))
		if seen[f] {
			continue
		}
		seen[f] = true
		if r.chance(0.25) {
			t.added = append(t.added, f)
		} else {
			t.changed = append(t.changed, f)
		}
	}
	if len(t.changed) == 0 {
		t.changed, t.added = t.added, nil
	}
	t.status = "DONE"
	switch x := r.Float64(); {
	case x < 0.2:
		t.status = "FAILED"
	case x < 0.3:
		t.status = "NEED_INPUT"
	}
	submit := g.sccSubmit(t)
	if r.chance(0.4) {
		g.sccTaskInput(t)
	}
	g.add(t.dir+"/submit.json", "scc.submit", encJSON, submit)
	if r.chance(0.9) {
		g.sccVerdict(t)
	}
	g.sccCompanions(t)
}

// sccSubmit is the task's submit.json; it settles the task's summary,
// exit code and questions.
func (g *gen) sccSubmit(t *sccTaskGen) obj {
	r, id := g.r, t.id
	passed := true
	commands := []any{t.l.testCmd}
	if r.chance(0.5) {
		commands = append(commands, "npm --prefix oc-scc-local run selfcheck:role-system")
	}
	t.summary = fmt.Sprintf("%d tests passed.", r.between(3, 300))
	t.needs = []any{}
	submit := obj{{"schema_version", "scc.submit.v1"}, {"task_id", id}, {"status", t.status}}
	switch t.status {
	case "FAILED":
		t.exit, passed = 1, false
		t.summary = fmt.Sprintf("%d passed, %d failed.", r.between(3, 300), r.between(1, 5))
		submit = append(submit, kv{"reason_code", "CI_FAILED"})
	case "NEED_INPUT":
		commands = []any{}
		t.summary = "Not run: waiting for input."
		t.needs = []any{fmt.Sprintf("Which %s should own %s?", pick(r, nouns), pick(r, outcomes))}
		submit = append(submit, kv{"reason_code", "NEED_INPUT_REQUIRED"})
	}
	if t.added == nil {
		t.added = []string{}
	}
	submit = append(submit,
		kv{"changed_files", strs(t.changed)},
		kv{"new_files", strs(t.added)},
		kv{"allow_paths", obj{{"read", []any{"**"}}, {"write", []any{t.write}}}},
		kv{"tests", obj{{"commands", commands}, {"passed", passed}, {"summary", t.summary}}},
	)
	if r.chance(0.4) {
		submit = append(submit, kv{"summary", r.words(r.between(10, 40)) + "."})
	}
	prefix := "artifacts/" + id + "/"
	return append(submit,
		kv{"artifacts", obj{
			{"report_md", prefix + "report.md"},
			{"selftest_log", prefix + "selftest.log"},
			{"evidence_dir", prefix + "evidence/"},
			{"patch_diff", prefix + "patch.diff"},
			{"submit_json", prefix + "submit.json"},
		}},
		kv{"exit_code", t.exit},
		kv{"needs_input", t.needs},
	)
}

// sccTaskInput writes the task input, task.json.
func (g *gen) sccTaskInput(t *sccTaskGen) {
	r := g.r
	var files []any
	for _, f := range append(append([]string{}, t.changed...), t.added...) {
		files = append(files, f)
	}
	role := pick(r, []string{"engineer", "engineer", "reviewer", "doc", "designer", "planner"})
	g.add(t.dir+"/task.json", "scc.task", encJSON, obj{
		{"task_id", t.id},
		{"title", fmt.Sprintf("%s %s", pick(r, verbs), pick(r, nouns))},
		{"goal", r.words(r.between(20, 60)) + "."},
		{"role", role},
		{"files", files},
		{"allowedTests", []any{t.l.testCmd}},
		{"allowedExecutors", []any{pick(r, []string{"codex", "opencodecli"})}},
		{"allowedModels", []any{pick(r, []string{"gpt-5-codex", "claude-sonnet-4", "o4-mini"})}},
		{"runner", pick(r, []string{"external", "internal"})},
		{"timeoutMs", r.between(60, 1800) * 1000},
		{"pins", obj{
			{"allowed_paths", []any{t.write + "**"}},
			{"forbidden_paths", []any{"secrets/**", ".github/**"}},
			{"max_files", r.between(5, 40)},
			{"max_loc", r.between(100, 2000)},
		}},
	})
}

// sccVerdict writes verdict.json, in the documented shape or the seed's.
func (g *gen) sccVerdict(t *sccTaskGen) {
	r, dir, id, status := g.r, t.dir, t.id, t.status
	if r.chance(0.85) {
		verdict := "DONE"
		reasons := []any{"All gates passed (schema, scope, tests, hygiene)."}
		actions := []any{obj{{"type", "DONE"}, {"notes", "No follow-up required."}}}
		switch status {
		case "FAILED":
			verdict = "RETRY"
			reasons = []any{"tests failed: " + t.summary}
			actions = []any{obj{{"type", "retry"}, {"notes", "Fix the failing tests and resubmit."}}}
		case "NEED_INPUT":
			verdict = "ESCALATE"
			reasons = []any{"executor needs input"}
			actions = []any{obj{{"type", "needs_input"}, {"notes", t.needs[0]}}}
		}
		g.add(dir+"/verdict.json", "scc.verdict", encJSON, obj{
			{"schema_version", "scc.verdict.v1"}, {"task_id", id}, {"verdict", verdict}, {"reasons", reasons}, {"actions", actions},
		})
		return
	}
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

// sccCompanions writes the files the submit points at: not artifacts, but
// discovery walks past them (and reads evidence JSON to see if it is one).
func (g *gen) sccCompanions(t *sccTaskGen) {
	r, dir := g.r, t.dir
	var patch strings.Builder
	for _, f := range t.changed {
		fmt.Fprintf(&patch, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -%d,3 +%d,4 @@\n context\n-old line\n+new line\n+added line\n", f, f, f, f, r.between(1, 200), r.between(1, 200))
	}
	for _, f := range t.added {
		fmt.Fprintf(&patch, "diff --git a/%s b/%s\nnew file mode 100644\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,2 @@\n+package %s\n+// generated\n", f, f, f, t.area)
	}
	g.companion(dir+"/patch.diff", patch.String())
	g.companion(dir+"/report.md", fmt.Sprintf("# Report for %s\n\n%s.\n", t.id, r.words(40)))
	g.companion(dir+"/selftest.log", fmt.Sprintf("$ %s\n%s\nEXIT_CODE=%d\n", t.l.testCmd, t.summary, t.exit))
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
