package check

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

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
const SchemaBaseURL = schemas.BaseURL

// Validator holds the schema of every kind, compiled on first use: a kind's
// schema (and what it references) is compiled the first time a document of
// that kind is validated, once, so a run compiles only the kinds it meets and
// does so while discovery is still walking the tree, not before it starts. It
// is safe for concurrent use.
type Validator struct {
	// mu guards compiler, which is not safe for concurrent use; compiled
	// schemas are immutable and used without it.
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	schemas  map[string]*kindSchema // by kind ID; the map is never written after newValidator
	raw      map[string]any         // schema documents by URL, for hints
}

// kindSchema is one kind's schema, compiled once on first use.
type kindSchema struct {
	once sync.Once
	path string // the schema's path in the FS, e.g. "pace/plan.schema.json"
	url  string
	s    *jsonschema.Schema
	err  error
	done atomic.Bool // once has run: s and err are set
}

func (ks *kindSchema) compiled() bool { return ks.done.Load() }

// NewValidator returns the embedded schemas, read and ready to compile. They
// are read once per process (a Validator is immutable but for compiling a
// kind's schema on first use), so every caller shares them. An error means a
// schema in the binary is broken: a build defect, not a user problem; a
// schema that does not compile is reported by the run that first needs it
// (Validator.Err) and by the package's tests, which compile them all.
var NewValidator = sync.OnceValues(func() (*Validator, error) { return newValidator(schemas.FS) })

func newValidator(fsys fs.FS) (*Validator, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	v := &Validator{compiler: c, schemas: map[string]*kindSchema{}, raw: map[string]any{}}
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
		v.schemas[k.ID] = &kindSchema{path: k.SchemaPath(), url: url}
	}
	return v, nil
}

// schema is the compiled schema of a kind (nil for a kind without one),
// compiled on first use.
func (v *Validator) schema(kindID string) (*jsonschema.Schema, error) {
	ks := v.schemas[kindID]
	if ks == nil {
		return nil, nil
	}
	ks.once.Do(func() {
		v.mu.Lock()
		defer v.mu.Unlock()
		ks.s, ks.err = v.compiler.Compile(ks.url)
		if ks.err != nil {
			ks.err = fmt.Errorf("compiling schema %s: %w", ks.path, ks.err)
		}
		ks.done.Store(true)
	})
	return ks.s, ks.err
}

// Err reports the first schema, in kind order, that was needed and did not
// compile: a build defect. A run returns it as its error.
func (v *Validator) Err() error {
	for _, k := range artifact.Kinds() {
		if ks := v.schemas[k.ID]; ks != nil && ks.compiled() && ks.err != nil {
			return ks.err
		}
	}
	return nil
}

// Validate checks a decoded document against its kind's schema and returns
// one finding per violated leaf of the schema's error tree, each at the
// position of the offending key or value.
func (v *Validator) Validate(doc *artifact.Document) []Finding {
	if doc == nil || doc.Kind == nil || !doc.Decoded {
		return nil
	}
	s, err := v.schema(doc.Kind.ID)
	if err != nil {
		return []Finding{v.finding(doc, nil, fmt.Sprintf("could not validate: %v", err))}
	}
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
			out = append(out, v.validateOne(doc, s, item, i)...)
		}
		return out
	}
	return v.validateOne(doc, s, normalised(doc), -1)
}

// validateOne validates value, item (≥ 0) of a per-item document or the
// whole document (-1); the pointer prefix of the item is made only for a
// value with findings.
func (v *Validator) validateOne(doc *artifact.Document, s *jsonschema.Schema, value any, item int) []Finding {
	err := s.Validate(value)
	if err == nil {
		return nil
	}
	var prefix []string
	if item >= 0 {
		prefix = []string{strconv.Itoa(item)}
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []Finding{v.finding(doc, prefix, fmt.Sprintf("could not validate: %v", err))}
	}
	var out []Finding
	for _, l := range v.leaves(ve, "", tier{}) {
		fs := v.describe(doc, value, prefix, l)
		if l.tier.convention {
			for i := range fs {
				fs[i].Rule, fs[i].Severity = RuleConvention, SeverityWarning
				if l.tier.basis != "" {
					fs[i].Message += " (a convention upstream does not enforce: " + l.tier.basis + ")"
				}
			}
		}
		out = append(out, fs...)
	}
	return dropShadowed(dedupe(out))
}

// dropShadowed drops a convention finding at the place of a contract
// finding: the error already says what is wrong there.
func dropShadowed(fs []Finding) []Finding {
	type at struct{ line, col int }
	errs := map[at]bool{}
	for _, f := range fs {
		if f.Rule == RuleSchema {
			errs[at{f.Line, f.Column}] = true
		}
	}
	out := fs[:0]
	for _, f := range fs {
		if f.Rule == RuleConvention && errs[at{f.Line, f.Column}] {
			continue
		}
		out = append(out, f)
	}
	return out
}

func (v *Validator) finding(doc *artifact.Document, loc []string, msg string) Finding {
	p := doc.Locate(loc)
	return Finding{File: doc.Path, Line: p.Line, Column: p.Column, Kind: doc.Kind.ID, Rule: RuleSchema, Severity: SeverityError, Message: msg}
}

// leaf is one violation to report, with the schema author's hint that
// applies to it (its own x-hint, or one placed beside the $ref it came through).
type leaf struct {
	err  *jsonschema.ValidationError
	hint string
	tier tier
}

// tier is the x-tier annotation that governs a leaf: the contract (what an
// upstream validator enforces, or what upstream code needs to run) is an
// error; a convention (what upstream documents but neither enforces nor
// needs) is a warning under its own rule, RuleConvention. basis is the
// schema's x-basis beside it: the upstream evidence for the choice.
type tier struct {
	convention bool
	basis      string
}

// leaves walks the validator's error tree down to the violations a person can
// act on. The top-level "validation failed" and the $ref wrappers carry no
// information. Where anyOf/oneOf failed in every branch, only the branch that
// got furthest into the document is kept: its errors are the ones that
// describe what the author meant to write. A failed `contains` is one
// violation, not one per array element.
func (v *Validator) leaves(e *jsonschema.ValidationError, inherited string, tr tier) []leaf {
	if t, ok := v.tierAt(e); ok {
		tr = t
	}
	hint := cmp.Or(v.ownHint(e), inherited)
	switch e.ErrorKind.(type) {
	case *kind.Reference:
		inherited = hint
	case *kind.Contains, *kind.MinContains, *kind.MaxContains:
		return []leaf{{e, hint, tr}}
	case *kind.AnyOf, *kind.OneOf:
		if len(e.Causes) == 0 {
			return []leaf{{e, hint, tr}}
		}
		if merged := v.mergeTypeBranches(e); merged != nil {
			return []leaf{{merged, hint, tr}}
		}
		var best []leaf
		bestDepth := -1
		for _, c := range e.Causes {
			ls := v.leaves(c, inherited, tr)
			d := 0
			for _, l := range ls {
				d = max(d, len(l.err.InstanceLocation))
			}
			if d > bestDepth || (d == bestDepth && len(ls) < len(best)) {
				best, bestDepth = ls, d
			}
		}
		return best
	}
	if len(e.Causes) == 0 {
		return []leaf{{e, hint, tr}}
	}
	var out []leaf
	for _, c := range e.Causes {
		out = append(out, v.leaves(c, inherited, tr)...)
	}
	return out
}

// tierAt finds the x-tier annotation that governs the schema location of e:
// the deepest one on the path from its schema document's root to the failed
// keyword. ok is false when the document has none there (the tier is then
// inherited through the $ref that led here, or the contract).
func (v *Validator) tierAt(e *jsonschema.ValidationError) (t tier, ok bool) {
	url, frag, _ := strings.Cut(e.SchemaURL, "#")
	cur, found := v.raw[url]
	if !found {
		return tier{}, false
	}
	look := func(node any) {
		obj, isObj := node.(map[string]any)
		if !isObj {
			return
		}
		switch obj["x-tier"] {
		case TierConvention:
			b, _ := obj["x-basis"].(string)
			t, ok = tier{convention: true, basis: b}, true
		case TierContract:
			t, ok = tier{}, true
		}
	}
	look(cur)
	for _, tok := range artifact.SplitPointer(frag) {
		if cur = artifact.ValueAt(cur, []string{tok}); cur == nil {
			break
		}
		look(cur)
	}
	return t, ok
}

// The values of the x-tier schema annotation.
const (
	TierContract   = "contract"
	TierConvention = "convention"
)

// mergeTypeBranches turns "anyOf: [{type: string}, {type: integer}]" failing
// at one place into a single type error wanting "string or integer".
func (v *Validator) mergeTypeBranches(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	merged := &kind.Type{}
	var loc []string
	for i, c := range e.Causes {
		ls := v.leaves(c, "", tier{})
		if len(ls) != 1 {
			return nil
		}
		t, ok := ls[0].err.ErrorKind.(*kind.Type)
		if !ok {
			return nil
		}
		if i > 0 && strings.Join(ls[0].err.InstanceLocation, "/") != strings.Join(loc, "/") {
			return nil
		}
		loc = ls[0].err.InstanceLocation
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
func (v *Validator) describe(doc *artifact.Document, value any, prefix []string, l leaf) []Finding {
	e := l.err
	loc := append(append([]string(nil), prefix...), e.InstanceLocation...)
	field := fieldName(e.InstanceLocation)
	if doc.Kind.ID == "autopilot.learnings" {
		field = learningsField(e.InstanceLocation)
	}
	hint := ""
	if l.hint != "" {
		hint = " — " + l.hint
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		names := make([]string, len(k.Missing))
		for i, m := range k.Missing {
			names[i] = fieldName(appendTok(e.InstanceLocation, m))
		}
		word := "field"
		if len(names) > 1 {
			word = "fields"
		}
		return []Finding{v.finding(doc, loc, fmt.Sprintf("missing required %s %s", word, strings.Join(names, ", "))+hint)}
	case *kind.AdditionalProperties:
		var out []Finding
		for _, p := range k.Properties {
			out = append(out, v.finding(doc, append(loc, p), fmt.Sprintf("unknown field %s: it is not part of this artifact's contract (check the spelling)", fieldName(appendTok(e.InstanceLocation, p)))+hint))
		}
		return out
	case *kind.Dependency, *kind.DependentRequired:
		return []Finding{v.finding(doc, loc, fmt.Sprintf("%s: %s", field, e.ErrorKind.LocalizedString(printer))+hint)}
	}
	msg := v.message(e, field, artifact.ValueAt(value, e.InstanceLocation), l.hint != "", artifact.FormatOf(doc.Kind, doc.Path) == artifact.FormatYAML)
	if hint != "" && strings.Contains(msg, " — ") {
		hint = ";" + strings.TrimPrefix(hint, " —")
	}
	if doc.Kind.ID == "autopilot.learnings" {
		msg = strings.Replace(msg, " has no entry of the required form", " lacks a required line", 1)
	}
	return []Finding{v.finding(doc, loc, msg+hint)}
}

// message words one violation. hinted says the schema author's hint will
// follow (so the raw pattern need not be shown); yaml says the file is YAML
// (so YAML advice applies). Violations of a size or a bound are worded by
// limitMessage.
func (v *Validator) message(e *jsonschema.ValidationError, field string, got any, hinted, yaml bool) string {
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		want := v.wantTypes(e, k.Want)
		gotWord := typeWord(k.Got)
		if k.Got == "number" {
			gotWord = display(got)
		}
		msg := fmt.Sprintf("%s must be %s, got %s", field, want, gotWord)
		if k.Got == "string" && len(k.Want) == 1 && k.Want[0] == "array" && yaml {
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
		if hinted {
			return fmt.Sprintf("%s is %s, which is not of the expected form", field, display(k.Got))
		}
		return fmt.Sprintf("%s is %s, which does not match the pattern %s", field, display(k.Got), code(k.Want))
	case *kind.Format:
		switch k.Want {
		case "uri":
			return fmt.Sprintf("%s is %s, which is not a full URL (with a scheme such as https://)", field, display(k.Got))
		case "date":
			return fmt.Sprintf("%s is %s, which is not a date (YYYY-MM-DD)", field, display(k.Got))
		}
		return fmt.Sprintf("%s is %s, which is not a valid %s", field, display(k.Got), k.Want)
	case *kind.FalseSchema:
		return fmt.Sprintf("%s is not allowed here", field)
	case *kind.Not:
		switch got {
		case nil:
			return fmt.Sprintf("%s must not be null", field)
		case "":
			return fmt.Sprintf("%s must not be empty", field)
		}
		return fmt.Sprintf("%s must not be %s", field, display(got))
	case *kind.PropertyNames:
		return fmt.Sprintf("%s has an invalid field name %s", field, display(k.Property))
	}
	if msg, ok := limitMessage(e.ErrorKind, field); ok {
		return msg
	}
	return fmt.Sprintf("%s: %s", field, e.ErrorKind.LocalizedString(printer))
}

// limitMessage words a violation of a size (entries, characters, fields,
// matching entries, unique entries) or of a numeric bound; ok is false for
// any other kind.
func limitMessage(ek jsonschema.ErrorKind, field string) (msg string, ok bool) {
	switch k := ek.(type) {
	case *kind.Contains:
		return fmt.Sprintf("%s has no entry of the required form", field), true
	case *kind.MinContains:
		return fmt.Sprintf("%s must have at least %d entries of the required form, has %d", field, k.Want, len(k.Got)), true
	case *kind.MaxContains:
		return fmt.Sprintf("%s must have at most %d entries of this form, has %d", field, k.Want, len(k.Got)), true
	case *kind.MinItems:
		if k.Want == 1 {
			return fmt.Sprintf("%s must not be empty", field), true
		}
		return fmt.Sprintf("%s must have at least %d entries, has %d", field, k.Want, k.Got), true
	case *kind.MaxItems:
		return fmt.Sprintf("%s must have at most %d entries, has %d", field, k.Want, k.Got), true
	case *kind.MinLength:
		if k.Want == 1 {
			return fmt.Sprintf("%s must not be empty", field), true
		}
		return fmt.Sprintf("%s must be at least %d characters long, is %d", field, k.Want, k.Got), true
	case *kind.MaxLength:
		return fmt.Sprintf("%s must be at most %d characters long, is %d", field, k.Want, k.Got), true
	case *kind.MinProperties:
		if k.Want == 1 {
			return fmt.Sprintf("%s must not be empty", field), true
		}
		return fmt.Sprintf("%s must have at least %d fields, has %d", field, k.Want, k.Got), true
	case *kind.MaxProperties:
		return fmt.Sprintf("%s must have at most %d fields, has %d", field, k.Want, k.Got), true
	case *kind.UniqueItems:
		return fmt.Sprintf("%s must not repeat entries: entries %d and %d are the same", field, k.Duplicates[0]+1, k.Duplicates[1]+1), true
	case *kind.Minimum:
		return fmt.Sprintf("%s must be at least %s, got %s", field, ratString(k.Want), ratString(k.Got)), true
	case *kind.Maximum:
		return fmt.Sprintf("%s must be at most %s, got %s", field, ratString(k.Want), ratString(k.Got)), true
	case *kind.ExclusiveMinimum:
		return fmt.Sprintf("%s must be greater than %s, got %s", field, ratString(k.Want), ratString(k.Got)), true
	case *kind.ExclusiveMaximum:
		return fmt.Sprintf("%s must be less than %s, got %s", field, ratString(k.Want), ratString(k.Got)), true
	}
	return "", false
}

// wantTypes names the wanted types, saying "a list of strings" where the
// schema says what the items are.
func (v *Validator) wantTypes(e *jsonschema.ValidationError, want []string) string {
	var words []string
	for _, w := range want {
		if t, ok := artifact.ValueAt(v.schemaObject(e), []string{"items", "type"}).(string); ok && w == "array" {
			words = append(words, "a list of "+plural(t))
			continue
		}
		words = append(words, typeWord(w))
	}
	return strings.Join(words, " or ")
}

// ownHint returns the "x-hint" annotation of the schema object that failed:
// a schema author's advice for the fix.
func (v *Validator) ownHint(e *jsonschema.ValidationError) string {
	h, _ := artifact.ValueAt(v.schemaObject(e), []string{"x-hint"}).(string)
	return h
}

// schemaObject resolves the error's schema location in the raw schema docs.
func (v *Validator) schemaObject(e *jsonschema.ValidationError) any {
	url, frag, _ := strings.Cut(e.SchemaURL, "#")
	doc, ok := v.raw[url]
	if !ok {
		return nil
	}
	return artifact.ValueAt(doc, artifact.SplitPointer(frag))
}

// fieldName renders an instance location as a readable field path in
// backquotes, e.g. `stories[0].acceptance_criteria`.
func fieldName(loc []string) string {
	if len(loc) == 0 {
		return "the document"
	}
	if i, err := strconv.Atoi(loc[0]); err == nil {
		// A top-level list: people count entries from 1.
		entry := fmt.Sprintf("entry %d", i+1)
		if len(loc) == 1 {
			return entry
		}
		return code(joinField(loc[1:])) + " of " + entry
	}
	return code(joinField(loc))
}

// learningsField names a place in learnings.md the way its author sees it:
// the file is Markdown, its JSON shape is phasegate's own.
func learningsField(loc []string) string {
	switch {
	case len(loc) == 1 && loc[0] == "title":
		return "the first line"
	case len(loc) >= 3 && loc[0] == "entries" && loc[2] == "heading":
		return "the heading"
	case len(loc) >= 3 && loc[0] == "entries" && loc[2] == "lines":
		return "the entry under this heading"
	}
	return fieldName(loc)
}

func appendTok(loc []string, tok string) []string {
	return append(append([]string(nil), loc...), tok)
}

func joinField(loc []string) string {
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
	return b.String()
}

func code(s string) string { return "`" + s + "`" }

// typeWords names the JSON Schema types: one value of the type, and many.
var typeWords = map[string][2]string{
	"object":  {"a mapping", "mappings"},
	"array":   {"a list", "lists"},
	"string":  {"a string", "strings"},
	"integer": {"a whole number", "whole numbers"},
	"number":  {"a number", "numbers"},
	"boolean": {"true or false", "booleans"},
	"null":    {"null", "nulls"},
}

func typeWord(t string) string { return cmp.Or(typeWords[t][0], t) }

func plural(t string) string { return cmp.Or(typeWords[t][1], t+"s") }

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
