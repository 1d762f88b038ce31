package corpus

import "fmt"

var skillPhases = []string{"requirements", "technical-plan", "develop", "simplify", "code-validate", "closeout", "integrate"}

var produced = map[string][][2]string{
	"requirements":   {{"PREQ", "issue body"}, {"SREQ", "issue comment"}},
	"technical-plan": {{"technical plan", "wiki: Plan - %s"}, {"status label", "planning"}},
	"develop":        {{"code", "branch feature/%s"}, {"dev journal", ".devwork/%s/journal.md"}},
	"simplify":       {{"simplify report", ".devwork/%s/simplify.md"}},
	"code-validate":  {{"QA report", ".devwork/%s/qa-report.md"}},
	"closeout":       {{"closeout deliverables", "wiki: Closeout - %s"}},
	"integrate":      {{"merge commit", "main"}},
}

// outcomes generates Phase Outcomes for a few features, one per skill run in
// pipeline order. Most are named *.outcome.yaml; some sit under
// outcomes/ with a plain .yaml name and are found by their content.
func (g *gen) outcomes(base string) {
	r := g.r
	for f := r.between(1, 5); f > 0; f-- {
		num := r.between(1, 400)
		feature := fmt.Sprintf("feature-%03d", num)
		if g.taken("feature/" + feature) {
			continue
		}
		sniffed := r.chance(0.25)
		runs := r.between(1, len(skillPhases))
		for i := 0; i < runs; i++ {
			phase := skillPhases[i]
			path := fmt.Sprintf("%s/.devwork/%s/%02d-%s.outcome.yaml", base, feature, i+1, phase)
			if sniffed {
				path = fmt.Sprintf("%s/outcomes/%s-%s.yaml", base, feature, phase)
			}
			g.add(path, "outcome.phase-outcome", encYAML, g.outcome(phase, feature, num))
		}
	}
}

func (g *gen) outcome(phase, feature string, num int) obj {
	r := g.r
	var prod []any
	for _, p := range produced[phase] {
		loc := p[1]
		if containsVerb(loc) {
			loc = fmt.Sprintf(loc, feature)
		}
		prod = append(prod, obj{{"artifact", p[0]}, {"location", loc}})
	}
	var findings, decisions []any
	next := 1
	id := func() string { s := fmt.Sprintf("D-%03d", next); next++; return s }
	if phase == "requirements" || phase == "technical-plan" || phase == "develop" {
		d := obj{{"id", id()}, {"type", "approval"}, {"question", fmt.Sprintf("Approve %s for %s?", phase, feature)},
			{"options", flow{"approve", "request-changes", "reject"}}}
		if r.chance(0.6) {
			d = append(d, kv{"recommended", "approve"})
		}
		d = append(d, kv{"blocking", true})
		decisions = append(decisions, d)
	}
	for k := r.between(0, 3); k > 0; k-- {
		cat := pick(r, []string{"out-of-scope", "out-of-scope", "in-scope-deferrable", "pre-existing", "in-scope-blocking"})
		typ := map[string]string{"out-of-scope": "out-of-scope-item", "in-scope-deferrable": "qa-finding", "pre-existing": "pre-existing-issue", "in-scope-blocking": "qa-finding"}[cat]
		title := fmt.Sprintf("%s %s", pick(r, verbs), pick(r, nouns))
		findings = append(findings, obj{{"type", typ}, {"title", title}, {"reasoning", r.sentence()}, {"proposed_category", cat}})
		switch cat {
		case "out-of-scope":
			decisions = append(decisions, obj{{"id", id()}, {"type", "capture-out-of-scope"},
				{"question", fmt.Sprintf("Capture '%s' as separate issue?", title)},
				{"options", flow{"capture", "discard"}}, {"recommended", "capture"}, {"blocking", false}})
		case "in-scope-blocking":
			decisions = append(decisions, obj{{"id", id()}, {"type", "defer-or-block"},
				{"question", fmt.Sprintf("Fix '%s' before release, or defer it?", title)},
				{"options", flow{"fix", "defer"}}, {"recommended", "fix"}, {"blocking", true}})
		}
	}
	if findings == nil {
		findings = []any{}
	}
	if decisions == nil {
		decisions = []any{}
	}
	o := obj{{"phase", phase}, {"feature", feature}}
	if r.chance(0.3) {
		o = append(o, kv{"issue", num})
	}
	return append(o, kv{"produced", prod}, kv{"findings", findings}, kv{"pending_decisions", decisions})
}

func containsVerb(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '%' && s[i+1] == 's' {
			return true
		}
	}
	return false
}
