package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/testutil"
)

// TestRulesDoc: docs/rules.md is exactly what the code generates, so the
// catalogue and its documentation cannot drift apart.
func TestRulesDoc(t *testing.T) {
	var buf bytes.Buffer
	if err := RulesMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join("..", "..", "docs", "rules.md"), buf.Bytes())
	for _, r := range check.Rules() {
		if !strings.Contains(buf.String(), "### `"+r.ID+"`") {
			t.Errorf("rule %s has no heading", r.ID)
		}
	}
}
