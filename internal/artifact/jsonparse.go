package artifact

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// jsonParser is a strict RFC 8259 parser that builds a yaml.Node tree, so that
// JSON and YAML artifacts share one converter and one pointer→position map.
// encoding/json cannot report the position of every value, and its Decoder
// token API is both slower and blind to duplicate keys.
type jsonParser struct {
	data     []byte
	off      int
	line     int
	lineOff  int // offset of the first byte of the current line
	colOff   int // offset up to which colChars counts (monotonic within a line)
	colChars int // characters between lineOff and colOff
	maxDepth int
	err      *Problem
}

// parseJSON parses one JSON document. lineBase is added to every line number
// (for JSONL, where each line is its own document).
func parseJSON(data []byte, maxDepth int, lineBase int) (*yaml.Node, *Problem) {
	p := &jsonParser{data: data, line: 1 + lineBase, maxDepth: maxDepth}
	p.skipSpace()
	n := p.value(0)
	if p.err != nil {
		return nil, p.err
	}
	p.skipSpace()
	if p.off < len(p.data) {
		p.fail("unexpected %s after the end of the JSON value", p.describe())
		return nil, p.err
	}
	return n, nil
}

// pos is the position of p.off. Columns count characters; the count is kept
// incrementally so that a long minified line costs O(n), not O(n²).
func (p *jsonParser) pos() Pos {
	if p.colOff < p.lineOff || p.colOff > p.off {
		p.colOff, p.colChars = p.lineOff, 0
	}
	for _, b := range p.data[p.colOff:p.off] {
		if b&0xC0 != 0x80 {
			p.colChars++
		}
	}
	p.colOff = p.off
	return Pos{Line: p.line, Column: p.colChars + 1}
}

func (p *jsonParser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = &Problem{Pos: p.pos(), Rule: RuleSyntax, Message: "invalid JSON: " + fmt.Sprintf(format, args...)}
	}
}

func (p *jsonParser) describe() string {
	if p.off >= len(p.data) {
		return "end of file"
	}
	r, _ := utf8.DecodeRune(p.data[p.off:])
	return strconv.QuoteRune(r)
}

func (p *jsonParser) skipSpace() {
	for p.off < len(p.data) {
		switch p.data[p.off] {
		case ' ', '\t', '\r':
			p.off++
		case '\n':
			p.off++
			p.line++
			p.lineOff = p.off
		default:
			return
		}
	}
}

func (p *jsonParser) node(kind yaml.Kind, tag string, pos Pos) *yaml.Node {
	return &yaml.Node{Kind: kind, Tag: tag, Line: pos.Line, Column: pos.Column}
}

func (p *jsonParser) value(depth int) *yaml.Node {
	if p.off >= len(p.data) {
		p.fail("unexpected end of file, expected a value")
		return nil
	}
	start := p.pos()
	switch c := p.data[p.off]; {
	case c == '{' || c == '[':
		if depth >= p.maxDepth {
			p.err = &Problem{Pos: start, Rule: RuleDepth, Message: fmt.Sprintf("nesting is deeper than %d levels", p.maxDepth)}
			return nil
		}
		if c == '[' {
			return p.array(depth, start)
		}
		return p.object(depth, start)
	case c == '"':
		s, ok := p.str()
		if !ok {
			return nil
		}
		n := p.node(yaml.ScalarNode, "!!str", start)
		n.Value, n.Style = s, yaml.DoubleQuotedStyle
		return n
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number(start)
	case c == 't':
		return p.literal("true", "!!bool", start)
	case c == 'f':
		return p.literal("false", "!!bool", start)
	case c == 'n':
		return p.literal("null", "!!null", start)
	}
	p.fail("unexpected %s, expected a value", p.describe())
	return nil
}

func (p *jsonParser) literal(word, tag string, start Pos) *yaml.Node {
	if !strings.HasPrefix(string(p.data[p.off:min(len(p.data), p.off+len(word))]), word) {
		p.fail("unexpected %s, expected a value", p.describe())
		return nil
	}
	p.off += len(word)
	n := p.node(yaml.ScalarNode, tag, start)
	n.Value = word
	return n
}

func (p *jsonParser) object(depth int, start Pos) *yaml.Node {
	n := p.node(yaml.MappingNode, "!!map", start)
	return p.members(n, '}', func() bool {
		if p.off >= len(p.data) || p.data[p.off] != '"' {
			p.fail("unexpected %s, expected a string key", p.describe())
			return false
		}
		kpos := p.pos()
		k, ok := p.str()
		if !ok {
			return false
		}
		key := p.node(yaml.ScalarNode, "!!str", kpos)
		key.Value, key.Style = k, yaml.DoubleQuotedStyle
		p.skipSpace()
		if p.off >= len(p.data) || p.data[p.off] != ':' {
			p.fail("unexpected %s, expected ':' after key %q", p.describe(), k)
			return false
		}
		p.off++
		p.skipSpace()
		n.Content = append(n.Content, key, p.value(depth+1))
		return p.err == nil
	})
}

func (p *jsonParser) array(depth int, start Pos) *yaml.Node {
	n := p.node(yaml.SequenceNode, "!!seq", start)
	return p.members(n, ']', func() bool {
		n.Content = append(n.Content, p.value(depth+1))
		return p.err == nil
	})
}

// members parses the members of the object or array n opens at p.off, each
// by member (false after a problem), separated by ',' up to end.
func (p *jsonParser) members(n *yaml.Node, end byte, member func() bool) *yaml.Node {
	n.Style = yaml.FlowStyle
	p.off++ // { or [
	p.skipSpace()
	if p.off < len(p.data) && p.data[p.off] == end {
		p.off++
		return n
	}
	for {
		p.skipSpace()
		if !member() {
			return nil
		}
		p.skipSpace()
		if p.off >= len(p.data) {
			p.fail("unexpected end of file, expected ',' or '%c'", end)
			return nil
		}
		switch p.data[p.off] {
		case ',':
			p.off++
		case end:
			p.off++
			return n
		default:
			p.fail("unexpected %s, expected ',' or '%c'", p.describe(), end)
			return nil
		}
	}
}

func (p *jsonParser) number(start Pos) *yaml.Node {
	s := p.off
	tag, ok := p.scanNumber()
	if !ok {
		return nil
	}
	n := p.node(yaml.ScalarNode, tag, start)
	n.Value = string(p.data[s:p.off])
	return n
}

// scanNumber moves past the number at p.off and returns its tag (!!int or
// !!float); false after a problem.
func (p *jsonParser) scanNumber() (string, bool) {
	d := p.data
	i := p.off
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		i = digits(d, i)
	default:
		p.off = i
		p.fail("invalid number")
		return "", false
	}
	tag := "!!int"
	if i < len(d) && d[i] == '.' {
		tag = "!!float"
		i++
		if digits(d, i) == i {
			p.off = i
			p.fail("invalid number: expected a digit after '.'")
			return "", false
		}
		i = digits(d, i)
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		tag = "!!float"
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if digits(d, i) == i {
			p.off = i
			p.fail("invalid number: expected a digit in the exponent")
			return "", false
		}
		i = digits(d, i)
	}
	p.off = i
	return tag, true
}

// str parses a string at p.off (which is '"') and returns its value.
func (p *jsonParser) str() (string, bool) {
	p.off++ // opening quote
	d := p.data
	start := p.off
	// Fast path: no escapes.
	for i := p.off; i < len(d); i++ {
		c := d[i]
		if c == '"' {
			p.off = i + 1
			return string(d[start:i]), true
		}
		if c == '\\' || c < 0x20 {
			break
		}
	}
	var b strings.Builder
	for p.off < len(d) {
		c := d[p.off]
		switch {
		case c == '"':
			p.off++
			return b.String(), true
		case c < 0x20:
			p.fail("control character %s in string (escape it)", strconv.QuoteRune(rune(c)))
			return "", false
		case c == '\\':
			if !p.escape(&b) {
				return "", false
			}
		default:
			b.WriteByte(c)
			p.off++
		}
	}
	p.fail("unexpected end of file in string")
	return "", false
}

// escape decodes the escape sequence at p.off (which is '\\') into b and
// moves past it; false after a problem.
func (p *jsonParser) escape(b *strings.Builder) bool {
	d := p.data
	if p.off+1 >= len(d) {
		p.off++
		p.fail("unexpected end of file in string escape")
		return false
	}
	e := d[p.off+1]
	p.off += 2
	switch e {
	case '"', '\\', '/':
		b.WriteByte(e)
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'u':
		r, ok := p.unicodeEscape()
		if !ok {
			return false
		}
		b.WriteRune(r)
	default:
		p.off -= 2 // report at the backslash
		if r, _ := utf8.DecodeRune(d[p.off+1:]); unicode.IsPrint(r) {
			p.fail("invalid escape \\%c in string", r)
		} else {
			p.fail("invalid escape in string: a backslash before %U", r)
		}
		return false
	}
	return true
}

// unicodeEscape decodes a \u escape whose four hex digits are at p.off. A
// high surrogate takes the \u low surrogate that follows it; a surrogate
// without its pair is U+FFFD (and a \u that does not pair is read as an
// escape of its own).
func (p *jsonParser) unicodeEscape() (rune, bool) {
	d := p.data
	r, ok := p.hex4()
	if !ok {
		return 0, false
	}
	if !utf16.IsSurrogate(r) {
		return r, true
	}
	r2 := utf8.RuneError
	if p.off+1 < len(d) && d[p.off] == '\\' && d[p.off+1] == 'u' {
		save := p.off
		p.off += 2
		lo, ok := p.hex4()
		if !ok {
			return 0, false
		}
		r2 = utf16.DecodeRune(r, lo)
		if r2 == utf8.RuneError {
			p.off = save
		}
	}
	return r2, true
}

// hex4 reads the four hex digits after \u (p.off is at the first).
func (p *jsonParser) hex4() (rune, bool) {
	if p.off+4 <= len(p.data) {
		if v, err := strconv.ParseUint(string(p.data[p.off:p.off+4]), 16, 32); err == nil {
			p.off += 4
			return rune(v), true
		}
	}
	p.off -= 2 // report at the backslash
	p.fail("invalid \\u escape in string")
	return 0, false
}
