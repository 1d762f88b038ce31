package artifact

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The fuzz targets below run as ordinary tests on their seed corpus and on
// the regression inputs under testdata/fuzz/, and explore further with
// `go test -run=^$ -fuzz=FuzzX -fuzztime=30s ./internal/artifact`.

var yamlSeeds = []string{
	"",
	"day: 1\nagent: GATE\ncriteria_results:\n  - criterion: \"x\"\n    result: PASS\n    evidence: t.py::x\nblockers: []\ndeferred: []\ngate_decision: SHIP\nhold_reason: \"\"\n",
	"a: &x [1, 2]\nb: *x\n",
	"a: 1\na: 2\n",
	"x: !!python/object/apply:os.system [\"ls\"]\n",
	"<<: {a: 1}\n",
	"? [a]\n: 1\n",
	"a: 0755\nb: 0x1F\nc: .inf\nd: 2024-01-02\ne: yes\nf: 99999999999999999999\n",
	"a: 1\n---\nb: 2\n",
	"a: |\n  text\n  more\nb: >\n  folded\n",
	"\xef\xbb\xbfa: 1\n",
	"a: &a [*a]\n",
	"- [[[[[[1]]]]]]\n",
	"a: b: c\n",
	"\"k\": \"é\\u00e9\"\n",
	"a:\r\n  b: 1\r\n",
	"a: 1\rb: 2\r",
	"a: \"x\u2028y\"\n",
}

var jsonSeeds = []string{
	`{}`,
	`[]`,
	`{"a":1,"b":[true,false,null],"c":{"d":"e"}}`,
	"{\n  \"day\": 1,\n  \"items\": [\n    {\"x\": 1.5e3}\n  ]\n}\n",
	`"\ud83d\ude00"`,
	`"\ud83d"`,
	`"\ude00\ud83d\ude00x"`,
	`"\u00e9\n\t\"\\\/"`,
	`{"a":1,"a":2}`,
	`-0`,
	`1E400`,
	`99999999999999999999`,
	`[1,]`,
	`{"a" 1}`,
	`01`,
	`"\x"`,
	`tru`,
	"\xef\xbb\xbf{}",
	`{"é":"ü","k":[1,2,{"z":null}]}`,
	"[\"a\u2028b\"]",
}

var jsonlSeeds = []string{
	"",
	"{\"a\":1}\n{\"a\":2}\n",
	"{\"a\":1}\n\n{\"a\":2}\n",
	"{\"a\":1}\nnot json\n{\"a\":3}",
	"{\"a\":1}\r\n{\"a\":2}\r\n",
	"{\"a\":1}\n\n",
	"[[[[]]]]\n{\"a\":{\"a\":1,\"a\":2}}\n",
}

var learningsSeeds = []string{
	"",
	"# Learnings (current run)\n\n### Phase 1 failure -- test_failure\n**Context:** x\n**Prevention rule:** y\n",
	"# T\n```\n# not a heading\n```\n## real\nline\n",
	"no title\r\n# h\r\n  indented\r\n",
	"#\n#\n#",
}

// lineCount is the number of lines of a file as git, GitHub and an editor's
// "go to line" count them: one more than its '\n' characters.
func lineCount(data []byte) int { return bytes.Count(data, []byte("\n")) + 1 }

// checkDoc asserts the invariants every decoded document has, whatever the
// input: problems are located inside the file and carry a rule and a
// message; a decoded value is valid JSON data; and every pointer into the
// value locates a position inside the file.
func checkDoc(t *testing.T, data []byte, d *Document) {
	t.Helper()
	lines := lineCount(data)
	for _, p := range d.Problems {
		if p.Rule == "" || p.Message == "" {
			t.Errorf("problem without rule or message: %+v", p)
		}
		if p.Pos.Line < 1 || p.Pos.Column < 1 || p.Pos.Line > lines {
			t.Errorf("problem %+v outside the file of %d lines", p, lines)
		}
	}
	if d.Decoded {
		if _, err := json.Marshal(d.Value); err != nil {
			t.Errorf("decoded value is not JSON data: %v (%#v)", err, d.Value)
		}
	} else if d.Value != nil {
		t.Errorf("value %#v set on an undecoded document", d.Value)
	}
	if !d.Decoded && len(d.Problems) == 0 {
		t.Errorf("document not decoded and no problem says why")
	}
	if len(d.Problems) > maxProblems+2 { // the size or encoding problem, the listed ones, the summary
		t.Errorf("%d problems listed, more than the cap", len(d.Problems))
	}
	budget := 200
	walkPointers(d.Value, nil, &budget, func(tokens []string) {
		p := d.Locate(tokens)
		if p.Line < 1 || p.Column < 1 || p.Line > lines {
			t.Errorf("Locate(%q) = %+v, outside the file of %d lines", JoinPointer(tokens), p, lines)
		}
	})
}

// walkPointers calls fn with the pointer of the values in v, at most budget
// of them.
func walkPointers(v any, prefix []string, budget *int, fn func([]string)) {
	if *budget <= 0 {
		return
	}
	*budget--
	fn(prefix)
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			walkPointers(e, append(prefix[:len(prefix):len(prefix)], k), budget, fn)
		}
	case []any:
		for i, e := range v {
			walkPointers(e, append(prefix[:len(prefix):len(prefix)], itoa(i)), budget, fn)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func FuzzDecodeYAML(f *testing.F) {
	for _, s := range yamlSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := Decode("x.yaml", nil, data, DefaultLimits)
		checkDoc(t, data, d)
		// Decoding is deterministic.
		d2 := Decode("x.yaml", nil, data, DefaultLimits)
		if !reflect.DeepEqual(d.Value, d2.Value) || !reflect.DeepEqual(d.Problems, d2.Problems) {
			t.Errorf("two decodes differ")
		}
		assertDataModel(t, d.Value)
	})
}

func assertDataModel(t *testing.T, v any) {
	t.Helper()
	switch v := v.(type) {
	case nil, string, bool, int64, float64, json.Number:
	case map[string]any:
		for _, e := range v {
			assertDataModel(t, e)
		}
	case []any:
		for _, e := range v {
			assertDataModel(t, e)
		}
	default:
		t.Errorf("value of type %T outside the data model", v)
	}
}

// fromStd maps a value that encoding/json decoded with UseNumber to our data
// model: integers that fit are int64, other finite numbers float64, the rest
// json.Number.
func fromStd(v any) any {
	switch v := v.(type) {
	case json.Number:
		s := string(v)
		if !strings.ContainsAny(s, ".eE") {
			if i, err := v.Int64(); err == nil {
				return i
			}
			return v
		}
		if f, err := v.Float64(); err == nil {
			return f
		}
		return v
	case map[string]any:
		for k, e := range v {
			v[k] = fromStd(e)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = fromStd(e)
		}
		return v
	}
	return v
}

// differentialJSON decodes data with Decode and with encoding/json and fails
// when they disagree on acceptance or, for a document without duplicate
// keys, on the value.
func differentialJSON(t *testing.T, data []byte) {
	t.Helper()
	if !utf8.Valid(data) || bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) || bytes.IndexByte(data, 0) >= 0 {
		return // refused before parsing, by policy; covered elsewhere
	}
	// encoding/json nests up to 10000 levels; so may we, for this comparison.
	d := Decode("x.json", nil, data, Limits{MaxDepth: 10000})
	checkDoc(t, data, d)
	syntaxOK := true
	dup := false
	for _, p := range d.Problems {
		switch p.Rule {
		case RuleSyntax, RuleDepth:
			syntaxOK = false
		case RuleDuplicateKey:
			dup = true
		}
	}
	if want := json.Valid(data); syntaxOK != want {
		t.Fatalf("acceptance differs from encoding/json: ours %v, json.Valid %v; problems %v", syntaxOK, want, d.Problems)
	}
	if !syntaxOK || dup {
		return
	}
	if !d.Decoded {
		t.Fatalf("valid JSON not decoded: %v", d.Problems)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var std any
	if err := dec.Decode(&std); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	if want := fromStd(std); !reflect.DeepEqual(d.Value, want) {
		t.Fatalf("value differs from encoding/json:\n ours %#v\n std  %#v", d.Value, want)
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		differentialJSON(t, data)
		d := Decode("x.json", nil, data, DefaultLimits)
		checkDoc(t, data, d)
		assertDataModel(t, d.Value)
	})
}

func FuzzDecodeJSONL(f *testing.F) {
	for _, s := range jsonlSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := Decode(".planning/phases/1/TRACE.jsonl", KindByID("autopilot.trace"), data, DefaultLimits)
		checkDoc(t, data, d)
		if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
			return
		}
		if !d.Decoded {
			t.Fatalf("a JSONL file is always decoded (bad lines are left out): %v", d.Problems)
		}
		items, ok := d.Value.([]any)
		if !ok {
			t.Fatalf("JSONL value is %T, want []any", d.Value)
		}
		if len(d.Problems) > maxProblems {
			return // some problems are not listed: lines cannot be matched
		}
		// Every line is either an item or a problem on that line, and
		// each item is what the line alone decodes to.
		lines := bytes.Split(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), []byte("\n"))
		if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
			lines = lines[:len(lines)-1]
		}
		bad := map[int]bool{}
		for _, p := range d.Problems {
			bad[p.Pos.Line] = true
		}
		i := 0
		for n, line := range lines {
			if bad[n+1] {
				continue
			}
			if i >= len(items) {
				t.Fatalf("line %d has neither an item nor a problem", n+1)
			}
			one := Decode("x.json", nil, line, DefaultLimits)
			if !one.Decoded || !reflect.DeepEqual(one.Value, items[i]) {
				t.Fatalf("item %d = %#v, line %d alone decodes to %#v (%v)", i, items[i], n+1, one.Value, one.Problems)
			}
			if p := d.Locate([]string{itoa(i)}); p.Line != n+1 {
				t.Fatalf("item %d located at line %d, want %d", i, p.Line, n+1)
			}
			i++
		}
		if i != len(items) {
			t.Fatalf("%d items for %d good lines", len(items), i)
		}
	})
}

func FuzzLearnings(f *testing.F) {
	for _, s := range learningsSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := Decode(".autopilot/learnings.md", KindByID("autopilot.learnings"), data, DefaultLimits)
		checkDoc(t, data, d)
		if !d.Decoded {
			return
		}
		m, ok := d.Value.(map[string]any)
		if !ok {
			t.Fatalf("value is %T, want an object", d.Value)
		}
		title, ok := m["title"].(string)
		if !ok {
			t.Fatalf("title is %T", m["title"])
		}
		text := string(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
		first, _, _ := strings.Cut(text, "\n")
		if title != strings.TrimRight(first, "\r") {
			t.Fatalf("title %q, first line %q", title, first)
		}
		entries, ok := m["entries"].([]any)
		if !ok {
			t.Fatalf("entries is %T", m["entries"])
		}
		all := strings.Split(text, "\n")
		for i, e := range entries {
			em := e.(map[string]any)
			h := em["heading"].(string)
			p := d.Locate([]string{"entries", itoa(i), "heading"})
			if got := strings.TrimRight(all[p.Line-1], "\r"); got != h {
				t.Fatalf("entry %d heading %q located at line %d, which is %q", i, h, p.Line, got)
			}
			if !strings.HasPrefix(strings.TrimLeft(h, " "), "#") || strings.HasPrefix(h, "    ") {
				t.Fatalf("heading %q is not an ATX heading", h)
			}
			for j, l := range em["lines"].([]any) {
				p := d.Locate([]string{"entries", itoa(i), "lines", itoa(j)})
				if got := strings.TrimRight(all[p.Line-1], "\r"); got != l.(string) || strings.TrimSpace(got) == "" {
					t.Fatalf("entry %d line %d %q located at line %d, which is %q", i, j, l, p.Line, got)
				}
			}
		}
	})
}

func FuzzLocate(f *testing.F) {
	for _, s := range yamlSeeds {
		f.Add([]byte(s), "/a/0", uint8(0))
	}
	for _, s := range jsonSeeds {
		f.Add([]byte(s), "/c/d", uint8(1))
	}
	for _, s := range jsonlSeeds {
		f.Add([]byte(s), "/1/a", uint8(2))
	}
	for _, s := range learningsSeeds {
		f.Add([]byte(s), "/entries/0/lines/0", uint8(3))
	}
	f.Add([]byte("a~b: {c/d: 1}\n"), "/a~0b/c~1d", uint8(0))
	f.Add([]byte("a: &x {b: 1}\nc: *x\n"), "/c/b", uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, ptr string, format uint8) {
		var d *Document
		switch format % 4 {
		case 0:
			d = Decode("x.yaml", nil, data, DefaultLimits)
		case 1:
			d = Decode("x.json", nil, data, DefaultLimits)
		case 2:
			d = Decode("x.jsonl", nil, data, DefaultLimits)
		default:
			d = Decode(".autopilot/learnings.md", KindByID("autopilot.learnings"), data, DefaultLimits)
		}
		lines := lineCount(data)
		p := d.LocatePointer(ptr)
		if p.Line < 1 || p.Column < 1 || p.Line > lines {
			t.Fatalf("LocatePointer(%q) = %+v, outside the file of %d lines", ptr, p, lines)
		}
		// Locating the same pointer twice gives the same position.
		if q := d.LocatePointer(ptr); q != p {
			t.Fatalf("LocatePointer(%q) gave %+v, then %+v", ptr, p, q)
		}
	})
}

func FuzzSplitJoinPointer(f *testing.F) {
	for _, s := range []string{"", "/", "/a", "/a/0/b", "/a~0b", "/c~1d", "/~01", "//", "/a/", "/~0~1~1~0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// Tokens → pointer → tokens is the identity for any tokens. The
		// input is split on NUL to make a token list.
		var tokens []string
		if s != "" {
			tokens = strings.Split(s, "\x00")
		}
		ptr := JoinPointer(tokens)
		if got := SplitPointer(ptr); !reflect.DeepEqual(got, tokens) && !(len(got) == 0 && len(tokens) == 0) {
			t.Fatalf("SplitPointer(JoinPointer(%q)) = %q via %q", tokens, got, ptr)
		}
		if ptr != "" && !strings.HasPrefix(ptr, "/") {
			t.Fatalf("JoinPointer(%q) = %q does not start with /", tokens, ptr)
		}
		// Pointer → tokens → pointer is the identity for a valid pointer
		// (empty, or '/'-prefixed with every '~' escaped).
		if validPointer(s) {
			if got := JoinPointer(SplitPointer(s)); got != s {
				t.Fatalf("JoinPointer(SplitPointer(%q)) = %q", s, got)
			}
		}
	})
}

func validPointer(s string) bool {
	if s == "" {
		return true
	}
	if s[0] != '/' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '~' && (i+1 >= len(s) || (s[i+1] != '0' && s[i+1] != '1')) {
			return false
		}
	}
	return true
}

// FuzzSniffJSON: the content claim never panics, and on a whole JSON object
// it agrees with encoding/json's parse: a file is claimed only for a
// top-level key, never when its "$schema" names json-schema.org.
func FuzzSniffJSON(f *testing.F) {
	for _, s := range append(jsonSeeds, cbSchema, `{"circuit_breaker_config": {}}`, `{"a": {"circuit_breaker_config": 1}}`,
		`{"schema_version": "scc.submit.v1"}`, `{"$schema": "http://json-schema.org/draft-07/schema#", "_meta": {}}`) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		k := Sniff("x.json", head)
		claimed := map[string]bool{}
		for _, id := range []string{"autopilot.circuit-breaker-config", "autopilot.state", "scc.submit"} {
			claimed[id] = Claims(KindByID(id), head)
		}
		var m map[string]any
		if json.Unmarshal(head, &m) != nil || m == nil {
			return
		}
		schema, _ := m["$schema"].(string)
		isSchema := strings.HasPrefix(schema, "https://json-schema.org/") || strings.HasPrefix(schema, "http://json-schema.org/")
		if k != nil && (isSchema || k.ID == "autopilot.circuit-breaker-config" && !hasKey(m, "circuit_breaker_config")) {
			t.Fatalf("Sniff claimed %s for %q (top-level keys %v)", k.ID, head, m)
		}
		for id, ok := range claimed {
			if ok && isSchema {
				t.Fatalf("Claims(%s) took the JSON Schema %q", id, head)
			}
		}
		if claimed["autopilot.circuit-breaker-config"] && !hasKey(m, "circuit_breaker_config") {
			t.Fatalf("Claims took %q without a top-level circuit_breaker_config", head)
		}
	})
}

func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }
