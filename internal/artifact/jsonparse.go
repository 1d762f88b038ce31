package artifact

import (
	"fmt"
	"runtime"
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
//
// A document costs a few allocations, not several per value: the file is
// one string whose substrings the keys and values are, the nodes come from
// slabs that nodeBound sizes, and every Content list is cut at its exact
// length from another slab.
type jsonParser struct {
	data     string
	off      int
	line     int
	lineOff  int // offset of the first byte of the current line
	colOff   int // offset up to which colChars counts (monotonic within a line)
	colChars int // characters between lineOff and colOff
	maxDepth int
	err      *Problem
	nodes    []yaml.Node  // the current slab's free nodes
	content  []*yaml.Node // the current Content slab (its free part is past len)
	left     int          // how many more nodes nodeBound allows
	made     int          // nodes made
	placed   int          // nodes in a Content list
	open     []*yaml.Node // the members of the open objects and arrays
	keep     []yaml.Node  // the node slab a pooled parser keeps
	keepList []*yaml.Node // the Content slab a pooled parser keeps
}

// jsonParsers holds parsers whose trees were dropped once converted, so
// that a file's nodes reuse the slabs of an earlier file's. Unlike a
// sync.Pool, which every garbage collection empties (a check collects every
// few hundred files), it keeps them: at most one per CPU, each with slabs of
// at most maxPooledNodes nodes (about 0.6 MB).
var jsonParsers = make(chan *jsonParser, runtime.GOMAXPROCS(0))

const maxPooledNodes = 1 << 12

// pooledJSONParser is a parser from jsonParsers (or a new one), its kept
// slabs free.
func pooledJSONParser(maxDepth int) *jsonParser {
	var p *jsonParser
	select {
	case p = <-jsonParsers:
	default:
		p = new(jsonParser)
	}
	p.maxDepth, p.nodes, p.content = maxDepth, p.keep, p.keepList[:0]
	return p
}

// release returns p to jsonParsers. It clears what its slabs hold, so that
// nothing of the file stays reachable from them, and keeps slabs as large
// as the file needed, within maxPooledNodes.
func (p *jsonParser) release() {
	clear(p.keep[:min(p.made, len(p.keep))])
	clear(p.keepList[:min(p.placed, cap(p.keepList))])
	clear(p.open)
	keep, keepList, open := p.keep, p.keepList, p.open[:0]
	if p.made > len(keep) && p.made <= maxPooledNodes {
		keep, keepList = make([]yaml.Node, p.made), make([]*yaml.Node, 0, p.made)
	}
	if cap(open) > maxPooledNodes {
		open = nil
	}
	*p = jsonParser{keep: keep, keepList: keepList, open: open}
	select {
	case jsonParsers <- p:
	default:
	}
}

// start makes p parse data, whose first line is line.
func (p *jsonParser) start(data string, line int) {
	p.data, p.off, p.line, p.lineOff, p.colOff, p.colChars, p.err = data, 0, line, 0, 0, 0, nil
	clear(p.open)
	p.open = p.open[:0]
}

// parse parses text, one JSON value or (FormatJSONL) one per line; nil
// after a problem it lists.
func (p *jsonParser) parse(text string, format Format, probs *problemList) *yaml.Node {
	p.left = nodeBound(text)
	if format == FormatJSONL {
		p.left += strings.Count(text, "\n")
		return p.parseJSONL(text, probs)
	}
	p.start(text, 1)
	n, prob := p.document()
	if prob != nil {
		probs.add(*prob)
	}
	return n
}

// nodeBound is an upper bound on the nodes of the JSON values in data: a
// value starts the text or follows '{', '[', ',' or ':' outside a string
// (which no raw newline is in).
func nodeBound(data string) int {
	n := 1
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{', '[', ',', ':':
			n++
		case '"':
			for i++; i < len(data) && data[i] != '"' && data[i] != '\n'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		}
	}
	return n
}

// parseJSON parses one JSON document. lineBase is added to every line number
// (for JSONL, where each line is its own document).
func parseJSON[T string | []byte](data T, maxDepth int, lineBase int) (*yaml.Node, *Problem) {
	s := string(data)
	p := &jsonParser{maxDepth: maxDepth, left: nodeBound(s)}
	p.start(s, 1+lineBase)
	return p.document()
}

// document parses p.data, which is one JSON value.
func (p *jsonParser) document() (*yaml.Node, *Problem) {
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
	for i := p.colOff; i < p.off; i++ {
		if p.data[i]&0xC0 != 0x80 {
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
	r, _ := utf8.DecodeRuneInString(p.data[p.off:])
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

// node is a new node from the current slab. A new slab holds as many nodes
// as were made before it (at least 256) but no more than nodeBound leaves,
// so a valid file's nodes fill their slabs exactly, and a hostile one (a
// file of commas) cannot have nodes allocated that it never reaches.
func (p *jsonParser) node(kind yaml.Kind, tag string, pos Pos) *yaml.Node {
	if len(p.nodes) == 0 {
		size := max(1, min(p.left, max(256, p.made)))
		p.nodes = make([]yaml.Node, size)
	}
	n := &p.nodes[0]
	p.nodes = p.nodes[1:]
	p.made++
	p.left--
	*n = yaml.Node{Kind: kind, Tag: tag, Line: pos.Line, Column: pos.Column}
	return n
}

// close sets n's Content to the members opened after mark: a list cut from
// the Content slab at its exact length and capacity (an append to it cannot
// run into the next list). A slab is sized like the node slabs.
func (p *jsonParser) close(n *yaml.Node, mark int) *yaml.Node {
	members := p.open[mark:]
	if len(members) > cap(p.content)-len(p.content) {
		p.content = make([]*yaml.Node, 0, max(len(members), min(p.left+p.made-p.placed, max(256, p.placed))))
	}
	p.placed += len(members)
	start := len(p.content)
	p.content = append(p.content, members...)
	n.Content = p.content[start:len(p.content):len(p.content)]
	clear(members)
	p.open = p.open[:mark]
	return n
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
	if !strings.HasPrefix(p.data[p.off:], word) {
		p.fail("unexpected %s, expected a value", p.describe())
		return nil
	}
	p.off += len(word)
	n := p.node(yaml.ScalarNode, tag, start)
	n.Value = word
	return n
}

func (p *jsonParser) object(depth int, start Pos) *yaml.Node {
	n, mark := p.node(yaml.MappingNode, "!!map", start), len(p.open)
	return p.members(n, mark, '}', func() bool {
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
		p.open = append(p.open, key)
		v := p.value(depth + 1)
		p.open = append(p.open, v)
		return p.err == nil
	})
}

func (p *jsonParser) array(depth int, start Pos) *yaml.Node {
	n, mark := p.node(yaml.SequenceNode, "!!seq", start), len(p.open)
	return p.members(n, mark, ']', func() bool {
		v := p.value(depth + 1)
		p.open = append(p.open, v)
		return p.err == nil
	})
}

// members parses the members of the object or array n opens at p.off, each
// by member (false after a problem) onto p.open after mark, separated by ','
// up to end.
func (p *jsonParser) members(n *yaml.Node, mark int, end byte, member func() bool) *yaml.Node {
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
			return p.close(n, mark)
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
	n.Value = p.data[s:p.off]
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
			return d[start:i], true
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
		if r, _ := utf8.DecodeRuneInString(d[p.off+1:]); unicode.IsPrint(r) {
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
		if v, err := strconv.ParseUint(p.data[p.off:p.off+4], 16, 32); err == nil {
			p.off += 4
			return rune(v), true
		}
	}
	p.off -= 2 // report at the backslash
	p.fail("invalid \\u escape in string")
	return 0, false
}
