package artifact

import (
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestJSONAgreesWithEncodingJSON: for every document, our parser accepts
// exactly what json.Valid accepts, and decodes to what json.Unmarshal (with
// UseNumber, mapped to int64/float64) decodes to. The table is both valid
// and invalid JSON; the comparison itself is differentialJSON, shared with
// FuzzDecodeJSON.
func TestJSONAgreesWithEncodingJSON(t *testing.T) {
	docs := []struct {
		name string
		doc  string
	}{
		// Valid.
		{"object", `{"a":1,"b":"x","c":[true,false,null]}`},
		{"pretty", "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {}\n}\n"},
		{"scalars at top level", `"just a string"`},
		{"number", `-12.5e-3`},
		{"zero", `0`},
		{"negative zero float", `-0.0`},
		{"big int", `12345678901234567890`},
		{"max int64", `9223372036854775807`},
		{"min int64", `-9223372036854775808`},
		{"int64 overflow by one", `-9223372036854775809`},
		{"big exponent", `1e308`},
		{"overflowing exponent", `1e309`},
		{"tiny", `5e-324`},
		{"underflow", `1e-400`},
		{"exponent with plus", `1E+2`},
		{"many digits", `0.10000000000000000000000000000000000000001`},
		{"escapes", `"\"\\\/\b\f\n\r\t\u0041\u00e9\u20ac"`},
		{"surrogate pair", `"\ud834\udd1e"`},
		{"lone surrogates", `["\ud800", "\udc00", "\ud800\u0041", "\udc00\ud800"]`},
		{"empty key", `{"":1}`},
		{"nested empty", `[[],{},[{}],{"a":[]}]`},
		{"whitespace", " \t\n\r [ 1 , 2 ] \r\n\t "},
		{"raw unicode", `{"ключ":"значение","emoji":"😀"}`},
		{"DEL character", "\"\x7f\""},
		{"deep", strings.Repeat("[", 500) + strings.Repeat("]", 500)},
		// Invalid.
		{"empty", ``},
		{"whitespace only", "  \n"},
		{"trailing comma in array", `[1,]`},
		{"trailing comma in object", `{"a":1,}`},
		{"leading comma", `[,1]`},
		{"missing colon", `{"a" 1}`},
		{"missing value", `{"a":}`},
		{"unquoted key", `{a:1}`},
		{"single quotes", `['a']`},
		{"leading zero", `01`},
		{"negative leading zero", `-01`},
		{"plus sign", `+1`},
		{"bare dot", `.5`},
		{"trailing dot", `1.`},
		{"exponent without digits", `1e`},
		{"exponent sign without digits", `1e+`},
		{"minus alone", `-`},
		{"hex", `0x10`},
		{"Infinity", `Infinity`},
		{"NaN", `NaN`},
		{"True", `True`},
		{"truncated true", `tru`},
		{"truex", `truex`},
		{"nulll", `nulll`},
		{"unterminated string", `"abc`},
		{"unterminated array", `[1,2`},
		{"unterminated object", `{"a":1`},
		{"unterminated escape", `"\`},
		{"bad escape", `"\a"`},
		{"short unicode escape", `"\u12"`},
		{"bad hex", `"\u12g4"`},
		{"raw tab in string", "\"a\tb\""},
		{"raw newline in string", "\"a\nb\""},
		{"raw NUL-free control", "\"\x1f\""},
		{"two values", `1 2`},
		{"object then garbage", `{}x`},
		{"comment", `/* c */ 1`},
		{"close without open", `]`},
		{"mismatched brackets", `[1}`},
		{"colon in array", `[1:2]`},
		{"key not a string", `{1:2}`},
		{"array as key", `{[]:1}`},
		{"vertical tab whitespace", "\v1"},
		{"form feed whitespace", "\f1"},
		{"non-breaking space", "\u00a01"},
	}
	for _, tc := range docs {
		t.Run(tc.name, func(t *testing.T) {
			differentialJSON(t, []byte(tc.doc))
		})
	}
	// The table must exercise both sides of the comparison.
	var valid, invalid int
	for _, tc := range docs {
		if json.Valid([]byte(tc.doc)) {
			valid++
		} else {
			invalid++
		}
	}
	if valid < 20 || invalid < 20 {
		t.Errorf("table has %d valid and %d invalid documents; want at least 20 of each", valid, invalid)
	}
}

// TestJSONDuplicateKeysDifferFromEncodingJSON documents the one intended
// difference: encoding/json keeps the last of duplicate keys silently; we
// report them, and do not hand the ambiguous value on.
func TestJSONDuplicateKeysDifferFromEncodingJSON(t *testing.T) {
	doc := []byte(`{"verdict":"FAIL","verdict":"PASS"}`)
	var std map[string]any
	if err := json.Unmarshal(doc, &std); err != nil || std["verdict"] != "PASS" {
		t.Fatalf("encoding/json: %v %v", std, err)
	}
	d := Decode("x.json", nil, doc, DefaultLimits)
	if d.Decoded || len(d.Problems) != 1 || d.Problems[0].Rule != RuleDuplicateKey {
		t.Errorf("decoded %v, problems %v; want not decoded, one duplicate-key problem", d.Decoded, d.Problems)
	}
}

// TestJSONColumnsOnLongLines: columns count characters on minified files,
// and the incremental count gives the same answer as counting from the
// start of the line.
func TestJSONColumnsOnLongLines(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"pad":"`)
	b.WriteString(strings.Repeat("é", 3000))
	b.WriteString(`","items":[`)
	for i := 0; i < 200; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"k":"ü"}`)
	}
	b.WriteString(`]}`)
	data := b.String()
	d := Decode("x.json", nil, []byte(data), DefaultLimits)
	if !d.Decoded {
		t.Fatalf("problems: %v", d.Problems)
	}
	for _, i := range []int{0, 1, 99, 199} {
		got := d.Locate([]string{"items", itoa(i), "k"})
		// Expected: count the characters before the i-th `"k"` key.
		off := 0
		for n := 0; n <= i; n++ {
			off += strings.Index(data[off:], `"k"`) + 1
		}
		want := Pos{1, len([]rune(data[:off-1])) + 1}
		if got != want {
			t.Errorf("items/%d/k at %+v, want %+v", i, got, want)
		}
	}
}

// TestJSONParserBoundsDepth: the parser itself stops at the depth limit,
// objects and arrays alike, before it builds a node past it: a hostile file
// of 100,000 levels costs no recursion past the limit (the converter's
// own depth check comes after the whole tree is built).
func TestJSONParserBoundsDepth(t *testing.T) {
	tests := []struct {
		name string
		data string
		want Pos
	}{
		{name: "objects", data: strings.Repeat(`{"a":`, 1e5), want: Pos{1, 321}},
		{name: "arrays", data: strings.Repeat("[", 1e5), want: Pos{1, 65}},
		{name: "mixed", data: strings.Repeat(`[{"a":`, 1e5), want: Pos{1, 193}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, p := parseJSON([]byte(tc.data), 64, 0)
			if n != nil || p == nil || p.Rule != RuleDepth || p.Pos != tc.want {
				t.Fatalf("parseJSON = %v, %+v; want no tree and a depth problem at %v", n, p, tc.want)
			}
		})
	}
}

// TestJSONNodeBound: nodeBound is an upper bound on the nodes the parser
// makes (so their slabs are never short), and a tight one for a valid
// document (so they waste nothing): here every container is non-empty, and
// the bound is exact.
func TestJSONNodeBound(t *testing.T) {
	tests := []struct {
		name string
		data string
	}{
		{name: "scalar", data: `1`},
		{name: "object", data: `{"a":1,"b":"x, y: [z]","c":[true,false,null]}`},
		{name: "escaped quote", data: `{"a\"b:":["\\",{"c":"\"{["}]}`},
		{name: "pretty", data: "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {\"c\": 1}\n}\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := &jsonParser{maxDepth: 64, left: nodeBound(tc.data)}
			p.start(tc.data, 1)
			if _, prob := p.document(); prob != nil {
				t.Fatal(prob)
			}
			if bound := nodeBound(tc.data); p.made != bound {
				t.Errorf("made %d nodes, bound %d", p.made, bound)
			}
		})
	}
}

// TestJSONSlabsBoundedByProgress is the red-team test of the node slabs: a
// file whose separators promise a million nodes (commas, colons and
// brackets a parser never reaches) must not have them allocated. The parser
// stops at the first ','; it may allocate its first slab (256 nodes), not
// the bound's 1,000,001 (about 150 MB).
func TestJSONSlabsBoundedByProgress(t *testing.T) {
	for _, data := range []string{
		"[" + strings.Repeat(",", 1e6),
		`{"a"` + strings.Repeat(":", 1e6),
		`[1` + strings.Repeat(",[", 1e6/2),
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		n, p := parseJSON(data, 64, 0)
		runtime.ReadMemStats(&after)
		if n != nil || p == nil {
			t.Fatalf("parsed %.10q… without a problem", data)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
			t.Errorf("parsing %.10q… allocated %d bytes, want under 8 MiB", data, got)
		}
	}
}

// TestJSONContentListsDoNotAlias: Content lists share a slab, so each is cut
// at its capacity: appending to one (the JSONL converter reuses its list)
// must not write over the next.
func TestJSONContentListsDoNotAlias(t *testing.T) {
	t.Parallel()
	n, p := parseJSON(`[[1,2],[3,4]]`, 64, 0)
	if p != nil {
		t.Fatal(p)
	}
	first, second := n.Content[0], n.Content[1]
	first.Content = append(first.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "5"})
	if got := second.Content[0].Value; got != "3" {
		t.Fatalf("appending to the first list changed the second's first member to %q", got)
	}
}

// TestJSONTreeNotSharedWithThePool is the red-team test of the pooled
// slabs: a JSON document's nodes are reused by the next file decoded, so
// the document must not keep them. After other files of the same shape
// were decoded (each reusing the slabs), the first document still locates
// its own positions and keeps its own value.
func TestJSONTreeNotSharedWithThePool(t *testing.T) {
	for _, path := range []string{"a.json", "a.jsonl"} {
		other := func() { Decode(path, nil, []byte(`{"x":"second","y":[3,4,5]}`+"\n"), DefaultLimits) }
		other() // so that the pool holds slabs the first document's nodes come from
		first := Decode(path, nil, []byte(`{"k": "first", "items": [1, 2]}`+"\n"), DefaultLimits)
		for range 8 {
			other()
		}
		tok := []string{"items", "1"}
		if FormatOf(nil, path) == FormatJSONL {
			tok = append([]string{"0"}, tok...)
		}
		if got, want := first.Locate(tok), (Pos{1, 29}); got != want {
			t.Errorf("%s: /items/1 of the first document at %v after others were decoded, want %v", path, got, want)
		}
		if !strings.Contains(fmt.Sprint(first.Value), "first") {
			t.Errorf("%s: the first document's value became %v", path, first.Value)
		}
	}
}

// TestJSONParserReleaseClearsSlabs: a released parser keeps its slabs for
// the next file, cleared, so that the pool holds nothing of the file it
// parsed (its text, through the nodes' strings).
func TestJSONParserReleaseClearsSlabs(t *testing.T) {
	for _, kept := range []int{0, 300} {
		p := pooledJSONParser(64)
		p.keep, p.keepList = make([]yaml.Node, kept), make([]*yaml.Node, 0, kept)
		p.nodes, p.content = p.keep, p.keepList
		if p.parse(`{"k": ["secret", {"a": 1}], "more": "text"}`, FormatJSON, &problemList{}) == nil {
			t.Fatal("did not parse")
		}
		p.release()
		if len(p.keep) == 0 || cap(p.keepList) == 0 {
			t.Fatalf("kept %d: released parser keeps %d nodes and %d Content entries, want its slabs", kept, len(p.keep), cap(p.keepList))
		}
		for i, n := range p.keep {
			if !reflect.DeepEqual(n, yaml.Node{}) {
				t.Fatalf("kept %d: released parser keeps node %d: %+v", kept, i, n)
			}
		}
		for i, n := range p.keepList[:cap(p.keepList)] {
			if n != nil {
				t.Fatalf("kept %d: released parser keeps Content entry %d: %+v", kept, i, n)
			}
		}
		if p.data != "" || len(p.open) != 0 {
			t.Fatalf("kept %d: released parser keeps its text %q or open members %v", kept, p.data, p.open)
		}
	}
}

// TestJSONLazyTreeConcurrentLocate: the tree built on the first Locate is
// built once, whichever goroutines ask first (go test -race checks it).
func TestJSONLazyTreeConcurrentLocate(t *testing.T) {
	t.Parallel()
	doc := Decode("a.json", nil, []byte("{\n  \"a\": [true, {\"b\": null}]\n}\n"), DefaultLimits)
	var wg sync.WaitGroup
	got := make([]Pos, 4)
	for i := range got {
		wg.Go(func() { got[i] = doc.Locate([]string{"a", "1", "b"}) })
	}
	wg.Wait()
	for _, p := range got {
		if p != (Pos{2, 16}) {
			t.Fatalf("located /a/1/b at %v, want 2:16", got)
		}
	}
}
