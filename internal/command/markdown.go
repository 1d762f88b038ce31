package command

import (
	"slices"
	"strings"
)

// This file is the Markdown half of the parser: a line-at-a-time scanner of
// CommonMark block structure. It does not build a tree or keep any text; for
// each line it says only what the line is (paragraph text, code, raw HTML,
// or something else), which is all the command parser needs to decide
// whether a line that starts with "/" is a command a person can see.
//
// It follows the block-parsing algorithm of the CommonMark spec and its
// reference implementation (commonmark.js, blocks.js) line by line: match
// the open containers (block quotes, list items) and the open leaf, try the
// block starts in the spec's order (block quote, ATX heading, code fence,
// HTML block, setext underline, thematic break, list item, indented code),
// then treat the rest as paragraph text, a lazy continuation line, or
// nothing. Tabs count to the next multiple of 4 columns, including tabs
// that a container consumes only in part. HTML block start conditions are
// GitHub's (cmark-gfm): type 4 needs an upper-case letter after "<!".
//
// Lists need no node of their own here (they only group items), link
// reference definitions are not resolved (so "[a]: /x" followed by "==="
// ends the paragraph here as a setext heading would), and GFM tables are
// read as the paragraphs they start as: none of this changes which lines
// are code, raw HTML or paragraph text. The scanner is linear in the input:
// each line costs its length plus the number of open blocks, which the
// caller bounds (MaxDepth).

type blockKind uint8

const (
	blockDocument blockKind = iota
	blockQuote
	blockItem
	blockParagraph
	blockFence
	blockIndented
	blockHTML
)

// mdBlock is an open block. Headings and thematic breaks are never open:
// they take exactly one line.
type mdBlock struct {
	kind     blockKind
	hasChild bool // list item: a block was ever added to it
	width    int  // list item: columns of content indentation (marker offset + padding)
	fence    byte // fenced code: '`' or '~'
	fenceLen int  // fenced code: length of the opening run
	fenceOff int  // fenced code: indentation of the opening fence
	htmlType int  // HTML block: CommonMark start condition 1–7
	para     int  // paragraph: serial number
}

// lineClass is what a line is, for the command parser.
type lineClass uint8

const (
	lineOther     lineClass = iota // blank, heading, thematic break, setext underline
	lineParagraph                  // text of a paragraph (its first line, a continuation or a lazy continuation)
	lineCode                       // fenced code (with its fences) or indented code
	lineHTML                       // raw HTML block
)

type lineInfo struct {
	class lineClass
	para  int // lineParagraph: serial of the paragraph
	text  int // lineParagraph, lineHTML: byte offset where the block's text starts on the line
}

type mdScanner struct {
	stack []mdBlock // stack[0] is the document; the last entry is the tip

	ln                 string
	offset, column     int
	nextNonspace       int
	nextNonspaceColumn int
	indent             int
	indented, blank    bool
	allClosed          bool
	matched            int // index in stack of the last container this line continues
	paraSeq            int

	maxDepth int  // open blocks allowed below the document
	tooDeep  bool // a line nested deeper than maxDepth: the scanner stopped

	lastBlank bool     // the previous line was blank
	lastInfo  lineInfo // and this is what it was
	noSkip    bool     // tests: read blank lines in full
}

func newScanner(maxDepth int) *mdScanner {
	s := &mdScanner{stack: make([]mdBlock, 1, 16), maxDepth: maxDepth}
	s.stack[0] = mdBlock{kind: blockDocument}
	return s
}

// depth is the number of open blocks below the document.
func (s *mdScanner) depth() int { return len(s.stack) - 1 }

const codeIndent = 4

func (s *mdScanner) findNextNonspace() {
	i, cols := s.offset, s.column
	for i < len(s.ln) {
		c := s.ln[i]
		if c == ' ' {
			i++
			cols++
		} else if c == '\t' {
			i++
			cols += 4 - cols%4
		} else {
			break
		}
	}
	s.blank = i == len(s.ln)
	s.nextNonspace, s.nextNonspaceColumn = i, cols
	s.indent = cols - s.column
	s.indented = s.indent >= codeIndent
}

func (s *mdScanner) advanceNextNonspace() {
	s.offset, s.column = s.nextNonspace, s.nextNonspaceColumn
}

// advanceOffset moves count bytes, or count columns when columns is set (a
// tab may then be consumed in part).
func (s *mdScanner) advanceOffset(count int, columns bool) {
	for count > 0 && s.offset < len(s.ln) {
		if s.ln[s.offset] == '\t' {
			toTab := 4 - s.column%4
			if columns {
				if toTab > count { // part of the tab
					s.column += count
					count = 0
				} else {
					s.column += toTab
					s.offset++
					count -= toTab
				}
			} else {
				s.column += toTab
				s.offset++
				count--
			}
		} else {
			s.offset++
			s.column++
			count--
		}
	}
}

func (s *mdScanner) peek(i int) byte {
	if i < len(s.ln) {
		return s.ln[i]
	}
	return 0
}

func (s *mdScanner) closeUnmatched() {
	if !s.allClosed {
		s.stack = s.stack[:s.matched+1]
		s.allClosed = true
	}
}

// closeLeaf closes the tip while it is a leaf, as adding a block does.
func (s *mdScanner) closeLeaf() {
	for {
		switch s.stack[len(s.stack)-1].kind {
		case blockParagraph, blockFence, blockIndented, blockHTML:
			s.stack = s.stack[:len(s.stack)-1]
			continue
		}
		return
	}
}

func (s *mdScanner) addChild(b mdBlock) {
	s.closeLeaf()
	s.stack[len(s.stack)-1].hasChild = true
	s.stack = append(s.stack, b)
}

// addDone records a one-line leaf (heading, thematic break).
func (s *mdScanner) addDone() {
	s.closeLeaf()
	s.stack[len(s.stack)-1].hasChild = true
	s.offset = len(s.ln)
	s.column = 0
}

type contResult uint8

const (
	contMatched contResult = iota
	contFailed
	contLineDone // a closing code fence: the line is consumed
)

func (s *mdScanner) continues(b *mdBlock) contResult {
	switch b.kind {
	case blockQuote:
		if !s.indented && s.peek(s.nextNonspace) == '>' {
			s.advanceNextNonspace()
			s.advanceOffset(1, false)
			if isSpaceOrTab(s.peek(s.offset)) {
				s.advanceOffset(1, true)
			}
			return contMatched
		}
		return contFailed
	case blockItem:
		if s.blank {
			if !b.hasChild {
				return contFailed // a list item starts with at most one blank line
			}
			s.advanceNextNonspace()
		} else if s.indent >= b.width {
			s.advanceOffset(b.width, true)
		} else {
			return contFailed
		}
		return contMatched
	case blockFence:
		if s.indent <= 3 && s.peek(s.nextNonspace) == b.fence {
			n := runOf(s.ln[s.nextNonspace:], b.fence)
			if n >= b.fenceLen && onlySpaceTab(s.ln[s.nextNonspace+n:]) {
				return contLineDone
			}
		}
		for i := b.fenceOff; i > 0 && isSpaceOrTab(s.peek(s.offset)); i-- {
			s.advanceOffset(1, true)
		}
		return contMatched
	case blockIndented:
		if s.indent >= codeIndent {
			s.advanceOffset(codeIndent, true)
		} else if s.blank {
			s.advanceNextNonspace()
		} else {
			return contFailed
		}
		return contMatched
	case blockHTML:
		if s.blank && (b.htmlType == 6 || b.htmlType == 7) {
			return contFailed
		}
		return contMatched
	case blockParagraph:
		if s.blank {
			return contFailed
		}
		return contMatched
	}
	return contFailed
}

type startResult uint8

const (
	startNone      startResult = iota
	startContainer             // a block quote or list item opened; look for more starts
	startLeaf                  // a leaf opened (or a one-line leaf was read): the line is done
)

// tryStarts tries the block starts, in the spec's order, on the rest of the
// line. container is the innermost block the line is in so far.
func (s *mdScanner) tryStarts(container int) startResult {
	ln, nn := s.ln, s.nextNonspace
	c := s.peek(nn)
	ck := s.stack[container].kind
	tip := s.stack[len(s.stack)-1].kind
	if !s.indented {
		switch {
		case c == '>': // block quote
			s.advanceNextNonspace()
			s.advanceOffset(1, false)
			if isSpaceOrTab(s.peek(s.offset)) {
				s.advanceOffset(1, true)
			}
			s.closeUnmatched()
			s.addChild(mdBlock{kind: blockQuote})
			return startContainer
		case c == '#' && atxHeading(ln[nn:]):
			s.closeUnmatched()
			s.addDone()
			return startLeaf
		case c == '`' || c == '~':
			if n := runOf(ln[nn:], c); n >= 3 && (c == '~' || !strings.Contains(ln[nn+n:], "`")) {
				s.closeUnmatched()
				s.addChild(mdBlock{kind: blockFence, fence: c, fenceLen: n, fenceOff: s.indent})
				s.advanceNextNonspace()
				s.advanceOffset(n, false)
				return startLeaf
			}
		case c == '<':
			t := htmlBlockStart(ln[nn:])
			if t == 7 && (ck == blockParagraph || (!s.allClosed && !s.blank && tip == blockParagraph)) {
				t = 0 // type 7 cannot interrupt a paragraph
			}
			if t != 0 {
				s.closeUnmatched()
				s.addChild(mdBlock{kind: blockHTML, htmlType: t})
				return startLeaf
			}
		}
		if ck == blockParagraph && (c == '=' || c == '-') && setextUnderline(ln[nn:]) {
			s.closeUnmatched()
			s.stack = s.stack[:len(s.stack)-1] // the paragraph becomes a heading
			s.offset = len(ln)
			return startLeaf
		}
		if (c == '*' || c == '-' || c == '_') && thematicBreak(ln[nn:]) {
			s.closeUnmatched()
			s.addDone()
			return startLeaf
		}
		if width, ok := s.listMarker(ck); ok {
			s.closeUnmatched()
			s.addChild(mdBlock{kind: blockItem, width: width})
			return startContainer
		}
		return startNone
	}
	if tip != blockParagraph && !s.blank { // indented code
		s.advanceOffset(codeIndent, true)
		s.closeUnmatched()
		s.addChild(mdBlock{kind: blockIndented})
		return startLeaf
	}
	return startNone
}

// listMarker reads a list marker at the next non-space character and, when
// it starts a list item, advances past it and the spaces after it and
// returns the item's content width (commonmark.js parseListMarker).
func (s *mdScanner) listMarker(ck blockKind) (int, bool) {
	if s.indent >= codeIndent {
		return 0, false
	}
	rest := s.ln[s.nextNonspace:]
	if rest == "" {
		return 0, false
	}
	var mlen int
	switch rest[0] {
	case '*', '+', '-':
		mlen = 1
	default:
		d := 0
		for d < len(rest) && d < 9 && isDigit(rest[d]) {
			d++
		}
		if d == 0 || d >= len(rest) || (rest[d] != '.' && rest[d] != ')') {
			return 0, false
		}
		if ck == blockParagraph && strings.TrimLeft(rest[:d], "0") != "1" {
			return 0, false // an ordered list interrupts a paragraph only when it starts at 1
		}
		mlen = d + 1
	}
	if mlen < len(rest) && !isSpaceOrTab(rest[mlen]) {
		return 0, false
	}
	if ck == blockParagraph && strings.TrimLeft(rest[mlen:], " \t\f\v") == "" {
		return 0, false // an empty list item cannot interrupt a paragraph
	}
	markerOffset := s.indent
	s.advanceNextNonspace()
	s.advanceOffset(mlen, true)
	startCol, startOff := s.column, s.offset
	for {
		s.advanceOffset(1, true)
		if !(s.column-startCol < 5 && isSpaceOrTab(s.peek(s.offset))) {
			break
		}
	}
	spaces := s.column - startCol
	padding := mlen + spaces
	if spaces >= 5 || spaces < 1 || s.offset >= len(s.ln) {
		padding = mlen + 1
		s.column, s.offset = startCol, startOff
		if isSpaceOrTab(s.peek(s.offset)) {
			s.advanceOffset(1, true)
		}
	}
	return markerOffset + padding, true
}

// line reads the next line (without its line ending) and says what it is.
func (s *mdScanner) line(ln string) lineInfo {
	blank := onlySpaceTab(ln)
	if blank && s.lastBlank && !s.noSkip {
		// A blank line after a blank line changes nothing: every block
		// still open has continued through a blank line already (whether
		// a block continues through one depends only on its kind), and a
		// blank line opens no block. Skipping the work keeps the time per
		// line independent of the nesting depth.
		info := s.lastInfo
		info.text = len(ln)
		return info
	}
	info := s.read(ln)
	s.lastBlank, s.lastInfo = blank && !s.tooDeep, info
	return info
}

func (s *mdScanner) read(ln string) lineInfo {
	s.ln = ln
	s.offset, s.column = 0, 0
	s.blank = false
	oldtip := len(s.stack) - 1
	s.matched = 0
	for i := 1; i < len(s.stack); i++ {
		s.findNextNonspace()
		r := s.continues(&s.stack[i])
		if r == contLineDone {
			s.stack = s.stack[:i] // the fence closes; it is the tip
			return lineInfo{class: lineCode}
		}
		if r == contFailed {
			break
		}
		s.matched = i
	}
	s.allClosed = s.matched == oldtip
	container := s.matched
	k := s.stack[container].kind
	matchedLeaf := k == blockFence || k == blockIndented || k == blockHTML
	for !matchedLeaf {
		s.findNextNonspace()
		if !s.indented && !maybeSpecial(s.peek(s.nextNonspace)) {
			s.advanceNextNonspace()
			break
		}
		r := s.tryStarts(container)
		if r == startNone {
			s.advanceNextNonspace()
			break
		}
		container = len(s.stack) - 1
		matchedLeaf = r == startLeaf
		if s.depth() > s.maxDepth {
			s.tooDeep = true
			return lineInfo{class: lineOther}
		}
	}
	if tip := s.stack[len(s.stack)-1]; !s.allClosed && !s.blank && tip.kind == blockParagraph {
		return lineInfo{class: lineParagraph, para: tip.para, text: s.offset} // lazy continuation
	}
	s.closeUnmatched()
	b := &s.stack[len(s.stack)-1]
	switch b.kind {
	case blockParagraph:
		return lineInfo{class: lineParagraph, para: b.para, text: s.offset}
	case blockFence, blockIndented:
		return lineInfo{class: lineCode}
	case blockHTML:
		info := lineInfo{class: lineHTML, text: s.offset}
		if b.htmlType <= 5 && htmlBlockEnds(b.htmlType, ln[s.offset:]) {
			s.stack = s.stack[:len(s.stack)-1]
		}
		return info
	}
	if s.offset < len(ln) && !s.blank {
		s.paraSeq++
		s.addChild(mdBlock{kind: blockParagraph, para: s.paraSeq})
		s.advanceNextNonspace()
		return lineInfo{class: lineParagraph, para: s.paraSeq, text: s.offset}
	}
	return lineInfo{class: lineOther}
}

func isSpaceOrTab(c byte) bool { return c == ' ' || c == '\t' }
func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isASCIILetter(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// maybeSpecial reports whether a block other than a paragraph may start
// with c (commonmark.js reMaybeSpecial).
func maybeSpecial(c byte) bool {
	switch c {
	case '#', '`', '~', '*', '+', '_', '=', '<', '>', '-':
		return true
	}
	return isDigit(c)
}

func runOf(s string, c byte) int { return len(s) - len(strings.TrimLeft(s, string(c))) }

func onlySpaceTab(s string) bool { return strings.Trim(s, " \t") == "" }

// atxHeading: 1–6 '#' followed by a space, a tab or the end of the line.
func atxHeading(s string) bool {
	n := runOf(s, '#')
	return n >= 1 && n <= 6 && (n == len(s) || isSpaceOrTab(s[n]))
}

// setextUnderline: a run of '=' or of '-', then only spaces and tabs.
func setextUnderline(s string) bool {
	n := runOf(s, s[0])
	return onlySpaceTab(s[n:])
}

// thematicBreak: three or more of one of '*', '-', '_', with only spaces
// and tabs between and after them.
func thematicBreak(s string) bool {
	c, n := s[0], 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case c:
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n >= 3
}

// htmlBlockStart returns the CommonMark HTML block start condition (1–7)
// that s, which starts with '<', meets, or 0.
func htmlBlockStart(s string) int {
	if len(s) < 2 {
		return 0
	}
	switch {
	case s[1] == '!':
		switch {
		case strings.HasPrefix(s, "<!--"):
			return 2
		case strings.HasPrefix(s, "<![CDATA["):
			return 5
		case len(s) > 2 && s[2] >= 'A' && s[2] <= 'Z':
			return 4
		}
		return 0
	case s[1] == '?':
		return 3
	}
	name, rest, closing := tagName(s[1:])
	if name == "" {
		return 0
	}
	if !closing && rawTag(name) && (rest == "" || rest[0] == '>' || isCMSpace(rest[0])) {
		return 1
	}
	if blockTagName(name) && (rest == "" || rest[0] == '>' || isCMSpace(rest[0]) || strings.HasPrefix(rest, "/>")) {
		return 6
	}
	var end int
	if closing {
		end = closeTagEnd(rest)
	} else {
		end = openTagEnd(rest)
	}
	if end >= 0 && strings.TrimLeft(rest[end:], " \t\f") == "" {
		return 7
	}
	return 0
}

// tagName reads [/]tagname at the start of s (after the '<').
func tagName(s string) (name, rest string, closing bool) {
	if s != "" && s[0] == '/' {
		closing = true
		s = s[1:]
	}
	if s == "" || !isASCIILetter(s[0]) {
		return "", "", false
	}
	n := 1
	for n < len(s) && (isASCIILetter(s[n]) || isDigit(s[n]) || s[n] == '-') {
		n++
	}
	return s[:n], s[n:], closing
}

// isCMSpace is cmark's spacechar within a line: space, tab, VT, FF.
func isCMSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\v' || c == '\f' }

// openTagEnd matches attribute* spacechar* '/'? '>' at the start of s and
// returns the index after the '>', or -1.
func openTagEnd(s string) int {
	i := 0
	for {
		j := i
		for j < len(s) && isCMSpace(s[j]) {
			j++
		}
		if j < len(s) && s[j] == '>' {
			return j + 1
		}
		if j+1 < len(s) && s[j] == '/' && s[j+1] == '>' {
			return j + 2
		}
		if j == i || j >= len(s) || !(isASCIILetter(s[j]) || s[j] == '_' || s[j] == ':') {
			return -1 // an attribute needs space before it and a name
		}
		j++
		for j < len(s) && (isASCIILetter(s[j]) || isDigit(s[j]) || strings.IndexByte(":._-", s[j]) >= 0) {
			j++
		}
		// optional value: spacechar* '=' spacechar* value
		k := j
		for k < len(s) && isCMSpace(s[k]) {
			k++
		}
		if k < len(s) && s[k] == '=' {
			k++
			for k < len(s) && isCMSpace(s[k]) {
				k++
			}
			if k >= len(s) {
				return -1
			}
			switch q := s[k]; q {
			case '"', '\'':
				e := strings.IndexByte(s[k+1:], q)
				if e < 0 || strings.IndexByte(s[k+1:k+1+e], 0) >= 0 {
					return -1
				}
				j = k + 1 + e + 1
			default:
				e := k
				for e < len(s) && !isCMSpace(s[e]) && strings.IndexByte("\"'=<>`\x00\r\n", s[e]) < 0 {
					e++
				}
				if e == k {
					return -1
				}
				j = e
			}
		}
		i = j
	}
}

// closeTagEnd matches spacechar* '>' at the start of s.
func closeTagEnd(s string) int {
	if rest := strings.TrimLeft(s, " \t\v\f"); strings.HasPrefix(rest, ">") {
		return len(s) - len(rest) + 1
	}
	return -1
}

// rawTag reports whether the tag name (ASCII) is one of HTML block start
// condition 1's.
func rawTag(name string) bool {
	return slices.Contains([]string{"script", "pre", "style", "textarea"}, strings.ToLower(name))
}

// blockTagName reports whether name is one of the tag names of HTML block
// start condition 6 (CommonMark 0.31).
func blockTagName(name string) bool {
	switch strings.ToLower(name) {
	case "address", "article", "aside", "base", "basefont", "blockquote", "body",
		"caption", "center", "col", "colgroup", "dd", "details", "dialog", "dir",
		"div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
		"frame", "frameset", "h1", "h2", "h3", "h4", "h5", "h6", "head", "header",
		"hr", "html", "iframe", "legend", "li", "link", "main", "menu", "menuitem",
		"nav", "noframes", "ol", "optgroup", "option", "p", "param", "search",
		"section", "summary", "table", "tbody", "td", "tfoot", "th", "thead",
		"title", "tr", "track", "ul":
		return true
	}
	return false
}

// htmlBlockEnds reports whether a line of an HTML block of start condition
// 1–5 meets its end condition.
func htmlBlockEnds(t int, s string) bool {
	switch t {
	case 1:
		for i := strings.IndexByte(s, '<'); i >= 0; {
			rest := s[i:]
			if len(rest) > 2 && rest[1] == '/' {
				name, after, _ := tagName(rest[2:])
				if after != "" && after[0] == '>' && rawTag(name) {
					return true
				}
			}
			j := strings.IndexByte(rest[1:], '<')
			if j < 0 {
				break
			}
			i += 1 + j
		}
		return false
	case 2:
		return strings.Contains(s, "-->")
	case 3:
		return strings.Contains(s, "?>")
	case 4:
		return strings.Contains(s, ">")
	case 5:
		return strings.Contains(s, "]]>")
	}
	return false
}
