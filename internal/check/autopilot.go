package check

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/phasegate/phasegate/internal/artifact"
)

// Autopilot rules (docs/contracts/autopilot.md, docs/rules.md). A group is one
// project directory: .autopilot/state.json (the active run), the archived runs
// .autopilot/archive/run-*.json (same kind, history), the circuit-breaker
// config .autopilot/config.json, the post-mortems
// .autopilot/diagnostics/phase-N-postmortem.json, .autopilot/learnings.md and
// the traces .planning/phases/<id>/{TRACE.jsonl,<step>-trace.jsonl}.
//
// "Latest" for the gate is the run in .autopilot/state.json, and only that
// run: the orchestrator keeps exactly one active state file and moves a
// finished run to .autopilot/archive/, so archived runs are history. They are
// still checked (every single-file state rule applies to them) but they never
// produce a gate decision. The status records the run's `_meta.status` (failed
// → HOLD, paused → ADVISORY, running/completed → SHIP) and the circuit
// breaker's state (open → HOLD). Cross-file rules that compare a post-mortem
// or learnings.md with "the state" use .autopilot/state.json only.
//
// Caps and thresholds come from the group's circuit-breaker config when it is
// present (a missing or mistyped key falls back to its default), else from the
// seed's defaults (3 debug attempts, 1 re-plan, 10 retries, 500000 tokens per
// phase, 5000000 per run, 3 no-progress steps, 5 identical errors). The phase
// gate's pass score is `autopilot.pass_score` of .github/phasegate.yml
// (default 7, the seed's; HEAD uses 9 but also completes phases below it with
// a confidence diagnostic, so `_meta.pass_threshold` is not used as the floor),
// and the defer-rate threshold is `autopilot.defer_rate` (default 0.50, the
// seed's; HEAD uses 0.05).
//
// The seed's "a running status with last_checkpoint older than 10 minutes is
// presumed crashed" depends on the wall clock: any committed running state is
// stale minutes after it was written, and output must not depend on when
// phasegate runs. It is not implemented; instead the status shows the last
// checkpoint of a running run, and autopilot.state.checkpoint-after-events
// checks what the files can say (the checkpoint is rewritten on every write,
// so no event may be later than it).

var _ = registerFamily(&family{
	name:  "autopilot",
	check: checkAutopilot,
	rules: append([]Rule{
		{ID: "autopilot.state.current-phase-exists", Severity: SeverityWarning, Basis: "I", Summary: "`_meta.current_phase` names a phase of the run (`phases` has the key \"phase_\" + current_phase)."},
		{ID: "autopilot.state.checkpoint-after-start", Severity: SeverityWarning, Basis: "I", Summary: "`_meta.last_checkpoint` is not earlier than `_meta.started_at`."},
		{ID: "autopilot.state.checkpoint-after-events", Severity: SeverityWarning, Basis: "I", Summary: "No event of `event_log` is later than `_meta.last_checkpoint` (the checkpoint is rewritten on every state write; this replaces the wall-clock \"presumed crashed\" check, which would make output depend on the time phasegate runs)."},
		{ID: "autopilot.state.human-verify-iff-deferred", Severity: SeverityError, Basis: "S", Summary: "A phase has a non-null `human_verify_justification` exactly when its status is needs_human_verification (STAT-02)."},
		{ID: "autopilot.state.checkpoint-task-id", Severity: SeverityError, Basis: "R", Summary: "A needs_human_verification phase's `human_verify_justification.checkpoint_task_id` is non-empty (orchestrator check 13)."},
		{ID: "autopilot.state.human-verdict-needs-deferral", Severity: SeverityError, Basis: "S", Summary: "A phase with a `human_verdict` was deferred to a human: its status is needs_human_verification, it has a `human_verify_justification`, or `_meta.deferral_history` records it as deferred (HEAD)."},
		{ID: "autopilot.state.verdict-issues", Severity: SeverityWarning, Basis: "I", Summary: "A human verdict of fail or issues_found lists its `issues`."},
		{ID: "autopilot.state.debug-cap", Severity: SeverityError, Basis: "S", Summary: "`debug_attempts` is at most `max_debug_attempts_per_phase` (default 3)."},
		{ID: "autopilot.state.replan-cap", Severity: SeverityError, Basis: "S", Summary: "`replan_attempts` is at most `max_replan_attempts_per_phase` (default 1)."},
		{ID: "autopilot.state.retry-cap", Severity: SeverityError, Basis: "S", Summary: "The task retries of all phases add up to at most `max_total_retries_per_run` (default 10)."},
		{ID: "autopilot.state.phase-token-cap", Severity: SeverityError, Basis: "S", Summary: "A phase's `tokens_used` is at most `cost_cap_tokens_per_phase` (default 500000), unless the state records the trip (the phase failed, the run halted, or the breaker is not closed)."},
		{ID: "autopilot.state.total-token-cap", Severity: SeverityError, Basis: "S", Summary: "`metrics.total_tokens_used` is at most `cost_cap_tokens_total` (default 5000000), unless the run halted (status failed or paused)."},
		{ID: "autopilot.state.metrics-phases-completed", Severity: SeverityWarning, Basis: "I", Summary: "`metrics.phases_completed` equals the number of completed phases."},
		{ID: "autopilot.state.metrics-phases-failed", Severity: SeverityWarning, Basis: "I", Summary: "`metrics.phases_failed` equals the number of failed phases."},
		{ID: "autopilot.state.metrics-debug-loops", Severity: SeverityWarning, Basis: "I", Summary: "`metrics.debug_loops_total` equals the sum of the phases' `debug_attempts`."},
		{ID: "autopilot.state.metrics-replan-count", Severity: SeverityWarning, Basis: "I", Summary: "`metrics.replan_count` equals the sum of the phases' `replan_attempts`."},
		{ID: "autopilot.state.metrics-total-tokens", Severity: SeverityWarning, Basis: "I", Summary: "`metrics.total_tokens_used` is at least the sum of the phases' `tokens_used`."},
		{ID: "autopilot.state.defer-counter-order", Severity: SeverityWarning, Basis: "I", Summary: "`_meta.human_deferred_count` ≤ `_meta.total_phases_processed` ≤ `_meta.total_phases` (STAT-04)."},
		{ID: "autopilot.state.defer-count-covers-deferred", Severity: SeverityWarning, Basis: "I", Summary: "`_meta.human_deferred_count` is at least the number of phases whose status is needs_human_verification."},
		{ID: "autopilot.state.high-defer-rate-event", Severity: SeverityError, Basis: "S", Summary: "When human_deferred_count / total_phases_processed exceeds `autopilot.defer_rate` (default 0.50, the seed's; HEAD uses 0.05) with at least 2 phases processed, `event_log` has a high_defer_rate_warning event."},
		{ID: "autopilot.state.breaker-open-at-threshold", Severity: SeverityWarning, Basis: "I", Summary: "The circuit breaker is not closed while `consecutive_no_progress` ≥ `no_progress_threshold` (default 3) or `consecutive_same_error` ≥ `same_error_threshold` (default 5)."},
		{ID: "autopilot.state.breaker-cooldown-when-open", Severity: SeverityWarning, Basis: "I", Summary: "`circuit_breaker.cooldown_until` is set only while the breaker is open."},
		{ID: "autopilot.state.breaker-last-error", Severity: SeverityWarning, Basis: "I", Summary: "`circuit_breaker.last_error` is set when `consecutive_same_error` > 0."},
		{ID: "autopilot.state.phase-gate", Severity: SeverityWarning, Basis: "I", Summary: "A completed phase passed the gate: alignment (HEAD's `steps.rate.alignment_score`, else `steps.judge.alignment`) ≥ `autopilot.pass_score` (default 7; not checked when HEAD's `force_incomplete` is true), judge recommendation proceed, verify status pass."},
		{ID: "autopilot.state.plan-check-confidence", Severity: SeverityError, Basis: "R", Summary: "A plan_check with status pass has `confidence` ≥ 7 (the playbook's gate: pass && confidence >= 7)."},
		{ID: "autopilot.state.event-type", Severity: SeverityWarning, Basis: "S", Summary: "Each `event_log[].event` is one of the seed's 23 event types or a type HEAD added (self_audit_*, remediation_*, rubber_stamp_warning, …); an unknown type is a warning."},
		{ID: "autopilot.state.event-order", Severity: SeverityWarning, Basis: "I", Summary: "`event_log` timestamps do not go backwards (an append-only audit trail)."},
		{ID: "autopilot.state.completed-run-phases", Severity: SeverityWarning, Basis: "I", Summary: "A completed run has every phase completed, or needs_human_verification with a human verdict (or HEAD's split_request, replaced by its sub-phases)."},
		{ID: "autopilot.config.phase-caps-within-total", Severity: SeverityWarning, Basis: "I", Summary: "Per-phase caps do not exceed the run totals: `cost_cap_tokens_per_phase` ≤ `cost_cap_tokens_total`, `wall_clock_timeout_minutes_per_phase` ≤ `wall_clock_timeout_minutes_total`."},
		{ID: "autopilot.trace.step-matches-file", Severity: SeverityWarning, Basis: "I", Summary: "Every span of `<step>-trace.jsonl` has `step` == <step>."},
		{ID: "autopilot.trace.phase-id-matches-dir", Severity: SeverityWarning, Basis: "I", Summary: "Every span's `phase_id` is the id of its .planning/phases/<id>/ directory (a directory named \"05-title\" matches id \"5\")."},
		{ID: "autopilot.trace.timestamp-order", Severity: SeverityWarning, Basis: "I", Summary: "TRACE.jsonl timestamps do not go backwards (it is the concatenation of the step traces in execution order)."},
		{ID: "autopilot.trace.span-in-step-file", Severity: SeverityWarning, Basis: "I", Summary: "Every span of TRACE.jsonl other than phase_runner's also appears in a `<step>-trace.jsonl` of the same directory."},
		{ID: "autopilot.postmortem.phase-id-matches-file", Severity: SeverityWarning, Basis: "I", Summary: "`phase_id` equals N of the file name phase-N-postmortem.json."},
		{ID: "autopilot.postmortem.first-observed-before-report", Severity: SeverityWarning, Basis: "I", Summary: "`root_cause.first_observed_at` is not later than the post-mortem's `timestamp`."},
		{ID: "autopilot.postmortem.timeline-order", Severity: SeverityWarning, Basis: "I", Summary: "`timeline` timestamps do not go backwards."},
		{ID: "autopilot.postmortem.fix-sequence", Severity: SeverityWarning, Basis: "I", Summary: "`attempted_fixes[].attempt` are numbered 1, 2, … n in order."},
		{ID: "autopilot.postmortem.fixes-within-debug-cap", Severity: SeverityWarning, Basis: "I", Summary: "A post-mortem lists at most `max_debug_attempts_per_phase` (default 3) attempted fixes."},
		{ID: "autopilot.postmortem.state-phase-failed", Severity: SeverityWarning, Basis: "I", Summary: "A post-mortem of the current run (its timestamp is not before state.json's `_meta.started_at`) is for a phase whose status in state.json is failed."},
		{ID: "autopilot.postmortem.learnings-entry", Severity: SeverityError, Basis: "R", Summary: "A post-mortem's failure is recorded in learnings.md as `### Phase N failure -- <root_cause.category>` (the playbook's MUST). Checked when learnings.md is present, or when state.json shows the post-mortem belongs to the current run (learnings.md is reset at run start, diagnostics are not)."},
		{ID: "autopilot.learnings.verdict-entries", Severity: SeverityWarning, Basis: "I", Summary: "learnings.md's `### Human Verdict: Phase N -- V` entries match the human verdicts recorded in state.json, one for one (LRNG-04)."},
	}, autopilotTriageRules...),
})

// autopilotBreakerDefaults are the seed's circuit_breaker_config defaults.
var autopilotBreakerDefaults = map[string]int64{
	"no_progress_threshold":                3,
	"same_error_threshold":                 5,
	"output_degradation_pct":               70,
	"max_debug_attempts_per_phase":         3,
	"max_replan_attempts_per_phase":        1,
	"max_total_retries_per_run":            10,
	"cooldown_minutes":                     5,
	"cost_cap_tokens_per_phase":            500000,
	"cost_cap_tokens_total":                5000000,
	"wall_clock_timeout_minutes_per_phase": 120,
	"wall_clock_timeout_minutes_total":     1440,
}

// autopilotEventTypes are the seed's 23 event types plus those HEAD added
// (schemas reference §3 at HEAD, and rubber_stamp_warning from orchestrator
// check 5).
var autopilotEventTypes = func() map[string]bool {
	m := map[string]bool{}
	for _, e := range []string{
		// seed (faa0dc5): 23 types
		"run_started", "run_completed", "run_halted", "run_resumed",
		"phase_started", "phase_completed", "phase_failed",
		"step_started", "step_completed", "step_failed",
		"task_completed", "task_failed", "task_retried",
		"circuit_breaker_opened", "circuit_breaker_closed", "checkpoint_written",
		"debug_attempt", "replan_attempt", "rollback_initiated", "rollback_completed",
		"human_verdict_recorded", "unnecessary_deferral_warning", "high_defer_rate_warning",
		// HEAD
		"autonomous_resolution_success", "deferral_threshold_adjusted",
		"self_audit_started", "self_audit_completed", "self_audit_gap_found", "self_audit_gap_fixed",
		"phase_skipped", "batch_completion_report",
		"context_mapping_started", "context_mapping_completed",
		"remediation_started", "remediation_completed",
		"confidence_diagnostic_written", "force_incomplete_marked",
		"rubber_stamp_warning",
	} {
		m[e] = true
	}
	return m
}()

var (
	autopilotTraceRE      = regexp.MustCompile(`(?:^|/)\.planning/phases/([^/]+)/([^/]+)$`)
	autopilotPostmortemRE = regexp.MustCompile(`(?:^|/)phase-(.+)-postmortem\.json$`)
	autopilotFailureRE    = regexp.MustCompile(`^### Phase (\S+) failure -- (\S+)\s*$`)
	autopilotVerdictRE    = regexp.MustCompile(`^### Human Verdict: Phase (\S+) -- (PASS|FAIL|ISSUES_FOUND) \(confidence calibration\)\s*$`)
	autopilotPhaseIDRE    = regexp.MustCompile(`^(\d+(?:\.\d+)*)([a-z]?)(?:$|[-_ ])`)
)

// autopilotBreaker is the circuit-breaker config in force for a group.
type autopilotBreaker struct {
	doc  *artifact.Document
	vals map[string]int64
}

func (b *autopilotBreaker) get(k string) int64 {
	return cmp.Or(b.vals[k], autopilotBreakerDefaults[k]) // vals holds only values ≥ 1
}

// from says where a threshold comes from, for messages.
func (b *autopilotBreaker) from(k string) string {
	if _, ok := b.vals[k]; ok {
		return fmt.Sprintf("`%s` %d in %s", k, b.vals[k], b.doc.Path)
	}
	return fmt.Sprintf("`%s` %d (the default)", k, autopilotBreakerDefaults[k])
}

type autopilotGroup struct {
	state       *artifact.Document
	archives    []*artifact.Document
	config      *artifact.Document
	learnings   *artifact.Document
	postmortems []*artifact.Document
	traces      map[string][]*artifact.Document // by phase directory
	traceDirs   []string
}

func checkAutopilot(c *ruleCtx, g *Group) {
	ag := autopilotGroup{traces: map[string][]*artifact.Document{}}
	var configs []*artifact.Document
	for _, d := range g.Docs {
		switch d.Kind.ID {
		case "autopilot.state":
			if path.Base(d.Path) == "state.json" && path.Base(path.Dir(d.Path)) == ".autopilot" && ag.state == nil {
				ag.state = d
			} else {
				ag.archives = append(ag.archives, d)
			}
		case "autopilot.circuit-breaker-config":
			configs = append(configs, d)
		case "autopilot.learnings":
			if ag.learnings == nil {
				ag.learnings = d
			}
		case "autopilot.postmortem":
			ag.postmortems = append(ag.postmortems, d)
		case "autopilot.triage":
			autopilotCheckTriage(c, d)
		case "autopilot.trace":
			dir := path.Dir(d.Path)
			ag.traces[dir] = append(ag.traces[dir], d)
		}
	}
	ag.traceDirs = slices.Sorted(maps.Keys(ag.traces))
	// The config in force: .autopilot/config.json before any other.
	sort.SliceStable(configs, func(i, j int) bool {
		return path.Base(configs[i].Path) == "config.json" && path.Base(configs[j].Path) != "config.json"
	})
	br := &autopilotBreaker{vals: map[string]int64{}}
	for _, d := range configs {
		autopilotCheckConfig(c, d)
		if ag.config == nil {
			if cfg := asObj(asObj(d.Value)["circuit_breaker_config"]); cfg != nil {
				ag.config = d
				br.doc = d
				for k := range autopilotBreakerDefaults {
					if v, ok := toInt(cfg[k]); ok && v >= 1 {
						br.vals[k] = v
					}
				}
			}
		}
	}
	if ag.state != nil {
		autopilotCheckState(c, ag.state, br)
	}
	for _, d := range ag.archives {
		autopilotCheckState(c, d, br)
	}
	for _, dir := range ag.traceDirs {
		autopilotCheckTraces(c, dir, ag.traces[dir])
	}
	for _, d := range ag.postmortems {
		autopilotCheckPostmortem(c, d, &ag, br)
	}
	autopilotCheckLearnings(c, &ag)
	autopilotStatus(c, g, &ag)
}

// autopilotTime parses an ISO-8601 (RFC 3339) timestamp.
func autopilotTime(v any) (time.Time, bool) {
	s, _ := v.(string) // not a string: "", which does not parse
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	return t, err == nil
}

func autopilotNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// autopilotPhase is one phase record of a state file.
type autopilotPhase struct {
	key, id string
	obj     map[string]any
	status  string
}

func autopilotPhases(obj map[string]any) []autopilotPhase {
	phases := asObj(obj["phases"])
	var out []autopilotPhase
	for _, k := range slices.Sorted(maps.Keys(phases)) {
		ph := asObj(phases[k])
		if ph == nil {
			continue
		}
		out = append(out, autopilotPhase{key: k, id: strings.TrimPrefix(k, "phase_"), obj: ph, status: strOr(ph, "status")})
	}
	return out
}

// autopilotStateCheck is one state file being checked: the sections the
// rules read, and what the phase loop tallies for the metrics and deferral
// counter rules.
type autopilotStateCheck struct {
	c  *ruleCtx
	d  *artifact.Document
	br autopilotBreaker // a copy: the pointer does not escape

	meta, phases, cb, metrics map[string]any
	list                      []autopilotPhase
	events                    []any
	runStatus, cbState        string

	// Set by checkPhases.
	passScore                                  float64
	nCompleted, nFailed, nDeferred             int64
	sumDebug, sumReplan, sumTokens, sumRetries int64
	retryReported                              bool
}

// autopilotCheckState checks one state file, the active run or an archived
// one: _meta, the phases (deferral, verdicts, caps, gate), the metrics, the
// deferral counters, the circuit breaker, the event log and, for a completed
// run, that every phase finished.
func autopilotCheckState(c *ruleCtx, d *artifact.Document, br *autopilotBreaker) {
	obj := asObj(d.Value)
	if obj == nil {
		return
	}
	meta := asObj(obj["_meta"])
	cb := asObj(obj["circuit_breaker"])
	s := &autopilotStateCheck{
		c: c, d: d, br: *br,
		meta:      meta,
		phases:    asObj(obj["phases"]),
		list:      autopilotPhases(obj),
		runStatus: strOr(meta, "status"),
		cb:        cb,
		cbState:   strOr(cb, "state"),
		events:    asList(obj["event_log"]),
		metrics:   asObj(obj["metrics"]),
	}
	s.checkMeta()
	s.checkPhases()
	s.checkMetrics()
	s.checkDeferralCounters()
	s.checkBreaker()
	s.checkEventLog()
	s.checkCompletedRun()
}

// at is the pointer to a field of the phase's record.
func (ph autopilotPhase) at(tokens ...any) []string {
	return ptr(append([]any{"phases", ph.key}, tokens...)...)
}

// checkMeta checks _meta: the current phase exists, and the checkpoint is
// not before the start nor before any event.
func (s *autopilotStateCheck) checkMeta() {
	c, d, meta := s.c, s.d, s.meta
	if cp, ok := str(meta, "current_phase"); ok && s.phases != nil {
		if _, exists := s.phases["phase_"+cp]; !exists {
			c.report("autopilot.state.current-phase-exists", d, ptr("_meta", "current_phase"), "`_meta.current_phase` is %s but `phases` has no key %s: add the phase record or correct the current phase", display(cp), display("phase_"+cp))
		}
	}
	started, okStart := autopilotTime(meta["started_at"])
	checkpoint, okCheck := autopilotTime(meta["last_checkpoint"])
	if okStart && okCheck && checkpoint.Before(started) {
		c.report("autopilot.state.checkpoint-after-start", d, ptr("_meta", "last_checkpoint"), "`last_checkpoint` %s is before the run's `started_at` %s", strOr(meta, "last_checkpoint"), strOr(meta, "started_at"))
	}
	if okCheck {
		latest, at := time.Time{}, -1
		for i, e := range s.events {
			if t, ok := autopilotTime(asObj(e)["timestamp"]); ok && t.After(checkpoint) && (at < 0 || t.After(latest)) {
				latest, at = t, i
			}
		}
		if at >= 0 {
			c.report("autopilot.state.checkpoint-after-events", d, ptr("_meta", "last_checkpoint"), "`last_checkpoint` %s is earlier than `event_log[%d]` at %s: the orchestrator updates the checkpoint on every write, so the state was written without it (or the event was added by hand)", strOr(meta, "last_checkpoint"), at, strOr(asObj(s.events[at]), "timestamp"))
		}
	}
}

// checkPhases checks each phase (deferral, verdicts, caps, gate) and tallies
// the phases' statuses, attempts, tokens and retries.
func (s *autopilotStateCheck) checkPhases() {
	deferred := map[string]bool{} // phase ids _meta.deferral_history records as deferred
	for _, e := range asList(s.meta["deferral_history"]) {
		h := asObj(e)
		if id, ok := str(h, "phase_id"); ok && strOr(h, "reason") == "deferred" {
			deferred[id] = true
		}
	}
	s.passScore = 7.0
	if p := s.c.opts.Config.Autopilot.PassScore; p != nil {
		s.passScore = *p
	}
	for _, ph := range s.list {
		switch ph.status {
		case "completed":
			s.nCompleted++
		case "failed":
			s.nFailed++
		case "needs_human_verification":
			s.nDeferred++
		}
		s.checkPhaseDeferral(ph, deferred)
		s.checkPhaseCaps(ph)
		s.checkPhaseRetries(ph)
		if pc := asObj(asObj(ph.obj["steps"])["plan_check"]); strOr(pc, "status") == "pass" {
			if conf, ok := toFloat(pc["confidence"]); ok && conf < 7 {
				s.c.report("autopilot.state.plan-check-confidence", s.d, ph.at("steps", "plan_check", "confidence"), "the plan check of phase %s passed with confidence %s: the playbook's gate needs confidence ≥ 7, so its status should be fail (or the confidence is wrong)", display(ph.id), autopilotNum(conf))
			}
		}
		if ph.status == "completed" {
			autopilotCheckGate(s.c, s.d, ph, s.passScore)
		}
	}
}

// checkPhaseDeferral checks a phase's deferral to a human: the justification
// exactly when it needs human verification, its checkpoint task, and the
// human verdict; deferred holds the phase ids _meta.deferral_history records
// as deferred.
func (s *autopilotStateCheck) checkPhaseDeferral(ph autopilotPhase, deferred map[string]bool) {
	c, d, p := s.c, s.d, ph.obj
	nhv := ph.status == "needs_human_verification"
	hasJust := asObj(p["human_verify_justification"]) != nil
	mistyped := p["human_verify_justification"] != nil && !hasJust // the schema reports it
	switch {
	case mistyped:
	case nhv && !hasJust:
		c.report("autopilot.state.human-verify-iff-deferred", d, ph.at("status"), "phase %s needs human verification but has no `human_verify_justification`: record the checkpoint task and why it needs a person", display(ph.id))
	case !nhv && hasJust && ph.status != "":
		c.report("autopilot.state.human-verify-iff-deferred", d, ph.at("human_verify_justification"), "phase %s has a `human_verify_justification` but its status is %s, not needs_human_verification: set it to null or correct the status", display(ph.id), display(ph.status))
	}
	if just := asObj(p["human_verify_justification"]); nhv && just != nil && blank(strOr(just, "checkpoint_task_id")) {
		c.report("autopilot.state.checkpoint-task-id", d, ph.at("human_verify_justification"), "phase %s is deferred to a human without a `checkpoint_task_id`: name the checkpoint task the person must verify (the orchestrator rejects this return, check 13)", display(ph.id))
	}
	if verdict := asObj(p["human_verdict"]); verdict != nil {
		if !nhv && !hasJust && !mistyped && !deferred[ph.id] {
			c.report("autopilot.state.human-verdict-needs-deferral", d, ph.at("human_verdict"), "phase %s has a `human_verdict` but was never deferred to a human (status %s, no `human_verify_justification`, no deferral record): a verdict is only collected for a needs_human_verification phase", display(ph.id), display(ph.status))
		}
		v := strOr(verdict, "verdict")
		if issues, _ := stringList(verdict, "issues"); (v == "fail" || v == "issues_found") && len(issues) == 0 {
			c.report("autopilot.state.verdict-issues", d, ph.at("human_verdict", "verdict"), "the human verdict on phase %s is %s but lists no `issues`: record what the person found", display(ph.id), display(v))
		}
	}
}

// checkPhaseCaps checks a phase's debug attempts, re-plans and tokens
// against the breaker's per-phase caps, and adds them to the run's sums.
func (s *autopilotStateCheck) checkPhaseCaps(ph autopilotPhase) {
	c, d, p, br := s.c, s.d, ph.obj, s.br
	if debug, ok := toInt(p["debug_attempts"]); ok {
		s.sumDebug += debug
		if max := br.get("max_debug_attempts_per_phase"); debug > max {
			c.report("autopilot.state.debug-cap", d, ph.at("debug_attempts"), "phase %s made %d debug attempts, over %s: the phase should have failed at the cap", display(ph.id), debug, br.from("max_debug_attempts_per_phase"))
		}
	}
	if replan, ok := toInt(p["replan_attempts"]); ok {
		s.sumReplan += replan
		if max := br.get("max_replan_attempts_per_phase"); replan > max {
			c.report("autopilot.state.replan-cap", d, ph.at("replan_attempts"), "phase %s re-planned %d times, over %s: the phase should have failed at the cap", display(ph.id), replan, br.from("max_replan_attempts_per_phase"))
		}
	}
	if tokens, ok := toInt(p["tokens_used"]); ok {
		s.sumTokens += tokens
		tripped := ph.status == "failed" || s.runStatus == "failed" || s.runStatus == "paused" || (s.cbState != "" && s.cbState != "closed")
		if max := br.get("cost_cap_tokens_per_phase"); tokens > max && !tripped {
			c.report("autopilot.state.phase-token-cap", d, ph.at("tokens_used"), "phase %s used %d tokens, over %s, yet it is %s, the run %s and the breaker %s: exceeding the cap halts the phase and opens the breaker", display(ph.id), tokens, br.from("cost_cap_tokens_per_phase"), display(ph.status), display(s.runStatus), display(s.cbState))
		}
	}
}

// checkPhaseRetries adds a phase's task retries to the run's and reports the
// task with which the run first went over the run's retry cap.
func (s *autopilotStateCheck) checkPhaseRetries(ph autopilotPhase) {
	retryCap := s.br.get("max_total_retries_per_run")
	tasks := asObj(asObj(asObj(ph.obj["steps"])["execute"])["tasks"])
	for _, tk := range slices.Sorted(maps.Keys(tasks)) {
		r, ok := toInt(asObj(tasks[tk])["retries"])
		if !ok {
			continue
		}
		s.sumRetries += r
		if s.sumRetries > retryCap && !s.retryReported {
			s.retryReported = true
			s.c.report("autopilot.state.retry-cap", s.d, ph.at("steps", "execute", "tasks", tk, "retries"), "with task %s of phase %s the run has made %d task retries, over %s: the run should have halted at the cap", display(tk), display(ph.id), s.sumRetries, s.br.from("max_total_retries_per_run"))
		}
	}
}

// checkMetrics compares `metrics` with the phases' tallies and the run's
// token total with its cap.
func (s *autopilotStateCheck) checkMetrics() {
	c, d, metrics := s.c, s.d, s.metrics
	if s.list != nil && metrics != nil {
		tally := func(id, field string, want int64, what string) {
			if got, ok := toInt(metrics[field]); ok && got != want {
				c.report(id, d, ptr("metrics", field), "`metrics.%s` is %d but %s is %d", field, got, what, want)
			}
		}
		tally("autopilot.state.metrics-phases-completed", "phases_completed", s.nCompleted, "the number of completed phases")
		tally("autopilot.state.metrics-phases-failed", "phases_failed", s.nFailed, "the number of failed phases")
		tally("autopilot.state.metrics-debug-loops", "debug_loops_total", s.sumDebug, "the sum of the phases' `debug_attempts`")
		tally("autopilot.state.metrics-replan-count", "replan_count", s.sumReplan, "the sum of the phases' `replan_attempts`")
		if got, ok := toInt(metrics["total_tokens_used"]); ok && got < s.sumTokens {
			c.report("autopilot.state.metrics-total-tokens", d, ptr("metrics", "total_tokens_used"), "`metrics.total_tokens_used` is %d, less than the %d tokens the phases used (sum of `tokens_used`)", got, s.sumTokens)
		}
	}
	if got, ok := toInt(metrics["total_tokens_used"]); ok {
		if max := s.br.get("cost_cap_tokens_total"); got > max && s.runStatus != "failed" && s.runStatus != "paused" {
			c.report("autopilot.state.total-token-cap", d, ptr("metrics", "total_tokens_used"), "the run used %d tokens, over %s, yet its status is %s: exceeding the total cap fails the run immediately", got, s.br.from("cost_cap_tokens_total"), display(s.runStatus))
		}
	}
}

// checkDeferralCounters checks _meta's deferral counters: their order, that
// they count every deferred phase, and the high-defer-rate event.
func (s *autopilotStateCheck) checkDeferralCounters() {
	c, d, meta := s.c, s.d, s.meta
	deferredCount, okDeferred := toInt(meta["human_deferred_count"])
	processed, okProcessed := toInt(meta["total_phases_processed"])
	total, okTotal := toInt(meta["total_phases"])
	switch {
	case okDeferred && okProcessed && deferredCount > processed:
		c.report("autopilot.state.defer-counter-order", d, ptr("_meta", "human_deferred_count"), "`human_deferred_count` %d is more than `total_phases_processed` %d: a deferred phase was processed", deferredCount, processed)
	case okProcessed && okTotal && processed > total:
		c.report("autopilot.state.defer-counter-order", d, ptr("_meta", "total_phases_processed"), "`total_phases_processed` %d is more than `total_phases` %d", processed, total)
	}
	if okDeferred && deferredCount < s.nDeferred {
		c.report("autopilot.state.defer-count-covers-deferred", d, ptr("_meta", "human_deferred_count"), "`human_deferred_count` is %d but %s needs_human_verification: count every deferral", deferredCount, countWord(s.nDeferred, "phase is", "phases are"))
	}
	if okDeferred && okProcessed && processed >= 2 {
		threshold := 0.50
		if r := c.opts.Config.Autopilot.DeferRate; r != nil {
			threshold = *r
		}
		rate := float64(deferredCount) / float64(processed)
		if rate > threshold && !slices.ContainsFunc(s.events, func(e any) bool { return strOr(asObj(e), "event") == "high_defer_rate_warning" }) {
			c.report("autopilot.state.high-defer-rate-event", d, ptr("_meta", "human_deferred_count"), "%d of %d processed phases were deferred to a human (%s%%, over the %s%% threshold) but `event_log` has no high_defer_rate_warning event: the orchestrator must log it (set autopilot.defer_rate in .github/phasegate.yml to match the Autopilot version: 0.50 at the seed, 0.05 at HEAD)", deferredCount, processed, autopilotNum(float64(int(rate*1000+0.5))/10), autopilotNum(threshold*100))
		}
	}
}

// checkBreaker checks the circuit breaker's state against its counters.
func (s *autopilotStateCheck) checkBreaker() {
	c, d, cb, cbState, br := s.c, s.d, s.cb, s.cbState, s.br
	if cb == nil {
		return
	}
	if n, ok := toInt(cb["consecutive_no_progress"]); ok && cbState == "closed" && n >= br.get("no_progress_threshold") {
		c.report("autopilot.state.breaker-open-at-threshold", d, ptr("circuit_breaker", "consecutive_no_progress"), "the breaker is closed although `consecutive_no_progress` is %d, at or over %s: it should be open", n, br.from("no_progress_threshold"))
	}
	if n, ok := toInt(cb["consecutive_same_error"]); ok && cbState == "closed" && n >= br.get("same_error_threshold") {
		c.report("autopilot.state.breaker-open-at-threshold", d, ptr("circuit_breaker", "consecutive_same_error"), "the breaker is closed although `consecutive_same_error` is %d, at or over %s: it should be open", n, br.from("same_error_threshold"))
	}
	if cb["cooldown_until"] != nil && cbState != "" && cbState != "open" {
		c.report("autopilot.state.breaker-cooldown-when-open", d, ptr("circuit_breaker", "cooldown_until"), "`cooldown_until` is set but the breaker is %s: a cooldown only runs while it is open (clear it, or correct the state)", display(cbState))
	}
	if n, ok := toInt(cb["consecutive_same_error"]); ok && n > 0 && blank(strOr(cb, "last_error")) {
		c.report("autopilot.state.breaker-last-error", d, ptr("circuit_breaker", "last_error"), "`consecutive_same_error` is %d but `last_error` is empty: record the error that repeats", n)
	}
}

// checkEventLog checks each event's type and that the timestamps do not go
// backwards.
func (s *autopilotStateCheck) checkEventLog() {
	for i, e := range s.events {
		ev := asObj(e)
		if name, ok := str(ev, "event"); ok && !blank(name) && !autopilotEventTypes[name] {
			s.c.report("autopilot.state.event-type", s.d, ptr("event_log", i, "event"), "event type %s is not one of the Autopilot event types (the seed's 23 and those HEAD added): check its spelling", display(name))
		}
	}
	autopilotBackwards(s.events, func(i, prevAt int) {
		s.c.report("autopilot.state.event-order", s.d, ptr("event_log", i, "timestamp"), "`event_log[%d]` at %s is earlier than `event_log[%d]` at %s: the event log is append-only", i, strOr(asObj(s.events[i]), "timestamp"), prevAt, strOr(asObj(s.events[prevAt]), "timestamp"))
	})
}

// autopilotBackwards calls back for each element of list whose timestamp is
// earlier than that of prevAt, the last element before it in order.
func autopilotBackwards(list []any, back func(i, prevAt int)) {
	var prev time.Time
	prevAt := -1
	for i, e := range list {
		t, ok := autopilotTime(asObj(e)["timestamp"])
		switch {
		case !ok:
		case prevAt >= 0 && t.Before(prev):
			back(i, prevAt)
		default:
			prev, prevAt = t, i
		}
	}
}

// checkCompletedRun checks that a completed run left no phase unfinished.
func (s *autopilotStateCheck) checkCompletedRun() {
	if s.runStatus != "completed" {
		return
	}
	for _, ph := range s.list {
		// split_request (HEAD) marks a phase replaced by its sub-phases.
		if ph.status == "completed" || ph.status == "split_request" || ph.status == "" || (ph.status == "needs_human_verification" && ph.obj["human_verdict"] != nil) {
			continue
		}
		why := "it is " + display(ph.status)
		if ph.status == "needs_human_verification" {
			why = "it still waits for a human verdict"
		}
		s.c.report("autopilot.state.completed-run-phases", s.d, ptr("phases", ph.key, "status"), "the run is completed but phase %s is not: %s", display(ph.id), why)
	}
}

// autopilotCheckGate checks that a completed phase passed the gate.
func autopilotCheckGate(c *ruleCtx, d *artifact.Document, ph autopilotPhase, passScore float64) {
	steps := asObj(ph.obj["steps"])
	at := func(tokens ...any) []string { return ptr(append([]any{"phases", ph.key, "steps"}, tokens...)...) }
	force, _ := boolean(ph.obj, "force_incomplete")
	if !force {
		if s, ok := toFloat(asObj(steps["rate"])["alignment_score"]); ok {
			if s < passScore {
				c.report("autopilot.state.phase-gate", d, at("rate", "alignment_score"), "phase %s is completed with a rated alignment of %s, below the pass score %s (autopilot.pass_score in .github/phasegate.yml, default 7): it should have been remediated or marked force_incomplete", display(ph.id), autopilotNum(s), autopilotNum(passScore))
			}
		} else if s, ok := toFloat(asObj(steps["judge"])["alignment"]); ok && s < passScore {
			c.report("autopilot.state.phase-gate", d, at("judge", "alignment"), "phase %s is completed with a judge alignment of %s, below the pass score %s (autopilot.pass_score in .github/phasegate.yml, default 7): the gate would not pass it", display(ph.id), autopilotNum(s), autopilotNum(passScore))
		}
	}
	if rec, ok := str(asObj(steps["judge"]), "recommendation"); ok && rec != "proceed" {
		c.report("autopilot.state.phase-gate", d, at("judge", "recommendation"), "phase %s is completed but the judge recommended %s, not proceed", display(ph.id), display(rec))
	}
	if vs, ok := str(asObj(steps["verify"]), "status"); ok && vs != "pass" {
		c.report("autopilot.state.phase-gate", d, at("verify", "status"), "phase %s is completed but its verify step's status is %s, not pass", display(ph.id), display(vs))
	}
}

func autopilotCheckConfig(c *ruleCtx, d *artifact.Document) {
	cfg := asObj(asObj(d.Value)["circuit_breaker_config"])
	if cfg == nil {
		return
	}
	for _, pair := range [][2]string{
		{"cost_cap_tokens_per_phase", "cost_cap_tokens_total"},
		{"wall_clock_timeout_minutes_per_phase", "wall_clock_timeout_minutes_total"},
	} {
		per, ok1 := toInt(cfg[pair[0]])
		total, ok2 := toInt(cfg[pair[1]])
		if ok1 && ok2 && per > total {
			c.report("autopilot.config.phase-caps-within-total", d, ptr("circuit_breaker_config", pair[0]), "`%s` %d is more than `%s` %d: one phase could never reach its own cap", pair[0], per, pair[1], total)
		}
	}
}

// autopilotPhaseDirMatches reports whether a phase directory name names the
// phase id: equal, or the directory's leading number (e.g. "05" of
// "05-observability") equal to the id with leading zeros dropped.
func autopilotPhaseDirMatches(dir, id string) bool {
	if dir == id {
		return true
	}
	canon := func(s string) (string, bool) {
		m := autopilotPhaseIDRE.FindStringSubmatch(s)
		if m == nil {
			return "", false
		}
		parts := strings.Split(m[1], ".")
		for i, p := range parts {
			parts[i] = cmp.Or(strings.TrimLeft(p, "0"), "0")
		}
		return strings.Join(parts, ".") + m[2], true
	}
	a, ok1 := canon(dir)
	b, ok2 := canon(id)
	return ok1 && ok2 && a == b
}

// autopilotSpanKey identifies a span for comparing TRACE.jsonl with the step
// traces: the fields the aggregation copies verbatim.
// Two spans have the same key exactly when those fields encode to the same
// JSON. Fields that are all strings or null (nearly every span) are keyed
// without encoding: each string with its length, after a NUL byte that no
// JSON text starts with, so such a key never equals an encoded one.
func autopilotSpanKey(span map[string]any) string {
	fields := [...]any{span["timestamp"], span["step"], span["action"], span["input_summary"], span["output_summary"], span["status"]}
	var b strings.Builder
	b.WriteByte(0)
	for _, f := range fields {
		switch v := f.(type) {
		case nil:
			b.WriteByte('n')
		case string:
			b.WriteByte('s')
			b.WriteString(strconv.Itoa(len(v)))
			b.WriteByte(':')
			b.WriteString(v)
		default:
			enc, _ := json.Marshal(fields[:])
			return string(enc)
		}
	}
	return b.String()
}

func autopilotCheckTraces(c *ruleCtx, dir string, docs []*artifact.Document) {
	var aggregate []*artifact.Document
	stepFiles := map[string]bool{}
	inStepFiles := map[string]bool{}
	for _, d := range docs {
		m := autopilotTraceRE.FindStringSubmatch(d.Path)
		spans := asList(d.Value)
		name := path.Base(d.Path)
		if m != nil {
			autopilotCheckSpanField(c, d, spans, "phase_id", func(v string) bool { return autopilotPhaseDirMatches(m[1], v) },
				func(v string) string {
					return fmt.Sprintf("`phase_id` is %s but the span is in %s/: move the file or correct the phase id", display(v), dir)
				})
		}
		if name == "TRACE.jsonl" {
			aggregate = append(aggregate, d)
			continue
		}
		step := strings.TrimSuffix(name, "-trace.jsonl")
		stepFiles[step] = true
		autopilotCheckSpanField(c, d, spans, "step", func(v string) bool { return v == step },
			func(v string) string {
				return fmt.Sprintf("`step` is %s in %s, which holds the %s step's spans: move the span to %s-trace.jsonl or correct it", display(v), name, display(step), v)
			})
		for _, s := range spans {
			if span := asObj(s); span != nil {
				inStepFiles[autopilotSpanKey(span)] = true
			}
		}
	}
	for _, d := range aggregate {
		spans := asList(d.Value)
		autopilotBackwards(spans, func(i, prevAt int) {
			c.report("autopilot.trace.timestamp-order", d, ptr(i, "timestamp"), "span at %s is earlier than the span on line %d (%s): TRACE.jsonl lists spans in execution order", strOr(asObj(spans[i]), "timestamp"), d.Locate(ptr(prevAt)).Line, strOr(asObj(spans[prevAt]), "timestamp"))
		})
		missing := map[string][]int{}
		var missingSteps []string
		for i, s := range spans {
			span := asObj(s)
			if span == nil {
				continue
			}
			step, ok := str(span, "step")
			if !ok || step == "phase_runner" || inStepFiles[autopilotSpanKey(span)] {
				continue
			}
			if stepFiles[step] {
				c.report("autopilot.trace.span-in-step-file", d, ptr(i), "this %s span is not in %s/%s-trace.jsonl: TRACE.jsonl aggregates the step traces, so the step trace lost it or this span was added afterwards", display(step), dir, step)
				continue
			}
			if _, seen := missing[step]; !seen {
				missingSteps = append(missingSteps, step)
			}
			missing[step] = append(missing[step], i)
		}
		for _, step := range missingSteps {
			idx := missing[step]
			c.report("autopilot.trace.span-in-step-file", d, ptr(idx[0]), "TRACE.jsonl has %s (the first here) but %s/%s-trace.jsonl is missing: commit the step trace TRACE.jsonl was aggregated from", countWord(len(idx), display(step)+" span", display(step)+" spans"), dir, step)
		}
	}
}

// autopilotCheckSpanField reports the first span whose string field fails
// ok (with how many more do), so that a misplaced file is one finding.
func autopilotCheckSpanField(c *ruleCtx, d *artifact.Document, spans []any, field string, ok func(string) bool, msg func(string) string) {
	first, more := -1, 0
	for i, s := range spans {
		v, isStr := str(asObj(s), field)
		if !isStr || ok(v) {
			continue
		}
		if first < 0 {
			first = i
		} else {
			more++
		}
	}
	if first < 0 {
		return
	}
	rule := "autopilot.trace.phase-id-matches-dir"
	if field == "step" {
		rule = "autopilot.trace.step-matches-file"
	}
	text := msg(strOr(asObj(spans[first]), field))
	if more > 0 {
		text += " (and " + countWord(more, "more span", "more spans") + " of this file)"
	}
	c.report(rule, d, ptr(first, field), "%s", text)
}

// autopilotInRun reports whether a post-mortem belongs to the run of
// state.json: written at or after the run started. Without a state, or
// without timestamps to compare, it is assumed to.
func autopilotInRun(pm map[string]any, state *artifact.Document) bool {
	if state == nil {
		return true
	}
	started, ok1 := autopilotTime(asObj(asObj(state.Value)["_meta"])["started_at"])
	at, ok2 := autopilotTime(pm["timestamp"])
	return !ok1 || !ok2 || !at.Before(started)
}

// autopilotCheckPostmortem checks a post-mortem on its own (its phase id,
// timestamps and attempted fixes) and, when it belongs to the current run,
// against state.json and learnings.md.
func autopilotCheckPostmortem(c *ruleCtx, d *artifact.Document, ag *autopilotGroup, br *autopilotBreaker) {
	pm := asObj(d.Value)
	if pm == nil {
		return
	}
	id := autopilotPostmortemID(c, d, pm)
	autopilotCheckPostmortemTimes(c, d, pm)
	fixes := asList(pm["attempted_fixes"])
	for i, e := range fixes {
		if n, ok := toInt(asObj(e)["attempt"]); ok && n != int64(i+1) {
			c.report("autopilot.postmortem.fix-sequence", d, ptr("attempted_fixes", i, "attempt"), "attempt %d is listed as number %d: number the attempted fixes 1, 2, … in order", i+1, n)
		}
	}
	if max := br.get("max_debug_attempts_per_phase"); int64(len(fixes)) > max {
		c.report("autopilot.postmortem.fixes-within-debug-cap", d, ptr("attempted_fixes", int(max)), "%d attempted fixes are listed, over %s: the debug loop stops at the cap", len(fixes), br.from("max_debug_attempts_per_phase"))
	}
	if id == "" || !autopilotInRun(pm, ag.state) {
		return
	}
	autopilotCheckPostmortemState(c, d, id, ag)
	autopilotCheckPostmortemLearnings(c, d, pm, id, ag)
}

// autopilotPostmortemID returns the phase a post-mortem is for: its
// `phase_id`, else N of its file name phase-N-postmortem.json; it reports a
// `phase_id` that disagrees with the file name.
func autopilotPostmortemID(c *ruleCtx, d *artifact.Document, pm map[string]any) string {
	fileN := ""
	if m := autopilotPostmortemRE.FindStringSubmatch(d.Path); m != nil {
		fileN = m[1]
	}
	id, okID := str(pm, "phase_id")
	if okID && fileN != "" && id != fileN {
		c.report("autopilot.postmortem.phase-id-matches-file", d, ptr("phase_id"), "`phase_id` is %s but the file is %s: rename the file to phase-%s-postmortem.json or correct the id", display(id), path.Base(d.Path), id)
	}
	if !okID {
		id = fileN
	}
	return id
}

// autopilotCheckPostmortemTimes checks that the failure was observed before
// the post-mortem was written and that the timeline goes forwards.
func autopilotCheckPostmortemTimes(c *ruleCtx, d *artifact.Document, pm map[string]any) {
	rc := asObj(pm["root_cause"])
	if first, ok := autopilotTime(rc["first_observed_at"]); ok {
		if at, ok := autopilotTime(pm["timestamp"]); ok && first.After(at) {
			c.report("autopilot.postmortem.first-observed-before-report", d, ptr("root_cause", "first_observed_at"), "the failure was first observed at %s, after the post-mortem was written (%s)", strOr(rc, "first_observed_at"), strOr(pm, "timestamp"))
		}
	}
	timeline := asList(pm["timeline"])
	autopilotBackwards(timeline, func(i, prevAt int) {
		c.report("autopilot.postmortem.timeline-order", d, ptr("timeline", i, "timestamp"), "`timeline[%d]` at %s is earlier than `timeline[%d]` at %s: list the events oldest first", i, strOr(asObj(timeline[i]), "timestamp"), prevAt, strOr(asObj(timeline[prevAt]), "timestamp"))
	})
}

// autopilotCheckPostmortemState checks that state.json lists the
// post-mortem's phase as failed.
func autopilotCheckPostmortemState(c *ruleCtx, d *artifact.Document, id string, ag *autopilotGroup) {
	if ag.state == nil {
		return
	}
	phases := asObj(asObj(ag.state.Value)["phases"])
	if phases == nil {
		return
	}
	ph, exists := phases["phase_"+id]
	status := strOr(asObj(ph), "status")
	switch {
	case !exists:
		c.report("autopilot.postmortem.state-phase-failed", d, ptr("phase_id"), "this post-mortem is for phase %s, which %s does not list: the post-mortem and the state disagree", display(id), ag.state.Path)
	case status != "" && status != "failed":
		c.report("autopilot.postmortem.state-phase-failed", d, ptr("phase_id"), "this post-mortem is for phase %s, whose status in %s is %s, not failed: post-mortems are written only for failed phases", display(id), ag.state.Path, display(status))
	}
}

// autopilotCheckPostmortemLearnings checks that learnings.md records the
// post-mortem's failure with its root-cause category.
func autopilotCheckPostmortemLearnings(c *ruleCtx, d *artifact.Document, pm map[string]any, id string, ag *autopilotGroup) {
	category, ok := str(asObj(pm["root_cause"]), "category")
	if !ok || blank(category) {
		return
	}
	want := fmt.Sprintf("### Phase %s failure -- %s", id, category)
	if ag.learnings == nil {
		if ag.state != nil {
			c.report("autopilot.postmortem.learnings-entry", d, ptr("root_cause", "category"), "the failure of phase %s in this run is not recorded in learnings: .autopilot/learnings.md is missing; add it with the entry %s (the playbook requires one per failed phase)", display(id), display(want))
		}
		return
	}
	entries := asList(asObj(ag.learnings.Value)["entries"])
	other := -1
	for i, e := range entries {
		m := autopilotFailureRE.FindStringSubmatch(strOr(asObj(e), "heading"))
		if m == nil || m[1] != id {
			continue
		}
		if m[2] == category {
			return
		}
		if other < 0 {
			other = i
		}
	}
	if other >= 0 {
		c.report("autopilot.postmortem.learnings-entry", ag.learnings, ptr("entries", other, "heading"), "the failure entry of phase %s has a category other than %s, the root cause in %s: write %s", display(id), display(category), d.Path, display(want))
		return
	}
	c.report("autopilot.postmortem.learnings-entry", ag.learnings, nil, "no entry %s for the post-mortem %s: the phase-runner must append a failure entry with its prevention rule after writing the post-mortem", display(want), d.Path)
}

func autopilotCheckLearnings(c *ruleCtx, ag *autopilotGroup) {
	if ag.learnings == nil || ag.state == nil {
		return
	}
	phases := asObj(asObj(ag.state.Value)["phases"])
	if phases == nil {
		return
	}
	entries := asList(asObj(ag.learnings.Value)["entries"])
	has := map[string]bool{}
	for i, e := range entries {
		m := autopilotVerdictRE.FindStringSubmatch(strOr(asObj(e), "heading"))
		if m == nil {
			continue
		}
		id, verdict := m[1], m[2]
		has[id] = true
		ph, exists := phases["phase_"+id]
		hv := asObj(asObj(ph)["human_verdict"])
		switch {
		case !exists:
			c.report("autopilot.learnings.verdict-entries", ag.learnings, ptr("entries", i, "heading"), "a human verdict is recorded for phase %s, which %s does not list", display(id), ag.state.Path)
		case hv == nil:
			c.report("autopilot.learnings.verdict-entries", ag.learnings, ptr("entries", i, "heading"), "a human verdict is recorded for phase %s, but %s has no `human_verdict` for it", display(id), ag.state.Path)
		default:
			if got, ok := str(hv, "verdict"); ok && strings.ToUpper(got) != verdict {
				c.report("autopilot.learnings.verdict-entries", ag.learnings, ptr("entries", i, "heading"), "the calibration entry says %s for phase %s but %s records the verdict %s", verdict, display(id), ag.state.Path, display(got))
			}
		}
	}
	for _, ph := range autopilotPhases(asObj(ag.state.Value)) {
		if ph.obj["human_verdict"] != nil && !has[ph.id] {
			c.report("autopilot.learnings.verdict-entries", ag.learnings, nil, "%s records a human verdict for phase %s but there is no `### Human Verdict: Phase %s -- …` calibration entry", ag.state.Path, display(ph.id), ph.id)
		}
	}
}

// autopilotStatus records where the project's active run stands.
func autopilotStatus(c *ruleCtx, g *Group, ag *autopilotGroup) {
	dir := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(g.Key, c.opts.Prefix), ".autopilot"), "/")
	unit := func(name string) string {
		if dir != "" {
			return "Autopilot " + dir + " " + name
		}
		return "Autopilot " + name
	}
	if ag.state == nil {
		if len(ag.traceDirs) == 0 && len(ag.archives) == 0 {
			return
		}
		c.status(Status{Family: "autopilot", Unit: strings.TrimSpace(unit("")), State: autopilotIdleState(ag)})
		return
	}
	d := ag.state
	obj := asObj(d.Value)
	meta := asObj(obj["_meta"])
	cb := asObj(obj["circuit_breaker"])
	runID := strOr(meta, "run_id")
	if blank(runID) {
		runID = "run"
	}
	state, at := autopilotRunState(meta, strOr(cb, "state"))
	c.status(Status{Family: "autopilot", Unit: unit(runID), State: state, Decisions: autopilotRunDecisions(d, meta, cb, runID, at)})
}

// autopilotIdleState is the status of a project without an active run: how
// many runs are archived and which phases have traces.
func autopilotIdleState(ag *autopilotGroup) string {
	parts := []string{"no active run"}
	if n := len(ag.archives); n > 0 {
		parts = append(parts, fmt.Sprintf("%d archived", n))
	}
	if len(ag.traceDirs) > 0 {
		var ids []string
		for _, d := range ag.traceDirs {
			ids = append(ids, path.Base(d))
		}
		parts = append(parts, "traced phases "+strings.Join(ids, " "))
	}
	return strings.Join(parts, ", ")
}

// autopilotRunState is the status of the active run (its status, where it
// is, the breaker's state and, while running, its last checkpoint), and
// where it is ("phase 3 execute", or "" when _meta does not say).
func autopilotRunState(meta map[string]any, cbState string) (state, at string) {
	status := strOr(meta, "status")
	phase, _ := str(meta, "current_phase")
	step, _ := str(meta, "current_step")
	parts := []string{cmp.Or(status, "status unknown")}
	if phase != "" {
		at = "phase " + phase
		if step != "" {
			at += " " + step
		}
		parts = append(parts, at)
	}
	if cbState != "" {
		parts = append(parts, "breaker "+cbState)
	}
	if status == "running" {
		if lc, ok := str(meta, "last_checkpoint"); ok {
			parts = append(parts, "last checkpoint "+lc)
		}
	}
	return strings.Join(parts, ", "), at
}

// autopilotRunDecisions are the gate decisions of the active run: its
// status (failed → HOLD, paused → ADVISORY, running/completed → SHIP) and an
// open circuit breaker (HOLD).
func autopilotRunDecisions(d *artifact.Document, meta, cb map[string]any, runID, at string) []Decision {
	var out []Decision
	status := strOr(meta, "status")
	where := ""
	if at != "" {
		where = " at " + at
	}
	lastErr := strOr(cb, "last_error")
	line := d.Locate(ptr("_meta", "status")).Line
	switch status {
	case "failed":
		reason := because("Autopilot "+runID+" failed"+where, lastErr)
		out = append(out, Decision{File: d.Path, Line: line, Effect: "HOLD", Reason: reason + " (it needs an explicit human command to resume)"})
	case "paused":
		out = append(out, Decision{File: d.Path, Line: line, Effect: "ADVISORY", Reason: "Autopilot " + runID + " paused" + where + ": it halted and waits for a person to resolve the cause and resume it"})
	case "running", "completed":
		out = append(out, Decision{File: d.Path, Line: line, Effect: "SHIP", Reason: "Autopilot " + runID + " " + status + where})
	}
	if strOr(cb, "state") == "open" {
		out = append(out, Decision{File: d.Path, Line: d.Locate(ptr("circuit_breaker", "state")).Line, Effect: "HOLD", Reason: autopilotBreakerReason(cb, runID, lastErr)})
	}
	return out
}

// autopilotBreakerReason says why an open circuit breaker holds the gate.
func autopilotBreakerReason(cb map[string]any, runID, lastErr string) string {
	reason := "Autopilot " + runID + ": circuit breaker open"
	var why []string
	if n, ok := toInt(cb["consecutive_no_progress"]); ok && n > 0 {
		why = append(why, fmt.Sprintf("%d steps without progress", n))
	}
	if n, ok := toInt(cb["consecutive_same_error"]); ok && n > 0 {
		why = append(why, fmt.Sprintf("%d identical errors", n))
	}
	if !blank(lastErr) {
		why = append(why, "last error: "+lastErr)
	}
	if cu, ok := str(cb, "cooldown_until"); ok {
		why = append(why, "cooldown until "+cu)
	}
	if len(why) > 0 {
		reason += " (" + strings.Join(why, "; ") + ")"
	}
	return reason
}
