package corpus

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

var (
	taxonomy = []string{"executor_incomplete", "executor_wrong_approach", "compilation_failure", "lint_failure", "build_failure",
		"acceptance_criteria_unmet", "scope_creep", "context_exhaustion", "tool_failure", "coordination_failure"}
	traceActions = []string{"file_read", "file_write", "command_run", "tool_call", "agent_spawn", "decision"}
	pipeline     = []string{"research", "plan", "plan_check", "execute", "verify", "judge"}
)

type apPhase struct {
	id, name, typ string
	status        string // not_started, in_progress, completed, failed, needs_human_verification
	steps         []string
	debug, replan int
	tokens        int
	start, end    time.Time
	verdict       string // human verdict for needs_human_verification, "" if none yet
	category      string // failure category for failed
}

// autopilot generates one Autopilot run: its state (or archived state),
// circuit-breaker config, per-phase traces, post-mortems and learnings.
func (g *gen) autopilot(base string) {
	r := g.r
	nPhases := r.between(3, 8)
	var phases []*apPhase
	for i := 1; len(phases) < nPhases; i++ {
		phases = append(phases, &apPhase{id: strconv.Itoa(i)})
		if len(phases) < nPhases && r.chance(0.2) {
			phases = append(phases, &apPhase{id: fmt.Sprintf("%d.1", i)})
		}
	}
	runStatus := "completed"
	switch x := r.Float64(); {
	case x < 0.3:
		runStatus = "running"
	case x < 0.5:
		runStatus = "failed"
	case x < 0.6:
		runStatus = "paused"
	}
	start := g.clock
	cur, t := g.apSchedule(phases, runStatus, start.Add(time.Minute))
	g.clock = t.Add(time.Hour)

	runID := "run-" + start.Format("2006-01-02-150405")
	state := g.apState(runID, runStatus, start, t, phases, cur)
	if runStatus == "completed" {
		g.add(fmt.Sprintf("%s/.autopilot/archive/%s.json", base, runID), "autopilot.state", encJSON, state)
	} else {
		g.add(base+"/.autopilot/state.json", "autopilot.state", encJSON, state)
	}
	if r.chance(0.3) {
		g.apOlderRun(base, start)
	}
	if r.chance(0.6) {
		g.apConfig(base)
	}

	// Traces of every phase that ran.
	for _, p := range phases {
		if p.status != "not_started" {
			g.apTraces(base, p)
		}
	}
	g.apLearnings(base, phases)
}

// apSchedule gives the phases of a run with runStatus their names, states,
// steps and times from t on, and returns the current phase and the run's
// last time.
func (g *gen) apSchedule(phases []*apPhase, runStatus string, t time.Time) (*apPhase, time.Time) {
	r := g.r
	stop := len(phases) // index of the current phase (not completed)
	if runStatus != "completed" {
		stop = r.IntN(len(phases))
	}
	cur := phases[len(phases)-1]
	for i, p := range phases {
		p.name = pick(r, themes)
		p.typ = pick(r, []string{"ui", "protocol", "data", "mixed"})
		switch {
		case i < stop:
			p.status = "completed"
			if r.chance(0.12) {
				p.status = "needs_human_verification"
				if runStatus == "completed" {
					p.verdict = "pass"
				}
			}
			p.steps = pipeline
		case i == stop:
			cur = p
			k := r.between(1, len(pipeline))
			p.steps = pipeline[:k]
			p.status = "in_progress"
			if runStatus == "failed" {
				p.status = "failed"
				p.steps = pipeline
				p.category = pick(r, taxonomy)
			}
		default:
			p.status = "not_started"
		}
		if p.status == "not_started" {
			continue
		}
		p.debug = r.between(0, 2)
		if p.status == "failed" {
			p.debug = 3
			p.steps = append(append([]string{}, pipeline...), "debug")
		}
		if p.debug > 0 && p.status != "failed" && len(p.steps) == len(pipeline) {
			p.steps = append(append([]string{}, pipeline...), "debug")
		}
		if r.chance(0.15) {
			p.replan = 1
		}
		p.tokens = r.between(30, 420) * 1000
		p.start = t
		t = t.Add(time.Duration(r.between(60, 150)) * time.Minute)
		p.end = t
	}
	if runStatus == "completed" {
		cur = phases[len(phases)-1]
	}
	return cur, t
}

// apOlderRun archives an older, completed run, some days before start.
func (g *gen) apOlderRun(base string, start time.Time) {
	r := g.r
	old := start.Add(-time.Duration(r.between(2, 20)) * 24 * time.Hour)
	var ops []*apPhase
	ot := old.Add(time.Minute)
	for i := 1; i <= r.between(2, 5); i++ {
		p := &apPhase{id: strconv.Itoa(i), name: pick(r, themes), typ: "mixed", status: "completed", steps: pipeline, tokens: r.between(30, 300) * 1000, start: ot}
		ot = ot.Add(time.Duration(r.between(60, 150)) * time.Minute)
		p.end = ot
		ops = append(ops, p)
	}
	oid := "run-" + old.Format("2006-01-02-150405")
	g.add(fmt.Sprintf("%s/.autopilot/archive/%s.json", base, oid), "autopilot.state", encJSON, g.apState(oid, "completed", old, ot, ops, ops[len(ops)-1]))
}

// apConfig writes the circuit-breaker config.
func (g *gen) apConfig(base string) {
	g.add(base+"/.autopilot/config.json", "autopilot.circuit-breaker-config", encJSON, obj{{"circuit_breaker_config", obj{
		{"no_progress_threshold", 3},
		{"same_error_threshold", 5},
		{"output_degradation_pct", 70},
		{"max_debug_attempts_per_phase", 3},
		{"max_replan_attempts_per_phase", 1},
		{"max_total_retries_per_run", 10},
		{"cooldown_minutes", pick(g.r, []int{5, 5, 10})},
		{"cost_cap_tokens_per_phase", 500000},
		{"cost_cap_tokens_total", 5000000},
		{"wall_clock_timeout_minutes_per_phase", 120},
		{"wall_clock_timeout_minutes_total", 1440},
	}}})
}

// apLearnings writes the post-mortem of every failed phase and the
// learnings of the run, if there are any.
func (g *gen) apLearnings(base string, phases []*apPhase) {
	r := g.r
	var learn strings.Builder
	learn.WriteString("# Learnings (current run)\n")
	entries := 0
	for _, p := range phases {
		if p.status == "failed" {
			g.apPostmortem(base, p)
			fmt.Fprintf(&learn, "\n### Phase %s failure -- %s\n**Prevention rule:** %s.\n**Context:** Phase %s (%s) failed with category `%s`. Recorded: %s.\n",
				p.id, p.category, r.sentence(), p.id, p.name, p.category, ts(p.end))
			entries++
		}
		if p.verdict != "" {
			fmt.Fprintf(&learn, "\n### Human Verdict: Phase %s -- PASS (confidence calibration)\nPhase %s (%s) was deferred to human review but passed without issues.\n**Calibration:** Future phases with similar characteristics should increase autonomous completion confidence.\n",
				p.id, p.id, p.name)
			entries++
		}
	}
	if entries > 0 {
		g.add(base+"/.autopilot/learnings.md", "autopilot.learnings", encMarkdown, learn.String())
	}
}

// apRun accumulates the state of one run: its event log and its counts.
type apRun struct {
	r                                                               rnd
	events                                                          []any
	completed, failed, deferred, processed, debugs, replans, tokens int
	retryBudget                                                     int // max_total_retries_per_run: the run halts at the cap
}

func (a *apRun) ev(at time.Time, phase, step, event string, details obj) {
	a.events = append(a.events, obj{{"timestamp", ts(at)}, {"phase", phase}, {"step", step}, {"event", event}, {"details", details}})
}

func (a *apRun) hash() string { return "sha256:" + a.r.hex(64) }

func (g *gen) apState(runID, runStatus string, start, end time.Time, phases []*apPhase, cur *apPhase) obj {
	r := g.r
	a := &apRun{r: r, retryBudget: 10}
	a.ev(start, "", "", "run_started", obj{{"run_id", runID}})
	phaseMap := obj{}
	for _, p := range phases {
		phaseMap = append(phaseMap, kv{"phase_" + p.id, a.phase(p, end)})
	}
	for _, p := range phases {
		if p.verdict != "" {
			a.ev(end, p.id, "", "human_verdict_recorded", obj{{"verdict", p.verdict}})
		}
	}
	if a.processed >= 2 && float64(a.deferred)/float64(a.processed) > 0.5 {
		a.ev(end, "", "", "high_defer_rate_warning", obj{{"deferred", a.deferred}, {"processed", a.processed}})
	}
	breaker := obj{{"state", "closed"}, {"consecutive_no_progress", 0}, {"consecutive_same_error", 0}, {"last_error", nil}, {"cooldown_until", nil}}
	switch runStatus {
	case "completed":
		a.ev(end, "", "", "run_completed", obj{{"phases_completed", a.completed}})
	case "failed":
		a.ev(end, cur.id, "", "run_halted", obj{{"reason", cur.category}})
	case "paused":
		a.ev(end, cur.id, "", "circuit_breaker_opened", obj{{"reason", "no progress"}})
		breaker = obj{{"state", "open"}, {"consecutive_no_progress", 3}, {"consecutive_same_error", 1}, {"last_error", "verify: " + pick(r, outcomes)}, {"cooldown_until", ts(end.Add(5 * time.Minute))}}
	}
	currentStep := "execute"
	if len(cur.steps) > 0 {
		currentStep = cur.steps[len(cur.steps)-1]
	}
	if runStatus == "completed" {
		currentStep = "judge"
	}
	return obj{
		{"_meta", obj{
			{"version", "1.0"},
			{"run_id", runID},
			{"started_at", ts(start)},
			{"last_checkpoint", ts(end)},
			{"status", runStatus},
			{"total_phases", len(phases)},
			{"current_phase", cur.id},
			{"current_step", currentStep},
			{"orchestrator_context_pct", r.between(5, 80)},
			{"human_deferred_count", a.deferred},
			{"total_phases_processed", a.processed},
		}},
		{"spec", obj{{"path", ".planning/ROADMAP.md"}, {"hash", a.hash()}, {"locked_at", ts(start)}}},
		{"roadmap_path", ".planning/ROADMAP.md"},
		{"phases", phaseMap},
		{"circuit_breaker", breaker},
		{"event_log", a.events},
		{"metrics", obj{
			{"total_tokens_used", a.tokens + r.between(0, 50)*1000},
			{"total_duration_minutes", int(end.Sub(start).Minutes())},
			{"phases_completed", a.completed},
			{"phases_failed", a.failed},
			{"debug_loops_total", a.debugs},
			{"replan_count", a.replans},
		}},
	}
}

// phase is the state of phase p, its events logged and counted; end is the
// run's last time.
func (a *apRun) phase(p *apPhase, end time.Time) obj {
	r := a.r
	rec := obj{{"phase_type", p.typ}, {"status", p.status}}
	if p.status == "not_started" {
		return append(rec, kv{"started_at", nil}, kv{"completed_at", nil}, kv{"steps", obj{}},
			kv{"debug_attempts", 0}, kv{"replan_attempts", 0}, kv{"tokens_used", 0},
			kv{"human_verify_justification", nil}, kv{"human_verdict", nil})
	}
	done := p.status == "completed" || p.status == "needs_human_verification"
	at := p.start
	step := func() time.Time { at = at.Add(time.Duration(r.between(30, 120)) * time.Second); return at }
	a.ev(at, p.id, "", "phase_started", obj{})
	steps := obj{{"preflight", obj{{"status", "pass"}, {"timestamp", ts(step())}}}}
	nTasks := r.between(2, 6)
	for _, s := range p.steps {
		if s == "debug" {
			continue
		}
		a.ev(step(), p.id, s, "step_started", obj{})
		rec := a.step(p, s, nTasks, step)
		if !(s == "verify" && p.status == "failed") {
			a.ev(step(), p.id, s, "step_completed", obj{})
		} else {
			a.ev(step(), p.id, s, "step_failed", obj{{"reason", p.category}})
		}
		steps = append(steps, kv{s, rec})
	}
	for k := 1; k <= p.debug; k++ {
		a.ev(step(), p.id, "debug", "debug_attempt", obj{{"attempt", k}})
	}
	if p.replan > 0 {
		a.ev(step(), p.id, "plan", "replan_attempt", obj{{"attempt", 1}})
	}
	a.ev(step(), "", "", "checkpoint_written", obj{})
	rec = append(rec, kv{"started_at", ts(p.start)})
	if done || p.status == "failed" {
		rec = append(rec, kv{"completed_at", ts(p.end)})
	} else {
		rec = append(rec, kv{"completed_at", nil})
	}
	rec = append(rec, kv{"steps", steps}, kv{"debug_attempts", p.debug}, kv{"replan_attempts", p.replan}, kv{"tokens_used", p.tokens})
	var hvj, hv any
	if p.status == "needs_human_verification" {
		hvj = obj{{"checkpoint_task_id", fmt.Sprintf("task_%02d", nTasks)}, {"task_description", "Confirm the " + pick(r, nouns) + " against production data with the product owner"},
			{"auto_tasks_passed", nTasks - 1}, {"auto_tasks_total", nTasks - 1}}
		if p.verdict != "" {
			hv = obj{{"verdict", p.verdict}, {"timestamp", ts(end)}, {"issues", []any{}}}
		}
	}
	rec = append(rec, kv{"human_verify_justification", hvj}, kv{"human_verdict", hv})
	a.count(p)
	return rec
}

// count counts phase p in the run's totals, logging how it ended.
func (a *apRun) count(p *apPhase) {
	switch p.status {
	case "completed":
		a.completed++
		a.processed++
		a.ev(p.end, p.id, "", "phase_completed", obj{{"alignment_score", a.r.between(7, 10)}})
	case "needs_human_verification":
		a.deferred++
		a.processed++
	case "failed":
		a.failed++
		a.processed++
		a.ev(p.end, p.id, "", "phase_failed", obj{{"category", p.category}})
	}
	a.debugs += p.debug
	a.replans += p.replan
	a.tokens += p.tokens
}

// step is the record of step s of phase p; step() is the phase's clock.
func (a *apRun) step(p *apPhase, s string, nTasks int, step func() time.Time) obj {
	r := a.r
	dir := ".planning/phases/" + p.id
	switch s {
	case "research":
		return obj{{"status", "completed"}, {"output", dir + "/RESEARCH.md"}, {"hash", a.hash()}}
	case "plan":
		return obj{{"status", "completed"}, {"output", dir + "/PLAN.md"}, {"hash", a.hash()}, {"validation_rounds", 1 + p.replan}}
	case "plan_check":
		return obj{{"status", "pass"}, {"confidence", r.between(7, 10)}}
	case "execute":
		tasks := obj{}
		for k := 1; k <= nTasks; k++ {
			tid := fmt.Sprintf("task_%02d", k)
			sha := r.hex(7)
			retries := 0
			if a.retryBudget > 0 && r.chance(0.15) {
				retries = 1
				a.retryBudget--
			}
			tasks = append(tasks, kv{tid, obj{{"status", "completed"}, {"commit", sha}, {"retries", retries}}})
			a.ev(step(), p.id, s, "task_completed", obj{{"task", tid}, {"commit", sha}})
		}
		return obj{{"status", "completed"}, {"tasks", tasks}}
	case "verify":
		pass := p.status != "failed"
		status := "pass"
		if !pass {
			status = "fail"
		}
		score := r.between(7, 10)
		if !pass {
			score = r.between(3, 6)
		}
		return obj{{"status", status}, {"automated", obj{{"compile", true}, {"tests", pass}, {"lint", true}}}, {"alignment_score", score}, {"scope_creep", []any{}}}
	case "judge":
		if p.status == "failed" {
			return obj{{"alignment", r.between(3, 6)}, {"recommendation", pick(r, []string{"debug", "halt"})}}
		}
		return obj{{"alignment", r.between(7, 10)}, {"recommendation", "proceed"}}
	}
	return nil
}

// apTraces writes <step>-trace.jsonl per step and their concatenation with
// phase-runner spans, TRACE.jsonl.
func (g *gen) apTraces(base string, p *apPhase) {
	r := g.r
	dir := fmt.Sprintf("%s/.planning/phases/%s", base, p.id)
	at := p.start
	span := func(step string) obj {
		at = at.Add(time.Duration(r.between(1, 20)) * time.Second)
		action := pick(r, traceActions)
		in, out := fmt.Sprintf("%s %s", action, r.file(pick(r, areas))), "ok"
		switch action {
		case "command_run":
			in = pick(r, []string{"npm test", "go build ./...", "pytest -q", "grep -rn TODO src", "git diff --stat"})
			out = fmt.Sprintf("exit 0 (%d lines of output)", r.between(1, 400))
		case "agent_spawn":
			in = fmt.Sprintf("Spawning %s agent for phase %s", step, p.id)
			out = fmt.Sprintf("Agent completed: %d/%d tasks", r.between(1, 5), 5)
		case "decision":
			in = "Gate check: " + pick(r, outcomes)
			out = pick(r, []string{"proceed", "debug", "re-plan"})
		case "file_write":
			out = fmt.Sprintf("File written successfully (%d lines)", r.between(5, 1200))
		}
		status := "success"
		if r.chance(0.05) {
			status = pick(r, []string{"failure", "skipped"})
		}
		return obj{{"timestamp", ts(at)}, {"phase_id", p.id}, {"step", step}, {"action", action},
			{"input_summary", in}, {"output_summary", out}, {"duration_ms", r.between(5, 120000)}, {"status", status}}
	}
	var all []any
	for _, s := range p.steps {
		all = append(all, span("phase_runner"))
		n := r.between(3, 14)
		if s == "execute" && r.chance(0.25) {
			n = r.between(60, 250) // a long execution: the big traces
		}
		var lines []any
		for k := 0; k < n; k++ {
			lines = append(lines, span(s))
		}
		all = append(all, lines...)
		g.add(dir+"/"+s+"-trace.jsonl", "autopilot.trace", encJSONL, lines)
	}
	all = append(all, span("phase_runner"))
	g.add(dir+"/TRACE.jsonl", "autopilot.trace", encJSONL, all)
}

func (g *gen) apPostmortem(base string, p *apPhase) {
	r := g.r
	first := p.start.Add(time.Duration(r.between(5, 30)) * time.Minute)
	var timeline []any
	at := p.start
	for k := r.between(3, 10); k > 0; k-- {
		at = at.Add(time.Duration(r.between(1, 6)) * time.Minute)
		timeline = append(timeline, obj{{"timestamp", ts(at)}, {"step", pick(r, pipeline)}, {"event", r.words(6)}, {"status", pick(r, []string{"success", "failure", "partial"})}})
	}
	var fixes []any
	for k := 1; k <= p.debug; k++ {
		fixes = append(fixes, obj{{"attempt", k}, {"description", r.sentence()}, {"commit_sha", r.hex(7)}, {"resolved", []any{fmt.Sprintf("criterion_%d", k)}}, {"remaining", []any{"criterion_" + strconv.Itoa(k+1)}}})
	}
	g.add(fmt.Sprintf("%s/.autopilot/diagnostics/phase-%s-postmortem.json", base, p.id), "autopilot.postmortem", encJSON, obj{
		{"phase_id", p.id},
		{"phase_name", p.name},
		{"timestamp", ts(p.end)},
		{"status", "failed"},
		{"root_cause", obj{{"category", p.category}, {"description", r.sentence()}, {"first_observed_at", ts(first)}, {"step", "verify"}}},
		{"timeline", timeline},
		{"evidence", obj{
			{"commands_run", []any{"npm test -> 3 failed (FAIL)", "git diff HEAD~3 --stat -> 4 files changed"}},
			{"files_checked", []any{fmt.Sprintf("%s:%d -- %s", r.file(pick(r, areas)), r.between(1, 500), pick(r, outcomes))}},
		}},
		{"attempted_fixes", fixes},
		{"prevention_rule", r.sentence() + "."},
	})
}
