package ghfaketest

import (
	"crypto/sha256"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"unicode/utf16"

	"github.com/getkin/kin-openapi/openapi3"
)

// The shape memo: the fake answers the same shapes again and again with
// other ids, SHAs, timestamps, bodies and URLs (a new comment, the next
// page of generated activity), so most bodies and items are new bytes;
// but whether such a value breaks the subset's response schemas does not
// depend on those values, only on what the schemas can tell apart:
//
//   - a string, by its enum (the subset's enums are all of strings), a
//     discriminator's mapping, its length against a minLength or maxLength
//     (the subset has one, a git ref's SHA) and the formats kin-openapi
//     checks (of the subset's, date-time): a string of printable ASCII
//     without escapes (its value is its bytes) that is none of the
//     subset's strings (enum values, mapping keys, property names, …) is
//     its class (its length against each bound, each format passed or
//     failed); any other string is itself;
//   - a number, by its type and the formats checked (int64): an integer of
//     at most 15 digits, in JSON's canonical spelling, is "an integer"; any
//     other number is itself;
//   - object keys, true, false, null and the structure are themselves.
//
// The subset holds no constraint that tells two values of a class apart
// or compares two values with each other (pattern, uniqueItems, minimum,
// maximum, multipleOf, an enum of numbers…: shapeClasses is off if it
// does, TestShapesOfTheSubset keeps it on). So two bodies (items) of the
// same shape are both valid or both not, and break the same checks; the
// shape memo remembers the shapes of the bodies and items found valid (or
// broken only where they hold null, as a label without a description),
// and a body or item of such a shape gets their verdict without a look.
// Another broken one is decided on its bytes, so that its problems name
// its own values.

// shapeClasses is what tells strings apart in the subset; nil when the
// subset constrains values in a way shapes do not capture.
type shapeClasses struct {
	literal map[string]bool                  // every string and key of the subset: a string value that is one is itself
	formats []openapi3.StringFormatValidator // the formats the subset uses that kin-openapi checks
	digit   []bool                           // formats[i] is one of digitFirst
	lengths []int                            // the subset's minLength and maxLength
}

// digitFirst are kin-openapi's regular expressions of formats (date,
// date-time) that a string not led by a digit cannot match, so that the
// classes do not run them on every URL (TestShapesOfTheSubset checks the
// formats checked are these expressions).
var digitFirst = map[string]string{"date": openapi3.FormatOfStringDate, "date-time": openapi3.FormatOfStringDateTime}

// valueKeywords are the constraints that tell values of one class apart:
// a subset with one gets no shape memo.
var valueKeywords = []string{"pattern", "uniqueItems", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "const"}

// newShapeClasses reads the subset (its JSON) for what shapes must keep.
func newShapeClasses(data []byte) (*shapeClasses, error) {
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	c := &shapeClasses{literal: map[string]bool{}}
	formats := map[string]bool{}
	ok := true
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			c.literal[v] = true
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for k, e := range v {
				c.literal[k] = true
				walk(e)
			}
			for _, k := range valueKeywords {
				if _, has := v[k]; has {
					ok = false
				}
			}
			if enum, has := v["enum"].([]any); has {
				for _, e := range enum {
					if _, isString := e.(string); !isString && e != nil {
						ok = false // an enum of numbers or objects
					}
				}
			}
			if f, has := v["format"].(string); has {
				formats[f] = true
			}
			for _, k := range []string{"minLength", "maxLength"} {
				if n, has := v[k].(float64); has {
					c.lengths = append(c.lengths, int(n))
				}
			}
		}
	}
	walk(doc)
	for f := range formats {
		if _, checked := openapi3.SchemaIntegerFormats[f]; checked && f != "int64" {
			ok = false // int32: a range an integer of 15 digits can leave
		}
		if _, checked := openapi3.SchemaNumberFormats[f]; checked {
			ok = false
		}
	}
	if !ok {
		return nil, nil
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for f := range formats {
			if _, checked := openapi3.SchemaStringFormats[f]; checked && !yield(f) {
				return
			}
		}
	})
	for _, f := range names {
		c.formats = append(c.formats, openapi3.SchemaStringFormats[f])
		c.digit = append(c.digit, strings.HasPrefix(digitFirst[f], "^[0-9]"))
	}
	slices.Sort(c.lengths)
	c.lengths = slices.Compact(c.lengths)
	return c, nil
}

// shape is the SHA-256 of b's shape, false when b is not JSON a shape
// can be told of (b must then be decided on its bytes).
func (c *shapeClasses) shape(b []byte) (sum [sha256.Size]byte, ok bool) {
	out := shapeBuffers.Get().(*[]byte)
	defer shapeBuffers.Put(out)
	s := (*out)[:0]
	for i := 0; i < len(b); {
		switch ch := b[i]; {
		case ch == '"':
			end, ok := stringEnd(b, i+1)
			if !ok {
				return sum, false
			}
			s = c.appendString(s, b, i, end)
			i = end + 1
		case ch == '-' || ch >= '0' && ch <= '9':
			end := i
			for end < len(b) && (b[end] >= '0' && b[end] <= '9' || b[end] == '+' || b[end] == '-' || b[end] == '.' || b[end] == 'e' || b[end] == 'E') {
				end++
			}
			s = appendNumber(s, b[i:end])
			i = end
		case ch == 0:
			return sum, false // not JSON outside strings, and it would forge a class
		default:
			s = append(s, ch)
			i++
		}
	}
	*out = s
	return sha256.Sum256(s), true
}

// appendString appends the string b[start:end+1] (quotes included), or
// its class when it is a value none of the subset's strings.
func (c *shapeClasses) appendString(s, b []byte, start, end int) []byte {
	raw := b[start : end+1]
	if next := skipSpace(b, end+1); next < len(b) && b[next] == ':' {
		return append(s, raw...) // a key
	}
	var v string
	if plain(raw[1 : len(raw)-1]) {
		v = string(raw[1 : len(raw)-1])
	} else if json.Unmarshal(raw, &v) != nil {
		return append(s, raw...) // not a JSON string: the decoder's business
	}
	if c.literal[v] {
		return append(s, raw...)
	}
	s = append(s, 0, 'S')
	for _, n := range c.lengths {
		s = append(s, byte(cmpInt(kinLength(v), n)+'1'))
	}
	for i, f := range c.formats {
		if c.digit[i] && (v == "" || v[0] < '0' || v[0] > '9') {
			s = append(s, '-') // fails without a look
		} else if f.Validate(v) == nil {
			s = append(s, '+')
		} else {
			s = append(s, '-')
		}
	}
	return append(s, 0)
}

// kinLength is a string's length as kin-openapi's minLength and maxLength
// count it.
func kinLength(v string) int {
	n := 0
	for _, r := range v {
		if utf16.IsSurrogate(r) {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// appendNumber appends the number n or, when an integer of at most 15
// digits spelled canonically, its class.
func appendNumber(s, n []byte) []byte {
	canonical := len(n) > 0 && len(n) <= 15 && (n[0] != '0' || len(n) == 1)
	for _, ch := range n {
		canonical = canonical && ch >= '0' && ch <= '9'
	}
	if canonical {
		return append(s, 0, 'N', 0)
	}
	return append(s, n...)
}

// plain: v is printable ASCII without backslashes, so that its bytes are
// its value.
func plain(v []byte) bool {
	for _, ch := range v {
		if ch < 0x20 || ch >= 0x7f || ch == '\\' {
			return false
		}
	}
	return true
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

var shapeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// shapeKey is a shape decided: of a body (verdictKey, its body the
// shape's sum) or of an item (itemKey).
type shapeKey struct {
	body verdictKey
	item itemKey
}

// shapeMemo holds the verdicts on the shapes decided: valid, or broken
// only where the body has null (every problem's value is null, so its
// problems are the same for every body of the shape: the nulls are part
// of the shape, and what breaks elsewhere is the same for all).
type shapeMemo struct {
	memo[shapeKey, itemVerdict]
}

// put remembers iv when it is the same for every body of the shape.
func (c *shapeMemo) put(k shapeKey, iv itemVerdict) {
	if !iv.ok {
		return
	}
	for _, p := range iv.probs {
		if p.value != nil || p.pointer == "" { // a value's, or not the schema's (a body that is not JSON)
			return
		}
	}
	c.memo.put(k, iv)
}
