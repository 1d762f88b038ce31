package ghfaketest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
)

// TestVerdictsAreRemembered: checkResponse decides on a body once, and a
// verdict is only reused for what it was decided on: the same operation,
// status, Content-Type and bytes. Each exchange of a sequence is checked
// on one validator, after the ones before it, and must get what a fresh
// validator gives it.
func TestVerdictsAreRemembered(t *testing.T) {
	bad := "[" + strings.Replace(activity, `"node_id":"RA_1",`, "", 1) + "]"
	good := "[" + activity + "]"
	const json = "application/json; charset=utf-8"
	type exchange struct {
		target string
		status int
		ctype  string
		body   string
		want   string // a substring of the violations; "" for none
	}
	tests := []struct {
		name string
		seq  []exchange
	}{
		{name: "a bad body twice", seq: []exchange{
			{target: "/repos/o/r/activity", status: 200, ctype: json, body: bad, want: `property "node_id" is missing`},
			{target: "/repos/o/r/activity", status: 200, ctype: json, body: bad, want: `property "node_id" is missing`},
		}},
		{name: "a good body, then the bad one", seq: []exchange{
			{target: "/repos/o/r/activity", status: 200, ctype: json, body: good},
			{target: "/repos/o/r/activity", status: 200, ctype: json, body: bad, want: `property "node_id" is missing`},
			{target: "/repos/o/r/activity", status: 200, ctype: json, body: good},
		}},
		{name: "the same bytes, another operation", seq: []exchange{
			{target: "/repos/o/r/activity", status: 200, ctype: json, body: good},
			{target: "/repos/o/r/git/ref/heads/x", status: 200, ctype: json, body: good, want: "value must be an object"},
		}},
		{name: "the same bytes, another status", seq: []exchange{
			{target: "/repos/o/r/activity", status: 200, ctype: json, body: good},
			{target: "/repos/o/r/activity", status: 422, ctype: json, body: good, want: "value must be an object"},
		}},
		{name: "the same bytes, another Content-Type", seq: []exchange{
			{target: "/repos/o/r/activity", status: 200, ctype: json, body: good},
			{target: "/repos/o/r/activity", status: 200, ctype: "text/plain", body: good, want: `response header Content-Type has unexpected value: "text/plain"`},
		}},
	}
	v := load(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, x := range tt.seq {
				check := func(v *Validator) []string {
					r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:1"+x.target, nil)
					h := http.Header{"Content-Type": {x.ctype}}
					_, got := v.Check(Exchange{Request: r, Status: x.status, Header: h, Body: []byte(x.body)})
					return got
				}
				got, fresh := check(v), check(v.forgetful())
				if !slices.Equal(got, fresh) {
					t.Fatalf("exchange %d: violations\n%q\nwant what a fresh validator finds\n%q", i, got, fresh)
				}
				all := strings.Join(got, "\n")
				if x.want == "" && all != "" || x.want != "" && !strings.Contains(all, x.want) {
					t.Fatalf("exchange %d: violations:\n%s\nwant %q", i, all, x.want)
				}
			}
		})
	}
}

// forgetful is v with an empty memo.
func (v *Validator) forgetful() *Validator {
	return &Validator{RefusedRequestsOK: v.RefusedRequestsOK, doc: v.doc, router: v.router, multi: v.multi, paths: v.paths,
		basicError: v.basicError, classes: v.classes}
}

// TestRoutesAreRemembered: findRoute's memo gives each request the route the
// routers find for it: another method or path is another route, a
// multi-segment parameter still matches through the second router, and a
// path no operation answers stays unanswered.
func TestRoutesAreRemembered(t *testing.T) {
	seq := []struct{ method, target string }{
		{http.MethodGet, "/repos/o/r/issues/1/comments"},
		{http.MethodPost, "/repos/o/r/issues/1/comments"},
		{http.MethodGet, "/repos/o/r/issues/1/comments?page=2"},
		{http.MethodGet, "/repos/o/r/issues/2/comments"},
		{http.MethodGet, "/repos/o/r/contents/a/b/c.yaml"},
		{http.MethodGet, "/repos/o/r/contents/a/b/c.yaml"},
		{http.MethodGet, "/repos/o/r/no/such/thing"},
		{http.MethodGet, "/repos/o/r/no/such/thing"},
	}
	v := load(t)
	for i, x := range seq {
		r, err := apiRequest(Exchange{Request: httptest.NewRequest(x.method, "http://127.0.0.1:1"+x.target, nil)})
		if err != nil {
			t.Fatal(err)
		}
		show := func(route *routers.Route, params map[string]string, err error) string {
			if err != nil {
				return "error"
			}
			return route.Method + " " + route.Path + " " + fmt.Sprint(params)
		}
		want := show(v.multi.FindRoute(r)) // the second router, as findRoute tries it
		if route, params, err := v.router.FindRoute(r); err == nil {
			want = show(route, params, err)
		}
		if got := show(v.findRoute(r)); got != want {
			t.Errorf("%d %s %s: route %q, the routers find %q", i, x.method, x.target, got, want)
		}
	}
	if got := len(v.routes.m); got != 5 {
		t.Errorf("%d routes remembered, want 5 (one per method and path)", got)
	}
}

// TestResponseSchemasIgnoreAddresses keeps true what addresslessSum relies
// on: no schema of the subset has a pattern, a response schema constrains
// a string's length only for a git ref's SHA, and no "uri" format is
// checked. If one of these fails, the fake's address can change a verdict:
// key the memo on the body as it is.
func TestResponseSchemasIgnoreAddresses(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", filepath.FromSlash(SubsetFile)))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	const sha = "/components/schemas/git-ref/properties/object/properties/sha"
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				if _, isSchema := v["type"]; isSchema || k == "pattern" {
					switch {
					case k == "pattern":
						t.Errorf("%s has a pattern", at)
					case (k == "maxLength" || k == "minLength") && !strings.Contains(at, "/requestBody/") && at != sha:
						t.Errorf("%s constrains the length of a response string", at)
					}
				}
				walk(child, at+"/"+k)
			}
		case []any:
			for i, child := range v {
				walk(child, fmt.Sprintf("%s/%d", at, i))
			}
		}
	}
	walk(doc, "")
	if _, ok := openapi3.SchemaStringFormats["uri"]; ok {
		t.Error(`kin-openapi checks the "uri" format`)
	}
}

// TestAddresslessSum: the sum of a body is the same from any fake's
// address, the sum of its bytes with the address written out, and another
// body's sum is another.
func TestAddresslessSum(t *testing.T) {
	body := func(host string) []byte {
		return []byte(`[{"url":"http://` + host + `/repos/o/r/issues/1","html_url":"https://github.com/o/r/issues/1"},` +
			`{"url":"http://` + host + `/repos/o/r/issues/2","comments_url":"http://` + host + `/c"}]`)
	}
	one, two := "127.0.0.1:40001", "127.0.0.1:40002"
	tests := []struct {
		name  string
		a, b  []byte
		hostA string
		hostB string
		same  bool
	}{
		{name: "two fakes", a: body(one), hostA: one, b: body(two), hostB: two, same: true},
		{name: "the address written out", a: body(one), hostA: one, b: body("fake.invalid"), hostB: "", same: true},
		{name: "no host", a: body(one), hostA: "", b: body(two), hostB: "", same: false},
		{name: "another body", a: body(one), hostA: one, b: bytes.Replace(body(two), []byte("issues/2"), []byte("issues/3"), 1), hostB: two},
		{name: "another host's address is kept", a: body(one), hostA: two, b: body(two), hostB: one},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := addresslessSum(tt.a, tt.hostA) == addresslessSum(tt.b, tt.hostB); got != tt.same {
				t.Errorf("the same sum: %v, want %v", got, tt.same)
			}
		})
	}
}
