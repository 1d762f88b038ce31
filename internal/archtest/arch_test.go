// Package archtest holds phasegate's architecture test: the import and call
// rules of docs/architecture.md ("Invariants"), checked against the source
// tree, and the docs that describe the code checked against the code.
//
// The checker is a function over facts (package → imports and uses), so a
// test can plant a violation in a copy of the real facts and see it caught:
// a rule that cannot fail is not a rule.
package archtest

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/check"
)

const module = "github.com/phasegate/phasegate"

// Role is a package's place in the architecture (docs/architecture.md,
// "Packages").
type Role string

const (
	// Pure packages compute: no GitHub, no network, no printing. They are
	// the data flow files → artifacts → findings → verdict → reports.
	Pure Role = "pure"
	// Local packages do local I/O only (the repository's .git).
	Local Role = "local"
	// GitHubClient is the one package that calls GitHub.
	GitHubClient Role = "ghclient"
	// Handler is the decision handler: the ledger meets GitHub.
	Handler Role = "decide"
	// Adapter packages are entry points: the action, the App server and the
	// command line, and what only they use (Redis, the notify POST).
	Adapter Role = "adapter"
	// Main is cmd/phasegate.
	Main Role = "main"
	// TestSupport packages serve tests only (fakes, fixtures).
	TestSupport Role = "test-support"
	// Tooling is bench/ and e2e/: benchmarks and measurement programs, and
	// the real-browser tests, not the product (each a module of its own,
	// bench/go.mod and e2e/go.mod, still checked here: they import the
	// product's internal packages).
	Tooling Role = "tooling"
)

// roles assigns every package of the product a role. A new package must be
// added here and to docs/architecture.md (TestEveryPackageHasARole).
var roles = map[string]Role{
	"schemas":                       Pure,
	"examples":                      Pure,
	"internal/artifact":             Pure,
	"internal/check":                Pure,
	"internal/config":               Pure,
	"internal/gate":                 Pure,
	"internal/outcome":              Pure,
	"internal/ledger":               Pure,
	"internal/command":              Pure,
	"internal/report":               Pure,
	"internal/notify":               Pure,
	"internal/retry":                Pure,
	"internal/history":              Local,
	"internal/ghclient":             GitHubClient,
	"internal/decide":               Handler,
	"internal/checkjob":             Handler,
	"internal/action":               Adapter,
	"internal/server":               Adapter,
	"internal/pages":                Adapter,
	"internal/web":                  Adapter,
	"internal/cli":                  Adapter,
	"internal/redisx":               Adapter,
	"internal/notify/webhook":       Adapter,
	"internal/probe":                Adapter,
	"cmd/phasegate":                 Main,
	"internal/ghfake":               TestSupport,
	"internal/ghfake/ghfaketest":    TestSupport,
	"internal/testutil/outcometest": TestSupport,
	"internal/testutil/redistest":   TestSupport,
	"internal/testutil/sariftest":   TestSupport,
	"internal/testutil":             TestSupport,
	"internal/archtest":             TestSupport,
	"internal/binaryaction":         TestSupport,
}

// toolingModules are the directories of the modules that are tooling, not
// the product (module_test.go checks their go.mod).
var toolingModules = []string{"bench", "e2e"}

// roleOf is a package's role; bench/… (the bench module) and e2e/… (the
// browser tests' module) are tooling.
func roleOf(pkg string) Role {
	if r, ok := roles[pkg]; ok {
		return r
	}
	for _, m := range toolingModules {
		if pkg == m || strings.HasPrefix(pkg, m+"/") {
			return Tooling
		}
	}
	return ""
}

// Package is what the rules know of one package (a directory of .go files).
// Paths of the module's own packages are relative to the module
// ("internal/ghclient"); others are full import paths.
type Package struct {
	// Imports are the imports of the non-test files.
	Imports []string
	// TestImports are the imports of the _test.go files.
	TestImports []string
	// Uses are the qualified identifiers the non-test files use, as
	// "importpath.Name" ("fmt.Println", "net/http.NewRequest"), plus
	// "builtin.print" / "builtin.println".
	Uses []string
	// Calls are the method names the non-test files call on values
	// (gh.CreateStatus(…) → "CreateStatus").
	Calls []string
}

// Violation is one broken rule.
type Violation struct {
	Rule    string
	Package string
	What    string
}

func (v Violation) String() string { return v.Rule + ": " + v.Package + " " + v.What }

// Third-party packages the rules name.
const (
	goGitHub      = "github.com/google/go-github/"
	ghInstall     = "github.com/bradleyfalzon/ghinstallation/"
	githubActions = "github.com/sethvargo/go-githubactions"
)

// hasPrefixPath reports whether imp is p or below it (p ending in "/" is a
// module prefix: any major version; p starting with "=" is p exactly).
func hasPrefixPath(imp, p string) bool {
	if exact, ok := strings.CutPrefix(p, "="); ok {
		return imp == exact
	}
	if strings.HasSuffix(p, "/") {
		return strings.HasPrefix(imp, p)
	}
	return imp == p || strings.HasPrefix(imp, p+"/")
}

// pureForbidden are what a pure package may not import: GitHub, the network,
// the adapters and the handler, and anything that runs processes.
var pureForbidden = []string{
	"internal/ghclient", "internal/ghfake", "internal/decide", "internal/action", "internal/server",
	"internal/cli", "internal/redisx", "internal/notify/webhook", "internal/history",
	"=net", "net/http", "os/exec", "=log", "log/slog",
	goGitHub, ghInstall, githubActions,
	"github.com/redis/go-redis/", "github.com/go-git/go-git/", "github.com/prometheus/",
}

// printing are the uses that write to the process's own output. Output goes
// to the io.Writer cli.Main is given, never straight to stdout or stderr.
var printing = []string{
	"fmt.Print", "fmt.Printf", "fmt.Println", "os.Stdout", "os.Stderr",
	"builtin.print", "builtin.println",
}

// outboundHTTP are the uses that make an HTTP request.
var outboundHTTP = []string{
	"net/http.NewRequest", "net/http.NewRequestWithContext", "net/http.Get", "net/http.Head",
	"net/http.Post", "net/http.PostForm", "net/http.Client", "net/http.DefaultClient",
}

// githubWrites are the ghclient methods that change GitHub, and who may call
// them: decide writes the ledger's comments, reactions, labels, follow-up
// issues, dispatches and phasegate/decisions; the action writes only its
// commit's phasegate/contracts status.
var githubWrites = map[string][]string{
	"CreateIssueComment":    {"internal/decide"},
	"CreateCommentReaction": {"internal/decide"},
	"AddLabels":             {"internal/decide"},
	"RemoveLabel":           {"internal/decide"},
	"CreateIssue":           {"internal/decide"},
	"RepositoryDispatch":    {"internal/decide"},
	"CreateStatus":          {"internal/decide", "internal/action"},
	"CreateCheckRun":        {"internal/decide"},
	"UpdateCheckRun":        {"internal/decide"},
}

// Check applies every rule to the packages and returns what breaks them,
// sorted.
func Check(pkgs map[string]*Package) []Violation {
	var out []Violation
	add := func(rule, pkg, format string, args ...any) {
		out = append(out, Violation{Rule: rule, Package: pkg, What: fmt.Sprintf(format, args...)})
	}
	names := make([]string, 0, len(pkgs))
	for n := range pkgs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		p := pkgs[name]
		role := roleOf(name)
		if role == "" {
			add("every-package-has-a-role", name, "has no role: add it to roles in internal/archtest and to docs/architecture.md")
		}
		for _, imp := range p.Imports {
			if role == Pure {
				for _, f := range pureForbidden {
					if hasPrefixPath(imp, f) {
						add("pure-stays-pure", name, "imports %s", imp)
					}
				}
			}
			if hasPrefixPath(imp, "net/http") && !slices.Contains([]string{"internal/ghclient", "internal/ghfake", "internal/ghfake/ghfaketest", "internal/server", "internal/web", "internal/notify/webhook", "internal/probe"}, name) && role != Tooling {
				add("net-http-only-at-the-edges", name, "imports %s (only ghclient, ghfake and its ghfaketest, server, web, notify/webhook and probe may)", imp)
			}
		}
		// The GitHub libraries: every file, tests included (tests use the
		// real client through ghclient against ghfake).
		for _, imp := range append(slices.Clone(p.Imports), p.TestImports...) {
			if (hasPrefixPath(imp, goGitHub) || hasPrefixPath(imp, ghInstall)) && name != "internal/ghclient" {
				add("only-ghclient-calls-github", name, "imports %s", imp)
			}
			if hasPrefixPath(imp, githubActions) && name != "internal/action" {
				add("only-action-imports-githubactions", name, "imports %s", imp)
			}
		}
		for _, use := range p.Uses {
			if strings.HasPrefix(name, "internal/") && slices.Contains(printing, use) {
				add("no-printing", name, "uses %s (write to the io.Writer you are given)", use)
			}
			if slices.Contains(outboundHTTP, use) && name != "internal/ghclient" && name != "internal/notify/webhook" && name != "internal/probe" && role != Tooling {
				add("only-ghclient-calls-github", name, "makes its own HTTP requests (%s)", use)
			}
			if use == "os.Exit" && role != Main && role != Tooling && name != "internal/testutil" { // testutil.Exit ends test binaries
				add("exit-codes-are-returned", name, "calls os.Exit (return the exit code to cmd/phasegate)")
			}
		}
		for _, call := range p.Calls {
			allowed, watched := githubWrites[call]
			if watched && !slices.Contains(allowed, name) && name != "internal/ghclient" && role != TestSupport && role != Tooling {
				add("one-writer", name, "calls %s (only %s may change that on GitHub)", call, strings.Join(allowed, " and "))
			}
		}
		// Dependency direction.
		for _, imp := range p.Imports {
			switch {
			case name == "internal/ghclient" && strings.HasPrefix(imp, "internal/") && imp != "internal/retry":
				add("ghclient-is-a-leaf", name, "imports %s (ghclient knows GitHub, not phasegate; it may import internal/retry alone)", imp)
			case name == "internal/retry" && (strings.HasPrefix(imp, "internal/") || imp == "schemas"):
				add("ghclient-is-a-leaf", name, "imports %s (ghclient imports the retry policy, which knows no phasegate package)", imp)
			case (name == "internal/decide" || name == "internal/checkjob") && slices.Contains([]string{"internal/action", "internal/server", "internal/cli", "internal/redisx"}, imp):
				add("decide-below-adapters", name, "imports %s", imp)
			case name == "internal/action" && imp == "internal/server", name == "internal/server" && imp == "internal/action":
				add("action-and-server-apart", name, "imports %s (both call decide, never each other)", imp)
			case (imp == "internal/action" || imp == "internal/server") && name != "internal/cli" && role != Tooling:
				add("only-cli-runs-adapters", name, "imports %s", imp)
			case role == Main && imp != "internal/cli" && imp != "os":
				add("main-is-one-line", name, "imports %s (main only calls cli.Main)", imp)
			case role != TestSupport && role != Tooling && (hasPrefixPath(imp, "internal/ghfake") || hasPrefixPath(imp, "internal/testutil") || imp == "testing"):
				add("test-support-stays-in-tests", name, "imports %s outside its tests", imp)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// moduleRoot is the repository root (two levels above this package).
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatalf("reading the module's go.mod: %v", err)
	}
	if !strings.Contains(string(data), "module "+module+"\n") {
		t.Fatalf("%s/go.mod is not module %s", root, module)
	}
	return root
}

// Load parses every Go package under root's cmd/, internal/, schemas/,
// examples/, bench/ and e2e/ into facts: imports (non-test and test apart), the
// qualified identifiers the non-test files use and the methods they call.
// testdata, node_modules and dot directories are skipped, as the go tool
// does (node_modules: e2e's npm packages).
func Load(root string) (map[string]*Package, error) {
	tree, err := parseTree(root)
	if err != nil {
		return nil, err
	}
	pkgs := map[string]*Package{}
	for _, pf := range tree {
		top, _, _ := strings.Cut(pf.dir, "/")
		if !slices.Contains(append([]string{"cmd", "internal", "schemas", "examples"}, toolingModules...), top) {
			continue
		}
		pkg := pkgs[pf.dir]
		if pkg == nil {
			pkg = &Package{}
			pkgs[pf.dir] = pkg
		}
		if err := addFacts(pkg, pf); err != nil {
			return nil, err
		}
	}
	return pkgs, nil
}

// addFacts adds what one file imports, uses and calls to its package.
func addFacts(pkg *Package, pf parsedFile) error {
	test := strings.HasSuffix(pf.path, "_test.go")
	local := map[string]string{} // name in the file → import path
	for _, spec := range pf.file.Imports {
		imp, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			return fmt.Errorf("reading an import of %s: %w", pf.path, err)
		}
		imp = strings.TrimPrefix(imp, module+"/")
		if test {
			pkg.TestImports = appendNew(pkg.TestImports, imp)
		} else {
			pkg.Imports = appendNew(pkg.Imports, imp)
		}
		as := path.Base(imp)
		if spec.Name != nil {
			as = spec.Name.Name
		} else if majorVersion.MatchString(as) {
			continue // a major-version suffix: the name is not the path's
		}
		local[as] = imp
	}
	if test {
		return nil
	}
	ast.Inspect(pf.file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok {
				if imp, ok := local[id.Name]; ok {
					pkg.Uses = appendNew(pkg.Uses, imp+"."+n.Sel.Name)
				}
			}
		case *ast.CallExpr:
			switch fun := n.Fun.(type) {
			case *ast.Ident:
				if fun.Name == "print" || fun.Name == "println" {
					pkg.Uses = appendNew(pkg.Uses, "builtin."+fun.Name)
				}
			case *ast.SelectorExpr:
				if id, ok := fun.X.(*ast.Ident); !ok || local[id.Name] == "" {
					pkg.Calls = appendNew(pkg.Calls, fun.Sel.Name)
				}
			}
		}
		return true
	})
	return nil
}

// parsedFile is one Go file of a tree: its path, its directory relative to
// the tree's root (slash-separated) and its syntax (of a test file that
// does not name TestMain, its imports only: parseMode).
type parsedFile struct {
	path, dir string
	fset      *token.FileSet
	file      *ast.File
}

// parseTree parses every Go file under root, skipping testdata,
// node_modules, vendor and dot or underscore directories as the go tool
// does (node_modules: e2e's npm packages). The tree is parsed once per root
// for all the tests of the binary (Load and longFunctions read it; nobody
// changes it).
func parseTree(root string) ([]parsedFile, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	v, _ := trees.LoadOrStore(abs, &treeOnce{})
	once := v.(*treeOnce)
	once.Do(func() { once.files, once.err = parseTreeNow(abs) })
	return once.files, once.err
}

type treeOnce struct {
	sync.Once
	files []parsedFile
	err   error
}

var trees sync.Map // absolute root → *treeOnce

func parseTreeNow(root string) ([]parsedFile, error) {
	var files []parsedFile
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (n == "testdata" || n == "node_modules" || n == "vendor" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("reading %s: %w", p, err)
		}
		f, err := parser.ParseFile(fset, p, src, parseMode(p, src))
		if err != nil {
			return fmt.Errorf("parsing %s: %w", p, err)
		}
		files = append(files, parsedFile{path: p, dir: filepath.ToSlash(rel), fset: fset, file: f})
		return nil
	})
	return files, err
}

// parseMode is how much of a file the tests read. Of a _test.go file they
// read only its imports (addFacts) and its TestMain (testMainFacts):
// one that does not name TestMain at all cannot declare it, and is
// parsed up to its imports only. Test files are half the tree's bytes,
// and parsing their bodies was a quarter of the binary's CPU under -race.
func parseMode(p string, src []byte) parser.Mode {
	if strings.HasSuffix(p, "_test.go") && !bytes.Contains(src, []byte("TestMain")) {
		return parser.SkipObjectResolution | parser.ImportsOnly
	}
	return parser.SkipObjectResolution
}

// majorVersion is a module path's major-version element (…/v9).
var majorVersion = regexp.MustCompile(`^v[0-9]+$`)

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// clone deep-copies facts, so that a test can plant a violation.
func clone(pkgs map[string]*Package) map[string]*Package {
	out := make(map[string]*Package, len(pkgs))
	for n, p := range pkgs {
		out[n] = &Package{
			Imports: slices.Clone(p.Imports), TestImports: slices.Clone(p.TestImports),
			Uses: slices.Clone(p.Uses), Calls: slices.Clone(p.Calls),
		}
	}
	return out
}

// load is the real tree's facts, parsed once for all the tests of the
// binary: they only read them (a test that plants a violation clones them).
func load(t *testing.T) map[string]*Package {
	t.Helper()
	root := moduleRoot(t)
	realTree.once.Do(func() { realTree.pkgs, realTree.err = Load(root) })
	if realTree.err != nil {
		t.Fatal(realTree.err)
	}
	return realTree.pkgs
}

var realTree struct {
	once sync.Once
	pkgs map[string]*Package
	err  error
}

// TestArchitecture: the real tree keeps every rule.
func TestArchitecture(t *testing.T) {
	t.Parallel()
	pkgs := load(t)
	// The loader must have seen the packages the rules are about, with the
	// imports that make the rules bite; otherwise the test could pass on
	// nothing.
	for name := range roles {
		if pkgs[name] == nil {
			t.Errorf("package %s is in the role table but was not found under %s", name, moduleRoot(t))
		}
	}
	for pkg, imp := range map[string]string{
		"internal/ghclient": goGitHub + "v60/github",
		"internal/action":   githubActions,
		"internal/decide":   "internal/ghclient",
		"internal/server":   "net/http",
	} {
		if p := pkgs[pkg]; p == nil || !slices.ContainsFunc(p.Imports, func(s string) bool { return hasPrefixPath(s, imp) || s == imp }) {
			t.Errorf("the loader did not see %s import %s", pkg, imp)
		}
	}
	for _, m := range toolingModules {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(pkgs)), func(n string) bool { return strings.HasPrefix(n, m+"/") }) {
			t.Errorf("the loader saw no package of the %s module", m)
		}
	}
	if p := pkgs["internal/decide"]; p == nil || !slices.Contains(p.Calls, "CreateStatus") {
		t.Errorf("the loader did not see internal/decide call CreateStatus")
	}
	for _, v := range Check(pkgs) {
		t.Error(v)
	}
}

// TestEveryPackageHasARole: the role table is not stale either.
func TestEveryPackageHasARole(t *testing.T) {
	t.Parallel()
	pkgs := load(t)
	for name := range pkgs {
		if roleOf(name) == "" {
			t.Errorf("package %s has no role: add it to roles in internal/archtest/arch_test.go and to docs/architecture.md", name)
		}
	}
}

// TestPlantedViolations: each rule catches the violation it exists for,
// planted in a copy of the real tree's facts.
func TestPlantedViolations(t *testing.T) {
	t.Parallel()
	real := load(t)
	tests := []struct {
		name     string
		plant    func(p map[string]*Package)
		wantRule string
		wantPkg  string
	}{
		{name: "pure package imports ghclient", wantRule: "pure-stays-pure", wantPkg: "internal/check",
			plant: func(p map[string]*Package) { imp(p, "internal/check", "internal/ghclient") }},
		{name: "pure package imports net/http", wantRule: "pure-stays-pure", wantPkg: "internal/gate",
			plant: func(p map[string]*Package) { imp(p, "internal/gate", "net/http") }},
		{name: "pure package imports go-githubactions", wantRule: "pure-stays-pure", wantPkg: "internal/report",
			plant: func(p map[string]*Package) { imp(p, "internal/report", githubActions) }},
		{name: "pure package imports the decision handler", wantRule: "pure-stays-pure", wantPkg: "internal/ledger",
			plant: func(p map[string]*Package) { imp(p, "internal/ledger", "internal/decide") }},
		{name: "pure notify imports its webhook sender", wantRule: "pure-stays-pure", wantPkg: "internal/notify",
			plant: func(p map[string]*Package) { imp(p, "internal/notify", "internal/notify/webhook") }},
		{name: "pure package logs", wantRule: "pure-stays-pure", wantPkg: "internal/outcome",
			plant: func(p map[string]*Package) { imp(p, "internal/outcome", "log/slog") }},
		{name: "server imports go-githubactions", wantRule: "only-action-imports-githubactions", wantPkg: "internal/server",
			plant: func(p map[string]*Package) { imp(p, "internal/server", githubActions) }},
		{name: "cli imports go-githubactions in a test", wantRule: "only-action-imports-githubactions", wantPkg: "internal/cli",
			plant: func(p map[string]*Package) {
				p["internal/cli"].TestImports = append(p["internal/cli"].TestImports, githubActions)
			}},
		{name: "decide imports go-github", wantRule: "only-ghclient-calls-github", wantPkg: "internal/decide",
			plant: func(p map[string]*Package) { imp(p, "internal/decide", goGitHub+"v60/github") }},
		{name: "server imports ghinstallation", wantRule: "only-ghclient-calls-github", wantPkg: "internal/server",
			plant: func(p map[string]*Package) { imp(p, "internal/server", ghInstall+"v2") }},
		{name: "server builds its own GitHub request", wantRule: "only-ghclient-calls-github", wantPkg: "internal/server",
			plant: func(p map[string]*Package) { use(p, "internal/server", "net/http.NewRequestWithContext") }},
		{name: "action makes an http.Client", wantRule: "net-http-only-at-the-edges", wantPkg: "internal/action",
			plant: func(p map[string]*Package) {
				imp(p, "internal/action", "net/http")
				use(p, "internal/action", "net/http.Client")
			}},
		{name: "action labels an issue itself", wantRule: "one-writer", wantPkg: "internal/action",
			plant: func(p map[string]*Package) {
				p["internal/action"].Calls = append(p["internal/action"].Calls, "AddLabels")
			}},
		{name: "server sets a status itself", wantRule: "one-writer", wantPkg: "internal/server",
			plant: func(p map[string]*Package) {
				p["internal/server"].Calls = append(p["internal/server"].Calls, "CreateStatus")
			}},
		{name: "action posts a comment itself", wantRule: "one-writer", wantPkg: "internal/action",
			plant: func(p map[string]*Package) {
				p["internal/action"].Calls = append(p["internal/action"].Calls, "CreateIssueComment")
			}},
		{name: "check prints", wantRule: "no-printing", wantPkg: "internal/check",
			plant: func(p map[string]*Package) { use(p, "internal/check", "fmt.Println") }},
		{name: "decide writes to stderr", wantRule: "no-printing", wantPkg: "internal/decide",
			plant: func(p map[string]*Package) { use(p, "internal/decide", "os.Stderr") }},
		{name: "cli exits", wantRule: "exit-codes-are-returned", wantPkg: "internal/cli",
			plant: func(p map[string]*Package) { use(p, "internal/cli", "os.Exit") }},
		{name: "ghclient imports phasegate", wantRule: "ghclient-is-a-leaf", wantPkg: "internal/ghclient",
			plant: func(p map[string]*Package) { imp(p, "internal/ghclient", "internal/outcome") }},
		{name: "the retry policy ghclient imports imports phasegate", wantRule: "ghclient-is-a-leaf", wantPkg: "internal/retry",
			plant: func(p map[string]*Package) { imp(p, "internal/retry", "internal/ledger") }},
		{name: "decide imports the action", wantRule: "decide-below-adapters", wantPkg: "internal/decide",
			plant: func(p map[string]*Package) { imp(p, "internal/decide", "internal/action") }},
		{name: "action imports server", wantRule: "action-and-server-apart", wantPkg: "internal/action",
			plant: func(p map[string]*Package) { imp(p, "internal/action", "internal/server") }},
		{name: "report imports the server", wantRule: "pure-stays-pure", wantPkg: "internal/report",
			plant: func(p map[string]*Package) { imp(p, "internal/report", "internal/server") }},
		{name: "redisx imports the action", wantRule: "only-cli-runs-adapters", wantPkg: "internal/redisx",
			plant: func(p map[string]*Package) { imp(p, "internal/redisx", "internal/action") }},
		{name: "main does more than call cli", wantRule: "main-is-one-line", wantPkg: "cmd/phasegate",
			plant: func(p map[string]*Package) { imp(p, "cmd/phasegate", "internal/check") }},
		{name: "decide uses the fake GitHub outside tests", wantRule: "test-support-stays-in-tests", wantPkg: "internal/decide",
			plant: func(p map[string]*Package) { imp(p, "internal/decide", "internal/ghfake") }},
		{name: "a package nobody placed", wantRule: "every-package-has-a-role", wantPkg: "internal/newthing",
			plant: func(p map[string]*Package) { p["internal/newthing"] = &Package{} }},
	}
	if got := Check(real); len(got) != 0 {
		t.Fatalf("the real tree already breaks rules: %v", got)
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := clone(real)
			tt.plant(p)
			got := Check(p)
			found := false
			for _, v := range got {
				found = found || v.Rule == tt.wantRule && v.Package == tt.wantPkg
			}
			if !found {
				t.Errorf("planted %q: want a %s violation in %s, got %v", tt.name, tt.wantRule, tt.wantPkg, got)
			}
		})
		covered[tt.wantRule] = true
	}
	// Every rule Check knows has a planted violation above.
	src, err := os.ReadFile("arch_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`add\("([a-z-]+)"`).FindAllStringSubmatch(string(src), -1) {
		if !covered[m[1]] {
			t.Errorf("rule %s has no planted violation in TestPlantedViolations", m[1])
		}
	}
}

func imp(p map[string]*Package, pkg, path string) {
	p[pkg].Imports = append(p[pkg].Imports, path)
}

func use(p map[string]*Package, pkg, what string) {
	p[pkg].Uses = append(p[pkg].Uses, what)
}

// TestLoadSeesAPlantedFile: the loader reads real source — a pure package
// on disk that imports net/http and prints is caught, an aliased import
// included, and its test files count only for the GitHub-library rules.
func TestLoadSeesAPlantedFile(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("internal/gate/gate.go", `package gate

import (
	web "net/http"
	"fmt"
)

var _ = web.MethodGet

func Compute() { fmt.Println("verdict") }
`)
	write("internal/gate/gate_test.go", `package gate

import gh "github.com/google/go-github/v60/github"

var _ = gh.String
`)
	write("internal/gate/testdata/ignored.go", `package ignored

import "github.com/sethvargo/go-githubactions"
`)
	pkgs, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, v := range Check(pkgs) {
		if v.Package == "internal/gate" {
			got[v.Rule] = true
		}
	}
	for _, want := range []string{"pure-stays-pure", "net-http-only-at-the-edges", "no-printing", "only-ghclient-calls-github"} {
		if !got[want] {
			t.Errorf("want a %s violation in the planted internal/gate, got %v", want, got)
		}
	}
	if got["only-action-imports-githubactions"] {
		t.Errorf("testdata was read: %v", got)
	}
}

// TestDocsMatchCode: the docs name what the code has — every package of the
// role table in docs/architecture.md, and every kind and rule of a family
// in that family's page under docs/contracts/.
func TestDocsMatchCode(t *testing.T) {
	root := moduleRoot(t)
	read := func(rel string) string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatalf("reading %s: %v", rel, err)
		}
		return string(data)
	}
	arch := read("docs/architecture.md")
	for name := range roles {
		if !strings.Contains(arch, "`"+name+"`") {
			t.Errorf("docs/architecture.md does not describe package `%s`", name)
		}
	}
	for _, doc := range []string{"CONTRIBUTING.md", "docs/contracts/README.md"} {
		read(doc)
	}
	pages := map[string]string{"pace": "pace.md", "jg": "jg.md", "scc": "scc.md", "autopilot": "autopilot.md", "outcome": "outcome.md"}
	index := read("docs/contracts/README.md")
	for _, fam := range artifact.Families() {
		page, ok := pages[fam.ID]
		if !ok {
			t.Errorf("family %s has no page under docs/contracts/: add one and list it here", fam.ID)
			continue
		}
		if !strings.Contains(index, "("+page+")") {
			t.Errorf("docs/contracts/README.md does not link %s", page)
		}
		text := read("docs/contracts/" + page)
		for _, k := range fam.Kinds {
			if !strings.Contains(text, "`"+k.ID+"`") {
				t.Errorf("docs/contracts/%s does not describe kind `%s`", page, k.ID)
			}
		}
		for _, r := range check.Rules() {
			if strings.HasPrefix(r.ID, fam.ID+".") && !strings.Contains(text, "`"+r.ID+"`") {
				t.Errorf("docs/contracts/%s does not list rule `%s`", page, r.ID)
			}
		}
	}
	convs, err := check.Conventions()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range convs {
		fam, _, _ := strings.Cut(c.Schema, "/")
		if page, ok := pages[fam]; ok && !strings.Contains(read("docs/contracts/"+page), c.Schema) {
			t.Errorf("docs/contracts/%s does not name the convention-tier schema %s (field %s)", page, c.Schema, c.Field)
		}
	}
}
