package artifact

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Limits bound the work spent on one file. They are checked before and while
// parsing; a breach is a Problem on that file, never a crash.
type Limits struct {
	// MaxFileSize is the largest file read, in bytes.
	MaxFileSize int64
	// MaxDepth is the deepest nesting of mappings and sequences.
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

func (l Limits) withDefaults() Limits {
	if l.MaxFileSize <= 0 {
		l.MaxFileSize = DefaultLimits.MaxFileSize
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultLimits.MaxDepth
	}
	if l.MaxAliasNodes <= 0 {
		l.MaxAliasNodes = DefaultLimits.MaxAliasNodes
	}
	if l.MaxNodes <= 0 {
		l.MaxNodes = DefaultLimits.MaxNodes
	}
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

var (
	decimalInt   = regexp.MustCompile(`^[-+]?(0|[1-9][0-9]*)$`)
	decimalFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
)

// allowedTags are the YAML core-schema tags. Any other tag (application tags
// such as !!python/object or !Ref) could construct objects in other tools and
// is refused.
var allowedTags = map[string]bool{
	"": true, "!": true, "!!str": true, "!!int": true, "!!float": true, "!!bool": true,
	"!!null": true, "!!map": true, "!!seq": true, "!!timestamp": true, "!!binary": true,
}

type converter struct {
	limits     Limits
	aliasNodes int
	nodes      int
	problems   []Problem
	stop       bool
}

func (c *converter) fail(n *yaml.Node, rule, format string, args ...any) {
	c.problems = append(c.problems, Problem{Pos: nodePos(n), Rule: rule, Message: fmt.Sprintf(format, args...)})
}

// convert turns a node tree into the JSON data model. It reports duplicate
// keys, disallowed tags and limit breaches as problems and keeps going where
// it safely can, so one file yields all its problems at once; it stops at a
// limit breach.
func (c *converter) convert(n *yaml.Node, depth int, aliased bool) any {
	if c.stop || n == nil {
		return nil
	}
	c.nodes++
	if aliased {
		c.aliasNodes++
		if c.aliasNodes > c.limits.MaxAliasNodes {
			c.fail(n, RuleAliasBudget, "YAML aliases expand to more than %d nodes; write the values out instead of using anchors and aliases", c.limits.MaxAliasNodes)
			c.stop = true
			return nil
		}
	}
	if c.nodes > c.limits.MaxNodes {
		c.fail(n, RuleNodeCount, "file has more than %d values", c.limits.MaxNodes)
		c.stop = true
		return nil
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
		if n.Alias == nil {
			return nil
		}
		return c.convert(n.Alias, depth, true)
	case yaml.MappingNode:
		if depth >= c.limits.MaxDepth {
			c.fail(n, RuleDepth, "nesting is deeper than %d levels", c.limits.MaxDepth)
			c.stop = true
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
	case yaml.SequenceNode:
		if depth >= c.limits.MaxDepth {
			c.fail(n, RuleDepth, "nesting is deeper than %d levels", c.limits.MaxDepth)
			c.stop = true
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
	case yaml.ScalarNode:
		return scalar(n)
	}
	return nil
}

func quoteTag(t string) string {
	if len(t) > 60 {
		t = t[:60] + "…"
	}
	return strconv.Quote(t)
}

// scalar resolves a scalar node. Only what is unambiguous becomes a number,
// boolean or null; timestamps, octal- and hex-looking numbers, .inf/.nan and
// everything else stay strings, so a value is never silently reinterpreted.
func scalar(n *yaml.Node) any {
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return n.Value
	}
	switch n.Tag {
	case "!!null":
		return nil
	case "!!bool":
		switch n.Value {
		case "true", "True", "TRUE":
			return true
		case "false", "False", "FALSE":
			return false
		}
		return n.Value
	case "!!int":
		if !decimalInt.MatchString(n.Value) {
			return n.Value
		}
		if i, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
			return i
		}
		return json.Number(n.Value)
	case "!!float":
		if !decimalFloat.MatchString(n.Value) {
			return n.Value
		}
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil || math.IsInf(f, 0) {
			return json.Number(n.Value)
		}
		return f
	}
	return n.Value
}
