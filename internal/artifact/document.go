// Package artifact discovers pipeline artifacts, classifies them into kinds
// and decodes them into JSON values while keeping the position of every node,
// so that a JSON pointer into the value maps back to a line and column.
//
// Discovery (WalkFS) reads an fs.FS — os.DirFS or an os.Root's FS for the
// CLI and the action, a tree fetched lazily from GitHub for the App — so
// nothing here knows where the files come from. Symlinks are resolved
// inside the FS (ResolveFS), never followed out of it.
//
// It is pure apart from reading the files it is asked to read: it never
// prints and never talks to GitHub.
package artifact

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Pos is a 1-based line and column (columns count characters, not bytes).
type Pos struct {
	Line   int
	Column int
}

// Problem is something wrong with a file that stopped it from being decoded
// or that the decoder refuses by policy (limits, duplicate keys, tags). It is
// data about the file, not a failure to run.
type Problem struct {
	Pos     Pos
	Rule    string
	Message string
}

// Document is one decoded artifact.
type Document struct {
	// Path is the artifact's path relative to the checked root, with '/'.
	Path string
	// Kind is the artifact kind; never nil for a classified file.
	Kind *Kind
	// Value is the JSON data model of the file: map[string]any, []any,
	// string, int64, float64, json.Number, bool or nil. For a per-line kind
	// (JSONL) it is a []any with one element per line.
	Value any
	// Decoded reports whether Value is usable. When false, Problems says why.
	// A document with a refused construct (a duplicate key, a disallowed
	// tag, a merge key, a limit breach) is not decoded: its value would be
	// ambiguous. A JSONL document is decoded without its bad lines.
	Decoded bool
	// Problems found while reading and decoding.
	Problems []Problem

	root *yaml.Node
	// tree is root when it was not kept.
	tree *lazyTree
}

// WithoutPositions is a copy of d that keeps its value but not the node tree
// behind Locate (which costs several times the value's memory): for holding
// on to a document after it was checked. Locate on it returns 1:1.
func (d *Document) WithoutPositions() *Document {
	c := *d
	c.root, c.tree, c.Problems = nil, nil, nil
	return &c
}

// Locate maps a JSON pointer (as tokens) to a position in the file. When the
// pointer ends at a mapping key's value it returns the position of the key,
// which is where a person looks for "the field"; for array elements it returns
// the element's position. A pointer that does not resolve fully returns the
// position of the deepest node that exists; the empty pointer returns the
// document start.
func (d *Document) Locate(tokens []string) Pos {
	if d == nil {
		return Pos{Line: 1, Column: 1}
	}
	root := d.root
	if d.tree != nil {
		root = d.tree.get()
	}
	n := deref(root)
	if n == nil {
		return Pos{Line: 1, Column: 1}
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = deref(n.Content[0])
	}
	best := nodePos(n)
	for _, tok := range tokens {
		switch n.Kind {
		case yaml.MappingNode:
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if k := deref(n.Content[i]); k != nil && k.Kind == yaml.ScalarNode && k.Value == tok {
					best = nodePos(n.Content[i])
					next = deref(n.Content[i+1])
					break
				}
			}
			if next == nil {
				return best
			}
			n = next
		case yaml.SequenceNode:
			i, ok := arrayIndex(tok)
			if !ok || i >= len(n.Content) {
				return best
			}
			n = deref(n.Content[i])
			best = nodePos(n)
		default:
			return best
		}
	}
	return best
}

// arrayIndex parses an RFC 6901 array index: "0" or a decimal without
// leading zeros.
func arrayIndex(tok string) (int, bool) {
	if tok == "" || len(tok) > 9 || (tok[0] == '0' && len(tok) > 1) {
		return 0, false
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] < '0' || tok[i] > '9' {
			return 0, false
		}
	}
	i, err := strconv.Atoi(tok)
	return i, err == nil
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 64; i++ {
		n = n.Alias
	}
	return n
}

func nodePos(n *yaml.Node) Pos {
	if n == nil || n.Line < 1 {
		return Pos{Line: 1, Column: 1}
	}
	return Pos{Line: n.Line, Column: max(n.Column, 1)}
}

// SplitPointer splits an RFC 6901 JSON pointer into unescaped tokens.
func SplitPointer(ptr string) []string {
	if ptr == "" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, p := range parts {
		if strings.Contains(p, "~") {
			p = strings.ReplaceAll(p, "~1", "/")
			parts[i] = strings.ReplaceAll(p, "~0", "~")
		}
	}
	return parts
}

// ValueAt follows JSON pointer tokens into a decoded value: nil where a
// token names no field or entry.
func ValueAt(v any, tokens []string) any {
	for _, t := range tokens {
		switch x := v.(type) {
		case map[string]any:
			v = x[t]
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}
