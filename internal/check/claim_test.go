package check

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/testutil"
)

// TestSharedPathsClaimedByContent: other tools write files at paths a kind
// shares (.autopilot/state.json and config.json, artifacts/<id>/submit.json,
// verdict.json and task.json). phasegate checks such a file only when its
// content says it is the family's; a foreign file is not an artifact (and
// never fails the gate), the family's own file is checked as before.
func TestSharedPathsClaimedByContent(t *testing.T) {
	demoState, err := os.ReadFile(filepath.Join("..", "..", "examples", "demo", ".autopilot", "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		path, content string
		wantKind      string // "" means: not claimed, no finding on the file
	}{
		// .autopilot/state.json: the index shows other tools' session state there.
		{name: "foreign .autopilot/state.json", path: ".autopilot/state.json",
			content: `{"version": 2, "sessions": [{"id": "a1", "status": "running"}], "lastRun": "2026-01-02"}` + "\n"},
		{name: "foreign .autopilot/state.json mentioning the word meta", path: ".autopilot/state.json",
			content: `{"meta": {"run": 1}, "notes": "no _meta key here"}` + "\n"},
		{name: "Autopilot's own state.json", path: ".autopilot/state.json", content: string(demoState), wantKind: "autopilot.state"},
		{name: "Autopilot's state.json missing fields is still checked", path: ".autopilot/state.json",
			content: `{"_meta": {"version": "1.0"}}` + "\n", wantKind: "autopilot.state"},
		// .autopilot/config.json: other tools' configuration.
		{name: "foreign .autopilot/config.json", path: ".autopilot/config.json",
			content: `{"model": "gpt-5", "autoApprove": true, "maxTurns": 40}` + "\n"},
		{name: "Autopilot's own config.json", path: ".autopilot/config.json",
			content: `{"circuit_breaker_config": {"no_progress_threshold": 0}}` + "\n", wantKind: "autopilot.circuit-breaker-config"},
		// artifacts/<id>/: a common build-output directory.
		{name: "foreign artifacts/<id>/submit.json", path: "artifacts/build-17/submit.json",
			content: `{"form": "contact", "fields": ["name", "email"]}` + "\n"},
		{name: "SCC submit.json", path: "artifacts/t-1/submit.json",
			content: `{"schema_version": "scc.submit.v1", "task_id": "t-1"}` + "\n", wantKind: "scc.submit"},
		{name: "foreign artifacts/<id>/verdict.json", path: "artifacts/lint/verdict.json",
			content: `{"passed": true, "score": 0.93}` + "\n"},
		{name: "SCC verdict.json (seed shape, no schema_version)", path: "artifacts/t-1/verdict.json",
			content: `{"task_id": "t-1", "verdict": "MAYBE"}` + "\n", wantKind: "scc.verdict"},
		{name: "foreign artifacts/<id>/task.json", path: "artifacts/ci/task.json",
			content: `{"name": "build", "steps": ["make"]}` + "\n"},
		{name: "SCC task.json", path: "artifacts/t-1/task.json",
			content: `{"title": "x", "pins": {}}` + "\n", wantKind: "scc.task"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := testutil.WriteTree(t, t.TempDir(), map[string]string{tt.path: tt.content})
			res, err := sharedValidator.Run(context.Background(), root, Options{Config: config.Default()})
			if err != nil {
				t.Fatal(err)
			}
			var onFile []Finding
			for _, f := range res.Findings {
				if f.File == tt.path {
					onFile = append(onFile, f)
				}
			}
			if tt.wantKind == "" {
				if res.Artifacts != 0 || len(onFile) != 0 {
					t.Errorf("a foreign file was claimed: %d artifacts, findings %v", res.Artifacts, onFile)
				}
				if len(res.Findings) != 1 || res.Findings[0].Rule != RuleNothingFound {
					t.Errorf("want only the nothing-found warning, got %v", res.Findings)
				}
				// Named on the command line, it is an error saying it is of no kind.
				named, err := sharedValidator.Run(context.Background(), filepath.Join(root, tt.path), Options{Config: config.Default()})
				if err != nil {
					t.Fatal(err)
				}
				if len(named.Findings) != 1 || named.Findings[0].Rule != RuleUnknownKind || !strings.Contains(named.Findings[0].Message, "matches no artifact kind") ||
					!strings.Contains(named.Findings[0].Message, "other tools write files there too") {
					t.Errorf("named foreign file: want one %s finding, got %v", RuleUnknownKind, named.Findings)
				}
				return
			}
			if res.Artifacts != 1 {
				t.Fatalf("the family's own file was not claimed: %d artifacts, findings %v", res.Artifacts, res.Findings)
			}
			for _, f := range onFile {
				if f.Kind != tt.wantKind {
					t.Errorf("finding of kind %s, want %s: %s", f.Kind, tt.wantKind, formatFinding(f))
				}
			}
		})
	}
}

// TestSchemasNeverClaimed: a JSON Schema, or any file under a schemas/
// directory, is not an artifact, whatever keys it describes (phasegate's own
// checkout held 61 errors from such files); an artifact that names its own
// $schema still is, and a config glob still names a file under schemas/.
func TestSchemasNeverClaimed(t *testing.T) {
	schema, err := os.ReadFile(filepath.Join("..", "..", "schemas", "autopilot", "circuit-breaker-config.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	cbConfig := `{"circuit_breaker_config": {"no_progress_threshold": 3}}` + "\n"
	tests := []struct {
		name, path, content string
		globs               []string // the kind's artifacts: globs
		wantKind            string   // "" means: not claimed
	}{
		{name: "the schema under schemas/", path: "schemas/autopilot/circuit-breaker-config.schema.json", content: string(schema)},
		{name: "the schema elsewhere", path: "contracts/circuit-breaker-config.schema.json", content: string(schema)},
		{name: "the schema at Autopilot's config path", path: ".autopilot/config.json", content: string(schema)},
		{name: "a config under a nested schemas/", path: "docs/schemas/example.json", content: cbConfig},
		{name: "a config elsewhere", path: "settings/example.json", content: cbConfig, wantKind: "autopilot.circuit-breaker-config"},
		{name: "a config naming its own $schema", path: ".autopilot/config.json",
			content: `{"$schema": "../schemas/cb.json", "circuit_breaker_config": {}}`, wantKind: "autopilot.circuit-breaker-config"},
		{name: "a config under schemas/ that config names", path: "schemas/example.json", content: cbConfig,
			globs: []string{"schemas/example.json"}, wantKind: "autopilot.circuit-breaker-config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := testutil.WriteTree(t, t.TempDir(), map[string]string{tt.path: tt.content})
			cfg := config.Default()
			if tt.globs != nil {
				cfg.Artifacts = map[string][]string{"autopilot.circuit-breaker-config": tt.globs}
			}
			res, err := sharedValidator.Run(context.Background(), root, Options{Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantKind == "" {
				if res.Artifacts != 0 || len(res.Findings) != 1 || res.Findings[0].Rule != RuleNothingFound {
					t.Errorf("claimed: %d artifacts, findings %v", res.Artifacts, res.Findings)
				}
				return
			}
			if res.Artifacts != 1 {
				t.Fatalf("not claimed: %d artifacts, findings %v", res.Artifacts, res.Findings)
			}
			for _, f := range res.Findings {
				if f.Kind != tt.wantKind {
					t.Errorf("finding of kind %s, want %s: %s", f.Kind, tt.wantKind, formatFinding(f))
				}
			}
		})
	}
}
