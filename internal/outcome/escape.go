package outcome

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// zwsp is U+200B ZERO WIDTH SPACE. GitHub finds @mentions and #123
// references in the text of the rendered HTML (after Markdown, entities and
// backslash escapes are resolved), so neither a backslash nor an HTML
// entity stops them; a character between "@" and the name does. A zero
// width space is what Dependabot and Renovate insert for the same purpose:
// the text looks the same, and GitHub neither links nor notifies.
const zwsp = "\u200b"

// Inline escapes agent-written text for use inside one line of Markdown: a
// table cell, or the rest of a line after a fixed prefix. Whatever s holds,
// the result renders as s's characters and nothing else on GitHub:
//
//   - \ ` * _ [ ] ~ # $ ! ^ | are backslash-escaped: no code span,
//     emphasis, link, image, footnote, strikethrough, math, heading
//     sequence or table cell can start or end in agent text;
//   - < > & become &lt; &gt; &amp;: no raw HTML (no </details>, no
//     <!-- -->), no autolink in angle brackets, no entity (so &#64; stays
//     visible and cannot become an @ after decoding);
//   - every @ is followed by a zero width space (no @user or @org/team
//     mention, no e-mail autolink), and so is every # or GH- before a digit
//     (no #123 or GH-123 cross-reference that would post a "mentioned this"
//     event on another issue);
//   - a line break (LF, CR, CRLF, U+0085, U+2028, U+2029, VT, FF) becomes
//     <br>, so text never leaves its line or table cell; a tab becomes a
//     space;
//   - a "/" that starts the text or follows a line break is preceded by a
//     zero width space: no line of the rendered comment, in Markdown or on
//     screen, starts with an agent-written "/" (nothing reads as a command,
//     even copied and pasted);
//   - other control characters and the invisible or direction-changing
//     characters of invisibleRune are shown as visible \uXXXX escapes;
//     bytes that are not UTF-8 as \xNN.
//
// Leading and trailing spaces are dropped (Markdown would drop them).
func Inline(s string) string {
	s = strings.Trim(s, " \t")
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	lineStart := true
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		next := i + size
		atStart := lineStart
		lineStart = false
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\\x%02x`, s[i])
		case r == '\r':
			if strings.HasPrefix(s[next:], "\n") {
				next++
			}
			b.WriteString("<br>")
			lineStart = true
		case r == '\n' || r == '\v' || r == '\f' || r == 0x85 || r == 0x2028 || r == 0x2029:
			b.WriteString("<br>")
			lineStart = true
		case r == '\t' || r == ' ':
			b.WriteByte(' ')
			lineStart = atStart // a "/" after leading spaces still starts the line
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || invisibleRune(r) || r == 0xfffe || r == 0xffff:
			if r > 0xffff {
				fmt.Fprintf(&b, `\\U%08x`, r)
			} else {
				fmt.Fprintf(&b, `\\u%04x`, r)
			}
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '&':
			b.WriteString("&amp;")
		case r == '@':
			b.WriteString("@" + zwsp)
		case r == '#':
			b.WriteString(`\#`)
			if next < len(s) && isDigit(s[next]) {
				b.WriteString(zwsp)
			}
		case (r == 'G' || r == 'g') && next+2 < len(s) && (s[next] == 'H' || s[next] == 'h') && s[next+1] == '-' && isDigit(s[next+2]):
			b.WriteString(s[i:next+2] + zwsp)
			next += 2
		case r == '/' && atStart:
			b.WriteString(zwsp + "/")
		case r < utf8.RuneSelf && strings.IndexByte("\\`*_[]~$!^|", byte(r)) >= 0:
			b.WriteByte('\\')
			b.WriteByte(byte(r))
		default:
			b.WriteString(s[i:next])
		}
		i = next
	}
	return strings.TrimRight(b.String(), " ")
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// Token reports whether s can be shown verbatim in a code span and typed in
// a /resolve command: 1 to 64 ASCII letters, digits, '.', '_' or '-',
// starting with a letter or digit. Decision ids and options outside this
// charset are shown escaped, with no command to copy.
func Token(s string) bool { return word(s, 64, "._-") }
