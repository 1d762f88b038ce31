package corpus

import (
	"fmt"
	"strings"
	"time"
)

type issueFate int

const (
	issueDone issueFate = iota
	issueReviewFail
	issueTestFail
	issuePlanned
	issueBlocked
)

// jg generates a JG pipeline folder: lessons.yaml and one folder per issue
// (some archived under completed/), each with the artifacts of the stages it
// reached.
func (g *gen) jg(base string) {
	r := g.r
	root := base + "/.pipeline"
	style := r.IntN(3)
	prefix := strings.ToUpper(pick(r, areas))
	expert := r.chance(0.5)
	nIssues := r.between(3, 10)
	var ids []string
	for i := 0; i < nIssues; i++ {
		num := r.between(10, 999)
		var id string
		switch style {
		case 0:
			id = fmt.Sprintf("ISSUE-%d", num)
		case 1:
			id = fmt.Sprintf("SPEC-%s-%03d", prefix, i+1)
		default:
			id = fmt.Sprintf("issue-%d", num)
		}
		if g.taken("jg/" + id) {
			continue
		}
		ids = append(ids, id)
		fate := issueDone
		switch x := r.Float64(); {
		case x < 0.12:
			fate = issueReviewFail
		case x < 0.27:
			fate = issueTestFail
		case x < 0.37:
			fate = issuePlanned
		case x < 0.45:
			fate = issueBlocked
		}
		dir := root + "/" + id
		if fate == issueDone && r.chance(0.4) {
			dir = root + "/completed/" + id
		}
		g.jgIssue(dir, id, num, fate, expert)
	}
	if r.chance(0.7) {
		var lessons []any
		seen := map[string]bool{}
		for k := r.between(0, 6); k > 0; k-- {
			pattern := fmt.Sprintf("%s %s", pick(r, []string{"Worker edited files outside the plan:", "Tester skipped phase 2 after", "Reviewer missed", "Plan lacked a step for"}), pick(r, nouns))
			if seen[pattern] {
				continue // a repeat raises frequency instead
			}
			seen[pattern] = true
			l := obj{
				{"date", g.clock.Add(-time.Duration(r.IntN(90*24)) * time.Hour).Format("2006-01-02")},
				{"issue", pick(r, ids)},
				{"pattern", pattern},
			}
			if r.chance(0.7) {
				l = append(l, kv{"frequency", r.between(1, 5)})
			}
			if r.chance(0.8) {
				l = append(l, kv{"mitigation", r.sentence()})
			}
			lessons = append(lessons, l)
		}
		if lessons == nil {
			lessons = []any{}
		}
		if r.chance(0.5) {
			g.add(root+"/lessons.yaml", "jg.lessons", encYAML, obj{{"lessons", lessons}})
		} else {
			g.add(root+"/lessons.yaml", "jg.lessons", encYAML, lessons)
		}
	}
	g.clock = g.clock.Add(time.Duration(nIssues) * 6 * time.Hour)
}

func (g *gen) jgIssue(dir, id string, num int, fate issueFate, expert bool) {
	j := &jgIssueGen{g: g, dir: dir, id: id, fate: fate, expert: expert}
	j.pickFiles()
	j.plan()
	stage, status := "implement", "in_progress"
	reached := []string{"plan"} // artifacts written, for state.yaml
	if fate != issuePlanned {
		if j.worker() {
			status = "paused"
		}
		reached = append(reached, "implement")
	}
	if fate == issueDone || fate == issueReviewFail || fate == issueTestFail {
		stage = "test"
		j.test()
		reached = append(reached, "test")
	}
	if fate == issueDone || fate == issueReviewFail {
		stage = "review"
		j.review()
		reached = append(reached, "review")
	}
	if fate == issueDone {
		stage, status = "git", "completed"
		j.git()
		reached = append(reached, "git")
	}
	if g.r.chance(0.6) {
		if fate == issuePlanned {
			stage = "implement"
		}
		j.state(num, status, stage, reached)
	}
}

// jgIssueGen generates the folder of one issue, a method a stage.
type jgIssueGen struct {
	g          *gen
	dir, id    string
	fate       issueFate
	expert     bool
	files      []string // the affected files, source and test in turn
	complexity string
	acs        []string // the acceptance criteria
	mapping    obj      // acceptance criterion → test
}

// pickFiles chooses the affected files and the issue's complexity.
func (j *jgIssueGen) pickFiles() {
	r := j.g.r
	area := pick(r, areas)
	l := pick(r, langs)
	seen := map[string]bool{}
	for k := r.between(1, 3); k > 0; k-- {
		stem := pick(r, fileStems)
		src, test := fmt.Sprintf(l.src, area, stem), fmt.Sprintf(l.test, area, stem)
		if seen[src] {
			continue
		}
		seen[src] = true
		j.files = append(j.files, src, test)
	}
	j.complexity = pick(r, []string{"trivial", "standard", "standard", "complex"})
}

// tier is a model tier the stage may have used.
func (j *jgIssueGen) tier() string {
	r := j.g.r
	if j.complexity == "complex" {
		return pick(r, []string{"standard", "high"})
	}
	return pick(r, []string{"fast", "standard", "standard", "high"})
}

// extra adds to o, the artifact of agent, what the expert edition and
// some agents add.
func (j *jgIssueGen) extra(o obj, agent string) obj {
	r, expert, tier := j.g.r, j.expert, j.tier
	if expert {
		o = append(o, kv{"tier_used", tier()})
		if r.chance(0.3) {
			o = append(o, kv{"cost_estimate", fmt.Sprintf("$%.2f", r.cost(0.05, 2))})
		}
		o = append(o, kv{"self_assessment", obj{
			{"confidence", float64(r.between(55, 99)) / 100},
			{"uncertainty_areas", []any{}},
			{"recommendation", "proceed to the next stage"},
		}})
	}
	if r.chance(0.7) {
		o = append(o, kv{"produced_by", agent})
	}
	return o
}

// plan writes plan.json: one step per affected file; every AC mapped to a
// test.
func (j *jgIssueGen) plan() {
	g, r, dir, id, files, expert := j.g, j.g.r, j.dir, j.id, j.files, j.expert
	var steps []any
	for i, f := range files {
		action := "implement"
		if strings.Contains(f, "test") {
			action = "test"
		}
		st := obj{{"order", i + 1}, {"action", action}, {"file", f}, {"description", r.sentence()}}
		if r.chance(0.5) {
			st = append(st, kv{"rationale", fmt.Sprintf("AC-%d", 1+i/2)})
		}
		if i > 0 && r.chance(0.6) {
			st = append(st, kv{"depends_on", []any{i}})
		}
		steps = append(steps, st)
	}
	j.mapping = obj{}
	for k := 1; k <= (len(files)+1)/2; k++ {
		ac := fmt.Sprintf("AC-%d: %s", k, r.criterion(k))
		j.acs = append(j.acs, ac)
		j.mapping = append(j.mapping, kv{ac, fmt.Sprintf("%s::test_%s_%d", files[2*k-1], strings.ReplaceAll(pick(r, fileStems), "-", "_"), k)})
	}
	plan := obj{{"affected_files", strs(files)}, {"steps", steps}, {"acceptance_mapping", j.mapping}}
	if expert {
		plan = append(plan, kv{"complexity", j.complexity})
	}
	if r.chance(0.6) {
		plan = append(plan, kv{"commit_plan", []any{fmt.Sprintf("feat(%s): %s", id, strings.ToLower(r.sentence()))}})
	}
	if r.chance(0.4) {
		plan = append(plan, kv{"risk_notes", []any{pick(r, risks)}})
	}
	g.add(dir+"/plan.json", "jg.plan", encJSON, j.extra(plan, "jg-subplanner"))
}

// worker writes worker-result.json, and reports whether the worker is
// blocked.
func (j *jgIssueGen) worker() (blocked bool) {
	g, r, dir, files, expert, fate := j.g, j.g.r, j.dir, j.files, j.expert, j.fate
	blocked = fate == issueBlocked
	ws := "completed"
	blockers := []any{}
	if blocked {
		ws = "blocked"
		blockers = []any{fmt.Sprintf("%s is not available in the test environment", pick(r, nouns))}
	}
	changed := files
	if !blocked && len(files) > 2 && r.chance(0.2) {
		changed = files[:len(files)-1]
	}
	if blocked {
		changed = files[:1]
	}
	w := obj{{"status", ws}, {"files_changed", strs(changed)}, {"blockers", blockers}, {"summary", r.words(r.between(15, 45)) + "."}}
	if expert && r.chance(0.2) && j.complexity != "complex" {
		w = append(w, kv{"escalation_history", []any{obj{{"from_tier", "fast"}, {"to_tier", "standard"}, {"reason", "Multi-file change exceeds fast scope"}}}})
	}
	g.add(dir+"/worker-result.json", "jg.worker-result", encJSON, j.extra(w, "jg-worker"))
	return blocked
}

// test writes test-result.json and, for a failure the tester did not
// triage, debug-diagnosis.json.
func (j *jgIssueGen) test() {
	g, r, dir, fate := j.g, j.g.r, j.dir, j.fate
	fail := fate == issueTestFail
	p1 := obj{}
	for i, c := range []string{"lint", "typecheck", "unit_tests"} {
		res, out := "PASS", fmt.Sprintf("%d passed", r.between(3, 200))
		if c == "lint" {
			out = "No lint errors"
		}
		if fail && i == 2 {
			res, out = "FAIL", fmt.Sprintf("%d passed, %d failed: %s", r.between(3, 200), r.between(1, 4), pick(r, outcomes))
		}
		p1 = append(p1, kv{c, obj{{"result", res}, {"output", out}}})
	}
	t := obj{{"verdict", "PASS"}, {"phase_1", p1}}
	triage := false
	if fail {
		t[0].V = "FAIL"
		t = append(t, kv{"phase_2", nil})
		if r.chance(0.3) {
			triage = true
			t = append(t, kv{"classification", "fix_target"}, kv{"inline_triage", true}, kv{"fix_instruction", r.sentence()})
		} else {
			t = append(t, kv{"classification", nil}, kv{"inline_triage", false})
		}
	} else {
		if r.chance(0.5) {
			t = append(t, kv{"phase_2", obj{{"integration", obj{{"result", "PASS"}, {"output", fmt.Sprintf("%d scenarios passed", r.between(1, 9))}}}}})
		} else {
			t = append(t, kv{"phase_2", nil})
		}
		t = append(t, kv{"classification", nil}, kv{"inline_triage", false})
	}
	g.add(dir+"/test-result.json", "jg.test-result", encJSON, j.extra(t, "jg-tester"))
	if fail && !triage {
		j.debugDiagnosis()
	}
}

// debugDiagnosis writes debug-diagnosis.json.
func (j *jgIssueGen) debugDiagnosis() {
	g, r, dir, files := j.g, j.g.r, j.dir, j.files
	class := pick(r, []string{"fix_target", "fix_target", "plan_defect", "escalate"})
	var line any = r.between(5, 400)
	if r.chance(0.3) {
		line = fmt.Sprint(line)
	}
	dd := obj{
		{"failure_source", "unit_test"},
		{"failure_description", pick(r, outcomes) + " — assertion failed"},
		{"root_cause", r.sentence()},
		{"root_cause_file", files[0]},
		{"root_cause_line", line},
		{"classification", class},
	}
	switch class {
	case "fix_target":
		dd = append(dd, kv{"escalation_sub", nil}, kv{"fix_instructions", r.sentence()}, kv{"plan_fix_instructions", nil})
	case "plan_defect":
		dd = append(dd, kv{"escalation_sub", nil}, kv{"fix_instructions", nil}, kv{"plan_fix_instructions", "Add a step for " + pick(r, nouns)})
	default:
		dd = append(dd, kv{"escalation_sub", pick(r, []string{"technical_complexity", "ambiguous_requirement"})}, kv{"fix_instructions", nil}, kv{"plan_fix_instructions", nil})
	}
	dd = append(dd, kv{"related_failures", []any{}})
	g.add(dir+"/debug-diagnosis.json", "jg.debug-diagnosis", encJSON, j.extra(dd, "jg-debugger"))
}

// review writes review-result.json.
func (j *jgIssueGen) review() {
	g, r, dir, files, fate := j.g, j.g.r, j.dir, j.files, j.fate
	finding := func() any {
		return obj{{"file", pick(r, files)}, {"line", r.between(1, 300)}, {"description", r.sentence()}, {"fix", r.sentence()}}
	}
	var blockers, concerns, nits []any
	for k := r.between(0, 3); k > 0; k-- {
		nits = append(nits, finding())
	}
	rv := obj{{"verdict", "PASS"}}
	if fate == issueReviewFail {
		rv[0].V = "FAIL"
		for k := r.between(1, 2); k > 0; k-- {
			blockers = append(blockers, finding())
		}
		if r.chance(0.5) {
			concerns = append(concerns, finding())
		}
	}
	for _, l := range []*[]any{&blockers, &concerns, &nits} {
		if *l == nil {
			*l = []any{}
		}
	}
	rv = append(rv, kv{"blockers", blockers}, kv{"concerns", concerns}, kv{"nits", nits})
	if fate == issueReviewFail {
		rv = append(rv, kv{"trim_instructions", "Address the blockers: " + r.sentence()})
	} else {
		rv = append(rv, kv{"trim_instructions", nil})
	}
	g.add(dir+"/review-result.json", "jg.review-result", encJSON, j.extra(rv, "jg-reviewer"))
}

// git writes git-result.json.
func (j *jgIssueGen) git() {
	g, r, dir, id := j.g, j.g.r, j.dir, j.id
	sha := r.hex(7)
	if r.chance(0.5) {
		sha = r.hex(40)
	}
	pr := r.between(1, 4000)
	gr := obj{
		{"branch", fmt.Sprintf("feature/%s-%s", strings.ToLower(id), strings.ReplaceAll(pick(r, nouns), " ", "-"))},
		{"commit_sha", sha},
		{"commit_message", fmt.Sprintf("feat(%s): %s", id, strings.ToLower(r.sentence()))},
		{"pr_number", pr},
		{"pr_url", fmt.Sprintf("https://github.com/org/repo/pull/%d", pr)},
		{"ci_status", pick(r, []string{"pending", "success"})},
		{"downstream_unblocked", []any{}},
	}
	g.add(dir+"/git-result.json", "jg.git-result", encJSON, j.extra(gr, "jg-git"))
}

// state writes state.yaml: the stages reached, the one the issue is at.
func (j *jgIssueGen) state(num int, status, stage string, reached []string) {
	g, r, dir, id, fate := j.g, j.g.r, j.dir, j.id, j.fate
	acStatus := "implemented"
	switch {
	case fate == issueDone:
		acStatus = "verified"
	case fate == issuePlanned || fate == issueBlocked:
		acStatus = "pending"
	}
	var acl []any
	for i, ac := range j.acs {
		acl = append(acl, obj{{"id", fmt.Sprintf("AC-%d", i+1)}, {"text", ac}, {"test_mapped", j.mapping[i].V}, {"status", acStatus}})
	}
	artifact := map[string]string{"plan": "plan.json", "implement": "worker-result.json", "test": "test-result.json", "review": "review-result.json", "git": "git-result.json"}
	agent := map[string]string{"plan": "jg-subplanner", "implement": "jg-worker", "test": "jg-tester", "review": "jg-reviewer", "git": "jg-git"}
	stages := obj{}
	rel := dir[strings.Index(dir, ".pipeline/"):]
	for _, s := range reached {
		result := "PASS"
		if (s == "test" && fate == issueTestFail) || (s == "review" && fate == issueReviewFail) || (s == "implement" && fate == issueBlocked) {
			result = "FAIL"
		}
		stages = append(stages, kv{s, obj{
			{"agent", agent[s]},
			{"result", result},
			{"summary", r.words(8)},
			{"artifact_path", rel + "/" + artifact[s]},
		}})
	}
	g.add(dir+"/state.yaml", "jg.state", encYAML, obj{
		{"issue", id},
		{"issue_number", num},
		{"status", status},
		{"current_stage", stage},
		{"acceptance_criteria", acl},
		{"stages", stages},
		{"retries", []any{}},
		{"routing_decisions", []any{}},
		{"running_summary", r.words(20) + "."},
	})
}
