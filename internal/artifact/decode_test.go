package artifact

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// decodeV decodes "v: <scalar>" as YAML and returns the value of v.
func decodeV(t *testing.T, scalar string) any {
	t.Helper()
	d := Decode("x.yaml", nil, []byte("v: "+scalar+"\n"), DefaultLimits)
	if !d.Decoded || len(d.Problems) > 0 {
		t.Fatalf("decode %q: decoded %v, problems %v", scalar, d.Decoded, d.Problems)
	}
	return d.Value.(map[string]any)["v"]
}

func TestDecodeYAMLScalars(t *testing.T) {
	tests := []struct {
		name   string
		scalar string
		want   any
	}{
		{"decimal int", "42", int64(42)},
		{"negative int", "-7", int64(-7)},
		{"plus int", "+7", int64(7)},
		{"zero", "0", int64(0)},
		{"negative zero", "-0", int64(0)},
		{"max int64", "9223372036854775807", int64(9223372036854775807)},
		{"min int64", "-9223372036854775808", int64(-9223372036854775808)},
		{"int over int64", "9223372036854775808", json.Number("9223372036854775808")},
		{"int over uint64", "99999999999999999999", json.Number("99999999999999999999")},
		{"negative huge int", "-99999999999999999999", json.Number("-99999999999999999999")},
		{"plus huge int", "+99999999999999999999", json.Number("99999999999999999999")},
		{"float", "1.5", 1.5},
		{"float exponent", "1e5", 100000.0},
		{"float trailing dot", "1.", 1.0},
		{"float leading dot", ".5", 0.5},
		{"negative float", "-2.25e-3", -0.00225},
		{"float overflow", "1e400", json.Number("1e400")},
		{"float overflow leading dot", "+.5e400", json.Number("0.5e400")},
		{"float overflow trailing dot", "-1.e400", json.Number("-1e400")},
		{"float underflow", "1e-400", 0.0},
		{"octal-looking", "0755", "0755"},
		{"negative octal-looking", "-0755", "-0755"},
		{"double zero", "00", "00"},
		{"huge with leading zeros", "000" + strings.Repeat("1", 30), "000" + strings.Repeat("1", 30)},
		{"float with leading zeros", "007.5", 7.5},
		{"float overflow with leading zeros", "-00.5e400", json.Number("-0.5e400")},
		{"octal 1.2", "0o17", "0o17"},
		{"hex", "0x1F", "0x1F"},
		{"binary", "0b101", "0b101"},
		{"underscores", "1_000", "1_000"},
		{"sexagesimal", "1:30", "1:30"},
		{"inf", ".inf", ".inf"},
		{"negative inf", "-.Inf", "-.Inf"},
		{"nan", ".nan", ".nan"},
		{"NaN", ".NaN", ".NaN"},
		{"date", "2024-01-02", "2024-01-02"},
		{"timestamp", "2024-01-02T03:04:05Z", "2024-01-02T03:04:05Z"},
		{"timestamp with space", "2001-12-14 21:59:43.10 -5", "2001-12-14 21:59:43.10 -5"},
		{"yes", "yes", "yes"},
		{"no", "no", "no"},
		{"on", "on", "on"},
		{"off", "off", "off"},
		{"Y", "Y", "Y"},
		{"true", "true", true},
		{"True", "True", true},
		{"FALSE", "FALSE", false},
		{"null", "null", nil},
		{"tilde", "~", nil},
		{"empty", "", nil},
		{"Null", "Null", nil},
		{"double-quoted int", `"42"`, "42"},
		{"single-quoted int", `'42'`, "42"},
		{"quoted true", `"true"`, "true"},
		{"quoted null", `'null'`, "null"},
		{"quoted float", `"1.5"`, "1.5"},
		{"literal block", "|\n  42\n", "42\n"},
		{"folded block", ">-\n  true\n", "true"},
		{"explicit str tag", "!!str 42", "42"},
		{"explicit int tag on a non-number", "!!int abc", "abc"},
		{"explicit float tag on an int", "!!float 3", 3.0},
		{"explicit null tag on a word", "!!null word", "word"},
		{"explicit null tag", "!!null", nil},
		{"explicit bool tag on yes", "!!bool yes", "yes"},
		{"explicit timestamp tag", "!!timestamp 2024-01-02", "2024-01-02"},
		{"binary tag", "!!binary aGVsbG8=", "aGVsbG8="},
		{"plain string", "hello world", "hello world"},
		{"merge-looking value", "<<", "<<"},
		{"explicit str tag on a big float", "!!str 1e400", "1e400"},
		{"string with colon", "a:b", "a:b"},
		{"unicode", "héllo ✓", "héllo ✓"},
		{"version", "1.2.3", "1.2.3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := decodeV(t, tc.scalar)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("v: %s → %#v (%T), want %#v (%T)", tc.scalar, got, got, tc.want, tc.want)
			}
		})
	}
}

func TestDecodeJSONValues(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want any
	}{
		{"int", `42`, int64(42)},
		{"negative zero", `-0`, int64(0)},
		{"float", `1.5`, 1.5},
		{"float with int value", `2.0`, 2.0},
		{"exponent", `1e3`, 1000.0},
		{"capital exponent with sign", `1E+2`, 100.0},
		{"max int64", `9223372036854775807`, int64(9223372036854775807)},
		{"over int64", `9223372036854775808`, json.Number("9223372036854775808")},
		{"huge negative", `-123456789012345678901234567890`, json.Number("-123456789012345678901234567890")},
		{"float overflow", `1e400`, json.Number("1e400")},
		{"float underflow", `1e-400`, 0.0},
		{"true", `true`, true},
		{"false", `false`, false},
		{"null", `null`, nil},
		{"string", `"x"`, "x"},
		{"numeric string stays a string", `"0755"`, "0755"},
		{"escapes", `"a\"b\\c\/d\be\ff\ng\rh\ti"`, "a\"b\\c/d\be\ff\ng\rh\ti"},
		{"unicode escape", `"\u00e9\u4e2d"`, "é中"},
		{"surrogate pair", `"\ud83d\ude00"`, "😀"},
		{"surrogate pair upper-case hex", `"\uD83D\uDE00"`, "😀"},
		{"lone high surrogate", `"\ud83dx"`, "\ufffdx"},
		{"high surrogate then non-surrogate escape", `"\ud83d\u0041"`, "\ufffdA"},
		{"lone low surrogate", `"\ude00"`, "\ufffd"},
		{"two high surrogates", `"\ud83d\ud83d\ude00"`, "\ufffd😀"},
		{"raw non-ASCII", `"é😀"`, "é😀"},
		{"NUL escape", `"a\u0000b"`, "a\x00b"},
		{"DEL is allowed raw", "\"a\x7fb\"", "a\x7fb"},
		{"empty object", `{}`, map[string]any{}},
		{"empty array", `[]`, []any{}},
		{"nested", `{"a":[1,{"b":null}],"c":{}}`, map[string]any{"a": []any{int64(1), map[string]any{"b": nil}}, "c": map[string]any{}}},
		{"whitespace everywhere", " \t\r\n{ \"a\" : [ 1 , 2 ] } \n", map[string]any{"a": []any{int64(1), int64(2)}}},
		{"BOM", "\ufeff{\"a\":1}", map[string]any{"a": int64(1)}},
		{"escaped key", `{"a\u002fb":1}`, map[string]any{"a/b": int64(1)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Decode("x.json", nil, []byte(tc.doc), DefaultLimits)
			if !d.Decoded || len(d.Problems) > 0 {
				t.Fatalf("decoded %v, problems %v", d.Decoded, d.Problems)
			}
			if !reflect.DeepEqual(d.Value, tc.want) {
				t.Errorf("value = %#v, want %#v", d.Value, tc.want)
			}
		})
	}
}

// problemCase is a document that must decode with exactly these problems.
type problemCase struct {
	name    string
	path    string
	kind    string
	data    string
	limits  Limits
	want    []Problem // Message is matched as a fragment
	decoded bool
}

func runProblemCases(t *testing.T, tests []problemCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Decode(tc.path, KindByID(tc.kind), []byte(tc.data), tc.limits)
			if d.Decoded != tc.decoded {
				t.Errorf("Decoded = %v, want %v (value %#v)", d.Decoded, tc.decoded, d.Value)
			}
			if !tc.decoded && d.Value != nil {
				t.Errorf("undecoded document has a value %#v", d.Value)
			}
			if len(d.Problems) != len(tc.want) {
				t.Fatalf("problems:\n  %v\nwant:\n  %v", d.Problems, tc.want)
			}
			for i, w := range tc.want {
				p := d.Problems[i]
				if p.Rule != w.Rule || p.Pos != w.Pos || !strings.Contains(p.Message, w.Message) {
					t.Errorf("problem %d = %+v, want %+v", i, p, w)
				}
			}
		})
	}
}

func TestDecodeEncoding(t *testing.T) {
	runProblemCases(t, []problemCase{
		{name: "empty YAML", path: "x.yaml", data: "", decoded: true},
		{name: "empty JSON", path: "x.json", data: "", want: []Problem{{Pos{1, 1}, RuleSyntax, "unexpected end of file"}}},
		{name: "empty JSONL", path: "x.jsonl", data: "", decoded: true},
		{name: "BOM only YAML", path: "x.yaml", data: "\ufeff", decoded: true},
		{name: "NUL byte", path: "x.yaml", data: "a: 1\nb: \x00\n", want: []Problem{{Pos{2, 4}, RuleEncoding, "NUL byte"}}},
		{name: "binary", path: "x.json", data: "\x89PNG\r\n\x1a\n\x00\x00", want: []Problem{{Pos{3, 1}, RuleEncoding, ""}}},
		{name: "invalid UTF-8 after non-ASCII", path: "x.yaml", data: "a: 1\nbé: \xff\n", want: []Problem{{Pos{2, 5}, RuleEncoding, "byte 0xff at offset 10"}}},
		{name: "truncated UTF-8", path: "x.json", data: "\"\xe2\x82\"", want: []Problem{{Pos{1, 2}, RuleEncoding, "not valid UTF-8"}}},
		{name: "UTF-16 BOM", path: "x.yaml", data: "\xff\xfea\x00", want: []Problem{{Pos{1, 4}, RuleEncoding, "NUL byte"}}},
		{name: "over the size limit", path: "x.yaml", data: strings.Repeat("a", 101), limits: Limits{MaxFileSize: 100},
			want: []Problem{{Pos{1, 1}, RuleFileSize, "101 bytes, over the 100-byte limit"}}},
		{name: "at the size limit", path: "x.yaml", data: strings.Repeat("a", 100), limits: Limits{MaxFileSize: 100}, decoded: true},
	})
}

func TestDecodeYAMLPolicy(t *testing.T) {
	runProblemCases(t, []problemCase{
		{name: "duplicate key", path: "x.yaml", data: "a: 1\nb: 2\na: 3\n",
			want: []Problem{{Pos{3, 1}, RuleDuplicateKey, `duplicate key "a"`}}},
		{name: "duplicate key quoted differently", path: "x.yaml", data: "a: 1\n\"a\": 2\n",
			want: []Problem{{Pos{2, 1}, RuleDuplicateKey, `duplicate key "a"`}}},
		{name: "duplicate keys nested, all reported", path: "x.yaml", data: "x:\n  k: 1\n  k: 2\ny: {k: 1, k: 2}\n",
			want: []Problem{{Pos{3, 3}, RuleDuplicateKey, `"k"`}, {Pos{4, 11}, RuleDuplicateKey, `"k"`}}},
		{name: "python tag", path: "x.yaml", data: "cmd: !!python/object/apply:os.system [\"rm -rf /\"]\n",
			want: []Problem{{Pos{1, 6}, RuleTag, `"!!python/object/apply:os.system"`}}},
		{name: "local tag", path: "x.yaml", data: "a: !Ref thing\n",
			want: []Problem{{Pos{1, 4}, RuleTag, `"!Ref"`}}},
		{name: "set tag on a mapping", path: "x.yaml", data: "a: !!set {x, y}\n",
			want: []Problem{{Pos{1, 4}, RuleTag, `"!!set"`}}},
		{name: "tag on a key", path: "x.yaml", data: "!foo k: v\n",
			want: []Problem{{Pos{1, 1}, RuleTag, "on a key"}}},
		{name: "long tag is shortened", path: "x.yaml", data: "a: !" + strings.Repeat("x", 80) + " x\n",
			want: []Problem{{Pos{1, 4}, RuleTag, "…"}}},
		{name: "merge key", path: "x.yaml", data: "base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2\n",
			want: []Problem{{Pos{3, 3}, RuleMergeKey, "merge keys"}}},
		{name: "complex key", path: "x.yaml", data: "? [a, b]\n: 1\n",
			want: []Problem{{Pos{1, 3}, RuleComplexKey, "plain strings"}}},
		{name: "mapping as key", path: "x.yaml", data: "{a: 1}: x\n",
			want: []Problem{{Pos{1, 1}, RuleComplexKey, "plain strings"}}},
		{name: "alias as key", path: "x.yaml", data: "a: &k key\n*k : v\n", decoded: true},
		{name: "two documents", path: "x.yaml", data: "a: 1\n---\nb: 2\n", decoded: true,
			want: []Problem{{Pos{2, 1}, RuleMultiDocument, "more than one YAML document"}}},
		{name: "explicit start of one document", path: "x.yaml", data: "---\na: 1\n...\n", decoded: true},
		{name: "syntax error at the unclosed bracket's line", path: "x.yaml", data: "a: [1, 2\nb: 3\n",
			want: []Problem{{Pos{1, 1}, RuleSyntax, "did not find expected ',' or ']'"}}},
		{name: "tab indentation", path: "x.yaml", data: "a:\n\tb: 1\n",
			want: []Problem{{Pos{2, 1}, RuleSyntax, "found character that cannot start any token"}}},
		{name: "unknown anchor", path: "x.yaml", data: "a: *nope\n",
			want: []Problem{{Pos{1, 1}, RuleSyntax, "unknown anchor"}}},
		{name: "syntax error in the second document keeps the first", path: "x.yaml", data: "a: 1\n---\nb: [\n", decoded: true,
			want: []Problem{{Pos{3, 1}, RuleSyntax, "invalid YAML"}}},
		{name: "control character", path: "x.yaml", data: "a: \x01\n",
			want: []Problem{{Pos{1, 1}, RuleSyntax, "control characters are not allowed"}}},
	})
}

func TestDecodeJSONPolicy(t *testing.T) {
	runProblemCases(t, []problemCase{
		{name: "duplicate key", path: "x.json", data: "{\n  \"a\": 1,\n  \"a\": 2\n}",
			want: []Problem{{Pos{3, 3}, RuleDuplicateKey, `duplicate key "a"`}}},
		{name: "duplicate key by escape", path: "x.json", data: `{"é":1,"\u00e9":2}`,
			want: []Problem{{Pos{1, 8}, RuleDuplicateKey, `duplicate key "é"`}}},
		{name: "trailing comma", path: "x.json", data: "{\"a\": [1, 2,]}",
			want: []Problem{{Pos{1, 13}, RuleSyntax, "unexpected ']', expected a value"}}},
		{name: "single quotes", path: "x.json", data: "{'a': 1}",
			want: []Problem{{Pos{1, 2}, RuleSyntax, "expected a string key"}}},
		{name: "comment", path: "x.json", data: "{} // done",
			want: []Problem{{Pos{1, 4}, RuleSyntax, "after the end of the JSON value"}}},
		{name: "two values", path: "x.json", data: "{}\n{}",
			want: []Problem{{Pos{2, 1}, RuleSyntax, "after the end of the JSON value"}}},
		{name: "error column counts characters", path: "x.json", data: `{"clé": "día", "x": tru}`,
			want: []Problem{{Pos{1, 21}, RuleSyntax, "expected a value"}}},
		{name: "raw newline in string", path: "x.json", data: "{\"a\": \"x\ny\"}",
			want: []Problem{{Pos{1, 9}, RuleSyntax, "control character"}}},
		{name: "bad escape", path: "x.json", data: `["\x"]`,
			want: []Problem{{Pos{1, 3}, RuleSyntax, `invalid escape \x`}}},
		{name: "bad unicode escape", path: "x.json", data: `["\u12G4"]`,
			want: []Problem{{Pos{1, 3}, RuleSyntax, `invalid \u escape`}}},
		{name: "escape of a non-ASCII character", path: "x.json", data: `["a\é"]`,
			want: []Problem{{Pos{1, 4}, RuleSyntax, `invalid escape \é in string`}}},
		{name: "escape of a tab", path: "x.json", data: "[\"\\\t\"]",
			want: []Problem{{Pos{1, 3}, RuleSyntax, `a backslash before U+0009`}}},
		{name: "truncated unicode escape", path: "x.json", data: `"ab\u12`,
			want: []Problem{{Pos{1, 4}, RuleSyntax, `invalid \u escape`}}},
		{name: "leading zero", path: "x.json", data: `[01]`,
			want: []Problem{{Pos{1, 3}, RuleSyntax, "expected ',' or ']'"}}},
		{name: "NaN", path: "x.json", data: `NaN`,
			want: []Problem{{Pos{1, 1}, RuleSyntax, "unexpected 'N'"}}},
		{name: "unterminated", path: "x.json", data: "{\"a\": [1,\n",
			want: []Problem{{Pos{2, 1}, RuleSyntax, "unexpected end of file"}}},
		{name: "YAML in a .json file", path: "x.json", data: "a: 1\n",
			want: []Problem{{Pos{1, 1}, RuleSyntax, "unexpected 'a'"}}},
		{name: "a duplicate's value is left out, its problems too", path: "x.json", data: `{"a": {"b": 1}, "a": {"c": 1, "c": 2}, "d": {"e": 1, "e": 2}}`,
			want: []Problem{{Pos{1, 17}, RuleDuplicateKey, `duplicate key "a"`}, {Pos{1, 54}, RuleDuplicateKey, `duplicate key "e"`}}},
		{name: "a JSONL line with a duplicate is left out", path: "t.jsonl", kind: "autopilot.trace", data: "{\"a\": 1, \"a\": 2}\n{\"a\": 1}\n", decoded: true,
			want: []Problem{{Pos{1, 10}, RuleDuplicateKey, `duplicate key "a"`}}},
	})
}

func TestDecodeLimits(t *testing.T) {
	deepFlow := strings.Repeat("[", 70) + strings.Repeat("]", 70)
	var block strings.Builder
	for i := 0; i < 70; i++ {
		block.WriteString(strings.Repeat("  ", i) + "k:\n")
	}
	runProblemCases(t, []problemCase{
		{name: "YAML flow nesting", path: "x.yaml", data: "a: " + deepFlow + "\n",
			want: []Problem{{Pos{1, 67}, RuleDepth, "deeper than 64 levels"}}},
		{name: "YAML block nesting", path: "x.yaml", data: block.String(),
			want: []Problem{{Pos{65, 129}, RuleDepth, "deeper than 64 levels"}}},
		{name: "JSON nesting", path: "x.json", data: deepFlow,
			want: []Problem{{Pos{1, 65}, RuleDepth, "deeper than 64 levels"}}},
		{name: "JSON nesting at the limit", path: "x.json", data: strings.Repeat("[", 64) + strings.Repeat("]", 64), decoded: true},
		{name: "YAML nesting at the limit", path: "x.yaml", data: strings.Repeat("[", 64) + strings.Repeat("]", 64), decoded: true},
		{name: "smaller depth limit", path: "x.json", data: `{"a":{"b":{"c":1}}}`, limits: Limits{MaxDepth: 2},
			want: []Problem{{Pos{1, 11}, RuleDepth, "deeper than 2 levels"}}},
		{name: "depth limit above the ceiling is the ceiling", path: "x.json",
			data: strings.Repeat("[", MaxDepthCeiling+1) + strings.Repeat("]", MaxDepthCeiling+1), limits: Limits{MaxDepth: 1 << 30},
			want: []Problem{{Pos{1, MaxDepthCeiling + 1}, RuleDepth, "deeper than 10000 levels"}}},
		{name: "alias bomb", path: "x.yaml", data: aliasBomb,
			want: []Problem{{Pos{5, 8}, RuleAliasBudget, "more than 10000 nodes"}}},
		{name: "aliases within the budget", path: "x.yaml", data: "a: &a [1, 2, 3]\nb: [*a, *a, *a]\n", decoded: true},
		{name: "smaller alias budget", path: "x.yaml", data: "a: &a [1, 2, 3]\nb: [*a, *a, *a]\n", limits: Limits{MaxAliasNodes: 8},
			want: []Problem{{Pos{2, 13}, RuleAliasBudget, "more than 8 nodes"}}},
		{name: "alias inside its own anchor", path: "x.yaml", data: "a: &a [1, *a]\n",
			want: []Problem{{Pos{1, 11}, RuleAliasBudget, "*a is inside its own anchor"}}},
		{name: "alias inside its own mapping anchor", path: "x.yaml", data: "a: &m\n  self: *m\n",
			want: []Problem{{Pos{2, 9}, RuleAliasBudget, "*m is inside its own anchor"}}},
		{name: "node limit", path: "x.json", data: "[" + strings.Repeat("0,", 99) + "0]", limits: Limits{MaxNodes: 50},
			want: []Problem{{Pos{1, 100}, RuleNodeCount, "more than 50 values"}}},
		{name: "node limit before a later key", path: "x.json", data: `{"a": [1, 2, 3], "b": {"c": 4}}`, limits: Limits{MaxNodes: 4},
			want: []Problem{{Pos{1, 14}, RuleNodeCount, "more than 4 values"}}},
		{name: "node limit just met", path: "x.json", data: `{"a": [1, 2, 3]}`, limits: Limits{MaxNodes: 5}, decoded: true},
		{name: "node limit across JSONL lines", path: "t.jsonl", kind: "autopilot.trace", data: "{\"a\": 1}\n{\"b\": [1, 2]}\n{\"c\": 3}\n", limits: Limits{MaxNodes: 4},
			want: []Problem{{Pos{2, 8}, RuleNodeCount, "more than 4 values"}}},
		{name: "a JSONL line that does not parse counts no value", path: "t.jsonl", kind: "autopilot.trace", data: "{\"a\": 1}\n{\"b\": [1, 2, 3, 4]\n{\"c\": 3}\n", limits: Limits{MaxNodes: 4}, decoded: true,
			want: []Problem{{Pos{2, 19}, RuleSyntax, "unexpected end of file"}}},
	})
}

// aliasBomb is the "billion laughs" in YAML: about 500 bytes that expand to
// 10^9 strings.
var aliasBomb = func() string {
	var b strings.Builder
	b.WriteString("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	prev := "a"
	for _, name := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b.WriteString(name + ": &" + name + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+",", 9), ",") + "]\n")
		prev = name
	}
	return b.String()
}()

func TestAliasBombSize(t *testing.T) {
	if n := len(aliasBomb); n > 600 {
		t.Errorf("alias bomb is %d bytes; it is meant to be small", n)
	}
}

func TestDecodeJSONL(t *testing.T) {
	const trace = `{"step":"plan","n":1}` + "\n" +
		"\n" +
		`{"step":"plan","n":` + "\n" +
		`{"step":"verify","n":4,"n":5}` + "\n" +
		`  {"step":"judge","n":5}  ` + "\r\n" +
		`[1]` + "\n"
	d := Decode(".planning/phases/1/TRACE.jsonl", KindByID("autopilot.trace"), []byte(trace), DefaultLimits)
	if !d.Decoded {
		t.Fatalf("not decoded: %v", d.Problems)
	}
	want := []any{
		map[string]any{"step": "plan", "n": int64(1)},
		map[string]any{"step": "judge", "n": int64(5)},
		[]any{int64(1)},
	}
	if !reflect.DeepEqual(d.Value, want) {
		t.Errorf("value = %#v, want %#v", d.Value, want)
	}
	wantProbs := []Problem{
		{Pos{2, 1}, RuleSyntax, "blank line"},
		{Pos{3, 20}, RuleSyntax, "unexpected end of file"},
		{Pos{4, 24}, RuleDuplicateKey, `duplicate key "n"`},
	}
	if len(d.Problems) != len(wantProbs) {
		t.Fatalf("problems = %v, want %v", d.Problems, wantProbs)
	}
	for i, w := range wantProbs {
		if p := d.Problems[i]; p.Pos != w.Pos || p.Rule != w.Rule || !strings.Contains(p.Message, w.Message) {
			t.Errorf("problem %d = %+v, want %+v", i, p, w)
		}
	}
	// The good lines keep their own line numbers.
	for ptr, pos := range map[string]Pos{"/0": {1, 1}, "/0/n": {1, 16}, "/1": {5, 3}, "/1/step": {5, 4}, "/2/0": {6, 2}, "/3": {1, 1}} {
		if got := d.LocatePointer(ptr); got != pos {
			t.Errorf("LocatePointer(%q) = %+v, want %+v", ptr, got, pos)
		}
	}
}

func TestDecodeJSONLBlankLines(t *testing.T) {
	tests := []struct {
		name  string
		data  string
		items int
		blank []int // lines reported blank
	}{
		{name: "final newline", data: "{}\n{}\n", items: 2},
		{name: "no final newline", data: "{}\n{}", items: 2},
		{name: "CRLF", data: "{}\r\n{}\r\n", items: 2},
		{name: "blank line at the end", data: "{}\n\n", items: 1, blank: []int{2}},
		{name: "blank lines in the middle", data: "{}\n\n \t\n{}\n", items: 2, blank: []int{2, 3}},
		{name: "blank first line", data: "\n{}\n", items: 1, blank: []int{1}},
		{name: "whitespace-only last line", data: "{}\n  ", items: 1, blank: []int{2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Decode("t.jsonl", nil, []byte(tc.data), DefaultLimits)
			if got := len(d.Value.([]any)); got != tc.items {
				t.Errorf("%d items, want %d", got, tc.items)
			}
			var blank []int
			for _, p := range d.Problems {
				if strings.Contains(p.Message, "blank line") {
					blank = append(blank, p.Pos.Line)
				}
			}
			if !reflect.DeepEqual(blank, tc.blank) || len(d.Problems) != len(tc.blank) {
				t.Errorf("problems %v, want blank lines %v", d.Problems, tc.blank)
			}
		})
	}
}

func TestDecodeNeverPanics(t *testing.T) {
	// Inputs that have crashed YAML and JSON parsers elsewhere.
	inputs := []string{
		"- ? : ", "? - :", "[{]", "{[}", "&a [*a, *a]", "a: !!binary ====", "%YAML 2.0\n---\na: 1",
		"%TAG ! tag:x,2000:\n---\n!a b", "'" + strings.Repeat("\\", 1000), strings.Repeat("- ", 5000) + "x",
		strings.Repeat("{a: ", 20000), "\"\\u", `"\ud800\u`, "-", "[-]", "1e", "[1.]",
	}
	for _, in := range inputs {
		for _, p := range []string{"x.yaml", "x.json", "x.jsonl"} {
			d := Decode(p, nil, []byte(in), DefaultLimits)
			if !d.Decoded && len(d.Problems) == 0 {
				t.Errorf("%s %q: not decoded and no problem", p, in)
			}
		}
	}
}

// TestDecodeProblemCap: a hostile file cannot flood the report. It lists
// maxProblems problems, and the next one says how many more there are.
func TestDecodeProblemCap(t *testing.T) {
	tests := []struct {
		name     string
		path     string
		data     string
		decoded  bool
		wantLast string // fragment of the last problem's message; "" for no summary
		wantLen  int
	}{
		{name: "blank JSONL lines", path: "x.jsonl", data: strings.Repeat("\n", 5000) + "{}\n", decoded: true,
			wantLen: maxProblems + 1, wantLast: "blank line: every line of a JSONL file must be one JSON object (and 4899 more problems in this file, not listed)"},
		{name: "duplicate keys", path: "x.yaml", data: strings.Repeat("a: 1\n", 3001),
			wantLen: maxProblems + 1, wantLast: `duplicate key "a": the later value would silently replace the earlier one (and 2899 more problems`},
		{name: "bad JSONL lines and duplicate keys together", path: "x.jsonl",
			data: strings.Repeat("x\n", 60) + strings.Repeat(`{"a":1,"a":2}`+"\n", 60) + "{}\n", decoded: true,
			wantLen: maxProblems + 1, wantLast: "(and 19 more problems in this file, not listed)"},
		{name: "exactly one past the limit has no summary", path: "x.jsonl", data: strings.Repeat("\n", maxProblems+1), decoded: true,
			wantLen: maxProblems + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Decode(tc.path, nil, []byte(tc.data), DefaultLimits)
			if d.Decoded != tc.decoded {
				t.Errorf("Decoded = %v, want %v", d.Decoded, tc.decoded)
			}
			if len(d.Problems) != tc.wantLen {
				t.Fatalf("%d problems, want %d", len(d.Problems), tc.wantLen)
			}
			last := d.Problems[len(d.Problems)-1].Message
			if tc.wantLast == "" && strings.Contains(last, "not listed") || !strings.Contains(last, tc.wantLast) {
				t.Errorf("last problem %q, want %q", last, tc.wantLast)
			}
		})
	}
	// The JSONL file with bad lines still yields its good line.
	d := Decode("x.jsonl", nil, []byte(strings.Repeat("x\n", 500)+`{"ok":true}`+"\n"), DefaultLimits)
	if items := d.Value.([]any); len(items) != 1 || d.LocatePointer("/0") != (Pos{501, 1}) {
		t.Errorf("items %v at %+v", items, d.LocatePointer("/0"))
	}
}
