package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/phasegate/phasegate/internal/testutil"
)

// TestGateGolden runs `phasegate gate` in every format over a tree of all
// five families (testdata/gate/repo: a PACE day whose SENTINEL holds, a JG
// review that fails, a consistent SCC task, an Autopilot run, a Phase Outcome
// and one schema error) and compares the output with golden files.
//
// The tree is checked from a copy outside any git repository, so that the
// SARIF paths are relative to it and the golden file does not depend on
// where this repository is checked out (TestValidateSARIFRepositoryPaths
// covers paths relative to a repository root).
func TestGateGolden(t *testing.T) {
	repo := t.TempDir()
	if err := os.CopyFS(repo, os.DirFS(filepath.Join("testdata", "gate", "repo"))); err != nil {
		t.Fatal(err)
	}
	if r := gitRoot(repo); r != "" {
		t.Fatalf("the temporary directory %s is inside the git repository %s: this test needs one outside", repo, r)
	}
	tests := []struct {
		format, golden string
	}{
		{format: "text", golden: "gate.txt"},
		{format: "json", golden: "gate.json"},
		{format: "sarif", golden: "gate.sarif"},
		{format: "github", golden: "gate.github.txt"},
	}
	for _, tc := range tests {
		t.Run(tc.format, func(t *testing.T) {
			r := run(t, "gate", "--format", tc.format, repo)
			if r.code != ExitFindings {
				t.Errorf("exit code = %d, want %d (a SENTINEL HOLD holds); stderr:\n%s", r.code, ExitFindings, r.stderr)
			}
			if r.stderr != "" {
				t.Errorf("stderr = %q, want nothing", r.stderr)
			}
			testutil.Golden(t, filepath.Join("testdata", "gate", tc.golden), []byte(r.stdout))
		})
	}
}
