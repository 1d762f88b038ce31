package ghfaketest

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestShapesOfTheSubset: the subset keeps the shape memo on (it has no
// constraint that tells values of a class apart), and the classes tell
// apart what it does constrain: date-time, the one format kin-openapi
// checks that the subset uses, and the lengths it bounds (a git ref SHA's
// 40 among them). A subset with
// a pattern, uniqueItems, a bound or an enum of numbers turns it off.
func TestShapesOfTheSubset(t *testing.T) {
	v := load(t)
	if v.classes == nil {
		t.Fatal("the subset has no shape memo")
	}
	if !slices.Contains(v.classes.lengths, 40) {
		t.Errorf("lengths %v, want a git ref SHA's 40 among them", v.classes.lengths)
	}
	if len(v.classes.formats) != 1 || v.classes.formats[0].Validate("2024-05-01T12:00:00Z") != nil || v.classes.formats[0].Validate("yesterday") == nil {
		t.Errorf("formats %v, want date-time's alone", v.classes.formats)
	}
	for name, expr := range digitFirst {
		re := regexp.MustCompile(expr)
		for _, probe := range []string{"2024-05-01T12:00:00Z", "2024-05-01", "2024-13-01T12:00:00Z", "x2024-05-01", "", "https://u/2024-05-01"} {
			if got, want := openapi3.SchemaStringFormats[name].Validate(probe) == nil, re.MatchString(probe); got != want {
				t.Errorf("kin-openapi's %s takes %q: %v, its expression %v", name, probe, got, want)
			}
		}
	}
	for _, lit := range []string{"push", "pr_merge", "public", "private", "node_id"} {
		if !v.classes.literal[lit] {
			t.Errorf("%q is not one of the subset's strings", lit)
		}
	}
	for _, tt := range []struct{ name, schema string }{
		{"pattern", `{"type":"string","pattern":"^a"}`},
		{"uniqueItems", `{"type":"array","uniqueItems":true}`},
		{"minimum", `{"type":"integer","minimum":1}`},
		{"maximum", `{"type":"integer","maximum":1}`},
		{"multipleOf", `{"type":"integer","multipleOf":2}`},
		{"an enum of numbers", `{"type":"integer","enum":[1,2]}`},
		{"int32", `{"type":"integer","format":"int32"}`},
	} {
		c, err := newShapeClasses([]byte(`{"components":{"schemas":{"x":` + tt.schema + `}}}`))
		if err != nil || c != nil {
			t.Errorf("%s: shape classes %v (%v), want none", tt.name, c, err)
		}
	}
	if c, err := newShapeClasses([]byte(`{"components":{"schemas":{"x":{"type":"string","enum":["a",null]}}}}`)); err != nil || c == nil {
		t.Errorf("an enum of strings: shape classes %v (%v), want some", c, err)
	}
	if _, ok := openapi3.SchemaIntegerFormats["int64"]; !ok {
		t.Error("kin-openapi does not check int64: the shapes' integers need another look")
	}
}

// TestShapeVerdictsAreKinOpenAPIs: once a body or an item of a shape was
// found valid (or broken only where it holds null), another of that shape
// gets its verdict without a look, and one
// that differs in what the schemas tell apart (a bad timestamp, another
// enum value, a SHA of another length, a float, a string for a number,
// null, an escape, another discriminator) is decided on its bytes; each
// gets exactly kin-openapi's whole-body verdict.
func TestShapeVerdictsAreKinOpenAPIs(t *testing.T) {
	v := load(t)
	const sha2 = "fedcba9876543210fedcba9876543210fedcba98"
	actor := strings.Replace(user, `"type":"User"`, `"type":"User","user_view_type":"public"`, 1)
	item := strings.Replace(activity, `"actor":null`, `"actor":`+actor, 1)
	variants := []struct {
		name      string
		from, to  string
		sameShape bool
		also      [2]string // a second replacement
	}{
		{name: "other values", from: `"id":1,"node_id":"RA_1","before":"` + sha, to: `"id":987654,"node_id":"RA_987654","before":"` + sha2, sameShape: true},
		{name: "another timestamp", from: "2024-05-01T12:00:00Z", to: "2025-12-31T23:59:59Z", sameShape: true},
		{name: "an escaped ref", from: `"refs/heads/main"`, to: `"refs/heads/\u00e9t\u00e9\n"`, sameShape: true},
		{name: "a bad timestamp", from: "2024-05-01T12:00:00Z", to: "2024-13-01T12:00:00Z"},
		{name: "another bad timestamp", from: "2024-05-01T12:00:00Z", to: "2024-14-01T12:00:00Z"}, // its own value in the problem
		{name: "a timestamp in escapes", from: "2024-05-01T12:00:00Z", to: `2024-05-01T12:00:00\u005a`, sameShape: true},
		{name: "a bad escaped timestamp", from: "2024-05-01T12:00:00Z", to: `2024-05-01T12:00:00\u005b`},
		{name: "another enum value", from: `"push"`, to: `"force_push"`},
		{name: "not an enum value", from: `"push"`, to: `"shove"`},
		{name: "a short SHA", from: `"before":"` + sha, to: `"before":"` + sha[:39]},
		{name: "a long SHA", from: `"before":"` + sha, to: `"before":"` + sha + "0"},
		{name: "a SHA of 40 runes", from: `"before":"` + sha, to: `"before":"é` + sha[:39], sameShape: true},
		{name: "a float id", from: `"id":1,`, to: `"id":1.5,`},
		{name: "a negative id", from: `"id":1,`, to: `"id":-1,`},
		{name: "a huge id", from: `"id":1,`, to: `"id":123456789012345678901234567890,`},
		{name: "a string id", from: `"id":1,`, to: `"id":"1",`},
		{name: "a null ref", from: `"refs/heads/main"`, to: `null`},
		{name: "a null ref again", from: `"refs/heads/main"`, to: `null`, also: [2]string{`"id":1,`, `"id":2,`}},
		{name: "a null ref and a bad timestamp", from: `"refs/heads/main"`, to: `null`, also: [2]string{"2024-05-01T12:00:00Z", "2024-05-01T12:00:00"}},
		{name: "a private user", from: `"user_view_type":"public"`, to: `"user_view_type":"private"`},
		{name: "another user view", from: `"user_view_type":"public"`, to: `"user_view_type":"secret"`},
		{name: "a control character", from: `"refs/heads/main"`, to: "\"refs/heads/\x01\""},
	}
	check := func(t *testing.T, target string, body []byte, wantShape bool) {
		t.Helper()
		x := listExchange(target, body)
		in := requestInput(t, v, x)
		got, want := v.checkResponse(in, x, in.Options), kinVerdict(t, v, x)
		if !slices.Equal(strs(got), strs(want)) {
			t.Fatalf("problems\n%q\nkin-openapi's whole-body verdict\n%q", strs(got), strs(want))
		}
		if wantShape && len(want) > 0 {
			t.Fatalf("a body of a valid shape has problems: %q", strs(want))
		}
	}
	lists := []struct{ name, target, body string }{
		{name: "items", target: "/repos/o/r/activity", body: "[" + item + "," + item + "]"},
		{name: "bodies", target: "/repos/o/r/git/ref/heads/x", body: `{"ref":"refs/heads/x","node_id":"n","url":"https://u","object":{"type":"commit","sha":"` + sha + `","url":"https://u"}}`},
	}
	for _, l := range lists {
		check(t, l.target, []byte(l.body), true)
	}
	if len(v.shapes.m) != 2 { // the activity item (a list is kept by its items) and the ref
		t.Fatalf("%d shapes remembered, want 2", len(v.shapes.m))
	}
	for _, tt := range []struct {
		name, to  string
		sameShape bool
	}{{"a ref of another SHA", sha2, true}, {"a ref of a short SHA", sha[1:], false}} {
		t.Run(tt.name, func(t *testing.T) {
			check(t, lists[1].target, []byte(strings.Replace(lists[1].body, sha, tt.to, 1)), tt.sameShape)
		})
	}
	for _, tt := range variants {
		t.Run(tt.name, func(t *testing.T) {
			body := strings.Replace(strings.Replace(lists[0].body, tt.from, tt.to, 1), tt.also[0], tt.also[1], 1)
			if body == lists[0].body {
				t.Fatalf("%q is not in the item", tt.from)
			}
			sum, ok := v.classes.shape([]byte(strings.Replace(strings.Replace(item, tt.from, tt.to, 1), tt.also[0], tt.also[1], 1)))
			base, _ := v.classes.shape([]byte(item))
			if (ok && sum == base) != tt.sameShape {
				t.Errorf("the same shape: %v, want %v", ok && sum == base, tt.sameShape)
			}
			check(t, lists[0].target, []byte(body), tt.sameShape)
		})
	}
	nullRef := strings.Replace(item, `"refs/heads/main"`, `null`, 1)
	sum, _ := v.classes.shape([]byte(nullRef))
	in := requestInput(t, v, listExchange(lists[0].target, nil))
	items := plainArray(in.Route, http.StatusOK, "application/json; charset=utf-8").Items.Value
	if iv, ok := v.shapes.get(shapeKey{item: itemKey{schema: items, item: sum}}); !ok || len(iv.probs) != 1 {
		t.Errorf("the shape of an item with a null ref: %v %v, want remembered with its one problem", iv, ok)
	}
}
