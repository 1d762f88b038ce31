package report

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/artifact"
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

var basisLabel = map[string]string{"S": "stated (S)", "R": "upstream code (R)", "I": "inferred (I)"}

// RulesMarkdown writes docs/rules.md: every rule phasegate reports, one
// heading per rule ID (the anchors SARIF's helpUri points at), generated
// from the code so the page cannot drift from it.
func RulesMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString(`# phasegate rules

<!-- Generated from the code by ` + "`go test ./internal/report -run TestRulesDoc -update`" + `; do not edit by hand. -->

Every finding carries a rule ID. Rule-layer rules can be switched to another severity or off in
` + "`.github/phasegate.yml`" + `:

<!-- snippet: config -->
` + "```yaml" + `
rules:
  pace.sentinel.ship-without-advisories: error   # error | warning | off
` + "```" + `

The basis says where a rule comes from, in the legend of the contracts: **stated (S)** in the pipeline's
source document, **upstream code (R)** confirmed in the pipeline's own code or schemas, **inferred (I)** a
judgement call — inferred rules are warnings (or off) by default.

## Decoding and schema

These apply to every artifact and cannot be switched off (except ` + "`schema.convention`" + `): a file that cannot be
read or decoded, or a directory that cannot be listed, is never silently skipped.

`)
	ids := make([]string, 0, len(builtinRules))
	for id := range builtinRules {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		d := builtinRules[id]
		fmt.Fprintf(&b, "### `%s`\n\n%s %s\n\nSeverity: %s.\n\n", id, d.Short, d.Full, d.Level)
	}
	convs, err := check.Conventions()
	if err != nil {
		return err
	}
	b.WriteString("### Contract and convention\n\nA schema's `x-tier` says what a violation there is: the **contract** (what an upstream validator enforces, or what upstream code needs to run) is a `schema` error; a **convention** (what upstream documents but neither enforces nor needs) is a `schema.convention` warning. Where upstream fills fields in before it validates (PACE sets `day`, `agent` and empty `blockers`, `deferred`, `advisories`, `hold_reason`), phasegate checks the report with them filled. The convention places:\n\n| schema | field | basis |\n| --- | --- | --- |\n")
	for _, c := range convs {
		fmt.Fprintf(&b, "| `%s` | `%s` | %s |\n", c.Schema, c.Field, strings.ReplaceAll(c.Basis, "|", "\\|"))
	}
	b.WriteString("\n")
	rules := check.Rules()
	for _, fam := range artifact.Families() {
		var list []check.Rule
		for _, r := range rules {
			if strings.HasPrefix(r.ID, fam.ID+".") {
				list = append(list, r)
			}
		}
		if len(list) == 0 {
			continue
		}
		fmt.Fprintf(&b, "## %s\n\n| rule | default | basis |\n| --- | --- | --- |\n", fam.Title)
		for _, r := range list {
			fmt.Fprintf(&b, "| [`%s`](#%s) | %s | %s |\n", r.ID, RuleAnchor(r.ID), r.Severity, basisLabel[r.Basis])
		}
		b.WriteByte('\n')
		for _, r := range list {
			fmt.Fprintf(&b, "### `%s`\n\n%s\n\nDefault severity: %s. Basis: %s.\n\n", r.ID, r.Summary, r.Severity, basisLabel[r.Basis])
		}
	}
	if _, err := io.WriteString(w, strings.TrimRight(b.String(), "\n")+"\n"); err != nil {
		return fmt.Errorf("writing rules documentation: %w", err)
	}
	return nil
}
