package artifact

import (
	"bytes"
	"strings"

	"go.yaml.in/yaml/v3"
)

// parseLearnings turns a Markdown file into its heading structure so that a
// JSON Schema can check it:
//
//	{"title": "<first line>", "entries": [{"heading": "### …", "lines": ["…", …]}, …]}
//
// Every ATX heading after the first line starts an entry; the non-blank lines
// up to the next heading are its lines. Each value keeps its line number.
// A '#' line inside a fenced code block is not a heading, and neither is
// "#tag" (CommonMark needs a space after the '#'s).
func parseLearnings(data []byte) *yaml.Node {
	root := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: 1, Column: 1}
	entries := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: 1, Column: 1}
	var cur, curLines *yaml.Node
	var fence string // the open fence's marker ("```", "~~~~", …), or ""
	lineNo := 0
	for line := range bytes.Lines(data) {
		lineNo++
		text := strings.TrimRight(strings.TrimSuffix(string(line), "\n"), "\r")
		if lineNo == 1 {
			root.Content = append(root.Content, str("title", 1, 1), str(text, 1, 1))
			continue
		}
		trimmed := strings.TrimSpace(text)
		if m := fenceMarker(text); m != "" {
			switch {
			case fence == "":
				fence = m
			case m[0] == fence[0] && len(m) >= len(fence) && strings.TrimLeft(trimmed, m[:1]) == "":
				fence = ""
			}
		} else if fence == "" && atxHeading(text) {
			cur = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: lineNo, Column: 1}
			curLines = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: lineNo, Column: 1}
			cur.Content = append(cur.Content,
				str("heading", lineNo, 1), str(text, lineNo, 1),
				str("lines", lineNo, 1), curLines)
			entries.Content = append(entries.Content, cur)
			continue
		}
		if cur != nil && trimmed != "" {
			curLines.Content = append(curLines.Content, str(text, lineNo, 1))
		}
	}
	if len(root.Content) == 0 {
		root.Content = append(root.Content, str("title", 1, 1), str("", 1, 1))
	}
	root.Content = append(root.Content, str("entries", 1, 1), entries)
	return root
}

// indent strips up to three leading spaces, or reports false when there are
// more (an indented code block in Markdown).
func indent(line string) (string, bool) {
	for i := 0; i < 4; i++ {
		if i == len(line) || line[i] != ' ' {
			return line[i:], true
		}
	}
	return "", false
}

// fenceMarker returns the run of three or more backticks or tildes that
// opens or closes a fenced code block on this line, or "".
func fenceMarker(line string) string {
	rest, ok := indent(line)
	if !ok || len(rest) < 3 || (rest[0] != '`' && rest[0] != '~') {
		return ""
	}
	n := len(rest) - len(strings.TrimLeft(rest, rest[:1]))
	if n < 3 {
		return ""
	}
	return rest[:n]
}

// atxHeading reports whether a line is a Markdown ATX heading: up to three
// spaces, one to six '#', then a space, a tab or the end of the line.
func atxHeading(line string) bool {
	rest, ok := indent(line)
	if !ok {
		return false
	}
	n := len(rest) - len(strings.TrimLeft(rest, "#"))
	return n >= 1 && n <= 6 && (n == len(rest) || rest[n] == ' ' || rest[n] == '\t')
}

func str(v string, line, col int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: v, Line: line, Column: col}
}
