package archtest

import (
	"go/ast"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a non-test function may be (CONTRIBUTING.md):
// a longer one is split along its sections.
const maxFuncLines = 80

// TestFunctionLength: no non-test function of the repository is longer than
// maxFuncLines lines.
func TestFunctionLength(t *testing.T) {
	t.Parallel()
	long := longFunctions(t, filepath.Join("..", ".."))
	for _, f := range long {
		t.Errorf("%s is %d lines, over %d: split it along its sections", f.name, f.lines, maxFuncLines)
	}
}

// TestFunctionLengthSeesALongFunction: the check fails on a planted one.
func TestFunctionLengthSeesALongFunction(t *testing.T) {
	dir := t.TempDir()
	body := "package p\n\nfunc long() {\n" + strings.Repeat("\t_ = 1\n", maxFuncLines) + "}\n\nfunc short() {}\n"
	if err := writeFile(filepath.Join(dir, "p.go"), body); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(filepath.Join(dir, "p_test.go"), body); err != nil { // tests may be long
		t.Fatal(err)
	}
	long := longFunctions(t, dir)
	if len(long) != 1 || !strings.HasSuffix(long[0].name, "p.go long") {
		t.Errorf("long functions = %+v, want p.go long only", long)
	}
}

type longFunc struct {
	name  string
	lines int
}

func longFunctions(t *testing.T, root string) []longFunc {
	t.Helper()
	tree, err := parseTree(root)
	if err != nil {
		t.Fatal(err)
	}
	var out []longFunc
	for _, pf := range tree {
		if strings.HasSuffix(pf.path, "_test.go") {
			continue
		}
		for _, decl := range pf.file.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if n := pf.fset.Position(fd.End()).Line - pf.fset.Position(fd.Pos()).Line + 1; n > maxFuncLines {
				rel := path.Join(pf.dir, filepath.Base(pf.path))
				out = append(out, longFunc{name: rel + " " + fd.Name.Name, lines: n})
			}
		}
	}
	return out
}

func writeFile(p, content string) error { return os.WriteFile(p, []byte(content), 0o644) }
