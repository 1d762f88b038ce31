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
	// Each span's key and encoding once, then every pair compared: the
	// same pairs and the same assertion as computing both per pair, without
	// a quarter of a million json.Marshal calls under -race.
	keys, encs := make([]string, len(spans)), make([]string, len(spans))
	for i, s := range spans {
		keys[i], encs[i] = autopilotSpanKey(s), enc(s)
	}
	for i, a := range spans {
		for j := i; j < len(spans); j++ {
			if got, want := keys[i] == keys[j], encs[i] == encs[j]; got != want {
				t.Errorf("spans %v and %v: same key %v, same JSON %v", a, spans[j], got, want)
			}
		}
	}
}
