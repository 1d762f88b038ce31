package artifact

import (
	"reflect"
	"strings"
	"testing"
)

func TestLocate(t *testing.T) {
	type want map[string]Pos // pointer → position
	tests := []struct {
		name string
		path string
		data string
		want want
	}{
		{
			name: "YAML block",
			path: "x.yaml",
			data: "day: 1\n" +
				"criteria_results:\n" +
				"  - criterion: a\n" +
				"    result: PASS\n" +
				"  -   criterion: b\n" +
				"nested:\n" +
				"  deeper:\n" +
				"    leaf: [x, y]\n",
			want: want{
				"":                              {1, 1},
				"/day":                          {1, 1},
				"/criteria_results":             {2, 1},
				"/criteria_results/0":           {3, 5},
				"/criteria_results/0/result":    {4, 5},
				"/criteria_results/1":           {5, 7},
				"/criteria_results/1/criterion": {5, 7},
				"/nested/deeper/leaf":           {8, 5},
				"/nested/deeper/leaf/1":         {8, 15},
			},
		},
		{
			name: "YAML flow",
			path: "x.yaml",
			data: "{a: [1, {b: 2}], c: {d: e}}\n",
			want: want{"/a": {1, 2}, "/a/0": {1, 6}, "/a/1": {1, 9}, "/a/1/b": {1, 10}, "/c/d": {1, 22}},
		},
		{
			name: "YAML with non-ASCII before the value",
			path: "x.yaml",
			data: "título: \"día\"\nlist: [ñ, 😀, x]\n",
			want: want{"/título": {1, 1}, "/list/2": {2, 14}},
		},
		{
			name: "YAML block scalar and comments",
			path: "x.yaml",
			data: "# header\n\na: |\n  text\n  more\n# between\nb: 2 # trailing\n",
			want: want{"/a": {3, 1}, "/b": {7, 1}},
		},
		{
			name: "YAML aliases locate at the anchor's content",
			path: "x.yaml",
			data: "base: &b\n  x: 1\n  y: [1, 2]\nuse: *b\n",
			want: want{"/use": {4, 1}, "/use/x": {2, 3}, "/use/y/1": {3, 10}},
		},
		{
			name: "YAML escaped pointer tokens",
			path: "x.yaml",
			data: "a/b: 1\n\"m~n\": 2\n\"~1\": 3\n",
			want: want{"/a~1b": {1, 1}, "/m~0n": {2, 1}, "/~01": {3, 1}},
		},
		{
			name: "missing paths locate the deepest existing node",
			path: "x.yaml",
			data: "a:\n  b:\n    - c: 1\n",
			want: want{
				"/nope":       {1, 1},
				"/a/nope":     {1, 1},
				"/a/b/5":      {2, 3},
				"/a/b/0/nope": {3, 7},
				"/a/b/0/c/x":  {3, 7},
				"/a/b/x":      {2, 3},
				"/a/b/-1":     {2, 3},
				"/a/b/00":     {2, 3},
				"/a/b/+0":     {2, 3},
			},
		},
		{
			name: "JSON pretty",
			path: "x.json",
			data: "{\n  \"a\": {\n    \"b\": [\n      10,\n      \"x\"\n    ]\n  },\n  \"c\": null\n}\n",
			want: want{"": {1, 1}, "/a": {2, 3}, "/a/b": {3, 5}, "/a/b/0": {4, 7}, "/a/b/1": {5, 7}, "/c": {8, 3}},
		},
		{
			name: "JSON minified with non-ASCII before the value",
			path: "x.json",
			data: `{"name":"Zoë ✓ 😀","items":[{"k":1},{"k":2}]}`,
			want: want{"/name": {1, 2}, "/items": {1, 19}, "/items/1": {1, 36}, "/items/1/k": {1, 37}},
		},
		{
			name: "JSON with CRLF and tabs",
			path: "x.json",
			data: "{\r\n\t\"a\": [\r\n\t\t1\r\n\t]\r\n}",
			want: want{"/a": {2, 2}, "/a/0": {3, 3}},
		},
		{
			name: "JSON with escaped keys",
			path: "x.json",
			data: `{"a\/b":{"c~d":1}}`,
			want: want{"/a~1b/c~0d": {1, 10}},
		},
		{
			name: "JSON after a BOM",
			path: "x.json",
			data: "\ufeff{\"a\": 1}",
			want: want{"/a": {1, 2}},
		},
		{
			name: "JSONL",
			path: "x.jsonl",
			data: "{\"a\":1}\n{\"a\":2,\"b\":[3]}\n",
			want: want{"": {1, 1}, "/0": {1, 1}, "/1": {2, 1}, "/1/b/0": {2, 13}, "/2": {1, 1}},
		},
		{
			name: "YAML with a CR-only line break",
			path: "x.yaml",
			data: "a: 1\rb: 2\nc: 3\n",
			want: want{"/a": {1, 1}, "/b": {1, 6}, "/c": {2, 1}},
		},
		{
			name: "YAML with a Unicode line separator in a string",
			path: "x.yaml",
			data: "a: \"x\u2028y\"\nkey: [é, value]\n",
			want: want{"/key": {2, 1}, "/key/1": {2, 10}},
		},
		{
			name: "YAML value at the end of a file without a final newline",
			path: "x.yaml",
			data: "- a\n- ",
			want: want{"/0": {1, 3}, "/1": {2, 2}},
		},
		{
			name: "YAML document marker only",
			path: "x.yaml",
			data: "---",
			want: want{"": {1, 4}},
		},
		{
			name: "empty YAML",
			path: "x.yaml",
			data: "",
			want: want{"": {1, 1}, "/a": {1, 1}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Decode(tc.path, nil, []byte(tc.data), DefaultLimits)
			if !d.Decoded {
				t.Fatalf("not decoded: %v", d.Problems)
			}
			for ptr, w := range tc.want {
				if got := d.LocatePointer(ptr); got != w {
					t.Errorf("LocatePointer(%q) = %+v, want %+v", ptr, got, w)
				}
				if got := d.Locate(SplitPointer(ptr)); got != w {
					t.Errorf("Locate(SplitPointer(%q)) = %+v, want %+v", ptr, got, w)
				}
			}
		})
	}
}

func TestLocateUndecoded(t *testing.T) {
	tests := []struct {
		name string
		doc  *Document
	}{
		{"nil document", nil},
		{"syntax error", Decode("x.json", nil, []byte("{"), DefaultLimits)},
		{"binary", Decode("x.yaml", nil, []byte("\x00"), DefaultLimits)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.doc.LocatePointer("/a/b"); got != (Pos{1, 1}) {
				t.Errorf("Locate = %+v, want 1:1", got)
			}
		})
	}
}

// TestLocateKeepsPositionsOfRefusedDocuments: a document with a duplicate
// key is not decoded, but pointers into it (for the rule that reports it)
// still resolve.
func TestLocateKeepsPositionsOfRefusedDocuments(t *testing.T) {
	d := Decode("x.yaml", nil, []byte("a: 1\nb:\n  c: 2\na: 3\n"), DefaultLimits)
	if d.Decoded {
		t.Fatalf("decoded despite a duplicate key")
	}
	if got := d.LocatePointer("/b/c"); got != (Pos{3, 3}) {
		t.Errorf("LocatePointer(/b/c) = %+v, want 3:3", got)
	}
	if got := d.LocatePointer("/a"); got != (Pos{1, 1}) {
		t.Errorf("LocatePointer(/a) = %+v, want the first a at 1:1", got)
	}
}

func TestSplitJoinPointer(t *testing.T) {
	tests := []struct {
		ptr    string
		tokens []string
	}{
		{"", nil},
		{"/", []string{""}},
		{"//", []string{"", ""}},
		{"/a", []string{"a"}},
		{"/a/0/b", []string{"a", "0", "b"}},
		{"/a~1b", []string{"a/b"}},
		{"/m~0n", []string{"m~n"}},
		{"/~01", []string{"~1"}},
		{"/~10", []string{"/0"}},
		{"/~0~1~1~0", []string{"~//~"}},
		{"/a/", []string{"a", ""}},
		{"/ünï/😀", []string{"ünï", "😀"}},
	}
	for _, tc := range tests {
		t.Run(tc.ptr, func(t *testing.T) {
			if got := SplitPointer(tc.ptr); !reflect.DeepEqual(got, tc.tokens) {
				t.Errorf("SplitPointer(%q) = %q, want %q", tc.ptr, got, tc.tokens)
			}
			if got := JoinPointer(tc.tokens); got != tc.ptr {
				t.Errorf("JoinPointer(%q) = %q, want %q", tc.tokens, got, tc.ptr)
			}
		})
	}
}

// JoinPointer is the inverse of SplitPointer (the tests build pointers with
// it).
func JoinPointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return b.String()
}

// LocatePointer is Locate for a pointer in its string form ("/a/0/b").
func (d *Document) LocatePointer(ptr string) Pos {
	return d.Locate(SplitPointer(ptr))
}

// TestValueAt: a pointer into a decoded value (the walk check's and config's
// messages share) is nil wherever it names no field or entry, an index
// outside a list included, and never panics.
func TestValueAt(t *testing.T) {
	t.Parallel()
	v := map[string]any{"a": []any{"x", map[string]any{"b": int64(2)}}, "s": "text"}
	tests := []struct {
		name   string
		tokens []string
		want   any
	}{
		{name: "root", tokens: nil, want: v},
		{name: "entry of a list", tokens: []string{"a", "0"}, want: "x"},
		{name: "field below a list", tokens: []string{"a", "1", "b"}, want: int64(2)},
		{name: "missing field", tokens: []string{"nope"}, want: nil},
		{name: "index past the end", tokens: []string{"a", "2"}, want: nil},
		{name: "negative index", tokens: []string{"a", "-1"}, want: nil},
		{name: "index that is not a number", tokens: []string{"a", "first"}, want: nil},
		{name: "below a scalar", tokens: []string{"s", "0"}, want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := ValueAt(v, tc.tokens); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ValueAt(%q) = %#v, want %#v", tc.tokens, got, tc.want)
			}
		})
	}
}
