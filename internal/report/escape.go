package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Terminal makes text safe to print on a terminal or in a log: control
// characters (including ESC, so no ANSI sequences), C1 controls, the Unicode
// line and paragraph separators and the bidirectional controls that can make
// text read differently from what it is are replaced by visible \u escapes;
// bytes that are not valid UTF-8 (a lone 0x9b is CSI on some terminals) are
// replaced by visible \x escapes.
func Terminal(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case unsafeRune(r):
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafeRune reports whether r must not reach a terminal, a log or a review
// UI as itself.
func unsafeRune(r rune) bool {
	return r < 0x20 || r == 0x7f || // C0 controls and DEL
		r >= 0x80 && r <= 0x9f || // C1 controls
		r == 0x2028 || r == 0x2029 || // line and paragraph separators
		r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c // bidi controls
}

// EncodeJSON is how phasegate writes JSON for people and tools (the json
// and sarif reports, `decisions --format json`, the action's results file):
// v indented by two spaces, with a final newline, made safe to print
// (jsonSafe). `<`, `>` and `&` stay as they are: the output is never
// embedded in HTML, and a finding quoting `a < b` must read as written, not
// as \u003c.
func EncodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return jsonSafe(buf.Bytes()), nil
}

// jsonSafe rewrites encoded JSON so that no character of the unsafeRune set
// appears raw: encoding/json already escapes C0 controls and U+2028/U+2029,
// but not C1 controls or bidirectional overrides. Nor does "##[" appear,
// which the Actions runner reads as a workflow command anywhere in a line
// (see StopCommands): its "[" is written \u005b ('#' occurs only inside
// strings in encoded JSON). The replacements are JSON \u escapes, so the
// decoded value is unchanged; only what a person (or the runner) sees when
// the JSON is printed changes. Structural whitespace is ASCII and untouched.
func jsonSafe(data []byte) []byte {
	if bytes.Contains(data, []byte("##[")) {
		data = bytes.ReplaceAll(data, []byte("##["), []byte(`##\u005b`))
	}
	if !slices.ContainsFunc(data, func(c byte) bool { return c >= 0x80 }) {
		return data
	}
	out := make([]byte, 0, len(data)+16)
	for i := 0; i < len(data); {
		if data[i] < 0x80 {
			out = append(out, data[i])
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		if r >= 0x80 && unsafeRune(r) {
			out = fmt.Appendf(out, "\\u%04x", r)
		} else {
			out = append(out, data[i:i+size]...)
		}
		i += size
	}
	return out
}
