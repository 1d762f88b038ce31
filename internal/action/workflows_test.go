package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The example workflows are part of what makes the gate right on every
// path to the default branch: the merge queue, forks. These tests keep
// them in step with what the action handles.

type workflow struct {
	On          map[string]any    `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Jobs        map[string]struct {
		Steps []struct {
			Uses string            `yaml:"uses"`
			With map[string]string `yaml:"with"`
			If   string            `yaml:"if"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

func readWorkflow(t *testing.T, name string) workflow {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", ".github", "workflows", name))
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(data, &w); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return w
}

func TestExampleWorkflows(t *testing.T) {
	t.Parallel()
	gate := readWorkflow(t, "phasegate.yml")
	for _, ev := range []string{"push", "pull_request", "merge_group"} {
		if _, ok := gate.On[ev]; !ok {
			t.Errorf("phasegate.yml does not run on %s", ev)
		}
	}
	saved, uploaded := false, false
	for _, s := range gate.Jobs["gate"].Steps {
		if strings.HasPrefix(s.Uses, "phasegate/phasegate@") && s.With["results-file"] != "" {
			saved = true
		}
		if strings.HasPrefix(s.Uses, "actions/upload-artifact@") && s.With["name"] == "phasegate-results" && strings.Contains(s.If, "always()") {
			uploaded = true
		}
	}
	if !saved || !uploaded {
		t.Errorf("phasegate.yml saves results %v, uploads them always %v; want both", saved, uploaded)
	}

	publish := readWorkflow(t, "phasegate-publish.yml")
	if _, ok := publish.On["workflow_run"]; !ok || len(publish.On) != 1 {
		t.Errorf("phasegate-publish.yml runs on %v, want workflow_run only", publish.On)
	}
	for perm, level := range publish.Permissions {
		if level == "write" && perm != "statuses" {
			t.Errorf("phasegate-publish.yml may write %s: it publishes statuses only", perm)
		}
	}
	downloaded, published, checkedOut := false, false, false
	for _, s := range publish.Jobs["publish"].Steps {
		switch {
		case strings.HasPrefix(s.Uses, "actions/checkout@"):
			// The head is checked out to be read (phasegate checks it
			// itself), never run, and without the token in .git/config.
			checkedOut = s.With["persist-credentials"] == "false" && strings.Contains(s.With["ref"], "workflow_run.head_sha")
			if !checkedOut {
				t.Errorf("phasegate-publish.yml checks out %v: want the workflow_run's head_sha with persist-credentials: false", s.With)
			}
		case strings.HasPrefix(s.Uses, "actions/download-artifact@"):
			downloaded = s.With["name"] == "phasegate-results" && strings.Contains(s.With["run-id"], "github.event.workflow_run.id")
		case strings.HasPrefix(s.Uses, "phasegate/phasegate@"):
			published = strings.HasPrefix(s.With["results-file"], "phasegate-results/")
		}
	}
	if !downloaded || !published || !checkedOut {
		t.Errorf("phasegate-publish.yml downloads the run's artifact %v, publishes it %v, checks out the head %v; want all", downloaded, published, checkedOut)
	}
}

// TestActionYAMLDeclaresEveryInput: every input the action reads is in
// action.yml, and every output it sets.
func TestActionYAMLDeclaresEveryInput(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Inputs  map[string]any `yaml:"inputs"`
		Outputs map[string]any `yaml:"outputs"`
	}
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"path", "token", "format", "post-outcomes", "fail-on", "config", "results-file"} {
		if _, ok := a.Inputs[in]; !ok {
			t.Errorf("action.yml lacks input %s", in)
		}
	}
	for _, out := range []string{"verdict", "errors", "warnings", "outcomes-posted", "results-file", "resolutions"} {
		if _, ok := a.Outputs[out]; !ok {
			t.Errorf("action.yml lacks output %s", out)
		}
	}
}
