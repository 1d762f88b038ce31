package binaryaction

import (
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// goreleaser is what run.sh assumes of .goreleaser.yaml.
type goreleaser struct {
	ProjectName string `yaml:"project_name"`
	Builds      []struct {
		Binary string   `yaml:"binary"`
		Goos   []string `yaml:"goos"`
		Goarch []string `yaml:"goarch"`
	} `yaml:"builds"`
	Archives []struct {
		Formats         []string `yaml:"formats"`
		NameTemplate    string   `yaml:"name_template"`
		WrapInDirectory any      `yaml:"wrap_in_directory"`
		FormatOverrides []struct {
			Goos    string   `yaml:"goos"`
			Formats []string `yaml:"formats"`
		} `yaml:"format_overrides"`
	} `yaml:"archives"`
	Checksum struct {
		NameTemplate string `yaml:"name_template"`
		Algorithm    string `yaml:"algorithm"`
	} `yaml:"checksum"`
}

// TestArchivesAreWhatRunShExpects: the release has an archive for every
// RUNNER_OS and RUNNER_ARCH run.sh maps, named and packed as run.sh looks
// for it, and the SHA256SUMS it verifies.
func TestArchivesAreWhatRunShExpects(t *testing.T) {
	var g goreleaser
	if err := yaml.Unmarshal(readFile(t, ".goreleaser.yaml"), &g); err != nil {
		t.Fatal(err)
	}
	if g.ProjectName != "phasegate" || len(g.Builds) != 1 || g.Builds[0].Binary != "phasegate" {
		t.Fatalf(".goreleaser.yaml: project %q, builds %+v; run.sh wants one build of the binary phasegate", g.ProjectName, g.Builds)
	}
	b := g.Builds[0]
	for _, goos := range []string{"linux", "darwin", "windows"} {
		if !slices.Contains(b.Goos, goos) {
			t.Errorf(".goreleaser.yaml builds no %s binary: run.sh maps a RUNNER_OS to it", goos)
		}
	}
	for _, goarch := range []string{"amd64", "arm64"} {
		if !slices.Contains(b.Goarch, goarch) {
			t.Errorf(".goreleaser.yaml builds no %s binary: run.sh maps a RUNNER_ARCH to it", goarch)
		}
	}
	if len(g.Archives) != 1 {
		t.Fatalf(".goreleaser.yaml has %d archives, want 1", len(g.Archives))
	}
	a := g.Archives[0]
	if a.NameTemplate != "{{ .ProjectName }}_{{ .Version }}_{{ .Os }}_{{ .Arch }}" {
		t.Errorf("archive name_template %q: run.sh downloads phasegate_<version>_<os>_<arch>", a.NameTemplate)
	}
	if !slices.Equal(a.Formats, []string{"tar.gz"}) || len(a.FormatOverrides) != 1 ||
		a.FormatOverrides[0].Goos != "windows" || !slices.Equal(a.FormatOverrides[0].Formats, []string{"zip"}) {
		t.Errorf("archive formats %v, overrides %+v: run.sh wants tar.gz, zip on windows", a.Formats, a.FormatOverrides)
	}
	if a.WrapInDirectory != nil {
		t.Errorf("archive wrap_in_directory %v: run.sh extracts the binary from the archive's top level", a.WrapInDirectory)
	}
	if g.Checksum.NameTemplate != "SHA256SUMS" || g.Checksum.Algorithm != "sha256" {
		t.Errorf("checksum %+v: run.sh verifies SHA256SUMS, sha256", g.Checksum)
	}
}

// TestReleaseAttestsTheArchives: the release workflow attests every archive
// SHA256SUMS lists, which is what run.sh's gh attestation verify asks for
// (--signer-workflow <repo>/.github/workflows/release.yml).
func TestReleaseAttestsTheArchives(t *testing.T) {
	var w struct {
		Jobs map[string]struct {
			Steps []struct {
				Uses string            `yaml:"uses"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(readFile(t, ".github/workflows/release.yml"), &w); err != nil {
		t.Fatal(err)
	}
	attested := false
	for _, s := range w.Jobs["release"].Steps {
		if strings.HasPrefix(s.Uses, "actions/attest-build-provenance@") && s.With["subject-checksums"] == "dist/SHA256SUMS" {
			attested = true
		}
	}
	if !attested {
		t.Error("release.yml's release job does not attest the archives (actions/attest-build-provenance with subject-checksums: dist/SHA256SUMS)")
	}
	if !strings.Contains(string(readFile(t, "binary/run.sh")), `--signer-workflow "$repo/.github/workflows/release.yml"`) {
		t.Error("binary/run.sh does not require the release workflow as the attestation's signer")
	}
}
