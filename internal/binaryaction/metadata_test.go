// Package binaryaction tests the binary action, binary/action.yml: the
// composite action that runs phasegate's release binary on any runner
// (macOS, Windows, self-hosted without Docker) instead of the container
// image. It has no code of its own: its tests keep the action in step with
// the container action (action.yml), with the archives GoReleaser makes
// (.goreleaser.yaml) and with the release workflow, and run its script,
// binary/run.sh, end to end against a local release server (integration
// tests, -tags integration: run_test.go).
package binaryaction

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/testutil"
	"go.yaml.in/yaml/v3"
)

// root is the repository root, relative to this package's directory.
var root = filepath.Join("..", "..")

type actionInput struct {
	Description string `yaml:"description"`
	Required    bool   `yaml:"required"`
	Default     string `yaml:"default"`
}

type actionOutput struct {
	Description string `yaml:"description"`
	Value       string `yaml:"value"`
}

type actionMeta struct {
	Name    string                  `yaml:"name"`
	Inputs  map[string]actionInput  `yaml:"inputs"`
	Outputs map[string]actionOutput `yaml:"outputs"`
	Runs    struct {
		Using string `yaml:"using"`
		Image string `yaml:"image"`
		Steps []struct {
			ID    string            `yaml:"id"`
			Shell string            `yaml:"shell"`
			Env   map[string]string `yaml:"env"`
			Run   string            `yaml:"run"`
			Uses  string            `yaml:"uses"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

func readFile(t *testing.T, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func readAction(t *testing.T, rel string) actionMeta {
	t.Helper()
	var a actionMeta
	if err := yaml.Unmarshal(readFile(t, rel), &a); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return a
}

// extraInputs are the binary action's inputs the container action has not:
// they choose the binary, and phasegate never reads them.
var extraInputs = []string{"version", "release-url"}

// inputEnv is the variable of the binary action's step that carries an
// input to run.sh: INPUT_<NAME>, upper-cased, with '_' for '-'.
func inputEnv(name string) string {
	return "INPUT_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// TestSameInputsAndOutputs: the binary action declares every input of the
// container action, word for word, plus version and release-url, and every
// output, each the value its one step sets.
func TestSameInputsAndOutputs(t *testing.T) {
	container := readAction(t, "action.yml")
	binary := readAction(t, "binary/action.yml")
	if len(container.Inputs) == 0 || len(container.Outputs) == 0 {
		t.Fatalf("action.yml has %d inputs and %d outputs: the comparison would pass on nothing", len(container.Inputs), len(container.Outputs))
	}
	for name, in := range container.Inputs {
		got, ok := binary.Inputs[name]
		switch {
		case !ok:
			t.Errorf("binary/action.yml lacks the input %s of action.yml", name)
		case got != in:
			t.Errorf("binary/action.yml's input %s = %+v, action.yml's = %+v: keep them the same", name, got, in)
		}
	}
	for name := range binary.Inputs {
		if _, ok := container.Inputs[name]; !ok && !slices.Contains(extraInputs, name) {
			t.Errorf("binary/action.yml has the input %s, which action.yml has not", name)
		}
	}
	for _, name := range extraInputs {
		if in, ok := binary.Inputs[name]; !ok || in.Required {
			t.Errorf("binary/action.yml's input %s = %+v (declared %v), want an optional input", name, in, ok)
		}
	}
	for name, out := range container.Outputs {
		got, ok := binary.Outputs[name]
		if want := "${{ steps.phasegate.outputs." + name + " }}"; !ok || got.Description != out.Description || got.Value != want {
			t.Errorf("binary/action.yml's output %s = %+v (declared %v), want %q with value %q", name, got, ok, out.Description, want)
		}
	}
	for name := range binary.Outputs {
		if _, ok := container.Outputs[name]; !ok {
			t.Errorf("binary/action.yml has the output %s, which action.yml has not", name)
		}
	}
}

// TestStepMapsEveryInput: the binary action is one bash step, id
// phasegate, that runs `run.sh action` with every input in its env, and
// run.sh passes on every input of the container action, as phasegate reads
// them.
func TestStepMapsEveryInput(t *testing.T) {
	container := readAction(t, "action.yml")
	binary := readAction(t, "binary/action.yml")
	if binary.Runs.Using != "composite" || len(binary.Runs.Steps) != 1 {
		t.Fatalf("binary/action.yml runs %q with %d steps, want composite with one step", binary.Runs.Using, len(binary.Runs.Steps))
	}
	step := binary.Runs.Steps[0]
	if step.ID != "phasegate" || step.Shell != "bash" || step.Run != `bash "$GITHUB_ACTION_PATH/run.sh" action` {
		t.Errorf("binary/action.yml's step: id %q, shell %q, run %q; want id phasegate, shell bash, run.sh action", step.ID, step.Shell, step.Run)
	}
	want := map[string]string{
		"PHASEGATE_VERSION":     "${{ inputs.version }}",
		"PHASEGATE_RELEASE_URL": "${{ inputs.release-url }}",
		// In env, not in run: in a composite action's run it is empty.
		"PHASEGATE_ACTION_REF": "${{ github.action_ref }}",
	}
	for name := range container.Inputs {
		want[inputEnv(name)] = "${{ inputs." + name + " }}"
	}
	for k, v := range want {
		if step.Env[k] != v {
			t.Errorf("binary/action.yml's step sets %s to %q, want %q", k, step.Env[k], v)
		}
	}
	for k := range step.Env {
		if _, ok := want[k]; !ok {
			t.Errorf("binary/action.yml's step sets %s, which no input needs", k)
		}
	}

	m := regexp.MustCompile(`(?m)^inputs=\(([^)]*)\)$`).FindSubmatch(readFile(t, "binary/run.sh"))
	if m == nil {
		t.Fatal("binary/run.sh has no line inputs=(…)")
	}
	listed := strings.Fields(string(m[1]))
	var names []string
	for name := range container.Inputs {
		names = append(names, name)
	}
	slices.Sort(listed)
	slices.Sort(names)
	if !slices.Equal(listed, names) {
		t.Errorf("binary/run.sh passes on the inputs %v, action.yml declares %v", listed, names)
	}
}

// TestVersionPinnedByTheRelease: the version input defaults to "" (the
// tag the action is used at) on a line the release workflow rewrites in the
// commit the major tag points at, and the release workflow does.
func TestVersionPinnedByTheRelease(t *testing.T) {
	const line = `    default: "" # release`
	action := string(readFile(t, "binary/action.yml"))
	if strings.Count(action, "\n"+line+"\n") != 1 || !strings.Contains(action, "  version:\n") {
		t.Errorf("binary/action.yml must have one line %q, the version input's default, for the release workflow to rewrite", line)
	}
	if in := readAction(t, "binary/action.yml").Inputs["version"]; in.Default != "" {
		t.Errorf("binary/action.yml's version defaults to %q on main, want \"\" (the tag the action is used at)", in.Default)
	}
	release := string(readFile(t, ".github/workflows/release.yml"))
	if !strings.Contains(release, `s|^    default: \"\" # release$|`) || !strings.Contains(release, "binary/action.yml") {
		t.Error("release.yml does not pin binary/action.yml's version in the major tag's commit")
	}
}

// TestDocsDocumentIt: docs/action.md says how to use the binary action and
// documents its two inputs of its own; the README names it and links there.
func TestDocsDocumentIt(t *testing.T) {
	want := map[string][]string{
		"docs/action.md": {"\n## Every runner: the binary action\n", "uses: phasegate/phasegate/binary@v0"},
		"README.md":      {"uses: phasegate/phasegate/binary@v0", "(docs/action.md#every-runner-the-binary-action)"},
	}
	for _, in := range extraInputs {
		want["docs/action.md"] = append(want["docs/action.md"], "`"+in+"`")
	}
	for doc, ws := range want {
		text := string(readFile(t, doc))
		for _, w := range ws {
			if !strings.Contains(text, w) {
				t.Errorf("%s does not say %q", doc, w)
			}
		}
	}
}

// TestActionlint: actionlint reads binary/action.yml as the metadata of a
// local action (runs.using, inputs and outputs; it does not lint a
// composite action's steps, and shellcheck checks run.sh in .ci/run) and
// accepts a workflow that uses it with every input.
func TestActionlint(t *testing.T) {
	actionlint, err := exec.LookPath("actionlint")
	if err != nil {
		t.Skip("actionlint is not installed (.ci/run installs it)")
	}
	dir := t.TempDir()
	binary := readAction(t, "binary/action.yml")
	var with []string
	for name := range binary.Inputs {
		with = append(with, "          "+name+": x")
	}
	slices.Sort(with)
	files := map[string]string{
		".github/workflows/gate.yml": "on: push\njobs:\n  gate:\n    runs-on: macos-latest\n    steps:\n" +
			"      - uses: ./binary\n        id: phasegate\n        with:\n" + strings.Join(with, "\n") + "\n" +
			"      - run: echo \"$VERDICT\"\n        env:\n          VERDICT: ${{ steps.phasegate.outputs.verdict }}\n",
		"binary/action.yml": string(readFile(t, "binary/action.yml")),
	}
	testutil.WriteTree(t, dir, files)
	// actionlint resolves ./binary from the project root: the directory with .git.
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(actionlint, "-no-color", filepath.Join(".github", "workflows", "gate.yml"))
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("actionlint: %v\n%s", err, out)
	}
}
