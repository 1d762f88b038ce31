package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestActionHelpListsEveryInput: `phasegate action -h` lists every input
// of action.yml, as the runner passes it (INPUT_<NAME>), and no other.
func TestActionHelpListsEveryInput(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Inputs map[string]any `yaml:"inputs"`
	}
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatal(err)
	}
	var want []string
	for name := range a.Inputs {
		want = append(want, "INPUT_"+strings.ToUpper(strings.ReplaceAll(name, " ", "_")))
	}
	sort.Strings(want)
	help := run(t, "action", "-h")
	if help.code != ExitOK {
		t.Fatalf("action -h: exit %d, stderr %q", help.code, help.stderr)
	}
	// Each input is listed on its own line: "  INPUT_NAME  what it does".
	listed := regexp.MustCompile(`(?m)^  (INPUT_[A-Z0-9_-]+) +\S`).FindAllStringSubmatch(help.stdout, -1)
	var got []string
	for _, m := range listed {
		got = append(got, m[1])
	}
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Errorf("action -h lists the inputs\n  %v\naction.yml declares\n  %v\nhelp:\n%s", got, want, help.stdout)
	}
	if extra := regexp.MustCompile(`INPUT_[A-Z0-9_-]+`).FindAllString(help.stdout, -1); len(extra) != len(want) {
		t.Errorf("action -h names %d INPUT_ variables, action.yml declares %d inputs: %v", len(extra), len(want), extra)
	}
}
