package server

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestAppManifest keeps deploy/github-app-manifest.json least-privilege and
// in step with the events the server acts on.
func TestAppManifest(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "github-app-manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Name           string            `json:"name"`
		Public         bool              `json:"public"`
		HookAttributes map[string]any    `json:"hook_attributes"`
		Permissions    map[string]string `json:"default_permissions"`
		Events         []string          `json:"default_events"`
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	want := map[string]string{
		// The App's own check runs: phasegate/contracts, phasegate/decisions
		// and the phasegate/ledger anchors (--publish checks, the default;
		// statuses: write is added by hand for --publish statuses|both).
		"checks": "write",
		// Outcome, resolution and reply comments and labels, on issues and
		// pull requests alike (the issues API).
		"issues": "write", "pull_requests": "read",
		// contents: write only for repository_dispatch (the resumed
		// pipeline); phasegate never writes a file. It reads the tree and
		// blobs of the commits it checks.
		"contents": "write", "metadata": "read", "members": "read",
		// merge_group deliveries need read access to merge queues.
		"merge_queues": "read",
		// A custom deployment protection rule answers its requests
		// (deployments: write) and finds the ones still waiting after a
		// restart (actions: read: the waiting runs).
		"deployments": "write", "actions": "read",
	}
	if len(m.Permissions) != len(want) {
		t.Errorf("permissions %v, want exactly %v", m.Permissions, want)
	}
	for k, v := range want {
		if m.Permissions[k] != v {
			t.Errorf("permission %s = %q, want %q", k, m.Permissions[k], v)
		}
	}
	if m.Public {
		t.Error("the manifest makes the App public")
	}
	if u, _ := m.HookAttributes["url"].(string); !strings.HasSuffix(u, "/webhook") {
		t.Errorf("hook url %q does not end in /webhook, the server's path", u)
	}
	// installation and installation_repositories are sent to every App
	// without subscribing; ping needs none either.
	var acted []string
	for e := range handledEvents {
		// status matters only with --publish statuses|both, which needs
		// statuses: write (and the event) added by hand.
		if e != "installation" && e != "installation_repositories" && e != "ping" && e != "status" {
			acted = append(acted, e)
		}
	}
	sort.Strings(acted)
	got := slices.Clone(m.Events)
	sort.Strings(got)
	if !slices.Equal(got, acted) {
		t.Errorf("manifest events %v, want the events the server acts on %v", got, acted)
	}
}
