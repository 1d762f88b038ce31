package schemas

import (
	"encoding/json"
	"io/fs"
	"regexp"
	"testing"
)

// TestIDsNameTheRelease: every schema's $id is BaseURL + its path, so the
// $id carries Version (the release) and a relative $ref resolves to the
// same release's file.
func TestIDsNameTheRelease(t *testing.T) {
	if !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(Version) {
		t.Fatalf("Version %q is not a release tag", Version)
	}
	paths, err := fs.Glob(FS, "*/*.schema.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no schemas: %v", err)
	}
	for _, p := range paths {
		data, err := fs.ReadFile(FS, p)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			ID string `json:"$id"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if want := BaseURL + p; doc.ID != want {
			t.Errorf("%s: $id %q, want %q (scripts/schema-version.sh %s sets them all)", p, doc.ID, want, Version)
		}
	}
}
