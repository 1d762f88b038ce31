// Package sariftest validates SARIF logs against the official SARIF 2.1.0
// JSON Schema (OASIS, errata 01) kept in internal/report/testdata, for the
// tests of every package that writes SARIF. It reads the schema from the
// source tree, so it works only under `go test`.
package sariftest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaID is the $id of the official schema; see
// internal/report/testdata/sarif-schema-2.1.0.NOTICE.md.
const schemaID = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

var schema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	_, here, _, ok := runtime.Caller(0)
	if !ok {
		return nil, fmt.Errorf("locating the sarif schema: no caller information")
	}
	file := filepath.Join(filepath.Dir(here), "..", "..", "report", "testdata", "sarif-schema-2.1.0.json")
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading the sarif schema: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decoding the sarif schema %s: %w", file, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat() // uri, uri-reference, date-time are checked, not just annotated
	if err := c.AddResource(schemaID, doc); err != nil {
		return nil, fmt.Errorf("adding the sarif schema: %w", err)
	}
	s, err := c.Compile(schemaID)
	if err != nil {
		return nil, fmt.Errorf("compiling the sarif schema: %w", err)
	}
	return s, nil
})

// Validate says why log is not a valid SARIF 2.1.0 log (nil when it is).
func Validate(log []byte) error {
	s, err := schema()
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(log))
	if err != nil {
		return fmt.Errorf("the log is not JSON: %w", err)
	}
	return s.Validate(v)
}

// Locations validates a SARIF log and returns its %SRCROOT% (the
// originalUriBaseIds entry; "" when it declares none) and the decoded URI of
// each result's first location, in order. It fails t when the log is not
// valid SARIF 2.1.0 or a location is not relative to %SRCROOT%.
func Locations(t testing.TB, data []byte) (root string, uris []string) {
	t.Helper()
	if err := Validate(data); err != nil {
		t.Fatalf("not valid SARIF 2.1.0: %v\n%s", err, data)
	}
	var log struct {
		Runs []struct {
			OriginalURIBaseIDs map[string]struct {
				URI string `json:"uri"`
			} `json:"originalUriBaseIds"`
			Results []struct {
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI       string `json:"uri"`
							URIBaseID string `json:"uriBaseId"`
						} `json:"artifactLocation"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatal(err)
	}
	for _, r := range log.Runs[0].Results {
		loc := r.Locations[0].PhysicalLocation.ArtifactLocation
		if loc.URIBaseID != "%SRCROOT%" {
			t.Errorf("uri %q has base %q, want %%SRCROOT%%", loc.URI, loc.URIBaseID)
		}
		p, err := url.PathUnescape(loc.URI)
		if err != nil {
			t.Fatalf("uri %q: %v", loc.URI, err)
		}
		uris = append(uris, p)
	}
	return log.Runs[0].OriginalURIBaseIDs["%SRCROOT%"].URI, uris
}
