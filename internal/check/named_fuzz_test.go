package check

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/phasegate/phasegate/internal/config"
)

// FuzzNamedFile: any content at a named path (shared paths included) is
// either checked as an artifact or reported as of no kind — never skipped in
// silence, never a panic.
func FuzzNamedFile(f *testing.F) {
	names := []string{".autopilot/state.json", ".autopilot/config.json", "artifacts/t/submit.json", "artifacts/t/verdict.json",
		".planning/phases/3/TRIAGE.json", ".pipeline/I-1/pipeline-trace.json", "notes.json", "gate.md", "x.yaml"}
	f.Add(uint8(0), []byte(`{"_meta": {"version": "1.0"}}`))
	f.Add(uint8(1), []byte(`{"model": "x"}`))
	f.Add(uint8(2), []byte(`{"schema_version": "scc.submit.v1"`))
	f.Add(uint8(4), []byte(`{"phase_id": "3", "pass_ratio": 2}`))
	f.Add(uint8(6), []byte("\xef\xbb\xbf{\"circuit_breaker_config\": {}}"))
	f.Add(uint8(7), []byte("day: 1\ngate_decision: SHIP\n"))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		name := names[int(which)%len(names)]
		p := filepath.Join(t.TempDir(), filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := sharedValidator.Run(context.Background(), p, Options{Config: config.Default()})
		if err != nil {
			t.Fatal(err)
		}
		if res.Artifacts == 0 {
			if len(res.Findings) != 1 || res.Findings[0].Rule != RuleUnknownKind {
				t.Fatalf("a named file that is no artifact must be one %s finding, got %v", RuleUnknownKind, res.Findings)
			}
		}
		for _, fd := range res.Findings {
			if fd.Rule == "" || fd.Message == "" || fd.File == "" {
				t.Fatalf("finding without rule, message or file: %+v", fd)
			}
		}
	})
}
