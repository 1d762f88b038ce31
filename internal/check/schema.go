package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/big"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/schemas"
)

var printer = message.NewPrinter(language.English)

// SchemaBaseURL is the base of every schema's $id: the raw file in the
// repository, so editors can fetch it.
const SchemaBaseURL = "https://raw.githubusercontent.com/phasegate/phasegate/main/schemas/"

// Validator holds the compiled schema of every kind. It is safe for
// concurrent use.
type Validator struct {
	schemas map[string]*jsonschema.Schema // by kind ID
	raw     map[string]any                // schema documents by URL, for hints
}

// NewValidator compiles the embedded schemas. An error means a schema in the
// binary is broken: a build defect, not a user problem.
func NewValidator() (*Validator, error) {
	return newValidator(schemas.FS)
}

func newValidator(fsys fs.FS) (*Validator, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	v := &Validator{schemas: map[string]*jsonschema.Schema{}, raw: map[string]any{}}
	paths, err := fs.Glob(fsys, "*/*.schema.json")
	if err != nil {
		return nil, fmt.Errorf("listing schemas: %w", err)
	}
	for _, p := range paths {
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, fmt.Errorf("reading schema %s: %w", p, err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("parsing schema %s: %w", p, err)
		}
		url := SchemaBaseURL + p
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("adding schema %s: %w", p, err)
		}
		v.raw[url] = doc
	}
	for _, k := range artifact.Kinds() {
		url := SchemaBaseURL + k.SchemaPath()
		if _, ok := v.raw[url]; !ok {
			return nil, fmt.Errorf("kind %s has no schema %s", k.ID, k.SchemaPath())
		}
		s, err := c.Compile(url)
		if err != nil {
			return nil, fmt.Errorf("compiling schema %s: %w", k.SchemaPath(), err)
		}
		v.schemas[k.ID] = s
	}
	return v, nil
}

// Validate checks a decoded document against its kind's schema and returns
// one finding per violated leaf of the schema's error tree, each at the
// position of the offending key or value.
func (v *Validator) Validate(doc *artifact.Document) []Finding {
	if doc == nil || doc.Kind == nil || !doc.Decoded {
		return nil
	}
	s := v.schemas[doc.Kind.ID]
	if s == nil {
		return nil
	}
	if doc.Kind.PerItem {
		items, ok := doc.Value.([]any)
		if !ok {
			return nil
		}
		var out []Finding
		for i, item := range items {
			out = append(out, v.validateOne(doc, s, item, []string{strconv.Itoa(i)})...)
		}
		return out
	}
	return v.validateOne(doc, s, doc.Value, nil)
}

func (v *Validator) validateOne(doc *artifact.Document, s *jsonschema.Schema, value any, prefix []string) []Finding {
	err := s.Validate(value)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []Finding{v.finding(doc, prefix, fmt.Sprintf("could not validate: %v", err))}
	}
	var out []Finding
	for _, leaf := range leaves(ve) {
		out = append(out, v.describe(doc, value, prefix, leaf)...)
	}
	return dedupe(out)
}

func (v *Validator) finding(doc *artifact.Document, loc []string, msg string) Finding {
	p := doc.Locate(loc)
	return Finding{File: doc.Path, Line: p.Line, Column: p.Column, Kind: doc.Kind.ID, Rule: RuleSchema, Severity: SeverityError, Message: msg}
}

// leaves walks the validator's error tree down to the violations a person can
// act on. The top-level "validation failed" and the $ref wrappers carry no
// information. Where anyOf/oneOf failed in every branch, only the branch that
// got furthest into the document is kept: its errors are the ones that
// describe what the author meant to write.
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	switch e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		if len(e.Causes) == 0 {
			return []*jsonschema.ValidationError{e}
		}
		if merged := mergeTypeBranches(e); merged != nil {
			return []*jsonschema.ValidationError{merged}
		}
		var best []*jsonschema.ValidationError
		bestDepth := -1
		for _, c := range e.Causes {
			ls := leaves(c)
			d := 0
			for _, l := range ls {
				d = max(d, len(l.InstanceLocation))
			}
			if d > bestDepth || (d == bestDepth && len(ls) < len(best)) {
				best, bestDepth = ls, d
			}
		}
		return best
	}
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// mergeTypeBranches turns "anyOf: [{type: string}, {type: integer}]" failing
// at one place into a single type error wanting "string or integer".
func mergeTypeBranches(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	merged := &kind.Type{}
	var loc []string
	for i, c := range e.Causes {
		ls := leaves(c)
		if len(ls) != 1 {
			return nil
		}
		t, ok := ls[0].ErrorKind.(*kind.Type)
		if !ok {
			return nil
		}
		if i > 0 && strings.Join(ls[0].InstanceLocation, "/") != strings.Join(loc, "/") {
			return nil
		}
		loc = ls[0].InstanceLocation
		merged.Got = t.Got
		merged.Want = append(merged.Want, t.Want...)
	}
	return &jsonschema.ValidationError{SchemaURL: e.SchemaURL, InstanceLocation: loc, ErrorKind: merged}
}

func dedupe(fs []Finding) []Finding {
	seen := make(map[Finding]bool, len(fs))
	out := fs[:0]
	for _, f := range fs {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// describe turns one leaf into findings with messages a person can act on.
func (v *Validator) describe(doc *artifact.Document, value any, prefix []string, e *jsonschema.ValidationError) []Finding {
	loc := append(append([]string(nil), prefix...), e.InstanceLocation...)
	field := fieldName(e.InstanceLocation)
	hint := v.hint(e)
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		var out []Finding
		for _, m := range k.Missing {
			out = append(out, v.finding(doc, loc, fmt.Sprintf("missing required field %s", code(joinField(e.InstanceLocation, m)))+hint))
		}
		return out
	case *kind.AdditionalProperties:
		var out []Finding
		for _, p := range k.Properties {
			out = append(out, v.finding(doc, append(loc, p), fmt.Sprintf("unknown field %s: it is not part of this artifact's contract (check the spelling)", code(joinField(e.InstanceLocation, p)))+hint))
		}
		return out
	case *kind.Dependency, *kind.DependentRequired:
		return []Finding{v.finding(doc, loc, fmt.Sprintf("%s: %s", field, e.ErrorKind.LocalizedString(printer))+hint)}
	}
	return []Finding{v.finding(doc, loc, v.message(e, field, valueAt(value, e.InstanceLocation))+hint)}
}

func (v *Validator) message(e *jsonschema.ValidationError, field string, got any) string {
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		want := v.wantTypes(e, k.Want)
		msg := fmt.Sprintf("%s must be %s, got %s", field, want, typeWord(k.Got))
		if k.Got == "string" && contains(k.Want, "array") {
			msg += " — write each entry as its own `- item` line"
		}
		return msg
	case *kind.Enum:
		var want []string
		for _, w := range k.Want {
			want = append(want, display(w))
		}
		return fmt.Sprintf("%s must be one of %s; got %s", field, strings.Join(want, ", "), display(k.Got))
	case *kind.Const:
		return fmt.Sprintf("%s must be %s; got %s", field, display(k.Want), display(k.Got))
	case *kind.Pattern:
		if k.Want == `\S` {
			return fmt.Sprintf("%s must not be empty or blank", field)
		}
		return fmt.Sprintf("%s is %s, which does not match the pattern %s", field, display(k.Got), code(k.Want))
	case *kind.Format:
		return fmt.Sprintf("%s is %s, which is not a valid %s", field, display(k.Got), k.Want)
	case *kind.MinItems:
		if k.Want == 1 {
			return fmt.Sprintf("%s must not be empty", field)
		}
		return fmt.Sprintf("%s must have at least %d entries, has %d", field, k.Want, k.Got)
	case *kind.MaxItems:
		return fmt.Sprintf("%s must have at most %d entries, has %d", field, k.Want, k.Got)
	case *kind.MinLength:
		if k.Want == 1 {
			return fmt.Sprintf("%s must not be empty", field)
		}
		return fmt.Sprintf("%s must be at least %d characters long, is %d", field, k.Want, k.Got)
	case *kind.MaxLength:
		return fmt.Sprintf("%s must be at most %d characters long, is %d", field, k.Want, k.Got)
	case *kind.MinProperties:
		if k.Want == 1 {
			return fmt.Sprintf("%s must not be empty", field)
		}
		return fmt.Sprintf("%s must have at least %d fields, has %d", field, k.Want, k.Got)
	case *kind.MaxProperties:
		return fmt.Sprintf("%s must have at most %d fields, has %d", field, k.Want, k.Got)
	case *kind.Minimum:
		return fmt.Sprintf("%s must be at least %s, got %s", field, ratString(k.Want), ratString(k.Got))
	case *kind.Maximum:
		return fmt.Sprintf("%s must be at most %s, got %s", field, ratString(k.Want), ratString(k.Got))
	case *kind.ExclusiveMinimum:
		return fmt.Sprintf("%s must be greater than %s, got %s", field, ratString(k.Want), ratString(k.Got))
	case *kind.ExclusiveMaximum:
		return fmt.Sprintf("%s must be less than %s, got %s", field, ratString(k.Want), ratString(k.Got))
	case *kind.UniqueItems:
		return fmt.Sprintf("%s must not repeat entries: entries %d and %d are the same", field, k.Duplicates[0]+1, k.Duplicates[1]+1)
	case *kind.FalseSchema:
		return fmt.Sprintf("%s is not allowed here", field)
	case *kind.PropertyNames:
		return fmt.Sprintf("%s has an invalid field name %s", field, display(k.Property))
	}
	return fmt.Sprintf("%s: %s", field, e.ErrorKind.LocalizedString(printer))
}

// wantTypes names the wanted types, saying "a list of strings" where the
// schema says what the items are.
func (v *Validator) wantTypes(e *jsonschema.ValidationError, want []string) string {
	var words []string
	for _, w := range want {
		if w == "array" {
			if obj, ok := v.schemaObject(e).(map[string]any); ok {
				if items, ok := obj["items"].(map[string]any); ok {
					if t, ok := items["type"].(string); ok {
						words = append(words, "a list of "+plural(t))
						continue
					}
				}
			}
		}
		words = append(words, typeWord(w))
	}
	return strings.Join(words, " or ")
}

// hint returns " — <x-hint>" when the schema object that failed carries an
// "x-hint" annotation: a schema author's advice for the fix.
func (v *Validator) hint(e *jsonschema.ValidationError) string {
	obj, ok := v.schemaObject(e).(map[string]any)
	if !ok {
		return ""
	}
	if h, ok := obj["x-hint"].(string); ok && h != "" {
		return " — " + h
	}
	return ""
}

// schemaObject resolves the error's schema location in the raw schema docs.
func (v *Validator) schemaObject(e *jsonschema.ValidationError) any {
	url, frag, _ := strings.Cut(e.SchemaURL, "#")
	doc, ok := v.raw[url]
	if !ok {
		return nil
	}
	cur := doc
	for _, tok := range artifact.SplitPointer(frag) {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

func valueAt(v any, loc []string) any {
	for _, tok := range loc {
		switch c := v.(type) {
		case map[string]any:
			v = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}

// fieldName renders an instance location as a readable field path in
// backquotes, e.g. `stories[0].acceptance_criteria`.
func fieldName(loc []string) string {
	if len(loc) == 0 {
		return "the document"
	}
	return code(joinField(loc, ""))
}

func joinField(loc []string, last string) string {
	var b strings.Builder
	for _, t := range loc {
		if _, err := strconv.Atoi(t); err == nil {
			b.WriteString("[" + t + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(t)
	}
	if last != "" {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(last)
	}
	return b.String()
}

func code(s string) string { return "`" + s + "`" }

func typeWord(t string) string {
	switch t {
	case "object":
		return "a mapping"
	case "array":
		return "a list"
	case "string":
		return "a string"
	case "integer":
		return "a whole number"
	case "number":
		return "a number"
	case "boolean":
		return "true or false"
	case "null":
		return "null"
	}
	return t
}

func plural(t string) string {
	switch t {
	case "object":
		return "mappings"
	case "array":
		return "lists"
	case "string":
		return "strings"
	case "integer":
		return "whole numbers"
	case "number":
		return "numbers"
	case "boolean":
		return "booleans"
	}
	return t + "s"
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// display renders a value from the document for a message, shortened: the
// value is agent-written text, and reports escape it for their own medium.
func display(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if len(x) > 80 {
			x = string([]rune(x)[:min(len([]rune(x)), 77)]) + "…"
		}
		return strconv.Quote(x)
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}
