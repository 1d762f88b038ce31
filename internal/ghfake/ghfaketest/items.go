package ghfaketest

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
)

// The item memo: a list answer (an array of issues, comments, pulls,
// activity) differs from the one before it by an item or two, so its
// body's verdict is missed, but each of its items was decided before.
// checkItems decides on such a body item by item, each distinct item once.
//
// It gives exactly what openapi3filter.ValidateResponse gives (through
// problems): for a response schema that is nothing but an array of an
// items schema (no minItems, maxItems, uniqueItems, enum, not, oneOf,
// anyOf, allOf: plainArray), kin-openapi's visitJSONArray visits each item
// against the items schema, marks the item's errors with its index
// (markSchemaErrorIndex) and splices them in order; so the body's problems
// are the items' problems, in order, each marked one's JSON pointer led by
// the item's index. An item is decided alone against the items schema;
// when it breaks it, it is decided again as a one-item array against the
// array schema, and the two lists of problems tell which problems
// kin-openapi marks (their pointers gain a leading "/0"). Anything else
// (a body that is not a plain JSON array, an item that is not exactly one
// JSON value, two lists that differ in more than that mark) goes the
// whole-body way. TestItemVerdictsAreKinOpenAPIs compares the two ways on
// the fake's answers and on broken ones.

// plainArray is the schema the response of route for status and
// Content-Type ctype is checked against, when that schema is a plain array
// of an items schema and the body is decoded as JSON; nil otherwise.
func plainArray(route *routers.Route, status int, ctype string) *openapi3.Schema {
	responses := route.Operation.Responses
	switch status {
	case http.StatusNotModified, http.StatusPermanentRedirect, http.StatusTemporaryRedirect, http.StatusMovedPermanently:
		return nil // not checked by ValidateResponse
	}
	if responses.Len() == 0 {
		return nil
	}
	resp := responses.Status(status)
	if resp == nil {
		resp = responses.Default()
	}
	if resp == nil || resp.Value == nil {
		return nil
	}
	content := resp.Value.Content.Get(ctype)
	if content == nil || content.Encoding[""] != nil || content.Schema == nil {
		return nil
	}
	if mt, _, _ := strings.Cut(ctype, ";"); mt != "application/json" { // kin-openapi's parseMediaType and JSONBodyDecoder
		return nil
	}
	s := content.Schema.Value
	if s == nil || !s.Type.Permits(openapi3.TypeArray) || s.Not != nil || len(s.OneOf) > 0 || len(s.AnyOf) > 0 ||
		len(s.AllOf) > 0 || len(s.Enum) > 0 || s.MinItems != 0 || s.MaxItems != nil || s.UniqueItems ||
		s.Items == nil || s.Items.Value == nil {
		return nil
	}
	return s
}

// checkItems is the verdict on body, an answer checked against a plain
// array of items (arrayItems), decided item by item; ok is false when the
// body must be decided whole. host is the fake's (addresslessSum).
func (v *Validator) checkItems(array *openapi3.Schema, body []byte, host string) (probs []problem, ok bool) {
	items := array.Items.Value
	spans, ok := splitArray(body)
	if !ok {
		return nil, false
	}
	for i, span := range spans {
		item := body[span[0]:span[1]]
		key := itemKey{schema: items, item: addresslessSum(item, host)}
		iv, seen := v.items.get(key)
		if !seen {
			iv = v.decideItem(items, array, item)
			v.items.put(key, iv)
		}
		if !iv.ok {
			return nil, false
		}
		for _, p := range iv.probs {
			if p.marked {
				p.pointer = "/" + strconv.Itoa(i) + strings.TrimSuffix(p.pointer, "/")
			}
			probs = append(probs, p.problem)
		}
	}
	return probs, true
}

// itemProblem is a problem of an item decided alone; marked: kin-openapi
// leads its pointer with the item's index.
type itemProblem struct {
	problem
	marked bool
}

// itemVerdict is an item's problems; ok is false when the item must be
// decided as part of its body (it is not exactly one JSON value, or
// kin-openapi's marks could not be told).
type itemVerdict struct {
	probs []itemProblem
	ok    bool
}

// decideItem is the verdict on an item of a shape decided before (the
// shape memo), or else decided (decideItemBytes).
func (v *Validator) decideItem(items, array *openapi3.Schema, item []byte) itemVerdict {
	if v.classes == nil {
		return decideItemBytes(items, array, item)
	}
	sum, shaped := v.classes.shape(item)
	shape := shapeKey{item: itemKey{schema: items, item: sum}}
	if shaped {
		if iv, ok := v.shapes.get(shape); ok {
			return iv
		}
	}
	iv := decideItemBytes(items, array, item)
	if shaped {
		v.shapes.put(shape, iv)
	}
	return iv
}

// decideItemBytes decodes item as JSONBodyDecoder does and visits it as
// ValidateResponse's VisitJSON would in visitJSONArray.
func decideItemBytes(items, array *openapi3.Schema, item []byte) itemVerdict {
	dec := json.NewDecoder(bytes.NewReader(item))
	dec.UseNumber()
	var value any
	if err := dec.Decode(&value); err != nil || dec.InputOffset() != int64(len(item)) {
		return itemVerdict{}
	}
	opts := []openapi3.SchemaValidationOption{openapi3.MultiErrors(), openapi3.VisitAsResponse()}
	err := items.VisitJSON(value, opts...)
	if err == nil {
		return itemVerdict{ok: true}
	}
	alone := problems("response", err)
	wrapped := problems("response", array.VisitJSON([]any{value}, opts...))
	if len(alone) != len(wrapped) {
		return itemVerdict{}
	}
	out := make([]itemProblem, len(alone))
	for k, a := range alone {
		w := wrapped[k]
		if a.side != w.side || a.reason != w.reason || !reflect.DeepEqual(a.value, w.value) {
			return itemVerdict{}
		}
		switch {
		case w.pointer == a.pointer:
		case w.pointer == "/0"+strings.TrimSuffix(a.pointer, "/") && strings.HasPrefix(a.pointer, "/"):
			out[k].marked = true
		default:
			return itemVerdict{}
		}
		out[k].problem = a
	}
	return itemVerdict{probs: out, ok: true}
}

// splitArray finds the items of body, a JSON array, as [start, end)
// offsets without the white space around them; ok is false when body is
// not "[", items separated by ",", "]" with white space around them and
// nothing after (an item's own syntax is its decoder's business: an item
// whose brackets do not match is not exactly one JSON value). Strings are
// skipped with bytes.IndexByte, so that most bytes are not looked at one
// by one.
func splitArray(body []byte) (spans [][2]int, ok bool) {
	i := skipSpace(body, 0)
	if i == len(body) || body[i] != '[' {
		return nil, false
	}
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == ']' {
		return nil, skipSpace(body, i+1) == len(body)
	}
	start, depth := i, 0
	for ; i < len(body); i++ {
		switch body[i] {
		case '"':
			end, ok := stringEnd(body, i+1)
			if !ok {
				return nil, false
			}
			i = end
		case '[', '{':
			depth++
		case ']', '}':
			if depth > 0 {
				depth--
				continue
			}
			if body[i] != ']' {
				return nil, false
			}
			spans, ok = appendSpan(spans, body, start, i)
			return spans, ok && skipSpace(body, i+1) == len(body)
		case ',':
			if depth == 0 {
				if spans, ok = appendSpan(spans, body, start, i); !ok {
					return nil, false
				}
				start = i + 1
			}
		}
	}
	return nil, false
}

// appendSpan appends body[start:end] without its white space, which must
// not be empty.
func appendSpan(spans [][2]int, body []byte, start, end int) ([][2]int, bool) {
	start = skipSpace(body, start)
	for end > start && isSpace(body[end-1]) {
		end--
	}
	return append(spans, [2]int{start, end}), end > start
}

// stringEnd is the offset of the quote that ends the string whose content
// starts at i.
func stringEnd(body []byte, i int) (int, bool) {
	for {
		q := bytes.IndexByte(body[i:], '"')
		if q < 0 {
			return 0, false
		}
		q += i
		backslashes := 0
		for j := q - 1; j >= i && body[j] == '\\'; j-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return q, true
		}
		i = q + 1
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// isSpace is JSON's white space.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// itemKey is what an item's verdict depends on: the items schema and the
// item's bytes (addresslessSum, as verdictKey's body).
type itemKey struct {
	schema *openapi3.Schema
	item   [sha256.Size]byte
}
