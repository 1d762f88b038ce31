package server

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// withField is body (a JSON object) with key set to v.
func withField(t *testing.T, body []byte, key string, v any) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	m[key] = v
	return mustJSON(m)
}

// TestClassifyRefusesForeignPayloadText: what a signed payload names goes
// into API paths and job keys, so a repository name outside GitHub's
// characters, a sha that is not hex, and a commit event's body carrying
// another event's pull request are refused as malformed (400), never
// queued.
func TestClassifyRefusesForeignPayloadText(t *testing.T) {
	t.Parallel()
	notHex := strings.Repeat("g", 40)
	tests := []struct {
		name, event string
		body        []byte
	}{
		{"push with a 40-character sha that is not hex", "push", pushEvent("refs/heads/x", sha1st, notHex, false)},
		{"check suite with a head that is not hex", "check_suite", checkSuiteEvent("requested", notHex, "feature", sha1st)},
		{"push to a repository whose owner has a slash", "push",
			withField(t, pushEvent("refs/heads/x", sha1st, sha2nd, false), "repository", repoJSON("ac/me", repo))},
		{"push to a repository whose name has a space", "push",
			withField(t, pushEvent("refs/heads/x", sha1st, sha2nd, false), "repository", repoJSON(owner, "sh op"))},
		{"push carrying a pull request", "push",
			withField(t, pushEvent("refs/heads/x", sha1st, sha2nd, false), "pull_request", map[string]any{"number": 7})},
		{"check run carrying a pull request", "check_run",
			withField(t, checkRunEvent("rerequested", sha2nd), "pull_request", map[string]any{"number": 7})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, why, err := classify(tt.event, "d-1", tt.body, "")
			if !errors.Is(err, errMalformed) {
				t.Fatalf("classify = job %+v, ignored %q, error %v; want a malformed payload", j, why, err)
			}
		})
	}
}

// TestHeaderChecks: the X-GitHub-Event and X-GitHub-Delivery headers are
// read before the signature is checked; anything but GitHub's forms is
// refused (a delivery ID with a space could take a comment's replay key).
func TestHeaderChecks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		value      string
		event, del bool
	}{
		{"issue_comment", true, true},
		{"72d3162e-cc78-11e3-81ab-4c9367dc0958", false, true},
		{"Issue_Comment", false, true},
		{"issue comment", false, false},
		{"comment 1 2 created", false, false},
		{"id\x00", false, false},
		{"idé", false, false},
		{strings.Repeat("a", 65), false, true},
		{strings.Repeat("a", 129), false, false},
	}
	for _, tt := range tests {
		if got := validEvent(tt.value); got != tt.event {
			t.Errorf("validEvent(%q) = %t, want %t", tt.value, got, tt.event)
		}
		if got := validDelivery(tt.value); got != tt.del {
			t.Errorf("validDelivery(%q) = %t, want %t", tt.value, got, tt.del)
		}
	}
}
