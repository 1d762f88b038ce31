package check

import (
	"strings"

	"github.com/phasegate/phasegate/internal/config"
)

// A consistent day that ships: every PACE rule is silent on it.
var paceShipDay = map[string]string{
	".pace/plan.yaml": `sprint:
  goal: "Accounts"
  duration_days: 1
days:
  - day: 1
    theme: "User model"
    stories:
      - title: "Secure user creation"
        acceptance_criteria: ["Passwords are hashed", "Login works"]
`,
	".pace/day-1/story-card.yaml": `day: 1
agent: PRIME
theme: "User model"
stories:
  - title: "Secure user creation"
    acceptance_criteria:
      - "Passwords are hashed"
      - "Login works"
    out_of_scope:
      - "OAuth social login"
`,
	".pace/day-1/handoff.yaml": `day: 1
agent: FORGE
commit: "4be1f0c2a9d83e7b6c5a4f3e2d1c0b9a8f7e6d5c"
approach: "bcrypt via passlib"
risk: "none"
dependencies: "passlib"
built: "src/user.py"
edge_cases_tested: ["empty password"]
known_gaps: []
tdd_red_phase_confirmed: true
iterations_used: 5
`,
	".pace/day-1/gate-report.yaml": `day: 1
agent: GATE
criteria_results:
  - criterion: "Passwords are hashed"
    result: PASS
    evidence: "test_hash PASSED"
  - criterion: "Login works"
    result: PASS
    evidence: "test_login PASSED"
blockers: []
deferred: []
gate_decision: SHIP
hold_reason: ""
`,
	".pace/day-1/sentinel-report.yaml": `day: 1
agent: SENTINEL
findings:
  - check: "secrets"
    result: PASS
    evidence: "scan clean"
advisories: []
blockers: []
sentinel_decision: SHIP
hold_reason: ""
`,
	".pace/day-1/conduit-report.yaml": `day: 1
agent: CONDUIT
findings:
  - check: "pinning"
    result: ADVISORY
    evidence: "checkout@master"
advisories: ["pin checkout to v4"]
blockers: []
conduit_decision: ADVISORY
hold_reason: ""
`,
	".pace/day-1/cycle.md": `day: 1
cycle_cost_usd: 2.5
forge_cost_usd: 2.0
generated_at: "2026-03-13T05:47:11Z"
`,
	".pace/day-1/attempts.yaml": `- run: 1
  date: "2026-03-13T04:12:33Z"
  cost_usd: 1.2
  outcome: HOLD
  hold_reason: "GATE HOLD: CI timed out"
- run: 2
  date: "2026-03-13T05:47:11Z"
  cost_usd: 1.3
  outcome: SHIP
`,
}

// paceWith returns the shipping day with edits: each edit is a file path and
// either its new content (replacing it; "" deletes the file) or, when old is
// set, a textual replacement within it.
type paceEdit struct{ file, old, new string }

func paceWith(edits ...paceEdit) map[string]string {
	tree := map[string]string{}
	for k, v := range paceShipDay {
		tree[k] = v
	}
	for _, e := range edits {
		switch {
		case e.old != "":
			if !strings.Contains(tree[e.file], e.old) {
				panic("paceWith: " + e.file + " does not contain " + e.old)
			}
			tree[e.file] = strings.Replace(tree[e.file], e.old, e.new, 1)
		case e.new == "":
			delete(tree, e.file)
		default:
			tree[e.file] = e.new
		}
	}
	return tree
}

const (
	pStory    = ".pace/day-1/story-card.yaml"
	pHandoff  = ".pace/day-1/handoff.yaml"
	pGate     = ".pace/day-1/gate-report.yaml"
	pSentinel = ".pace/day-1/sentinel-report.yaml"
	pConduit  = ".pace/day-1/conduit-report.yaml"
	pCycle    = ".pace/day-1/cycle.md"
	pAttempts = ".pace/day-1/attempts.yaml"
	pPlan     = ".pace/plan.yaml"
)

func boolPtr(b bool) *bool { return &b }

func init() {
	ship := paceWith()
	silent := func(rule string) ruleCase {
		return ruleCase{name: "consistent day", rule: rule, tree: ship}
	}
	fire := func(rule, name, file string, line int, edits ...paceEdit) ruleCase {
		return ruleCase{name: name, rule: rule, fires: true, file: file, line: line, tree: paceWith(edits...)}
	}
	// A day where SENTINEL holds, for the agent rules' HOLD paths.
	sentinelHold := paceWith(
		paceEdit{file: pSentinel, old: "result: PASS", new: "result: FAIL"},
		paceEdit{file: pSentinel, old: "blockers: []", new: `blockers: ["hardcoded key"]`},
		paceEdit{file: pSentinel, old: "sentinel_decision: SHIP\nhold_reason: \"\"", new: "sentinel_decision: HOLD\nhold_reason: \"remove the key\""},
		paceEdit{file: pConduit}, paceEdit{file: pCycle},
		paceEdit{file: pAttempts, old: "outcome: SHIP", new: "outcome: HOLD\n  hold_reason: \"SENTINEL HOLD\""},
	)
	var cases []ruleCase
	for _, r := range Rules() {
		if strings.HasPrefix(r.ID, "pace.") {
			cases = append(cases, silent(r.ID))
		}
	}
	cases = append(cases,
		ruleCase{name: "sentinel holds consistently", rule: "pace.sentinel.hold-iff-fail", tree: sentinelHold},
		ruleCase{name: "sentinel holds consistently", rule: "pace.sentinel.hold-reason-iff-hold", tree: sentinelHold},
		ruleCase{name: "sentinel holds and conduit did not run", rule: "pace.day.report-after-hold", tree: sentinelHold},
		ruleCase{name: "sentinel holds and cycle is absent", rule: "pace.attempts.cycle-iff-shipped", tree: sentinelHold},

		fire("pace.day-matches-dir", "day 2 in day-1", pGate, 1, paceEdit{file: pGate, old: "day: 1", new: "day: 2"}),
		fire("pace.story.theme-matches-plan", "theme differs", pStory, 3, paceEdit{file: pStory, old: `theme: "User model"`, new: `theme: "Sessions"`}),
		fire("pace.story.duplicate-criterion", "criterion twice", pStory, 8, paceEdit{file: pStory, old: `      - "Login works"`, new: `      - "Passwords are hashed"`}),
		fire("pace.handoff.commit-full-sha", "short sha", pHandoff, 3, paceEdit{file: pHandoff, old: "4be1f0c2a9d83e7b6c5a4f3e2d1c0b9a8f7e6d5c", new: "4be1f0c"}),
		func() ruleCase {
			c := fire("pace.handoff.tdd-red-phase", "enforced but not confirmed", pHandoff, 10, paceEdit{file: pHandoff, old: "tdd_red_phase_confirmed: true", new: "tdd_red_phase_confirmed: false"})
			c.config = &config.Config{Pace: config.Pace{TDDEnforcement: boolPtr(true)}}
			return c
		}(),
		func() ruleCase {
			c := fire("pace.handoff.iterations-within-max", "over max", pHandoff, 11)
			c.config = &config.Config{Pace: config.Pace{MaxIterations: 4}}
			return c
		}(),
		fire("pace.handoff.known-gap-out-of-scope", "undeclared gap", pHandoff, 9, paceEdit{file: pHandoff, old: "known_gaps: []", new: `known_gaps: ["password reset"]`}),
		fire("pace.gate.hold-iff-fail", "SHIP with a FAIL", pGate, 12, paceEdit{file: pGate, old: "result: PASS\n    evidence: \"test_login PASSED\"", new: "result: FAIL\n    evidence: \"test_login FAILED\""}),
		fire("pace.gate.hold-iff-fail", "HOLD without a FAIL", pGate, 12, paceEdit{file: pGate, old: "gate_decision: SHIP\nhold_reason: \"\"", new: "gate_decision: HOLD\nhold_reason: \"fix it\""}),
		fire("pace.gate.hold-reason-iff-hold", "HOLD without a reason", pGate, 13,
			paceEdit{file: pGate, old: "result: PASS\n    evidence: \"test_login PASSED\"", new: "result: FAIL\n    evidence: \"test_login FAILED\""},
			paceEdit{file: pGate, old: "blockers: []", new: `blockers: ["login fails"]`},
			paceEdit{file: pGate, old: "gate_decision: SHIP\nhold_reason: \"\"", new: "gate_decision: HOLD\nhold_reason: \"  \""}),
		fire("pace.gate.hold-reason-iff-hold", "reason on SHIP", pGate, 13, paceEdit{file: pGate, old: `hold_reason: ""`, new: `hold_reason: "leftover"`}),
		fire("pace.gate.blockers-missing", "FAIL without blockers", pGate, 10,
			paceEdit{file: pGate, old: "result: PASS\n    evidence: \"test_login PASSED\"", new: "result: FAIL\n    evidence: \"test_login FAILED\""},
			paceEdit{file: pGate, old: "gate_decision: SHIP\nhold_reason: \"\"", new: "gate_decision: HOLD\nhold_reason: \"fix login\""}),
		fire("pace.gate.blocker-count", "blocker without FAIL", pGate, 10, paceEdit{file: pGate, old: "blockers: []", new: `blockers: ["stale"]`}),
		fire("pace.gate.deferred-count", "deferred without PARTIAL", pGate, 11, paceEdit{file: pGate, old: "deferred: []", new: `deferred: ["something"]`}),
		fire("pace.gate.evidence-nonempty", "blank evidence", pGate, 6, paceEdit{file: pGate, old: `evidence: "test_hash PASSED"`, new: `evidence: ""`}),
		fire("pace.gate.criterion-missing", "criterion without result", pGate, 3, paceEdit{file: pGate, old: "  - criterion: \"Login works\"\n    result: PASS\n    evidence: \"test_login PASSED\"\n", new: "\n"}),
		fire("pace.gate.criterion-unknown", "criterion not in story", pGate, 7, paceEdit{file: pGate, old: `criterion: "Login works"`, new: `criterion: "CI pipeline green"`}),
		fire("pace.gate.partial-out-of-scope", "PARTIAL not out of scope", pGate, 8,
			paceEdit{file: pGate, old: "result: PASS\n    evidence: \"test_login PASSED\"", new: "result: PARTIAL\n    evidence: \"half done\""},
			paceEdit{file: pGate, old: "deferred: []", new: `deferred: ["login later"]`}),
		ruleCase{name: "PARTIAL maps to out_of_scope", rule: "pace.gate.partial-out-of-scope", tree: paceWith(
			paceEdit{file: pStory, old: `- "OAuth social login"`, new: `- "Login works with SSO — later"`},
			paceEdit{file: pGate, old: "result: PASS\n    evidence: \"test_login PASSED\"", new: "result: PARTIAL\n    evidence: \"half done\""},
			paceEdit{file: pGate, old: "deferred: []", new: `deferred: ["login later"]`})},
		fire("pace.day.report-after-hold", "sentinel after gate HOLD", pSentinel, 9,
			paceEdit{file: pGate, old: "result: PASS\n    evidence: \"test_login PASSED\"", new: "result: FAIL\n    evidence: \"test_login FAILED\""},
			paceEdit{file: pGate, old: "blockers: []", new: `blockers: ["login fails"]`},
			paceEdit{file: pGate, old: "gate_decision: SHIP\nhold_reason: \"\"", new: "gate_decision: HOLD\nhold_reason: \"fix login\""}),
		fire("pace.day.cycle-requires-ship", "cycle with conduit missing", pCycle, 1, paceEdit{file: pConduit}),
		fire("pace.cycle.forge-within-cycle", "forge over cycle", pCycle, 3, paceEdit{file: pCycle, old: "forge_cost_usd: 2.0", new: "forge_cost_usd: 3.0"}),
		fire("pace.attempts.run-sequence", "run numbers skip", pAttempts, 6, paceEdit{file: pAttempts, old: "run: 2", new: "run: 3"}),
		fire("pace.attempts.date-order", "date goes back", pAttempts, 7, paceEdit{file: pAttempts, old: `date: "2026-03-13T05:47:11Z"`, new: `date: "2026-03-12T05:47:11Z"`}),
		fire("pace.attempts.hold-reason-only-on-hold", "reason on SHIP", pAttempts, 10, paceEdit{file: pAttempts, old: "outcome: SHIP", new: "outcome: SHIP\n  hold_reason: \"none\""}),
		fire("pace.attempts.hold-without-reason", "HOLD without reason", pAttempts, 4, paceEdit{file: pAttempts, old: "  hold_reason: \"GATE HOLD: CI timed out\"\n", new: ""}),
		fire("pace.attempts.hold-reason-length", "reason over 120", pAttempts, 5, paceEdit{file: pAttempts, old: "GATE HOLD: CI timed out", new: strings.Repeat("x", 121)}),
		fire("pace.attempts.ship-last", "SHIP then HOLD", pAttempts, 4, paceEdit{file: pAttempts, old: "outcome: HOLD\n  hold_reason: \"GATE HOLD: CI timed out\"", new: "outcome: SHIP"}),
		fire("pace.attempts.cycle-iff-shipped", "shipped without cycle", pAttempts, 9, paceEdit{file: pCycle}),
		fire("pace.plan.day-unique", "day planned twice", pPlan, 10, paceEdit{file: pPlan, new: paceShipDay[pPlan] + "  - day: 1\n    theme: \"again\"\n    stories:\n      - title: \"x\"\n        acceptance_criteria: [\"y\"]\n"}),
		fire("pace.plan.duration-matches-days", "duration differs", pPlan, 3, paceEdit{file: pPlan, old: "duration_days: 1", new: "duration_days: 5"}),
		fire("pace.plan.shipped-at-iff-shipped", "shipped without shipped_at", pPlan, 5, paceEdit{file: pPlan, new: "release: \"v1\"\nstories:\n  - id: story-1\n    title: \"User model\"\n    status: shipped\n"}),
		fire("pace.plan.cycle-story-shipped", "cycle but story pending", pPlan, 5, paceEdit{file: pPlan, new: "release: \"v1\"\nstories:\n  - id: story-1\n    title: \"User model\"\n    status: pending\n"}),
		fire("pace.backlog.id-unique", "id twice", ".pace/advisory_backlog.yaml", 6, paceEdit{file: ".pace/advisory_backlog.yaml", new: "- id: conduit-day1-1\n  day_raised: 1\n  agent: CONDUIT\n  finding: \"pin checkout\"\n  status: open\n- id: conduit-day1-1\n  day_raised: 1\n  agent: CONDUIT\n  finding: \"other\"\n  status: open\n"}),
		fire("pace.backlog.finding-unique", "finding twice", ".pace/advisory_backlog.yaml", 9, paceEdit{file: ".pace/advisory_backlog.yaml", new: "- id: a\n  day_raised: 1\n  agent: CONDUIT\n  finding: \"pin checkout\"\n  status: open\n- id: b\n  day_raised: 1\n  agent: CONDUIT\n  finding: \"pin checkout\"\n  status: open\n"}),
	)
	for _, a := range []struct{ name, file, other string }{{"sentinel", pSentinel, pConduit}, {"conduit", pConduit, pSentinel}} {
		dec := a.name + "_decision"
		// base: this agent decides SHIP with one PASS finding.
		base := []paceEdit{{file: a.file, new: "day: 1\nagent: " + strings.ToUpper(a.name) + "\nfindings:\n  - check: \"c\"\n    result: PASS\n    evidence: \"e\"\nadvisories: []\nblockers: []\n" + dec + ": SHIP\nhold_reason: \"\"\n"}}
		with := func(edits ...paceEdit) []paceEdit { return append(append([]paceEdit{}, base...), edits...) }
		r := func(s string) string { return "pace." + a.name + "." + s }
		cases = append(cases,
			fire(r("hold-iff-fail"), "FAIL but SHIP", a.file, 9, with(paceEdit{file: a.file, old: "result: PASS", new: "result: FAIL"}, paceEdit{file: a.file, old: "blockers: []", new: `blockers: ["b"]`})...),
			fire(r("advisory-iff-advisories"), "ADVISORY without advisory", a.file, 9, with(paceEdit{file: a.file, old: dec + ": SHIP", new: dec + ": ADVISORY"})...),
			fire(r("ship-without-advisories"), "SHIP with advisory", a.file, 9, with(paceEdit{file: a.file, old: "result: PASS", new: "result: ADVISORY"}, paceEdit{file: a.file, old: "advisories: []", new: `advisories: ["a"]`})...),
			fire(r("blocker-per-fail"), "blocker without FAIL", a.file, 8, with(paceEdit{file: a.file, old: "blockers: []", new: `blockers: ["b"]`})...),
			fire(r("advisory-per-advisory"), "advisory without ADVISORY", a.file, 7, with(paceEdit{file: a.file, old: "advisories: []", new: `advisories: ["a"]`})...),
			fire(r("hold-reason-iff-hold"), "reason on SHIP", a.file, 10, with(paceEdit{file: a.file, old: `hold_reason: ""`, new: `hold_reason: "x"`})...),
			fire(r("evidence-nonempty"), "blank evidence", a.file, 6, with(paceEdit{file: a.file, old: `evidence: "e"`, new: `evidence: " "`})...),
		)
	}
	addRuleCases("pace", cases...)
}
