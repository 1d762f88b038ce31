package check

import (
	"strings"

	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/testutil"
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

// paceEdit changes one file of the shipping day (see testutil.Edit).
type paceEdit = testutil.Edit

// paceWith is the shipping day with edits.
func paceWith(edits ...paceEdit) map[string]string { return testutil.EditTree(paceShipDay, edits...) }

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
		paceEdit{File: pSentinel, Old: "result: PASS", New: "result: FAIL"},
		paceEdit{File: pSentinel, Old: "blockers: []", New: `blockers: ["hardcoded key"]`},
		paceEdit{File: pSentinel, Old: "sentinel_decision: SHIP\nhold_reason: \"\"", New: "sentinel_decision: HOLD\nhold_reason: \"remove the key\""},
		paceEdit{File: pConduit}, paceEdit{File: pCycle},
		paceEdit{File: pAttempts, Old: "outcome: SHIP", New: "outcome: HOLD\n  hold_reason: \"SENTINEL HOLD\""},
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

		fire("pace.day-matches-dir", "day 2 in day-1", pGate, 1, paceEdit{File: pGate, Old: "day: 1", New: "day: 2"}),
		fire("pace.story.theme-matches-plan", "theme differs", pStory, 3, paceEdit{File: pStory, Old: `theme: "User model"`, New: `theme: "Sessions"`}),
		fire("pace.story.duplicate-criterion", "criterion twice", pStory, 8, paceEdit{File: pStory, Old: `      - "Login works"`, New: `      - "Passwords are hashed"`}),
		fire("pace.handoff.commit-full-sha", "short sha", pHandoff, 3, paceEdit{File: pHandoff, Old: "4be1f0c2a9d83e7b6c5a4f3e2d1c0b9a8f7e6d5c", New: "4be1f0c"}),
		func() ruleCase {
			c := fire("pace.handoff.tdd-red-phase", "enforced but not confirmed", pHandoff, 10, paceEdit{File: pHandoff, Old: "tdd_red_phase_confirmed: true", New: "tdd_red_phase_confirmed: false"})
			c.config = &config.Config{Pace: config.Pace{TDDEnforcement: boolPtr(true)}}
			return c
		}(),
		func() ruleCase {
			c := fire("pace.handoff.iterations-within-max", "over max", pHandoff, 11)
			c.config = &config.Config{Pace: config.Pace{MaxIterations: 4}}
			return c
		}(),
		fire("pace.handoff.known-gap-out-of-scope", "undeclared gap", pHandoff, 9, paceEdit{File: pHandoff, Old: "known_gaps: []", New: `known_gaps: ["password reset"]`}),
		fire("pace.gate.hold-iff-fail", "SHIP with a FAIL", pGate, 12, paceEdit{File: pGate, Old: "result: PASS\n    evidence: \"test_login PASSED\"", New: "result: FAIL\n    evidence: \"test_login FAILED\""}),
		fire("pace.gate.hold-iff-fail", "HOLD without a FAIL", pGate, 12, paceEdit{File: pGate, Old: "gate_decision: SHIP\nhold_reason: \"\"", New: "gate_decision: HOLD\nhold_reason: \"fix it\""}),
		fire("pace.gate.hold-reason-iff-hold", "HOLD without a reason", pGate, 13,
			paceEdit{File: pGate, Old: "result: PASS\n    evidence: \"test_login PASSED\"", New: "result: FAIL\n    evidence: \"test_login FAILED\""},
			paceEdit{File: pGate, Old: "blockers: []", New: `blockers: ["login fails"]`},
			paceEdit{File: pGate, Old: "gate_decision: SHIP\nhold_reason: \"\"", New: "gate_decision: HOLD\nhold_reason: \"  \""}),
		fire("pace.gate.hold-reason-iff-hold", "reason on SHIP", pGate, 13, paceEdit{File: pGate, Old: `hold_reason: ""`, New: `hold_reason: "leftover"`}),
		fire("pace.gate.blockers-missing", "FAIL without blockers", pGate, 10,
			paceEdit{File: pGate, Old: "result: PASS\n    evidence: \"test_login PASSED\"", New: "result: FAIL\n    evidence: \"test_login FAILED\""},
			paceEdit{File: pGate, Old: "gate_decision: SHIP\nhold_reason: \"\"", New: "gate_decision: HOLD\nhold_reason: \"fix login\""}),
		fire("pace.gate.blocker-count", "blocker without FAIL", pGate, 10, paceEdit{File: pGate, Old: "blockers: []", New: `blockers: ["stale"]`}),
		fire("pace.gate.deferred-count", "deferred without PARTIAL", pGate, 11, paceEdit{File: pGate, Old: "deferred: []", New: `deferred: ["something"]`}),
		fire("pace.gate.evidence-nonempty", "blank evidence", pGate, 6, paceEdit{File: pGate, Old: `evidence: "test_hash PASSED"`, New: `evidence: ""`}),
		fire("pace.gate.criterion-missing", "criterion without result", pGate, 3, paceEdit{File: pGate, Old: "  - criterion: \"Login works\"\n    result: PASS\n    evidence: \"test_login PASSED\"\n", New: "\n"}),
		fire("pace.gate.criterion-unknown", "criterion not in story", pGate, 7, paceEdit{File: pGate, Old: `criterion: "Login works"`, New: `criterion: "CI pipeline green"`}),
		fire("pace.gate.partial-out-of-scope", "PARTIAL not out of scope", pGate, 8,
			paceEdit{File: pGate, Old: "result: PASS\n    evidence: \"test_login PASSED\"", New: "result: PARTIAL\n    evidence: \"half done\""},
			paceEdit{File: pGate, Old: "deferred: []", New: `deferred: ["login later"]`}),
		ruleCase{name: "PARTIAL maps to out_of_scope", rule: "pace.gate.partial-out-of-scope", tree: paceWith(
			paceEdit{File: pStory, Old: `- "OAuth social login"`, New: `- "Login works with SSO — later"`},
			paceEdit{File: pGate, Old: "result: PASS\n    evidence: \"test_login PASSED\"", New: "result: PARTIAL\n    evidence: \"half done\""},
			paceEdit{File: pGate, Old: "deferred: []", New: `deferred: ["login later"]`})},
		fire("pace.day.report-after-hold", "sentinel after gate HOLD", pSentinel, 9,
			paceEdit{File: pGate, Old: "result: PASS\n    evidence: \"test_login PASSED\"", New: "result: FAIL\n    evidence: \"test_login FAILED\""},
			paceEdit{File: pGate, Old: "blockers: []", New: `blockers: ["login fails"]`},
			paceEdit{File: pGate, Old: "gate_decision: SHIP\nhold_reason: \"\"", New: "gate_decision: HOLD\nhold_reason: \"fix login\""}),
		fire("pace.day.cycle-requires-ship", "cycle with conduit missing", pCycle, 1, paceEdit{File: pConduit}),
		fire("pace.cycle.forge-within-cycle", "forge over cycle", pCycle, 3, paceEdit{File: pCycle, Old: "forge_cost_usd: 2.0", New: "forge_cost_usd: 3.0"}),
		fire("pace.attempts.run-sequence", "run numbers skip", pAttempts, 6, paceEdit{File: pAttempts, Old: "run: 2", New: "run: 3"}),
		fire("pace.attempts.date-order", "date goes back", pAttempts, 7, paceEdit{File: pAttempts, Old: `date: "2026-03-13T05:47:11Z"`, New: `date: "2026-03-12T05:47:11Z"`}),
		fire("pace.attempts.hold-reason-only-on-hold", "reason on SHIP", pAttempts, 10, paceEdit{File: pAttempts, Old: "outcome: SHIP", New: "outcome: SHIP\n  hold_reason: \"none\""}),
		fire("pace.attempts.hold-without-reason", "HOLD without reason", pAttempts, 4, paceEdit{File: pAttempts, Old: "  hold_reason: \"GATE HOLD: CI timed out\"\n", New: ""}),
		fire("pace.attempts.hold-reason-length", "reason over 120", pAttempts, 5, paceEdit{File: pAttempts, Old: "GATE HOLD: CI timed out", New: strings.Repeat("x", 121)}),
		fire("pace.attempts.ship-last", "SHIP then HOLD", pAttempts, 4, paceEdit{File: pAttempts, Old: "outcome: HOLD\n  hold_reason: \"GATE HOLD: CI timed out\"", New: "outcome: SHIP"}),
		fire("pace.attempts.cycle-iff-shipped", "shipped without cycle", pAttempts, 9, paceEdit{File: pCycle}),
		fire("pace.plan.day-unique", "day planned twice", pPlan, 10, paceEdit{File: pPlan, New: paceShipDay[pPlan] + "  - day: 1\n    theme: \"again\"\n    stories:\n      - title: \"x\"\n        acceptance_criteria: [\"y\"]\n"}),
		fire("pace.plan.duration-matches-days", "duration differs", pPlan, 3, paceEdit{File: pPlan, Old: "duration_days: 1", New: "duration_days: 5"}),
		fire("pace.plan.shipped-at-iff-shipped", "shipped without shipped_at", pPlan, 5, paceEdit{File: pPlan, New: "release: \"v1\"\nstories:\n  - id: story-1\n    title: \"User model\"\n    status: shipped\n"}),
		fire("pace.plan.cycle-story-shipped", "cycle but story pending", pPlan, 5, paceEdit{File: pPlan, New: "release: \"v1\"\nstories:\n  - id: story-1\n    title: \"User model\"\n    status: pending\n"}),
		fire("pace.backlog.id-unique", "id twice", ".pace/advisory_backlog.yaml", 6, paceEdit{File: ".pace/advisory_backlog.yaml", New: "- id: conduit-day1-1\n  day_raised: 1\n  agent: CONDUIT\n  finding: \"pin checkout\"\n  status: open\n- id: conduit-day1-1\n  day_raised: 1\n  agent: CONDUIT\n  finding: \"other\"\n  status: open\n"}),
		fire("pace.backlog.finding-unique", "finding twice", ".pace/advisory_backlog.yaml", 9, paceEdit{File: ".pace/advisory_backlog.yaml", New: "- id: a\n  day_raised: 1\n  agent: CONDUIT\n  finding: \"pin checkout\"\n  status: open\n- id: b\n  day_raised: 1\n  agent: CONDUIT\n  finding: \"pin checkout\"\n  status: open\n"}),
	)
	for _, a := range []struct{ name, file, other string }{{"sentinel", pSentinel, pConduit}, {"conduit", pConduit, pSentinel}} {
		dec := a.name + "_decision"
		// base: this agent decides SHIP with one PASS finding.
		base := []paceEdit{{File: a.file, New: "day: 1\nagent: " + strings.ToUpper(a.name) + "\nfindings:\n  - check: \"c\"\n    result: PASS\n    evidence: \"e\"\nadvisories: []\nblockers: []\n" + dec + ": SHIP\nhold_reason: \"\"\n"}}
		with := func(edits ...paceEdit) []paceEdit { return append(append([]paceEdit{}, base...), edits...) }
		r := func(s string) string { return "pace." + a.name + "." + s }
		cases = append(cases,
			fire(r("hold-iff-fail"), "FAIL but SHIP", a.file, 9, with(paceEdit{File: a.file, Old: "result: PASS", New: "result: FAIL"}, paceEdit{File: a.file, Old: "blockers: []", New: `blockers: ["b"]`})...),
			fire(r("advisory-iff-advisories"), "ADVISORY without advisory", a.file, 9, with(paceEdit{File: a.file, Old: dec + ": SHIP", New: dec + ": ADVISORY"})...),
			fire(r("ship-without-advisories"), "SHIP with advisory", a.file, 9, with(paceEdit{File: a.file, Old: "result: PASS", New: "result: ADVISORY"}, paceEdit{File: a.file, Old: "advisories: []", New: `advisories: ["a"]`})...),
			fire(r("blocker-per-fail"), "blocker without FAIL", a.file, 8, with(paceEdit{File: a.file, Old: "blockers: []", New: `blockers: ["b"]`})...),
			fire(r("advisory-per-advisory"), "advisory without ADVISORY", a.file, 7, with(paceEdit{File: a.file, Old: "advisories: []", New: `advisories: ["a"]`})...),
			fire(r("hold-reason-iff-hold"), "reason on SHIP", a.file, 10, with(paceEdit{File: a.file, Old: `hold_reason: ""`, New: `hold_reason: "x"`})...),
			fire(r("evidence-nonempty"), "blank evidence", a.file, 6, with(paceEdit{File: a.file, Old: `evidence: "e"`, New: `evidence: " "`})...),
			fire(r("advisories-missing"), "ADVISORY finding without advisories", a.file, 5, with(paceEdit{File: a.file, Old: "result: PASS", New: "result: ADVISORY"}, paceEdit{File: a.file, Old: "advisories: []\n", New: ""}, paceEdit{File: a.file, Old: dec + ": SHIP", New: dec + ": ADVISORY"})...),
			ruleCase{name: "no ADVISORY finding and no advisories", rule: r("advisories-missing"), tree: paceWith(with(paceEdit{File: a.file, Old: "advisories: []\n", New: ""})...)},
			ruleCase{name: "ADVISORY finding with its advisory", rule: r("advisories-missing"), tree: paceWith(with(paceEdit{File: a.file, Old: "result: PASS", New: "result: ADVISORY"}, paceEdit{File: a.file, Old: "advisories: []", New: `advisories: ["a"]`}, paceEdit{File: a.file, Old: dec + ": SHIP", New: dec + ": ADVISORY"})...)},
		)
	}
	addRuleCases("pace", cases...)
}
