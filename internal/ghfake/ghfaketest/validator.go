// Package ghfaketest holds the fake GitHub (internal/ghfake) to GitHub's
// published REST description. It checks every request a test sends to a
// fake against its operation's request side (path and query parameters,
// body) and every answer against the operation's response for its status,
// using the operations phasegate uses, cut from @octokit/openapi into
// internal/ghfake/testdata/openapi-subset.json by scripts/openapi-subset.sh,
// and kin-openapi's validator.
//
// A package's tests turn it on in TestMain:
//
//	func TestMain(m *testing.M) { testutil.Exit(ghfaketest.Main(m, os.Stderr)) }
//
// and a test helper that starts a fake claims its violations, so that they
// fail the test that caused them (the rest fail the package at the end):
//
//	f := ghfake.New()
//	ghfaketest.Verify(t, f)
//
// A request of an operation that is not in the subset is itself a
// violation: add the operation to bench/cmd/openapi-subset/main.go and run
// scripts/openapi-subset.sh. What GitHub does that its description does not
// say is listed, with the reason, in exceptions.go.
package ghfaketest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// SubsetFile is the subset of GitHub's description, relative to the
// module root.
const SubsetFile = "internal/ghfake/testdata/openapi-subset.json"

// Regenerate is what to run when the subset lacks an operation.
const Regenerate = "add it to bench/cmd/openapi-subset/main.go and run scripts/openapi-subset.sh"

// Validator checks exchanges with the fake against the subset. It is safe
// for concurrent use.
type Validator struct {
	// RefusedRequestsOK: a request that breaks the description is no
	// violation when the fake refused it (4xx), as GitHub would. For tests
	// that send bad requests on purpose (ghfake's own); phasegate's tests
	// keep it false: every request phasegate sends must be valid.
	RefusedRequestsOK bool

	doc        *openapi3.T
	router     routers.Router    // the description's paths
	multi      routers.Router    // multi-segment parameters spelled {name:.*}, tried second
	paths      map[string]string // multi's path → the description's
	basicError *openapi3.Schema
	bodies     memo[verdictKey, []problem] // the verdicts on response bodies checked so far
	items      memo[itemKey, itemVerdict]  // the verdicts on the items of list answers checked so far
	classes    *shapeClasses               // what the subset tells apart; nil: no shape memo
	shapes     shapeMemo                   // the shapes of the bodies and items found valid
	routes     memo[string, foundRoute]    // the routes found so far
}

// Load reads the subset from the module root above the working directory
// (a test runs in its package's directory).
func Load() (*Validator, error) {
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return LoadFile(filepath.Join(dir, filepath.FromSlash(SubsetFile)))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, fmt.Errorf("no go.mod above the working directory: cannot find %s", SubsetFile)
		}
		dir = parent
	}
}

// LoadFile reads a description, validates it as an OpenAPI 3 document and
// builds the router.
func LoadFile(file string) (*Validator, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", file, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("%s is not a valid OpenAPI 3 document: %w", file, err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route %s: %w", file, err)
	}
	mdoc, paths := routable(doc)
	multi, err := gorillamux.NewRouter(mdoc)
	if err != nil {
		return nil, fmt.Errorf("route %s: %w", file, err)
	}
	classes, err := newShapeClasses(data)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	v := &Validator{doc: doc, router: router, multi: multi, paths: paths, classes: classes}
	if ref := doc.Components.Schemas["basic-error"]; ref != nil {
		v.basicError = ref.Value
	}
	if v.basicError == nil {
		return nil, fmt.Errorf("%s has no basic-error schema", file)
	}
	return v, nil
}

// routable is a copy of doc whose paths spell a multi-segment parameter
// ("x-multi-segment": true, as {path} of contents and {ref} of git/ref)
// as gorilla/mux's {name:.*}, so that it matches a value with slashes. It
// is tried after the description's own paths, which it would shadow
// (commits/{ref:.*} matches commits/{commit_sha}/pulls).
func routable(doc *openapi3.T) (*openapi3.T, map[string]string) {
	cp := *doc
	cp.Paths = openapi3.NewPaths()
	paths := map[string]string{}
	for orig, item := range doc.Paths.Map() {
		path := orig
		for _, op := range item.Operations() {
			for _, p := range op.Parameters {
				if p.Value != nil && p.Value.In == "path" && p.Value.Extensions["x-multi-segment"] == true {
					path = strings.Replace(path, "{"+p.Value.Name+"}", "{"+p.Value.Name+":.*}", 1)
				}
			}
		}
		cp.Paths.Set(path, item)
		paths[path] = orig
	}
	return &cp, paths
}

// Operations lists the subset's operations as "METHOD /path".
func (v *Validator) Operations() []string {
	var out []string
	for path, item := range v.doc.Paths.Map() {
		for method := range item.Operations() {
			out = append(out, method+" "+path)
		}
	}
	slices.Sort(out)
	return out
}

// Exchange is one request to the fake and its answer.
type Exchange struct {
	Request     *http.Request // its URL is the fake's; Body is not read
	RequestBody []byte
	Status      int
	Header      http.Header
	Body        []byte
}

// Check validates one exchange and returns what breaks the description,
// each naming the operation, or nil. op is the matched operation
// ("METHOD /path"), empty when none matched or an exception skipped it.
func (v *Validator) Check(x Exchange) (op string, violations []string) {
	if e := skipAll(x); e != "" {
		return "", nil
	}
	req, err := apiRequest(x)
	if err != nil {
		return "", []string{fmt.Sprintf("%s %s: %v", x.Request.Method, x.Request.URL.Path, err)}
	}
	route, params, err := v.findRoute(req)
	if err != nil {
		if v.RefusedRequestsOK && x.Status == http.StatusNotFound {
			return "", nil // GitHub answers 404 to what it does not have
		}
		return "", []string{fmt.Sprintf("%s %s: no operation of %s answers it (%v): phasegate uses an operation not in testdata: %s",
			req.Method, req.URL.EscapedPath(), SubsetFile, err, Regenerate)}
	}
	path := route.Path
	if orig, ok := v.paths[path]; ok {
		path = orig
	}
	op = route.Method + " " + path
	where := fmt.Sprintf("%s (%s) %d", op, route.Operation.OperationID, x.Status)
	opts := &openapi3filter.Options{
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
		MultiError:            true,
		IncludeResponseStatus: true,
	}
	var probs []problem
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	refused := x.Status >= 400 && x.Status < 500 && v.RefusedRequestsOK
	if !refused {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			probs = append(probs, problems("request", err)...)
		}
		if route.Operation.RequestBody == nil && len(x.RequestBody) > 0 {
			// kin-openapi's RejectWhenRequestBodyNotSpecified also rejects
			// the bodies an operation does specify (v0.135.0)
			probs = append(probs, problem{side: "request", reason: "a body, and the operation takes none"})
		}
	}
	if route.Operation.Responses.Status(x.Status) == nil && route.Operation.Responses.Default() == nil {
		probs = append(probs, v.checkUndocumented(x)...)
	} else if !skipResponseBody(x) {
		probs = append(probs, v.checkResponse(in, x, opts)...)
	}
	if x.Status >= 300 && x.Status < 400 && x.Status != http.StatusNotModified && x.Header.Get("Location") == "" {
		// the description does not mark Location required (tarball's
		// 302), but a redirect without one leads nowhere (RFC 9110 §15.4)
		probs = append(probs, problem{side: "response", reason: fmt.Sprintf("a %d without a Location", x.Status)})
	}
	for _, p := range probs {
		if excepted(op, p) == "" {
			violations = append(violations, where+": "+p.String())
		}
	}
	return op, violations
}

// problem is one way an exchange breaks the description.
type problem struct {
	side    string // "request", "response"
	pointer string // JSON pointer into the body ("" for the whole exchange)
	reason  string
	value   any
}

func (p problem) String() string {
	s := p.side + ": "
	if p.pointer != "" {
		s += p.pointer + ": "
	}
	s += p.reason
	if p.value != nil {
		val, _ := json.Marshal(p.value)
		if len(val) > 80 {
			val = append(val[:77:77], "..."...)
		}
		s += fmt.Sprintf(" (value %s)", val)
	}
	return s
}

// problems are the leaves of kin-openapi's (multi-)error.
func problems(side string, err error) []problem {
	var me openapi3.MultiError
	if errors.As(err, &me) {
		var out []problem
		for _, e := range me {
			out = append(out, problems(side, e)...)
		}
		return out
	}
	var rq *openapi3filter.RequestError
	if errors.As(err, &rq) && rq.Err != nil {
		if rq.Parameter != nil {
			side += " parameter " + rq.Parameter.Name + " in " + rq.Parameter.In
		}
		return problems(side, rq.Err)
	}
	var re *openapi3filter.ResponseError
	if errors.As(err, &re) && re.Err != nil {
		return problems(side, re.Err)
	}
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		if inner := se.Origin; inner != nil {
			var sub openapi3.MultiError
			if errors.As(inner, &sub) {
				return problems(side, sub)
			}
		}
		return []problem{{side: side, pointer: "/" + strings.Join(se.JSONPointer(), "/"), reason: se.Reason, value: se.Value}}
	}
	return []problem{{side: side, reason: err.Error()}}
}

// checkUndocumented judges a status the operation does not document:
// allowed when GitHub answers it to any operation (anyOperation), and
// then the body must be GitHub's error JSON.
func (v *Validator) checkUndocumented(x Exchange) []problem {
	reason, ok := anyOperation[x.Status]
	if !ok {
		return []problem{{side: "response", reason: fmt.Sprintf("status %d is not documented for this operation", x.Status)}}
	}
	if x.Status == http.StatusNotModified {
		if len(x.Body) != 0 {
			return []problem{{side: "response", reason: "304 with a body"}}
		}
		return nil
	}
	var body any
	if err := json.Unmarshal(x.Body, &body); err != nil {
		return []problem{{side: "response", reason: fmt.Sprintf("status %d (%s): body is not JSON: %v", x.Status, reason, err)}}
	}
	if err := v.basicError.VisitJSON(body, openapi3.MultiErrors()); err != nil {
		return problems(fmt.Sprintf("response (status %d, %s, as basic-error)", x.Status, reason), err)
	}
	return nil
}

// apiRequest is x's request as GitHub's server would see it: at
// https://api.github.com, without GitHub Enterprise Server's /api/v3
// prefix, with the body to read.
func apiRequest(x Exchange) (*http.Request, error) {
	raw := x.Request.URL.EscapedPath()
	raw = strings.TrimPrefix(raw, "/api/v3")
	u, err := url.Parse("https://api.github.com" + raw)
	if err != nil {
		return nil, err
	}
	u.RawQuery = x.Request.URL.RawQuery
	req := x.Request.Clone(context.Background())
	req.URL, req.Host, req.RequestURI = u, u.Host, ""
	req.Body = io.NopCloser(bytes.NewReader(x.RequestBody))
	req.ContentLength = int64(len(x.RequestBody))
	if len(x.RequestBody) == 0 {
		req.Body = http.NoBody
		req.ContentLength = 0
	} else if req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", untypedBody)
	}
	return req, nil
}
