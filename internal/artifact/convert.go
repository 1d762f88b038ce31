package artifact

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits bound the work spent on one file. They are checked before and while
// parsing; a breach is a Problem on that file, never a crash.
type Limits struct {
	// MaxFileSize is the largest file read, in bytes.
	MaxFileSize int64
	// MaxDepth is the deepest nesting of mappings and sequences. It is
	// capped at MaxDepthCeiling whatever the caller asks, so that no input
	// can exhaust the stack.
	MaxDepth int
	// MaxAliasNodes is how many nodes YAML alias expansion may produce in one
	// file (the "billion laughs" budget).
	MaxAliasNodes int
	// MaxNodes is how many nodes one file may have in all.
	MaxNodes int
}

// DefaultLimits are the limits used when the config sets none.
var DefaultLimits = Limits{
	MaxFileSize:   1 << 20,
	MaxDepth:      64,
	MaxAliasNodes: 10_000,
	MaxNodes:      1_000_000,
}

// MaxDepthCeiling is the deepest nesting any configuration may allow (the
// YAML parser's own limit).
const MaxDepthCeiling = 10_000

func (l Limits) withDefaults() Limits {
	l.MaxFileSize = cmp.Or(max(l.MaxFileSize, 0), DefaultLimits.MaxFileSize)
	l.MaxDepth = min(cmp.Or(max(l.MaxDepth, 0), DefaultLimits.MaxDepth), MaxDepthCeiling)
	l.MaxAliasNodes = cmp.Or(max(l.MaxAliasNodes, 0), DefaultLimits.MaxAliasNodes)
	l.MaxNodes = cmp.Or(max(l.MaxNodes, 0), DefaultLimits.MaxNodes)
	return l
}

// Rule IDs of decode problems. They are stable: users switch them off by ID.
const (
	RuleSyntax        = "syntax"
	RuleEncoding      = "encoding"
	RuleFileSize      = "limits.file-size"
	RuleDepth         = "limits.depth"
	RuleAliasBudget   = "limits.alias-expansion"
	RuleNodeCount     = "limits.nodes"
	RuleDuplicateKey  = "yaml.duplicate-key"
	RuleTag           = "yaml.tag"
	RuleMergeKey      = "yaml.merge-key"
	RuleComplexKey    = "yaml.complex-key"
	RuleMultiDocument = "yaml.multiple-documents"
	RuleSymlink       = "discovery.symlink-escape"
	RuleRead          = "io.read"
)

// The number shapes scalar resolution tells apart, matched by hand (these
// run on every plain scalar; TestNumberShapes holds them to the regular
// expressions in their comments):
//
//   - octalLooking `^[-+]?0[0-9]+$`: octal in YAML 1.1 and decimal in
//     YAML 1.2, ambiguous, so such a value (0755) stays a string;
//   - decimalInt `^[-+]?(0|[1-9][0-9]*)$`;
//   - decimalFloat `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.

func octalLooking(s string) bool {
	s = trimSign(s)
	return len(s) >= 2 && s[0] == '0' && allDigits(s[1:])
}

func decimalInt(s string) bool {
	s = trimSign(s)
	return s == "0" || len(s) > 0 && s[0] != '0' && allDigits(s)
}

func decimalFloat(s string) bool {
	s = trimSign(s)
	i := digits(s, 0)
	if i < len(s) && s[i] == '.' {
		j := digits(s, i+1)
		if i == 0 && j == i+1 {
			return false // neither digits before nor after the point
		}
		i = j
	} else if i == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(s, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}

func trimSign(s string) string {
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		return s[1:]
	}
	return s
}

func allDigits(s string) bool { return len(s) > 0 && digits(s, 0) == len(s) }

// digits is the index of the first non-digit of s at or after i.
func digits[S string | []byte](s S, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// allowedTags are the YAML core-schema tags. Any other tag (application tags
// such as !!python/object or !Ref) could construct objects in other tools and
// is refused.
var allowedTags = map[string]bool{
	"": true, "!": true, "!!str": true, "!!int": true, "!!float": true, "!!bool": true,
	"!!null": true, "!!map": true, "!!seq": true, "!!timestamp": true, "!!binary": true,
}

// maxProblems is the most problems one file lists: a hostile file (a
// million blank JSONL lines, a million duplicate keys) must not flood the
// report. The first problem past the limit stands for the rest.
const maxProblems = 100

// problemList collects a file's problems up to maxProblems.
type problemList struct {
	list    []Problem
	omitted int
}

// add lists p, or, once the list holds maxProblems and one more, counts it.
func (l *problemList) add(p Problem) {
	if len(l.list) > maxProblems {
		l.omitted++
		return
	}
	l.list = append(l.list, p)
}

// result is the list, its last entry (the first past the limit) saying how
// many more were left out.
func (l *problemList) result() []Problem {
	if l.omitted == 0 {
		return l.list
	}
	last := &l.list[maxProblems]
	last.Message = fmt.Sprintf("%s (and %d more problems in this file, not listed)", last.Message, l.omitted)
	return l.list
}

type converter struct {
	limits     Limits
	aliasNodes int
	nodes      int
	problems   *problemList
	failures   int // problems found, listed or not
	stop       bool
	// expanding holds the anchored nodes whose alias is being expanded, to
	// catch an alias inside its own anchor (which would expand forever).
	expanding map[*yaml.Node]bool
	// outerAlias is the outermost alias being expanded: where a budget
	// breach is reported (the nodes inside are at the anchor's position).
	outerAlias *yaml.Node
}

func (c *converter) fail(n *yaml.Node, rule, format string, args ...any) {
	c.failures++
	c.problems.add(Problem{Pos: nodePos(n), Rule: rule, Message: fmt.Sprintf(format, args...)})
}

// convert turns a node tree into the JSON data model. It reports duplicate
// keys, disallowed tags and limit breaches as problems and keeps going where
// it safely can, so one file yields all its problems at once; it stops at a
// limit breach.
func (c *converter) convert(n *yaml.Node, depth int, aliased bool) any {
	if c.stop || n == nil {
		return nil
	}
	if !c.count(n, aliased) {
		return nil
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!merge" && n.Style&yaml.TaggedStyle == 0 {
		return n.Value // a plain "<<" that is not a key is just a string
	}
	if !allowedTags[n.Tag] && n.Kind != yaml.AliasNode && n.Kind != yaml.DocumentNode {
		c.fail(n, RuleTag, "YAML tag %s is not allowed: artifacts are plain data (tags can construct objects in other tools)", quoteTag(n.Tag))
		return nil
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return c.convert(n.Content[0], depth, aliased)
	case yaml.AliasNode:
		return c.convertAlias(n, depth, aliased)
	case yaml.MappingNode:
		return c.convertMapping(n, depth, aliased)
	case yaml.SequenceNode:
		return c.convertSequence(n, depth, aliased)
	case yaml.ScalarNode:
		return scalar(n)
	}
	return nil
}

// count counts n against the node budgets (all nodes, and the nodes alias
// expansion produces); on a breach it reports it, stops the conversion and
// returns false.
func (c *converter) count(n *yaml.Node, aliased bool) bool {
	c.nodes++
	if aliased {
		c.aliasNodes++
		if c.aliasNodes > c.limits.MaxAliasNodes {
			c.fail(c.outerAlias, RuleAliasBudget, "YAML aliases expand to more than %d nodes; write the values out instead of using anchors and aliases", c.limits.MaxAliasNodes)
			c.stop = true
			return false
		}
	}
	if c.nodes > c.limits.MaxNodes {
		c.fail(n, RuleNodeCount, "file has more than %d values", c.limits.MaxNodes)
		c.stop = true
		return false
	}
	return true
}

// tooDeep reports whether a mapping or sequence at depth is past the depth
// limit; if so it reports it and stops the conversion.
func (c *converter) tooDeep(n *yaml.Node, depth int) bool {
	if depth < c.limits.MaxDepth {
		return false
	}
	c.fail(n, RuleDepth, "nesting is deeper than %d levels", c.limits.MaxDepth)
	c.stop = true
	return true
}

// convertAlias expands an alias: the value of its anchor, counted against
// the alias budget. An alias inside its own anchor stops the conversion.
func (c *converter) convertAlias(n *yaml.Node, depth int, aliased bool) any {
	if n.Alias == nil {
		return nil
	}
	if c.expanding[n.Alias] {
		c.fail(n, RuleAliasBudget, "YAML alias *%s is inside its own anchor: it would expand forever", truncate(n.Value))
		c.stop = true
		return nil
	}
	if c.expanding == nil {
		c.expanding = map[*yaml.Node]bool{}
	}
	c.expanding[n.Alias] = true
	if !aliased {
		c.outerAlias = n
	}
	v := c.convert(n.Alias, depth, true)
	delete(c.expanding, n.Alias)
	return v
}

// convertMapping converts a mapping whose keys are plain strings, leaving
// out (and reporting) complex, merge, tagged and duplicate keys.
func (c *converter) convertMapping(n *yaml.Node, depth int, aliased bool) any {
	if c.tooDeep(n, depth) {
		return nil
	}
	m := make(map[string]any, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.AliasNode {
			k = deref(k)
		}
		if k == nil || k.Kind != yaml.ScalarNode {
			c.fail(n.Content[i], RuleComplexKey, "mapping keys must be plain strings")
			continue
		}
		if k.Tag == "!!merge" {
			c.fail(k, RuleMergeKey, "YAML merge keys (<<) are not supported in artifacts; write the fields out")
			continue
		}
		if !allowedTags[k.Tag] {
			c.fail(k, RuleTag, "YAML tag %s is not allowed on a key", quoteTag(k.Tag))
			continue
		}
		if _, dup := m[k.Value]; dup {
			c.fail(k, RuleDuplicateKey, "duplicate key %q: the later value would silently replace the earlier one", k.Value)
			continue
		}
		m[k.Value] = c.convert(v, depth+1, aliased)
		if c.stop {
			return nil
		}
	}
	return m
}

func (c *converter) convertSequence(n *yaml.Node, depth int, aliased bool) any {
	if c.tooDeep(n, depth) {
		return nil
	}
	s := make([]any, 0, len(n.Content))
	for _, e := range n.Content {
		s = append(s, c.convert(e, depth+1, aliased))
		if c.stop {
			return nil
		}
	}
	return s
}

// convertLines converts the lines of a JSONL file one by one. A line with a
// problem (a duplicate key, say) is left out of both the value and the node
// tree, like a line that does not parse, so that the other lines are still
// checked and item i of the value is node i of the tree.
func (c *converter) convertLines(seq *yaml.Node) []any {
	out := make([]any, 0, len(seq.Content))
	kept := seq.Content[:0]
	for _, n := range seq.Content {
		before := c.failures
		v := c.convert(n, 0, false)
		if c.stop {
			return nil
		}
		if c.failures > before {
			continue
		}
		kept = append(kept, n)
		out = append(out, v)
	}
	seq.Content = kept
	return out
}

func quoteTag(t string) string { return strconv.Quote(truncate(t)) }

// truncate shortens s to at most 60 bytes without splitting a character.
func truncate(s string) string {
	if len(s) <= 60 {
		return s
	}
	i := 60
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// scalar resolves a scalar node. Only what is unambiguous becomes a number,
// boolean or null; timestamps, octal- and hex-looking numbers, .inf/.nan and
// everything else stay strings, so a value is never silently reinterpreted.
func scalar(n *yaml.Node) any {
	tag, style, value := n.Tag, n.Style, n.Value
	if style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return value
	}
	if octalLooking(value) {
		return value
	}
	switch tag {
	case "!!str":
		// The YAML parser leaves a plain decimal float out of float64's
		// range (1e400) as a string; it is a number, kept exactly.
		if style&yaml.TaggedStyle == 0 && decimalFloat(value) {
			return jsonNumber(value)
		}
		return value
	case "!!null":
		switch value {
		case "", "~", "null", "Null", "NULL":
			return nil
		}
		return value // an explicit !!null on a non-null spelling
	case "!!bool":
		switch value {
		case "true", "True", "TRUE":
			return true
		case "false", "False", "FALSE":
			return false
		}
		return value
	case "!!int":
		if !decimalInt(value) {
			return value
		}
		if i, err := strconv.ParseInt(value, 10, 64); err == nil {
			return i
		}
		return jsonNumber(value)
	case "!!float":
		if !decimalFloat(value) {
			return value
		}
		if decimalInt(value) {
			// YAML resolves an integer too big for 64 bits as a float;
			// keep every digit instead.
			if _, err := strconv.ParseInt(value, 10, 64); err != nil {
				return jsonNumber(value)
			}
		}
		f, err := strconv.ParseFloat(value, 64)
		if err != nil || math.IsInf(f, 0) {
			return jsonNumber(value)
		}
		return f
	}
	return value
}

// jsonNumber spells a YAML decimal number (which matched decimalInt or
// decimalFloat) as a JSON number: no leading '+', no leading zeros, no bare
// '.'.
func jsonNumber(s string) json.Number {
	s = strings.TrimPrefix(s, "+")
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, exp := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp = s[:i], s[i:]
	}
	whole, frac, _ := strings.Cut(mant, ".")
	whole = cmp.Or(strings.TrimLeft(whole, "0"), "0")
	mant = whole
	if frac != "" {
		mant += "." + frac
	}
	if neg {
		mant = "-" + mant
	}
	return json.Number(mant + exp)
}
