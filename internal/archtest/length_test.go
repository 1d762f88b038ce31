package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
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
	var out []longFunc
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "node_modules", "vendor":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxFuncLines {
				rel, _ := filepath.Rel(root, p)
				out = append(out, longFunc{name: filepath.ToSlash(rel) + " " + fd.Name.Name, lines: n})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeFile(p, content string) error { return os.WriteFile(p, []byte(content), 0o644) }
