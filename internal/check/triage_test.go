package check

import (
	"strings"

	"github.com/phasegate/phasegate/internal/testutil"
)

const (
	triagePath = ".planning/phases/07-kind-flag/TRIAGE.json"
	triageOK   = `{
  "phase_id": "7",
  "timestamp": "2026-03-02T09:15:00Z",
  "criteria_source": "plan",
  "criteria_checked": [
    {"criterion": "a", "command": "grep a x", "result": "pass", "output": "1"},
    {"criterion": "b", "command": "grep b x", "result": "pass", "output": "1"},
    {"criterion": "c", "command": "grep c x", "result": "pass", "output": "1"},
    {"criterion": "d", "command": "grep d x", "result": "pass", "output": "1"},
    {"criterion": "e", "command": "grep e x", "result": "pass", "output": "1"}
  ],
  "total_criteria": 5,
  "passed_criteria": 5,
  "pass_ratio": 1.0,
  "routing_decision": "verify_only",
  "skipped_steps": ["research", "plan", "plan_check", "execute"]
}
`
	tracePath = ".pipeline/ISSUE-7/pipeline-trace.json"
	traceOK   = `{
  "issue_id": "ISSUE-7",
  "stages": [
    {"stage": "plan", "agent": "jg-subplanner", "started_at": "2026-03-01T09:00:00Z", "duration_ms": 6000, "result": "pass", "artifact": ".pipeline/ISSUE-7/plan.json"},
    {"stage": "test", "agent": "jg-tester", "started_at": "2026-03-01T09:00:06Z", "duration_ms": 4000, "result": "fail", "artifact": ".pipeline/ISSUE-7/test-result-fail.json"}
  ],
  "total_duration_ms": 10000,
  "produced_by": "jg-planner"
}
`
)

// edited applies old→new replacements (each must match) to a base text.
func edited(base string, pairs ...string) string {
	for i := 0; i+1 < len(pairs); i += 2 {
		base = testutil.Replace(base, pairs[i], pairs[i+1], 1)
	}
	return base
}

func init() {
	triage := func(pairs ...string) map[string]string {
		return map[string]string{triagePath: edited(triageOK, pairs...)}
	}
	// A full-pipeline triage, as upstream's own files are.
	full := func(pairs ...string) map[string]string {
		base := edited(triageOK, `"pass", "output": "1"},
    {"criterion": "c"`, `"fail", "output": "0"},
    {"criterion": "c"`, `"passed_criteria": 5`, `"passed_criteria": 4`, `"pass_ratio": 1.0`, `"pass_ratio": 0.8`,
			`"routing_decision": "verify_only"`, `"routing_decision": "full_pipeline"`,
			`["research", "plan", "plan_check", "execute"]`, `[]`)
		return map[string]string{triagePath: edited(base, pairs...)}
	}
	line := func(tree map[string]string, file, needle string) int {
		for i, l := range strings.Split(tree[file], "\n") {
			if strings.Contains(l, needle) {
				return i + 1
			}
		}
		panic("needle not found: " + needle)
	}
	fire := func(rule, name, needle string, tree map[string]string) ruleCase {
		file := triagePath
		if _, ok := tree[file]; !ok {
			file = tracePath
		}
		return ruleCase{name: name, rule: rule, fires: true, file: file, line: line(tree, file, needle), tree: tree}
	}
	silent := func(rule, name string, tree map[string]string) ruleCase {
		return ruleCase{name: name, rule: rule, tree: tree}
	}
	var cases []ruleCase
	for _, r := range autopilotTriageRules {
		cases = append(cases, silent(r.ID, "consistent verify_only triage", triage()), silent(r.ID, "consistent full_pipeline triage", full()))
	}
	cases = append(cases,
		silent("autopilot.triage.routing", "no verifiable criteria, as upstream's phase 24 writes it (total 4, none checked)", map[string]string{
			".planning/phases/24-progress-streaming/TRIAGE.json": `{"phase_id": "24", "timestamp": "2026-02-12T00:00:00Z", "criteria_source": "roadmap", "criteria_checked": [], "total_criteria": 4, "passed_criteria": 0, "pass_ratio": 0.0, "routing_decision": "full_pipeline", "skipped_steps": [], "note": "prose-only criteria"}` + "\n"}),
		fire("autopilot.triage.passed-count", "passed count disagrees with the checks", `"passed_criteria"`, full(`"passed_criteria": 4`, `"passed_criteria": 5`, `"pass_ratio": 0.8`, `"pass_ratio": 1.0`, `"routing_decision": "full_pipeline"`, `"routing_decision": "verify_only"`, `"skipped_steps": []`, `"skipped_steps": ["research", "plan", "plan_check", "execute"]`)),
		fire("autopilot.triage.passed-count", "more passed than total", `"passed_criteria"`, triage(`"total_criteria": 5`, `"total_criteria": 4`, `"pass_ratio": 1.0`, `"pass_ratio": 1.25`)),
		fire("autopilot.triage.pass-ratio", "ratio is not passed/total", `"pass_ratio"`, full(`"pass_ratio": 0.8`, `"pass_ratio": 0.6`)),
		silent("autopilot.triage.pass-ratio", "ratio rounded to two decimals", map[string]string{triagePath: edited(triageOK,
			`"total_criteria": 5`, `"total_criteria": 6`, `"pass_ratio": 1.0`, `"pass_ratio": 0.83`)}),
		fire("autopilot.triage.routing", "verify_only at exactly 0.80", `"routing_decision"`, full(`"routing_decision": "full_pipeline"`, `"routing_decision": "verify_only"`, `"skipped_steps": []`, `"skipped_steps": ["research", "plan", "plan_check", "execute"]`)),
		fire("autopilot.triage.routing", "full_pipeline above 0.80", `"routing_decision"`, triage(`"routing_decision": "verify_only"`, `"routing_decision": "full_pipeline"`, `["research", "plan", "plan_check", "execute"]`, `[]`)),
		fire("autopilot.triage.routing", "verify_only with no verifiable criteria", `"routing_decision"`, map[string]string{triagePath: `{"phase_id": "7", "timestamp": "2026-03-02T09:15:00Z", "criteria_source": "none", "criteria_checked": [], "total_criteria": 0, "passed_criteria": 0, "pass_ratio": 0.0,
  "routing_decision": "verify_only", "skipped_steps": ["research", "plan", "plan_check", "execute"]}
`}),
		fire("autopilot.triage.verify-only-skips", "verify_only that still plans", `"skipped_steps"`, triage(`["research", "plan", "plan_check", "execute"]`, `["research", "execute"]`)),
		fire("autopilot.triage.full-pipeline-skips", "full_pipeline that skips research", `"skipped_steps"`, full(`"skipped_steps": []`, `"skipped_steps": ["research"]`)),
		fire("autopilot.triage.phase-id-matches-dir", "phase id of another directory", `"phase_id"`, triage(`"phase_id": "7"`, `"phase_id": "8"`)),
		silent("autopilot.triage.phase-id-matches-dir", "decimal phase in its directory", map[string]string{
			".planning/phases/26.2-update-notification-system/TRIAGE.json": edited(triageOK, `"phase_id": "7"`, `"phase_id": "26.2"`)}),
	)
	addRuleCases("autopilot", cases...)

	trace := func(pairs ...string) map[string]string {
		return map[string]string{tracePath: edited(traceOK, pairs...)}
	}
	addRuleCases("jg",
		silent("jg.trace.total-duration", "durations add up", trace()),
		fire("jg.trace.total-duration", "total is not the sum", `"total_duration_ms"`, trace(`"total_duration_ms": 10000`, `"total_duration_ms": 9000`)),
		silent("jg.trace.stage-order", "stages in order", trace()),
		fire("jg.trace.stage-order", "a stage starts before the one above it", `"stage": "test"`, trace(`"2026-03-01T09:00:06Z"`, `"2026-03-01T08:59:00Z"`)),
		silent("jg.trace.issue-matches-dir", "issue id names the folder", trace()),
		fire("jg.trace.issue-matches-dir", "issue id of another folder", `"issue_id"`, trace(`"issue_id": "ISSUE-7"`, `"issue_id": "ISSUE-8"`)),
		silent("jg.provenance.produced-by", "a trace by the planner", trace()),
		fire("jg.provenance.produced-by", "a trace by the worker", `"produced_by"`, trace(`"produced_by": "jg-planner"`, `"produced_by": "jg-worker"`)),
	)
}
