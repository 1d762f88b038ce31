package check

import (
	"encoding/json"
	"maps"
	"strconv"

	"github.com/phasegate/phasegate/internal/artifact"
)

// paceFills are the fields PACE's orchestrator fills in after it parses an
// agent's report and before it validates it (gate.py, sentinel.py,
// conduit.py: setdefault; every agent: day and agent). A report that lacks
// them is what upstream validates with them filled, so phasegate checks it
// the same way.
var paceFills = map[string]struct {
	agent    string
	defaults map[string]any // never written: validation only reads
}{
	"pace.gate-report":     {"GATE", map[string]any{"blockers": []any{}, "deferred": []any{}, "hold_reason": ""}},
	"pace.sentinel-report": {"SENTINEL", map[string]any{"advisories": []any{}, "blockers": []any{}, "hold_reason": ""}},
	"pace.conduit-report":  {"CONDUIT", map[string]any{"advisories": []any{}, "blockers": []any{}, "hold_reason": ""}},
	"pace.story-card":      {"PRIME", nil},
	"pace.handoff":         {"FORGE", nil},
}

// normalised is the value the schema layer validates: the document with
// what upstream fills in before it validates (see paceFills), only where the
// field is absent, so a value the file does carry is checked as written. It
// is a shallow copy: the rule layer sees the document as written, so a rule
// about a field the file leaves out (blockers, advisories) does not judge
// the filled-in default.
func normalised(doc *artifact.Document) any {
	fill, ok := paceFills[doc.Kind.ID]
	if !ok {
		return doc.Value
	}
	orig, ok := doc.Value.(map[string]any)
	if !ok {
		return doc.Value
	}
	// Filled first, so that what the file carries overwrites them.
	obj := map[string]any{"agent": fill.agent}
	if n, ok := paceDayOf(doc.Path); ok {
		obj["day"] = json.Number(strconv.Itoa(n))
	}
	maps.Copy(obj, fill.defaults)
	maps.Copy(obj, orig)
	return obj
}
