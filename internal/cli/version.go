package cli

import (
	"cmp"
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// Build information. GoReleaser stamps all three (.goreleaser.yaml), the
// Dockerfile stamps version (and commit and date when given):
//
//	-ldflags "-X github.com/phasegate/phasegate/internal/cli.version=v1.2.3
//	          -X github.com/phasegate/phasegate/internal/cli.commit=<sha>
//	          -X github.com/phasegate/phasegate/internal/cli.date=<RFC 3339>"
//
// Unstamped, they come from the binary's build information: the module
// version `go install …@vX` records, and the VCS revision and commit time
// `go build` records in a checkout.
var (
	version = ""
	commit  = ""
	date    = ""
)

// Version is phasegate's version: the stamped one, else the module version
// that `go install …@vX` records, else "dev".
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// BuildInfo is what `phasegate version` prints.
type BuildInfo struct {
	Version string
	// Commit is the full commit hash, with " (modified)" when the checkout
	// had local changes; "unknown" when nothing recorded it.
	Commit string
	// Date is the build date, RFC 3339: the date of the commit built, which
	// GoReleaser stamps (so that a release build is reproducible) and Go
	// records; "unknown" when nothing recorded it.
	Date string
	// Go is the toolchain and the platform.
	Go string
}

// pseudoVersion matches a Go pseudo-version's timestamp and commit prefix
// (go install …@<commit> records one and no VCS information).
var pseudoVersion = regexp.MustCompile(`(?:^|[.-])(\d{14})-([0-9a-f]{12})(?:\+incompatible)?$`)

// buildInfo gathers the build information from the stamped variables and
// bi (debug.ReadBuildInfo's, or nil).
func buildInfo(bi *debug.BuildInfo) BuildInfo {
	info := BuildInfo{Version: Version(), Commit: commit, Date: date, Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Commit = cmp.Or(info.Commit, s.Value)
			case "vcs.time":
				info.Date = cmp.Or(info.Date, s.Value)
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if modified && commit == "" && info.Commit != "" {
			info.Commit += " (modified)"
		}
		if m := pseudoVersion.FindStringSubmatch(bi.Main.Version); m != nil {
			info.Commit = cmp.Or(info.Commit, m[2])
			if t, err := time.Parse("20060102150405", m[1]); err == nil && info.Date == "" {
				info.Date = t.UTC().Format(time.RFC3339)
			}
		}
	}
	info.Commit = cmp.Or(info.Commit, "unknown")
	info.Date = cmp.Or(info.Date, "unknown")
	return info
}

func (b BuildInfo) String() string {
	return fmt.Sprintf("phasegate %s\ncommit: %s\ndate:   %s\ngo:     %s\n", b.Version, b.Commit, b.Date, b.Go)
}

func (e *environment) version(args []string) int {
	fset := e.flags("version", strings.TrimSpace(`
Prints phasegate's version, the commit it was built from, the build date (the commit's
date, so that release builds are reproducible) and the Go toolchain. Release binaries
and images carry all three; 'go install …@VERSION' records the version (and, for a
pseudo-version, the commit and its date); 'go build' in a git checkout records the
commit and its date. 'phasegate -v' and 'phasegate --version' print the same.

Exit codes: 0 printed; 2 usage error (an argument).`))
	if code, done := fset.parse(args); done {
		return code
	}
	if fset.NArg() > 0 {
		return e.failf("version takes no arguments (got %q)", fset.Arg(0))
	}
	bi, _ := debug.ReadBuildInfo()
	fmt.Fprint(e.stdout, buildInfo(bi))
	return ExitOK
}
