package artifact

import (
	"sort"
	"strings"
	"testing"
)

func kindID(k *Kind) string {
	if k == nil {
		return ""
	}
	return k.ID
}

func TestClassifyPath(t *testing.T) {
	tests := []struct {
		path string
		want string // kind ID; "" for none
	}{
		// PACE, both naming sets.
		{".pace/day-1/story-card.yaml", "pace.story-card"},
		{".pace/day-1/story.md", "pace.story-card"},
		{".pace/day-2/handoff.yaml", "pace.handoff"},
		{".pace/day-2/handoff.md", "pace.handoff"},
		{".pace/day-3/gate-report.yaml", "pace.gate-report"},
		{".pace/day-3/gate.md", "pace.gate-report"},
		{".pace/day-4/sentinel-report.yaml", "pace.sentinel-report"},
		{".pace/day-4/sentinel.md", "pace.sentinel-report"},
		{".pace/day-5/conduit-report.yaml", "pace.conduit-report"},
		{".pace/day-5/conduit.md", "pace.conduit-report"},
		{".pace/day-10/cycle.md", "pace.cycle"},
		{".pace/day-0/attempts.yaml", "pace.attempts"},
		{".pace/day-123/deferred_scope.yaml", "pace.deferred-scope"},
		{".pace/plan.yaml", "pace.plan"},
		{"pace/plan.yaml", "pace.plan"},
		{".pace/advisory_backlog.yaml", "pace.advisory-backlog"},
		// At any depth.
		{"services/api/.pace/day-7/gate.md", "pace.gate-report"},
		// Never under a schemas/ directory, at any depth (only that segment).
		{"schemas/.autopilot/config.json", ""},
		{"api/schemas/.pace/day-1/gate.md", ""},
		{"api/schemas/x.outcome.yaml", ""},
		{"myschemas/x.outcome.yaml", "outcome.phase-outcome"},
		{"a/b/c/pace/plan.yaml", "pace.plan"},
		{"x/.pace/plan.yaml", "pace.plan"},
		// PACE negatives.
		{".pace/day-x/gate.md", ""},
		{".pace/day-/gate.md", ""},
		{".pace/Day-1/gate.md", ""},
		{".pace/day-1/extra/gate.md", ""},
		{".pace/gate.md", ""},
		{".pace/day-1/gate-report.yml", ""},
		{".pace/day-1/notes.md", ""},
		{".pace/day-1/plan.yaml", ""},
		{"pace/day-1/gate.md", ""},
		{"docs/plan.yaml", ""},
		{"pace/sub/plan.yaml", ""},
		{".pace/day-1/advisory_backlog.yaml", ""},

		// JG pipeline.
		{".pipeline/issue-1/plan.json", "jg.plan"},
		{".pipeline/ISSUE-42/pipeline-trace.json", "jg.pipeline-trace"},
		{".pipeline/completed/ISSUE-42/pipeline-trace.json", "jg.pipeline-trace"},
		{".pipeline/pipeline-trace.json", ""},
		{".pipeline/ISSUE-42/sub/pipeline-trace.json", ""},
		// Autopilot triage.
		{".planning/phases/26.2-update-notification-system/TRIAGE.json", "autopilot.triage"},
		{".planning/phases/TRIAGE.json", ""},
		{".planning/phases/3/triage.json", ""},
		{".planning/phases/3/sub/TRIAGE.json", ""},
		{".pipeline/42/worker-result.json", "jg.worker-result"},
		{".pipeline/42/worker-result-fast.json", "jg.worker-result"},
		{".pipeline/42/worker-result-high.json", "jg.worker-result"},
		{".pipeline/42/test-result.json", "jg.test-result"},
		{".pipeline/42/test-result-pass.json", "jg.test-result"},
		{".pipeline/42/test-result-fail.json", "jg.test-result"},
		{".pipeline/42/test-result-fast.json", "jg.test-result"},
		{".pipeline/42/review-result.json", "jg.review-result"},
		{".pipeline/42/review-result-high.json", "jg.review-result"},
		{".pipeline/42/debug-diagnosis.json", "jg.debug-diagnosis"},
		{".pipeline/42/debug-diagnosis-high.json", "jg.debug-diagnosis"},
		{".pipeline/42/git-result.json", "jg.git-result"},
		{".pipeline/42/state.yaml", "jg.state"},
		{".pipeline/lessons.yaml", "jg.lessons"},
		{".pipeline/completed/42/plan.json", "jg.plan"},
		{".pipeline/completed/42/test-result-pass.json", "jg.test-result"},
		{".pipeline/completed/42/state.yaml", "jg.state"},
		{"mono/repo/.pipeline/SOL-02/plan.json", "jg.plan"},
		// JG negatives.
		{".pipeline/a/b/c/plan.json", ""},
		{".pipeline/a/b/plan.json", ""},
		{".pipeline/plan.json", ""},
		{".pipeline/42/plan.yaml", ""},
		{".pipeline/42/test-result-slow.json", ""},
		{".pipeline/42/test-results.json", ""},
		{".pipeline/42/lessons.yaml", ""},
		{".pipeline/completed/42/x/plan.json", ""},
		{"pipeline/42/plan.json", ""},

		// SCC.
		{"artifacts/task-1/submit.json", "scc.submit"},
		{"artifacts/task-1/verdict.json", "scc.verdict"},
		{"artifacts/task-1/task.json", "scc.task"},
		{"deep/artifacts/0b6a/submit.json", "scc.submit"},
		{"tasks/refactor.task.json", "scc.task"},
		{"refactor.task.json", "scc.task"},
		{"artifacts/submit.json", ""},
		{"artifacts/a/b/submit.json", ""},
		{"artifacts/task-1/submit.yaml", ""},

		// Autopilot.
		{".autopilot/state.json", "autopilot.state"},
		{".autopilot/archive/run-2024-01-01.json", "autopilot.state"},
		{".autopilot/config.json", "autopilot.circuit-breaker-config"},
		{".autopilot/circuit-breaker.json", "autopilot.circuit-breaker-config"},
		{".autopilot/diagnostics/phase-3-postmortem.json", "autopilot.postmortem"},
		{".autopilot/learnings.md", "autopilot.learnings"},
		{".planning/phases/01-setup/TRACE.jsonl", "autopilot.trace"},
		{".planning/phases/01-setup/plan-trace.jsonl", "autopilot.trace"},
		{".planning/phases/2/plan_check-trace.jsonl", "autopilot.trace"},
		{"proj/.planning/phases/2/phase_runner-trace.jsonl", "autopilot.trace"},
		{".autopilot/archive/state.json", ""},
		{".autopilot/archive/run.json", ""},
		{".autopilot/diagnostics/postmortem.json", ""},
		{".autopilot/sub/state.json", ""},
		{".autopilot/handoff-2024.md", ""},
		{".planning/phases/TRACE.jsonl", ""},
		{".planning/phases/1/sub/TRACE.jsonl", ""},
		{".planning/phases/1/Plan-trace.jsonl", ""},
		{".planning/phases/1/trace.jsonl", ""},
		{".planning/phases/1/plan-trace.json", ""},
		{".planning/other/1/TRACE.jsonl", ""},

		// Phase Outcomes, anywhere.
		{"feature.outcome.yaml", "outcome.phase-outcome"},
		{"outcomes/2024/develop.outcome.yml", "outcome.phase-outcome"},
		{".pace/day-1/x.outcome.yaml", "outcome.phase-outcome"},
		{"outcome.yaml", ""},
		{"x.outcome.json", ""},

		// Nothing.
		{"README.md", ""},
		{"plan.json", ""},
		{"", ""},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			if got := kindID(ClassifyPath(tc.path)); got != tc.want {
				t.Errorf("ClassifyPath(%q) = %q, want %q", tc.path, got, tc.want)
			}
		})
	}
}

// TestClassifyPathCoversEveryKind: every kind except the content-only ones
// has a path convention that the table above exercises.
func TestClassifyPathCoversEveryKind(t *testing.T) {
	examples := map[string]string{
		"pace.story-card": ".pace/day-1/story.md", "pace.handoff": ".pace/day-1/handoff.md",
		"pace.gate-report": ".pace/day-1/gate.md", "pace.sentinel-report": ".pace/day-1/sentinel.md",
		"pace.conduit-report": ".pace/day-1/conduit.md", "pace.cycle": ".pace/day-1/cycle.md",
		"pace.attempts": ".pace/day-1/attempts.yaml", "pace.plan": ".pace/plan.yaml",
		"pace.advisory-backlog": ".pace/advisory_backlog.yaml", "pace.deferred-scope": ".pace/day-1/deferred_scope.yaml",
		"jg.plan": ".pipeline/1/plan.json", "jg.worker-result": ".pipeline/1/worker-result.json",
		"jg.test-result": ".pipeline/1/test-result.json", "jg.review-result": ".pipeline/1/review-result.json",
		"jg.debug-diagnosis": ".pipeline/1/debug-diagnosis.json", "jg.git-result": ".pipeline/1/git-result.json",
		"jg.state": ".pipeline/1/state.yaml", "jg.lessons": ".pipeline/lessons.yaml",
		"scc.task": "artifacts/t/task.json", "scc.submit": "artifacts/t/submit.json", "scc.verdict": "artifacts/t/verdict.json",
		"autopilot.state": ".autopilot/state.json", "autopilot.circuit-breaker-config": ".autopilot/config.json",
		"autopilot.trace": ".planning/phases/1/TRACE.jsonl", "autopilot.postmortem": ".autopilot/diagnostics/phase-1-postmortem.json",
		"autopilot.learnings": ".autopilot/learnings.md", "outcome.phase-outcome": "a.outcome.yaml",
		"autopilot.triage": ".planning/phases/03-tests/TRIAGE.json", "jg.pipeline-trace": ".pipeline/ISSUE-42/pipeline-trace.json",
	}
	for _, k := range Kinds() {
		p, ok := examples[k.ID]
		if !ok {
			t.Errorf("kind %s has no path example here: add one (and cases to TestClassifyPath)", k.ID)
			continue
		}
		if got := ClassifyPath(p); got != k {
			t.Errorf("ClassifyPath(%q) = %v, want %s", p, kindID(got), k.ID)
		}
	}
}

func TestKinds(t *testing.T) {
	ks := Kinds()
	if !sort.SliceIsSorted(ks, func(i, j int) bool { return ks[i].ID < ks[j].ID }) {
		t.Errorf("Kinds() is not sorted by ID")
	}
	seen := map[string]bool{}
	for _, k := range ks {
		if seen[k.ID] {
			t.Errorf("duplicate kind %s", k.ID)
		}
		seen[k.ID] = true
		if k.ID != k.Family+"."+k.Name {
			t.Errorf("kind ID %q is not family.name", k.ID)
		}
		if KindByID(k.ID) != k {
			t.Errorf("KindByID(%q) does not return the kind", k.ID)
		}
		if want := k.Family + "/" + k.Name + ".schema.json"; k.SchemaPath() != want {
			t.Errorf("SchemaPath() = %q, want %q", k.SchemaPath(), want)
		}
		if k.Title == "" || k.Paths == "" {
			t.Errorf("kind %s lacks a title or paths", k.ID)
		}
		switch k.Family {
		case "pace", "jg", "scc", "autopilot", "outcome":
		default:
			t.Errorf("kind %s has unknown family %q", k.ID, k.Family)
		}
	}
	// Kinds returns a copy: sorting or editing it does not reorder ours.
	ks[0], ks[len(ks)-1] = ks[len(ks)-1], ks[0]
	if again := Kinds(); again[0] == ks[0] {
		t.Errorf("Kinds() returns shared storage")
	}
	if KindByID("pace.nope") != nil || KindByID("") != nil {
		t.Errorf("KindByID of an unknown ID is not nil")
	}
}

func TestFormatOf(t *testing.T) {
	tests := []struct {
		kind string
		path string
		want Format
	}{
		{"pace.gate-report", ".pace/day-1/gate.md", FormatYAML},
		{"pace.gate-report", ".pace/day-1/gate-report.yaml", FormatYAML},
		{"jg.plan", ".pipeline/1/plan.json", FormatJSON},
		{"jg.plan", ".pipeline/1/PLAN.JSON", FormatJSON},
		{"autopilot.trace", ".planning/phases/1/TRACE.jsonl", FormatJSONL},
		{"autopilot.learnings", ".autopilot/learnings.md", FormatLearnings},
		{"autopilot.learnings", "docs/other.json", FormatLearnings},
		{"", "x.json", FormatJSON},
		{"", "x.yml", FormatYAML},
		{"", "x", FormatYAML},
	}
	for _, tc := range tests {
		t.Run(tc.kind+":"+tc.path, func(t *testing.T) {
			if got := FormatOf(KindByID(tc.kind), tc.path); got != tc.want {
				t.Errorf("FormatOf = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSniffable(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"a.json", true}, {"a.yaml", true}, {"a.yml", true}, {"dir/A.YML", true},
		{"a.jsonl", false}, {"a.md", false}, {"a", false}, {"a.json.bak", false},
		{"schemas/a.json", false}, {"x/schemas/y/a.yaml", false}, {"schemas.json", true}, {"x/schemas-v2/a.json", true},
	}
	for _, tc := range tests {
		if got := Sniffable(tc.path); got != tc.want {
			t.Errorf("Sniffable(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

func TestSniff(t *testing.T) {
	tests := []struct {
		name string
		path string
		head string
		want string
	}{
		{"submit YAML", "out/s.yaml", "schema_version: scc.submit.v1\ntask_id: x\n", "scc.submit"},
		{"submit YAML quoted", "out/s.yml", "task_id: x\nschema_version: \"scc.submit.v1\"\n", "scc.submit"},
		{"submit YAML single-quoted", "out/s.yml", "schema_version: 'scc.submit.v1'\n", "scc.submit"},
		{"submit JSON pretty", "out/s.json", "{\n  \"task_id\": \"x\",\n  \"schema_version\": \"scc.submit.v1\"\n}\n", "scc.submit"},
		{"submit JSON minified", "out/s.json", `{"schema_version":"scc.submit.v1","task_id":"x"}`, "scc.submit"},
		{"submit with BOM", "out/s.yaml", "\ufeffschema_version: scc.submit.v1\n", "scc.submit"},
		{"verdict YAML", "v.yaml", "schema_version: scc.verdict.v1\n", "scc.verdict"},
		{"verdict JSON", "v.json", "{\n\t\"schema_version\" : \"scc.verdict.v1\"\n}", "scc.verdict"},
		{"outcome", "decisions/p.yaml", "phase: develop\nproduced: []\npending_decisions:\n  - id: D-001\n", "outcome.phase-outcome"},
		{"outcome yml", "p.yml", "pending_decisions: []\nphase: x\n", "outcome.phase-outcome"},
		{"circuit breaker", "settings.json", "{\n  \"circuit_breaker_config\": {\"max_debug_attempts_per_phase\": 3}\n}\n", "autopilot.circuit-breaker-config"},
		{"circuit breaker minified", "settings.json", `{"circuit_breaker_config":{}}`, "autopilot.circuit-breaker-config"},

		{"other schema version", "s.yaml", "schema_version: scc.submit.v10\n", ""},
		{"other family", "s.yaml", "schema_version: scc.event.v1\n", ""},
		{"version in a comment", "s.yaml", "# schema_version: is not\nfoo: scc.submit.v1\n", ""},
		{"version in a value", "s.yaml", "note: \"schema_version: scc.submit.v1\"\n", ""},
		{"phase only", "p.yaml", "phase: develop\n", ""},
		{"pending only", "p.yaml", "pending_decisions: []\n", ""},
		{"outcome keys nested", "p.yaml", "x:\n  phase: a\n  pending_decisions: []\n", ""},
		{"outcome keys in JSON", "p.json", "phase: a\npending_decisions: []\n", ""},
		{"circuit breaker in YAML", "c.yaml", "\"circuit_breaker_config\": {}\n", ""},
		{"circuit breaker nested deep", "c.json", "{\n  \"a\": {\n          \"circuit_breaker_config\": {}\n  }\n}", ""},
		{"empty", "e.json", "", ""},

		// The claim is the parsed document's: top-level keys, never a JSON Schema.
		{"JSON Schema of the config, key near the top", "contracts/cb.schema.json", cbSchema, ""},
		{"JSON Schema with the key at its top level", "cb.json", `{"$schema": "https://json-schema.org/draft/2020-12/schema", "circuit_breaker_config": {}}`, ""},
		{"draft-07 JSON Schema of a submit", "s.json", `{"$schema": "http://json-schema.org/draft-07/schema#", "schema_version": "scc.submit.v1"}`, ""},
		{"artifact naming its own $schema", "cb.json", `{"$schema": "./cb.schema.json", "circuit_breaker_config": {}}`, "autopilot.circuit-breaker-config"},
		{"artifact with a $schema that is no string", "cb.json", `{"$schema": {"x": 1}, "circuit_breaker_config": {}}`, "autopilot.circuit-breaker-config"},
		{"circuit breaker after other keys, minified", "c.json", `{"a":[1,{"b":2}],"circuit_breaker_config":{}}`, "autopilot.circuit-breaker-config"},
		{"circuit breaker in a head cut short", "c.json", "{\"circuit_breaker_config\": {\"a\": 1}, \"b\": [1, 2,", "autopilot.circuit-breaker-config"},
		{"circuit breaker nested, shallow", "c.json", "{\n  \"a\": {\n  \"circuit_breaker_config\": {}\n  }\n}", ""},
		{"circuit breaker key as a value", "c.json", `{"keys": ["circuit_breaker_config"]}`, ""},
		{"circuit breaker in a JSON array", "c.json", `[{"circuit_breaker_config": {}}]`, ""},
		{"submit version nested", "s.json", "{\n  \"meta\": {\n    \"schema_version\": \"scc.submit.v1\"\n  }\n}", ""},
		{"circuit breaker that mentions a submit", "c.json", `{"note": "emits scc.submit.v1", "circuit_breaker_config": {}}`, "autopilot.circuit-breaker-config"},
		{"submit version of another key", "s.json", `{"schema_version": "scc.verdict.v2", "note": "scc.submit.v1"}`, ""},
		{"under schemas/", "schemas/autopilot/cb.json", `{"circuit_breaker_config": {}}`, ""},
		{"outcome under a nested schemas/", "docs/schemas/o.yaml", "phase: develop\npending_decisions: []\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := kindID(Sniff(tc.path, []byte(tc.head))); got != tc.want {
				t.Errorf("Sniff(%q, %q) = %q, want %q", tc.path, tc.head, got, tc.want)
			}
		})
	}
}

// cbSchema is the head of a JSON Schema describing the circuit-breaker
// config, as schemas/autopilot/circuit-breaker-config.schema.json begins:
// the key is four spaces in, where a line-based probe took it for the top.
const cbSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["circuit_breaker_config"],
  "properties": {
    "circuit_breaker_config": {"type": "object"}
  }
}`

func TestClaims(t *testing.T) {
	tests := []struct {
		name, kind, head string
		want             bool
	}{
		{"config", "autopilot.circuit-breaker-config", `{"circuit_breaker_config": {"no_progress_threshold": 3}}`, true},
		{"config, JSON Schema of it", "autopilot.circuit-breaker-config", cbSchema, false},
		{"config, JSON Schema with the key on top", "autopilot.circuit-breaker-config", `{"$schema": "https://json-schema.org/schema", "circuit_breaker_config": {}}`, false},
		{"config, key nested", "autopilot.circuit-breaker-config", `{"tools": {"circuit_breaker_config": {}}}`, false},
		{"config, key nested in a head cut short", "autopilot.circuit-breaker-config", `{"tools": {"circuit_breaker_config": {`, false},
		{"config with its own $schema", "autopilot.circuit-breaker-config", `{"$schema": "https://example.com/cb.json", "circuit_breaker_config": {}}`, true},
		{"state", "autopilot.state", `{"phases": [], "_meta": {"version": "1.0"}}`, true},
		{"state, key nested", "autopilot.state", `{"sessions": [{"_meta": {}}]}`, false},
		{"SCC submit", "scc.submit", `{"schema_version": "scc.submit.v1"}`, true},
		{"SCC submit, JSON Schema of it", "scc.submit", `{"$schema": "https://json-schema.org/draft/2020-12/schema", "properties": {"schema_version": {"const": "scc.submit.v1"}}}`, false},
		{"SCC submit with BOM", "scc.submit", "\ufeff{\"schema_version\": \"scc.submit.v1\"}", true},
		{"kind without a claim", "pace.gate-report", cbSchema, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Claims(KindByID(tc.kind), []byte(tc.head)); got != tc.want {
				t.Errorf("Claims(%s, %q) = %v, want %v", tc.kind, tc.head, got, tc.want)
			}
		})
	}
}

func TestKindPathsDocumentConventions(t *testing.T) {
	// The Paths text is shown by `phasegate schema`; it must mention the
	// file name that ClassifyPath matches for path-classified kinds.
	for _, k := range Kinds() {
		if k.ID == "outcome.phase-outcome" {
			continue
		}
		if !strings.Contains(k.Paths, "/") {
			t.Errorf("kind %s Paths %q names no directory", k.ID, k.Paths)
		}
	}
}
