package check

import (
	"encoding/json"
	"testing"
)

// TestAutopilotSpanKeyIsJSONEquality: two spans share a key exactly when
// the compared fields encode to the same JSON, whether the key was built
// from strings or encoded.
func TestAutopilotSpanKeyIsJSONEquality(t *testing.T) {
	values := []any{nil, "", "a", "1", "null", "s1:a", "é\u2028", int64(1), float64(1), json.Number("1"), true, []any{"a"}, map[string]any{"a": "b"}}
	var spans []map[string]any
	for _, a := range values {
		for _, b := range values {
			spans = append(spans, map[string]any{"timestamp": a, "status": b})
			spans = append(spans, map[string]any{"step": a, "action": b, "other": "ignored"})
			spans = append(spans, map[string]any{"input_summary": a, "output_summary": b, "timestamp": "t"})
		}
	}
	enc := func(s map[string]any) string {
		b, err := json.Marshal([]any{s["timestamp"], s["step"], s["action"], s["input_summary"], s["output_summary"], s["status"]})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for i, a := range spans {
		for _, b := range spans[i:] {
			if got, want := autopilotSpanKey(a) == autopilotSpanKey(b), enc(a) == enc(b); got != want {
				t.Errorf("spans %v and %v: same key %v, same JSON %v", a, b, got, want)
			}
		}
	}
}
