package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/testutil"
)

// TestDemo: `phasegate demo` prints, from the embedded example repository,
// exactly what `phasegate gate examples/demo` prints from the checkout (the
// same code path on the same files, nothing canned), then each pending
// decision with its /resolve command; it exits 0 although the verdict is
// HOLD (the demo ran as intended) and leaves no temporary directory behind.
func TestDemo(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	demo := run(t, "demo")
	if demo.code != ExitOK || demo.stderr != "" {
		t.Fatalf("demo: exit %d, stderr %q", demo.code, demo.stderr)
	}
	gate := run(t, "gate", filepath.Join("..", "..", "examples", "demo"))
	if gate.code != ExitFindings || !strings.Contains(gate.stdout, " — HOLD\n") {
		t.Fatalf("gate examples/demo: exit %d, want the demo's HOLD (exit 1):\n%s", gate.code, gate.stdout)
	}
	if !strings.Contains(demo.stdout, "\n\n"+gate.stdout+"\n") {
		t.Errorf("demo does not print what gate examples/demo prints:\n--- demo\n%s\n--- gate\n%s", demo.stdout, gate.stdout)
	}
	for _, want := range []string{"issue #42, outcomes/feature-042-requirements.yaml", "D-001  blocking  Approve PREQ", "/resolve D-001 approve\n", "/resolve D-002 capture\n"} {
		if !strings.Contains(demo.stdout, want) {
			t.Errorf("demo output lacks %q:\n%s", want, demo.stdout)
		}
	}
	testutil.Golden(t, filepath.Join("testdata", "demo.txt"), []byte(demo.stdout))
	if left, err := os.ReadDir(tmp); err != nil || len(left) != 0 {
		t.Errorf("demo left %v in its temporary directory (%v)", left, err)
	}
	if extra := run(t, "demo", "x"); extra.code != ExitUsage || !strings.Contains(extra.stderr, "demo takes no arguments") {
		t.Errorf("demo x: exit %d, stderr %q; want a usage error", extra.code, extra.stderr)
	}
}
