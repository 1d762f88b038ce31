package archtest

import (
	"errors"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The product module holds the product only: its programs are under cmd/
// (pre-commit's golang hook runs `go install ./...` of the repository and
// builds every one of them into each user's cache). The benchmarks and
// measurement programs are the bench module (bench/go.mod), the real-browser
// tests the e2e module (e2e/go.mod, with chromedp); each requires the product
// by `replace … => ../`; no go.work joins them, or the hook would see bench
// again and the product's go.mod would not stay lean.

const benchModule = module + "/bench"

// moduleMains lists the directories (slash-separated, relative to root) of
// the main packages of root's module: every directory below root except
// those of another module (a go.mod of their own), testdata and dot or
// underscore directories, as the go tool walks ./... .
func moduleMains(root string) ([]string, error) {
	var mains []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if p != root {
			if n := d.Name(); n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
		}
		pkg, err := build.Default.ImportDir(p, 0)
		var noGo *build.NoGoError
		switch {
		case errors.As(err, &noGo):
			return nil
		case err != nil:
			return err
		case pkg.Name == "main":
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			mains = append(mains, filepath.ToSlash(rel))
		}
		return nil
	})
	return mains, err
}

// checkModules says what is wrong with the split: the product module's
// main packages (directories), the go.mod text of each tooling module by
// its directory ("" when it is missing) and whether the repository has a
// go.work.
func checkModules(mains []string, tooling map[string]string, goWork bool) []string {
	var probs []string
	for _, m := range mains {
		if !strings.HasPrefix(m, "cmd/") {
			probs = append(probs, "main package "+m+" is in the product module outside cmd/: a benchmark or tool belongs in the bench module (bench/)")
		}
	}
	for _, dir := range toolingModules {
		goMod, path := tooling[dir], module+"/"+dir
		switch {
		case goMod == "":
			probs = append(probs, dir+"/go.mod is missing: "+dir+"/ must be a module of its own")
		case !strings.HasPrefix(goMod, "module "+path+"\n") && !strings.Contains(goMod, "\nmodule "+path+"\n"):
			probs = append(probs, dir+"/go.mod is not module "+path)
		case !strings.Contains(goMod, "\nreplace "+module+" => ../\n"):
			probs = append(probs, dir+"/go.mod does not replace "+module+" => ../ (it must build this checkout)")
		}
	}
	if goWork {
		probs = append(probs, "go.work joins the modules: pre-commit's go install ./... would build bench's programs again")
	}
	return probs
}

func TestProductModuleHoldsOnlyTheProduct(t *testing.T) {
	root := moduleRoot(t)
	mains, err := moduleMains(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(mains) == 0 {
		t.Fatal("no main package found in the product module: the walk is broken")
	}
	tooling := map[string]string{}
	for _, dir := range toolingModules {
		goMod, err := os.ReadFile(filepath.Join(root, dir, "go.mod"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		tooling[dir] = string(goMod)
	}
	_, werr := os.Stat(filepath.Join(root, "go.work"))
	for _, p := range checkModules(mains, tooling, werr == nil) {
		t.Error(p)
	}
}

func TestModuleMainsSeesAStrayProgram(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"go.mod":                   "module example.com/m\n\ngo 1.25.0\n",
		"cmd/x/main.go":            "package main\n\nfunc main() {}\n",
		"lib/lib.go":               "package lib\n",
		"tools/flood/main.go":      "package main\n\nfunc main() {}\n",
		"bench/go.mod":             "module example.com/m/bench\n",
		"bench/cmd/b/main.go":      "package main\n\nfunc main() {}\n",
		"lib/testdata/t/main.go":   "package main\n\nfunc main() {}\n",
		"_scratch/main.go":         "package main\n\nfunc main() {}\n",
		"lib/gen/main_ignore.go":   "//go:build ignore\n\npackage main\n",
		"lib/gen/gen.go":           "package gen\n",
		"internal/p/only_test.go":  "package p\n",
		"internal/p/doc_nogo.txt":  "",
		"internal/q/q.go":          "package q\n",
		"internal/q/main_test.go":  "package q\n",
		"internal/q/sub/x/main.go": "package main\n\nfunc main() {}\n",
	}
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeFile(p, text); err != nil {
			t.Fatal(err)
		}
	}
	mains, err := moduleMains(root)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(mains, " "), "cmd/x internal/q/sub/x tools/flood"; got != want {
		t.Errorf("moduleMains = %q, want %q", got, want)
	}
}

func TestCheckModulesCatches(t *testing.T) {
	goMod := func(dir string) string {
		return "module " + module + "/" + dir + "\n\ngo 1.25.0\n\nrequire " + module + " v0.0.0-00010101000000-000000000000\n\nreplace " + module + " => ../\n"
	}
	good := map[string]string{"bench": goMod("bench"), "e2e": goMod("e2e")}
	with := func(dir, text string) map[string]string {
		m := map[string]string{"bench": good["bench"], "e2e": good["e2e"]}
		m[dir] = text
		return m
	}
	tests := []struct {
		name    string
		mains   []string
		tooling map[string]string
		goWork  bool
		want    string // "" = no problem
	}{
		{name: "as it is", mains: []string{"cmd/phasegate"}, tooling: good},
		{name: "a benchmark program back in the product", mains: []string{"cmd/phasegate", "bench/cmd/unsignedflood"}, tooling: good,
			want: "main package bench/cmd/unsignedflood is in the product module outside cmd/"},
		{name: "a script's program", mains: []string{"cmd/phasegate", "scripts/gen"}, tooling: good,
			want: "main package scripts/gen is in the product module"},
		{name: "no bench module", mains: []string{"cmd/phasegate"}, tooling: with("bench", ""), want: "bench/go.mod is missing"},
		{name: "no e2e module: chromedp in the product's go.mod", mains: []string{"cmd/phasegate"}, tooling: with("e2e", ""), want: "e2e/go.mod is missing"},
		{name: "another module path", mains: []string{"cmd/phasegate"}, tooling: with("bench", strings.Replace(good["bench"], "/bench\n", "/benchmarks\n", 1)),
			want: "bench/go.mod is not module " + benchModule},
		{name: "e2e under another module path", mains: []string{"cmd/phasegate"}, tooling: with("e2e", strings.Replace(good["e2e"], "/e2e\n", "/browser\n", 1)),
			want: "e2e/go.mod is not module " + module + "/e2e"},
		{name: "the product from the proxy", mains: []string{"cmd/phasegate"}, tooling: with("bench", strings.Replace(good["bench"], "replace ", "// replace ", 1)),
			want: "bench/go.mod does not replace " + module + " => ../"},
		{name: "e2e tests the product from the proxy", mains: []string{"cmd/phasegate"}, tooling: with("e2e", strings.Replace(good["e2e"], "replace ", "// replace ", 1)),
			want: "e2e/go.mod does not replace " + module + " => ../"},
		{name: "a go.work", mains: []string{"cmd/phasegate"}, tooling: good, goWork: true, want: "go.work joins the modules"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probs := checkModules(tt.mains, tt.tooling, tt.goWork)
			if tt.want == "" {
				if len(probs) > 0 {
					t.Errorf("problems %q, want none", probs)
				}
				return
			}
			if len(probs) != 1 || !strings.Contains(probs[0], tt.want) {
				t.Errorf("problems %q, want one containing %q", probs, tt.want)
			}
		})
	}
}
