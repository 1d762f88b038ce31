// Package outcometest serves the tests of the packages that consume Phase
// Outcomes (check, ledger, decide, action, server): the seed outcome, and
// outcome comments rendered as phasegate posts them.
package outcometest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/outcome"
)

// Seed is the Phase Outcome example of the skill-pipeline source document:
// feature-042's requirements phase, with D-001 (a blocking approval) and
// D-002 (capture an out-of-scope finding, not blocking).
const Seed = `phase: requirements
feature: feature-042
produced:
  - artifact: PREQ
    location: issue body
findings:
  - type: out-of-scope-item
    title: "User avatar upload sizing"
    reasoning: "Mentioned by user, not part of this feature's user stories"
    proposed_category: out-of-scope
pending_decisions:
  - id: D-001
    type: approval
    question: "Approve PREQ for technical planning?"
    options: [approve, request-changes, reject]
    blocking: true
  - id: D-002
    type: capture-out-of-scope
    question: "Capture 'User avatar upload sizing' as separate issue?"
    options: [capture, discard]
    recommended: capture
    blocking: false
`

// SeedFor is Seed for feature-<feature> (so issue #<feature>).
func SeedFor(feature int) string {
	return strings.Replace(Seed, "feature: feature-042", fmt.Sprintf("feature: feature-%03d", feature), 1)
}

// Render renders the outcome comment of the YAML src, read from
// meta.Source, as phasegate posts it, and returns its body and outcome id.
func Render(t testing.TB, src string, meta outcome.Meta) (body, id string) {
	t.Helper()
	doc := artifact.Decode(meta.Source, artifact.KindByID("outcome.phase-outcome"), []byte(src), artifact.DefaultLimits)
	if !doc.Decoded {
		t.Fatalf("decoding %s: %v", meta.Source, doc.Problems)
	}
	o, err := outcome.Parse(doc.Value)
	if err != nil {
		t.Fatal(err)
	}
	canonical, err := outcome.Canonical(doc.Value)
	if err != nil {
		t.Fatal(err)
	}
	body, err = outcome.Render(o, canonical, meta)
	if err != nil {
		t.Fatal(err)
	}
	return body, outcome.ID(canonical)
}
