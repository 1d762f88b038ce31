package outcome

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// TestVerifyReturnsItsOwnCopies: what a verification returns is the
// caller's to change. Changing every mapping, sequence and field of one
// result leaves the next verification of the same comment (served from the
// decoded cache) as it was.
func TestVerifyReturnsItsOwnCopies(t *testing.T) {
	for _, input := range []string{"seed.yaml", "hostile.yaml", "defaults.yaml", "empty.yaml"} {
		t.Run(input, func(t *testing.T) {
			body, _, canonical := renderCase(t, input, testKey, 7)
			wantValue, wantOutcome, err := decodeCanonical(canonical)
			if err != nil {
				t.Fatal(err)
			}
			for round := range 3 {
				v, err := VerifyOutcomeComment(body, testKey)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(v.Value, wantValue) || !reflect.DeepEqual(v.Outcome, wantOutcome) {
					t.Fatalf("round %d: verification returned another value or outcome than the YAML holds:\n%#v\n%#v", round, v.Value, v.Outcome)
				}
				if _, cached, _ := decoded.get(v.ID); cached == nil {
					t.Fatalf("round %d: the decoded YAML was not cached", round)
				}
				scribble(v.Value)
				scribbleOutcome(v.Outcome)
			}
		})
	}
}

// scribble overwrites every scalar and drops one entry of every mapping of
// a decoded value.
func scribble(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if _, ok := x.(map[string]any); !ok {
				if _, ok := x.([]any); !ok {
					v[k] = "scribbled"
					continue
				}
			}
			scribble(x)
		}
		v["scribbled"] = true
	case []any:
		for i, x := range v {
			scribble(x)
			if _, ok := x.(map[string]any); !ok {
				v[i] = "scribbled"
			}
		}
	}
}

// scribbleOutcome overwrites every field and element of o.
func scribbleOutcome(o *Outcome) {
	o.Phase, o.Feature, o.Issue = "scribbled", "scribbled", 99
	for i := range o.Produced {
		o.Produced[i] = Produced{Artifact: "scribbled"}
	}
	for i := range o.Findings {
		o.Findings[i] = Finding{Title: "scribbled"}
	}
	for i := range o.Decisions {
		for j := range o.Decisions[i].Options {
			o.Decisions[i].Options[j] = "scribbled"
		}
		o.Decisions[i].ID, o.Decisions[i].Blocking = "scribbled", !o.Decisions[i].Blocking
	}
}

// TestCloneSharesNothing: Outcome.clone copies every slice at every depth,
// and Outcome has no field clone does not know (a map, a pointer, a new
// slice): adding one fails here until clone copies it.
func TestCloneSharesNothing(t *testing.T) {
	for _, input := range []string{"seed.yaml", "hostile.yaml", "defaults.yaml", "empty.yaml"} {
		t.Run(input, func(t *testing.T) {
			_, o, _ := loadOutcome(t, input)
			c := o.clone()
			if !reflect.DeepEqual(c, o) {
				t.Fatalf("clone = %#v, want %#v", c, o)
			}
			for _, p := range shared(reflect.ValueOf(o).Elem(), reflect.ValueOf(c).Elem(), "Outcome") {
				t.Error(p)
			}
			v, _, _ := loadOutcome(t, input)
			cv := cloneValue(v)
			if !reflect.DeepEqual(cv, v) {
				t.Fatalf("cloneValue = %#v, want %#v", cv, v)
			}
			for _, p := range shared(reflect.ValueOf(&v).Elem(), reflect.ValueOf(&cv).Elem(), "value") {
				t.Error(p)
			}
		})
	}
}

// shared lists where b shares memory with a (a non-empty slice's backing
// array, a map) or holds what a copy cannot tell apart (a pointer, a
// channel, a function).
func shared(a, b reflect.Value, path string) []string {
	if a.Kind() == reflect.Interface {
		if a.IsNil() || b.IsNil() {
			return nil
		}
		return shared(a.Elem(), b.Elem(), path)
	}
	var out []string
	switch a.Kind() {
	case reflect.Struct:
		for i := range a.NumField() {
			out = append(out, shared(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name)...)
		}
	case reflect.Slice:
		if a.Len() > 0 && a.Pointer() == b.Pointer() {
			out = append(out, path+": the copy shares the slice")
		}
		for i := range min(a.Len(), b.Len()) {
			out = append(out, shared(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
	case reflect.Map:
		if a.Pointer() == b.Pointer() {
			out = append(out, path+": the copy shares the map")
		}
		for _, k := range a.MapKeys() {
			out = append(out, shared(a.MapIndex(k), b.MapIndex(k), path+"."+k.String())...)
		}
	case reflect.Pointer, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		out = append(out, path+": a "+a.Kind().String()+", which clone does not copy")
	}
	return out
}

// TestDecodedCacheBounded: the cache holds at most its byte budget of
// canonical YAML, drops the least recently used entry first, and keeps
// nothing larger than the whole budget.
func TestDecodedCacheBounded(t *testing.T) {
	_, o, _ := loadOutcome(t, "empty.yaml")
	tests := []struct {
		name string
		puts []string // id:size, or get:id
		want []string // ids held, most recently used first
	}{
		{name: "within the budget", puts: []string{"a:4", "b:4"}, want: []string{"b", "a"}},
		{name: "the oldest goes", puts: []string{"a:4", "b:4", "c:4"}, want: []string{"c", "b"}},
		{name: "a read keeps an entry", puts: []string{"a:4", "b:4", "get:a", "c:4"}, want: []string{"c", "a"}},
		{name: "one large entry evicts several", puts: []string{"a:2", "b:2", "c:2", "d:9"}, want: []string{"d"}},
		{name: "larger than the budget: not kept", puts: []string{"a:4", "b:11"}, want: []string{"a"}},
		{name: "stored once", puts: []string{"a:4", "a:4", "b:4"}, want: []string{"b", "a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newDecodedCache(10)
			for _, p := range tc.puts {
				id, arg, _ := strings.Cut(p, ":")
				if id == "get" {
					c.get(arg)
					continue
				}
				var size int
				fmt.Sscan(arg, &size)
				c.put(id, size, map[string]any{}, o)
			}
			var got []string
			total := 0
			for el := c.order.Front(); el != nil; el = el.Next() {
				e := el.Value.(*decodedEntry)
				got = append(got, e.id)
				total += e.size
			}
			if !reflect.DeepEqual(got, tc.want) || len(c.items) != len(got) || c.bytes != total || c.bytes > c.max {
				t.Errorf("held %v (%d items, %d of %d bytes, entries sum to %d), want %v", got, len(c.items), c.bytes, c.max, total, tc.want)
			}
		})
	}
}

// TestVerifyConcurrently: verifications of the same and of different
// comments at once (as serve's workers fold threads in parallel) agree
// with a verification alone; -race checks the cache's locking.
func TestVerifyConcurrently(t *testing.T) {
	var bodies []string
	for _, input := range []string{"seed.yaml", "hostile.yaml", "defaults.yaml"} {
		body, _, _ := renderCase(t, input, nil, 7)
		bodies = append(bodies, body)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8*len(bodies))
	for i := range 8 * len(bodies) {
		wg.Go(func() {
			body := bodies[i%len(bodies)]
			v, err := VerifyOutcomeComment(body, nil)
			if err == nil {
				scribbleOutcome(v.Outcome)
				scribble(v.Value)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
