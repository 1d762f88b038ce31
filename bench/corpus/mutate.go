package corpus

import (
	"bytes"
	"strconv"
	"strings"
)

// mutation is one way to make a valid artifact violate its schema. Only
// violations that every JSON Schema validator reports the same way are used
// (types, enums, consts, required and unknown keys), never `format`, which
// some validators only annotate.
type mutation struct {
	path  string // slash-separated; for JSONL relative to one line
	del   bool   // remove the key instead of setting it
	add   bool   // add path (a new top-level key) with val
	val   any
	label string
}

const bullets = "- first item\n- second item"

var mutations = map[string][]mutation{
	"pace.story-card": {
		{path: "day", val: "one", label: "day is a string"},
		{path: "agent", val: "FORGE", label: "wrong agent const"},
		{path: "acceptance", val: bullets, label: "acceptance is a bullet string"},
		{path: "stories/0/acceptance_criteria", val: bullets, label: "acceptance_criteria is a bullet string"},
	},
	"pace.handoff": {
		// A bullet string is a convention departure (PACE coerces it before
		// validating), so the type mutations use values nobody coerces.
		{path: "known_gaps", val: 3, label: "known_gaps is a number"},
		{path: "edge_cases_tested", val: true, label: "edge_cases_tested is a boolean"},
		{path: "approach", del: true, label: "approach missing"},
		{path: "agent", val: "GATE", label: "wrong agent const"},
	},
	"pace.gate-report": {
		{path: "gate_decision", val: "ADVISORY", label: "gate_decision ADVISORY"},
		{path: "criteria_results/0/result", val: "PASSED", label: "criterion result not in enum"},
		{path: "criteria_results", del: true, label: "criteria_results missing"},
		{path: "blockers", val: "none", label: "blockers is a string"},
	},
	"pace.sentinel-report": {
		{path: "sentinel_decision", val: "BLOCK", label: "decision not in enum"},
		{path: "findings/0/result", val: "WARN", label: "finding result not in enum"},
		{path: "advisories", val: bullets, label: "advisories is a bullet string"},
		{path: "findings", del: true, label: "findings missing"},
	},
	"pace.conduit-report": {
		{path: "conduit_decision", val: "BLOCK", label: "decision not in enum"},
		{path: "findings/0/result", val: "WARN", label: "finding result not in enum"},
		{path: "blockers", val: "none", label: "blockers is a string"},
		{path: "agent", val: "SENTINEL", label: "wrong agent const"},
	},
	"pace.cycle": {
		{path: "cycle_cost_usd", val: "$2.84", label: "cost is a string"},
		{path: "day", val: "1", label: "day is a string"},
		{path: "day", del: true, label: "day missing"},
	},
	"pace.attempts": {
		{path: "0/outcome", val: "ADVISORY", label: "attempt outcome not in enum"},
		{path: "0/run", val: "first", label: "run is a string"},
		{path: "0/cost_usd", val: "3.10 USD", label: "cost is a string"},
	},
	"pace.plan": {
		{path: "days/0/day", val: "one", label: "plan day is a string"},
		{path: "days/0/stories", val: "see the wiki", label: "plan stories is a string"},
		{path: "stories/0/status", val: "done", label: "story status not in enum"},
		{path: "stories/0/id", val: "S1", label: "story id pattern"},
	},
	"pace.advisory-backlog": {
		{path: "0/agent", val: "GATE", label: "backlog agent not in enum"},
		{path: "0/status", val: "closed", label: "backlog status not in enum"},
		{path: "0/day_raised", val: "three", label: "day_raised is a string"},
	},
	"pace.deferred-scope": {
		{path: "deferred", val: "see gate report", label: "deferred is a string"},
	},
	"jg.plan": {
		{path: "acceptance_mapping", val: []any{"AC-1"}, label: "acceptance_mapping is a list"},
		{path: "affected_files", del: true, label: "affected_files missing"},
		{path: "steps", val: "see below", label: "steps is a string"},
	},
	"jg.worker-result": {
		{path: "status", val: "done", label: "status not in enum"},
		{path: "files_changed", val: "src/app.ts", label: "files_changed is a string"},
		{path: "summary", del: true, label: "summary missing"},
	},
	"jg.test-result": {
		{path: "verdict", val: "PASSED", label: "verdict not in enum"},
		{path: "phase_1", del: true, label: "phase_1 missing"},
	},
	"jg.review-result": {
		{path: "verdict", val: "APPROVE", label: "verdict not in enum"},
		{path: "concerns", del: true, label: "concerns missing"},
		{path: "nits", del: true, label: "nits missing"}, // schema.py requires the key; its shape is a convention
	},
	"jg.debug-diagnosis": {
		{path: "classification", val: "bug", label: "classification not in enum"},
		{path: "root_cause", del: true, label: "root_cause missing"},
	},
	"jg.git-result": {
		{path: "branch", del: true, label: "branch missing"},
		{path: "commit_message", val: 42, label: "commit_message is a number"},
	},
	// jg.state has none: upstream does not validate state.yaml, so its whole
	// schema is the convention tier (warnings).
	"jg.state": {},
	"jg.lessons": {
		{path: "lessons", val: "none yet", label: "lessons is a string"},
		{path: "0/date", val: 20260301, label: "lesson date is a number"},
		{path: "0/pattern", del: true, label: "lesson pattern missing"},
	},
	"scc.submit": {
		{path: "status", val: "SUCCESS", label: "status not in enum"},
		{path: "schema_version", val: "scc.submit.v2", label: "schema_version const"},
		{path: "needs_input", del: true, label: "needs_input missing"},
		{path: "notes", add: true, val: "extra", label: "unknown key"},
		{path: "exit_code", val: "0", label: "exit_code is a string"},
	},
	"scc.verdict": {
		{path: "verdict", val: "APPROVED", label: "verdict not in enum"},
		{path: "task_id", del: true, label: "task_id missing"},
	},
	"scc.task": {
		{path: "goal", del: true, label: "goal missing"},
		{path: "files", val: "src/app.ts", label: "files is a string"},
	},
	"autopilot.state": {
		{path: "_meta/status", val: "done", label: "run status not in enum"},
		{path: "circuit_breaker/state", val: "tripped", label: "breaker state not in enum"},
		{path: "_meta/total_phases", val: "three", label: "total_phases is a string"}, // without _meta the file is not claimed as Autopilot's
	},
	"autopilot.circuit-breaker-config": {
		{path: "circuit_breaker_config/no_progress_threshold", val: "three", label: "threshold is a string"},
		{path: "circuit_breaker_config/cooldown_minutes", val: -5, label: "negative cooldown"},
	},
	"autopilot.trace": {
		{path: "status", val: "ok", label: "span status not in enum"},
		{path: "action", val: "read", label: "span action not in enum"},
		{path: "duration_ms", val: "45ms", label: "duration_ms is a string"},
	},
	"autopilot.postmortem": {
		{path: "status", val: "error", label: "status const"},
		{path: "root_cause/category", val: "unknown", label: "category not in taxonomy"},
		{path: "prevention_rule", del: true, label: "prevention_rule missing"},
	},
	"outcome.phase-outcome": {
		{path: "pending_decisions/0/blocking", val: "yes", label: "blocking is a string"},
		{path: "findings", del: true, label: "findings missing"},
		{path: "produced", val: "PREQ", label: "produced is a string"},
	},
}

// mutate applies one of the kind's mutations that fits the value's shape.
func (g *gen) mutate(kind string, enc encoding, v any) (any, string, bool) {
	r := g.r
	if enc == encMarkdown {
		return mutateLearnings(v.(string))
	}
	ms := mutations[kind]
	line := 0
	if enc == encJSONL {
		line = r.IntN(len(v.([]any)))
	}
	for _, i := range r.Perm(len(ms)) {
		if nv, ok := applyMutation(ms[i], enc, v, line); ok {
			return nv, ms[i].label, true
		}
	}
	return v, "", false
}

// applyMutation applies m to a copy of v (to line line of a JSONL value).
func applyMutation(m mutation, enc encoding, v any, line int) (any, bool) {
	v = deepCopy(v) // values may be shared with sibling files
	if m.add {
		if o, ok := v.(obj); ok {
			return append(o, kv{m.path, m.val}), true
		}
		return v, false
	}
	path := m.path
	if enc == encJSONL {
		path = strconv.Itoa(line) + "/" + path
	}
	return setPath(v, strings.Split(path, "/"), m.val, m.del)
}

func mutateLearnings(s string) (any, string, bool) {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return "# Notes" + s[i:], "learnings title is not \"# Learnings (current run)\"", true
	}
	return s, "", false
}

// breakSyntax makes a file unreadable for a parser, or trips a decoder
// policy: a truncated JSON document, or in YAML an unterminated quote or a
// duplicate key.
func (g *gen) breakSyntax(enc encoding, data []byte) []byte {
	switch enc {
	case encJSON, encJSONL:
		return data[:len(data)*3/5]
	case encMarkdown:
		return data
	}
	if g.r.chance(0.5) && !bytes.HasPrefix(data, []byte("- ")) {
		if i := bytes.IndexByte(data, '\n'); i > 0 {
			// Repeat the first key at the end: a duplicate key.
			return append(append([]byte{}, data...), data[:i+1]...)
		}
	}
	return append(append([]byte{}, data...), []byte("note: \"unterminated\n")...)
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case obj:
		out := make(obj, len(t))
		for i, e := range t {
			out[i] = kv{e.K, deepCopy(e.V)}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = deepCopy(e)
		}
		return out
	case flow:
		return append(flow{}, t...)
	}
	return v
}
