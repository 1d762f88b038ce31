package command

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// isSeparator reports whether r separates the words of a command: a space,
// a tab, any other Unicode space separator (NO-BREAK SPACE, the en and em
// spaces, IDEOGRAPHIC SPACE, …), LINE SEPARATOR or PARAGRAPH SEPARATOR.
func isSeparator(r rune) bool {
	return r == ' ' || r == '\t' || r == 0x2028 || r == 0x2029 || (r >= 0x80 && unicode.Is(unicode.Zs, r))
}

// isInvisible reports whether r is drawn as nothing: format characters
// (zero-width space, joiners, word joiner, soft hyphen, byte order mark,
// direction marks, embeddings and isolates, tags), the combining grapheme
// joiner, variation selectors and the Hangul and Khmer fillers. Such
// characters are dropped from the words of a command, so that what is
// parsed is what a reader sees.
func isInvisible(r rune) bool {
	if r < 0xad {
		return false
	}
	switch {
	case r == 0x034f, r == 0x115f, r == 0x1160, r == 0x17b4, r == 0x17b5, r == 0x3164, r == 0xffa0:
		return true
	case r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// isControl reports whether r is a control character other than TAB (C0,
// DEL, C1).
func isControl(r rune) bool {
	return (r < 0x20 && r != '\t') || (r >= 0x7f && r <= 0x9f)
}

// isBidi reports whether r changes the direction of the text around it or
// is a byte order mark; these are dropped from a rationale (the other
// invisible characters, such as the joiners inside emoji, are kept).
func isBidi(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) ||
		(r >= 0x2066 && r <= 0x2069) || r == 0xfeff
}

// hasControl reports whether s holds a control character.
func hasControl(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if isControl(rune(c)) {
				return true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if isControl(r) {
			return true
		}
		i += n
	}
	return false
}

// nextToken skips separators and invisible characters at the start of s
// and returns the word that follows (up to the next separator, with the
// invisible characters inside it removed) and the rest of s after it.
func nextToken(s string) (tok, rest string) {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isSeparator(r) && !isInvisible(r) {
			break
		}
		i += n
	}
	start, clean := i, true
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == ' ' || c == '\t' {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if isSeparator(r) {
			break
		}
		if isInvisible(r) {
			clean = false
		}
		i += n
	}
	tok, rest = s[start:i], s[i:]
	if !clean {
		tok = strings.Map(func(r rune) rune {
			if isInvisible(r) {
				return -1
			}
			return r
		}, tok)
	}
	return tok, rest
}

// trimText trims separators, invisible and control characters from both
// ends of s.
func trimText(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return isSeparator(r) || isInvisible(r) || isControl(r) })
}

// appendRationale appends the text of s to b, at most limit characters
// (runes): invalid UTF-8 becomes U+FFFD, a tab a space; control characters
// and the characters of isBidi are dropped. It returns the number of
// characters written and whether s did not fit.
func appendRationale(b *strings.Builder, s string, limit int) (int, bool) {
	n := 0
	for _, r := range s {
		switch {
		case r == '\t':
			r = ' '
		case isControl(r), isBidi(r):
			continue
		}
		if n == limit {
			return n, true
		}
		b.WriteRune(r)
		n++
	}
	return n, false
}

// htmlComments: what the parser knows of HTML comments. A comment opened
// in a paragraph ends at "-->" or with the paragraph (CommonMark: an
// unclosed "<!--" is then text, but the lines it would hide are treated as
// hidden all the same). A comment opened in a raw HTML block and not closed
// there hides everything up to the next "-->", whatever blocks lie between:
// that is what a browser does with the HTML GitHub sends it.
type htmlComments struct {
	open bool // the text at this point is inside a comment
	raw  bool // the open comment was opened in a raw HTML block
}

// skipComments returns whether a comment is open at the end of s, given
// whether one was open at its start. "<!-->" and "<!--->" are comments
// (CommonMark 0.31); a "<!--" inside a code span or escaped by a
// backslash is treated as a comment too, which errs on the side of hiding.
func skipComments(s string, open bool) bool {
	for {
		if open {
			i := strings.Index(s, "-->")
			if i < 0 {
				return true
			}
			s, open = s[i+3:], false
		} else {
			i := strings.Index(s, "<!--")
			if i < 0 {
				return false
			}
			s, open = s[i+2:], true
		}
	}
}

// visibleText returns s without the parts inside HTML comments, and
// whether a comment is open at its end.
func visibleText(s string, open bool) (string, bool) {
	if !open && !strings.Contains(s, "<!--") {
		return s, false
	}
	var b strings.Builder
	for {
		if open {
			i := strings.Index(s, "-->")
			if i < 0 {
				return b.String(), true
			}
			s, open = s[i+3:], false
		} else {
			i := strings.Index(s, "<!--")
			if i < 0 {
				b.WriteString(s)
				return b.String(), false
			}
			b.WriteString(s[:i])
			s, open = s[i+2:], true
		}
	}
}
