package check

import (
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/testutil"
)

// A consistent Autopilot project: a running run (phase 5 failed with its
// post-mortem and learnings entry, 6.1 completed, 6.2 deferred to a human who
// found issues, 6.3 in progress, 7 not started), the default circuit-breaker
// config, an archived completed run in HEAD's shape, and the traces of phase
// 6.1. Every Autopilot rule is silent on it.
const (
	apState      = ".autopilot/state.json"
	apArchive    = ".autopilot/archive/run-2026-02-01-090000.json"
	apConfig     = ".autopilot/config.json"
	apPostmortem = ".autopilot/diagnostics/phase-5-postmortem.json"
	apLearnings  = ".autopilot/learnings.md"
	apTrace      = ".planning/phases/6.1/TRACE.jsonl"
	apExecTrace  = ".planning/phases/6.1/execute-trace.jsonl"
	apVerTrace   = ".planning/phases/6.1/verify-trace.jsonl"
)

var apProject = map[string]string{
	apState: `{
  "_meta": {
    "version": "1.0",
    "run_id": "run-2026-02-09-143052",
    "started_at": "2026-02-09T14:30:52Z",
    "last_checkpoint": "2026-02-09T17:05:00Z",
    "status": "running",
    "total_phases": 5,
    "current_phase": "6.3",
    "current_step": "execute",
    "orchestrator_context_pct": 35,
    "human_deferred_count": 1,
    "total_phases_processed": 3
  },
  "spec": { "path": ".planning/ROADMAP.md", "hash": "sha256:a1b2c3d4e5f6", "locked_at": "2026-02-09T14:30:52Z" },
  "roadmap_path": ".planning/ROADMAP.md",
  "phases": {
    "phase_5": {
      "phase_type": "protocol",
      "status": "failed",
      "started_at": "2026-02-09T14:31:00Z",
      "completed_at": null,
      "steps": {
        "verify": { "status": "fail", "alignment_score": 5 },
        "judge": { "alignment": 5, "recommendation": "debug" }
      },
      "debug_attempts": 3,
      "replan_attempts": 0,
      "tokens_used": 200000,
      "human_verify_justification": null,
      "human_verdict": null
    },
    "phase_6.1": {
      "phase_type": "protocol",
      "status": "completed",
      "started_at": "2026-02-09T15:50:00Z",
      "completed_at": "2026-02-09T16:20:00Z",
      "steps": {
        "preflight": { "status": "pass", "timestamp": "2026-02-09T15:50:05Z" },
        "plan_check": { "status": "pass", "confidence": 9 },
        "execute": {
          "status": "completed",
          "tasks": {
            "task_01": { "status": "completed", "commit": "abc1234", "retries": 0 },
            "task_02": { "status": "completed", "commit": "def5678", "retries": 1 }
          }
        },
        "verify": {
          "status": "pass",
          "automated": { "compile": true, "tests": true, "lint": true },
          "alignment_score": 8,
          "scope_creep": []
        },
        "judge": {
          "alignment": 8,
          "recommendation": "proceed"
        }
      },
      "debug_attempts": 0,
      "replan_attempts": 1,
      "tokens_used": 85000,
      "human_verify_justification": null,
      "human_verdict": null
    },
    "phase_6.2": {
      "phase_type": "ui",
      "status": "needs_human_verification",
      "started_at": "2026-02-09T16:21:00Z",
      "completed_at": "2026-02-09T16:50:00Z",
      "steps": {
        "verify": { "status": "pass", "alignment_score": 7 },
        "judge": { "alignment": 7, "recommendation": "proceed" }
      },
      "debug_attempts": 0,
      "replan_attempts": 0,
      "tokens_used": 60000,
      "human_verify_justification": {
        "checkpoint_task_id": "06-02-03",
        "task_description": "Confirm the dark-mode toggle animates on Safari",
        "auto_tasks_passed": 2,
        "auto_tasks_total": 3
      },
      "human_verdict": {
        "verdict": "issues_found",
        "timestamp": "2026-02-09T16:55:00Z",
        "issues": ["Toggle flickers on Safari 17"]
      }
    },
    "phase_6.3": {
      "phase_type": "data",
      "status": "in_progress",
      "started_at": "2026-02-09T16:56:00Z",
      "completed_at": null,
      "steps": { "execute": { "status": "in_progress", "tasks": {} } },
      "debug_attempts": 0,
      "replan_attempts": 0,
      "tokens_used": 30000,
      "human_verify_justification": null,
      "human_verdict": null
    },
    "phase_7": {
      "phase_type": "mixed",
      "status": "not_started",
      "started_at": null,
      "completed_at": null,
      "steps": {},
      "debug_attempts": 0,
      "replan_attempts": 0,
      "tokens_used": 0,
      "human_verify_justification": null,
      "human_verdict": null
    }
  },
  "circuit_breaker": {
    "state": "closed",
    "consecutive_no_progress": 0,
    "consecutive_same_error": 0,
    "last_error": null,
    "cooldown_until": null
  },
  "event_log": [
    { "timestamp": "2026-02-09T14:30:52Z", "phase": null, "step": null, "event": "run_started", "details": {} },
    { "timestamp": "2026-02-09T14:31:00Z", "phase": "5", "step": null, "event": "phase_started", "details": {} },
    { "timestamp": "2026-02-09T15:45:00Z", "phase": "5", "step": "debug", "event": "phase_failed", "details": {} },
    { "timestamp": "2026-02-09T15:50:00Z", "phase": "6.1", "step": null, "event": "phase_started", "details": {} },
    { "timestamp": "2026-02-09T16:20:00Z", "phase": "6.1", "step": "judge", "event": "phase_completed", "details": {} },
    { "timestamp": "2026-02-09T16:21:00Z", "phase": "6.2", "step": null, "event": "phase_started", "details": {} },
    { "timestamp": "2026-02-09T16:55:00Z", "phase": "6.2", "step": null, "event": "human_verdict_recorded", "details": { "verdict": "issues_found" } },
    { "timestamp": "2026-02-09T16:56:00Z", "phase": "6.3", "step": null, "event": "phase_started", "details": {} },
    { "timestamp": "2026-02-09T17:00:00Z", "phase": "6.3", "step": "execute", "event": "checkpoint_written", "details": {} }
  ],
  "metrics": {
    "total_tokens_used": 400000,
    "total_duration_minutes": 150,
    "phases_completed": 1,
    "phases_failed": 1,
    "debug_loops_total": 3,
    "replan_count": 1
  }
}
`,
	apArchive: `{
  "_meta": {
    "version": "1.0",
    "run_id": "run-2026-02-01-090000",
    "started_at": "2026-02-01T09:00:00Z",
    "last_checkpoint": "2026-02-01T09:40:01Z",
    "status": "completed",
    "total_phases": 1,
    "current_phase": "3a",
    "current_step": "rate",
    "human_deferred_count": 0,
    "total_phases_processed": 1,
    "pass_threshold": 9
  },
  "spec": { "path": ".planning/ROADMAP.md", "hash": "sha256:9f86d081", "locked_at": "2026-02-01T09:00:00Z" },
  "phases": {
    "phase_3a": {
      "phase_type": "protocol",
      "status": "completed",
      "steps": {
        "verify": { "status": "pass", "scope_creep": [] },
        "judge": { "recommendation": "proceed", "concerns": ["minor style inconsistency"] },
        "rate": { "status": "pass", "alignment_score": 9.6, "score_band": "excellence" }
      },
      "debug_attempts": 0,
      "replan_attempts": 0,
      "tokens_used": 64000,
      "human_verify_justification": null,
      "human_verdict": null,
      "force_incomplete": false
    }
  },
  "circuit_breaker": { "state": "closed", "consecutive_no_progress": 0, "consecutive_same_error": 0, "last_error": null, "cooldown_until": null },
  "event_log": [
    { "timestamp": "2026-02-01T09:00:00Z", "phase": null, "step": null, "event": "run_started", "details": {} },
    { "timestamp": "2026-02-01T09:35:00Z", "phase": "3a", "step": "rate", "event": "remediation_completed", "details": { "cycle": 1 } },
    { "timestamp": "2026-02-01T09:40:00Z", "phase": "3a", "step": "rate", "event": "phase_completed", "details": {} },
    { "timestamp": "2026-02-01T09:40:01Z", "phase": null, "step": null, "event": "run_completed", "details": {} }
  ],
  "metrics": { "total_tokens_used": 64000, "total_duration_minutes": 40, "phases_completed": 1, "phases_failed": 0, "debug_loops_total": 0, "replan_count": 0 }
}
`,
	apConfig: `{
  "circuit_breaker_config": {
    "no_progress_threshold": 3,
    "same_error_threshold": 5,
    "output_degradation_pct": 70,
    "max_debug_attempts_per_phase": 3,
    "max_replan_attempts_per_phase": 1,
    "max_total_retries_per_run": 10,
    "cooldown_minutes": 5,
    "cost_cap_tokens_per_phase": 500000,
    "cost_cap_tokens_total": 5000000,
    "wall_clock_timeout_minutes_per_phase": 120,
    "wall_clock_timeout_minutes_total": 1440
  }
}
`,
	apPostmortem: `{
  "phase_id": "5",
  "phase_name": "Execution Trace and Observability",
  "timestamp": "2026-02-09T15:45:00Z",
  "status": "failed",
  "root_cause": {
    "category": "acceptance_criteria_unmet",
    "description": "Verifier found 2 of 5 acceptance criteria not met after 3 debug attempts",
    "first_observed_at": "2026-02-09T15:00:00Z",
    "step": "verify"
  },
  "timeline": [
    { "timestamp": "2026-02-09T14:40:00Z", "step": "execute", "event": "Task 05-01 completed", "status": "success" },
    { "timestamp": "2026-02-09T15:00:00Z", "step": "verify", "event": "2 acceptance criteria failed", "status": "failure" },
    { "timestamp": "2026-02-09T15:20:00Z", "step": "debug", "event": "Debug attempt 1: fixed 1 of 2 issues", "status": "partial" }
  ],
  "evidence": {
    "commands_run": ["grep -c trace playbook.md -> 6 (FAIL)"],
    "files_checked": ["src/playbook.md:450 -- missing trace instruction"]
  },
  "attempted_fixes": [
    { "attempt": 1, "description": "Added the trace instruction to the executor prompt", "commit_sha": "abc1234", "resolved": ["criterion_1"], "remaining": ["criterion_2"] },
    { "attempt": 2, "description": "Added it to the verifier prompt", "commit_sha": "bcd2345", "resolved": [], "remaining": ["criterion_2"] },
    { "attempt": 3, "description": "Rewrote the judge prompt", "commit_sha": null, "resolved": [], "remaining": ["criterion_2"] }
  ],
  "prevention_rule": "Verify each prompt template on its own rather than assuming a bulk edit covers all cases."
}
`,
	apLearnings: `# Learnings (current run)

### Phase 5 failure -- acceptance_criteria_unmet
**Prevention rule:** Verify each prompt template on its own rather than assuming a bulk edit covers all cases.
**Context:** Phase 5 (Execution Trace and Observability) failed with category ` + "`acceptance_criteria_unmet`" + `. Recorded: 2026-02-09T15:45:00Z.

### Human Verdict: Phase 6.2 -- ISSUES_FOUND (confidence calibration)
Phase 6.2 (Dark mode toggle) was deferred to human review. Human found issues: toggle flickers on Safari 17.
**Calibration:** Tighten quality checks for similar phases. Specific issues to watch for: toggle flickers on Safari 17.
`,
	apExecTrace: `{"timestamp": "2026-02-09T15:55:00Z", "phase_id": "6.1", "step": "execute", "action": "file_write", "input_summary": "Write src/budget.go", "output_summary": "written (120 lines)", "duration_ms": 450, "status": "success"}
{"timestamp": "2026-02-09T16:00:00Z", "phase_id": "6.1", "step": "execute", "action": "command_run", "input_summary": "go build ./...", "output_summary": "ok", "duration_ms": 3000, "status": "success"}
`,
	apVerTrace: `{"timestamp": "2026-02-09T16:10:00Z", "phase_id": "6.1", "step": "verify", "action": "command_run", "input_summary": "go test ./...", "output_summary": "ok", "duration_ms": 9000, "status": "success"}
`,
	apTrace: `{"timestamp": "2026-02-09T15:54:00Z", "phase_id": "6.1", "step": "phase_runner", "action": "agent_spawn", "input_summary": "Spawning executor for phase 6.1", "output_summary": "2/2 tasks", "duration_ms": 360000, "status": "success"}
{"timestamp": "2026-02-09T15:55:00Z", "phase_id": "6.1", "step": "execute", "action": "file_write", "input_summary": "Write src/budget.go", "output_summary": "written (120 lines)", "duration_ms": 450, "status": "success"}
{"timestamp": "2026-02-09T16:00:00Z", "phase_id": "6.1", "step": "execute", "action": "command_run", "input_summary": "go build ./...", "output_summary": "ok", "duration_ms": 3000, "status": "success"}
{"timestamp": "2026-02-09T16:09:00Z", "phase_id": "6.1", "step": "phase_runner", "action": "agent_spawn", "input_summary": "Spawning verifier for phase 6.1", "output_summary": "pass", "duration_ms": 120000, "status": "success"}
{"timestamp": "2026-02-09T16:10:00Z", "phase_id": "6.1", "step": "verify", "action": "command_run", "input_summary": "go test ./...", "output_summary": "ok", "duration_ms": 9000, "status": "success"}
`,
}

// apEdit changes the consistent project (see testutil.Edit).
type apEdit = testutil.Edit

// apWith is the consistent project with edits.
func apWith(edits ...apEdit) map[string]string { return testutil.EditTree(apProject, edits...) }

// apLine is the 1-based line of the first occurrence of needle.
func apLine(content, needle string) int {
	i := strings.Index(content, needle)
	if i < 0 {
		panic("apLine: no " + needle)
	}
	return strings.Count(content[:i], "\n") + 1
}

func apFloat(f float64) *float64 { return &f }

func init() {
	ok := apWith()
	silent := func(rule string) ruleCase { return ruleCase{name: "consistent project", rule: rule, tree: ok} }
	quiet := func(rule, name string, edits ...apEdit) ruleCase {
		return ruleCase{name: name, rule: rule, tree: apWith(edits...)}
	}
	// fire: the rule must report in file on the line of needle ("" = line 1).
	fire := func(rule, name, file, needle string, edits ...apEdit) ruleCase {
		tree := apWith(edits...)
		line := 1
		if needle != "" {
			line = apLine(tree[file], needle)
		}
		return ruleCase{name: name, rule: rule, fires: true, file: file, line: line, tree: tree}
	}
	withConfig := func(tc ruleCase, cfg config.Config) ruleCase {
		tc.config = &cfg
		return tc
	}
	addRuleCases("autopilot",
		silent("autopilot.state.current-phase-exists"),
		quiet("autopilot.state.current-phase-exists", "no current phase", apEdit{File: apState, Old: `"current_phase": "6.3"`, New: `"current_phase": null`}),
		fire("autopilot.state.current-phase-exists", "unknown current phase", apState, `"current_phase"`, apEdit{File: apState, Old: `"current_phase": "6.3"`, New: `"current_phase": "6.4"`}),

		silent("autopilot.state.checkpoint-after-start"),
		fire("autopilot.state.checkpoint-after-start", "checkpoint before start", apState, `"last_checkpoint"`, apEdit{File: apState, Old: `"last_checkpoint": "2026-02-09T17:05:00Z"`, New: `"last_checkpoint": "2026-02-09T14:00:00Z"`}),

		silent("autopilot.state.checkpoint-after-events"),
		quiet("autopilot.state.checkpoint-after-events", "checkpoint equal to the last event", apEdit{File: apState, Old: `"last_checkpoint": "2026-02-09T17:05:00Z"`, New: `"last_checkpoint": "2026-02-09T17:00:00Z"`}),
		fire("autopilot.state.checkpoint-after-events", "event after the checkpoint", apState, `"last_checkpoint"`, apEdit{File: apState, Old: `"last_checkpoint": "2026-02-09T17:05:00Z"`, New: `"last_checkpoint": "2026-02-09T16:58:00Z"`}),

		silent("autopilot.state.human-verify-iff-deferred"),
		fire("autopilot.state.human-verify-iff-deferred", "deferred without justification", apState, `"status": "needs_human_verification"`,
			apEdit{File: apState, Old: `"human_verify_justification": {
        "checkpoint_task_id": "06-02-03",
        "task_description": "Confirm the dark-mode toggle animates on Safari",
        "auto_tasks_passed": 2,
        "auto_tasks_total": 3
      }`, New: `"human_verify_justification": null`}),
		fire("autopilot.state.human-verify-iff-deferred", "justification on a completed phase", apState, `"human_verify_justification": {`,
			apEdit{File: apState, Old: `"human_verify_justification": null`, New: `"human_verify_justification": { "checkpoint_task_id": "06-01-02" }`, N: 2}),

		silent("autopilot.state.checkpoint-task-id"),
		fire("autopilot.state.checkpoint-task-id", "empty checkpoint task", apState, `"human_verify_justification": {`, apEdit{File: apState, Old: `"checkpoint_task_id": "06-02-03"`, New: `"checkpoint_task_id": " "`}),
		fire("autopilot.state.checkpoint-task-id", "no checkpoint task", apState, `"human_verify_justification": {`, apEdit{File: apState, Old: `"checkpoint_task_id": "06-02-03",`, New: ``}),

		silent("autopilot.state.human-verdict-needs-deferral"),
		quiet("autopilot.state.human-verdict-needs-deferral", "HEAD deferral record",
			apEdit{File: apState, Old: `"human_verdict": null`, New: `"human_verdict": { "verdict": "pass", "timestamp": "2026-02-09T16:30:00Z" }`, N: 2},
			apEdit{File: apState, Old: `"total_phases_processed": 3`, New: `"total_phases_processed": 3, "deferral_history": [{ "phase_id": "6.1", "reason": "deferred" }]`}),
		fire("autopilot.state.human-verdict-needs-deferral", "verdict on a phase never deferred", apState, `"human_verdict": { "verdict": "pass"`,
			apEdit{File: apState, Old: `"human_verdict": null`, New: `"human_verdict": { "verdict": "pass", "timestamp": "2026-02-09T16:30:00Z" }`, N: 2}),

		silent("autopilot.state.verdict-issues"),
		fire("autopilot.state.verdict-issues", "issues_found without issues", apState, `"verdict": "issues_found"`, apEdit{File: apState, Old: `"issues": ["Toggle flickers on Safari 17"]`, New: `"issues": []`}),

		silent("autopilot.state.debug-cap"),
		fire("autopilot.state.debug-cap", "four debug attempts", apState, `"debug_attempts": 4`, apEdit{File: apState, Old: `"debug_attempts": 3`, New: `"debug_attempts": 4`}),
		fire("autopilot.state.debug-cap", "over the config's cap", apState, `"debug_attempts": 3`, apEdit{File: apConfig, Old: `"max_debug_attempts_per_phase": 3`, New: `"max_debug_attempts_per_phase": 2`}),

		silent("autopilot.state.replan-cap"),
		fire("autopilot.state.replan-cap", "two re-plans", apState, `"replan_attempts": 2`, apEdit{File: apState, Old: `"replan_attempts": 1`, New: `"replan_attempts": 2`}),

		silent("autopilot.state.retry-cap"),
		fire("autopilot.state.retry-cap", "eleven retries", apState, `"retries": 11`, apEdit{File: apState, Old: `"retries": 1 }`, New: `"retries": 11 }`}),

		silent("autopilot.state.phase-token-cap"),
		quiet("autopilot.state.phase-token-cap", "over the cap on a failed phase", apEdit{File: apState, Old: `"tokens_used": 200000`, New: `"tokens_used": 600000`}),
		fire("autopilot.state.phase-token-cap", "completed phase over the cap", apState, `"tokens_used": 600000`, apEdit{File: apState, Old: `"tokens_used": 85000`, New: `"tokens_used": 600000`}),

		silent("autopilot.state.total-token-cap"),
		quiet("autopilot.state.total-token-cap", "failed run over the cap", apEdit{File: apState, Old: `"total_tokens_used": 400000`, New: `"total_tokens_used": 6000000`}, apEdit{File: apState, Old: `"status": "running"`, New: `"status": "failed"`}),
		fire("autopilot.state.total-token-cap", "running run over the cap", apState, `"total_tokens_used"`, apEdit{File: apState, Old: `"total_tokens_used": 400000`, New: `"total_tokens_used": 6000000`}),

		silent("autopilot.state.metrics-phases-completed"),
		fire("autopilot.state.metrics-phases-completed", "miscounted", apState, `"phases_completed"`, apEdit{File: apState, Old: `"phases_completed": 1`, New: `"phases_completed": 2`}),
		silent("autopilot.state.metrics-phases-failed"),
		fire("autopilot.state.metrics-phases-failed", "miscounted", apState, `"phases_failed"`, apEdit{File: apState, Old: `"phases_failed": 1`, New: `"phases_failed": 0`}),
		silent("autopilot.state.metrics-debug-loops"),
		fire("autopilot.state.metrics-debug-loops", "miscounted", apState, `"debug_loops_total"`, apEdit{File: apState, Old: `"debug_loops_total": 3`, New: `"debug_loops_total": 2`}),
		silent("autopilot.state.metrics-replan-count"),
		fire("autopilot.state.metrics-replan-count", "miscounted", apState, `"replan_count"`, apEdit{File: apState, Old: `"replan_count": 1`, New: `"replan_count": 0`}),
		silent("autopilot.state.metrics-total-tokens"),
		fire("autopilot.state.metrics-total-tokens", "less than the phases used", apState, `"total_tokens_used"`, apEdit{File: apState, Old: `"total_tokens_used": 400000`, New: `"total_tokens_used": 300000`}),

		silent("autopilot.state.defer-counter-order"),
		fire("autopilot.state.defer-counter-order", "more deferred than processed", apState, `"human_deferred_count"`, apEdit{File: apState, Old: `"human_deferred_count": 1`, New: `"human_deferred_count": 4`}, apEdit{File: apConfig, New: ""}),
		fire("autopilot.state.defer-counter-order", "more processed than planned", apState, `"total_phases_processed"`, apEdit{File: apState, Old: `"total_phases_processed": 3`, New: `"total_phases_processed": 6`}),

		silent("autopilot.state.defer-count-covers-deferred"),
		fire("autopilot.state.defer-count-covers-deferred", "deferral not counted", apState, `"human_deferred_count"`, apEdit{File: apState, Old: `"human_deferred_count": 1`, New: `"human_deferred_count": 0`}),

		silent("autopilot.state.high-defer-rate-event"),
		quiet("autopilot.state.high-defer-rate-event", "high rate with the event",
			apEdit{File: apState, Old: `"human_deferred_count": 1`, New: `"human_deferred_count": 2`},
			apEdit{File: apState, Old: `"event": "checkpoint_written"`, New: `"event": "high_defer_rate_warning"`}),
		withConfig(quiet("autopilot.state.high-defer-rate-event", "2 of 3 under a configured 0.7", apEdit{File: apState, Old: `"human_deferred_count": 1`, New: `"human_deferred_count": 2`}), config.Config{Autopilot: config.Autopilot{DeferRate: apFloat(0.7)}}),
		fire("autopilot.state.high-defer-rate-event", "2 of 3 deferred without the event", apState, `"human_deferred_count"`, apEdit{File: apState, Old: `"human_deferred_count": 1`, New: `"human_deferred_count": 2`}),
		withConfig(fire("autopilot.state.high-defer-rate-event", "HEAD's 5% threshold", apState, `"human_deferred_count"`), config.Config{Autopilot: config.Autopilot{DeferRate: apFloat(0.05)}}),

		silent("autopilot.state.breaker-open-at-threshold"),
		quiet("autopilot.state.breaker-open-at-threshold", "open at the threshold", apEdit{File: apState, Old: `"state": "closed",
    "consecutive_no_progress": 0`, New: `"state": "open",
    "consecutive_no_progress": 3`}),
		fire("autopilot.state.breaker-open-at-threshold", "closed at the threshold", apState, `"consecutive_no_progress"`, apEdit{File: apState, Old: `"consecutive_no_progress": 0`, New: `"consecutive_no_progress": 3`}),
		fire("autopilot.state.breaker-open-at-threshold", "closed at the same-error threshold", apState, `"consecutive_same_error"`, apEdit{File: apState, Old: `"consecutive_same_error": 0,
    "last_error": null`, New: `"consecutive_same_error": 5,
    "last_error": "go build: undefined: Budget"`}),

		silent("autopilot.state.breaker-cooldown-when-open"),
		fire("autopilot.state.breaker-cooldown-when-open", "cooldown while closed", apState, `"cooldown_until"`, apEdit{File: apState, Old: `"cooldown_until": null`, New: `"cooldown_until": "2026-02-09T17:10:00Z"`}),

		silent("autopilot.state.breaker-last-error"),
		fire("autopilot.state.breaker-last-error", "repeated error not recorded", apState, `"last_error"`, apEdit{File: apState, Old: `"consecutive_same_error": 0`, New: `"consecutive_same_error": 2`}),

		silent("autopilot.state.phase-gate"),
		quiet("autopilot.state.phase-gate", "HEAD force_incomplete below the score", apEdit{File: apState, Old: `"alignment": 8,`, New: `"alignment": 6,`}, apEdit{File: apState, Old: `"replan_attempts": 1,`, New: `"replan_attempts": 1, "force_incomplete": true,`}),
		fire("autopilot.state.phase-gate", "judge alignment below 7", apState, `"alignment": 6,`, apEdit{File: apState, Old: `"alignment": 8,`, New: `"alignment": 6,`}),
		fire("autopilot.state.phase-gate", "judge recommended debug", apState, `"recommendation": "debug"
        }`, apEdit{File: apState, Old: `"recommendation": "proceed"
        }`, New: `"recommendation": "debug"
        }`}),
		fire("autopilot.state.phase-gate", "verify failed", apState, `"status": "partial"`, apEdit{File: apState, Old: `"status": "pass",
          "automated"`, New: `"status": "partial",
          "automated"`}),
		fire("autopilot.state.phase-gate", "HEAD rate score below the pass score", apArchive, `"alignment_score": 6.5`, apEdit{File: apArchive, Old: `"alignment_score": 9.6`, New: `"alignment_score": 6.5`}),
		withConfig(fire("autopilot.state.phase-gate", "configured pass score 9", apState, `"alignment": 8,`), config.Config{Autopilot: config.Autopilot{PassScore: apFloat(9)}}),

		silent("autopilot.state.plan-check-confidence"),
		fire("autopilot.state.plan-check-confidence", "pass at confidence 6", apState, `"plan_check"`, apEdit{File: apState, Old: `"confidence": 9`, New: `"confidence": 6`}),

		silent("autopilot.state.event-type"),
		fire("autopilot.state.event-type", "unknown event type", apState, `"phase_finished"`, apEdit{File: apState, Old: `"event": "phase_completed"`, New: `"event": "phase_finished"`}),

		silent("autopilot.state.event-order"),
		fire("autopilot.state.event-order", "event out of order", apState, `"timestamp": "2026-02-09T15:40:00Z"`, apEdit{File: apState, Old: `{ "timestamp": "2026-02-09T15:50:00Z", "phase": "6.1"`, New: `{ "timestamp": "2026-02-09T15:40:00Z", "phase": "6.1"`}),

		silent("autopilot.state.completed-run-phases"),
		quiet("autopilot.state.completed-run-phases", "HEAD split_request in a completed run", apEdit{File: apArchive, Old: `"status": "completed",
      "steps"`, New: `"status": "split_request",
      "steps"`}),
		fire("autopilot.state.completed-run-phases", "completed run with a phase in progress", apState, `"status": "in_progress"`, apEdit{File: apState, Old: `"status": "running"`, New: `"status": "completed"`}),
		fire("autopilot.state.completed-run-phases", "archived run with a deferred phase without verdict", apArchive, `"status": "needs_human_verification"`,
			apEdit{File: apArchive, Old: `"status": "completed",
      "steps"`, New: `"status": "needs_human_verification",
      "steps"`}),

		silent("autopilot.config.phase-caps-within-total"),
		fire("autopilot.config.phase-caps-within-total", "phase token cap over the total", apConfig, `"cost_cap_tokens_per_phase"`, apEdit{File: apConfig, Old: `"cost_cap_tokens_per_phase": 500000`, New: `"cost_cap_tokens_per_phase": 6000000`}),
		fire("autopilot.config.phase-caps-within-total", "phase timeout over the total", apConfig, `"wall_clock_timeout_minutes_per_phase"`, apEdit{File: apConfig, Old: `"wall_clock_timeout_minutes_per_phase": 120`, New: `"wall_clock_timeout_minutes_per_phase": 2000`}),

		silent("autopilot.trace.step-matches-file"),
		fire("autopilot.trace.step-matches-file", "verify span in the execute trace", apExecTrace, `"go build`, apEdit{File: apExecTrace, Old: `"step": "execute", "action": "command_run"`, New: `"step": "verify", "action": "command_run"`}),

		silent("autopilot.trace.phase-id-matches-dir"),
		quiet("autopilot.trace.phase-id-matches-dir", "directory named 06.1-budget",
			apEdit{File: apTrace, To: ".planning/phases/06.1-budget/TRACE.jsonl"},
			apEdit{File: apExecTrace, To: ".planning/phases/06.1-budget/execute-trace.jsonl"},
			apEdit{File: apVerTrace, To: ".planning/phases/06.1-budget/verify-trace.jsonl"}),
		fire("autopilot.trace.phase-id-matches-dir", "span of another phase", apVerTrace, "", apEdit{File: apVerTrace, Old: `"phase_id": "6.1"`, New: `"phase_id": "6.2"`}),
		fire("autopilot.trace.phase-id-matches-dir", "files in the wrong directory", ".planning/phases/7/TRACE.jsonl", "", apEdit{File: apTrace, To: ".planning/phases/7/TRACE.jsonl"}),

		silent("autopilot.trace.timestamp-order"),
		fire("autopilot.trace.timestamp-order", "span out of order", apTrace, `Spawning verifier`, apEdit{File: apTrace, Old: `"timestamp": "2026-02-09T16:09:00Z"`, New: `"timestamp": "2026-02-09T15:59:00Z"`}),

		silent("autopilot.trace.span-in-step-file"),
		fire("autopilot.trace.span-in-step-file", "span not in the step trace", apTrace, `"go build`, apEdit{File: apTrace, Old: `"output_summary": "ok", "duration_ms": 3000`, New: `"output_summary": "ok (cached)", "duration_ms": 3000`}),
		fire("autopilot.trace.span-in-step-file", "step trace missing", apTrace, `"go test`, apEdit{File: apVerTrace, New: ""}),

		silent("autopilot.postmortem.phase-id-matches-file"),
		fire("autopilot.postmortem.phase-id-matches-file", "phase id 6 in phase-5", apPostmortem, `"phase_id"`, apEdit{File: apPostmortem, Old: `"phase_id": "5"`, New: `"phase_id": "6"`}),

		silent("autopilot.postmortem.first-observed-before-report"),
		fire("autopilot.postmortem.first-observed-before-report", "observed after the report", apPostmortem, `"first_observed_at"`, apEdit{File: apPostmortem, Old: `"first_observed_at": "2026-02-09T15:00:00Z"`, New: `"first_observed_at": "2026-02-09T16:00:00Z"`}),

		silent("autopilot.postmortem.timeline-order"),
		fire("autopilot.postmortem.timeline-order", "timeline out of order", apPostmortem, `"2026-02-09T14:50:00Z"`, apEdit{File: apPostmortem, Old: `{ "timestamp": "2026-02-09T15:20:00Z"`, New: `{ "timestamp": "2026-02-09T14:50:00Z"`}),

		silent("autopilot.postmortem.fix-sequence"),
		fire("autopilot.postmortem.fix-sequence", "attempt numbered 3 twice", apPostmortem, `"attempt": 3, "description": "Added`, apEdit{File: apPostmortem, Old: `"attempt": 2`, New: `"attempt": 3`}),

		silent("autopilot.postmortem.fixes-within-debug-cap"),
		fire("autopilot.postmortem.fixes-within-debug-cap", "four fixes", apPostmortem, `"attempt": 4`, apEdit{File: apPostmortem, Old: `"remaining": ["criterion_2"] }
  ],`, New: `"remaining": ["criterion_2"] },
    { "attempt": 4, "description": "Reverted", "commit_sha": null, "resolved": [], "remaining": ["criterion_2"] }
  ],`}),

		silent("autopilot.postmortem.state-phase-failed"),
		quiet("autopilot.postmortem.state-phase-failed", "post-mortem of an earlier run",
			apEdit{File: apState, Old: `"status": "failed"`, New: `"status": "completed"`},
			apEdit{File: apPostmortem, Old: `"timestamp": "2026-02-09T15:45:00Z"`, New: `"timestamp": "2026-02-08T15:45:00Z"`}),
		fire("autopilot.postmortem.state-phase-failed", "phase not failed in the state", apPostmortem, `"phase_id"`, apEdit{File: apState, Old: `"status": "failed"`, New: `"status": "in_progress"`}),

		silent("autopilot.postmortem.learnings-entry"),
		quiet("autopilot.postmortem.learnings-entry", "post-mortem of an earlier run, learnings reset",
			apEdit{File: apPostmortem, Old: `"timestamp": "2026-02-09T15:45:00Z"`, New: `"timestamp": "2026-02-08T15:45:00Z"`},
			apEdit{File: apLearnings, Old: "### Phase 5 failure -- acceptance_criteria_unmet", New: "### Phase 4 failure -- tool_failure"}),
		fire("autopilot.postmortem.learnings-entry", "entry with another category", apLearnings, "### Phase 5 failure", apEdit{File: apLearnings, Old: "### Phase 5 failure -- acceptance_criteria_unmet", New: "### Phase 5 failure -- tool_failure"}),
		fire("autopilot.postmortem.learnings-entry", "no entry", apLearnings, "", apEdit{File: apLearnings, Old: "### Phase 5 failure -- acceptance_criteria_unmet", New: "### Phase 4 failure -- acceptance_criteria_unmet"}),
		fire("autopilot.postmortem.learnings-entry", "learnings.md missing", apPostmortem, `"category"`, apEdit{File: apLearnings, New: ""}),

		silent("autopilot.learnings.verdict-entries"),
		fire("autopilot.learnings.verdict-entries", "verdict differs", apLearnings, "### Human Verdict", apEdit{File: apLearnings, Old: "6.2 -- ISSUES_FOUND", New: "6.2 -- PASS"}),
		fire("autopilot.learnings.verdict-entries", "entry for a phase without verdict", apLearnings, "### Human Verdict", apEdit{File: apLearnings, Old: "Phase 6.2 -- ISSUES_FOUND", New: "Phase 6.1 -- ISSUES_FOUND"}),
		fire("autopilot.learnings.verdict-entries", "verdict without entry", apLearnings, "", apEdit{File: apLearnings, Old: "### Human Verdict: Phase 6.2", New: "### Human Verdict: Phase 9"}),
	)
}

// TestAutopilotStatus: the active run decides for the gate; archives do not.
func TestAutopilotStatus(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tree    map[string]string
		unit    string
		state   string
		effects []string
		reason  string
	}{
		{name: "running", tree: apWith(), unit: "Autopilot run-2026-02-09-143052", state: "running, phase 6.3 execute, breaker closed, last checkpoint 2026-02-09T17:05:00Z", effects: []string{"SHIP"}},
		{name: "failed", tree: apWith(apEdit{File: apState, Old: `"status": "running"`, New: `"status": "failed"`}), unit: "Autopilot run-2026-02-09-143052", state: "failed, phase 6.3 execute, breaker closed", effects: []string{"HOLD"}, reason: "Autopilot run-2026-02-09-143052 failed at phase 6.3 execute"},
		{name: "paused and breaker open", tree: apWith(
			apEdit{File: apState, Old: `"status": "running"`, New: `"status": "paused"`},
			apEdit{File: apState, Old: `"state": "closed",
    "consecutive_no_progress": 0`, New: `"state": "open",
    "consecutive_no_progress": 3`}), unit: "Autopilot run-2026-02-09-143052", state: "paused, phase 6.3 execute, breaker open", effects: []string{"ADVISORY", "HOLD"}, reason: "circuit breaker open (3 steps without progress)"},
		{name: "archive only", tree: apWith(apEdit{File: apState, New: ""}), unit: "Autopilot", state: "no active run, 1 archived, traced phases 6.1"},
		{name: "nested project", tree: map[string]string{"svc/" + apState: apProject[apState]}, unit: "Autopilot svc run-2026-02-09-143052", effects: []string{"SHIP"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runTree(t, tc.tree, nil, nil)
			var got []Status
			for _, s := range res.Statuses {
				if s.Family == "autopilot" {
					got = append(got, s)
				}
			}
			if len(got) != 1 {
				t.Fatalf("got %d autopilot statuses, want 1: %+v", len(got), got)
			}
			s := got[0]
			if s.Unit != tc.unit || (tc.state != "" && s.State != tc.state) {
				t.Errorf("status = %q / %q, want %q / %q", s.Unit, s.State, tc.unit, tc.state)
			}
			var effects []string
			found := tc.reason == ""
			for _, d := range s.Decisions {
				effects = append(effects, d.Effect)
				if strings.Contains(d.Reason, tc.reason) {
					found = true
				}
				if d.File == "" || d.Line < 1 {
					t.Errorf("decision without location: %+v", d)
				}
			}
			if strings.Join(effects, ",") != strings.Join(tc.effects, ",") {
				t.Errorf("effects = %v, want %v (%+v)", effects, tc.effects, s.Decisions)
			}
			if !found {
				t.Errorf("no decision reason contains %q: %+v", tc.reason, s.Decisions)
			}
		})
	}
}

// TestAutopilotConsistentProject: the consistent project has no finding at
// all, so every silent case above is silent for the right reason.
func TestAutopilotConsistentProject(t *testing.T) {
	res := runTree(t, apWith(), nil, nil)
	for _, f := range res.Findings {
		t.Errorf("unexpected finding: %s", formatFinding(f))
	}
	if res.Artifacts != len(apProject) {
		t.Errorf("artifacts = %d, want %d", res.Artifacts, len(apProject))
	}
}

// TestAutopilotWrongTypes: values of the wrong type (which the schema
// reports) are absent for the rules; nothing panics and no rule reports them.
func TestAutopilotWrongTypes(t *testing.T) {
	for name, tree := range map[string]map[string]string{
		"scalars everywhere": {
			apState:      `{"_meta": "x", "phases": [1], "circuit_breaker": 3, "event_log": {"a": 1}, "metrics": null}`,
			apConfig:     `{"circuit_breaker_config": [1, 2]}`,
			apPostmortem: `{"phase_id": 5, "root_cause": "x", "timeline": {}, "attempted_fixes": "none"}`,
			apLearnings:  "not a learnings file\n",
			apTrace:      "[1, 2]\n\"span\"\n{\"step\": 3, \"phase_id\": null, \"timestamp\": 7}\n",
		},
		"nested wrong types": {
			apState: `{"_meta": {"status": 1, "current_phase": 6, "human_deferred_count": "1", "total_phases_processed": 2.5},
			  "phases": {"phase_1": {"status": "completed", "steps": {"judge": "x", "rate": {"alignment_score": "9"}, "execute": {"tasks": {"a": 1, "b": {"retries": "2"}}}},
			    "human_verdict": "pass", "human_verify_justification": [], "debug_attempts": "3"}, "phase_2": 7},
			  "circuit_breaker": {"state": 1, "consecutive_same_error": "2"}, "event_log": [1, "x", {"event": 2, "timestamp": "yesterday"}],
			  "metrics": {"total_tokens_used": "many"}}`,
			apLearnings: "# Learnings (current run)\n### Human Verdict: Phase 1 -- PASS (confidence calibration)\n",
		},
	} {
		t.Run(name, func(t *testing.T) {
			res := runTree(t, tree, nil, nil)
			for _, f := range res.Findings {
				if strings.HasPrefix(f.Rule, "autopilot.") && f.Rule != "autopilot.learnings.verdict-entries" {
					t.Errorf("rule reported a mistyped value: %s", formatFinding(f))
				}
			}
		})
	}
}
