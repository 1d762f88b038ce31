package outcome

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/testutil"
)

const testCommit = "0123456789abcdef0123456789abcdef01234567"

var testKey = []byte("phasegate-test-signing-key")

// loadOutcome decodes an outcome file under testdata/outcomes the way the
// checker does, and returns its value, the parsed outcome and its canonical
// YAML.
func loadOutcome(t testing.TB, name string) (any, *Outcome, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "outcomes", name))
	if err != nil {
		t.Fatal(err)
	}
	doc := artifact.Decode(name, nil, data, artifact.DefaultLimits)
	if !doc.Decoded {
		t.Fatalf("%s does not decode: %v", name, doc.Problems)
	}
	o, err := Parse(doc.Value)
	if err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	canonical, err := Canonical(doc.Value)
	if err != nil {
		t.Fatalf("Canonical(%s): %v", name, err)
	}
	return doc.Value, o, canonical
}

// outcomeCases are the outcome comments under golden test.
var outcomeCases = []struct {
	name  string
	input string
	key   []byte
	pr    int
}{
	{name: "seed", input: "seed.yaml", pr: 7},
	{name: "seed.signed", input: "seed.yaml", key: testKey, pr: 7},
	{name: "hostile", input: "hostile.yaml", pr: 7},
	{name: "hostile.signed", input: "hostile.yaml", key: testKey, pr: 7},
	{name: "defaults", input: "defaults.yaml", pr: 7},
	{name: "empty", input: "empty.yaml"},
}

func renderCase(t testing.TB, input string, key []byte, pr int) (string, *Outcome, []byte) {
	t.Helper()
	_, o, canonical := loadOutcome(t, input)
	body, err := Render(o, canonical, Meta{Source: "outcomes/" + input, Commit: testCommit, PR: pr, Key: key})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return body, o, canonical
}

// TestOutcomeGolden renders each outcome's comment and its HTML (as
// GitHub-flavoured Markdown renders it), compares both with the golden
// files, checks that the HTML is inert and that the comment verifies.
func TestOutcomeGolden(t *testing.T) {
	for _, tc := range outcomeCases {
		t.Run(tc.name, func(t *testing.T) {
			body, o, canonical := renderCase(t, tc.input, tc.key, tc.pr)
			testutil.Golden(t, filepath.Join("testdata", "golden", tc.name+".md"), []byte(body))
			out := renderHTML(t, body)
			testutil.Golden(t, filepath.Join("testdata", "golden", tc.name+".html"), []byte(out))

			var refs []string
			if tc.pr > 0 {
				refs = []string{"7"}
			}
			for _, p := range inertReport(out, 1, nil, refs) {
				t.Errorf("HTML not inert: %s", p)
			}
			for _, p := range markdownReport(body) {
				t.Errorf("Markdown: %s", p)
			}
			if Normalize(body) != body {
				t.Errorf("Render's output is not in normal form")
			}
			v, err := VerifyOutcomeComment(body, tc.key)
			if err != nil {
				t.Fatalf("VerifyOutcomeComment: %v", err)
			}
			if v.ID != ID(canonical) || string(v.Canonical) != string(canonical) || v.Source != "outcomes/"+tc.input || v.Commit != testCommit || v.PR != tc.pr || v.Signed != (len(tc.key) > 0) {
				t.Errorf("Verified = %+v", v)
			}
			if len(v.Outcome.Decisions) != len(o.Decisions) || v.Outcome.Phase != o.Phase {
				t.Errorf("Verified outcome = %+v, want %+v", v.Outcome, o)
			}
		})
	}
}

// resolutionCases are the resolution comments under golden test.
var resolutionCases = []struct {
	name string
	res  Resolution
	key  []byte
	refs []string
}{
	{name: "resolution", res: Resolution{Outcome: strings.Repeat("ab", 32), Decision: "D-001", Option: "approve", By: "octocat", Command: 1234567890}},
	{name: "resolution-captured.signed", res: Resolution{Outcome: strings.Repeat("cd", 32), Decision: "D-002", Option: "capture", By: "mona_lisa-acme", Command: 42, Captured: 57}, key: testKey, refs: []string{"57"}},
}

func TestResolutionGolden(t *testing.T) {
	for _, tc := range resolutionCases {
		t.Run(tc.name, func(t *testing.T) {
			body, err := RenderResolution(tc.res, tc.key)
			if err != nil {
				t.Fatalf("RenderResolution: %v", err)
			}
			testutil.Golden(t, filepath.Join("testdata", "golden", tc.name+".md"), []byte(body))
			out := renderHTML(t, body)
			testutil.Golden(t, filepath.Join("testdata", "golden", tc.name+".html"), []byte(out))
			for _, p := range inertReport(out, 0, []string{tc.res.By}, tc.refs) {
				t.Errorf("HTML not inert: %s", p)
			}
			if n := strings.Count(out, `class="user-mention"`); n != 0 {
				t.Errorf("unexpected mention markup")
			}
			if !strings.Contains(out, "@"+tc.res.By) && !strings.Contains(out, "@"+strings.ReplaceAll(tc.res.By, "_", "\\_")) {
				t.Errorf("the resolver is not mentioned:\n%s", out)
			}
			if !strings.Contains(out, `href="#issuecomment-`) {
				t.Errorf("no link to the command:\n%s", out)
			}
			v, err := VerifyResolutionComment(body, tc.key)
			if err != nil {
				t.Fatalf("VerifyResolutionComment: %v", err)
			}
			if v.Resolution != tc.res || v.Signed != (len(tc.key) > 0) {
				t.Errorf("Verified = %+v, want %+v", v, tc.res)
			}
		})
	}
}

// TestSeedMatchesSeedExample keeps the seed input in step with the seed
// example internal/check's tests read (the same file of seed 004).
func TestSeedMatchesSeedExample(t *testing.T) {
	shared, err := os.ReadFile(filepath.Join("..", "check", "testdata", "seed-examples", "outcomes", "feature-042-requirements.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	local, err := os.ReadFile(filepath.Join("testdata", "outcomes", "seed.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if string(shared) != string(local) {
		t.Errorf("testdata/outcomes/seed.yaml differs from the shared seed example")
	}
}
