package archtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// The project's legal and release basics: the licence, where it travels,
// the security policy, the changelog the release notes come from, and the
// issue and pull-request templates. Each check is a function over the
// files' text, so a test can plant the mistake it catches.

// apacheSHA256 is the SHA-256 of the Apache License 2.0 as the ASF
// publishes it (https://www.apache.org/licenses/LICENSE-2.0.txt, and
// Debian's /usr/share/common-licenses/Apache-2.0).
const apacheSHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"

// licenseCopyright is the appendix's boilerplate line, filled in as
// GitHub's licence picker fills it.
var licenseCopyright = regexp.MustCompile(`(?m)^   Copyright \d{4} The phasegate authors$`)

// checkLicense says what keeps text from being the standard Apache-2.0
// text with the appendix's copyright line filled in for The phasegate
// authors.
func checkLicense(text string) []string {
	loc := licenseCopyright.FindStringIndex(text)
	if loc == nil {
		return []string{`no "   Copyright YYYY The phasegate authors" line (the appendix's "Copyright [yyyy] [name of copyright owner]", filled in)`}
	}
	standard := text[:loc[0]] + "   Copyright [yyyy] [name of copyright owner]" + text[loc[1]:]
	if sum := sha256.Sum256([]byte(standard)); hex.EncodeToString(sum[:]) != apacheSHA256 {
		return []string{"apart from the copyright line, the text is not the Apache License 2.0 as the ASF publishes it (LICENSE-2.0.txt)"}
	}
	return nil
}

func readRoot(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(moduleRoot(t), filepath.FromSlash(rel)))
	if err != nil {
		t.Fatalf("reading %s: %v", rel, err)
	}
	return string(data)
}

func TestLicenseIsApache2(t *testing.T) {
	for _, p := range checkLicense(readRoot(t, "LICENSE")) {
		t.Errorf("LICENSE: %s", p)
	}
}

func TestCheckLicenseCatches(t *testing.T) {
	std, err := os.ReadFile("/usr/share/common-licenses/Apache-2.0")
	if err != nil {
		t.Skip("no standard copy of the licence to plant mistakes in")
	}
	filled := strings.Replace(string(std), "   Copyright [yyyy] [name of copyright owner]", "   Copyright 2026 The phasegate authors", 1)
	tests := []struct {
		name, text string
		wantOK     bool
	}{
		{name: "filled in", text: filled, wantOK: true},
		{name: "placeholder left", text: string(std)},
		{name: "other holder", text: strings.Replace(filled, "The phasegate authors", "Someone Else", 1)},
		{name: "a clause changed", text: strings.Replace(filled, "WITHOUT WARRANTIES", "WITH WARRANTIES", 1)},
		{name: "MIT", text: "MIT License\n\n   Copyright 2026 The phasegate authors\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := checkLicense(tc.text); (len(got) == 0) != tc.wantOK {
				t.Errorf("checkLicense = %q, want ok %v", got, tc.wantOK)
			}
		})
	}
}

// goreleaserConfig is what the release promises about licences and notes.
type goreleaserConfig struct {
	Archives []struct {
		ID    string      `yaml:"id"`
		Files []yaml.Node `yaml:"files"`
	} `yaml:"archives"`
	DockersV2 []struct {
		ID     string            `yaml:"id"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"dockers_v2"`
	Changelog struct {
		Disable any `yaml:"disable"`
	} `yaml:"changelog"`
}

// checkGoReleaser: every archive carries LICENSE, README.md and
// CHANGELOG.md; every image has the licence label; the changelog is not
// disabled (that would also drop the --release-notes the release passes).
func checkGoReleaser(data []byte) []string {
	var c goreleaserConfig
	if err := yaml.Unmarshal(data, &c); err != nil {
		return []string{err.Error()}
	}
	var out []string
	if len(c.Archives) == 0 {
		out = append(out, "no archives")
	}
	for _, a := range c.Archives {
		var files []string
		for _, f := range a.Files {
			switch f.Kind {
			case yaml.ScalarNode:
				files = append(files, f.Value)
			case yaml.MappingNode:
				var src struct {
					Src string `yaml:"src"`
				}
				if err := f.Decode(&src); err == nil {
					files = append(files, src.Src)
				}
			}
		}
		for _, want := range []string{"LICENSE", "README.md", "CHANGELOG.md"} {
			if !slices.Contains(files, want) {
				out = append(out, fmt.Sprintf("archive %s: files does not list %s", a.ID, want))
			}
		}
	}
	for _, d := range c.DockersV2 {
		if got := d.Labels["org.opencontainers.image.licenses"]; got != "Apache-2.0" {
			out = append(out, fmt.Sprintf("image %s: label org.opencontainers.image.licenses is %q, want Apache-2.0", d.ID, got))
		}
	}
	if c.Changelog.Disable != nil && fmt.Sprint(c.Changelog.Disable) != "false" {
		out = append(out, "changelog.disable is set: GoReleaser would then ignore --release-notes and publish an empty body")
	}
	return out
}

func TestGoReleaserShipsTheLicense(t *testing.T) {
	for _, p := range checkGoReleaser([]byte(readRoot(t, ".goreleaser.yaml"))) {
		t.Errorf(".goreleaser.yaml: %s", p)
	}
	release := readRoot(t, ".github/workflows/release.yml")
	for _, want := range []string{".ci/release-notes \"$GITHUB_REF_NAME\"", "--release-notes"} {
		if !strings.Contains(release, want) {
			t.Errorf(".github/workflows/release.yml does not run %s: the release notes must come from CHANGELOG.md", want)
		}
	}
}

func TestCheckGoReleaserCatches(t *testing.T) {
	const ok = "archives:\n  - id: a\n    files: [LICENSE, README.md, {src: CHANGELOG.md}]\ndockers_v2:\n  - id: i\n    labels: {org.opencontainers.image.licenses: Apache-2.0}\n"
	tests := []struct {
		name, yaml string
		want       string
	}{
		{name: "complete", yaml: ok},
		{name: "no LICENSE", yaml: strings.Replace(ok, "LICENSE, ", "", 1), want: "does not list LICENSE"},
		{name: "defaults only", yaml: "archives:\n  - id: a\n", want: "does not list LICENSE"},
		{name: "no licence label", yaml: strings.Replace(ok, "Apache-2.0", "MIT", 1), want: "want Apache-2.0"},
		{name: "changelog disabled", yaml: ok + "changelog:\n  disable: true\n", want: "changelog.disable"},
		{name: "no archives", yaml: "project_name: x\n", want: "no archives"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(checkGoReleaser([]byte(tc.yaml)), "; ")
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("checkGoReleaser = %q, want %q", got, tc.want)
			}
		})
	}
}

// dockerLabels are the LABEL instructions of a Dockerfile's last stage.
func dockerLabels(text string) map[string]string {
	text = strings.ReplaceAll(text, "\\\n", " ")
	labels := map[string]string{}
	pair := regexp.MustCompile(`([A-Za-z0-9._-]+)=("(?:[^"\\]|\\.)*"|\S+)`)
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && strings.EqualFold(f[0], "FROM") {
			clear(labels)
		}
		if len(f) == 0 || !strings.EqualFold(f[0], "LABEL") {
			continue
		}
		for _, m := range pair.FindAllStringSubmatch(line, -1) {
			v := m[2]
			if uq, err := strconv.Unquote(v); err == nil {
				v = uq
			}
			labels[m[1]] = v
		}
	}
	return labels
}

func TestDockerfilesCarryOCILabels(t *testing.T) {
	tests := []struct {
		file string
		want map[string]string // "" means any value
	}{
		{file: "Dockerfile", want: map[string]string{
			"org.opencontainers.image.licenses": "Apache-2.0", "org.opencontainers.image.title": "phasegate",
			"org.opencontainers.image.source": "https://github.com/phasegate/phasegate", "org.opencontainers.image.description": "",
			"org.opencontainers.image.version": "${VERSION}", "org.opencontainers.image.revision": "${COMMIT}",
		}},
		// The release image: GoReleaser adds the source, version and
		// revision (TestGoReleaserShipsTheLicense checks its licence label).
		{file: "deploy/release.Dockerfile", want: map[string]string{"org.opencontainers.image.licenses": "Apache-2.0"}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			got := dockerLabels(readRoot(t, tc.file))
			for k, v := range tc.want {
				if g, ok := got[k]; !ok || (v != "" && g != v) {
					t.Errorf("%s: label %s = %q, want %q", tc.file, k, g, v)
				}
			}
		})
	}
	if got := dockerLabels("FROM a\nLABEL x=\"1\" \\\n  y=2\nFROM b\nLABEL z=3\n"); len(got) != 1 || got["z"] != "3" {
		t.Errorf("dockerLabels reads %v, want only the last stage's z=3", got)
	}
}

// changelogVersion is a released section's heading.
var (
	changelogVersion = regexp.MustCompile(`^## \[(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?\] - (\d{4}-\d{2}-\d{2})$`)
	changelogLink    = regexp.MustCompile(`(?m)^\[([^\]]+)\]: https://\S+$`)
	keepAChangelog   = []string{"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}
)

type changelogSection struct {
	name, date string
	semver     [3]int
	pre        string
	body       []string
}

// checkChangelog says how text breaks Keep a Changelog 1.1.0 as this
// project uses it: `# Changelog`, `## [Unreleased]` first, then released
// versions `## [X.Y.Z] - YYYY-MM-DD`, newest first, each with entries under
// the six standard `###` headings and a link reference. releasing, when not
// empty, is the version being released (X.Y.Z): it needs its section.
func checkChangelog(text, releasing string) []string {
	lines := strings.Split(text, "\n")
	var out []string
	if lines[0] != "# Changelog" {
		out = append(out, "the first line is not `# Changelog`")
	}
	var secs []*changelogSection
	for i, line := range lines {
		switch {
		case strings.HasPrefix(line, "## "):
			s, why := parseChangelogHeading(line)
			if why != "" {
				out = append(out, fmt.Sprintf("line %d: %s", i+1, why))
				continue
			}
			secs = append(secs, s)
		case len(secs) > 0 && !changelogLink.MatchString(line):
			secs[len(secs)-1].body = append(secs[len(secs)-1].body, line)
		}
		if h, ok := strings.CutPrefix(line, "### "); ok && !slices.Contains(keepAChangelog, h) {
			out = append(out, fmt.Sprintf("line %d: `### %s` is not one of %v", i+1, h, keepAChangelog))
		}
	}
	out = append(out, checkChangelogSections(secs, text, releasing)...)
	return out
}

func parseChangelogHeading(line string) (*changelogSection, string) {
	if line == "## [Unreleased]" {
		return &changelogSection{name: "Unreleased"}, ""
	}
	m := changelogVersion.FindStringSubmatch(line)
	if m == nil {
		return nil, fmt.Sprintf("%q is neither `## [Unreleased]` nor `## [X.Y.Z] - YYYY-MM-DD`", line)
	}
	if _, err := time.Parse(time.DateOnly, m[5]); err != nil {
		return nil, fmt.Sprintf("%q: the date is not a date", line)
	}
	s := &changelogSection{name: strings.TrimPrefix(strings.SplitN(line, "]", 2)[0], "## ["), date: m[5], pre: m[4]}
	for i := range 3 {
		s.semver[i], _ = strconv.Atoi(m[i+1])
	}
	return s, ""
}

// newer reports whether a is a later version than b.
func (a *changelogSection) newer(b *changelogSection) bool {
	if c := slices.Compare(a.semver[:], b.semver[:]); c != 0 {
		return c > 0
	}
	return (a.pre == "" && b.pre != "") || (a.pre != "" && b.pre != "" && a.pre > b.pre)
}

func checkChangelogSections(secs []*changelogSection, text, releasing string) []string {
	var out []string
	if len(secs) == 0 || secs[0].name != "Unreleased" {
		out = append(out, "the first section is not `## [Unreleased]`")
	}
	links := map[string]bool{}
	for _, m := range changelogLink.FindAllStringSubmatch(text, -1) {
		links[m[1]] = true
	}
	found := releasing == ""
	for i, s := range secs {
		if !links[s.name] {
			out = append(out, fmt.Sprintf("[%s] has no link reference (`[%s]: https://…`)", s.name, s.name))
		}
		if s.name == "Unreleased" {
			if i > 0 {
				out = append(out, "`## [Unreleased]` is not the first section")
			}
			continue
		}
		found = found || s.name == releasing
		if strings.TrimSpace(strings.Join(s.body, "\n")) == "" {
			out = append(out, fmt.Sprintf("[%s] has no entries", s.name))
		}
		if i > 0 && secs[i-1].name != "Unreleased" && (!secs[i-1].newer(s) || secs[i-1].date < s.date) {
			out = append(out, fmt.Sprintf("[%s] is below [%s]: newest versions first", secs[i-1].name, s.name))
		}
	}
	if !found {
		out = append(out, fmt.Sprintf("no `## [%s] - YYYY-MM-DD` section for the version being released", releasing))
	}
	return out
}

// TestChangelog checks CHANGELOG.md. On a version tag (the release job runs
// .ci/run on the tagged commit, with GITHUB_REF_TYPE=tag) the tag's version
// must have its section.
func TestChangelog(t *testing.T) {
	releasing := ""
	if os.Getenv("GITHUB_REF_TYPE") == "tag" {
		releasing = strings.TrimPrefix(os.Getenv("GITHUB_REF_NAME"), "v")
	}
	for _, p := range checkChangelog(readRoot(t, "CHANGELOG.md"), releasing) {
		t.Errorf("CHANGELOG.md: %s", p)
	}
}

func TestCheckChangelogCatches(t *testing.T) {
	const ok = "# Changelog\n\n## [Unreleased]\n\n## [1.1.0] - 2026-12-01\n\n### Added\n\n- b\n\n## [1.0.0] - 2026-11-01\n\n### Fixed\n\n- a\n\n" +
		"[Unreleased]: https://x/compare/v1.1.0...HEAD\n[1.1.0]: https://x/compare/v1.0.0...v1.1.0\n[1.0.0]: https://x/releases/tag/v1.0.0\n"
	tests := []struct {
		name, text, releasing, want string
	}{
		{name: "well formed", text: ok},
		{name: "well formed, releasing 1.1.0", text: ok, releasing: "1.1.0"},
		{name: "releasing a version without a section", text: ok, releasing: "1.2.0", want: "no `## [1.2.0] - YYYY-MM-DD` section"},
		{name: "no Unreleased", text: strings.Replace(ok, "## [Unreleased]\n", "", 1), want: "first section is not `## [Unreleased]`"},
		{name: "Unreleased below a version", text: strings.Replace(strings.Replace(ok, "## [Unreleased]\n", "", 1), "## [1.0.0]", "## [Unreleased]\n\n## [1.0.0]", 1), want: "is not the first section"},
		{name: "no date", text: strings.Replace(ok, "## [1.1.0] - 2026-12-01", "## [1.1.0]", 1), want: "neither"},
		{name: "bad date", text: strings.Replace(ok, "2026-12-01", "2026-13-01", 1), want: "not a date"},
		{name: "oldest first", text: strings.Replace(strings.Replace(ok, "[1.1.0] - 2026-12-01", "[0.9.0] - 2026-10-01", 1), "[1.1.0]:", "[0.9.0]:", 1), want: "newest versions first"},
		{name: "empty release", text: strings.Replace(ok, "### Fixed\n\n- a\n", "", 1), want: "[1.0.0] has no entries"},
		{name: "unknown heading", text: strings.Replace(ok, "### Fixed", "### Bugs", 1), want: "`### Bugs` is not one of"},
		{name: "no link", text: strings.Replace(ok, "[1.0.0]: https://x/releases/tag/v1.0.0\n", "", 1), want: "[1.0.0] has no link reference"},
		{name: "no title", text: strings.Replace(ok, "# Changelog", "# Changes", 1), want: "first line"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(checkChangelog(tc.text, tc.releasing), "; ")
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("checkChangelog = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestReleaseNotesScript runs .ci/release-notes, which the release workflow
// uses, on a planted changelog: a version's section without its heading and
// links, and a refusal for a version without one.
func TestReleaseNotesScript(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	cl := filepath.Join(t.TempDir(), "CHANGELOG.md")
	text := "# Changelog\n\n## [Unreleased]\n\n### Added\n\n- next\n\n## [1.1.0] - 2026-12-01\n\n### Added\n\n- b\n\n## [1.0.0] - 2026-11-01\n\n### Fixed\n\n- a\n\n" +
		"[Unreleased]: https://x/compare/v1.1.0...HEAD\n[1.1.0]: https://x/compare/v1.0.0...v1.1.0\n[1.0.0]: https://x/releases/tag/v1.0.0\n"
	if err := os.WriteFile(cl, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tag, want string
		wantFail  bool
	}{
		{tag: "v1.1.0", want: "### Added\n\n- b\n"},
		{tag: "v1.0.0", want: "### Fixed\n\n- a\n"},
		{tag: "v1.2.0", wantFail: true},
		{tag: "vUnreleased", wantFail: true},
	}
	for _, tc := range tests {
		t.Run(tc.tag, func(t *testing.T) {
			cmd := exec.Command("bash", filepath.Join(moduleRoot(t), ".ci", "release-notes"), tc.tag, cl)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			switch {
			case tc.wantFail && err == nil:
				t.Errorf("release-notes %s printed %q, want a failure", tc.tag, stdout.String())
			case !tc.wantFail && err != nil:
				t.Errorf("release-notes %s: %v\n%s", tc.tag, err, stderr.String())
			case !tc.wantFail && stdout.String() != tc.want:
				t.Errorf("release-notes %s = %q, want %q", tc.tag, stdout.String(), tc.want)
			}
		})
	}
}

// TestSecurityPolicyAndTemplates: SECURITY.md says how to report privately
// and points at the threat model; issues are forms, and the chooser sends
// security reports to the policy rather than a public issue.
func TestSecurityPolicyAndTemplates(t *testing.T) {
	sec := readRoot(t, "SECURITY.md")
	for _, want := range []string{"/security/advisories/new", "## Supported versions", "latest minor", "(docs/security.md)", "## Scope"} {
		if !strings.Contains(sec, want) {
			t.Errorf("SECURITY.md does not say %q", want)
		}
	}
	var chooser struct {
		Blank    *bool `yaml:"blank_issues_enabled"`
		Contacts []struct {
			Name, URL, About string
		} `yaml:"contact_links"`
	}
	if err := yaml.Unmarshal([]byte(readRoot(t, ".github/ISSUE_TEMPLATE/config.yml")), &chooser); err != nil {
		t.Fatal(err)
	}
	if chooser.Blank == nil || *chooser.Blank {
		t.Error(".github/ISSUE_TEMPLATE/config.yml: blank_issues_enabled is not false")
	}
	if !slices.ContainsFunc(chooser.Contacts, func(c struct{ Name, URL, About string }) bool {
		return strings.HasSuffix(c.URL, "/security/policy") && strings.Contains(c.About, "SECURITY.md")
	}) {
		t.Error(".github/ISSUE_TEMPLATE/config.yml: no contact link sends security reports to SECURITY.md (…/security/policy)")
	}
	for _, form := range []string{"bug_report.yml", "feature_request.yml"} {
		var f struct {
			Name, Description string
			Body              []struct {
				Type        string
				ID          string
				Validations struct{ Required bool }
			}
		}
		if err := yaml.Unmarshal([]byte(readRoot(t, ".github/ISSUE_TEMPLATE/"+form)), &f); err != nil {
			t.Fatalf("%s: %v", form, err)
		}
		required := slices.ContainsFunc(f.Body, func(b struct {
			Type        string
			ID          string
			Validations struct{ Required bool }
		}) bool {
			return b.Type != "markdown" && b.ID != "" && b.Validations.Required
		})
		if f.Name == "" || f.Description == "" || !required {
			t.Errorf("%s is not an issue form (name, description, and a body with a required field)", form)
		}
	}
	if pr := readRoot(t, ".github/pull_request_template.md"); !strings.Contains(pr, "CHANGELOG.md") {
		t.Error(".github/pull_request_template.md does not ask for a CHANGELOG.md entry")
	}
}
