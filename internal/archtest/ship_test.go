package archtest

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/phasegate/phasegate/internal/config"
)

// repoRoot is the repository, from this package's directory.
var repoRoot = filepath.Join("..", "..")

// workflow is the part of a GitHub Actions workflow that GitHub needs to
// load it at all.
type workflow struct {
	Name        string                 `yaml:"name"`
	On          yaml.Node              `yaml:"on"`
	Permissions yaml.Node              `yaml:"permissions"`
	Jobs        map[string]workflowJob `yaml:"jobs"`
}

type workflowJob struct {
	RunsOn any            `yaml:"runs-on"`
	Uses   string         `yaml:"uses"` // a reusable workflow
	Steps  []workflowStep `yaml:"steps"`
}

type workflowStep struct {
	Uses string `yaml:"uses"`
	Run  string `yaml:"run"`
}

// checkWorkflow loads data as GitHub does and checks that it is a workflow:
// valid YAML (one document, no duplicate keys), a trigger, jobs that run
// somewhere and steps that each use an action or run a command.
func checkWorkflow(data []byte) error {
	var w workflow
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&w); err != nil {
		return fmt.Errorf("not valid YAML: %w", err)
	}
	if w.On.Kind == 0 {
		return fmt.Errorf("no trigger (on:)")
	}
	if len(w.Jobs) == 0 {
		return fmt.Errorf("no jobs")
	}
	for name, j := range w.Jobs {
		if j.Uses != "" {
			continue
		}
		if j.RunsOn == nil {
			return fmt.Errorf("job %s: no runs-on", name)
		}
		if len(j.Steps) == 0 {
			return fmt.Errorf("job %s: no steps", name)
		}
		for i, s := range j.Steps {
			if (s.Uses == "") == (s.Run == "") {
				return fmt.Errorf("job %s, step %d: needs exactly one of uses and run", name, i+1)
			}
		}
	}
	return nil
}

// TestCheckWorkflowCatchesBrokenYAML: the check fails on the release
// workflow that GitHub never loaded (a plain scalar holding ": ").
func TestCheckWorkflowCatchesBrokenYAML(t *testing.T) {
	tests := []struct {
		name, yaml, wantErr string
	}{
		{name: "plain scalar with colon-space", wantErr: "line 7: mapping values are not allowed",
			yaml: "on:\n  push:\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: grep -q \"image: docker://x:${GITHUB_REF_NAME}$\" action.yml\n"},
		{name: "duplicate key", wantErr: "already defined",
			yaml: "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo\n"},
		{name: "no trigger", wantErr: "no trigger", yaml: "jobs:\n  a:\n    runs-on: x\n    steps:\n      - run: echo\n"},
		{name: "no jobs", wantErr: "no jobs", yaml: "on: push\n"},
		{name: "step with both", wantErr: "exactly one of uses and run",
			yaml: "on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: echo\n        uses: actions/checkout@v4\n"},
		{name: "valid", yaml: "on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: 'echo \"image: x\"'\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkWorkflow([]byte(tc.yaml))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestCheckCompleteWorkflow: the README's snippets as they were fail (the
// code-scanning one had no on:, the first one no name).
func TestCheckCompleteWorkflow(t *testing.T) {
	const steps = "jobs:\n  gate:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: phasegate/phasegate@v1\n"
	tests := []struct {
		name, yaml, wantErr string
	}{
		{name: "complete", yaml: "name: phasegate\non: push\npermissions:\n  contents: read\n" + steps},
		{name: "code-scanning snippet without on", yaml: "permissions:\n  security-events: write\n" + steps, wantErr: "no trigger"},
		{name: "workflow snippet without a name", yaml: "on: push\npermissions:\n  contents: read\n" + steps, wantErr: "no name"},
		{name: "no permissions", yaml: "name: phasegate\non: push\n" + steps, wantErr: "no permissions"},
		{name: "a job fragment", yaml: "gate:\n  runs-on: ubuntu-latest\n", wantErr: "no trigger"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkCompleteWorkflow([]byte(tc.yaml))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestShippedWorkflowsLoad loads every workflow the repository ships, and
// every workflow of the docs, as GitHub would: a workflow that is not
// valid YAML is never run, silently. A workflow of the docs is one a user
// copies as it is, so it must be complete (checkCompleteWorkflow).
func TestShippedWorkflowsLoad(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, ".github", "workflows", "*"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if ext := filepath.Ext(f); ext != ".yml" && ext != ".yaml" {
			t.Errorf("%s: GitHub only runs .yml and .yaml workflows", f)
			continue
		}
		n++
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkWorkflow(data); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		})
	}
	if n < 4 {
		t.Errorf("found %d workflows under .github/workflows, want the 4 or more the repository ships", n)
	}
	workflows := 0
	for _, b := range docYAML(t) {
		if b.kind != "" {
			continue
		}
		workflows++
		t.Run(b.where(), func(t *testing.T) {
			if err := checkCompleteWorkflow([]byte(b.text)); err != nil {
				t.Errorf("%s: %v (a ```yaml block of the docs is a complete workflow unless marked <!-- snippet: KIND -->)", b.where(), err)
			}
		})
	}
	if workflows == 0 {
		t.Error("the docs have no workflow: the extraction is broken")
	}
}

// checkCompleteWorkflow is checkWorkflow for a workflow a user copies as
// it is: it also has a name (what other workflows' workflow_run triggers
// match) and says which permissions it needs.
func checkCompleteWorkflow(data []byte) error {
	if err := checkWorkflow(data); err != nil {
		return err
	}
	var w workflow
	if err := yaml.Unmarshal(data, &w); err != nil {
		return err
	}
	if w.Name == "" {
		return fmt.Errorf("no name: (a workflow_run trigger matches workflows by name)")
	}
	if w.Permissions.Kind == 0 {
		return fmt.Errorf("no permissions: (the token would get the repository's defaults)")
	}
	return nil
}

// TestShippedYAMLLoads: every other YAML file GitHub, GoReleaser or
// pre-commit reads, and every YAML block of the docs, is valid YAML.
func TestShippedYAMLLoads(t *testing.T) {
	forms, err := filepath.Glob(filepath.Join(repoRoot, ".github", "ISSUE_TEMPLATE", "*.yml"))
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"action.yml", ".goreleaser.yaml", ".pre-commit-hooks.yaml"}
	for _, f := range forms {
		rel, _ := filepath.Rel(repoRoot, f)
		names = append(names, rel)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(repoRoot, name))
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := yaml.Unmarshal(data, &v); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		})
	}
	for _, b := range docYAML(t) {
		t.Run(b.where(), func(t *testing.T) {
			var v any
			if err := yaml.Unmarshal([]byte(b.text), &v); err != nil {
				t.Errorf("%s: %v", b.where(), err)
			}
		})
	}
}

// TestDocSnippetKinds checks each marked block as what its marker says it
// is: a config through phasegate's own loader (no problem at all), a
// pre-commit config against the hooks this repository defines.
func TestDocSnippetKinds(t *testing.T) {
	hooks := preCommitHooks(t)
	seen := map[string]int{}
	for _, b := range docYAML(t) {
		if b.kind == "" {
			continue
		}
		seen[b.kind]++
		t.Run(b.where(), func(t *testing.T) {
			var err error
			switch b.kind {
			case "config":
				err = checkConfigSnippet([]byte(b.text))
			case "pre-commit":
				err = checkPreCommitSnippet([]byte(b.text), hooks)
			}
			if err != nil {
				t.Errorf("%s: %s snippet: %v", b.where(), b.kind, err)
			}
		})
	}
	if seen["config"] == 0 {
		t.Error("no config snippet in the docs: the README documents .github/phasegate.yml with one")
	}
}

// checkConfigSnippet: .github/phasegate.yml (or a part of it) as
// config.Parse reads it, with no problem.
func checkConfigSnippet(data []byte) error {
	_, probs := config.Parse(data)
	if len(probs) > 0 {
		return fmt.Errorf("config.Parse: %v", probs)
	}
	return nil
}

// checkPreCommitSnippet: a .pre-commit-config.yaml whose phasegate repo
// names hooks that .pre-commit-hooks.yaml defines.
func checkPreCommitSnippet(data []byte, hooks []string) error {
	var c struct {
		Repos []struct {
			Repo  string
			Rev   string
			Hooks []struct{ ID string }
		}
	}
	if err := yaml.Unmarshal(data, &c); err != nil {
		return err
	}
	found := false
	for _, r := range c.Repos {
		if r.Repo != "https://github.com/phasegate/phasegate" {
			continue
		}
		found = true
		if r.Rev == "" || len(r.Hooks) == 0 {
			return fmt.Errorf("repo %s: no rev or no hooks", r.Repo)
		}
		for _, h := range r.Hooks {
			if !slices.Contains(hooks, h.ID) {
				return fmt.Errorf("hook %q is not defined in .pre-commit-hooks.yaml (%v)", h.ID, hooks)
			}
		}
	}
	if !found {
		return fmt.Errorf("no repo https://github.com/phasegate/phasegate")
	}
	return nil
}

func preCommitHooks(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, ".pre-commit-hooks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var hooks []struct{ ID string }
	if err := yaml.Unmarshal(data, &hooks); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range hooks {
		ids = append(ids, h.ID)
	}
	return ids
}

// TestWorkflowRunNamesADefinedWorkflow: a workflow_run trigger matches
// workflows by name. A publisher whose trigger names a workflow that is
// not there (or no longer has that name) never runs, and says nothing; so
// every workflow_run of the docs names a workflow of the docs, and every
// one of .github/workflows a workflow there.
func TestWorkflowRunNamesADefinedWorkflow(t *testing.T) {
	var docs []named
	for _, b := range docYAML(t) {
		if b.kind == "" {
			docs = append(docs, named{where: b.where(), data: []byte(b.text)})
		}
	}
	files, err := filepath.Glob(filepath.Join(repoRoot, ".github", "workflows", "*.y*ml"))
	if err != nil {
		t.Fatal(err)
	}
	var shipped []named
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		shipped = append(shipped, named{where: filepath.Base(f), data: data})
	}
	for set, ws := range map[string][]named{"the docs": docs, ".github/workflows": shipped} {
		for _, p := range undefinedWorkflowRuns(ws) {
			t.Errorf("%s: %s", set, p)
		}
	}
}

// named is a workflow's text and where it is.
type named struct {
	where string
	data  []byte
}

// undefinedWorkflowRuns lists the workflow_run triggers of ws that name no
// workflow of ws.
func undefinedWorkflowRuns(ws []named) []string {
	names := map[string]bool{}
	triggers := map[string][]string{}
	for _, w := range ws {
		var wf workflow
		if yaml.Unmarshal(w.data, &wf) != nil {
			continue // TestShippedWorkflowsLoad reports it
		}
		if wf.Name != "" {
			names[wf.Name] = true
		}
		var on struct {
			WorkflowRun struct {
				Workflows []string `yaml:"workflows"`
			} `yaml:"workflow_run"`
		}
		if wf.On.Kind == yaml.MappingNode && wf.On.Decode(&on) == nil {
			triggers[w.where] = on.WorkflowRun.Workflows
		}
	}
	var out []string
	for _, w := range ws {
		for _, name := range triggers[w.where] {
			if !names[name] {
				out = append(out, fmt.Sprintf("%s: workflow_run names workflow %q, which none defines (name: %s)", w.where, name, name))
			}
		}
	}
	return out
}

func TestUndefinedWorkflowRunsCatches(t *testing.T) {
	const publisher = "name: publish\non:\n  workflow_run:\n    workflows: [phasegate]\n    types: [completed]\njobs: {}\n"
	tests := []struct {
		name string
		ws   []string
		want string
	}{
		{name: "defined", ws: []string{"name: phasegate\non: push\n", publisher}},
		{name: "the README's snippet before it had a name", ws: []string{"on: push\njobs: {}\n", publisher}, want: `names workflow "phasegate"`},
		{name: "renamed", ws: []string{"name: gate\non: push\n", publisher}, want: `names workflow "phasegate"`},
		{name: "file name is not the name", ws: []string{"name: Phasegate checks\non: [push]\n", publisher}, want: `names workflow "phasegate"`},
		{name: "no workflow_run", ws: []string{"name: a\non: [push, pull_request]\n", "name: b\non: push\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ws []named
			for i, w := range tc.ws {
				ws = append(ws, named{where: fmt.Sprint("w", i), data: []byte(w)})
			}
			got := strings.Join(undefinedWorkflowRuns(ws), "; ")
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("undefinedWorkflowRuns = %q, want %q", got, tc.want)
			}
		})
	}
}

// digestPin is an image pinned by digest; versionPin by a version tag.
var (
	digestPin  = regexp.MustCompile(`^docker://ghcr\.io/[a-z0-9._/-]+@sha256:[0-9a-f]{64}$`)
	versionPin = regexp.MustCompile(`^docker://ghcr\.io/[a-z0-9._/-]+:v\d+\.\d+\.\d+$`)
)

// TestActionImagePinned: action.yml runs a prebuilt image, pinned by digest
// (what the release writes on the commit the major tag points at) or by the
// version tag of the release being cut (what the tagged commit carries;
// the release workflow checks it matches the tag). Never a moving tag and
// never a Dockerfile (a run would compile Go).
func TestActionImagePinned(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Runs struct {
			Using string   `yaml:"using"`
			Image string   `yaml:"image"`
			Args  []string `yaml:"args"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatal(err)
	}
	if a.Runs.Using != "docker" || len(a.Runs.Args) == 0 || a.Runs.Args[0] != "action" {
		t.Errorf("runs = %+v, want a docker action running `phasegate action`", a.Runs)
	}
	if !digestPin.MatchString(a.Runs.Image) && !versionPin.MatchString(a.Runs.Image) {
		t.Errorf("image %q is pinned neither by digest nor by a version tag", a.Runs.Image)
	}
}

// preCommitHook is a hook of .pre-commit-hooks.yaml, as pre-commit reads it.
type preCommitHook struct {
	ID             string `yaml:"id"`
	Entry          string `yaml:"entry"`
	Language       string `yaml:"language"`
	PassFilenames  *bool  `yaml:"pass_filenames"`
	AlwaysRun      bool   `yaml:"always_run"`
	AdditionalDeps any    `yaml:"additional_dependencies"`
}

// TestPreCommitHooks: the three ways to run the hook, as actionlint offers
// them: built from source with Go, the released image (the very image
// action.yml names, so a release moves both), and the binary on PATH. Each
// runs `phasegate validate` on the whole repository (no file names: the
// checks relate artifacts to each other).
func TestPreCommitHooks(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, ".pre-commit-hooks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var hooks []preCommitHook
	if err := yaml.Unmarshal(data, &hooks); err != nil {
		t.Fatal(err)
	}
	image := strings.TrimPrefix(actionImage(t), "docker://")
	tests := []struct {
		id       string
		language string
		entry    string
	}{
		{id: "phasegate", language: "golang", entry: "phasegate validate"},
		{id: "phasegate-docker", language: "docker_image", entry: image + " validate"},
		{id: "phasegate-system", language: "system", entry: "phasegate validate"},
	}
	if len(hooks) != len(tests) {
		t.Errorf("%d hooks, want %d", len(hooks), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			i := slices.IndexFunc(hooks, func(h preCommitHook) bool { return h.ID == tt.id })
			if i < 0 {
				t.Fatalf("no hook %q in .pre-commit-hooks.yaml", tt.id)
			}
			h := hooks[i]
			if h.Language != tt.language || h.Entry != tt.entry {
				t.Errorf("language %q, entry %q; want %q, %q", h.Language, h.Entry, tt.language, tt.entry)
			}
			if h.PassFilenames == nil || *h.PassFilenames || !h.AlwaysRun {
				t.Errorf("want pass_filenames: false and always_run: true (the whole repository, on every commit)")
			}
			if h.AdditionalDeps != nil {
				t.Errorf("additional_dependencies %v: the hook runs phasegate alone", h.AdditionalDeps)
			}
		})
	}
}

// actionImage is the image action.yml runs (docker://…, without the
// comment the release leaves after a digest).
func actionImage(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Runs struct {
			Image string `yaml:"image"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatal(err)
	}
	if a.Runs.Image == "" {
		t.Fatal("action.yml: no runs.image")
	}
	return a.Runs.Image
}

// yamlBlock is a fenced ```yaml block of a doc.
type yamlBlock struct {
	doc  string
	line int // of the block's first line
	text string
	kind string // the <!-- snippet: KIND --> right before the fence; "" for a workflow
}

func (b yamlBlock) where() string { return fmt.Sprintf("%s:%d", b.doc, b.line) }

// snippetKinds are the kinds a block may be marked as, besides a workflow
// (.ci/doc-workflows knows the same).
var snippetKinds = []string{"config", "pre-commit", "artifact"}

var snippetMarker = regexp.MustCompile(`^\s*<!--\s*snippet:\s*([a-z-]+)\s*-->\s*$`)

// yamlBlocks reads the fenced ```yaml blocks of a Markdown doc as
// .ci/doc-workflows does.
func yamlBlocks(doc, text string) ([]yamlBlock, error) {
	var blocks []yamlBlock
	var cur *yamlBlock
	indent, prev := "", ""
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case cur == nil && (trimmed == "```yaml" || trimmed == "```yml"):
			kind := ""
			if m := snippetMarker.FindStringSubmatch(prev); m != nil {
				kind = m[1]
			} else if strings.HasPrefix(strings.TrimSpace(prev), "<!--") && strings.Contains(prev, "snippet") {
				return nil, fmt.Errorf("%s:%d: malformed marker %q (<!-- snippet: KIND -->)", doc, i, strings.TrimSpace(prev))
			}
			if kind != "" && !slices.Contains(snippetKinds, kind) {
				return nil, fmt.Errorf("%s:%d: unknown snippet kind %q (known: %v)", doc, i, kind, snippetKinds)
			}
			indent = line[:len(line)-len(trimmed)]
			cur = &yamlBlock{doc: doc, line: i + 2, kind: kind}
		case cur != nil && trimmed == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += strings.TrimPrefix(line, indent) + "\n"
		}
		prev = line
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: unterminated ```yaml block", doc, cur.line-1)
	}
	return blocks, nil
}

// docs are the Markdown files whose ```yaml blocks users copy.
func docs(t *testing.T) []string {
	t.Helper()
	paths := []string{"README.md", "CONTRIBUTING.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(repoRoot, p)
			paths = append(paths, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

func docYAML(t *testing.T) []yamlBlock {
	t.Helper()
	var all []yamlBlock
	for _, doc := range docs(t) {
		data, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(doc)))
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := yamlBlocks(doc, string(data))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, blocks...)
	}
	if len(all) == 0 {
		t.Fatal("the docs have no ```yaml block")
	}
	return all
}

func TestYAMLBlocks(t *testing.T) {
	tests := []struct {
		name, md  string
		wantKinds []string
		wantErr   string
	}{
		{name: "unmarked is a workflow", md: "x\n```yaml\non: push\n```\n", wantKinds: []string{""}},
		{name: "marked", md: "<!-- snippet: config -->\n```yaml\nrules: {}\n```\n  <!-- snippet: artifact -->\n  ```yml\n  day: 3\n  ```\n", wantKinds: []string{"config", "artifact"}},
		{name: "marker not right before the fence", md: "<!-- snippet: config -->\n\n```yaml\nrules: {}\n```\n", wantKinds: []string{""}},
		{name: "unknown kind", md: "<!-- snippet: workflow-part -->\n```yaml\njobs: {}\n```\n", wantErr: `unknown snippet kind "workflow-part"`},
		{name: "malformed marker", md: "<!-- snippet config -->\n```yaml\nrules: {}\n```\n", wantErr: "malformed marker"},
		{name: "unterminated", md: "```yaml\non: push\n", wantErr: "unterminated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			blocks, err := yamlBlocks("doc.md", tc.md)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, b := range blocks {
				kinds = append(kinds, b.kind)
			}
			if !slices.Equal(kinds, tc.wantKinds) {
				t.Errorf("kinds %q, want %q", kinds, tc.wantKinds)
			}
		})
	}
}
