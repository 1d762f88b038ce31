package check

import (
	"math"
	"path"
	"slices"
	"strings"

	"github.com/phasegate/phasegate/internal/artifact"
)

// autopilotTriageRules are the rules of .planning/phases/<phase>/TRIAGE.json
// (playbook STEP 0.5, "Scan logic" and "Routing logic").
var autopilotTriageRules = []Rule{
	{ID: "autopilot.triage.passed-count", Severity: SeverityError, Basis: "S", Summary: "`passed_criteria` is the number of `criteria_checked` entries whose result is pass, and at most `total_criteria`."},
	{ID: "autopilot.triage.pass-ratio", Severity: SeverityError, Basis: "S", Summary: "`pass_ratio` is `passed_criteria / total_criteria` (0.0 when there is no criterion), to two decimals."},
	{ID: "autopilot.triage.routing", Severity: SeverityError, Basis: "S", Summary: "`routing_decision` is verify_only exactly when `pass_ratio` > 0.80, and full_pipeline when no criterion was verifiable (`criteria_source` none, or `criteria_checked` empty)."},
	{ID: "autopilot.triage.verify-only-skips", Severity: SeverityError, Basis: "S", Summary: "A verify_only triage lists research, plan, plan_check and execute in `skipped_steps` (the phase-runner \"MUST NOT spawn\" them)."},
	{ID: "autopilot.triage.full-pipeline-skips", Severity: SeverityWarning, Basis: "I", Summary: "A full_pipeline triage skips no step (`skipped_steps` is [])."},
	{ID: "autopilot.triage.phase-id-matches-dir", Severity: SeverityWarning, Basis: "I", Summary: "`phase_id` is the id of the .planning/phases/<id>/ directory holding the file (a directory named \"03-title\" matches id \"3\")."},
}

// autopilotTriageThreshold is the playbook's "pass_ratio > 0.80".
const autopilotTriageThreshold = 0.80

// autopilotVerifyOnlySkips are the steps a verify_only routing skips.
var autopilotVerifyOnlySkips = []string{"research", "plan", "plan_check", "execute"}

func autopilotCheckTriage(c *ruleCtx, d *artifact.Document) {
	obj := asObj(d.Value)
	if obj == nil {
		return
	}
	if id, ok := str(obj, "phase_id"); ok && !blank(id) {
		dir := path.Base(path.Dir(d.Path))
		if !autopilotPhaseDirMatches(dir, id) {
			c.report("autopilot.triage.phase-id-matches-dir", d, ptr("phase_id"), "`phase_id` is %s but the file is in %s/: move the file to the phase's directory or correct `phase_id`", display(id), dir)
		}
	}
	checked, checkedOK := obj["criteria_checked"].([]any)
	passed := 0
	for _, e := range checked {
		if strOr(asObj(e), "result") == "pass" {
			passed++
		}
	}
	total, totalOK := toInt(obj["total_criteria"])
	claimed, claimedOK := toInt(obj["passed_criteria"])
	if checkedOK && claimedOK && claimed != int64(passed) {
		c.report("autopilot.triage.passed-count", d, ptr("passed_criteria"), "`passed_criteria` is %d but %s of `criteria_checked` passed: count the entries whose result is pass", claimed, countWord(passed, "entry", "entries"))
	} else if totalOK && claimedOK && claimed > total {
		c.report("autopilot.triage.passed-count", d, ptr("passed_criteria"), "`passed_criteria` is %d, more than `total_criteria` %d", claimed, total)
	}
	ratio, ratioOK := toFloat(obj["pass_ratio"])
	if ratioOK && totalOK && claimedOK && total >= 0 {
		want := 0.0
		if total > 0 {
			want = float64(claimed) / float64(total)
		}
		if math.Abs(ratio-want) > 0.005 {
			c.report("autopilot.triage.pass-ratio", d, ptr("pass_ratio"), "`pass_ratio` is %g but passed_criteria/total_criteria is %d/%d = %.2f: write the computed ratio", ratio, claimed, total, want)
		}
	}
	routing, routingOK := str(obj, "routing_decision")
	source, _ := str(obj, "criteria_source")
	if routingOK {
		noCriteria := source == "none" || (checkedOK && len(checked) == 0)
		switch {
		case noCriteria && routing == "verify_only":
			c.report("autopilot.triage.routing", d, ptr("routing_decision"), "`routing_decision` is verify_only but no criterion was verifiable (criteria_source %s, %s checked): with nothing verified the phase goes to full_pipeline", display(source), countWord(len(checked), "criterion", "criteria"))
		case ratioOK && routing == "verify_only" && !(ratio > autopilotTriageThreshold):
			c.report("autopilot.triage.routing", d, ptr("routing_decision"), "`routing_decision` is verify_only but `pass_ratio` is %g: only a ratio above 0.80 skips to verification (full_pipeline otherwise)", ratio)
		case ratioOK && routing == "full_pipeline" && ratio > autopilotTriageThreshold && !noCriteria:
			c.report("autopilot.triage.routing", d, ptr("routing_decision"), "`routing_decision` is full_pipeline but `pass_ratio` is %g: above 0.80 the phase is likely implemented and triage routes to verify_only", ratio)
		}
	}
	skipped, _ := stringList(obj, "skipped_steps")
	switch routing {
	case "verify_only":
		var missing []string
		for _, s := range autopilotVerifyOnlySkips {
			if !slices.Contains(skipped, s) {
				missing = append(missing, s)
			}
		}
		if len(missing) > 0 {
			c.report("autopilot.triage.verify-only-skips", d, ptr("skipped_steps"), "verify_only skips research, plan, plan_check and execute, but `skipped_steps` lacks %s: list every skipped step", strings.Join(missing, ", "))
		}
	case "full_pipeline":
		if len(skipped) > 0 {
			c.report("autopilot.triage.full-pipeline-skips", d, ptr("skipped_steps"), "full_pipeline runs every step, but `skipped_steps` lists %s: write [] (or route to verify_only)", strings.Join(skipped, ", "))
		}
	}
}

// jgTraceRules are the rules of .pipeline/<issue>/pipeline-trace.json
// (practitioner exercise 11).
var jgTraceRules = []Rule{
	{ID: "jg.trace.total-duration", Severity: SeverityError, Basis: "S", Summary: "`total_duration_ms` is the sum of the stages' `duration_ms` (\"Sum of all stage durations\")."},
	{ID: "jg.trace.stage-order", Severity: SeverityWarning, Basis: "I", Summary: "Stages are listed in execution order: `started_at` does not go backwards."},
	{ID: "jg.trace.issue-matches-dir", Severity: SeverityWarning, Basis: "I", Summary: "`issue_id` is the name of the .pipeline/<issue-id>/ folder holding the trace."},
}

func jgCheckTrace(c *ruleCtx, d *artifact.Document) {
	obj := asObj(d.Value)
	if obj == nil {
		return
	}
	if id, ok := str(obj, "issue_id"); ok && !blank(id) {
		if dir := path.Base(path.Dir(d.Path)); dir != id {
			c.report("jg.trace.issue-matches-dir", d, ptr("issue_id"), "`issue_id` is %s but the trace is in .pipeline/%s/: move it to its issue's folder or correct `issue_id`", display(id), dir)
		}
	}
	stages, _ := obj["stages"].([]any)
	var sum int64
	sumOK := true
	var prev string
	for i, e := range stages {
		st := asObj(e)
		n, ok := toInt(st["duration_ms"])
		if !ok {
			sumOK = false
		}
		sum += n
		if at, ok := autopilotTime(st["started_at"]); ok {
			if p, ok := autopilotTime(prev); ok && at.Before(p) {
				c.report("jg.trace.stage-order", d, ptr("stages", i, "started_at"), "stage %d (%s) starts at %s, before the stage listed above it (%s): list the stages in the order they ran", i+1, display(strOr(st, "stage")), strOr(st, "started_at"), prev)
			}
			prev = strOr(st, "started_at")
		}
	}
	if total, ok := toInt(obj["total_duration_ms"]); ok && sumOK && len(stages) > 0 && total != sum {
		c.report("jg.trace.total-duration", d, ptr("total_duration_ms"), "`total_duration_ms` is %d but the stages' `duration_ms` add up to %d: write the sum", total, sum)
	}
}
