package check

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/phasegate/phasegate/internal/artifact"
)

// PACE rules (docs/contracts/pace.md). A group is one .pace directory: the plan,
// the advisory backlog and every day-N directory.

var _ = registerFamily(&family{
	name: "pace", // checked a day at a time by runner.checkPACEUnit, not by a check
	rules: append(append([]Rule{
		{ID: "pace.day-matches-dir", Severity: SeverityWarning, Basis: "I", Summary: "`day` equals N of the .pace/day-N directory the report is in (the framework overwrites it, so a mismatch means a hand edit or a misplaced file)."},
		{ID: "pace.story.theme-matches-plan", Severity: SeverityWarning, Basis: "S", Summary: "A docs-shape story card's `theme` equals the plan's `days[].theme` for that day."},
		{ID: "pace.story.duplicate-criterion", Severity: SeverityWarning, Basis: "I", Summary: "A story does not list the same acceptance criterion twice."},
		{ID: "pace.handoff.commit-full-sha", Severity: SeverityWarning, Basis: "I", Summary: "`commit` is a full 40-character SHA (the schema accepts 7–40 hex characters)."},
		{ID: "pace.handoff.tdd-red-phase", Severity: SeverityWarning, Basis: "S", Summary: "`tdd_red_phase_confirmed` is true when the config says `pace.tdd_enforcement: true` (and false when it says false); unchecked when the config does not say."},
		{ID: "pace.handoff.iterations-within-max", Severity: SeverityWarning, Basis: "I", Summary: "`iterations_used` is at most `pace.max_iterations` from the config, when set."},
		{ID: "pace.handoff.known-gap-out-of-scope", Severity: SeverityWarning, Basis: "I", Summary: "Each `known_gaps` entry matches an `out_of_scope` item of the day's story card (deferrals must be declared)."},
		{ID: "pace.gate.hold-iff-fail", Severity: SeverityError, Basis: "S", Summary: "`gate_decision` is HOLD exactly when at least one criterion result is FAIL."},
		{ID: "pace.gate.hold-reason-iff-hold", Severity: SeverityError, Basis: "S", Summary: "`hold_reason` is non-empty exactly when the gate decided HOLD."},
		{ID: "pace.gate.blockers-missing", Severity: SeverityError, Basis: "S", Summary: "A gate with FAIL results lists at least one blocker."},
		{ID: "pace.gate.blocker-count", Severity: SeverityWarning, Basis: "I", Summary: "`blockers` has one entry per FAIL result."},
		{ID: "pace.gate.deferred-count", Severity: SeverityWarning, Basis: "I", Summary: "`deferred` has one entry per PARTIAL result."},
		{ID: "pace.gate.evidence-nonempty", Severity: SeverityWarning, Basis: "I", Summary: "Every criterion result cites evidence."},
		{ID: "pace.gate.criterion-missing", Severity: SeverityError, Basis: "S", Summary: "Every acceptance criterion of the day's story card has a result in the gate report (exact text; either story shape)."},
		{ID: "pace.gate.criterion-unknown", Severity: SeverityWarning, Basis: "I", Summary: "Every criterion in the gate report is an acceptance criterion of the day's story card."},
		{ID: "pace.gate.partial-out-of-scope", Severity: SeverityWarning, Basis: "I", Summary: "Each PARTIAL criterion maps (loosely) to an `out_of_scope` item of the story card or a `deferred` entry naming one."},
		{ID: "pace.day.report-after-hold", Severity: SeverityWarning, Basis: "I", Summary: "SENTINEL runs only after a GATE that did not HOLD, and CONDUIT only after a SENTINEL that did not HOLD (stale retries can leave such files)."},
		{ID: "pace.day.cycle-requires-ship", Severity: SeverityError, Basis: "S", Summary: "cycle.md exists only when GATE decided SHIP and SENTINEL and CONDUIT decided SHIP or ADVISORY."},
		{ID: "pace.cycle.forge-within-cycle", Severity: SeverityError, Basis: "S", Summary: "`forge_cost_usd` is at most `cycle_cost_usd` (FORGE's cost is a subset of the day's)."},
		{ID: "pace.attempts.run-sequence", Severity: SeverityError, Basis: "S", Summary: "Attempts are numbered 1, 2, … n in order."},
		{ID: "pace.attempts.date-order", Severity: SeverityWarning, Basis: "I", Summary: "Attempt dates do not go backwards."},
		{ID: "pace.attempts.hold-reason-only-on-hold", Severity: SeverityError, Basis: "S", Summary: "`hold_reason` appears only on attempts whose outcome is HOLD."},
		{ID: "pace.attempts.hold-without-reason", Severity: SeverityWarning, Basis: "R", Summary: "A HOLD attempt carries its `hold_reason` (the code omits an empty one)."},
		{ID: "pace.attempts.hold-reason-length", Severity: SeverityError, Basis: "S", Summary: "`hold_reason` is at most 120 characters (the framework truncates it)."},
		{ID: "pace.attempts.ship-last", Severity: SeverityWarning, Basis: "I", Summary: "At most one attempt shipped, and it is the last one."},
		{ID: "pace.attempts.cycle-iff-shipped", Severity: SeverityWarning, Basis: "I", Summary: "cycle.md exists exactly when the last attempt's outcome is SHIP."},
		{ID: "pace.plan.day-unique", Severity: SeverityError, Basis: "S", Summary: "Each `days[].day` of the plan appears once."},
		{ID: "pace.plan.duration-matches-days", Severity: SeverityWarning, Basis: "I", Summary: "`sprint.duration_days` equals the number of planned days."},
		{ID: "pace.plan.shipped-at-iff-shipped", Severity: SeverityWarning, Basis: "I", Summary: "A v3 plan story has `shipped_at` exactly when its status is shipped."},
		{ID: "pace.plan.cycle-story-shipped", Severity: SeverityWarning, Basis: "I", Summary: "A day whose cycle.md exists has its v3 plan story `story-N` marked shipped."},
		{ID: "pace.backlog.id-unique", Severity: SeverityError, Basis: "R", Summary: "Advisory backlog ids are unique."},
		{ID: "pace.backlog.finding-unique", Severity: SeverityError, Basis: "R", Summary: "Advisory backlog findings are unique (the framework de-duplicates by text)."},
	}, paceAgentRules("sentinel", "SENTINEL")...), paceAgentRules("conduit", "CONDUIT")...),
})

// paceAgentRules are the rules SENTINEL and CONDUIT reports share.
func paceAgentRules(name, agent string) []Rule {
	return []Rule{
		{ID: "pace." + name + ".hold-iff-fail", Severity: SeverityError, Basis: "S", Summary: agent + " decides HOLD exactly when at least one finding is FAIL."},
		{ID: "pace." + name + ".advisory-iff-advisories", Severity: SeverityError, Basis: "S", Summary: agent + " decides ADVISORY exactly when no finding is FAIL and at least one is ADVISORY."},
		{ID: "pace." + name + ".ship-without-advisories", Severity: SeverityWarning, Basis: "I", Summary: agent + " decides SHIP only with no ADVISORY finding (the docs' rule; the agent prompt's weaker rule allows it, so this is a warning — set it to error for the docs' rule)."},
		{ID: "pace." + name + ".blocker-per-fail", Severity: SeverityError, Basis: "S", Summary: "`blockers` has one entry per FAIL finding."},
		{ID: "pace." + name + ".advisory-per-advisory", Severity: SeverityError, Basis: "S", Summary: "`advisories` has one entry per ADVISORY finding."},
		{ID: "pace." + name + ".advisories-missing", Severity: SeverityWarning, Basis: "R", Summary: "A report with an ADVISORY finding has an `advisories` list (without one, PACE fills in [] and backlogs nothing: the advisory is lost; a warning because PACE's schema check accepts the report)."},
		{ID: "pace." + name + ".hold-reason-iff-hold", Severity: SeverityError, Basis: "S", Summary: "`hold_reason` is non-empty exactly when " + agent + " decided HOLD."},
		{ID: "pace." + name + ".evidence-nonempty", Severity: SeverityWarning, Basis: "I", Summary: "Every finding cites evidence."},
	}
}

var paceDayRE = regexp.MustCompile(`(?:^|/)\.pace/day-([0-9]+)/[^/]+$`)

// paceDay is one day directory's artifacts and what the rules learn of them.
type paceDay struct {
	n                              int
	dir                            string
	story, handoff, gate, sentinel *artifact.Document
	conduit, cycle, attempts       *artifact.Document
	criteria, outOfScope           []string // from the story card, either shape
	gateDecision, sentinelDecision string
	conduitDecision                string
}

// paceDayOf is the day number of a file in a .pace/day-N/ directory; ok is
// false for a file elsewhere.
func paceDayOf(p string) (n int, ok bool) {
	m := paceDayRE.FindStringSubmatch(p)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// add files a document of the day directory under its role.
func (day *paceDay) add(c *ruleCtx, d *artifact.Document) {
	if role := map[string]**artifact.Document{"pace.story-card": &day.story, "pace.handoff": &day.handoff,
		"pace.gate-report": &day.gate, "pace.sentinel-report": &day.sentinel, "pace.conduit-report": &day.conduit,
		"pace.cycle": &day.cycle, "pace.attempts": &day.attempts}[d.Kind.ID]; role != nil {
		*role = d
	}
	if obj := asObj(d.Value); obj != nil {
		if got, ok := toInt(obj["day"]); ok && got != int64(day.n) {
			c.report("pace.day-matches-dir", d, ptr("day"), "`day` is %d but the file is in day-%d/: move the file or correct `day`", got, day.n)
		}
	}
}

// paceUnit is a PACE project checked one day at a time: the rules across
// days need only the plan (and its themes) and the latest day, so a run can
// decode a day, check it and drop it (see runner.checkPACEUnit), and memory
// does not grow with the number of days.
type paceUnit struct {
	c      *ruleCtx
	plan   *artifact.Document
	themes map[int]string
	last   *paceDay // the highest day checked so far
}

// newPaceUnit checks the plan (nil when there is none).
func newPaceUnit(c *ruleCtx, plan *artifact.Document) *paceUnit {
	return &paceUnit{c: c, plan: plan, themes: paceCheckPlan(c, plan)}
}

func (u *paceUnit) checkDay(day *paceDay) {
	c := u.c
	paceCheckStory(c, day, u.plan, u.themes)
	paceCheckGate(c, day)
	day.sentinelDecision = paceCheckAgent(c, day.sentinel, "sentinel", "SENTINEL")
	day.conduitDecision = paceCheckAgent(c, day.conduit, "conduit", "CONDUIT")
	paceCheckHandoff(c, day)
	paceCheckDay(c, day)
	paceCheckCycle(c, day)
	paceCheckAttempts(c, day)
	paceCheckPlanShipped(c, day, u.plan)
	if u.last == nil || day.n > u.last.n {
		u.last = day
	}
}

// finish checks the advisory backlog (nil when none) and reports where the
// unit stands: its latest day.
func (u *paceUnit) finish(g *Group, backlog *artifact.Document) {
	paceCheckBacklog(u.c, backlog)
	if u.last != nil {
		paceStatus(u.c, g, u.last)
	}
}

// paceCheckPlan checks the plan and returns the docs shape's theme per day.
func paceCheckPlan(c *ruleCtx, plan *artifact.Document) map[int]string {
	themes := map[int]string{}
	obj := asObj(valueOf(plan))
	if obj == nil {
		return themes
	}
	seen := map[int64]int{}
	daysList := asList(obj["days"])
	for i, e := range daysList {
		d := asObj(e)
		n, ok := toInt(d["day"])
		if !ok {
			continue
		}
		if first, dup := seen[n]; dup {
			c.report("pace.plan.day-unique", plan, ptr("days", i, "day"), "day %d is planned twice (also `days[%d]`): give each day one entry", n, first)
			continue
		}
		seen[n] = i
		if t, ok := str(d, "theme"); ok {
			themes[int(n)] = t
		}
	}
	if sprint := asObj(obj["sprint"]); sprint != nil && daysList != nil {
		if dur, ok := toInt(sprint["duration_days"]); ok && dur != int64(len(daysList)) {
			c.report("pace.plan.duration-matches-days", plan, ptr("sprint", "duration_days"), "`sprint.duration_days` is %d but the plan has %d days", dur, len(daysList))
		}
	}
	for i, e := range asList(obj["stories"]) {
		s := asObj(e)
		status, _ := str(s, "status")
		at := s["shipped_at"] != nil
		switch {
		case status == "shipped" && !at:
			c.report("pace.plan.shipped-at-iff-shipped", plan, ptr("stories", i, "status"), "story %s is shipped but has no `shipped_at`", display(strOr(s, "id")))
		case status != "shipped" && at:
			c.report("pace.plan.shipped-at-iff-shipped", plan, ptr("stories", i, "shipped_at"), "story %s has `shipped_at` but its status is %s, not shipped", display(strOr(s, "id")), display(status))
		}
	}
	return themes
}

// valueOf is d's value, or nil for a missing document.
func valueOf(d *artifact.Document) any {
	if d == nil {
		return nil
	}
	return d.Value
}

// paceCheckStory learns the story's criteria and checks the story card.
func paceCheckStory(c *ruleCtx, day *paceDay, plan *artifact.Document, themes map[int]string) {
	obj := asObj(valueOf(day.story))
	if obj == nil {
		return
	}
	checkDup := func(list []string, at func(i int) []string) {
		seen := map[string]bool{}
		for i, cr := range list {
			if seen[cr] {
				c.report("pace.story.duplicate-criterion", day.story, at(i), "acceptance criterion %s is listed twice", display(cr))
			}
			seen[cr] = true
		}
	}
	if stories, ok := obj["stories"].([]any); ok {
		for i, e := range stories {
			st := asObj(e)
			crit, _ := stringList(st, "acceptance_criteria")
			oos, _ := stringList(st, "out_of_scope")
			day.criteria = append(day.criteria, crit...)
			day.outOfScope = append(day.outOfScope, oos...)
			checkDup(crit, func(j int) []string { return ptr("stories", i, "acceptance_criteria", j) })
		}
	} else {
		crit, _ := stringList(obj, "acceptance")
		day.criteria = crit
		day.outOfScope, _ = stringList(obj, "out_of_scope")
		checkDup(crit, func(j int) []string { return ptr("acceptance", j) })
	}
	if theme, ok := str(obj, "theme"); ok && plan != nil {
		if want, ok := themes[day.n]; ok && strings.TrimSpace(want) != strings.TrimSpace(theme) {
			c.report("pace.story.theme-matches-plan", day.story, ptr("theme"), "theme %s differs from the plan's theme for day %d in %s: %s", display(theme), day.n, plan.Path, display(want))
		}
	}
}

// paceCheckGate checks the gate report on its own and against the story.
func paceCheckGate(c *ruleCtx, day *paceDay) {
	d := day.gate
	obj := asObj(valueOf(d))
	if obj == nil {
		return
	}
	decision := strOr(obj, "gate_decision")
	if decision != "SHIP" && decision != "HOLD" {
		decision = "" // not a decision the schema allows: already reported there
	}
	day.gateDecision = decision
	results := asList(obj["criteria_results"])
	var fails, partials []int
	for i, e := range results {
		r := asObj(e)
		switch strOr(r, "result") {
		case "FAIL":
			fails = append(fails, i)
		case "PARTIAL":
			partials = append(partials, i)
		}
		if ev, ok := str(r, "evidence"); ok && blank(ev) {
			c.report("pace.gate.evidence-nonempty", d, ptr("criteria_results", i, "evidence"), "criterion %s has no evidence: cite the test, log line, CI URL or code that shows the result", display(strOr(r, "criterion")))
		}
	}
	switch {
	case decision == "HOLD" && len(fails) == 0:
		c.report("pace.gate.hold-iff-fail", d, ptr("gate_decision"), "`gate_decision` is HOLD but no criterion result is FAIL: mark the failing criterion FAIL, or decide SHIP")
	case decision == "SHIP" && len(fails) > 0:
		first := asObj(results[fails[0]])
		c.report("pace.gate.hold-iff-fail", d, ptr("gate_decision"), "`gate_decision` is SHIP but %s (first: %s): a FAIL means HOLD", countWord(len(fails), "criterion fails", "criteria fail"), display(strOr(first, "criterion")))
	}
	paceHoldReason(c, d, obj, "pace.gate.hold-reason-iff-hold", "gate_decision", decision)
	// A report without blockers is one PACE fills with [] and accepts:
	// nothing to compare then.
	blockers, hasBlockers := stringList(obj, "blockers")
	switch {
	case !hasBlockers:
	case len(fails) > 0 && len(blockers) == 0:
		c.report("pace.gate.blockers-missing", d, ptr("blockers"), "%s but `blockers` is empty: describe each failure for FORGE", countWord(len(fails), "criterion fails", "criteria fail"))
	case len(blockers) != len(fails):
		c.report("pace.gate.blocker-count", d, ptr("blockers"), "`blockers` has %d entries but %s: write one blocker per FAIL", len(blockers), countWord(len(fails), "criterion fails", "criteria fail"))
	}
	if deferred, ok := stringList(obj, "deferred"); ok && len(deferred) != len(partials) {
		c.report("pace.gate.deferred-count", d, ptr("deferred"), "`deferred` has %d entries but %s PARTIAL: write one deferred item per PARTIAL", len(deferred), countWord(len(partials), "criterion is", "criteria are"))
	}
	if day.story == nil {
		return
	}
	inGate := map[string]bool{}
	for i, e := range results {
		cr, ok := str(asObj(e), "criterion")
		if !ok {
			continue
		}
		inGate[cr] = true
		if !slices.Contains(day.criteria, cr) {
			c.report("pace.gate.criterion-unknown", d, ptr("criteria_results", i, "criterion"), "criterion %s is not an acceptance criterion of %s: use the story's exact text", display(cr), day.story.Path)
		}
	}
	for _, cr := range day.criteria {
		if !inGate[cr] {
			c.report("pace.gate.criterion-missing", d, ptr("criteria_results"), "acceptance criterion %s of %s has no result: GATE must judge every criterion, with its exact text", display(cr), day.story.Path)
		}
	}
	for _, i := range partials {
		cr := strOr(asObj(results[i]), "criterion")
		if !slices.ContainsFunc(day.outOfScope, func(o string) bool { return looselyMatches(cr, o) }) {
			c.report("pace.gate.partial-out-of-scope", d, ptr("criteria_results", i, "result"), "PARTIAL criterion %s maps to no `out_of_scope` item of %s (it lists %s): a PARTIAL is only valid for declared out-of-scope work", display(cr), day.story.Path, listOrNone(day.outOfScope))
		}
	}
}

// paceHoldReason: hold_reason is non-empty exactly on HOLD.
func paceHoldReason(c *ruleCtx, d *artifact.Document, obj map[string]any, rule, field, decision string) {
	reason, has := str(obj, "hold_reason")
	switch {
	case decision == "HOLD" && blank(reason):
		at := ptr("hold_reason")
		if !has {
			at = ptr(field)
		}
		c.report(rule, d, at, "HOLD needs a `hold_reason`: an actionable instruction for FORGE")
	case decision != "HOLD" && decision != "" && !blank(reason):
		c.report(rule, d, ptr("hold_reason"), "`hold_reason` is set but the decision is %s: clear it, or decide HOLD", decision)
	}
}

// paceCheckAgent checks a SENTINEL or CONDUIT report and returns its decision.
func paceCheckAgent(c *ruleCtx, d *artifact.Document, name, agent string) string {
	obj := asObj(valueOf(d))
	if obj == nil {
		return ""
	}
	field := name + "_decision"
	decision := strOr(obj, field)
	if decision != "SHIP" && decision != "HOLD" && decision != "ADVISORY" {
		decision = "" // not a decision the schema allows: already reported there
	}
	var fails, advs int
	firstAdv := -1
	for i, e := range asList(obj["findings"]) {
		f := asObj(e)
		switch strOr(f, "result") {
		case "FAIL":
			fails++
		case "ADVISORY":
			if advs == 0 {
				firstAdv = i
			}
			advs++
		}
		if ev, ok := str(f, "evidence"); ok && blank(ev) {
			c.report("pace."+name+".evidence-nonempty", d, ptr("findings", i, "evidence"), "check %s has no evidence: cite the file, line or test", display(strOr(f, "check")))
		}
	}
	rule := func(r string) string { return "pace." + name + "." + r }
	switch {
	case fails > 0 && decision != "HOLD" && decision != "":
		c.report(rule("hold-iff-fail"), d, ptr(field), "%s decided %s but %s FAIL: a FAIL means HOLD", agent, decision, countWord(fails, "finding is", "findings are"))
	case fails == 0 && decision == "HOLD":
		c.report(rule("hold-iff-fail"), d, ptr(field), "%s decided HOLD but no finding is FAIL: mark the blocking finding FAIL, or decide %s", agent, map[bool]string{true: "ADVISORY", false: "SHIP"}[advs > 0])
	case decision == "ADVISORY" && advs == 0:
		c.report(rule("advisory-iff-advisories"), d, ptr(field), "%s decided ADVISORY but no finding is ADVISORY: decide SHIP, or mark the finding ADVISORY", agent)
	case decision == "SHIP" && advs > 0:
		c.report(rule("ship-without-advisories"), d, ptr(field), "%s decided SHIP with %s: SHIP means no failures or advisories — decide ADVISORY", agent, countWord(advs, "ADVISORY finding", "ADVISORY findings"))
	}
	paceHoldReason(c, d, obj, rule("hold-reason-iff-hold"), field, decision)
	if blockers, ok := stringList(obj, "blockers"); ok && len(blockers) != fails {
		c.report(rule("blocker-per-fail"), d, ptr("blockers"), "`blockers` has %d entries but %s FAIL: write one blocker per FAIL finding", len(blockers), countWord(fails, "finding is", "findings are"))
	}
	if advisories, ok := stringList(obj, "advisories"); ok && len(advisories) != advs {
		c.report(rule("advisory-per-advisory"), d, ptr("advisories"), "`advisories` has %d entries but %s ADVISORY: write one advisory per ADVISORY finding", len(advisories), countWord(advs, "finding is", "findings are"))
	}
	if _, has := obj["advisories"]; !has && advs > 0 {
		// The agent (sentinel.py, conduit.py) fills in advisories=[] before
		// it validates, and the orchestrator backlogs that list: the
		// advisory is lost, though the report passes PACE's schema check.
		c.report(rule("advisories-missing"), d, ptr("findings", firstAdv, "result"), "%s ADVISORY but the report has no `advisories`: PACE fills in [] and puts nothing in the advisory backlog — write one advisory per ADVISORY finding", countWord(advs, "finding is", "findings are"))
	}
	return decision
}

var shortSHA = regexp.MustCompile(`^[0-9a-f]{7,39}$`)

func paceCheckHandoff(c *ruleCtx, day *paceDay) {
	d := day.handoff
	obj := asObj(valueOf(d))
	if obj == nil {
		return
	}
	if commit, ok := str(obj, "commit"); ok && shortSHA.MatchString(commit) {
		c.report("pace.handoff.commit-full-sha", d, ptr("commit"), "`commit` %s is abbreviated: write the full 40-character SHA (git rev-parse HEAD)", display(commit))
	}
	if want := c.opts.Config.Pace.TDDEnforcement; want != nil {
		if got, ok := boolean(obj, "tdd_red_phase_confirmed"); ok && got != *want {
			if *want {
				c.report("pace.handoff.tdd-red-phase", d, ptr("tdd_red_phase_confirmed"), "TDD enforcement is on (pace.tdd_enforcement) but the red phase was not confirmed: FORGE must call confirm_red_phase before the handoff")
			} else {
				c.report("pace.handoff.tdd-red-phase", d, ptr("tdd_red_phase_confirmed"), "TDD enforcement is off (pace.tdd_enforcement: false) but the handoff confirms a red phase")
			}
		}
	}
	if max := c.opts.Config.Pace.MaxIterations; max > 0 {
		if got, ok := toInt(obj["iterations_used"]); ok && got > int64(max) {
			c.report("pace.handoff.iterations-within-max", d, ptr("iterations_used"), "`iterations_used` is %d, over pace.max_iterations %d", got, max)
		}
	}
	if day.story != nil {
		gaps, _ := stringList(obj, "known_gaps")
		for i, gap := range gaps {
			if !slices.ContainsFunc(day.outOfScope, func(o string) bool { return looselyMatches(gap, o) }) {
				c.report("pace.handoff.known-gap-out-of-scope", d, ptr("known_gaps", i), "known gap %s is not declared out of scope in %s: add a matching `out_of_scope` entry to the story card, or finish the work", display(gap), day.story.Path)
			}
		}
	}
}

// paceCheckDay checks the order of the day's reports and the cycle record.
func paceCheckDay(c *ruleCtx, day *paceDay) {
	if day.gateDecision == "HOLD" && day.sentinel != nil {
		c.report("pace.day.report-after-hold", day.sentinel, ptr("sentinel_decision"), "a SENTINEL report exists although GATE decided HOLD in %s: SENTINEL runs only after GATE passes — is this file left from an earlier attempt?", day.gate.Path)
	}
	if day.sentinelDecision == "HOLD" && day.conduit != nil {
		c.report("pace.day.report-after-hold", day.conduit, ptr("conduit_decision"), "a CONDUIT report exists although SENTINEL decided HOLD in %s: CONDUIT runs only after SENTINEL passes — is this file left from an earlier attempt?", day.sentinel.Path)
	}
	if day.cycle == nil {
		return
	}
	var why []string
	switch {
	case day.gate == nil:
		why = append(why, "there is no gate report")
	case day.gateDecision != "SHIP":
		why = append(why, fmt.Sprintf("GATE decided %s", cmp.Or(day.gateDecision, "nothing")))
	}
	for _, a := range []struct {
		name     string
		doc      *artifact.Document
		decision string
	}{{"SENTINEL", day.sentinel, day.sentinelDecision}, {"CONDUIT", day.conduit, day.conduitDecision}} {
		switch {
		case a.doc == nil:
			why = append(why, "there is no "+a.name+" report")
		case a.decision != "SHIP" && a.decision != "ADVISORY":
			why = append(why, fmt.Sprintf("%s decided %s", a.name, cmp.Or(a.decision, "nothing")))
		}
	}
	if len(why) > 0 {
		c.report("pace.day.cycle-requires-ship", day.cycle, nil, "cycle.md marks day %d as shipped, but %s: the orchestrator writes it only after GATE, SENTINEL and CONDUIT pass", day.n, strings.Join(why, ", "))
	}
}

func paceCheckCycle(c *ruleCtx, day *paceDay) {
	obj := asObj(valueOf(day.cycle))
	if obj == nil {
		return
	}
	forge, ok1 := toFloat(obj["forge_cost_usd"])
	cycle, ok2 := toFloat(obj["cycle_cost_usd"])
	if ok1 && ok2 && forge > cycle {
		c.report("pace.cycle.forge-within-cycle", day.cycle, ptr("forge_cost_usd"), "`forge_cost_usd` %v is more than `cycle_cost_usd` %v: FORGE's cost is part of the day's", forge, cycle)
	}
}

func paceCheckAttempts(c *ruleCtx, day *paceDay) {
	d := day.attempts
	list := asList(valueOf(d))
	if d == nil {
		return
	}
	prevDate := ""
	ships := 0
	lastOutcome := ""
	for i, e := range list {
		a := asObj(e)
		if run, ok := toInt(a["run"]); ok && run != int64(i+1) {
			c.report("pace.attempts.run-sequence", d, ptr(i, "run"), "attempt %d has `run: %d`: attempts are numbered 1, 2, … in order", i+1, run)
		}
		if date, ok := str(a, "date"); ok {
			if prevDate != "" && date < prevDate {
				c.report("pace.attempts.date-order", d, ptr(i, "date"), "attempt %d is dated %s, before the previous attempt (%s)", i+1, date, prevDate)
			}
			prevDate = date
		}
		outcome := strOr(a, "outcome")
		lastOutcome = outcome
		reason, hasReason := str(a, "hold_reason")
		switch {
		case hasReason && outcome != "HOLD":
			c.report("pace.attempts.hold-reason-only-on-hold", d, ptr(i, "hold_reason"), "attempt %d has a `hold_reason` but its outcome is %s: only HOLD attempts carry one", i+1, cmp.Or(outcome, "nothing"))
		case !hasReason && outcome == "HOLD":
			c.report("pace.attempts.hold-without-reason", d, ptr(i, "outcome"), "attempt %d is a HOLD without `hold_reason`", i+1)
		}
		if n := len([]rune(reason)); n > 120 {
			c.report("pace.attempts.hold-reason-length", d, ptr(i, "hold_reason"), "`hold_reason` is %d characters; the framework keeps the first 120", n)
		}
		if outcome == "SHIP" {
			ships++
			if ships > 1 || i != len(list)-1 {
				c.report("pace.attempts.ship-last", d, ptr(i, "outcome"), "attempt %d shipped but is not the day's only, last attempt: a shipped day is not run again", i+1)
			}
		}
	}
	shipped := lastOutcome == "SHIP"
	switch {
	case day.cycle != nil && !shipped && len(list) > 0:
		c.report("pace.attempts.cycle-iff-shipped", d, ptr(len(list)-1, "outcome"), "cycle.md exists but the last attempt's outcome is %s, not SHIP", cmp.Or(lastOutcome, "nothing"))
	case day.cycle == nil && shipped:
		c.report("pace.attempts.cycle-iff-shipped", d, ptr(len(list)-1, "outcome"), "the last attempt shipped but %s/cycle.md is missing", day.dir)
	}
}

// paceCheckPlanShipped: a day with cycle.md has its v3 plan story shipped.
func paceCheckPlanShipped(c *ruleCtx, day *paceDay, plan *artifact.Document) {
	obj := asObj(valueOf(plan))
	if obj == nil || day.cycle == nil {
		return
	}
	id := fmt.Sprintf("story-%d", day.n)
	for i, e := range asList(obj["stories"]) {
		s := asObj(e)
		if strOr(s, "id") == id && strOr(s, "status") != "shipped" {
			c.report("pace.plan.cycle-story-shipped", plan, ptr("stories", i, "status"), "%s is %s but day %d shipped (%s/cycle.md exists): mark it shipped", id, display(strOr(s, "status")), day.n, day.dir)
		}
	}
}

func paceCheckBacklog(c *ruleCtx, d *artifact.Document) {
	ids, findings := map[string]int{}, map[string]int{}
	for i, e := range asList(valueOf(d)) {
		a := asObj(e)
		if id, ok := str(a, "id"); ok {
			if first, dup := ids[id]; dup {
				c.report("pace.backlog.id-unique", d, ptr(i, "id"), "id %s is used twice (also entry %d)", display(id), first+1)
			} else {
				ids[id] = i
			}
		}
		if f, ok := str(a, "finding"); ok {
			if first, dup := findings[f]; dup {
				c.report("pace.backlog.finding-unique", d, ptr(i, "finding"), "finding %s is recorded twice (also entry %d): keep one entry", display(f), first+1)
			} else {
				findings[f] = i
			}
		}
	}
}

// paceStatus records where the latest day stands.
func paceStatus(c *ruleCtx, g *Group, day *paceDay) {
	unit := fmt.Sprintf("PACE day %d", day.n)
	if g.Key != ".pace" && g.Key != c.opts.Prefix+".pace" {
		unit = fmt.Sprintf("PACE %s day %d", strings.TrimSuffix(g.Key, "/.pace"), day.n)
	}
	st := Status{Family: "pace", Unit: unit}
	var parts []string
	for _, a := range []struct {
		agent, field string
		doc          *artifact.Document
		decision     string
	}{{"GATE", "gate_decision", day.gate, day.gateDecision}, {"SENTINEL", "sentinel_decision", day.sentinel, day.sentinelDecision}, {"CONDUIT", "conduit_decision", day.conduit, day.conduitDecision}} {
		if a.doc == nil || a.decision == "" {
			parts = append(parts, a.agent+" —")
			continue
		}
		parts = append(parts, a.agent+" "+a.decision)
		dec := Decision{File: a.doc.Path, Line: a.doc.Locate(ptr(a.field)).Line, Effect: a.decision}
		switch a.decision {
		case "HOLD":
			dec.Reason = because(a.agent+" decided HOLD", strOr(asObj(a.doc.Value), "hold_reason"))
		case "ADVISORY":
			dec.Reason = a.agent + " decided ADVISORY"
			if advs, _ := stringList(asObj(a.doc.Value), "advisories"); len(advs) > 0 {
				dec.Reason += ": " + strings.Join(advs, "; ")
			}
		case "SHIP":
			dec.Reason = a.agent + " decided SHIP"
		default:
			continue
		}
		st.Decisions = append(st.Decisions, dec)
	}
	st.State = strings.Join(parts, ", ")
	if day.cycle != nil {
		st.State += " (shipped)"
	}
	c.status(st)
}

func countWord[N int | int64](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return quoteList(l)
}
