package ghfaketest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"maps"
	"net/http"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// checkResponse validates x's answer as openapi3filter.ValidateResponse
// does, deciding on each distinct body once.
//
// ValidateResponse checks the headers the response documents, stops at the
// first that breaks it, and then checks the body. That second part reads
// nothing but the request's method, the operation's responses, the status,
// the options (the same for every exchange), the Content-Type header (which
// content, and how to decode it) and the body's bytes: two exchanges with
// the same operation, method, status, Content-Type and body get the same
// verdict on their body, so it is decided once and remembered (keyed by the
// body's SHA-256). The headers are checked on every exchange, as before.
// The tests send the same answers again and again (every page a client
// reads twice, every pass of a reconcile loop), and decoding a body and
// visiting it against its schema was most of the validator's time.
func (v *Validator) checkResponse(in *openapi3filter.RequestValidationInput, x Exchange, opts *openapi3filter.Options) []problem {
	headersOnly := *opts
	headersOnly.ExcludeResponseBody = true
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: x.Status, Header: x.Header, Options: &headersOnly}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return problems("response", err) // as ValidateResponse: no body check after a bad header
	}
	ctype := x.Header.Get("Content-Type")
	key := verdictKey{op: in.Route.Operation, method: in.Request.Method, status: x.Status,
		ctype: ctype, body: addresslessSum(x.Body, host(x))}
	if probs, ok := v.bodies.get(key); ok {
		return probs
	}
	if array := plainArray(in.Route, x.Status, ctype); array != nil {
		if probs, ok := v.checkItems(array, x.Body, host(x)); ok {
			v.bodies.put(key, probs)
			return probs
		}
	}
	shape, shaped := v.shapeOf(x.Body, key)
	if shaped {
		if iv, ok := v.shapes.get(shape); ok {
			probs := make([]problem, len(iv.probs))
			for i, p := range iv.probs {
				probs[i] = p.problem
			}
			v.bodies.put(key, probs)
			return probs
		}
	}
	out = &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: x.Status, Header: x.Header, Options: opts}
	out.SetBodyBytes(x.Body)
	var probs []problem
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		probs = problems("response", err)
	}
	v.bodies.put(key, probs)
	if shaped {
		iv := itemVerdict{ok: true}
		for _, p := range probs {
			iv.probs = append(iv.probs, itemProblem{problem: p})
		}
		v.shapes.put(shape, iv)
	}
	return probs
}

// shapeOf is the shape memo's key of body, an answer whose verdict's key
// is key; false when there is none.
func (v *Validator) shapeOf(body []byte, key verdictKey) (shapeKey, bool) {
	if v.classes == nil {
		return shapeKey{}, false
	}
	sum, ok := v.classes.shape(body)
	key.body = sum
	return shapeKey{body: key}, ok
}

// addresslessSum is the SHA-256 of b with the fake's own address
// ("http://" and host, the Host it was asked at, which the fake writes
// into every URL it answers) replaced by one that is the same for every
// fake, so that the same answer from two fakes (two tests: each its own
// port) is decided once. The verdict cannot depend on the address: a
// string's content matters to the subset's response schemas only through
// an enum (no URL is one), a format (the same for any address: the
// validator checks no "uri"), or a length, which none of them constrains
// but a git ref's SHA (TestResponseSchemasIgnoreAddresses keeps the
// subset so). The pieces are hashed as they are, not copied.
func addresslessSum(b []byte, host string) [sha256.Size]byte {
	own := "http://" + host
	if host == "" || !bytes.Contains(b, []byte(own)) {
		return sha256.Sum256(b)
	}
	d := sha256.New()
	for {
		i := bytes.Index(b, []byte(own))
		if i < 0 {
			break
		}
		d.Write(b[:i])
		d.Write([]byte("http://fake.invalid"))
		b = b[i+len(own):]
	}
	d.Write(b)
	var sum [sha256.Size]byte
	d.Sum(sum[:0])
	return sum
}

// host is the Host x was asked at, or "".
func host(x Exchange) string {
	if x.Request == nil {
		return ""
	}
	return x.Request.Host
}

// verdictKey is what the verdict on a response body depends on.
type verdictKey struct {
	op     *openapi3.Operation
	method string
	status int
	ctype  string
	body   [sha256.Size]byte
}

// maxMemo bounds each of the validator's memos; past it, one starts again
// empty.
const maxMemo = 1 << 16

// memo is one of the validator's memos: safe for concurrent use, at most
// maxMemo entries.
type memo[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

func (c *memo[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *memo[K, V]) put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxMemo {
		c.m = make(map[K]V)
	}
	c.m[k] = v
}

// findRoute is the description's route for req, tried in v.router and then
// in v.multi, remembered per method and escaped path: the routers match
// nothing else (apiRequest fixes the host; the query is not routed), so
// the same method and path always find the same route and parameters.
// Matching tries the routes' regular expressions one after the other,
// and the tests request the same few paths again and again.
func (v *Validator) findRoute(req *http.Request) (*routers.Route, map[string]string, error) {
	key := req.Method + " " + req.URL.EscapedPath()
	if r, ok := v.routes.get(key); ok {
		return r.route, maps.Clone(r.params), r.err
	}
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		route, params, err = v.multi.FindRoute(req)
	}
	v.routes.put(key, foundRoute{route: route, params: maps.Clone(params), err: err})
	return route, params, err
}

// foundRoute is one answer of the routers.
type foundRoute struct {
	route  *routers.Route
	params map[string]string
	err    error
}
