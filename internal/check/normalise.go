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
	defaults map[string]func() any
}{
	"pace.gate-report": {"GATE", map[string]func() any{
		"blockers": emptyList, "deferred": emptyList, "hold_reason": emptyString}},
	"pace.sentinel-report": {"SENTINEL", map[string]func() any{
		"advisories": emptyList, "blockers": emptyList, "hold_reason": emptyString}},
	"pace.conduit-report": {"CONDUIT", map[string]func() any{
		"advisories": emptyList, "blockers": emptyList, "hold_reason": emptyString}},
	"pace.story-card": {"PRIME", nil},
	"pace.handoff":    {"FORGE", nil},
}

func emptyList() any   { return []any{} }
func emptyString() any { return "" }

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
	obj := make(map[string]any, len(orig)+len(fill.defaults)+2)
	maps.Copy(obj, orig)
	if _, has := obj["agent"]; !has {
		obj["agent"] = fill.agent
	}
	if _, has := obj["day"]; !has {
		if m := paceDayRE.FindStringSubmatch(doc.Path); m != nil {
			if n, err := strconv.ParseInt(m[1], 10, 64); err == nil {
				obj["day"] = json.Number(strconv.FormatInt(n, 10))
			}
		}
	}
	for k, def := range fill.defaults {
		if _, has := obj[k]; !has {
			obj[k] = def()
		}
	}
	return obj
}
