package check

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/testutil"
)

var sharedValidator = func() *Validator {
	v, err := NewValidator()
	if err != nil {
		panic(err)
	}
	return v
}()

// checkFixture decodes one fixture as the given kind and returns its
// findings rendered one per line, the way the text report prints them.
func checkFixture(t *testing.T, k *artifact.Kind, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc := artifact.Decode(path.Base(file), k, data, artifact.DefaultLimits)
	var fs []Finding
	for _, p := range doc.Problems {
		fs = append(fs, Finding{File: doc.Path, Line: p.Pos.Line, Column: p.Pos.Column, Kind: k.ID, Rule: p.Rule, Severity: SeverityError, Message: p.Message})
	}
	fs = append(fs, sharedValidator.Validate(doc)...)
	Sort(fs)
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(formatFinding(f))
		b.WriteByte('\n')
	}
	return b.String()
}

func formatFinding(f Finding) string {
	return fmt.Sprintf("%s:%d:%d: %s %s: %s", f.File, f.Line, f.Column, f.Severity, f.Rule, f.Message)
}

// TestKindFixtures checks every fixture under testdata/kinds/<kind>/:
// valid* fixtures must give no finding at all; invalid* fixtures must give at
// least one, and exactly what their .golden file says. Every kind must have
// both. Run with -update to rewrite the golden files after reviewing a change.
func TestKindFixtures(t *testing.T) {
	for _, k := range artifact.Kinds() {
		t.Run(k.ID, func(t *testing.T) {
			dir := filepath.Join("testdata", "kinds", k.ID)
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatalf("kind %s has no fixtures: %v", k.ID, err)
			}
			var valid, invalid int
			for _, e := range entries {
				name := e.Name()
				if e.IsDir() || strings.HasSuffix(name, ".golden") {
					continue
				}
				file := filepath.Join(dir, name)
				switch {
				case strings.HasPrefix(name, "valid"):
					valid++
					t.Run(name, func(t *testing.T) {
						if got := checkFixture(t, k, file); got != "" {
							t.Errorf("valid fixture has findings:\n%s", got)
						}
					})
				case strings.HasPrefix(name, "invalid"):
					invalid++
					t.Run(name, func(t *testing.T) {
						got := checkFixture(t, k, file)
						if got == "" {
							t.Fatalf("invalid fixture has no findings")
						}
						testutil.Golden(t, file+".golden", []byte(got))
					})
				default:
					t.Errorf("fixture %s must be named valid* or invalid*", name)
				}
			}
			if valid == 0 || invalid == 0 {
				t.Errorf("kind %s needs at least one valid and one invalid fixture (has %d valid, %d invalid)", k.ID, valid, invalid)
			}
		})
	}
}
