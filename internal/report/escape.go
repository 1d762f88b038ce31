package report

import (
	"fmt"
	"strings"
	"unicode"
)

// Terminal makes text safe to print on a terminal or in a log: control
// characters (including ESC, so no ANSI sequences), C1 controls and the
// Unicode bidirectional overrides that can make text read differently from
// what it is are replaced by visible \u escapes.
func Terminal(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unsafeRune(r) {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func needsEscape(s string) bool {
	for _, r := range s {
		if unsafeRune(r) {
			return true
		}
	}
	return false
}

func unsafeRune(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	case r == unicode.ReplacementChar:
		return false
	}
	return false
}
