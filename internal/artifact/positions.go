package artifact

import (
	"bytes"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Reported positions count lines the way git, GitHub and editors' "go to
// line" do: a line ends at '\n'. The YAML parser also breaks lines at a lone
// CR, NEL (U+0085), LS (U+2028) and PS (U+2029), and puts the empty value at
// the end of a file without a final newline on a line after the last one.
// lineMap translates the parser's positions into reported ones.
type lineMap struct {
	// starts[i] is the '\n'-based position of the first character of the
	// parser's line i+1; only when identity is false.
	starts []Pos
	// lines is the number of the parser's lines.
	lines int
	// end is the position just after the last character of the file.
	end Pos
	// identity is true when the parser's lines are the file's lines (no
	// break other than LF and CRLF), so only positions past the end move.
	identity bool
}

func newLineMap(data []byte) *lineMap {
	if !hasOtherBreaks(data) {
		// Only LF and CRLF: the parser's lines are the file's, and only
		// their number and the end of the file are needed.
		last := bytes.LastIndexByte(data, '\n')
		n := bytes.Count(data, []byte{'\n'}) + 1
		return &lineMap{lines: n, end: Pos{n, utf8.RuneCount(data[last+1:]) + 1}, identity: true}
	}
	return scanLineMap(data)
}

// scanLineMap is newLineMap for any file: every parser line's start.
func scanLineMap(data []byte) *lineMap {
	m := &lineMap{starts: []Pos{{1, 1}}, identity: true}
	line, col := 1, 1 // the '\n'-based position of data[i]
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case c == '\n':
			i++
			line, col = line+1, 1
			m.starts = append(m.starts, Pos{line, col})
		case c == '\r' && i+1 < len(data) && data[i+1] == '\n':
			i += 2
			line, col = line+1, 1
			m.starts = append(m.starts, Pos{line, col})
		case c == '\r',
			c == 0xC2 && i+1 < len(data) && data[i+1] == 0x85,
			c == 0xE2 && i+2 < len(data) && data[i+1] == 0x80 && (data[i+2] == 0xA8 || data[i+2] == 0xA9):
			// A break for the parser only: the next parser line starts
			// after it, on the same '\n' line.
			_, w := utf8.DecodeRune(data[i:])
			i += w
			col++
			m.identity = false
			m.starts = append(m.starts, Pos{line, col})
		case c < utf8.RuneSelf:
			i++
			col++
		default:
			_, w := utf8.DecodeRune(data[i:])
			i += w
			col++
		}
	}
	m.end = Pos{line, col}
	m.lines = len(m.starts)
	return m
}

// hasOtherBreaks reports whether data holds a line break other than LF and
// CRLF as the YAML parser sees them: a lone CR, NEL, LS or PS.
func hasOtherBreaks(data []byte) bool {
	return bytes.Count(data, []byte("\r")) != bytes.Count(data, []byte("\r\n")) || bytes.Contains(data, []byte("\xc2\x85")) || bytes.Contains(data, []byte("\xe2\x80\xa8")) || bytes.Contains(data, []byte("\xe2\x80\xa9"))
}

// pos translates a parser position (1-based line and column) to a reported
// one.
func (m *lineMap) pos(line, col int) Pos {
	if line < 1 {
		return Pos{1, 1}
	}
	col = max(col, 1)
	if line > m.lines {
		return m.end
	}
	if m.identity {
		return Pos{line, col}
	}
	s := m.starts[line-1]
	return Pos{s.Line, s.Column + col - 1}
}

// fix rewrites the position of every node in the tree. Aliases are not
// followed: every node is in exactly one Content list.
func (m *lineMap) fix(n *yaml.Node) {
	if n == nil {
		return
	}
	if n.Line > 0 {
		p := m.pos(n.Line, n.Column)
		n.Line, n.Column = p.Line, p.Column
	}
	for _, c := range n.Content {
		m.fix(c)
	}
}
