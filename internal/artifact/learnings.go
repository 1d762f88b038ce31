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
func parseLearnings(data []byte) *yaml.Node {
	root := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: 1, Column: 1}
	entries := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: 1, Column: 1}
	var cur, curLines *yaml.Node
	inFence := false
	lineNo := 0
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		lineNo++
		text := strings.TrimRight(string(line), "\r")
		if lineNo == 1 {
			root.Content = append(root.Content, str("title", 1, 1), str(text, 1, 1))
			continue
		}
		trimmed := strings.TrimSpace(text)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			inFence = !inFence
		}
		if !inFence && strings.HasPrefix(text, "#") {
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

func str(v string, line, col int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: v, Line: line, Column: col}
}
