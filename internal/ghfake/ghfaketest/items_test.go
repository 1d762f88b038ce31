package ghfaketest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/phasegate/phasegate/internal/ghfake"
)

// TestItemVerdictsAreKinOpenAPIs: a list answer decided item by item
// (checkItems, through the item memo) gets exactly the problems
// kin-openapi's ValidateResponse finds in it whole: for the fake's list
// answers, for the same lists broken in one item (a wrong type in item 3,
// a missing required property, an extra item of another shape, a nested
// object broken, a oneOf or allOf no alternative matches), and for bodies
// that are not plain JSON arrays (which go the whole-body way). The cases
// run in order on one validator, so that later ones are decided partly
// from items remembered from earlier ones.
func TestItemVerdictsAreKinOpenAPIs(t *testing.T) {
	type listCase struct {
		name, target string
		body         []byte
		items        bool // decided item by item (else whole)
		broken       bool // has problems no exception covers
	}
	var cases []listCase
	for _, l := range fakeLists(t) {
		cases = append(cases, listCase{name: l.target, target: l.target, body: l.body, items: true})
		for _, b := range breakers {
			if body, ok := b.apply(l.body); ok {
				cases = append(cases, listCase{name: l.target + " " + b.name, target: l.target, body: body, items: true, broken: true})
			}
		}
	}
	activityOK := "[" + activity + "]"
	for _, c := range []listCase{
		{name: "empty", body: []byte(`[]`), items: true},
		{name: "empty with spaces", body: []byte(" [ \n] \r\t"), items: true},
		{name: "brackets and escaped quotes in strings", items: true, broken: true,
			body: []byte(`[` + strings.Replace(activity, `"refs/heads/main"`, `"re]f\\\"s}[{,\\\\"`, 1) + `, {"id": "]"}]`)},
		{name: "an item of null", body: []byte(`[null,` + activity + `]`), items: true, broken: true},
		{name: "an object", body: []byte(`{}`), broken: true},
		{name: "a string", body: []byte(`"[]"`), broken: true},
		{name: "not closed", body: []byte(`[` + activity), broken: true},
		{name: "an empty item", body: []byte(`[` + activity + `,]`), broken: true},
		{name: "a leading comma", body: []byte(`[,` + activity + `]`), broken: true},
		{name: "two values in an item", body: []byte(`[1 2]`), broken: true},
		{name: "mismatched brackets", body: []byte(`[{"id":1]}]`), broken: true},
		{name: "an open string", body: []byte(`["abc]`), broken: true},
		{name: "after the array", body: []byte(activityOK + ` x`)}, // JSONBodyDecoder reads the first value only
		{name: "a second array", body: []byte(activityOK + activityOK)},
	} {
		c.target = "/repos/o/r/activity"
		cases = append(cases, c)
	}
	installation := `{"id":1,"account":{"login":"x","id":1},"access_tokens_url":"https://u"}`
	cases = append(cases,
		listCase{name: "installations with an allOf account", target: "/app/installations", items: true, broken: true,
			body: []byte(`[` + installation + `,` + installation + `]`)},
		listCase{name: "installations with an allOf account, one changed", target: "/app/installations", items: true, broken: true,
			body: []byte(`[` + installation + `,` + strings.Replace(installation, `"id":1,`, `"id":"2",`, 1) + `]`)})

	v := load(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := listExchange(c.target, c.body)
			want := kinVerdict(t, v, x)
			in := requestInput(t, v, x)
			got := v.checkResponse(in, x, in.Options)
			if !slices.Equal(strs(got), strs(want)) {
				t.Fatalf("problems\n%q\nkin-openapi's whole-body verdict\n%q", strs(got), strs(want))
			}
			var unexcepted []problem
			for _, p := range want {
				if excepted(in.Route.Method+" "+in.Route.Path, p) == "" {
					unexcepted = append(unexcepted, p)
				}
			}
			if (len(unexcepted) > 0) != c.broken {
				t.Errorf("problems %q, want broken=%v", strs(unexcepted), c.broken)
			}
			array := plainArray(in.Route, x.Status, x.Header.Get("Content-Type"))
			if array == nil {
				t.Fatal("the response schema is not a plain array")
			}
			if _, ok := v.checkItems(array, x.Body, host(x)); ok != c.items {
				t.Errorf("decided item by item: %v, want %v", ok, c.items)
			}
		})
	}
}

// list is one of the fake's list answers.
type list struct {
	target string
	body   []byte
}

// fakeLists are the fake's answers to the list operations phasegate reads.
func fakeLists(t *testing.T) []list {
	s, sha := widgets(t)
	const tok = "tok-test"
	s.Push("acme", "widgets", ghfake.Push{Ref: "main", After: sha("e"), Actor: "carol"})
	pr := s.AddPullRequest("acme", "widgets", ghfake.PullRequest{Title: "x", Author: "alice", HeadRef: "feature", HeadSHA: sha("d"), BaseRef: "main", BaseSHA: sha("c")})
	s.LabelIssue("acme", "widgets", pr, "phasegate:pending")
	for i := range 3 {
		issue := s.AddIssue("acme", "widgets", "t", "b", "alice")
		s.LabelIssue("acme", "widgets", issue, "bug", "p"+string(rune('0'+i)))
		for _, body := range []string{"hello", "/resolve D-001 approve", "a longer comment\nwith lines"} {
			s.AddComment("acme", "widgets", issue, "alice", body)
		}
	}
	s.SetIssueState("acme", "widgets", 2, "closed")
	s.SetPermission("acme", "widgets", "alice", "maintain")
	var out []list
	for _, target := range []string{
		"/repos/acme/widgets/activity",
		"/repos/acme/widgets/issues?state=all",
		"/repos/acme/widgets/issues/2/comments",
		"/repos/acme/widgets/issues/comments",
		"/repos/acme/widgets/pulls?state=all",
		"/repos/acme/widgets/issues/2/events",
		"/repos/acme/widgets/issues/2/labels",
	} {
		a := call(t, s, http.MethodGet, target, tok, "")
		if a.status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", target, a.status, a.body)
		}
		// the address of the fake, as the validator sees it (listExchange)
		body := bytes.ReplaceAll(a.body, []byte(strings.TrimSuffix(s.URL(), "/")), []byte("http://127.0.0.1:1"))
		out = append(out, list{target: strings.TrimPrefix(target, ""), body: body})
	}
	return out
}

// breaker breaks a list in one item.
type breaker struct {
	name  string
	apply func([]byte) ([]byte, bool)
}

var breakers = []breaker{
	{"a wrong type in item 3", editItem(3, func(it map[string]any) bool { it["id"] = "1"; return true })},
	{"a missing required property in item 1", editItem(1, func(it map[string]any) bool {
		for _, k := range []string{"node_id", "url", "name"} {
			if _, ok := it[k]; ok {
				delete(it, k)
				return true
			}
		}
		return false
	})},
	{"a nested object broken in item 0", editItem(0, func(it map[string]any) bool {
		for _, k := range []string{"user", "actor", "head", "assignee"} {
			if _, ok := it[k].(map[string]any); ok {
				it[k] = map[string]any{"login": 5}
				return true
			}
		}
		return false
	})},
	{"a label of no alternative in item 2", editItem(2, func(it map[string]any) bool {
		if _, ok := it["labels"]; ok {
			it["labels"] = []any{5, "bug", map[string]any{"id": "x"}}
			return true
		}
		return false
	})},
	{"an app of no alternative in item 1", editItem(1, func(it map[string]any) bool {
		if _, ok := it["performed_via_github_app"]; ok {
			it["performed_via_github_app"] = map[string]any{"id": "x"}
			return true
		}
		return false
	})},
	{"extra items of other shapes", func(body []byte) ([]byte, bool) {
		if len(bytes.TrimSpace(body)) < 3 {
			return nil, false
		}
		b := bytes.TrimSuffix(bytes.TrimSpace(body), []byte("]"))
		return append(b, []byte(`,{"x":1},7,[],null]`)...), true
	}},
}

// editItem breaks item i (the last when there are fewer) of a list with
// edit, false when edit finds nothing to break.
func editItem(i int, edit func(map[string]any) bool) func([]byte) ([]byte, bool) {
	return func(body []byte) ([]byte, bool) {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var items []any
		if err := dec.Decode(&items); err != nil || len(items) == 0 {
			return nil, false
		}
		it, ok := items[min(i, len(items)-1)].(map[string]any)
		if !ok || !edit(it) {
			return nil, false
		}
		out, err := json.Marshal(items)
		return out, err == nil
	}
}

// listExchange is a 200 of body to GET target at the address fakeLists
// writes into its bodies.
func listExchange(target string, body []byte) Exchange {
	r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:1"+target, nil)
	h := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	return Exchange{Request: r, Status: http.StatusOK, Header: h, Body: body}
}

// requestInput is what Check hands checkResponse for x.
func requestInput(t *testing.T, v *Validator, x Exchange) *openapi3filter.RequestValidationInput {
	t.Helper()
	req, err := apiRequest(x)
	if err != nil {
		t.Fatal(err)
	}
	route, params, err := v.findRoute(req)
	if err != nil {
		t.Fatal(err)
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true, IncludeResponseStatus: true}
	return &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
}

// kinVerdict is ValidateResponse's verdict on x, the body whole, nothing
// remembered.
func kinVerdict(t *testing.T, v *Validator, x Exchange) []problem {
	in := requestInput(t, v, x)
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: x.Status, Header: x.Header, Options: in.Options}
	out.SetBodyBytes(x.Body)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return problems("response", err)
	}
	return nil
}

func strs(probs []problem) []string {
	out := make([]string, len(probs))
	for i, p := range probs {
		out[i] = p.String()
	}
	return out
}

// TestPlainArray: only a response schema that is nothing but an array of
// items is decided item by item; one that also limits or constrains the
// array as a whole is decided whole.
func TestPlainArray(t *testing.T) {
	items := openapi3.NewObjectSchema()
	three := uint64(3)
	tests := []struct {
		name   string
		schema *openapi3.Schema
		ctype  string
		status int
		want   bool
	}{
		{name: "plain", schema: openapi3.NewArraySchema().WithItems(items), want: true},
		{name: "another media type", schema: openapi3.NewArraySchema().WithItems(items), ctype: "application/vnd.github+json"},
		{name: "not modified", schema: openapi3.NewArraySchema().WithItems(items), status: http.StatusNotModified},
		{name: "an object", schema: items},
		{name: "no items", schema: openapi3.NewArraySchema()},
		{name: "minItems", schema: openapi3.NewArraySchema().WithItems(items).WithMinItems(1)},
		{name: "maxItems", schema: &openapi3.Schema{Type: &openapi3.Types{"array"}, Items: items.NewRef(), MaxItems: &three}},
		{name: "uniqueItems", schema: openapi3.NewArraySchema().WithItems(items).WithUniqueItems(true)},
		{name: "enum", schema: openapi3.NewArraySchema().WithItems(items).WithEnum([]any{})},
		{name: "oneOf", schema: &openapi3.Schema{Type: &openapi3.Types{"array"}, Items: items.NewRef(), OneOf: openapi3.SchemaRefs{items.NewRef()}}},
		{name: "anyOf", schema: &openapi3.Schema{Type: &openapi3.Types{"array"}, Items: items.NewRef(), AnyOf: openapi3.SchemaRefs{items.NewRef()}}},
		{name: "allOf", schema: &openapi3.Schema{Type: &openapi3.Types{"array"}, Items: items.NewRef(), AllOf: openapi3.SchemaRefs{items.NewRef()}}},
		{name: "not", schema: &openapi3.Schema{Type: &openapi3.Types{"array"}, Items: items.NewRef(), Not: items.NewRef()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctype, status := cmp.Or(tt.ctype, "application/json; charset=utf-8"), cmp.Or(tt.status, http.StatusOK)
			resp := openapi3.NewResponse().WithJSONSchema(tt.schema)
			resp.Content["application/vnd.github+json"] = resp.Content["application/json"]
			op := &openapi3.Operation{Responses: openapi3.NewResponses(openapi3.WithStatus(http.StatusOK, &openapi3.ResponseRef{Value: resp}),
				openapi3.WithStatus(http.StatusNotModified, &openapi3.ResponseRef{Value: resp}))}
			got := plainArray(&routers.Route{Operation: op}, status, ctype) != nil
			if got != tt.want {
				t.Errorf("plain array: %v, want %v", got, tt.want)
			}
		})
	}
}
