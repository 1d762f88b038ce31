package corpus

import (
	"fmt"
	"strings"
	"time"
)

type dayFate int

const (
	fateShipped dayFate = iota
	fateGateHold
	fateSentinelHold
	fateConduitHold
	fateInProgress
)

// paceDay is what the day's artifacts must agree on.
type paceDay struct {
	n       int
	theme   string
	stories []obj // docs shape: {title, acceptance_criteria, out_of_scope}
	acs     []string
	oos     []string
	partial map[string]string // criterion → the out_of_scope item it is deferred to
	fate    dayFate
	shipAt  string // cycle generated_at / last attempt date when shipped
}

// pace generates a PACE project: plan, advisory backlog and day-N folders.
// Either naming set is used per project (docs: story-card.yaml, gate-report.yaml;
// code: story.md, gate.md), with the matching story-card shape.
func (g *gen) pace(base string) {
	r := g.r
	code := r.chance(0.45)
	nDays := r.between(3, 14)
	root := base + "/.pace"

	days := make([]*paceDay, nDays)
	for i := range days {
		days[i] = g.pacePlanDay(i+1, code)
	}
	last := days[nDays-1]
	switch x := r.Float64(); {
	case x < 0.15:
		last.fate = fateGateHold
	case x < 0.23:
		last.fate = fateSentinelHold
	case x < 0.28:
		last.fate = fateConduitHold
	case x < 0.45:
		last.fate = fateInProgress
	}

	backlog := g.paceDays(root, code, days)

	// The plan comes first in a real repository; it is emitted last here only
	// because it records what the days did (shipped_at).
	if code {
		g.pacePlanCode(base, days)
	} else {
		g.pacePlanDocs(root, days)
	}
	if len(backlog) > 0 {
		g.add(root+"/advisory_backlog.yaml", "pace.advisory-backlog", encYAML, backlog)
	}
}

// pacePlanDay plans day n: its theme and stories, their criteria and what
// is out of scope.
func (g *gen) pacePlanDay(n int, code bool) *paceDay {
	r := g.r
	d := &paceDay{n: n, theme: pick(r, themes), partial: map[string]string{}}
	nStories := 1
	if !code && r.chance(0.3) {
		nStories = 2
	}
	used := map[string]bool{}
	for s := 0; s < nStories; s++ {
		var acs, oos []string
		for k := r.between(2, 5); len(acs) < k; {
			c := r.criterion(len(d.acs) + len(acs) + 1)
			if !used[c] {
				used[c] = true
				acs = append(acs, c)
			}
		}
		for k := r.between(0, 3); len(oos) < k; {
			o := pick(r, outOfScope)
			if !used[o] {
				used[o] = true
				oos = append(oos, o)
			}
		}
		// Some criteria are only partly in scope: PRIME declares the rest
		// out of scope, and GATE will grade them PARTIAL.
		for _, ac := range acs {
			if len(d.partial) < 2 && r.chance(0.1) {
				w := strings.Fields(ac)
				o := strings.Join(w[:min(5, len(w))], " ") + " — beyond this day, in a later story"
				d.partial[ac] = o
				oos = append(oos, o)
			}
		}
		d.acs = append(d.acs, acs...)
		d.oos = append(d.oos, oos...)
		d.stories = append(d.stories, obj{
			{"title", fmt.Sprintf("%s %s", pick(r, verbs), pick(r, nouns))},
			{"acceptance_criteria", strs(acs)},
			{"out_of_scope", strs(oos)},
		})
	}
	return d
}

// paceDays writes the days' folders under root and returns the advisory
// backlog they raised.
func (g *gen) paceDays(root string, code bool, days []*paceDay) []any {
	r := g.r
	nDays := len(days)
	var backlog []any
	seenAdvisory := map[string]bool{}
	start := g.clock
	for _, d := range days {
		dir := fmt.Sprintf("%s/day-%d", root, d.n)
		date := start.Add(time.Duration(d.n) * 24 * time.Hour)
		advisories := g.paceDay(dir, code, d, date)
		for _, a := range advisories {
			if seenAdvisory[a.finding] {
				continue
			}
			seenAdvisory[a.finding] = true
			k := 1
			for _, b := range backlog {
				if b.(obj).get("day_raised") == d.n && b.(obj).get("agent") == a.agent {
					k++
				}
			}
			status := "open"
			if d.n < nDays-1 && r.chance(0.5) {
				status = "cleared"
			}
			backlog = append(backlog, obj{
				{"id", fmt.Sprintf("%s-day%d-%d", strings.ToLower(a.agent), d.n, k)},
				{"day_raised", d.n},
				{"agent", a.agent},
				{"finding", a.finding},
				{"status", status},
			})
		}
	}
	g.clock = start.Add(time.Duration(nDays+1) * 24 * time.Hour)
	return backlog
}

// pacePlanCode writes the code naming set's plan: one story a day, then
// some pending ones.
func (g *gen) pacePlanCode(base string, days []*paceDay) {
	r := g.r
	var stories []any
	for _, d := range days {
		st := obj{{"id", fmt.Sprintf("story-%d", d.n)}, {"title", d.theme}}
		switch d.fate {
		case fateShipped:
			st = append(st, kv{"status", "shipped"}, kv{"shipped_at", d.shipAt})
		case fateInProgress:
			st = append(st, kv{"status", "in_progress"}, kv{"shipped_at", nil})
		default:
			st = append(st, kv{"status", "hold"}, kv{"shipped_at", nil})
		}
		if d.n%7 == 0 {
			st = append(st, kv{"human_gate", true})
		}
		stories = append(stories, st)
	}
	for k := r.between(0, 4); k > 0; k-- {
		n := len(stories) + 1
		stories = append(stories, obj{{"id", fmt.Sprintf("story-%d", n)}, {"title", pick(r, themes)}, {"status", "pending"}, {"shipped_at", nil}})
	}
	g.add(base+"/pace/plan.yaml", "pace.plan", encYAML, obj{
		{"release", fmt.Sprintf("v%d.%d.0", r.between(0, 3), r.between(0, 12))},
		{"context_version", r.between(1, 5)},
		{"stories", stories},
	})
}

// pacePlanDocs writes the docs naming set's plan: the sprint and its days.
func (g *gen) pacePlanDocs(root string, days []*paceDay) {
	r := g.r
	var pdays []any
	for _, d := range days {
		pd := obj{{"day", d.n}, {"theme", d.theme}}
		if r.chance(0.3) {
			pd = append(pd, kv{"notes", r.words(12)})
		}
		if d.n%7 == 0 {
			pd = append(pd, kv{"human_gate", true})
		}
		var sts []any
		for _, s := range d.stories {
			sts = append(sts, s)
		}
		pd = append(pd, kv{"stories", sts})
		pdays = append(pdays, pd)
	}
	g.add(root+"/plan.yaml", "pace.plan", encYAML, obj{
		{"sprint", obj{{"goal", r.sentence()}, {"duration_days", len(days)}}},
		{"days", pdays},
	})
}

type advisory struct{ agent, finding string }

func strs(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

// paceDay writes one day's folder and returns the advisories it raised.
func (g *gen) paceDay(dir string, code bool, d *paceDay, date time.Time) []advisory {
	r := g.r
	name := func(docs, codeName string) string {
		if code {
			return dir + "/" + codeName
		}
		return dir + "/" + docs
	}
	g.paceStoryCard(name, code, d)
	if d.fate == fateInProgress && r.chance(0.5) {
		return nil
	}
	area, forgeCost := g.paceHandoff(name, d)
	if d.fate == fateInProgress {
		return nil
	}
	gateDecision := g.paceGate(name, dir, code, d, area)

	var raised []advisory
	holdAt := ""
	if gateDecision == "SHIP" {
		decision, adv := g.review(name("sentinel-report.yaml", "sentinel.md"), "pace.sentinel-report", "SENTINEL", checksSentinel, d, d.fate == fateSentinelHold)
		raised = append(raised, adv...)
		if decision == "HOLD" {
			holdAt = "SENTINEL"
		} else {
			decision, adv = g.review(name("conduit-report.yaml", "conduit.md"), "pace.conduit-report", "CONDUIT", checksConduit, d, d.fate == fateConduitHold)
			raised = append(raised, adv...)
			if decision == "HOLD" {
				holdAt = "CONDUIT"
			}
		}
	} else {
		holdAt = "GATE"
	}
	g.paceAttempts(dir, d, date, holdAt, forgeCost)
	return raised
}

// paceStoryCard writes the story card, in the shape that goes with the
// naming set; name is the day's file of either naming set.
func (g *gen) paceStoryCard(name func(docs, code string) string, code bool, d *paceDay) {
	r := g.r
	if code {
		g.add(name("", "story.md"), "pace.story-card", encYAML, obj{
			{"day", d.n}, {"agent", "PRIME"},
			{"story", fmt.Sprintf("As a user, I want the %s to work so that %s.", pick(r, nouns), pick(r, outcomes))},
			{"given", fmt.Sprintf("A %s exists", pick(r, nouns))},
			{"when", fmt.Sprintf("%s() is called", camel(pick(r, nouns)))},
			{"then", pick(r, outcomes)},
			{"acceptance", strs(d.acs)},
			{"out_of_scope", strs(d.oos)},
		})
		return
	}
	var sts []any
	for _, s := range d.stories {
		sts = append(sts, s)
	}
	g.add(name("story-card.yaml", ""), "pace.story-card", encYAML, obj{
		{"day", d.n}, {"agent", "PRIME"}, {"theme", d.theme}, {"stories", sts},
	})
}

// paceHandoff writes FORGE's handoff, where every known gap is an
// out-of-scope item of the story, and returns the area it built in and
// what it cost.
func (g *gen) paceHandoff(name func(docs, code string) string, d *paceDay) (area string, forgeCost float64) {
	r := g.r
	area = pick(r, areas)
	var built []string
	for k := r.between(1, 3); k > 0; k-- {
		built = append(built, r.file(area))
	}
	var edges []any
	for k := r.between(1, 4); k > 0; k-- {
		edges = append(edges, pick(r, edgeCases))
	}
	var gaps []any
	for _, o := range d.oos {
		if r.chance(0.3) {
			gaps = append(gaps, o)
		}
	}
	forgeCost = r.cost(0.4, 4)
	g.add(name("handoff.yaml", "handoff.md"), "pace.handoff", encYAML, obj{
		{"day", d.n}, {"agent", "FORGE"},
		{"commit", r.hex(40)},
		{"approach", r.words(r.between(10, 30)) + "."},
		{"risk", pick(r, risks)},
		{"dependencies", pick(r, deps)},
		{"built", strings.Join(built, ", ")},
		{"edge_cases_tested", edges},
		{"known_gaps", gaps},
		{"tdd_red_phase_confirmed", true},
		{"iterations_used", r.between(3, 30)},
		{"forge_cost_usd", forgeCost},
	})
	return area, forgeCost
}

// paceGate writes GATE's report, one result per acceptance criterion with
// its exact text (and, in the code naming set, the deferred scope), and
// returns its decision.
func (g *gen) paceGate(name func(docs, code string) string, dir string, code bool, d *paceDay, area string) string {
	r := g.r
	var results []any
	var blockers, deferred []any
	fails := 0
	for i, ac := range d.acs {
		res := "PASS"
		switch {
		case d.fate == fateGateHold && (i == len(d.acs)-1 || r.chance(0.2)):
			res = "FAIL"
		case d.partial[ac] != "":
			res = "PARTIAL"
		}
		ev := fmt.Sprintf("tests/%s/test_%s.py::test_%d PASSED", area, pick(r, fileStems), i+1)
		switch res {
		case "FAIL":
			fails++
			ev = fmt.Sprintf("CI run https://github.com/org/repo/actions/runs/%d failed: %s", r.between(1e6, 9e6), pick(r, outcomes))
			blockers = append(blockers, fmt.Sprintf("%s — not met: %s", ac, pick(r, outcomes)))
		case "PARTIAL":
			ev = "Partly implemented — the rest is mapped to out_of_scope"
			deferred = append(deferred, d.partial[ac])
		}
		results = append(results, obj{{"criterion", ac}, {"result", res}, {"evidence", ev}})
	}
	gateDecision, hold := "SHIP", ""
	if fails > 0 {
		gateDecision = "HOLD"
		hold = fmt.Sprintf("Fix %d failing criteria: %s", fails, blockers[0])
	}
	if blockers == nil {
		blockers = []any{}
	}
	if deferred == nil {
		deferred = []any{}
	}
	g.add(name("gate-report.yaml", "gate.md"), "pace.gate-report", encYAML, obj{
		{"day", d.n}, {"agent", "GATE"},
		{"criteria_results", results},
		{"blockers", blockers},
		{"deferred", deferred},
		{"gate_decision", gateDecision},
		{"hold_reason", hold},
	})
	if code && len(deferred) > 0 {
		g.add(dir+"/deferred_scope.yaml", "pace.deferred-scope", encYAML, obj{{"deferred", deferred}})
	}
	return gateDecision
}

// paceAttempts writes the attempts, HOLDs then at most one SHIP, the last
// (holdAt is the agent that held the day, "" if it shipped), and cycle.md
// iff the day shipped.
func (g *gen) paceAttempts(dir string, d *paceDay, date time.Time, holdAt string, forgeCost float64) {
	r := g.r
	var attempts []any
	t := date.Add(4*time.Hour + time.Duration(r.IntN(3600))*time.Second)
	nAttempts := 2 // MAX_RETRIES = 1: a held day has used both attempts
	if holdAt == "" {
		nAttempts = r.between(1, 3)
	}
	for i := 1; i <= nAttempts; i++ {
		a := obj{{"run", i}, {"date", ts(t)}, {"cost_usd", r.cost(0.8, 5)}}
		if holdAt == "" && i == nAttempts {
			a = append(a, kv{"outcome", "SHIP"})
			d.shipAt = ts(t)
		} else {
			who := holdAt
			if who == "" {
				who = pick(r, []string{"GATE", "SENTINEL", "CONDUIT"})
			}
			reason := fmt.Sprintf("%s HOLD: %s", who, pick(r, outcomes))
			if len(reason) > 120 {
				reason = reason[:120]
			}
			a = append(a, kv{"outcome", "HOLD"}, kv{"hold_reason", reason})
		}
		attempts = append(attempts, a)
		t = t.Add(time.Duration(60+r.IntN(120)) * time.Minute)
	}
	if holdAt == "" {
		g.add(dir+"/cycle.md", "pace.cycle", encYAML, obj{
			{"day", d.n},
			{"cycle_cost_usd", round4(forgeCost + r.cost(0.3, 3))},
			{"forge_cost_usd", forgeCost},
			{"generated_at", d.shipAt},
		})
	}
	g.add(dir+"/attempts.yaml", "pace.attempts", encYAML, attempts)
}

// review writes a SENTINEL or CONDUIT report whose decision, advisories and
// blockers agree with its findings.
func (g *gen) review(path, kind, agent string, checks []string, d *paceDay, hold bool) (string, []advisory) {
	r := g.r
	n := r.between(3, 6)
	perm := r.Perm(len(checks))
	wantAdvisory := !hold && r.chance(0.35)
	var findings, advisories, blockers []any
	var raised []advisory
	area := pick(r, areas)
	for i := 0; i < n && i < len(perm); i++ {
		check := checks[perm[i]]
		res := "PASS"
		switch {
		case hold && (i == 0 || r.chance(0.15)):
			res = "FAIL"
		case (wantAdvisory && i == 1) || (!hold && r.chance(0.05)):
			res = "ADVISORY"
		}
		where := fmt.Sprintf("%s:%d", r.file(area), r.between(5, 400))
		ev := fmt.Sprintf("Scanned %d files; nothing found", r.between(10, 300))
		switch res {
		case "ADVISORY":
			ev = fmt.Sprintf("%s — %s", where, strings.ToLower(check))
			text := fmt.Sprintf("%s at %s (day %d)", check, where, d.n)
			advisories = append(advisories, text)
			raised = append(raised, advisory{agent, text})
		case "FAIL":
			ev = fmt.Sprintf("%s — %s", where, strings.ToLower(check))
			blockers = append(blockers, fmt.Sprintf("%s at %s — must be fixed before merge", check, where))
		}
		findings = append(findings, obj{{"check", check}, {"result", res}, {"evidence", ev}})
	}
	decision, reason := "SHIP", ""
	switch {
	case len(blockers) > 0:
		decision = "HOLD"
		reason = fmt.Sprintf("Fix: %s", blockers[0])
	case len(advisories) > 0:
		decision = "ADVISORY"
	}
	if advisories == nil {
		advisories = []any{}
	}
	if blockers == nil {
		blockers = []any{}
	}
	g.add(path, kind, encYAML, obj{
		{"day", d.n}, {"agent", agent},
		{"findings", findings},
		{"advisories", advisories},
		{"blockers", blockers},
		{strings.ToLower(agent) + "_decision", decision},
		{"hold_reason", reason},
	})
	if decision == "ADVISORY" {
		return decision, raised
	}
	return decision, nil
}
