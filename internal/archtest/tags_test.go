package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/schemas"
)

// phasegateRef is a reference to a phasegate release that a user copies: the
// actions (`uses: phasegate/phasegate@v0`, `…/binary@v0.1.0`), the image
// (`ghcr.io/phasegate/phasegate:v0.1.0`) and `go install …@v0.1.0`.
var phasegateRef = regexp.MustCompile(`phasegate/phasegate(?:/binary|/cmd/phasegate)?[@:]v(\d+)(?:\.\d+\.\d+[-\w.]*)?\b`)

// TestSnippetsNameTheReleasedMajor: every action, image and install
// reference in the docs, the workflows and the action definitions names the
// major version of the release the repository makes (schemas.Version; the
// release workflow moves the tag of that major), so a copied snippet
// resolves. actionlint cannot see a tag that will never exist.
func TestSnippetsNameTheReleasedMajor(t *testing.T) {
	major := strings.SplitN(strings.TrimPrefix(schemas.Version, "v"), ".", 2)[0]
	seen := 0
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if name == "node_modules" || name == "dist" || name == "testdata" || (strings.HasPrefix(name, ".") && name != "." && name != ".." && name != ".github") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".md") && !strings.HasSuffix(name, ".yml") && !strings.HasSuffix(name, ".yaml") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, m := range phasegateRef.FindAllStringSubmatch(line, -1) {
				seen++
				if m[1] != major {
					t.Errorf("%s:%d: %q names major v%s; the release (schemas.Version %s) is v%s", path, i+1, m[0], m[1], schemas.Version, major)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 10 {
		t.Errorf("found %d references to a phasegate release, want the README's and docs' (at least 10): is the pattern still right?", seen)
	}
}
