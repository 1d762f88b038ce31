package config

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"math/big"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/command"
	"github.com/phasegate/phasegate/schemas"
)

// SchemaPath is the config's JSON Schema in the schemas tree: the one
// description of what the loader accepts (Parse validates against it before
// it decodes), and what an editor reads (`phasegate schema config`).
const SchemaPath = "config/phasegate.schema.json"

// compiled is the config schema, compiled once, with its raw document (for
// the annotations and key lists the messages quote).
type compiled struct {
	schema *jsonschema.Schema
	raw    any
}

var loadSchema = sync.OnceValues(func() (*compiled, error) {
	data, err := fs.ReadFile(schemas.FS, SchemaPath)
	if err != nil {
		return nil, fmt.Errorf("reading the config schema %s: %w", SchemaPath, err)
	}
	raw, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("parsing the config schema %s: %w", SchemaPath, err)
	}
	url, _ := raw.(map[string]any)["$id"].(string)
	if url == "" {
		return nil, fmt.Errorf("the config schema %s has no $id", SchemaPath)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(url, raw); err != nil {
		return nil, fmt.Errorf("adding the config schema %s: %w", SchemaPath, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("compiling the config schema %s: %w", SchemaPath, err)
	}
	return &compiled{schema: s, raw: raw}, nil
})

// FixedRules are the rules that exist but cannot be reconfigured (the
// decoding and schema rules): the schema's x-fixed-rules.
func FixedRules() []string {
	c, err := loadSchema()
	if err != nil {
		return nil
	}
	return stringsOf(c.raw.(map[string]any)["x-fixed-rules"])
}

// schemaProblems validates the decoded config against the schema and turns
// each violation into a problem at the offending key or value.
func schemaProblems(doc *artifact.Document) []Problem {
	c, err := loadSchema()
	if err != nil {
		return []Problem{{1, 1, fmt.Sprintf("this phasegate binary cannot check configs: %v", err)}}
	}
	verr := c.schema.Validate(doc.Value)
	if verr == nil {
		return nil
	}
	ve, ok := verr.(*jsonschema.ValidationError)
	if !ok {
		return []Problem{{1, 1, fmt.Sprintf("the config could not be validated: %v", verr)}}
	}
	var out []Problem
	for _, e := range leaves(ve) {
		out = append(out, c.describe(doc, e)...)
	}
	return out
}

// leaves are the violations of the error tree a person can act on.
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

func (c *compiled) describe(doc *artifact.Document, e *jsonschema.ValidationError) []Problem {
	loc := e.InstanceLocation
	at := func(tokens []string, msg string) Problem {
		p := doc.Locate(tokens)
		return Problem{p.Line, p.Column, msg}
	}
	// The schema object the SchemaURL names ("…#/properties/limits/properties/max_depth").
	_, frag, _ := strings.Cut(e.SchemaURL, "#")
	node, _ := artifact.ValueAt(c.raw, artifact.SplitPointer(frag)).(map[string]any)
	got := artifact.ValueAt(doc.Value, loc)
	name := dotted(doc.Value, loc)
	switch k := e.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		var out []Problem
		for _, p := range k.Properties {
			out = append(out, at(append(slices.Clip(loc), p), c.unknownKey(loc, name, p, node)))
		}
		return out
	case *kind.Type:
		return []Problem{at(loc, fmt.Sprintf("%s: wrong type: got %s, want %s", name, describeValue(got), wantType(k.Want, node)))}
	case *kind.Enum:
		return []Problem{at(loc, enumMessage(name, got, k.Want))}
	case *kind.Minimum:
		return []Problem{at(loc, rangeMessage(name, k.Got, node))}
	case *kind.Maximum:
		return []Problem{at(loc, rangeMessage(name, k.Got, node))}
	case *kind.Pattern:
		want := k.Want
		if h, ok := node["x-hint"].(string); ok {
			want = h
		}
		return []Problem{at(loc, fmt.Sprintf("%s: %q must be %s", name, k.Got, want))}
	case *kind.MinLength:
		return []Problem{at(loc, name+": must not be empty")}
	}
	return []Problem{at(loc, fmt.Sprintf("%s: %s", name, e.Error()))}
}

// unknownKey words a key the schema does not have at loc: a kind under
// artifacts, a rule under rules, a key elsewhere, each with the nearest
// known name when one is close.
func (c *compiled) unknownKey(loc []string, name, key string, node map[string]any) string {
	props, _ := node["properties"].(map[string]any)
	known := slices.Sorted(maps.Keys(props))
	switch {
	case len(loc) == 1 && loc[0] == "artifacts":
		return fmt.Sprintf("artifacts: unknown kind %q%s (`phasegate schema` lists the kinds)", key, didYouMean(key, known))
	case len(loc) == 1 && loc[0] == "rules":
		if slices.Contains(FixedRules(), key) {
			return fmt.Sprintf("rules: %q is a decoding or schema rule: it always applies and cannot be reconfigured (only schema.convention can)", key)
		}
		return fmt.Sprintf("rules: unknown rule %q%s (docs/rules.md lists them)", key, didYouMean(key, known))
	}
	msg := fmt.Sprintf("unknown key %q", key)
	if name != "" {
		msg = name + ": " + msg
	}
	if s := didYouMean(key, known); s != "" {
		return msg + s
	}
	return msg + " (known keys here: " + strings.Join(known, ", ") + ")"
}

// didYouMean is " (did you mean "x"?)" for the candidate nearest to word,
// or "" when none is close.
func didYouMean(word string, candidates []string) string {
	if s, ok := command.Suggest(word, candidates); ok && s != word {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	var prefixed []string // "warn" for warning, "err" for error
	for _, c := range candidates {
		if len(word) >= 3 && strings.HasPrefix(c, word) {
			prefixed = append(prefixed, c)
		}
	}
	if len(prefixed) == 1 {
		return fmt.Sprintf(" (did you mean %q?)", prefixed[0])
	}
	return ""
}

// dotted names a place in the config as a person writes it:
// limits.max_depth, resolvers.teams[0].
func dotted(root any, tokens []string) string {
	var b strings.Builder
	v := root
	for i, t := range tokens {
		if _, isList := v.([]any); isList {
			b.WriteString("[" + t + "]")
		} else {
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(t)
		}
		v = artifact.ValueAt(v, []string{t})
	}
	return b.String()
}

// describeValue names a value's YAML type, quoting a short string.
func describeValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if len(x) > 40 {
			x = x[:37] + "..."
		}
		return "a string `" + x + "`"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "an integer"
		}
		return "a number"
	case int64, int:
		return "an integer"
	}
	return "a number"
}

var typeWords = map[string]string{"integer": "an integer", "number": "a number", "boolean": "true or false", "string": "a string", "object": "a mapping"}

// wantType words the types a schema wants (null, which only means "the
// default", left out).
func wantType(want []string, node map[string]any) string {
	var words []string
	for _, w := range want {
		switch w {
		case "null":
		case "array":
			list := "a list"
			if items, _ := node["items"].(map[string]any); items["type"] == "string" {
				list += " of strings"
			}
			words = append(words, list)
		default:
			words = append(words, cmp.Or(typeWords[w], w))
		}
	}
	return strings.Join(words, " or ")
}

// enumMessage words a value outside its enumeration, with the nearest
// allowed value when one is close.
func enumMessage(name string, got any, want []any) string {
	allowed := stringsOf(want)
	list := strings.Join(allowed[:max(len(allowed)-1, 0)], ", ") + " or " + allowed[len(allowed)-1]
	if len(allowed) == 1 {
		list = allowed[0]
	}
	s, isString := got.(string)
	if !isString {
		return fmt.Sprintf("%s: got %s, want one of %s", name, describeValue(got), list)
	}
	return fmt.Sprintf("%s: %q must be %s%s", name, s, list, didYouMean(s, allowed))
}

// rangeMessage words a number outside the schema's minimum/maximum.
func rangeMessage(name string, got *big.Rat, node map[string]any) string {
	lo, hasLo := node["minimum"]
	hi, hasHi := node["maximum"]
	g := got.RatString()
	switch {
	case hasLo && hasHi && fmt.Sprint(lo) == "0" && got.Sign() < 0:
		return fmt.Sprintf("%s: %s is negative; it must be between 0 and %v", name, g, hi)
	case hasLo && hasHi:
		return fmt.Sprintf("%s: %s is out of range: it must be between %v and %v", name, g, lo, hi)
	case hasLo && fmt.Sprint(lo) == "0":
		return fmt.Sprintf("%s: %s is negative; use a positive number (0 or absent means the default)", name, g)
	case hasLo:
		return fmt.Sprintf("%s: %s is below the least allowed, %v", name, g, lo)
	}
	return fmt.Sprintf("%s: %s is over the most phasegate allows, %v", name, g, hi)
}

func stringsOf(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
