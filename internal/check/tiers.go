package check

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Convention is one place of a schema marked `"x-tier": "convention"`: the
// shape upstream documents there is checked as a warning (RuleConvention),
// because no upstream validator enforces it and no upstream code needs it.
type Convention struct {
	// Schema is the schema file, e.g. "jg/plan.schema.json".
	Schema string
	// Field is where the convention applies, readable: "steps[]" or
	// "phase_1.<check>" ("(the whole document)" at the root).
	Field string
	// Basis is the schema's x-basis beside it: the upstream evidence.
	Basis string
}

// Conventions lists every convention-tier place of the embedded schemas,
// sorted by schema and field, for docs/rules.md and `phasegate schema`.
func Conventions() ([]Convention, error) {
	v, err := NewValidator()
	if err != nil {
		return nil, err
	}
	var out []Convention
	for url, doc := range v.raw {
		out = append(out, conventionsIn(strings.TrimPrefix(url, SchemaBaseURL), doc, nil)...)
	}
	slices.SortStableFunc(out, func(a, b Convention) int {
		return cmp.Or(strings.Compare(a.Schema, b.Schema), strings.Compare(a.Field, b.Field))
	})
	return out, nil
}

func conventionsIn(file string, node any, loc []string) []Convention {
	var out []Convention
	switch n := node.(type) {
	case map[string]any:
		if n["x-tier"] == TierConvention {
			b, _ := n["x-basis"].(string)
			out = append(out, Convention{Schema: file, Field: schemaField(loc), Basis: b})
		}
		for _, k := range slices.Sorted(maps.Keys(n)) {
			out = append(out, conventionsIn(file, n[k], append(loc, k))...)
		}
	case []any:
		for i, e := range n {
			out = append(out, conventionsIn(file, e, append(loc, fmt.Sprint(i)))...)
		}
	}
	return out
}

// schemaField renders a location in a schema as the instance field it
// governs: properties/steps/items → steps[], $defs/check → (check).
func schemaField(loc []string) string {
	var b strings.Builder
	for i := 0; i < len(loc); i++ {
		switch tok := loc[i]; tok {
		case "properties":
			if i+1 < len(loc) {
				i++
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(loc[i])
			}
		case "items":
			b.WriteString("[]")
		case "additionalProperties":
			b.WriteString(".<key>")
		case "$defs":
			if i+1 < len(loc) {
				i++
				b.WriteString("(" + loc[i] + ")")
			}
		case "allOf", "anyOf", "oneOf":
			i++ // the branch index
		}
	}
	if b.Len() == 0 {
		return "(the whole document)"
	}
	return b.String()
}
