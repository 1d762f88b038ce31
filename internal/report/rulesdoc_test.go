package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/check"
)

// TestRulesDoc: docs/rules.md is exactly what the code generates, so the
// catalogue and its documentation cannot drift apart.
func TestRulesDoc(t *testing.T) {
	var buf bytes.Buffer
	if err := RulesMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "docs", "rules.md")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s (run go test ./internal/report -run TestRulesDoc -update): %v", path, err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("%s is out of date: run go test ./internal/report -run TestRulesDoc -update", path)
	}
	for _, r := range check.Rules() {
		if !strings.Contains(buf.String(), "### `"+r.ID+"`") {
			t.Errorf("rule %s has no heading", r.ID)
		}
	}
}
