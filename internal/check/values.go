package check

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Helpers that read the JSON data model tolerantly. Rules run on documents
// that may also have schema findings: a value of the wrong type is simply
// absent for a rule (the schema layer already reported it), never a panic.

func asObj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// str returns m[k] when it is a string.
func str(m map[string]any, k string) (string, bool) {
	s, ok := m[k].(string)
	return s, ok
}

func strOr(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }

func filled(s string) bool { return !blank(s) }

// because is reason, followed by ": why" when why is not blank.
func because(reason, why string) string {
	if blank(why) {
		return reason
	}
	return reason + ": " + why
}

// stringList returns the string elements of m[k] (non-strings skipped) and
// whether m[k] is a list at all.
func stringList(m map[string]any, k string) ([]string, bool) {
	l, ok := m[k].([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(l))
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out, true
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// toInt returns v when it is a whole number.
func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	case json.Number:
		i, err := strconv.ParseInt(string(x), 10, 64)
		return i, err == nil
	}
	return 0, false
}

func boolean(m map[string]any, k string) (bool, bool) {
	b, ok := m[k].(bool)
	return b, ok
}

// ptr builds a JSON pointer from tokens; ints become indexes.
func ptr(tokens ...any) []string {
	out := make([]string, 0, len(tokens))
	for _, t := range tokens {
		switch x := t.(type) {
		case string:
			out = append(out, x)
		case int:
			out = append(out, strconv.Itoa(x))
		}
	}
	return out
}

// normalize folds text for loose comparisons: lower case, punctuation and
// runs of space folded.
func normalize(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r > 0x7f && r != '—' && r != '–':
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		default:
			space = true
		}
	}
	return b.String()
}

// looselyMatches is the fuzzy "maps to" of docs/contracts/README.md: exact text rarely
// survives an agent's paraphrase ("CI pipeline green" ↔ "CI pipeline — not
// yet configured"), so two texts match when, normalised, one contains the
// other, or they share their first two significant words.
func looselyMatches(a, b string) bool {
	na, nb := normalize(a), normalize(b)
	if na == "" || nb == "" {
		return false
	}
	if strings.Contains(na, nb) || strings.Contains(nb, na) {
		return true
	}
	wa, wb := significant(na), significant(nb)
	return len(wa) >= 2 && len(wb) >= 2 && wa[0] == wb[0] && wa[1] == wb[1]
}

var stopWords = map[string]bool{"the": true, "a": true, "an": true, "of": true, "to": true, "in": true, "on": true, "for": true, "and": true, "or": true, "is": true, "be": true, "not": true}

func significant(s string) []string {
	var out []string
	for _, w := range strings.Fields(s) {
		if !stopWords[w] {
			out = append(out, w)
		}
	}
	return out
}
