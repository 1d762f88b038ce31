package archtest

import (
	"go/ast"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// testMainFacts are, per directory of the product module that holds tests,
// whether one of its _test.go files declares a TestMain that calls
// testutil.Exit (Exit, in testutil itself).
func testMainFacts(root string) (map[string]bool, error) {
	tree, err := parseTree(root)
	if err != nil {
		return nil, err
	}
	facts := map[string]bool{}
	for _, pf := range tree {
		top, _, _ := strings.Cut(pf.dir, "/")
		if !strings.HasSuffix(pf.path, "_test.go") || top != "cmd" && top != "internal" && top != "schemas" {
			continue
		}
		facts[pf.dir] = facts[pf.dir] || testMainCallsExit(pf.file, pf.dir == "internal/testutil")
	}
	return facts, nil
}

// testMainCallsExit: f declares TestMain and its body calls testutil.Exit.
func testMainCallsExit(f *ast.File, inTestutil bool) bool {
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || fd.Name.Name != "TestMain" || fd.Body == nil {
			continue
		}
		found := false
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			switch fun := call.Fun.(type) {
			case *ast.SelectorExpr:
				if id, ok := fun.X.(*ast.Ident); ok && id.Name == "testutil" && fun.Sel.Name == "Exit" {
					found = true
				}
			case *ast.Ident:
				found = found || inTestutil && fun.Name == "Exit"
			}
			return !found
		})
		return found
	}
	return false
}

// missingTestMains are the directories with tests whose TestMain does not
// end with testutil.Exit.
func missingTestMains(facts map[string]bool) []string {
	var out []string
	for dir, ok := range facts {
		if !ok {
			out = append(out, dir)
		}
	}
	slices.Sort(out)
	return out
}

// TestEveryTestBinaryEndsWithTestutilExit: each test binary of the product
// module skips the race runtime's one-second exit sleep once its tests
// passed (testutil.Exit says why that is safe); a package whose TestMain
// forgets costs every run of `go test -race ./...` a second.
func TestEveryTestBinaryEndsWithTestutilExit(t *testing.T) {
	t.Parallel()
	facts, err := testMainFacts(moduleRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"internal/decide", "internal/testutil", "schemas"} {
		if _, ok := facts[dir]; !ok {
			t.Errorf("the walk did not see the tests of %s", dir)
		}
	}
	for _, dir := range missingTestMains(facts) {
		t.Errorf("%s: its tests have no TestMain ending with testutil.Exit: add main_test.go with\n\tfunc TestMain(m *testing.M) { testutil.Exit(m.Run()) }", dir)
	}
}

// TestMissingTestMainsCatches: a package with tests and no TestMain, or one
// that ends with os.Exit, is caught; one that ends with testutil.Exit is not.
func TestMissingTestMainsCatches(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := map[string]string{
		"internal/good/main_test.go":   "package good\n\nfunc TestMain(m *testing.M) { testutil.Exit(m.Run()) }\n",
		"internal/none/none_test.go":   "package none\n\nfunc TestX(t *testing.T) {}\n",
		"internal/osexit/main_test.go": "package osexit\n\nfunc TestMain(m *testing.M) { os.Exit(m.Run()) }\n",
		"internal/helper/a_test.go":    "package helper\n\nfunc TestMain(m *testing.M) { other.Exit(m.Run()) }\n",
		"internal/notests/n.go":        "package notests\n",
		"internal/testutil/e_test.go":  "package testutil\n\nfunc TestMain(m *testing.M) { Exit(m.Run()) }\n",
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeFile(p, body); err != nil {
			t.Fatal(err)
		}
	}
	facts, err := testMainFacts(root)
	if err != nil {
		t.Fatal(err)
	}
	got := missingTestMains(facts)
	want := []string{"internal/helper", "internal/none", "internal/osexit"}
	if !slices.Equal(got, want) {
		t.Errorf("missing = %v, want %v", got, want)
	}
}
