package artifact

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Format is how a file's bytes are parsed.
type Format int

const (
	// FormatYAML is a YAML document (also used for PACE .md files, whose body
	// is plain YAML).
	FormatYAML Format = iota
	// FormatJSON is one JSON value.
	FormatJSON
	// FormatJSONL is one JSON object per line.
	FormatJSONL
	// FormatLearnings is the Autopilot learnings.md heading structure.
	FormatLearnings
)

// Decode parses data as the given format into a Document. It never panics
// and never returns an error: whatever is wrong with the bytes is a Problem
// in the result.
func Decode(path string, kind *Kind, data []byte, limits Limits) (doc *Document) {
	limits = limits.withDefaults()
	doc = &Document{Path: path, Kind: kind}
	defer func() {
		if r := recover(); r != nil {
			doc.Decoded, doc.Value, doc.root, doc.tree = false, nil, nil, nil
			doc.Problems = append(doc.Problems, Problem{Pos: Pos{1, 1}, Rule: RuleSyntax, Message: fmt.Sprintf("the parser could not read this file: %v", r)})
		}
	}()
	if int64(len(data)) > limits.MaxFileSize {
		doc.Problems = append(doc.Problems, SizeProblem(int64(len(data)), limits.MaxFileSize))
		return doc
	}
	if p := encodingProblem(data); p != nil {
		doc.Problems = append(doc.Problems, *p)
		return doc
	}
	decodeTree(doc, FormatOf(kind, path), bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), limits)
	return doc
}

// decodeTree is Decode through a node tree, which the document keeps for
// Locate: every position of the value is its node's.
//
// A JSON tree is not kept but built again on the first Locate (see
// lazyTree), which most documents, those without findings, never call. Its
// nodes come from a pooled parser's slabs, which the next file reuses.
func decodeTree(doc *Document, format Format, data []byte, limits Limits) {
	probs := &problemList{}
	defer func() { doc.Problems = append(doc.Problems, probs.result()...) }()
	switch format {
	case FormatJSON, FormatJSONL:
		text := string(data)
		p := pooledJSONParser(limits.MaxDepth)
		convertTree(doc, format, p.parse(text, format, probs), probs, limits)
		p.release()
		doc.root, doc.tree = nil, &lazyTree{text: text, format: format, limits: limits}
	case FormatLearnings:
		convertTree(doc, format, parseLearnings(data), probs, limits)
	default:
		root, ps := parseYAML(data)
		for _, p := range ps {
			probs.add(p)
		}
		convertTree(doc, format, root, probs, limits)
	}
}

// convertTree converts root (nil after a problem the parser listed in
// probs) into doc's value, and sets doc's root.
func convertTree(doc *Document, format Format, root *yaml.Node, probs *problemList, limits Limits) {
	if root == nil {
		if len(probs.list) == 0 {
			probs.add(Problem{Pos: Pos{1, 1}, Rule: RuleSyntax, Message: "the parser could not read this file"})
		}
		return
	}
	c := &converter{limits: limits, problems: probs}
	var v any
	if format == FormatJSONL {
		v = c.convertLines(root)
	} else {
		v = c.convert(root, 0, false)
	}
	doc.root = root
	// A value with a refused construct in it (a duplicate key, a tag, a
	// merge key) is ambiguous: other tools read it differently. It is not
	// handed on to the schema, which would only add noise about the
	// placeholder. JSONL lines with problems were already left out.
	if c.stop || (format != FormatJSONL && c.failures > 0) {
		return
	}
	doc.Value, doc.Decoded = v, true
}

// lazyTree is the tree of a JSON document, built on first use by the same
// parse as its value (and, for JSONL, the same conversion, which leaves the
// bad lines out).
type lazyTree struct {
	once   sync.Once
	text   string
	format Format
	limits Limits
	root   *yaml.Node
}

func (t *lazyTree) get() *yaml.Node {
	t.once.Do(func() {
		p := &jsonParser{maxDepth: t.limits.MaxDepth}
		t.root = p.parse(t.text, t.format, &problemList{})
		if t.format == FormatJSONL {
			(&converter{limits: t.limits, problems: &problemList{}}).convertLines(t.root)
		}
	})
	return t.root
}

// SizeProblem is the problem of a file larger than the limit.
func SizeProblem(size, max int64) Problem {
	return Problem{Pos: Pos{1, 1}, Rule: RuleFileSize, Message: fmt.Sprintf("file is %d bytes, over the %d-byte limit (raise limits.max_file_size in .github/phasegate.yml if it is meant to be this big)", size, max)}
}

// encodingProblem refuses binary files and invalid UTF-8 before any parser
// sees them.
func encodingProblem(data []byte) *Problem {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return &Problem{Pos: offsetPos(data, i), Rule: RuleEncoding, Message: "file contains a NUL byte: it looks binary, not a text artifact"}
	}
	if !utf8.Valid(data) {
		i := 0
		for i < len(data) {
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			i += size
		}
		return &Problem{Pos: offsetPos(data, i), Rule: RuleEncoding, Message: fmt.Sprintf("file is not valid UTF-8 (byte 0x%02x at offset %d)", data[i], i)}
	}
	return nil
}

func offsetPos(data []byte, off int) Pos {
	line, col := 1, 1
	for _, b := range data[:off] {
		switch {
		case b == '\n':
			line, col = line+1, 1
		case b&0xC0 != 0x80:
			col++
		}
	}
	return Pos{Line: line, Column: col}
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

func parseYAML(data []byte) (*yaml.Node, []Problem) {
	lines := newLineMap(data)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var first yaml.Node
	if err := dec.Decode(&first); err != nil {
		if errors.Is(err, io.EOF) {
			return &yaml.Node{Kind: yaml.DocumentNode, Line: 1, Column: 1}, nil
		}
		return nil, []Problem{yamlProblem(err, lines)}
	}
	lines.fix(&first)
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		lines.fix(&next)
		return &first, []Problem{{Pos: nodePos(&next), Rule: RuleMultiDocument, Message: "file holds more than one YAML document ('---'); an artifact is exactly one document"}}
	case errors.Is(err, io.EOF):
		return &first, nil
	default:
		return &first, []Problem{yamlProblem(err, lines)}
	}
}

func yamlProblem(err error, lines *lineMap) Problem {
	msg := err.Error()
	pos := Pos{Line: 1, Column: 1}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		if l, e := strconv.Atoi(m[1]); e == nil && l > 0 {
			pos.Line = lines.pos(l, 1).Line
		}
	}
	return Problem{Pos: pos, Rule: RuleSyntax, Message: "invalid YAML: " + yamlPrefix.ReplaceAllString(msg, "")}
}

var yamlPrefix = regexp.MustCompile(`^yaml: (line \d+: )?`)

// parseJSONL parses one JSON value per line of text into a sequence node.
// Blank lines are problems (the format has none), and every bad line is
// reported.
func (p *jsonParser) parseJSONL(text string, probs *problemList) *yaml.Node {
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: 1, Column: 1}
	lineNo := 0
	for line := range strings.Lines(text) {
		line = strings.TrimSuffix(line, "\n")
		lineNo++
		if len(strings.TrimSpace(line)) == 0 {
			probs.add(Problem{Pos: Pos{lineNo, 1}, Rule: RuleSyntax, Message: "blank line: every line of a JSONL file must be one JSON object"})
			continue
		}
		p.start(line, lineNo)
		n, prob := p.document()
		if prob != nil {
			// Reported once here; the line is left out of the value so the
			// schema does not report it again. Positions come from the nodes,
			// so the other lines keep their own line numbers.
			probs.add(*prob)
			continue
		}
		seq.Content = append(seq.Content, n)
	}
	return seq
}
