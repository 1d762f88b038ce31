package archtest

import (
	"regexp"
	"strings"
	"testing"
)

// The developer's tools are pinned once, in tools/go.mod (a module of its
// own, with `tool` directives), which .ci/run and the release workflow run
// with `go -C tools tool -n NAME`. The product module never depends on them.

// pinnedTools are the tools tools/go.mod pins: the package its `tool`
// directive names, the module and the exact version it requires.
var pinnedTools = []struct{ pkg, module, version string }{
	{pkg: "honnef.co/go/tools/cmd/staticcheck", module: "honnef.co/go/tools", version: "v0.8.2"},
	{pkg: "github.com/rhysd/actionlint/cmd/actionlint", module: "github.com/rhysd/actionlint", version: "v1.7.12"},
	{pkg: "github.com/goreleaser/goreleaser/v2", module: "github.com/goreleaser/goreleaser/v2", version: "v2.15.1"},
	{pkg: "github.com/yannh/kubeconform/cmd/kubeconform", module: "github.com/yannh/kubeconform", version: "v0.7.0"},
	{pkg: "golang.org/x/vuln/cmd/govulncheck", module: "golang.org/x/vuln", version: "v1.9.0"},
	// indexdb writes govulncheck's database from the module's data/osv: the
	// pin is the database's version (CONTRIBUTING.md).
	{pkg: "golang.org/x/vulndb/cmd/indexdb", module: "golang.org/x/vulndb", version: "v0.0.0-20261105234957-e22db6528018"},
}

// goModEntries reads the require (module → version) and tool (package)
// entries of a go.mod, single-line or in blocks.
func goModEntries(text string) (requires map[string]string, tools []string) {
	requires = map[string]string{}
	block := ""
	for _, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "//")
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0:
			continue
		case len(fields) == 2 && fields[1] == "(":
			block = fields[0]
			continue
		case fields[0] == ")":
			block = ""
			continue
		}
		kind := block
		if fields[0] == "require" || fields[0] == "tool" {
			kind, fields = fields[0], fields[1:]
		}
		switch {
		case kind == "require" && len(fields) >= 2:
			requires[fields[0]] = fields[1]
		case kind == "tool" && len(fields) >= 1:
			tools = append(tools, fields[0])
		}
	}
	return requires, tools
}

// checkToolsModule says what is wrong with the tools module (its go.mod's
// text) and the product's go.mod.
func checkToolsModule(tools, product string) []string {
	var probs []string
	if !strings.Contains(tools, "\nmodule github.com/phasegate/phasegate/tools\n") && !strings.HasPrefix(tools, "module github.com/phasegate/phasegate/tools\n") {
		probs = append(probs, "tools/go.mod is not module github.com/phasegate/phasegate/tools")
	}
	requires, toolPkgs := goModEntries(tools)
	productRequires, productTools := goModEntries(product)
	for _, p := range pinnedTools {
		if !strings.Contains(" "+strings.Join(toolPkgs, " ")+" ", " "+p.pkg+" ") {
			probs = append(probs, "tools/go.mod has no tool directive for "+p.pkg)
		}
		if got := requires[p.module]; got != p.version {
			probs = append(probs, "tools/go.mod requires "+p.module+" "+got+", want "+p.version)
		}
		if v, ok := productRequires[p.module]; ok {
			probs = append(probs, "go.mod requires "+p.module+" "+v+": the product module must not depend on the tools")
		}
	}
	if len(productTools) > 0 {
		probs = append(probs, "go.mod has tool directives ("+strings.Join(productTools, ", ")+"): they belong in tools/go.mod")
	}
	return probs
}

func TestToolsModule(t *testing.T) {
	for _, p := range checkToolsModule(readRoot(t, "tools/go.mod"), readRoot(t, "go.mod")) {
		t.Error(p)
	}
}

func TestCheckToolsModuleCatches(t *testing.T) {
	good := `module github.com/phasegate/phasegate/tools

go 1.26.1

tool (
	github.com/goreleaser/goreleaser/v2
	github.com/rhysd/actionlint/cmd/actionlint
	github.com/yannh/kubeconform/cmd/kubeconform
	honnef.co/go/tools/cmd/staticcheck
	golang.org/x/vuln/cmd/govulncheck
	golang.org/x/vulndb/cmd/indexdb
)

require (
	github.com/goreleaser/goreleaser/v2 v2.15.1 // indirect
	github.com/rhysd/actionlint v1.7.12 // indirect
	github.com/yannh/kubeconform v0.7.0 // indirect
	golang.org/x/vuln v1.9.0 // indirect
	golang.org/x/vulndb v0.0.0-20261105234957-e22db6528018 // indirect
	honnef.co/go/tools v0.8.2 // indirect
)
`
	product := "module github.com/phasegate/phasegate\n\ngo 1.25.0\n\nrequire go.yaml.in/yaml/v3 v3.0.4\n"
	tests := []struct {
		name, tools, product, want string
	}{
		{name: "a tool's directive missing", tools: strings.Replace(good, "\thonnef.co/go/tools/cmd/staticcheck\n", "", 1),
			product: product, want: "no tool directive for honnef.co/go/tools/cmd/staticcheck"},
		{name: "another version", tools: strings.Replace(good, "v1.7.12", "v1.7.11", 1),
			product: product, want: "requires github.com/rhysd/actionlint v1.7.11, want v1.7.12"},
		{name: "another module", tools: strings.Replace(good, "phasegate/tools\n", "phasegate\n", 1),
			product: product, want: "is not module github.com/phasegate/phasegate/tools"},
		{name: "the product requires a tool", tools: good,
			product: product + "require honnef.co/go/tools v0.8.2 // indirect\n", want: "the product module must not depend on the tools"},
		{name: "the product has a tool directive", tools: good,
			product: product + "tool golang.org/x/tools/cmd/stringer\n", want: "they belong in tools/go.mod"},
	}
	if p := checkToolsModule(good, product); len(p) != 0 {
		t.Fatalf("the good module: %v", p)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probs := checkToolsModule(tt.tools, tt.product)
			if len(probs) != 1 || !strings.Contains(probs[0], tt.want) {
				t.Fatalf("problems %q, want one saying %q", probs, tt.want)
			}
		})
	}
}

// goModules are the repository's Go modules: each names the toolchain the
// product is built with, so that a go command in any of them (under the
// default GOTOOLCHAIN=auto) builds with the patched standard library.
var goModules = []string{"go.mod", "bench/go.mod", "bench/peer/go.mod", "e2e/go.mod", "tools/go.mod"}

// checkToolchain says where the Go that builds phasegate is not the one the
// product's go.mod names in its toolchain line: another module's toolchain
// line, or the Dockerfile's builder image (the container action's binary).
// .ci/run sets GOTOOLCHAIN from the same line.
func checkToolchain(goMods map[string]string, dockerfile string) []string {
	line := regexp.MustCompile(`(?m)^toolchain go(\d+\.\d+\.\d+)$`)
	m := line.FindStringSubmatch(goMods["go.mod"])
	if m == nil {
		return []string{"go.mod has no toolchain line naming a release (toolchain goX.Y.Z)"}
	}
	var probs []string
	for _, name := range goModules {
		if got := line.FindStringSubmatch(goMods[name]); got == nil || got[1] != m[1] {
			probs = append(probs, name+" does not say toolchain go"+m[1]+" as go.mod does")
		}
	}
	if !strings.Contains(dockerfile, "\nFROM golang:"+m[1]+"-") {
		probs = append(probs, "Dockerfile's builder is not golang:"+m[1]+"-…, go.mod's toolchain")
	}
	return probs
}

func TestToolchainAgrees(t *testing.T) {
	mods := map[string]string{}
	for _, name := range goModules {
		mods[name] = readRoot(t, name)
	}
	for _, p := range checkToolchain(mods, readRoot(t, "Dockerfile")) {
		t.Error(p)
	}
}

func TestCheckToolchainCatches(t *testing.T) {
	mod := "module m\n\ngo 1.26.0\n\ntoolchain go1.27.3\n"
	good := map[string]string{}
	for _, name := range goModules {
		good[name] = mod
	}
	docker := "# builder\nFROM golang:1.27.3-bookworm AS build\n"
	with := func(name, text string) map[string]string {
		mods := map[string]string{}
		for k, v := range good {
			mods[k] = v
		}
		mods[name] = text
		return mods
	}
	tests := []struct {
		name       string
		mods       map[string]string
		dockerfile string
		want       string
	}{
		{name: "no toolchain line", mods: with("go.mod", "module m\n\ngo 1.26.0\n"), dockerfile: docker, want: "go.mod has no toolchain line"},
		{name: "another module's toolchain", mods: with("e2e/go.mod", strings.Replace(mod, "1.27.3", "1.27.2", 1)), dockerfile: docker, want: "e2e/go.mod does not say toolchain go1.27.3"},
		{name: "a module without one", mods: with("tools/go.mod", "module m\n\ngo 1.26.1\n"), dockerfile: docker, want: "tools/go.mod does not say"},
		{name: "the builder image", mods: good, dockerfile: "FROM golang:1.25-bookworm AS build\n", want: "Dockerfile's builder is not golang:1.27.3-"},
	}
	if p := checkToolchain(good, docker); len(p) != 0 {
		t.Fatalf("the good files: %v", p)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probs := checkToolchain(tt.mods, tt.dockerfile)
			if len(probs) != 1 || !strings.Contains(probs[0], tt.want) {
				t.Fatalf("problems %q, want one saying %q", probs, tt.want)
			}
		})
	}
}
