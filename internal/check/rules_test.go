package check

import (
	"context"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/testutil"
)

// ruleCase is one table row of the rule tests: a small tree of artifacts and
// the rule it is about. fires says whether the rule must report on the tree
// (a failing document) or must stay silent (a passing one). Every rule of
// the catalogue needs at least one case of each (TestEveryRuleHasCases).
type ruleCase struct {
	name  string
	rule  string
	fires bool
	// tree maps slash paths to file contents.
	tree map[string]string
	// file and line, when set, are where the finding must be.
	file string
	line int
	// config is an optional .github/phasegate.yml-style config.
	config *config.Config
	// changed, when non-nil, is the set of files changed since a base.
	changed map[string]Change
}

// ruleCases holds every family's cases, keyed by family; each family's
// test file adds its own slice from an init function.
var ruleCases = map[string][]ruleCase{}

func addRuleCases(family string, cases ...ruleCase) {
	ruleCases[family] = append(ruleCases[family], cases...)
}

func runTree(t *testing.T, tree map[string]string, cfg *config.Config, changed map[string]Change) Result {
	t.Helper()
	root := testutil.WriteTree(t, t.TempDir(), tree)
	opts := Options{Config: config.Default(), Changed: changed}
	if cfg != nil {
		opts.Config = *cfg
	}
	res, err := sharedValidator.Run(context.Background(), root, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// runTreeFS is runTree on the tree in memory (RunFS on an fstest.MapFS):
// the rules read every file through the FS they are given and never know
// where it came from, so a rule case is as discriminating in memory as on
// disk, without writing and removing hundreds of trees (a quarter of
// TestRules's CPU). That Run on a directory and RunFS agree is
// TestRunMatchesRunFS's, TestReadOSMatchesReadLimited's and the hostile
// trees' to show; the other tests of this package still run on disk.
func runTreeFS(t *testing.T, tree map[string]string, cfg *config.Config, changed map[string]Change) Result {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, content := range tree {
		fsys[name] = &fstest.MapFile{Data: []byte(content), Mode: 0o644}
	}
	opts := Options{Config: config.Default(), Changed: changed}
	if cfg != nil {
		opts.Config = *cfg
	}
	res, err := sharedValidator.RunFS(context.Background(), fsys, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestRules(t *testing.T) {
	families := make([]string, 0, len(ruleCases))
	for f := range ruleCases {
		families = append(families, f)
	}
	sort.Strings(families)
	for _, fam := range families {
		t.Run(fam, func(t *testing.T) {
			t.Parallel() // a tree of its own per case; the validator is safe for concurrent use
			for _, tc := range ruleCases[fam] {
				t.Run(tc.rule+"/"+tc.name, func(t *testing.T) {
					if !KnownRule(tc.rule) {
						t.Fatalf("unknown rule %s", tc.rule)
					}
					res := runTreeFS(t, tc.tree, tc.config, tc.changed)
					var hits []Finding
					var all strings.Builder
					for _, f := range res.Findings {
						all.WriteString("  " + formatFinding(f) + "\n")
						if f.Rule == tc.rule {
							hits = append(hits, f)
						}
					}
					switch {
					case tc.fires && len(hits) == 0:
						t.Fatalf("rule %s did not fire; findings:\n%s", tc.rule, all.String())
					case !tc.fires && len(hits) > 0:
						t.Fatalf("rule %s fired on a passing tree:\n%s", tc.rule, all.String())
					}
					if tc.fires && tc.file != "" {
						found := false
						for _, h := range hits {
							if h.File == tc.file && (tc.line == 0 || h.Line == tc.line) {
								found = true
							}
						}
						if !found {
							t.Errorf("rule %s fired, but not at %s:%d; findings:\n%s", tc.rule, tc.file, tc.line, all.String())
						}
					}
					for _, h := range hits {
						if h.Message == "" || h.Line < 1 || h.Column < 1 {
							t.Errorf("finding without message or position: %s", formatFinding(h))
						}
					}
				})
			}
		})
	}
}

// TestEveryRuleHasCases: each rule of the catalogue is tested with a tree on
// which it fires and one on which it stays silent.
func TestEveryRuleHasCases(t *testing.T) {
	fires, silent := map[string]bool{}, map[string]bool{}
	for _, cases := range ruleCases {
		for _, tc := range cases {
			if tc.fires {
				fires[tc.rule] = true
			} else {
				silent[tc.rule] = true
			}
		}
	}
	for _, r := range Rules() {
		if !fires[r.ID] {
			t.Errorf("rule %s has no case on which it fires", r.ID)
		}
		if !silent[r.ID] {
			t.Errorf("rule %s has no case on which it stays silent", r.ID)
		}
	}
}

// TestRuleCatalogue: IDs are family-prefixed, severities and bases valid.
func TestRuleCatalogue(t *testing.T) {
	for _, r := range Rules() {
		fam, _, ok := strings.Cut(r.ID, ".")
		if !ok || families[fam] == nil {
			t.Errorf("rule %s: ID must start with a family name", r.ID)
		}
		if r.Severity != SeverityError && r.Severity != SeverityWarning && r.Severity != SeverityOff {
			t.Errorf("rule %s: bad severity %q", r.ID, r.Severity)
		}
		if r.Basis != "S" && r.Basis != "R" && r.Basis != "I" {
			t.Errorf("rule %s: basis %q must be S, R or I", r.ID, r.Basis)
		}
		if r.Basis == "I" && r.Severity == SeverityError {
			t.Errorf("rule %s: an inferred [I] invariant must be a warning or off by default", r.ID)
		}
		if r.Summary == "" {
			t.Errorf("rule %s has no summary", r.ID)
		}
	}
}

// KnownRule reports whether id is a rule of the catalogue.
func KnownRule(id string) bool {
	_, ok := ruleIndex[id]
	return ok || id == RuleConvention
}
