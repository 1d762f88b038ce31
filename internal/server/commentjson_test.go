package server

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// agreeWithJSON checks decodeCommentPayload against json.Unmarshal on one
// body: when it is sure, encoding/json must decode the same payload; when
// encoding/json refuses the body, it must not be sure. It returns whether
// it was sure.
func agreeWithJSON(t *testing.T, body []byte) bool {
	t.Helper()
	var want payload
	err := json.Unmarshal(body, &want)
	got, ok := decodeCommentPayload(bytes.Clone(body)) // it unescapes the comment's text in place
	if !ok && body != nil {
		// Unsure, it wrote nothing: encoding/json reads the same body.
		cp := bytes.Clone(body)
		if decodeCommentPayload(cp); !bytes.Equal(cp, body) {
			t.Fatalf("unsure of %.300q, and wrote into it", body)
		}
	}
	switch {
	case ok && err != nil:
		t.Fatalf("decodeCommentPayload was sure of a body encoding/json refuses (%v): %.300q", err, body)
	case ok && !reflect.DeepEqual(*got, want):
		t.Fatalf("decodeCommentPayload disagrees with encoding/json on %.300q:\n got %+v\nwant %+v", body, *got, want)
	case !ok && got != nil:
		t.Fatal("unsure, with a payload")
	}
	return ok
}

// TestDecodeCommentPayloadExamples: on every example payload of
// @octokit/webhooks-examples (every event, as a repository and as an App
// delivery), the one-pass decoder agrees with encoding/json, and it is sure
// of every issue_comment example: their routing fields come from it.
func TestDecodeCommentPayloadExamples(t *testing.T) {
	t.Parallel()
	for _, e := range loadExamples(t) {
		for _, e := range []example{e, asAppDelivery(e)} {
			t.Run(e.name(), func(t *testing.T) {
				sure := agreeWithJSON(t, e.body)
				if e.event == "issue_comment" && !sure {
					t.Error("unsure of an issue_comment example: it takes the slow path")
				}
				if e.event != "issue_comment" {
					return
				}
				p, _ := decodeCommentPayload(bytes.Clone(e.body))
				if p.Comment == nil || p.Comment.Body != str(e.raw, "comment", "body") || p.Action != str(e.raw, "action") {
					t.Errorf("comment or action differ from the payload's")
				}
			})
		}
	}
}

// TestDecodeCommentPayload: the bodies the one-pass decoder is sure of,
// and those it leaves to encoding/json (which may accept or refuse them).
func TestDecodeCommentPayload(t *testing.T) {
	t.Parallel()
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		name string
		body string
		sure bool
	}{
		{"the fixture", string(commentEvent("created", 42, 7, "alice", "alice", "/resolve D-001 approve")), true},
		{"a long body with escapes", string(commentEvent("created", 42, 7, "alice", "alice", "a\r\n\"q\"\t\\/\u00e9\U0001F600"+strings.Repeat("prose ", 4000))), true},
		{"empty object", `{}`, true},
		{"whitespace around", " \t\r\n{ \"action\" : \"created\" } \n", true},
		{"nulls in pointers and strings", `{"installation":null,"comment":null,"issue":null,"repository":null,"action":null}`, true},
		{"labels listed", `{"issue":{"number":3,"labels":[{"name":"a","id":1},{"name":"b"}]}}`, true},
		{"labels empty", `{"issue":{"labels":[]}}`, true},
		{"unknown keys of every type skipped", `{"x":[1,-2.5e+3,true,false,null,"s",{"a":{}}],"comment":{"reactions":{"+1":0},"id":5}}`, true},
		{"escaped key", `{"\u0061ction":"created"}`, true},
		{"surrogate pair", `{"action":"\ud83d\ude00"}`, true},
		{"lone surrogate", `{"action":"\ud83dx\udc00"}`, true},
		{"invalid UTF-8", "{\"action\":\"a\xffb\xc3\"}", true},
		{"unknown key at the depth limit", `{"x":` + deep(maxJSONDepth-1) + `}`, true},

		{"not an object", `[]`, false},
		{"empty", ``, false},
		{"trailing data", `{} {}`, false},
		{"invalid", `{"action":"created",}`, false},
		{"too deep", `{"x":` + deep(maxJSONDepth) + `}`, false},
		{"a key twice", `{"action":"created","action":"deleted"}`, false},
		{"a key in another case", `{"Action":"created"}`, false},
		{"a key folding to a field", `{"ſender":{}}`, false},
		{"a nested key in another case", `{"comment":{"ID":5}}`, false},
		{"a field it does not fill", `{"pull_request":{}}`, false},
		{"a push field", `{"ref":"refs/heads/main"}`, false},
		{"a number that is not an integer", `{"comment":{"id":1.5}}`, false},
		{"an integer too large", `{"comment":{"id":99999999999999999999}}`, false},
		{"a string for a number", `{"comment":{"id":"5"}}`, false},
		{"a number for a string", `{"action":5}`, false},
		{"null for a struct", `{"sender":null}`, false},
		{"null labels", `{"issue":{"labels":null}}`, false},
		{"a null label", `{"issue":{"labels":[null]}}`, false},
		{"a control character", "{\"action\":\"a\nb\"}", false},
		{"a bad escape", `{"action":"\x41"}`, false},
		{"a leading zero", `{"x":01}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if sure := agreeWithJSON(t, []byte(tt.body)); sure != tt.sure {
				t.Errorf("sure = %v, want %v", sure, tt.sure)
			}
		})
	}
}

// TestDecodePayloadRefusesWhatJSONRefuses: a body the fast path is unsure of
// gets encoding/json's answer, a malformed-payload error included.
func TestDecodePayloadRefusesWhatJSONRefuses(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{"comment":{"id":"5"}}`, `{"action":`, `{"x":` + strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth) + `}`} {
		if _, err := decodePayload("issue_comment", []byte(body)); err == nil {
			t.Errorf("%.40q: no error", body)
		}
	}
}

// FuzzDecodeCommentPayload: on any body, the one-pass decoder is unsure, or
// decodes exactly what encoding/json does.
func FuzzDecodeCommentPayload(f *testing.F) {
	f.Add(commentEvent("created", 42, 7, "alice", "alice", "/resolve D-001 approve\r\n\"why\""))
	f.Add(commentEvent("edited", 1, 2, appBot, "mallory", ""))
	for _, body := range seedPayloads() {
		f.Add(body)
	}
	for _, s := range []string{`{"issue":{"number":3,"labels":[{"name":"a"}]},"sender":{"login":"x","type":"Bot"}}`,
		`{"\u0061ction":"\ud83d\ude00\ud800"}`, "{\"action\":\"a\xffb\"}", `{"Comment":{}}`, `{"x":[[[{"y":-0.5E-3}]]]}`,
		`{"installation":{"id":1,"account":{"login":"o"}},"repository":{"full_name":"o/r","owner":null}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		agreeWithJSON(t, body)
	})
}

// FuzzUnquote: a JSON string is read and unescaped as encoding/json does,
// and refused when encoding/json refuses it.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`plain`, `a\nb`, `\u00e9\ud83d\ude00`, `\ud800`, `\udc00\ud800\u0041`, "\xff\xc3", `\q`, "a\x01", `\u12`, `"`, `\\"`, "é\\/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		quoted := `"` + raw + `"`
		var want string
		err := json.Unmarshal([]byte(quoted), &want)
		d := jdec{s: quoted}
		got, esc, ok := d.rawString()
		if ok && d.i != len(quoted) {
			ok = false // the string ended before the last quote: not one string
		}
		if ok != (err == nil) {
			t.Fatalf("%q: read %v, encoding/json's error %v", quoted, ok, err)
		}
		if ok {
			if u := unquote(got, esc); u != want {
				t.Fatalf("%q: unquoted %q, encoding/json %q", quoted, u, want)
			}
		}
	})
}
