package command

import (
	"fmt"
	"html"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// isSeparator reports whether r separates the words of a command: a space,
// a tab, any other Unicode space separator (NO-BREAK SPACE, the en and em
// spaces, IDEOGRAPHIC SPACE, …), LINE SEPARATOR or PARAGRAPH SEPARATOR.
func isSeparator(r rune) bool {
	return r == ' ' || r == '\t' || r == 0x2028 || r == 0x2029 || (r >= 0xa0 && unicode.Is(unicode.Zs, r))
}

// isInvisible reports whether r is drawn as nothing: format characters
// (zero-width space, joiners, word joiner, soft hyphen, byte order mark,
// direction marks, embeddings and isolates, tags), the combining grapheme
// joiner, variation selectors and the Hangul and Khmer fillers. A command
// line holding one is Invalid (hiddenRune, which allows a few between
// visible characters that are not ASCII).
func isInvisible(r rune) bool {
	if r < 0xad {
		return false
	}
	switch r {
	case 0x034f, 0x115f, 0x1160, 0x17b4, 0x17b5, 0x3164, 0xffa0:
		return true
	}
	return isVariationSelector(r) || unicode.Is(unicode.Cf, r)
}

// isControl reports whether r is a control character other than TAB (C0,
// DEL, C1).
func isControl(r rune) bool {
	return (r < 0x20 && r != '\t') || (r >= 0x7f && r <= 0x9f)
}

// isVariationSelector reports whether r is a variation selector (VS1–VS16,
// VS17–VS256).
func isVariationSelector(r rune) bool {
	return r >= 0xfe00 && r <= 0xfe0f || r >= 0xe0100 && r <= 0xe01ef
}

// isBidi reports whether r changes the direction of the text around it or
// is a byte order mark; these are dropped from a rationale (the other
// invisible characters, such as the joiners inside emoji, are kept).
func isBidi(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) ||
		(r >= 0x2066 && r <= 0x2069) || r == 0xfeff
}

// nextToken skips separators and invisible characters at the start of s
// and returns the word that follows (up to the next separator, with the
// invisible characters inside it removed) and the rest of s after it.
// parseLine refuses a phasegate command line that holds one before it
// reads the words; the removal only lets a near miss (`/reslove` with a
// zero-width space) be answered with its suggestion.
func nextToken(s string) (tok, rest string) {
	i := 0
	for i < len(s) { // (at len(s), DecodeRuneInString would return U+FFFD, which ends the loop too)
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isSeparator(r) && !isInvisible(r) {
			break
		}
		i += n
	}
	start, clean := i, true
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf { // (a lone byte 0x80, decoded, is neither a separator nor invisible)
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

// visibleText returns whether a comment is open at the end of s, given
// whether one was open at its start, and, when keep is set, s without the
// parts inside HTML comments (without keep it allocates nothing). "<!-->"
// and "<!--->" are comments (CommonMark 0.31); a "<!--" inside a code span
// or escaped by a backslash is treated as a comment too, which errs on the
// side of hiding.
func visibleText(s string, open, keep bool) (string, bool) {
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
			continue
		}
		i := strings.Index(s, "<!--")
		if i < 0 {
			i = len(s)
		}
		if keep {
			b.WriteString(s[:i])
		}
		if i == len(s) {
			return b.String(), false
		}
		s, open = s[i+2:], true
	}
}

// hiddenProblem says why the command line s cannot be read as written, or
// "": it holds a control character or an invisible character (hiddenRune).
// The reason names the character by its code point only, so it can be
// posted as it is.
func hiddenProblem(s string) string {
	r, ref, ok := hiddenRune(s)
	if !ok {
		return ""
	}
	why := fmt.Sprintf("this command contains an invisible or bidirectional control character, U+%04X", r)
	if name := hiddenName(r); name != "" {
		why += " (" + name + ")"
	}
	if ref {
		why += ", written as an HTML character reference"
	}
	return why + ", which makes what is read differ from what is shown; retype the command without it"
}

// hiddenRune returns the first character of the command line s that is
// drawn as nothing or changes how the text around it is drawn, and whether
// s writes it as a character reference (&#x202E;, &rlm;), which GitHub
// renders as the character itself: a control character other than TAB,
// or an invisible one (isInvisible) that drawnWith does not allow.
// References are decoded as CommonMark does, wherever they are on the line
// (in a code span, or after a backslash, one shows as written: refusing it
// all the same errs on the safe side); none of the characters a reference
// stands for is allowed.
func hiddenRune(s string) (hidden rune, ref, found bool) {
	prev := rune(0) // the character before, as shown; 0 at the start
	for i := 0; i < len(s); {
		c := s[i]
		if c == '&' {
			if dec, n := charRef(s[i:]); n > 0 {
				for _, r := range dec {
					if isControl(r) || isInvisible(r) {
						return r, true, true
					}
					prev = r
				}
				i += n
				continue
			}
		}
		if c < utf8.RuneSelf {
			if isControl(rune(c)) {
				return rune(c), false, true
			}
			prev = rune(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if isControl(r) || isInvisible(r) && !drawnWith(r, prev, s[i+n:]) {
			return r, false, true
		}
		prev = r
		i += n
	}
	return 0, false, false
}

// drawnWith reports whether the invisible character r, after prev and
// before the text next, is part of how the characters around it are drawn
// and can neither hide nor reorder text: a zero-width joiner or non-joiner
// between two visible characters that are not ASCII (emoji sequences such
// as 👩‍💻, Persian and Indic words), or a variation selector after one (❤️)
// or in a keycap (1️⃣). The words of a command are ASCII, so neither can be
// part of one.
func drawnWith(r, prev rune, next string) bool {
	n, _ := utf8.DecodeRuneInString(next)
	switch {
	case r == 0x200c || r == 0x200d:
		return (shownNonASCII(prev) || isVariationSelector(prev)) && shownNonASCII(n)
	case isVariationSelector(r):
		return shownNonASCII(prev) || n == 0x20e3
	}
	return false
}

// shownNonASCII reports whether r is a visible character other than ASCII:
// not a space, a control, an invisible character or U+FFFD.
func shownNonASCII(r rune) bool {
	// (U+0080 is a control character: r > 0x80 would say the same.)
	return r >= utf8.RuneSelf && r != utf8.RuneError && !isSeparator(r) && !isControl(r) && !isInvisible(r)
}

// charRef reads the character reference that starts s ("&"), as CommonMark
// reads one: &#, 1 to 7 decimal digits and ";"; &#x or &#X, 1 to 6 hex
// digits and ";"; or & and the name of an HTML5 entity and ";". It returns
// the characters it stands for and its length in bytes, or 0 when s does
// not start with one (then the "&" shows as written).
func charRef(s string) (string, int) {
	if len(s) > 1 && s[1] == '#' {
		digits, most, base := s[2:], 7, 10
		if digits != "" && (digits[0] == 'x' || digits[0] == 'X') {
			digits, most, base = digits[1:], 6, 16
		}
		end := strings.IndexByte(digits[:min(len(digits), most+1)], ';')
		if end < 1 {
			return "", 0
		}
		v, err := strconv.ParseUint(digits[:end], base, 32)
		if err != nil {
			return "", 0
		}
		r := rune(v)
		if r == 0 {
			// CommonMark reads &#0; as U+FFFD, as string does a surrogate
			// or a value past U+10FFFF.
			r = unicode.ReplacementChar
		}
		return string(r), len(s) - len(digits) + end + 1
	}
	j := 1
	for j < len(s) && (isASCIILetter(s[j]) || isDigit(s[j])) {
		j++
	}
	if j == 1 || j == len(s) || s[j] != ';' {
		return "", 0
	}
	ref := s[:j+1]
	// html decodes a known entity name and the ";"; it also decodes a
	// legacy name that merely starts the word (&notit; → ¬it;), which
	// CommonMark does not, and leaves anything else as it is.
	if dec := html.UnescapeString(ref); dec != ref && !strings.HasSuffix(dec, ";") {
		return dec, j + 1
	}
	return "", 0
}

// hiddenNames are the names of the invisible characters people meet most.
var hiddenNames = map[rune]string{
	0x00ad: "SOFT HYPHEN", 0x061c: "ARABIC LETTER MARK",
	0x200b: "ZERO WIDTH SPACE", 0x200c: "ZERO WIDTH NON-JOINER", 0x200d: "ZERO WIDTH JOINER",
	0x200e: "LEFT-TO-RIGHT MARK", 0x200f: "RIGHT-TO-LEFT MARK",
	0x202a: "LEFT-TO-RIGHT EMBEDDING", 0x202b: "RIGHT-TO-LEFT EMBEDDING", 0x202c: "POP DIRECTIONAL FORMATTING",
	0x202d: "LEFT-TO-RIGHT OVERRIDE", 0x202e: "RIGHT-TO-LEFT OVERRIDE",
	0x2060: "WORD JOINER", 0x2066: "LEFT-TO-RIGHT ISOLATE", 0x2067: "RIGHT-TO-LEFT ISOLATE",
	0x2068: "FIRST STRONG ISOLATE", 0x2069: "POP DIRECTIONAL ISOLATE", 0xfeff: "ZERO WIDTH NO-BREAK SPACE",
}

// hiddenName is the name of r, or what kind of character it is, or "".
func hiddenName(r rune) string {
	switch {
	case hiddenNames[r] != "":
		return hiddenNames[r]
	case r >= 0xe0000 && r <= 0xe007f:
		return "a tag character"
	case isVariationSelector(r):
		return "a variation selector"
	}
	return ""
}
