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
	r := g.r
	area := pick(r, areas)
	l := pick(r, langs)
	var files []string
	seen := map[string]bool{}
	for k := r.between(1, 3); k > 0; k-- {
		stem := pick(r, fileStems)
		src, test := fmt.Sprintf(l.src, area, stem), fmt.Sprintf(l.test, area, stem)
		if seen[src] {
			continue
		}
		seen[src] = true
		files = append(files, src, test)
	}
	complexity := pick(r, []string{"trivial", "standard", "standard", "complex"})
	tier := func() string {
		if complexity == "complex" {
			return pick(r, []string{"standard", "high"})
		}
		return pick(r, []string{"fast", "standard", "standard", "high"})
	}
	extra := func(o obj, agent string) obj {
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

	// plan.json: one step per affected file; every AC mapped to a test.
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
	mapping := obj{}
	var acs []string
	for k := 1; k <= (len(files)+1)/2; k++ {
		ac := fmt.Sprintf("AC-%d: %s", k, r.criterion(k))
		acs = append(acs, ac)
		mapping = append(mapping, kv{ac, fmt.Sprintf("%s::test_%s_%d", files[2*k-1], strings.ReplaceAll(pick(r, fileStems), "-", "_"), k)})
	}
	plan := obj{{"affected_files", strs(files)}, {"steps", steps}, {"acceptance_mapping", mapping}}
	if expert {
		plan = append(plan, kv{"complexity", complexity})
	}
	if r.chance(0.6) {
		plan = append(plan, kv{"commit_plan", []any{fmt.Sprintf("feat(%s): %s", id, strings.ToLower(r.sentence()))}})
	}
	if r.chance(0.4) {
		plan = append(plan, kv{"risk_notes", []any{pick(r, risks)}})
	}
	g.add(dir+"/plan.json", "jg.plan", encJSON, extra(plan, "jg-subplanner"))

	stage, status := "implement", "in_progress"
	var reached []string // artifacts written, for state.yaml
	reached = append(reached, "plan")
	if fate != issuePlanned {
		blocked := fate == issueBlocked
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
		if expert && r.chance(0.2) && complexity != "complex" {
			w = append(w, kv{"escalation_history", []any{obj{{"from_tier", "fast"}, {"to_tier", "standard"}, {"reason", "Multi-file change exceeds fast scope"}}}})
		}
		g.add(dir+"/worker-result.json", "jg.worker-result", encJSON, extra(w, "jg-worker"))
		reached = append(reached, "implement")
		if blocked {
			status = "paused"
		}
	}
	if fate == issueDone || fate == issueReviewFail || fate == issueTestFail {
		stage = "test"
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
		g.add(dir+"/test-result.json", "jg.test-result", encJSON, extra(t, "jg-tester"))
		reached = append(reached, "test")
		if fail && !triage {
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
			g.add(dir+"/debug-diagnosis.json", "jg.debug-diagnosis", encJSON, extra(dd, "jg-debugger"))
		}
	}
	if fate == issueDone || fate == issueReviewFail {
		stage = "review"
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
		g.add(dir+"/review-result.json", "jg.review-result", encJSON, extra(rv, "jg-reviewer"))
		reached = append(reached, "review")
	}
	if fate == issueDone {
		stage, status = "git", "completed"
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
		g.add(dir+"/git-result.json", "jg.git-result", encJSON, extra(gr, "jg-git"))
		reached = append(reached, "git")
	}

	if r.chance(0.6) {
		acStatus := "implemented"
		switch {
		case fate == issueDone:
			acStatus = "verified"
		case fate == issuePlanned || fate == issueBlocked:
			acStatus = "pending"
		}
		var acl []any
		for i, ac := range acs {
			acl = append(acl, obj{{"id", fmt.Sprintf("AC-%d", i+1)}, {"text", ac}, {"test_mapped", mapping[i].V}, {"status", acStatus}})
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
		if fate == issuePlanned {
			stage = "implement"
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
}
