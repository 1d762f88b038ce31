package artifact

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"

	"go.yaml.in/yaml/v3"
)

// JSON and JSONL artifacts are decoded straight into their value: the same
// syntax as jsonParser (the same problems, at the same positions) and the
// same policy as the converter (value count, duplicate keys), but no
// yaml.Node per value. Positions are needed only for a document that draws
// findings, so the node tree behind Locate is built from the bytes the first
// time Locate is called (lazyRoot), by the tree decoder the YAML kinds use.
// TestJSONValueMatchesTree and FuzzJSONValueMatchesTree hold the two to the
// same result.

// valueState is the converter's bookkeeping while a JSON value is built: the
// node budget, the duplicate keys, and their problems in document order.
type valueState struct {
	limits   Limits
	nodes    int
	stop     bool
	failures int
	// problems are the conversion problems, at most maxProblems+1 of them
	// (no more are ever listed); omitted counts the rest.
	problems []Problem
	omitted  int
	// skip is > 0 inside the value of a duplicate key, which the converter
	// leaves out: nothing in it is counted, reported or built.
	skip int
	// keys and short hold the keys and short string values read last, by a
	// hash of their bytes: the same key on every line of a trace, or in
	// every item of a list, is then one string, not one each.
	keys, short internCache
}

// internCache is a small direct-mapped cache of strings.
type internCache [64]string

// maxInterned is the longest string value interned.
const maxInterned = 32

// snapshot is what a JSONL line that does not parse must not change.
type snapshot struct {
	nodes, failures, problems, omitted int
	stop                               bool
}

func (s *valueState) save() snapshot {
	return snapshot{s.nodes, s.failures, len(s.problems), s.omitted, s.stop}
}

func (s *valueState) restore(sn snapshot) {
	s.nodes, s.failures, s.problems, s.omitted, s.stop = sn.nodes, sn.failures, s.problems[:sn.problems], sn.omitted, sn.stop
}

// building reports whether values are being built (not after a limit
// breach, not inside a duplicate key's value).
func (s *valueState) building() bool { return !s.stop && s.skip == 0 }

// fail is converter.fail: the position and message are made only for a
// problem that can still be listed.
func (s *valueState) fail(pos func() Pos, rule, format string, args ...any) {
	s.failures++
	if len(s.problems) > maxProblems {
		s.omitted++
		return
	}
	s.problems = append(s.problems, Problem{Pos: pos(), Rule: rule, Message: fmt.Sprintf(format, args...)})
}

// mergeInto adds the conversion problems after those already in probs (the
// syntax problems, which the tree decoder finds first), as converter.fail
// would have.
func (s *valueState) mergeInto(probs *problemList) {
	for _, p := range s.problems {
		probs.add(p)
	}
	probs.omitted += s.omitted
}

// decodeJSONValue is Decode's JSON and JSONL path (data is past the
// encoding checks and the BOM).
func decodeJSONValue(doc *Document, format Format, data []byte, limits Limits) {
	doc.lazy = &lazyRoot{format: format, data: data, limits: limits}
	probs := &problemList{}
	defer func() { doc.Problems = append(doc.Problems, probs.result()...) }()
	s := &valueState{limits: limits}
	if format == FormatJSONL {
		v := jsonLinesValue(data, s, probs)
		s.mergeInto(probs)
		if !s.stop {
			doc.Value, doc.Decoded = v, true
		}
		return
	}
	v, p := jsonValue(data, s, 0)
	if p != nil {
		probs.add(*p)
		return
	}
	s.mergeInto(probs)
	if s.stop || s.failures > 0 {
		return
	}
	doc.Value, doc.Decoded = v, true
}

// jsonValue is parseJSON building the value.
func jsonValue(data []byte, s *valueState, lineBase int) (any, *Problem) {
	p := &jsonParser{data: data, line: 1 + lineBase, maxDepth: s.limits.MaxDepth}
	p.skipSpace()
	v := p.anyValue(0, s)
	if p.err != nil {
		return nil, p.err
	}
	p.skipSpace()
	if p.off < len(p.data) {
		p.fail("unexpected %s after the end of the JSON value", p.describe())
		return nil, p.err
	}
	return v, nil
}

// jsonLinesValue is parseJSONL followed by converter.convertLines: a line
// that does not parse is a problem and left out; a line with a conversion
// problem is left out of the value; the node budget spans the lines.
func jsonLinesValue(data []byte, s *valueState, probs *problemList) []any {
	out := []any{}
	lineNo := 0
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		lineNo++
		if len(bytes.TrimSpace(line)) == 0 {
			probs.add(Problem{Pos: Pos{lineNo, 1}, Rule: RuleSyntax, Message: "blank line: every line of a JSONL file must be one JSON object"})
			continue
		}
		before := s.save()
		v, p := jsonValue(line, s, lineNo-1)
		if p != nil {
			s.restore(before) // a line that does not parse is not converted
			probs.add(*p)
			continue
		}
		if s.building() && s.failures == before.failures {
			out = append(out, v)
		}
	}
	return out
}

// anyValue is value building the JSON value: what converter.convert makes
// of the node value would build.
func (p *jsonParser) anyValue(depth int, s *valueState) any {
	if p.off >= len(p.data) {
		p.fail("unexpected end of file, expected a value")
		return nil
	}
	build := s.building()
	if build {
		s.nodes++
		if s.nodes > s.limits.MaxNodes {
			s.fail(p.pos, RuleNodeCount, "file has more than %d values", s.limits.MaxNodes)
			s.stop, build = true, false
		}
	}
	switch c := p.data[p.off]; {
	case c == '{' || c == '[':
		if depth >= p.maxDepth {
			p.err = &Problem{Pos: p.pos(), Rule: RuleDepth, Message: fmt.Sprintf("nesting is deeper than %d levels", p.maxDepth)}
			return nil
		}
		if c == '{' {
			return p.objectValue(depth, s, build)
		}
		return p.arrayValue(depth, s, build)
	case c == '"':
		str, ok := p.internedStr(&s.short, maxInterned)
		if !ok || !build {
			return nil
		}
		return str
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.off
		tag, ok := p.scanNumber()
		if !ok || !build {
			return nil
		}
		return resolveScalar(tag, 0, string(p.data[start:p.off]))
	case c == 't':
		return p.literalValue("true", true, build)
	case c == 'f':
		return p.literalValue("false", false, build)
	case c == 'n':
		return p.literalValue("null", nil, build)
	}
	p.fail("unexpected %s, expected a value", p.describe())
	return nil
}

func (p *jsonParser) literalValue(word string, v any, build bool) any {
	if !hasWordAt(p.data, p.off, word) {
		p.fail("unexpected %s, expected a value", p.describe())
		return nil
	}
	p.off += len(word)
	if !build {
		return nil
	}
	return v
}

func hasWordAt(d []byte, off int, word string) bool {
	return len(d)-off >= len(word) && string(d[off:off+len(word)]) == word
}

// objectValue is object building a map; build is false after a limit
// breach and inside a duplicate key's value.
func (p *jsonParser) objectValue(depth int, s *valueState, build bool) any {
	var m map[string]any
	if build {
		m = map[string]any{}
	}
	p.off++ // {
	p.skipSpace()
	if p.off < len(p.data) && p.data[p.off] == '}' {
		p.off++
		return nilIfNoMap(m)
	}
	for {
		p.skipSpace()
		if p.off >= len(p.data) || p.data[p.off] != '"' {
			p.fail("unexpected %s, expected a string key", p.describe())
			return nil
		}
		key := keyAt{p.line, p.lineOff, p.off}
		k, ok := p.internedStr(&s.keys, len(p.data))
		if !ok {
			return nil
		}
		p.skipSpace()
		if p.off >= len(p.data) || p.data[p.off] != ':' {
			p.fail("unexpected %s, expected ':' after key %q", p.describe(), k)
			return nil
		}
		p.off++
		p.skipSpace()
		if !p.memberValue(depth, s, m, k, key) {
			return nil
		}
		p.skipSpace()
		if p.off >= len(p.data) {
			p.fail("unexpected end of file, expected ',' or '}'")
			return nil
		}
		switch p.data[p.off] {
		case ',':
			p.off++
		case '}':
			p.off++
			return nilIfNoMap(m)
		default:
			p.fail("unexpected %s, expected ',' or '}'", p.describe())
			return nil
		}
	}
}

// internedStr is str for a string at p.off of at most max bytes and no
// escape, taken from the cache when it holds the same bytes; any other
// string is str's.
func (p *jsonParser) internedStr(cache *internCache, max int) (string, bool) {
	d := p.data
	start := p.off + 1
	h := uint32(2166136261) // FNV-1a
	for i := start; i < len(d) && i-start <= max; i++ {
		c := d[i]
		if c == '"' {
			slot := &cache[h%uint32(len(cache))]
			p.off = i + 1
			if *slot != string(d[start:i]) {
				*slot = string(d[start:i])
			}
			return *slot, true
		}
		if c == '\\' || c < 0x20 {
			break
		}
		h = (h ^ uint32(c)) * 16777619
	}
	return p.str()
}

// keyAt is where a key starts: its line, the offset of that line and of the
// key's opening quote (a key holds no line break).
type keyAt struct{ line, lineOff, off int }

// memberValue parses the value of key k into m; false after a syntax
// problem. A key m already holds is a duplicate: reported at the key, its
// value left out.
func (p *jsonParser) memberValue(depth int, s *valueState, m map[string]any, k string, key keyAt) bool {
	if m != nil && s.building() {
		if _, dup := m[k]; dup {
			s.fail(func() Pos { return p.posOf(key) }, RuleDuplicateKey, "duplicate key %q: the later value would silently replace the earlier one", k)
			s.skip++
			p.anyValue(depth+1, s)
			s.skip--
			return p.err == nil
		}
	}
	v := p.anyValue(depth+1, s)
	if p.err != nil {
		return false
	}
	if m != nil && !s.stop {
		m[k] = v
	}
	return true
}

// nilIfNoMap returns m as a value, nil when no map was built (a nil map in
// an interface would not be nil).
func nilIfNoMap(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

// arrayValue is array building a slice.
func (p *jsonParser) arrayValue(depth int, s *valueState, build bool) any {
	var out []any
	if build {
		out = []any{}
	}
	p.off++ // [
	p.skipSpace()
	if p.off < len(p.data) && p.data[p.off] == ']' {
		p.off++
		return nilIfNoSlice(out, build)
	}
	for {
		p.skipSpace()
		v := p.anyValue(depth+1, s)
		if p.err != nil {
			return nil
		}
		if build && !s.stop {
			out = append(out, v)
		}
		p.skipSpace()
		if p.off >= len(p.data) {
			p.fail("unexpected end of file, expected ',' or ']'")
			return nil
		}
		switch p.data[p.off] {
		case ',':
			p.off++
		case ']':
			p.off++
			return nilIfNoSlice(out, build)
		default:
			p.fail("unexpected %s, expected ',' or ']'", p.describe())
			return nil
		}
	}
}

func nilIfNoSlice(s []any, build bool) any {
	if !build {
		return nil
	}
	return s
}

// posOf is the position of a key, as pos gave it when p.off was there.
func (p *jsonParser) posOf(k keyAt) Pos {
	chars := 0
	for _, b := range p.data[k.lineOff:k.off] {
		if b&0xC0 != 0x80 {
			chars++
		}
	}
	return Pos{Line: k.line, Column: chars + 1}
}

// lazyRoot builds a JSON or JSONL document's node tree, for Locate, the
// first time it is needed, by the tree decoder: the same tree Decode used to
// keep.
type lazyRoot struct {
	once   sync.Once
	format Format
	data   []byte
	limits Limits
	root   *yaml.Node
	// scans counts the Locates answered by scanning the bytes (scan), up
	// to maxScans; after that the tree is built.
	scans atomic.Int32
}

// maxScans is how many Locates on one document scan its bytes before the
// node tree is built for the rest: a scan costs a walk of the file up to
// the place, the tree one parse and then a walk of the pointer.
const maxScans = 4

// scan is Locate for a decoded JSON document (not JSONL, whose items are
// the lines that decoded) without a node tree: a walk of the bytes that
// builds nothing, to the place the pointer names. A decoded document has no
// syntax problem, no duplicate key and nothing past the limits, so the
// first key that matches is the only one, as in the tree. ok is false when
// the tree is needed (another format, a document that did not decode, a
// tree built already, the scans used up).
func (l *lazyRoot) scan(decoded bool, tokens []string) (Pos, bool) {
	if !decoded || l.format != FormatJSON {
		return Pos{}, false
	}
	if l.scans.Add(1) > maxScans {
		return Pos{}, false
	}
	p := &jsonParser{data: l.data, line: 1, maxDepth: l.limits.MaxDepth}
	s := &valueState{limits: l.limits, skip: 1}
	p.skipSpace()
	best := p.pos()
	for depth, tok := range tokens {
		if p.off >= len(p.data) {
			return best, p.err == nil
		}
		var found bool
		switch p.data[p.off] {
		case '{':
			found = p.scanToKey(depth, s, tok, &best)
		case '[':
			found = p.scanToItem(depth, s, tok, &best)
		}
		if p.err != nil {
			return Pos{}, false
		}
		if !found {
			return best, true
		}
	}
	return best, true
}

// scanToKey moves from an object's '{' to the value of its key tok and
// sets best to the key's position; false when there is no such key.
func (p *jsonParser) scanToKey(depth int, s *valueState, tok string, best *Pos) bool {
	p.off++ // {
	for {
		p.skipSpace()
		if p.off >= len(p.data) || p.data[p.off] != '"' {
			return false // '}' of an empty object (a decoded file has no other)
		}
		key := keyAt{p.line, p.lineOff, p.off}
		k, ok := p.str()
		if !ok {
			return false
		}
		p.skipSpace()
		p.off++ // :
		p.skipSpace()
		if k == tok {
			*best = p.posOf(key)
			return true
		}
		p.anyValue(depth+1, s)
		p.skipSpace()
		if p.err != nil || p.off >= len(p.data) || p.data[p.off] != ',' {
			return false
		}
		p.off++
	}
}

// scanToItem moves from an array's '[' to its item tok (an index) and sets
// best to the item's position; false when there is no such item.
func (p *jsonParser) scanToItem(depth int, s *valueState, tok string, best *Pos) bool {
	i, ok := arrayIndex(tok)
	if !ok {
		return false
	}
	p.off++ // [
	p.skipSpace()
	if p.off < len(p.data) && p.data[p.off] == ']' {
		return false
	}
	for n := 0; ; n++ {
		p.skipSpace()
		if n == i {
			*best = p.pos()
			return true
		}
		p.anyValue(depth+1, s)
		p.skipSpace()
		if p.err != nil || p.off >= len(p.data) || p.data[p.off] != ',' {
			return false
		}
		p.off++
	}
}

func (l *lazyRoot) get() *yaml.Node {
	l.once.Do(func() {
		defer func() {
			if recover() != nil {
				l.root = nil
			}
		}()
		scratch := &Document{}
		decodeTree(scratch, l.format, l.data, l.limits)
		l.root = scratch.root
	})
	return l.root
}
