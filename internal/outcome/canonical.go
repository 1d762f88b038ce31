package outcome

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The canonical YAML of an outcome is a deterministic serialisation of its
// decoded value, so the same outcome always has the same bytes and the same
// ID, whoever wrote the file and however it was formatted:
//
//   - Key order. The top-level mapping starts with phase, feature, issue,
//     produced, findings, pending_decisions (those present), in that order;
//     each produced entry with artifact, location; each finding with type,
//     title, reasoning, proposed_category; each decision with id, type,
//     question, options, recommended, blocking, reasoning,
//     recommendation_reasoning. All other keys, and the keys of every other
//     mapping, follow in byte order.
//   - Layout. Block style only: two-space indentation, sequences indented
//     under their key ("key:\n  - item"), a mapping in a sequence starts on
//     the dash's line. Empty collections are [] and {}. Every line ends with
//     "\n", and no line has trailing spaces.
//   - Scalars. null, true, false; integers in decimal; floats in the
//     shortest form that reads back as the same float64, with ".0" added
//     when it would otherwise read as an integer; big numbers (json.Number)
//     as written. A string is plain when it starts with an ASCII letter,
//     holds only ASCII letters, digits, space and _.,;?!'()/+=- , does not
//     end with a space, and is not a word YAML 1.1 or 1.2 reads as a
//     boolean or null (yes, no, on, off, y, n, true, false, null, in any
//     case). Every other string is double-quoted, with \" \\ \n \t \r, \xNN
//     for the other control characters, \uNNNN for the invisible and
//     direction-changing characters of invisibleRune, and \x3C / \x3E for
//     the < of "<!--" and the > of "-->", so the canonical YAML can never
//     hold an HTML comment delimiter (nothing in it can end or forge the
//     comment's marker), and \x40 for "@", so that not even the plain text
//     of the comment (an e-mail notification, a reply quoting it) holds an
//     agent-written @mention. All other characters are written as
//     themselves.
//
// The rules use no Unicode tables, so the bytes do not change with the Go
// version. Decoding the canonical YAML with internal/artifact gives back a
// value equal to the one serialised (for values that came from
// internal/artifact's decoder; a json.Number that fits a float64 comes back
// as a float64).

// maxCanonicalDepth bounds the nesting Canonical follows (internal/artifact
// refuses deeper documents anyway).
const maxCanonicalDepth = 10_000

// Canonical serialises an outcome's decoded value as canonical YAML. v must
// be a mapping of the JSON data model; an error says what cannot be
// serialised (another type, a NaN, text that is not UTF-8).
func Canonical(v any) ([]byte, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("canonical yaml: outcome is %s, not a mapping", describe(v))
	}
	e := &emitter{}
	if len(m) == 0 {
		e.b.WriteString("{}\n")
		return e.b.Bytes(), nil
	}
	if err := e.mapping(m, topOrder, itemOrders, 0, false, 0); err != nil {
		return nil, fmt.Errorf("canonical yaml: %w", err)
	}
	return e.b.Bytes(), nil
}

// ID is the outcome's identity: the lower-case hex SHA-256 of its canonical
// YAML.
func ID(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])
}

var (
	topOrder = []string{"phase", "feature", "issue", "produced", "findings", "pending_decisions"}
	// itemOrders are the key orders of the mappings that are items of the
	// top-level sequences.
	itemOrders = map[string][]string{
		"produced":          {"artifact", "location"},
		"findings":          {"type", "title", "reasoning", "proposed_category"},
		"pending_decisions": {"id", "type", "question", "options", "recommended", "blocking", "reasoning", "recommendation_reasoning"},
	}
)

type emitter struct {
	b bytes.Buffer
}

// orderedKeys is m's keys: those of known that are present, in that order,
// then the rest in byte order.
func orderedKeys(m map[string]any, known []string) []string {
	keys := slices.DeleteFunc(slices.Clone(known), func(k string) bool { _, ok := m[k]; return !ok })
	rest := slices.DeleteFunc(slices.Sorted(maps.Keys(m)), func(k string) bool { return slices.Contains(known, k) })
	return append(keys, rest...)
}

// mapping writes a non-empty mapping at indentation n, its keys in the
// order known, the items of its sequences' mappings in the order items
// has for their key. When inline, the first key follows what is already
// on the line ("- ").
func (e *emitter) mapping(m map[string]any, known []string, items map[string][]string, n int, inline bool, depth int) error {
	if depth > maxCanonicalDepth {
		return fmt.Errorf("nesting is deeper than %d levels", maxCanonicalDepth)
	}
	for i, k := range orderedKeys(m, known) {
		if i > 0 || !inline {
			e.b.WriteString(strings.Repeat(" ", n))
		}
		if err := e.str(k); err != nil {
			return err
		}
		e.b.WriteByte(':')
		if err := e.value(m[k], n, depth+1, items[k]); err != nil {
			return err
		}
	}
	return nil
}

// sequence writes a non-empty sequence at indentation n, the keys of its
// mappings in the order known.
func (e *emitter) sequence(s []any, known []string, n int, inline bool, depth int) error {
	if depth > maxCanonicalDepth {
		return fmt.Errorf("nesting is deeper than %d levels", maxCanonicalDepth)
	}
	for i, item := range s {
		if i > 0 || !inline {
			e.b.WriteString(strings.Repeat(" ", n))
		}
		e.b.WriteString("- ")
		switch x := item.(type) {
		case map[string]any:
			if len(x) > 0 {
				if err := e.mapping(x, known, nil, n+2, true, depth+1); err != nil {
					return err
				}
				continue
			}
		case []any:
			if len(x) > 0 {
				if err := e.sequence(x, nil, n+2, true, depth+1); err != nil {
					return err
				}
				continue
			}
		}
		if err := e.scalar(item); err != nil {
			return err
		}
		e.b.WriteByte('\n')
	}
	return nil
}

// value writes the value after "key:" of a mapping at indentation n; the
// keys of the mappings of a sequence in the order items.
func (e *emitter) value(v any, n int, depth int, items []string) error {
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 0 {
			e.b.WriteByte('\n')
			return e.mapping(x, nil, nil, n+2, false, depth)
		}
	case []any:
		if len(x) > 0 {
			e.b.WriteByte('\n')
			return e.sequence(x, items, n+2, false, depth)
		}
	}
	e.b.WriteByte(' ')
	if err := e.scalar(v); err != nil {
		return err
	}
	e.b.WriteByte('\n')
	return nil
}

var jsonNumberRE = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)

// scalar writes a scalar or an empty collection.
func (e *emitter) scalar(v any) error {
	switch x := v.(type) {
	case nil:
		e.b.WriteString("null")
	case bool:
		e.b.WriteString(strconv.FormatBool(x))
	case int:
		e.b.WriteString(strconv.Itoa(x))
	case int64:
		e.b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		s, err := formatFloat(x)
		if err != nil {
			return err
		}
		e.b.WriteString(s)
	case json.Number:
		if !jsonNumberRE.MatchString(string(x)) {
			return fmt.Errorf("number %q is not a decimal number", truncateText(string(x)))
		}
		e.b.WriteString(string(x))
	case string:
		return e.str(x)
	case map[string]any:
		e.b.WriteString("{}")
	case []any:
		e.b.WriteString("[]")
	default:
		return fmt.Errorf("value of type %T cannot be serialised", v)
	}
	return nil
}

// formatFloat spells f so that it reads back as the same float64 and never
// as an integer.
func formatFloat(f float64) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", fmt.Errorf("number %v has no YAML spelling that reads back as a number", f)
	}
	abs := math.Abs(f)
	var s string
	if abs == 0 || (abs >= 1e-6 && abs < 1e21) {
		s = strconv.FormatFloat(f, 'f', -1, 64)
	} else {
		s = strconv.FormatFloat(f, 'e', -1, 64)
	}
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s, nil
}

// reservedPlain are words some YAML reader takes for a boolean or null.
var reservedPlain = map[string]bool{
	"y": true, "n": true, "yes": true, "no": true, "on": true, "off": true,
	"true": true, "false": true, "null": true,
}

// plainSafe reports whether s can be written as a plain scalar and read
// back as the same string by every YAML reader.
func plainSafe(s string) bool {
	if s == "" || s[len(s)-1] == ' ' {
		return false
	}
	if c := s[0]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte(" _.,;?!'()/+=-", c) >= 0:
		default:
			return false
		}
	}
	return !reservedPlain[strings.ToLower(s)]
}

// str writes a string scalar, plain when safe, else double-quoted.
func (e *emitter) str(s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("text is not valid UTF-8")
	}
	if plainSafe(s) {
		e.b.WriteString(s)
		return nil
	}
	e.b.WriteByte('"')
	for i, r := range s {
		switch {
		case r == '"':
			e.b.WriteString(`\"`)
		case r == '\\':
			e.b.WriteString(`\\`)
		case r == '\n':
			e.b.WriteString(`\n`)
		case r == '\t':
			e.b.WriteString(`\t`)
		case r == '\r':
			e.b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			fmt.Fprintf(&e.b, `\x%02X`, r)
		case invisibleRune(r) || r == 0xfffe || r == 0xffff:
			if r > 0xffff {
				fmt.Fprintf(&e.b, `\U%08X`, r)
			} else {
				fmt.Fprintf(&e.b, `\u%04X`, r)
			}
		case r == '@':
			e.b.WriteString(`\x40`)
		case r == '<' && strings.HasPrefix(s[i:], "<!--"):
			e.b.WriteString(`\x3C`)
		case r == '>' && strings.HasSuffix(s[:i], "--"):
			e.b.WriteString(`\x3E`)
		default:
			e.b.WriteRune(r)
		}
	}
	e.b.WriteByte('"')
	return nil
}

// invisibleRune reports whether r is a character that shows as nothing, as
// white space that is not a space, or that changes the direction of the
// text around it: spoofing material in a review. The list is fixed (no
// Unicode tables) so that canonical bytes never change with the Go version.
func invisibleRune(r rune) bool {
	switch r {
	case 0x00a0, 0x00ad, 0x034f, 0x061c, 0x115f, 0x1160,
		0x17b4, 0x17b5, 0x180e, 0x3000, 0x3164, 0xfeff, 0xffa0:
		return true
	}
	return r >= 0x2000 && r <= 0x200f || // spaces, zero-width characters, LRM/RLM
		r >= 0x2028 && r <= 0x202f || // line/paragraph separators, bidi embeddings
		r >= 0x205f && r <= 0x206f || // word joiner, invisible operators, bidi isolates
		r >= 0xfe00 && r <= 0xfe0f || // variation selectors
		r >= 0xfff9 && r <= 0xfffb || // interlinear annotations
		r >= 0xe0000 && r <= 0xe0fff // tags and variation selectors supplement
}

// truncateText shortens s for an error message.
func truncateText(s string) string {
	if len(s) <= 40 {
		return s
	}
	i := 40
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
