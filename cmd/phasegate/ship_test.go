package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// repoRoot is the repository, from this package's directory.
var repoRoot = filepath.Join("..", "..")

// workflow is the part of a GitHub Actions workflow that GitHub needs to
// load it at all.
type workflow struct {
	Name string                 `yaml:"name"`
	On   yaml.Node              `yaml:"on"`
	Jobs map[string]workflowJob `yaml:"jobs"`
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

// TestShippedWorkflowsLoad loads every workflow the repository ships, and
// every workflow in the README, as GitHub would: a workflow that is not
// valid YAML is never run, silently.
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
	readme := readmeYAML(t)
	workflows := 0
	for _, b := range readme {
		if !b.workflow {
			continue
		}
		workflows++
		t.Run(fmt.Sprintf("README.md:%d", b.line), func(t *testing.T) {
			if err := checkWorkflow([]byte(b.text)); err != nil {
				t.Errorf("README.md:%d: workflow snippet: %v", b.line, err)
			}
		})
	}
	if workflows == 0 {
		t.Error("the README has no workflow snippet: the extraction is broken")
	}
}

// TestShippedYAMLLoads: every other YAML file GitHub, GoReleaser or
// pre-commit reads, and every YAML block of the README, is valid YAML.
func TestShippedYAMLLoads(t *testing.T) {
	for _, name := range []string{"action.yml", ".goreleaser.yaml", ".pre-commit-hooks.yaml"} {
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
	for _, b := range readmeYAML(t) {
		t.Run(fmt.Sprintf("README.md:%d", b.line), func(t *testing.T) {
			var v any
			if err := yaml.Unmarshal([]byte(b.text), &v); err != nil {
				t.Errorf("README.md:%d: %v", b.line, err)
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

// yamlBlock is a fenced ```yaml block of the README.
type yamlBlock struct {
	line     int // of the block's first line
	text     string
	workflow bool // it has top-level on: and jobs:
}

var (
	onKey   = regexp.MustCompile(`(?m)^on:`)
	jobsKey = regexp.MustCompile(`(?m)^jobs:`)
)

func readmeYAML(t *testing.T) []yamlBlock {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []yamlBlock
	var cur *yamlBlock
	indent := ""
	for i, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case cur == nil && (trimmed == "```yaml" || trimmed == "```yml"):
			indent = line[:len(line)-len(trimmed)]
			cur = &yamlBlock{line: i + 2}
		case cur != nil && trimmed == "```":
			cur.workflow = onKey.MatchString(cur.text) && jobsKey.MatchString(cur.text)
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += strings.TrimPrefix(line, indent) + "\n"
		}
	}
	if cur != nil {
		t.Fatalf("README.md:%d: unterminated ```yaml block", cur.line-1)
	}
	if len(blocks) == 0 {
		t.Fatal("README.md has no ```yaml block")
	}
	return blocks
}
