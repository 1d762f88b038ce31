package outcome

import (
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/testutil"
)

// TestCanonicalGolden keeps the canonical YAML of every test outcome under
// review, and checks that it decodes back to the value it came from.
func TestCanonicalGolden(t *testing.T) {
	for _, name := range []string{"seed", "hostile", "defaults", "empty"} {
		t.Run(name, func(t *testing.T) {
			v, _, canonical := loadOutcome(t, name+".yaml")
			testutil.Golden(t, filepath.Join("testdata", "golden", name+".canonical.yaml"), []byte(string(canonical)))
			checkCanonical(t, v, canonical)
		})
	}
}

// checkCanonical checks the properties every canonical YAML has: it decodes
// to v, serialising that again gives the same bytes, and no line has
// trailing white space or an HTML comment delimiter.
func checkCanonical(t testing.TB, v any, canonical []byte) {
	t.Helper()
	back := decodeYAML(t, string(canonical))
	if !reflect.DeepEqual(back, v) {
		t.Errorf("canonical YAML decodes to\n%#v\nwant\n%#v\nYAML:\n%s", back, v, canonical)
	}
	again, err := Canonical(back)
	if err != nil || string(again) != string(canonical) {
		t.Errorf("Canonical is not idempotent: %v\n%s\nthen\n%s", err, canonical, again)
	}
	s := string(canonical)
	if !strings.HasSuffix(s, "\n") {
		t.Errorf("canonical YAML does not end with a line break")
	}
	for i, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if strings.TrimRight(line, " \t") != line {
			t.Errorf("line %d has trailing white space: %q", i+1, line)
		}
		if strings.HasPrefix(line, "`") || strings.HasPrefix(line, "~") {
			t.Errorf("line %d starts like a fence: %q", i+1, line)
		}
	}
	if strings.Contains(s, "@") {
		t.Errorf("canonical YAML holds an @:\n%s", s)
	}
	if strings.Contains(s, "<!--") || strings.Contains(s, "-->") {
		t.Errorf("canonical YAML holds an HTML comment delimiter:\n%s", s)
	}
}

// TestCanonicalIgnoresFormatting: the same outcome written differently —
// flow or block style, other key order, other quoting, comments — has the
// same canonical bytes and ID.
func TestCanonicalIgnoresFormatting(t *testing.T) {
	_, _, want := loadOutcome(t, "seed.yaml")
	variants := map[string]string{
		"flow and reordered":       `{pending_decisions: [{blocking: true, options: [approve, request-changes, reject], question: "Approve PREQ for technical planning?", type: approval, id: D-001}, {recommended: capture, blocking: false, id: "D-002", type: capture-out-of-scope, question: "Capture 'User avatar upload sizing' as separate issue?", options: [capture, discard]}], findings: [{proposed_category: out-of-scope, reasoning: "Mentioned by user, not part of this feature's user stories", title: 'User avatar upload sizing', type: out-of-scope-item}], produced: [{location: issue body, artifact: PREQ}], feature: feature-042, phase: requirements}`,
		"comments and indentation": "# an outcome\nfeature: 'feature-042'   # quoted\nphase: requirements\nproduced:\n- location: issue body\n  artifact: PREQ\nfindings:\n-   type: out-of-scope-item\n    title: User avatar upload sizing\n    proposed_category: out-of-scope\n    reasoning: >-\n      Mentioned by user, not part of this feature's user stories\npending_decisions:\n- id: D-001\n  type: approval\n  question: Approve PREQ for technical planning?\n  options:\n  - approve\n  - request-changes\n  - reject\n  blocking: true\n- {id: D-002, type: capture-out-of-scope, question: \"Capture 'User avatar upload sizing' as separate issue?\", options: [capture, discard], recommended: capture, blocking: false}\n",
	}
	for name, src := range variants {
		t.Run(name, func(t *testing.T) {
			got, err := Canonical(decodeYAML(t, src))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) || ID(got) != ID(want) {
				t.Errorf("canonical YAML differs:\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestCanonicalScalars(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string // the line for key "v", or "" to only check the round trip
	}{
		{name: "plain text", v: "User avatar upload sizing", want: "v: User avatar upload sizing"},
		{name: "punctuation that stays plain", v: "a, b; c? (d) 'e' f/g+h=i-j.k_l!", want: "v: a, b; c? (d) 'e' f/g+h=i-j.k_l!"},
		{name: "empty", v: "", want: `v: ""`},
		{name: "yes", v: "yes", want: `v: "yes"`},
		{name: "Off", v: "Off", want: `v: "Off"`},
		{name: "null word", v: "null", want: `v: "null"`},
		{name: "tilde", v: "~", want: `v: "~"`},
		{name: "number text", v: "123", want: `v: "123"`},
		{name: "float text", v: "1e3", want: `v: "1e3"`},
		{name: "date text", v: "2026-04-30", want: `v: "2026-04-30"`},
		{name: "leading dash", v: "- x", want: `v: "- x"`},
		{name: "colon", v: "a: b", want: `v: "a: b"`},
		{name: "hash", v: "a #b", want: `v: "a #b"`},
		{name: "trailing space", v: "a ", want: `v: "a "`},
		{name: "quotes and backslash", v: `say "hi" \ there`, want: `v: "say \"hi\" \\ there"`},
		{name: "line breaks and tab", v: "a\nb\r\nc\td", want: `v: "a\nb\r\nc\td"`},
		{name: "controls", v: "\x00\x1b\x7f\u0085", want: `v: "\x00\x1B\x7F\x85"`},
		{name: "invisible and bidi", v: "\u200b\u202e\u2028\ufeff\U000e0041", want: `v: "\u200B\u202E\u2028\uFEFF\U000E0041"`},
		{name: "non-ASCII letters stay", v: "Größe 大小", want: `v: "Größe 大小"`},
		{name: "comment open", v: "<!-- x", want: `v: "\x3C!-- x"`},
		{name: "comment close", v: "x -->", want: `v: "x --\x3E"`},
		{name: "lone angle brackets stay", v: "<b> a->b <!- --", want: `v: "<b> a->b <!- --"`},
		{name: "backticks stay", v: "```", want: "v: \"```\""},
		{name: "at sign", v: "@org/team a@b", want: `v: "\x40org/team a\x40b"`},
		{name: "true", v: true, want: "v: true"},
		{name: "null", v: nil, want: "v: null"},
		{name: "int", v: int64(-42), want: "v: -42"},
		{name: "go int", v: 7, want: "v: 7"},
		{name: "float", v: 1.5, want: "v: 1.5"},
		{name: "integral float", v: 2.0, want: "v: 2.0"},
		{name: "negative zero", v: math.Copysign(0, -1), want: "v: -0.0"},
		{name: "big float", v: 1e21, want: "v: 1e+21"},
		{name: "small float", v: 1e-7, want: "v: 1e-07"},
		{name: "big number", v: json.Number("123456789012345678901234567890"), want: "v: 123456789012345678901234567890"},
		{name: "huge number", v: json.Number("1e400"), want: "v: 1e400"},
		{name: "empty list", v: []any{}, want: "v: []"},
		{name: "empty map", v: map[string]any{}, want: "v: {}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := map[string]any{"v": tc.v}
			got, err := Canonical(v)
			if err != nil {
				t.Fatalf("Canonical: %v", err)
			}
			if line := strings.TrimSuffix(string(got), "\n"); line != tc.want {
				t.Errorf("Canonical = %s, want %s", line, tc.want)
			}
			back := decodeYAML(t, string(got)).(map[string]any)["v"]
			want := tc.v
			if n, ok := want.(int); ok {
				want = int64(n)
			}
			if !reflect.DeepEqual(back, want) {
				t.Errorf("decodes to %#v, want %#v", back, want)
			}
		})
	}
}

func TestCanonicalLayout(t *testing.T) {
	v := map[string]any{
		"zeta":              []any{[]any{"a", "b"}, []any{}, map[string]any{}, map[string]any{"y": 1.0, "x": []any{map[string]any{"k": "v"}}}},
		"pending_decisions": []any{map[string]any{"blocking": true, "zz": 1, "aa": 2, "id": "D-001"}},
		"phase":             "qa",
		"alpha":             map[string]any{"id": "not first here", "b": nil, "a": "x"},
		"Key with space":    "k",
		"":                  "empty key",
		"issue":             int64(3),
	}
	want := `phase: qa
issue: 3
pending_decisions:
  - id: D-001
    blocking: true
    aa: 2
    zz: 1
"": empty key
Key with space: k
alpha:
  a: x
  b: null
  id: not first here
zeta:
  - - a
    - b
  - []
  - {}
  - x:
      - k: v
    "y": 1.0
`
	got, err := Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("Canonical =\n%s\nwant\n%s", got, want)
	}
	checkCanonical(t, decodeYAML(t, want), got)
}

func TestCanonicalErrors(t *testing.T) {
	tests := []struct {
		name    string
		v       any
		wantErr string
	}{
		{name: "not a mapping", v: []any{}, wantErr: "canonical yaml: outcome is a list, not a mapping"},
		{name: "NaN", v: map[string]any{"a": math.NaN()}, wantErr: "canonical yaml: number NaN has no YAML spelling that reads back as a number"},
		{name: "Inf", v: map[string]any{"a": []any{math.Inf(1)}}, wantErr: "canonical yaml: number +Inf has no YAML spelling that reads back as a number"},
		{name: "invalid UTF-8 value", v: map[string]any{"a": "\xff"}, wantErr: "canonical yaml: text is not valid UTF-8"},
		{name: "invalid UTF-8 key", v: map[string]any{"\xff": "a"}, wantErr: "canonical yaml: text is not valid UTF-8"},
		{name: "bad number", v: map[string]any{"a": json.Number("0x10")}, wantErr: `canonical yaml: number "0x10" is not a decimal number`},
		{name: "foreign type", v: map[string]any{"a": int32(1)}, wantErr: "canonical yaml: value of type int32 cannot be serialised"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Canonical(tc.v)
			if err == nil || err.Error() != tc.wantErr {
				t.Fatalf("Canonical error = %v, want %q", err, tc.wantErr)
			}
		})
	}
	if got, err := Canonical(map[string]any{}); err != nil || string(got) != "{}\n" {
		t.Errorf("Canonical(empty) = %q, %v", got, err)
	}
}

func TestCanonicalDeep(t *testing.T) {
	var v any = "leaf"
	for i := 0; i < 60; i++ {
		if i%2 == 0 {
			v = []any{v}
		} else {
			v = map[string]any{"k": v}
		}
	}
	top := map[string]any{"deep": v}
	got, err := Canonical(top)
	if err != nil {
		t.Fatal(err)
	}
	checkCanonical(t, top, got)
}

func TestID(t *testing.T) {
	if got := ID([]byte("")); got != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("ID(\"\") = %s", got)
	}
	_, _, canonical := loadOutcome(t, "seed.yaml")
	if got := ID(canonical); len(got) != 64 || got != strings.ToLower(got) {
		t.Errorf("ID = %q", got)
	}
}
