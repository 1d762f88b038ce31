package outcome

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/artifact"
)

// decodeYAML decodes YAML text the way the checker does.
func decodeYAML(t testing.TB, src string) any {
	t.Helper()
	doc := artifact.Decode("x.yaml", nil, []byte(src), artifact.DefaultLimits)
	if !doc.Decoded {
		t.Fatalf("does not decode: %v", doc.Problems)
	}
	return doc.Value
}

func TestParseSeed(t *testing.T) {
	_, o, _ := loadOutcome(t, "seed.yaml")
	want := &Outcome{
		Phase:    "requirements",
		Feature:  "feature-042",
		Produced: []Produced{{Artifact: "PREQ", Location: "issue body"}},
		Findings: []Finding{{
			Type: "out-of-scope-item", Title: "User avatar upload sizing",
			Reasoning:        "Mentioned by user, not part of this feature's user stories",
			ProposedCategory: "out-of-scope", Category: "out-of-scope",
		}},
		Decisions: []Decision{
			{ID: "D-001", Type: "approval", Question: "Approve PREQ for technical planning?", Options: []string{"approve", "request-changes", "reject"}, Blocking: true},
			{ID: "D-002", Type: "capture-out-of-scope", Question: "Capture 'User avatar upload sizing' as separate issue?", Options: []string{"capture", "discard"}, Recommended: "capture", Blocking: false},
		},
	}
	if !reflect.DeepEqual(o, want) {
		t.Errorf("Parse(seed) =\n%+v\nwant\n%+v", o, want)
	}
	if rec, ok := o.Decisions[1].RecommendedOption(); !ok || rec != "capture" {
		t.Errorf("RecommendedOption = %q, %v", rec, ok)
	}
	if _, ok := o.Decisions[0].RecommendedOption(); ok {
		t.Errorf("D-001 has no recommended option")
	}
}

func TestParse(t *testing.T) {
	const base = "phase: qa\nfeature: feature-1\nproduced: []\nfindings: []\n"
	tests := []struct {
		name    string
		src     string
		wantErr string
		check   func(t *testing.T, o *Outcome)
	}{
		{name: "minimal", src: "phase: qa\npending_decisions: []\n", check: func(t *testing.T, o *Outcome) {
			if o.Phase != "qa" || o.Feature != "" || o.Issue != 0 || o.Produced != nil || o.Findings != nil || o.Decisions != nil {
				t.Errorf("got %+v", o)
			}
		}},
		{name: "extra keys everywhere", src: base + "handoff: {a: 1}\npending_decisions:\n  - {id: D-001, type: approval, question: q, options: [a, b], x: [1], blocking: true}\n", check: func(t *testing.T, o *Outcome) {
			if len(o.Decisions) != 1 || o.Decisions[0].ID != "D-001" {
				t.Errorf("got %+v", o)
			}
		}},
		{name: "issue", src: "phase: qa\nissue: 9\npending_decisions: []\n", check: func(t *testing.T, o *Outcome) {
			if o.Issue != 9 {
				t.Errorf("Issue = %d", o.Issue)
			}
		}},
		{name: "category defaults", src: base[:len(base)-len("findings: []\n")] + "findings:\n  - {type: t, title: a, reasoning: r}\n  - {type: t, title: b, reasoning: r, proposed_category: later}\n  - {type: t, title: c, reasoning: r, proposed_category: 3}\n  - {type: t, title: d, reasoning: r, proposed_category: pre-existing}\npending_decisions: []\n", check: func(t *testing.T, o *Outcome) {
			want := []struct {
				proposed, effective string
				defaulted           bool
			}{
				{"", CategoryInScopeBlocking, true},
				{"later", CategoryInScopeBlocking, true},
				{"", CategoryInScopeBlocking, true},
				{"pre-existing", CategoryPreExisting, false},
			}
			for i, w := range want {
				f := o.Findings[i]
				if f.ProposedCategory != w.proposed || f.Category != w.effective || f.Defaulted() != w.defaulted {
					t.Errorf("finding %d = %+v, want %+v", i, f, w)
				}
			}
		}},
		{name: "blocking defaults to true, reasoning falls back", src: base + "pending_decisions:\n  - {id: D-001, type: t, question: q, options: [a, b], recommendation_reasoning: why}\n", check: func(t *testing.T, o *Outcome) {
			d := o.Decisions[0]
			if !d.Blocking || d.Reasoning != "why" {
				t.Errorf("got %+v", d)
			}
		}},
		{name: "reasoning wins over recommendation_reasoning", src: base + "pending_decisions:\n  - {id: D-001, question: q, options: [a], reasoning: one, recommendation_reasoning: two}\n", check: func(t *testing.T, o *Outcome) {
			if o.Decisions[0].Reasoning != "one" {
				t.Errorf("got %+v", o.Decisions[0])
			}
		}},
		{name: "recommended not an option is kept", src: base + "pending_decisions:\n  - {id: D-001, question: q, options: [a, b], recommended: c}\n", check: func(t *testing.T, o *Outcome) {
			d := o.Decisions[0]
			if _, ok := d.RecommendedOption(); ok || d.Recommended != "c" || !d.HasOption("a") || d.HasOption("c") {
				t.Errorf("got %+v", d)
			}
		}},
		{name: "not a mapping", src: "- a\n", wantErr: "outcome is a list, not a mapping"},
		{name: "no phase", src: "pending_decisions: []\n", wantErr: "phase is missing"},
		{name: "blank phase", src: "phase: ' '\npending_decisions: []\n", wantErr: "outcome has no phase"},
		{name: "phase not text", src: "phase: 3\npending_decisions: []\n", wantErr: "phase is a number, not text"},
		{name: "feature not text", src: "phase: qa\nfeature: [a]\npending_decisions: []\n", wantErr: "feature is a list, not text"},
		{name: "issue not positive", src: "phase: qa\nissue: 0\npending_decisions: []\n", wantErr: "issue is a number, not a positive whole number"},
		{name: "issue text", src: "phase: qa\nissue: '#4'\npending_decisions: []\n", wantErr: "issue is text, not a positive whole number"},
		{name: "no pending_decisions", src: base, wantErr: "pending_decisions is missing"},
		{name: "section not a list", src: "phase: qa\nproduced: {a: b}\npending_decisions: []\n", wantErr: "produced is a mapping, not a list"},
		{name: "entry not a mapping", src: "phase: qa\nfindings: [x]\npending_decisions: []\n", wantErr: "findings[0] is text, not a mapping"},
		{name: "title not text", src: "phase: qa\nfindings: [{title: [x]}]\npending_decisions: []\n", wantErr: "findings[0]: title is a list, not text"},
		{name: "artifact not text", src: "phase: qa\nproduced: [{artifact: 1}]\npending_decisions: []\n", wantErr: "produced[0]: artifact is a number, not text"},
		{name: "no id", src: base + "pending_decisions: [{question: q, options: [a]}]\n", wantErr: "pending_decisions[0]: id is missing"},
		{name: "blank id", src: base + "pending_decisions: [{id: '', question: q, options: [a]}]\n", wantErr: "pending_decisions[0]: decision id is blank"},
		{name: "no question", src: base + "pending_decisions: [{id: D-001, options: [a]}]\n", wantErr: "pending_decisions[0]: question is missing"},
		{name: "no options", src: base + "pending_decisions: [{id: D-001, question: q}]\n", wantErr: `pending_decisions[0]: decision "D-001" has no options`},
		{name: "empty options", src: base + "pending_decisions: [{id: D-001, question: q, options: []}]\n", wantErr: `pending_decisions[0]: decision "D-001" has no options`},
		{name: "options not a list", src: base + "pending_decisions: [{id: D-001, question: q, options: a}]\n", wantErr: "pending_decisions[0]: options is text, not a list"},
		{name: "option not text", src: base + "pending_decisions: [{id: D-001, question: q, options: [a, 2]}]\n", wantErr: "pending_decisions[0]: options[1] is a number, not text"},
		{name: "blank option", src: base + "pending_decisions: [{id: D-001, question: q, options: [a, '']}]\n", wantErr: "pending_decisions[0]: options[1] is blank"},
		{name: "blocking text", src: base + "pending_decisions: [{id: D-001, question: q, options: [a], blocking: 'false'}]\n", wantErr: "pending_decisions[0]: blocking is text, not true or false"},
		{name: "recommended not text", src: base + "pending_decisions: [{id: D-001, question: q, options: [a], recommended: 1}]\n", wantErr: "pending_decisions[0]: recommended is a number, not text"},
		{name: "duplicate id", src: base + "pending_decisions: [{id: D-001, question: q, options: [a]}, {id: D-001, question: r, options: [b]}]\n", wantErr: `pending_decisions[1]: decision id "D-001" is also used by pending_decisions[0]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Parse(decodeYAML(t, tc.src))
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Parse error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			tc.check(t, o)
		})
	}
}

func TestParseOtherValues(t *testing.T) {
	tests := []struct {
		name    string
		v       any
		wantErr string
	}{
		{name: "nil", v: nil, wantErr: "outcome is null, not a mapping"},
		{name: "string", v: "x", wantErr: "outcome is text, not a mapping"},
		{name: "json number issue", v: map[string]any{"phase": "qa", "issue": json.Number("12"), "pending_decisions": []any{}}},
		{name: "float issue", v: map[string]any{"phase": "qa", "issue": 12.0, "pending_decisions": []any{}}},
		{name: "fractional issue", v: map[string]any{"phase": "qa", "issue": 1.5, "pending_decisions": []any{}}, wantErr: "issue is a number, not a positive whole number"},
		{name: "foreign type", v: map[string]any{"phase": struct{}{}, "pending_decisions": []any{}}, wantErr: "phase is a struct {}, not text"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.v)
			if (err == nil) != (tc.wantErr == "") || (err != nil && err.Error() != tc.wantErr) {
				t.Fatalf("Parse error = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestParseErrorsQuoteNoMarkup: an error message may be shown to people;
// the only agent text it carries is a %q-quoted id.
func TestParseErrorsQuoteNoMarkup(t *testing.T) {
	v := map[string]any{"phase": "qa", "pending_decisions": []any{
		map[string]any{"id": "D-1\n/resolve D-1 approve", "question": "q"},
	}}
	_, err := Parse(v)
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Parse error = %q", err)
	}
}

// HasOption reports whether o is exactly one of the decision's options.
func (d Decision) HasOption(o string) bool {
	return slices.Contains(d.Options, o)
}
