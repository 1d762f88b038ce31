package ghfake

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// tricky are strings every escape of encoding/json's meets.
var tricky = []string{
	"", "plain", `"quoted" \back\slash/`, "<!-- phasegate:outcome --> & <b>", "tab\tnew\nline\rcr\bbs\fff",
	"\x00\x01\x1f\x7f", "é ü 漢字 🙂", "line\u2028sep\u2029para", "bad \xff utf-8 \xc3", "trunc \xe2\x80",
}

// TestAppendJSONIsMarshal: appendJSON writes json.Marshal's bytes, or fails
// where it fails.
func TestAppendJSONIsMarshal(t *testing.T) {
	type custom struct {
		A string `json:"a"`
		T time.Time
	}
	var nilMap map[string]any
	var nilList []any
	tests := []struct {
		name string
		v    any
	}{
		{name: "nil", v: nil},
		{name: "numbers", v: []any{0, -1, math.MaxInt64, int64(math.MinInt64), 1.5, 1e21, float32(0.1), uint8(7)}},
		{name: "booleans", v: []any{true, false}},
		{name: "strings", v: tricky},
		{name: "keys sorted by bytes", v: map[string]any{"b": 1, "a": 2, "B": 3, "ä": 4, "a_b": 5, "a.b": 6, "<k>": 7}},
		{name: "string maps", v: map[string]string{"z": "<", "y": "\u2028"}},
		{name: "nil map and list", v: map[string]any{"m": nilMap, "l": nilList, "s": []string(nil), "ms": []map[string]any(nil)}},
		{name: "empty map and list", v: map[string]any{"m": map[string]any{}, "l": []any{}}},
		{name: "nesting", v: []any{map[string]any{"user": map[string]any{"login": "a&b", "id": 1}, "labels": []map[string]any{{"name": "x"}}}}},
		{name: "other types", v: map[string]any{"c": custom{A: "<x>", T: time.Unix(0, 0).UTC()}, "raw": json.RawMessage(`{ "b" : 1 }`), "p": &custom{}}},
		{name: "unencodable", v: map[string]any{"ok": 1, "bad": math.Inf(1)}},
		{name: "unencodable in a list", v: []any{1, make(chan int)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, wantErr := json.Marshal(tt.v)
			got, err := appendJSON([]byte("prefix"), tt.v)
			if wantErr != nil {
				if err == nil || got != nil {
					t.Fatalf("got %q, %v; json.Marshal fails: %v", got, err, wantErr)
				}
				return
			}
			if err != nil || !bytes.Equal(got, append([]byte("prefix"), want...)) {
				t.Fatalf("got  %s (%v)\nwant prefix%s", got, err, want)
			}
		})
	}
}

func FuzzAppendJSON(f *testing.F) {
	for _, s := range tricky {
		f.Add(s, s, int64(len(s)))
	}
	f.Fuzz(func(t *testing.T, k, s string, n int64) {
		v := map[string]any{k: s, s: []any{n, int(n), k, n%2 == 0, nil}, "m": map[string]string{s: k}}
		want, _ := json.Marshal(v)
		got, err := appendJSON(nil, v)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("got  %s (%v)\nwant %s", got, err, want)
		}
	})
}

// TestAnswersAreMarshalled: what the fake answers is byte for byte what
// json.Marshal makes of it (decoded and encoded again, a json.Marshal
// output is unchanged; but for invalid UTF-8, which comes back as U+FFFD
// and is encoded so the second time).
func TestAnswersAreMarshalled(t *testing.T) {
	s := newTestServer(t)
	valid := slices.DeleteFunc(slices.Clone(tricky), func(s string) bool { return !utf8.ValidString(s) })
	n := s.AddIssue("acme", "widgets", "<Feature> & \u2028", strings.Join(valid, "|"), "alice")
	for _, b := range valid {
		s.AddComment("acme", "widgets", n, "alice", b)
	}
	s.AddPullRequest("acme", "widgets", PullRequest{Author: "alice", HeadSHA: "h1", BaseSHA: "b1", Title: "a <b>"})
	for _, path := range []string{
		"/repos/acme/widgets", "/repos/acme/widgets/issues/1", "/repos/acme/widgets/issues/1/comments",
		"/repos/acme/widgets/issues?state=all", "/repos/acme/widgets/pulls/2", "/repos/acme/widgets/issues/9",
	} {
		t.Run(path, func(t *testing.T) {
			a := do(t, s, http.MethodGet, path, tok, "")
			dec := json.NewDecoder(bytes.NewReader(a.body))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatalf("%d %q: %v", a.status, a.body, err)
			}
			again, err := json.Marshal(v)
			if err != nil || !bytes.Equal(again, a.body) {
				t.Fatalf("answered\n%s\njson.Marshal makes\n%s", a.body, again)
			}
		})
	}
}
