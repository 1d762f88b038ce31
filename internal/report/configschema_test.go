package report

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/testutil"
	"github.com/phasegate/phasegate/schemas"
)

// TestConfigSchemaCatalogue: the config schema's kinds (artifacts), rules
// (rules) and x-fixed-rules are the catalogues' — every kind, every rule
// of the rule layer and schema.convention configurable, the decoding and
// schema rules listed as fixed — so the schema the loader validates with
// and editors complete from never drifts from the code. The structure is
// written by hand; `go test ./internal/report -run TestConfigSchemaCatalogue
// -update` rewrites the catalogue parts (and sorts the keys).
func TestConfigSchemaCatalogue(t *testing.T) {
	path := "../../schemas/" + config.SchemaPath
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	props := doc["properties"].(map[string]any)
	kinds := map[string]any{}
	for _, k := range artifact.Kinds() {
		kinds[k.ID] = map[string]any{"$ref": "#/$defs/globs", "description": k.Title + ", besides " + k.Paths + "."}
	}
	props["artifacts"].(map[string]any)["properties"] = kinds
	rules := map[string]any{}
	for _, r := range check.Rules() {
		rules[r.ID] = map[string]any{"$ref": "#/$defs/severity", "description": r.Summary + " (default: " + string(r.Severity) + ")"}
	}
	conv := builtinRules[check.RuleConvention]
	rules[check.RuleConvention] = map[string]any{"$ref": "#/$defs/severity", "description": conv.Short + " (default: " + string(conv.Level) + ")"}
	props["rules"].(map[string]any)["properties"] = rules
	var fixed []string
	for id := range builtinRules {
		if id != check.RuleConvention {
			fixed = append(fixed, id)
		}
	}
	sort.Strings(fixed)
	doc["x-fixed-rules"] = fixed
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, path, out.Bytes())
}

// TestSchemaStoreCatalog: the entries offered to SchemaStore name schemas of
// this release that exist, and each fileMatch glob, made concrete, is a path
// phasegate classifies as the kind whose schema the entry names (the config
// entry: the config's path).
func TestSchemaStoreCatalog(t *testing.T) {
	data, err := os.ReadFile("../../schemas/schemastore-catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	var cat struct {
		Schemas []struct {
			Name, Description, URL string
			FileMatch              []string
		}
	}
	if err := json.Unmarshal(data, &cat); err != nil {
		t.Fatal(err)
	}
	if len(cat.Schemas) < 2 {
		t.Fatalf("%d entries", len(cat.Schemas))
	}
	for _, e := range cat.Schemas {
		path, ok := strings.CutPrefix(e.URL, schemas.BaseURL)
		if !ok {
			t.Errorf("%s: url %s is not under %s", e.Name, e.URL, schemas.BaseURL)
			continue
		}
		if _, err := fs.Stat(schemas.FS, path); err != nil {
			t.Errorf("%s: %v", e.Name, err)
		}
		if e.Name == "" || e.Description == "" || len(e.FileMatch) == 0 {
			t.Errorf("%s: name, description and fileMatch are required", e.URL)
		}
		for _, g := range e.FileMatch {
			sample := strings.ReplaceAll(strings.TrimPrefix(g, "**/"), "*", "7")
			if path == config.SchemaPath {
				if sample != config.DefaultPath && sample != strings.TrimSuffix(config.DefaultPath, ".yml")+".yaml" {
					t.Errorf("%s: fileMatch %s is not the config's path", e.Name, g)
				}
				continue
			}
			k := artifact.ClassifyPath(sample)
			if k == nil || k.SchemaPath() != path {
				t.Errorf("%s: fileMatch %s (%s) classifies as %v, want the kind of %s", e.Name, g, sample, k, path)
			}
		}
	}
}
