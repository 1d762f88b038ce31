package outcome

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Outcome is the part of a Phase Outcome that phasegate reads: the header
// fields, the three sections and, for each finding, its effective category.
// Everything else an agent wrote (extra keys, handoff fields) stays in the
// canonical YAML only.
type Outcome struct {
	// Phase is the skill that produced the outcome, e.g. requirements.
	Phase string
	// Feature is the feature, e.g. feature-042; "" when absent.
	Feature string
	// Issue is the outcome's `issue:` field; 0 when absent.
	Issue int
	// Produced lists what now exists.
	Produced []Produced
	// Findings lists what was noticed, with proposed categories.
	Findings []Finding
	// Decisions are the pending decisions, in the outcome's order.
	Decisions []Decision
}

// Produced is one entry of the produced section.
type Produced struct {
	Artifact string
	Location string
}

// Finding is one entry of the findings section.
type Finding struct {
	Type      string
	Title     string
	Reasoning string
	// ProposedCategory is the category as written; "" when absent.
	ProposedCategory string
	// Category is the effective category: ProposedCategory when it is one
	// of Categories, else CategoryInScopeBlocking (the Phase Outcome contract, docs/contracts/outcome.md: "the safe
	// default is in-scope, blocking").
	Category string
}

// Defaulted reports whether the finding's category is the safe default
// because none, or an unknown one, was proposed.
func (f Finding) Defaulted() bool { return f.Category != f.ProposedCategory }

// Decision is one pending decision.
type Decision struct {
	ID       string
	Type     string
	Question string
	Options  []string
	// Recommended is the recommended option as written; "" when absent. It
	// need not be one of Options (rule outcome.recommended-in-options
	// warns); RecommendedOption says whether it is usable.
	Recommended string
	// Blocking is the decision's blocking flag; true when absent (bias
	// toward blocking).
	Blocking bool
	// Reasoning is the decision's `reasoning`, else its
	// `recommendation_reasoning`; "" when neither is present.
	Reasoning string
}

// RecommendedOption is the recommended option when it is one of the
// decision's options.
func (d Decision) RecommendedOption() (string, bool) {
	if d.Recommended == "" || !slices.Contains(d.Options, d.Recommended) {
		return "", false
	}
	return d.Recommended, true
}

// Finding categories of the Phase Outcome contract (docs/contracts/outcome.md).
const (
	CategoryInScopeBlocking   = "in-scope-blocking"
	CategoryInScopeDeferrable = "in-scope-deferrable"
	CategoryOutOfScope        = "out-of-scope"
	CategoryPreExisting       = "pre-existing"
)

// Categories are the known finding categories, in the seed's order.
var Categories = []string{CategoryInScopeBlocking, CategoryInScopeDeferrable, CategoryOutOfScope, CategoryPreExisting}

// Parse reads an outcome from its decoded value (the JSON data model of
// internal/artifact: map[string]any, []any, string, int64, float64,
// json.Number, bool, nil). Extra keys are ignored anywhere. It returns an
// error for what makes the outcome unusable for posting or resolving:
//
//   - the value is not a mapping, or `phase` is not a non-blank string;
//   - `pending_decisions` is missing (it is what makes a document an
//     outcome) or a section is present but not a list of mappings;
//   - a known field has the wrong type (`feature` not a string, `issue` not
//     a positive whole number, a title or question not a string, an option
//     not a string, `blocking` not a boolean);
//   - a decision has no id, no question or no options, an empty option, or
//     an id used twice (resolutions reference decisions by id).
//
// A missing `produced` or `findings` section reads as empty (the schema
// reports it); a missing `blocking` reads as true and a missing or unknown
// `proposed_category` as in-scope-blocking, the safe defaults.
func Parse(v any) (*Outcome, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("outcome is %s, not a mapping", describe(v))
	}
	o := &Outcome{}
	var err error
	if o.Phase, err = text(obj, "phase", true); err != nil {
		return nil, err
	}
	if strings.TrimSpace(o.Phase) == "" {
		return nil, fmt.Errorf("outcome has no phase")
	}
	if o.Feature, err = text(obj, "feature", false); err != nil {
		return nil, err
	}
	if raw, present := obj["issue"]; present {
		n, ok := wholeNumber(raw)
		if !ok || n < 1 || n > math.MaxInt32 {
			return nil, fmt.Errorf("issue is %s, not a positive whole number", describe(raw))
		}
		o.Issue = int(n)
	}
	produced, err := section(obj, "produced", false)
	if err != nil {
		return nil, err
	}
	for i, m := range produced {
		var p Produced
		at := fmt.Sprintf("produced[%d]", i)
		if p.Artifact, err = text(m, "artifact", false); err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		if p.Location, err = text(m, "location", false); err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		o.Produced = append(o.Produced, p)
	}
	findings, err := section(obj, "findings", false)
	if err != nil {
		return nil, err
	}
	for i, m := range findings {
		f, err := parseFinding(m)
		if err != nil {
			return nil, fmt.Errorf("findings[%d]: %w", i, err)
		}
		o.Findings = append(o.Findings, f)
	}
	decisions, err := section(obj, "pending_decisions", true)
	if err != nil {
		return nil, err
	}
	seen := map[string]int{}
	for i, m := range decisions {
		d, err := parseDecision(m)
		if err != nil {
			return nil, fmt.Errorf("pending_decisions[%d]: %w", i, err)
		}
		if j, dup := seen[d.ID]; dup {
			return nil, fmt.Errorf("pending_decisions[%d]: decision id %q is also used by pending_decisions[%d]", i, d.ID, j)
		}
		seen[d.ID] = i
		o.Decisions = append(o.Decisions, d)
	}
	return o, nil
}

func parseFinding(m map[string]any) (Finding, error) {
	var f Finding
	var err error
	if f.Type, err = text(m, "type", false); err != nil {
		return f, err
	}
	if f.Title, err = text(m, "title", false); err != nil {
		return f, err
	}
	if f.Reasoning, err = text(m, "reasoning", false); err != nil {
		return f, err
	}
	// A category of the wrong type is not an error: like an unknown one it
	// counts as in-scope-blocking, and the schema reports it.
	f.ProposedCategory, _ = m["proposed_category"].(string)
	f.Category = f.ProposedCategory
	if !slices.Contains(Categories, f.Category) {
		f.Category = CategoryInScopeBlocking
	}
	return f, nil
}

func parseDecision(m map[string]any) (Decision, error) {
	var d Decision
	var err error
	if d.ID, err = text(m, "id", true); err != nil {
		return d, err
	}
	if strings.TrimSpace(d.ID) == "" {
		return d, fmt.Errorf("decision id is blank")
	}
	if d.Type, err = text(m, "type", false); err != nil {
		return d, err
	}
	if d.Question, err = text(m, "question", true); err != nil {
		return d, err
	}
	if d.Recommended, err = text(m, "recommended", false); err != nil {
		return d, err
	}
	if d.Reasoning, err = text(m, "reasoning", false); err != nil {
		return d, err
	}
	if d.Reasoning == "" {
		if d.Reasoning, err = text(m, "recommendation_reasoning", false); err != nil {
			return d, err
		}
	}
	d.Blocking = true
	if raw, present := m["blocking"]; present {
		b, ok := raw.(bool)
		if !ok {
			return d, fmt.Errorf("blocking is %s, not true or false", describe(raw))
		}
		d.Blocking = b
	}
	raw, present := m["options"]
	if !present {
		return d, fmt.Errorf("decision %q has no options", d.ID)
	}
	list, ok := raw.([]any)
	if !ok {
		return d, fmt.Errorf("options is %s, not a list", describe(raw))
	}
	if len(list) == 0 {
		return d, fmt.Errorf("decision %q has no options", d.ID)
	}
	for j, e := range list {
		s, ok := e.(string)
		if !ok {
			return d, fmt.Errorf("options[%d] is %s, not text", j, describe(e))
		}
		if strings.TrimSpace(s) == "" {
			return d, fmt.Errorf("options[%d] is blank", j)
		}
		d.Options = append(d.Options, s)
	}
	return d, nil
}

// text is the string at key: "" when absent (an error when required), an
// error when present with another type. A null counts as absent.
func text(m map[string]any, key string, required bool) (string, error) {
	raw, present := m[key]
	if !present || raw == nil {
		if required {
			return "", fmt.Errorf("%s is missing", key)
		}
		return "", nil
	}
	s, ok := raw.(string)
	if !ok {
		return "", fmt.Errorf("%s is %s, not text", key, describe(raw))
	}
	return s, nil
}

// section is the list of mappings at key; nil when absent and not required.
func section(m map[string]any, key string, required bool) ([]map[string]any, error) {
	raw, present := m[key]
	if !present || raw == nil {
		if required {
			return nil, fmt.Errorf("%s is missing", key)
		}
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("%s is %s, not a list", key, describe(raw))
	}
	out := make([]map[string]any, 0, len(list))
	for i, e := range list {
		obj, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s[%d] is %s, not a mapping", key, i, describe(e))
		}
		out = append(out, obj)
	}
	return out, nil
}

// wholeNumber is v as an integer when it is one exactly.
func wholeNumber(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), true
		}
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i, true
		}
	}
	return 0, false
}

// describe names a value's type for an error message, never its content
// (which is agent-written).
func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "text"
	case bool:
		return "a boolean"
	case int, int64, float64, json.Number:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("a %T", v)
}
