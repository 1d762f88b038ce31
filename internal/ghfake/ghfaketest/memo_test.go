package ghfaketest

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
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
	return &Validator{RefusedRequestsOK: v.RefusedRequestsOK, doc: v.doc, router: v.router, multi: v.multi, paths: v.paths, basicError: v.basicError}
}
