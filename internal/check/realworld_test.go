package check

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/phasegate/phasegate/internal/config"
)

// sharedDir is the project's shared/ folder, beside the repository in CI and
// on developer machines.
var sharedDir = filepath.Join("..", "..", "..", "shared")

func requireShared(t *testing.T, sub string) string {
	t.Helper()
	dir := filepath.Join(sharedDir, sub)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("%s is not present beside the repository: %v", dir, err)
	}
	return dir
}

// TestRealWorldArtifactsAccepted: the artifacts the upstream projects wrote
// themselves must pass with no error finding.
func TestRealWorldArtifactsAccepted(t *testing.T) {
	dir := requireShared(t, "realworld")
	res, err := sharedValidator.Run(context.Background(), dir, Options{Config: config.Default()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Artifacts < 40 {
		t.Errorf("discovered %d artifacts in %s, want at least 40 (every file there is an artifact)", res.Artifacts, dir)
	}
	// Upstream wrote these files, but upstream's own validators reject them
	// too: phasegate must agree with the validator (never miss what upstream
	// rejects), so exactly this error is expected there and nothing else.
	upstreamRejects := map[string]string{
		// check.py --stage plan (practitioner and expert): "[ERROR]
		// step_in_affected: Step file not in affected_files:
		// src/notifications/index.ts".
		"jg-walkthrough/.pipeline/issue-3/plan.json": "jg.plan.step-in-affected",
	}
	seen := map[string]bool{}
	for _, f := range res.Findings {
		if f.Severity != SeverityError {
			continue
		}
		if rule, ok := upstreamRejects[f.File]; ok && f.Rule == rule {
			seen[f.File] = true
			continue
		}
		t.Errorf("upstream artifact rejected: %s", formatFinding(f))
	}
	for file, rule := range upstreamRejects {
		if !seen[file] {
			t.Errorf("%s: want the %s error that upstream's own validator agrees with", file, rule)
		}
	}
}
