package artifact

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// treeDecode is Decode through the node tree for every format: what Decode
// did for JSON and JSONL before they were decoded straight to their value.
func treeDecode(path string, kind *Kind, data []byte, limits Limits) *Document {
	limits = limits.withDefaults()
	doc := &Document{Path: path, Kind: kind}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	decodeTree(doc, FormatOf(kind, path), data, limits)
	return doc
}

// sameDecode fails unless Decode's direct JSON value and the tree decoder
// agree on everything a caller sees: the value, whether it decoded, the
// problems, and the position of every node of the value.
func sameDecode(t *testing.T, path string, kind *Kind, data []byte, limits Limits) {
	t.Helper()
	if bytes.IndexByte(data, 0) >= 0 || !validUTF8(data) || int64(len(data)) > limits.withDefaults().MaxFileSize {
		return // refused before any parser sees the bytes
	}
	got := Decode(path, kind, data, limits)
	want := treeDecode(path, kind, data, limits)
	if got.Decoded != want.Decoded || !reflect.DeepEqual(got.Value, want.Value) {
		t.Fatalf("%q: value %#v (decoded %v), tree decoder %#v (decoded %v)", data, got.Value, got.Decoded, want.Value, want.Decoded)
	}
	if !reflect.DeepEqual(got.Problems, want.Problems) {
		t.Fatalf("%q: problems\n %v\nthe tree decoder's\n %v", data, got.Problems, want.Problems)
	}
	budget := 200
	locate := func(ptr []string) Pos {
		if got.lazy != nil {
			got.lazy.scans.Store(0) // scan every time, not only the first maxScans
		}
		return got.Locate(ptr)
	}
	walkPointers(want.Value, nil, &budget, func(ptr []string) {
		if g, w := locate(ptr), want.Locate(ptr); g != w {
			t.Fatalf("%q: %v located at %v, the tree decoder's at %v", data, ptr, g, w)
		}
	})
	for _, ptr := range [][]string{nil, {"0"}, {"a"}, {"a", "0"}, {"zz"}, {"0", "a", "1"}, {"01"}, {"a", "zz", "0"}, {"9"}} {
		if g, w := locate(ptr), want.Locate(ptr); g != w {
			t.Fatalf("%q: %v located at %v, the tree decoder's at %v", data, ptr, g, w)
		}
	}
}

func validUTF8(b []byte) bool { return encodingProblem(b) == nil }

var traceKind = KindByID("autopilot.trace")

// TestJSONValueMatchesTree holds the direct JSON and JSONL decoder to the
// tree decoder on the seeds and on the cases where they could part: the
// value and node budgets, duplicate keys (whose values are left out, nested
// problems and all), problems past the listing limit, a JSONL line that
// breaks a limit or does not parse after one that did.
func TestJSONValueMatchesTree(t *testing.T) {
	many := func(n int, f func(i int) string, sep string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f(i)
		}
		return strings.Join(parts, sep)
	}
	dupObject := "{" + many(150, func(i int) string { return fmt.Sprintf(`"k%d": 1, "k%d": {"x": 1, "x": 2}`, i, i) }, ", ") + "}"
	cases := []struct {
		name   string
		data   string
		limits Limits
	}{
		{"nested duplicate in a duplicate's value", `{"a": {"b": 1}, "a": {"c": 1, "c": 2}, "d": {"e": 1, "e": 2}}`, DefaultLimits},
		{"duplicates past the listing limit", dupObject, DefaultLimits},
		{"node budget", `{"a": [1, 2, 3], "b": {"c": 4}}`, Limits{MaxNodes: 4}},
		{"node budget at the last value", `{"a": [1, 2, 3]}`, Limits{MaxNodes: 4}},
		{"node budget just met", `{"a": [1, 2, 3]}`, Limits{MaxNodes: 5}},
		{"node budget then a syntax error", `{"a": [1, 2, 3], "b": }`, Limits{MaxNodes: 2}},
		{"duplicate then a syntax error", `{"a": 1, "a": 2, "b" 3}`, DefaultLimits},
		{"depth", `{"a": [[[1]]]}`, Limits{MaxDepth: 3}},
		{"depth just met", `{"a": [[1]]}`, Limits{MaxDepth: 3}},
		{"numbers", `[0, -0, 1.5, -1e-400, 1e400, 12345678901234567890, -9223372036854775808, 9223372036854775808, 1E+2]`, DefaultLimits},
		{"minified long line", "[" + many(3000, func(i int) string { return `{"é":1,"é":2}` }, ",") + "]", DefaultLimits},
		{"duplicate key after a multi-line value", "{\n \"a\": [\n1,\n2],\n  \"é\": 1, \"é\": 2\n}", DefaultLimits},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sameDecode(t, "x.json", nil, []byte(tc.data), tc.limits)
			line := strings.ReplaceAll(tc.data, "\n", " ")
			sameDecode(t, "t.jsonl", traceKind, []byte(line+"\n"+line+"\n"), tc.limits)
		})
	}
	jsonl := []struct {
		name   string
		data   string
		limits Limits
	}{
		{"budget spans lines", "{\"a\": 1}\n{\"b\": [1, 2]}\n{\"c\": 3}\n", Limits{MaxNodes: 4}},
		{"a line past the budget that does not parse", "{\"a\": 1}\n{\"b\": [1, 2, 3, 4]\n{\"c\": 3}\n", Limits{MaxNodes: 4}},
		{"bad lines after the budget", "{\"a\": [1, 2, 3]}\n{\"b\": 1}\nnope\n\n{\"c\": }\n", Limits{MaxNodes: 3}},
		{"duplicate on one line only", "{\"a\": 1, \"a\": 2}\n{\"a\": 1}\n", DefaultLimits},
		{"many bad lines and duplicates", many(120, func(i int) string { return "x" }, "\n") + "\n" + many(120, func(i int) string { return `{"a":1,"a":2}` }, "\n"), DefaultLimits},
		{"many duplicates then bad lines", many(120, func(i int) string { return `{"a":1,"a":2}` }, "\n") + "\n" + many(120, func(i int) string { return "" }, "\n"), DefaultLimits},
		{"CRLF", "{\"a\": 1}\r\n{\"a\": 1, \"a\": 2}\r\n", DefaultLimits},
		{"Unicode space line", "{\"a\": 1}\n\u00a0\u2028\n{\"a\": 2}", DefaultLimits},
	}
	for _, tc := range jsonl {
		t.Run("jsonl/"+tc.name, func(t *testing.T) {
			sameDecode(t, "t.jsonl", traceKind, []byte(tc.data), tc.limits)
		})
	}
	for _, s := range jsonSeeds {
		sameDecode(t, "x.json", nil, []byte(s), DefaultLimits)
	}
	for _, s := range jsonlSeeds {
		sameDecode(t, "t.jsonl", traceKind, []byte(s), DefaultLimits)
	}
}

// TestJSONPositionsBuiltOnDemand checks that a JSON document keeps no node
// tree: its first Locates scan the bytes, later ones build the tree once;
// WithoutPositions drops the means to do either.
func TestJSONPositionsBuiltOnDemand(t *testing.T) {
	d := Decode("x.json", nil, []byte("{\n  \"a\": [1,\n    {\"b\": 2}]\n}\n"), DefaultLimits)
	if d.root != nil || d.lazy == nil || d.lazy.root != nil {
		t.Fatalf("a decoded JSON document holds a node tree before Locate")
	}
	for i := 0; i < maxScans+2; i++ {
		if got, want := d.Locate([]string{"a", "1", "b"}), (Pos{3, 6}); got != want {
			t.Errorf("Locate %d = %v, want %v", i, got, want)
		}
		if built := d.lazy.root != nil; built != (i >= maxScans) {
			t.Errorf("after Locate %d the tree is built: %v", i, built)
		}
	}
	w := Decode("x.json", nil, []byte("{\"a\": 1}"), DefaultLimits).WithoutPositions()
	if got := w.Locate([]string{"a"}); got != (Pos{1, 1}) {
		t.Errorf("WithoutPositions().Locate = %v, want 1:1", got)
	}
}

func FuzzJSONValueMatchesTree(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s), uint16(0))
	}
	for _, s := range jsonlSeeds {
		f.Add([]byte(s), uint16(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, nodes uint16) {
		limits := Limits{MaxNodes: int(nodes % 64), MaxDepth: int(nodes/64%8) + 1}
		if nodes%2 == 0 {
			limits = DefaultLimits
		}
		sameDecode(t, "x.json", nil, data, limits)
		sameDecode(t, "t.jsonl", traceKind, data, limits)
	})
}
