package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/report"
	"github.com/phasegate/phasegate/internal/testutil"
	"github.com/phasegate/phasegate/internal/testutil/sariftest"
)

// validGateReport is a PACE gate report that satisfies its schema and its
// rules on its own.
const validGateReport = `day: 1
agent: GATE
criteria_results:
  - criterion: "User.create() stores bcrypt-hashed password"
    result: PASS
    evidence: "tests/test_user_model.py::test_create_hashes_password PASSED"
blockers: []
deferred: []
gate_decision: SHIP
hold_reason: ""
`

// brokenYAML is not YAML at all: a decode problem, whatever the kind.
const brokenYAML = "day: 1\nagent: [\n"

// wrongTypes breaks the gate report's schema.
const wrongTypes = `day: "one"
agent: GATE
criteria_results: []
blockers: []
deferred: []
gate_decision: MAYBE
hold_reason: ""
`

type result struct {
	code           int
	stdout, stderr string
}

// run calls Main the way cmd/phasegate does, with an empty environment.
func run(t *testing.T, args ...string) result {
	t.Helper()
	env := map[string]string{}
	var stdout, stderr bytes.Buffer
	code := Main(args, func(k string) string { return env[k] }, &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

func TestExitCodesAndStreams(t *testing.T) {
	clean := testutil.WriteTree(t, t.TempDir(), map[string]string{".pace/day-1/gate-report.yaml": validGateReport})
	empty := t.TempDir()
	broken := testutil.WriteTree(t, t.TempDir(), map[string]string{
		".pace/day-1/gate-report.yaml": validGateReport,
		".pace/day-2/gate-report.yaml": brokenYAML,
	})
	schemaErr := testutil.WriteTree(t, t.TempDir(), map[string]string{".pace/day-3/gate-report.yaml": wrongTypes})
	badConfig := testutil.WriteTree(t, t.TempDir(), map[string]string{
		".pace/day-1/gate-report.yaml": validGateReport,
		".github/phasegate.yml":        "rules: [\n",
	})
	missing := filepath.Join(empty, "does-not-exist")
	// A real gate report outside .pace/day-N/, and a file of no kind.
	loose := testutil.WriteTree(t, t.TempDir(), map[string]string{"reports/gate.md": validGateReport, "notes.json": `{"todo": 1}` + "\n"})
	looseGate := filepath.Join(loose, "reports", "gate.md")

	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout []string // substrings; nil means stdout must be empty
		wantStderr []string // substrings; nil means stderr must be empty
	}{
		{name: "clean tree", args: []string{"validate", clean}, wantCode: ExitOK,
			wantStdout: []string{"1 artifact checked: 0 errors, 0 warnings — SHIP"}},
		{name: "empty tree warns that nothing was found", args: []string{"validate", empty}, wantCode: ExitOK,
			wantStdout: []string{"phasegate: warning discovery.nothing-found: no artifact found under " + empty, "0 artifacts checked: 0 errors, 1 warning — ADVISORY"}},
		{name: "gate on nothing is not SHIP", args: []string{"gate", empty}, wantCode: ExitOK,
			wantStdout: []string{"Verdict ADVISORY because:", "ADVISORY: no artifact found under", "— ADVISORY"}},
		{name: "marker directory as the root is checked in its place", args: []string{"validate", filepath.Join(clean, ".pace")}, wantCode: ExitOK,
			wantStdout: []string{"1 artifact checked: 0 errors, 0 warnings — SHIP"}},
		{name: "day directory as the root", args: []string{"validate", filepath.Join(schemaErr, ".pace", "day-3")}, wantCode: ExitFindings,
			wantStdout: []string{".pace/day-3/gate-report.yaml:1:", "error schema:", "1 artifact checked"}},
		{name: "named file of no kind is an error naming the closest kind", args: []string{"validate", looseGate}, wantCode: ExitFindings,
			wantStdout: []string{"error discovery.unknown-kind:", "the closest kind is pace.gate-report", "--kind pace.gate-report", "0 artifacts checked: 1 error"}},
		{name: "--kind forces the kind of a named file", args: []string{"validate", "--kind", "pace.gate-report", looseGate}, wantCode: ExitOK,
			wantStdout: []string{"1 artifact checked: 0 errors, 0 warnings — SHIP"}},
		{name: "--kind checks the file as that kind", args: []string{"validate", "--kind", "pace.sentinel-report", looseGate}, wantCode: ExitFindings,
			wantStdout: []string{"error schema:", "sentinel_decision", "HOLD"}},
		{name: "--kind on a directory is a usage error", args: []string{"validate", "--kind", "pace.gate-report", loose}, wantCode: ExitUsage,
			wantStderr: []string{"--kind applies to files", loose}},
		{name: "--kind unknown", args: []string{"validate", "--kind", "pace.nope", looseGate}, wantCode: ExitUsage,
			wantStderr: []string{`unknown --kind "pace.nope"`}},
		{name: "unnamed file of no kind in a tree is not reported", args: []string{"validate", loose}, wantCode: ExitOK,
			wantStdout: []string{"discovery.nothing-found", "0 artifacts checked"}},
		{name: "one file", args: []string{"validate", filepath.Join(clean, ".pace", "day-1", "gate-report.yaml")}, wantCode: ExitOK,
			wantStdout: []string{"1 artifact checked"}},
		{name: "invalid YAML", args: []string{"validate", broken}, wantCode: ExitFindings,
			wantStdout: []string{".pace/day-2/gate-report.yaml:2:", "error syntax:", "2 artifacts checked: 1 error, 0 warnings — HOLD"}},
		{name: "schema violation", args: []string{"validate", schemaErr}, wantCode: ExitFindings,
			wantStdout: []string{".pace/day-3/gate-report.yaml:1:", "error schema:", "HOLD"}},
		{name: "flags after the path", args: []string{"validate", broken, "--format", "github"}, wantCode: ExitFindings,
			wantStdout: []string{"::error file=.pace/day-2/gate-report.yaml,"}},
		{name: "double dash ends flags", args: []string{"validate", "--", clean}, wantCode: ExitOK,
			wantStdout: []string{"SHIP"}},
		{name: "invalid config file is a finding", args: []string{"validate", badConfig}, wantCode: ExitFindings,
			wantStdout: []string{".github/phasegate.yml:", "error config:"}},
		{name: "no arguments", args: nil, wantCode: ExitUsage,
			wantStderr: []string{"Usage:", "phasegate validate"}},
		{name: "unknown command", args: []string{"frobnicate"}, wantCode: ExitUsage,
			wantStderr: []string{`unknown command "frobnicate"`, "Usage:"}},
		{name: "unknown flag", args: []string{"validate", "--bogus", clean}, wantCode: ExitUsage,
			wantStderr: []string{`unknown flag "--bogus"`, "Usage: phasegate validate"}},
		{name: "flag without value", args: []string{"validate", clean, "--format"}, wantCode: ExitUsage,
			wantStderr: []string{"flag needs an argument: -format"}},
		{name: "bad format", args: []string{"validate", "--format", "xml", clean}, wantCode: ExitUsage,
			wantStderr: []string{`unknown --format "xml"`, "text, json, sarif, github"}},
		{name: "nonexistent path", args: []string{"validate", missing}, wantCode: ExitUsage,
			wantStderr: []string{missing}},
		{name: "nonexistent config", args: []string{"validate", "--config", missing, clean}, wantCode: ExitUsage,
			wantStderr: []string{"reading config", missing}},
		{name: "config is a directory", args: []string{"validate", "--config", empty, clean}, wantCode: ExitUsage,
			wantStderr: []string{"reading config", empty}},
		{name: "validate -h", args: []string{"validate", "-h"}, wantCode: ExitOK,
			wantStdout: []string{"Usage: phasegate validate", "-format", "-config"}},
		{name: "validate --help", args: []string{"validate", "--help"}, wantCode: ExitOK,
			wantStdout: []string{"Usage: phasegate validate"}},
		{name: "help", args: []string{"help"}, wantCode: ExitOK,
			wantStdout: []string{"Usage:", "phasegate validate", "Exit codes"}},
		{name: "-h", args: []string{"-h"}, wantCode: ExitOK,
			wantStdout: []string{"Usage:"}},
		{name: "version", args: []string{"version"}, wantCode: ExitOK,
			wantStdout: []string{"phasegate " + Version() + "\n", "\ncommit: ", "\ndate:   ", "\ngo:     go"}},
		{name: "--version", args: []string{"--version"}, wantCode: ExitOK,
			wantStdout: []string{"phasegate " + Version() + "\n", "\ncommit: "}},
		{name: "version takes no arguments", args: []string{"version", "extra"}, wantCode: ExitUsage,
			wantStderr: []string{`version takes no arguments (got "extra")`}},
		{name: "help validate", args: []string{"help", "validate"}, wantCode: ExitOK,
			wantStdout: []string{"Usage: phasegate validate [flags] [PATH...]", "-format", "-base"}},
		{name: "help gate is gate's own", args: []string{"help", "gate"}, wantCode: ExitOK,
			wantStdout: []string{"Usage: phasegate gate [flags] [PATH...]", "computes the verdict", "0 SHIP or ADVISORY; 1 HOLD"}},
		{name: "gate -h is gate's own", args: []string{"gate", "-h"}, wantCode: ExitOK,
			wantStdout: []string{"Usage: phasegate gate [flags] [PATH...]", "computes the verdict"}},
		{name: "action --help", args: []string{"action", "--help"}, wantCode: ExitOK,
			wantStdout: []string{"Usage: phasegate action", "GITHUB_EVENT_NAME", "INPUT_FAIL-ON"}},
		{name: "action takes no arguments", args: []string{"action", "push"}, wantCode: ExitUsage,
			wantStderr: []string{`action takes no arguments (got "push")`}},
		{name: "help serve", args: []string{"help", "serve"}, wantCode: ExitOK,
			wantStdout: []string{"Usage: phasegate serve", "-webhook-secret"}},
		{name: "help help", args: []string{"help", "help"}, wantCode: ExitOK,
			wantStdout: []string{"Usage: phasegate help [COMMAND]"}},
		{name: "help unknown command", args: []string{"help", "frobnicate"}, wantCode: ExitUsage,
			wantStderr: []string{`help: unknown command "frobnicate"`}},
		{name: "help two commands", args: []string{"help", "gate", "validate"}, wantCode: ExitUsage,
			wantStderr: []string{"help takes at most one command"}},
		{name: "--help", args: []string{"--help"}, wantCode: ExitOK,
			wantStdout: []string{"Usage:", "phasegate help [COMMAND]", "phasegate help COMMAND"}},
		{name: "schema unknown flag", args: []string{"schema", "--bogus"}, wantCode: ExitUsage,
			wantStderr: []string{`unknown flag "--bogus"`, "Usage: phasegate schema [KIND | --conventions]"}},
		{name: "serve -h", args: []string{"serve", "-h"}, wantCode: ExitOK,
			wantStdout: []string{"Usage: phasegate serve", "-addr", "-webhook-secret", "-app-id", "-private-key-file", "-github-api-url", "-redis-url", "-reconcile-every", "-lock-ttl", "PHASEGATE_SIGNING_KEY"}},
		{name: "serve refuses to start without a secret", args: []string{"serve"}, wantCode: ExitUsage,
			wantStderr: []string{"no webhook secret"}},
		{name: "serve unknown flag", args: []string{"serve", "--bogus"}, wantCode: ExitUsage,
			wantStderr: []string{"-bogus"}},
		{name: "help lists serve", args: []string{"help"}, wantCode: ExitOK,
			wantStdout: []string{"phasegate serve [flags]"}},
		{name: "schema lists kinds", args: []string{"schema"}, wantCode: ExitOK,
			wantStdout: []string{"KIND", "pace.gate-report"}},
		{name: "schema -h", args: []string{"schema", "-h"}, wantCode: ExitOK,
			wantStdout: []string{"Usage: phasegate schema"}},
		{name: "schema unknown kind", args: []string{"schema", "nope"}, wantCode: ExitUsage,
			wantStderr: []string{`unknown kind "nope"`}},
		{name: "schema two kinds", args: []string{"schema", "pace.gate-report", "pace.handoff"}, wantCode: ExitUsage,
			wantStderr: []string{"usage: phasegate schema [KIND | --conventions]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, tt.args...)
			if got.code != tt.wantCode {
				t.Errorf("exit code = %d, want %d\nstdout:\n%s\nstderr:\n%s", got.code, tt.wantCode, got.stdout, got.stderr)
			}
			checkStream(t, "stdout", got.stdout, tt.wantStdout)
			checkStream(t, "stderr", got.stderr, tt.wantStderr)
		})
	}
}

func checkStream(t *testing.T, name, got string, want []string) {
	t.Helper()
	if want == nil {
		if got != "" {
			t.Errorf("%s = %q, want it empty", name, got)
		}
		return
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s does not contain %q:\n%s", name, w, got)
		}
	}
}

// TestErrorsAreReportedOnce checks that a usage error is printed once, not
// by the flag package and again by phasegate.
func TestErrorsAreReportedOnce(t *testing.T) {
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{name: "unknown flag", args: []string{"validate", "--bogus"}, msg: `unknown flag "--bogus"`},
		{name: "bad format", args: []string{"validate", "--format=xml"}, msg: "unknown --format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, tt.args...)
			if n := strings.Count(got.stderr, tt.msg); n != 1 {
				t.Errorf("%q appears %d times on stderr, want once:\n%s", tt.msg, n, got.stderr)
			}
		})
	}
}

// jsonReport is the public JSON shape (README, output formats) of --format json.
type jsonReport struct {
	FormatVersion int           `json:"format_version"`
	Verdict       string        `json:"verdict"`
	Reasons       []string      `json:"reasons"`
	Artifacts     int           `json:"artifacts"`
	Findings      []jsonFinding `json:"findings"`
}

type jsonFinding struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Kind     string `json:"kind"`
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// decodeStrict decodes the whole of out into v, refusing unknown fields and
// trailing data.
func decodeStrict(t *testing.T, out string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("stdout is not the expected JSON: %v\n%s", err, out)
	}
	if dec.More() {
		t.Fatalf("stdout has more than one JSON value:\n%s", out)
	}
}

func TestValidateJSON(t *testing.T) {
	tests := []struct {
		name         string
		files        map[string]string
		wantCode     int
		wantVerdict  string
		wantArtifact int
		wantFindings []jsonFinding // Message is matched as a substring
	}{
		{
			name:         "clean",
			files:        map[string]string{".pace/day-1/gate-report.yaml": validGateReport},
			wantCode:     ExitOK,
			wantVerdict:  "SHIP",
			wantArtifact: 1,
		},
		{
			name:         "empty",
			files:        map[string]string{"README.md": "# not an artifact\n"},
			wantCode:     ExitOK,
			wantVerdict:  "ADVISORY",
			wantArtifact: 0,
			wantFindings: []jsonFinding{{File: "", Line: 0, Kind: "", Rule: "discovery.nothing-found", Severity: "warning", Message: "no artifact found under"}},
		},
		{
			name: "invalid YAML",
			files: map[string]string{
				".pace/day-1/gate-report.yaml": validGateReport,
				".pace/day-2/gate-report.yaml": brokenYAML,
			},
			wantCode:     ExitFindings,
			wantVerdict:  "HOLD",
			wantArtifact: 2,
			wantFindings: []jsonFinding{{File: ".pace/day-2/gate-report.yaml", Line: 2, Kind: "pace.gate-report", Rule: "syntax", Severity: "error", Message: "invalid YAML"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := testutil.WriteTree(t, t.TempDir(), tt.files)
			got := run(t, "validate", "--format", "json", root)
			if got.code != tt.wantCode {
				t.Errorf("exit code = %d, want %d; stderr: %s", got.code, tt.wantCode, got.stderr)
			}
			if got.stderr != "" {
				t.Errorf("stderr = %q, want it empty", got.stderr)
			}
			// Lists are [] and never null.
			var raw map[string]json.RawMessage
			if err := json.Unmarshal([]byte(got.stdout), &raw); err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"reasons", "findings"} {
				if s := string(raw[key]); s == "" || s == "null" {
					t.Errorf("%s = %q, want a list", key, s)
				}
			}
			var rep jsonReport
			decodeStrict(t, got.stdout, &rep)
			if rep.FormatVersion != 1 {
				t.Errorf("format_version = %d, want 1 (docs/cli.md)", rep.FormatVersion)
			}
			if rep.Verdict != tt.wantVerdict || rep.Artifacts != tt.wantArtifact {
				t.Errorf("verdict, artifacts = %s, %d; want %s, %d", rep.Verdict, rep.Artifacts, tt.wantVerdict, tt.wantArtifact)
			}
			if (rep.Verdict == "SHIP") != (len(rep.Reasons) == 0) {
				t.Errorf("verdict %s with reasons %q", rep.Verdict, rep.Reasons)
			}
			if len(rep.Findings) != len(tt.wantFindings) {
				t.Fatalf("findings = %+v, want %d", rep.Findings, len(tt.wantFindings))
			}
			for i, want := range tt.wantFindings {
				f := rep.Findings[i]
				if f.File != want.File || f.Line != want.Line || (f.Column < 1) != (f.File == "") || f.Kind != want.Kind || f.Rule != want.Rule || f.Severity != want.Severity || !strings.Contains(f.Message, want.Message) {
					t.Errorf("finding %d = %+v, want %+v", i, f, want)
				}
			}
		})
	}
}

// TestValidateOtherFormats runs the machine formats end to end.
func TestValidateOtherFormats(t *testing.T) {
	root := testutil.WriteTree(t, t.TempDir(), map[string]string{".pace/day-2/gate-report.yaml": brokenYAML})
	t.Run("sarif", func(t *testing.T) {
		got := run(t, "validate", "--format", "sarif", root)
		if got.code != ExitFindings || got.stderr != "" {
			t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
		}
		var log struct {
			Version string `json:"version"`
			Runs    []struct {
				Tool struct {
					Driver struct {
						Version string `json:"version"`
					} `json:"driver"`
				} `json:"tool"`
				Results []struct {
					RuleID    string `json:"ruleId"`
					Locations []struct {
						PhysicalLocation struct {
							ArtifactLocation struct {
								URI string `json:"uri"`
							} `json:"artifactLocation"`
						} `json:"physicalLocation"`
					} `json:"locations"`
				} `json:"results"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(got.stdout), &log); err != nil {
			t.Fatal(err)
		}
		if log.Version != "2.1.0" || len(log.Runs) != 1 || log.Runs[0].Tool.Driver.Version != Version() {
			t.Fatalf("log = %+v", log)
		}
		res := log.Runs[0].Results
		if len(res) != 1 || res[0].RuleID != "syntax" || res[0].Locations[0].PhysicalLocation.ArtifactLocation.URI != ".pace/day-2/gate-report.yaml" {
			t.Errorf("results = %+v", res)
		}
	})
	t.Run("github", func(t *testing.T) {
		got := run(t, "validate", "--format", "github", root)
		if got.code != ExitFindings || got.stderr != "" {
			t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
		}
		lines := strings.Split(strings.TrimSuffix(got.stdout, "\n"), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "::error file=.pace/day-2/gate-report.yaml,line=2,") || !strings.HasPrefix(lines[1], "::notice ") {
			t.Errorf("output:\n%s", got.stdout)
		}
	})
}

func TestValidateSeveralPaths(t *testing.T) {
	a := testutil.WriteTree(t, t.TempDir(), map[string]string{".pace/day-1/gate-report.yaml": brokenYAML})
	b := testutil.WriteTree(t, t.TempDir(), map[string]string{".pace/day-1/gate-report.yaml": validGateReport})
	got := run(t, "validate", "--format", "json", a, b)
	if got.code != ExitFindings {
		t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
	}
	var rep jsonReport
	decodeStrict(t, got.stdout, &rep)
	if rep.Artifacts != 2 || len(rep.Findings) != 1 {
		t.Fatalf("report = %+v", rep)
	}
	// With several roots, a file is named with its root so it is unambiguous.
	if want := filepath.ToSlash(a) + "/.pace/day-1/gate-report.yaml"; rep.Findings[0].File != want {
		t.Errorf("file = %q, want %q", rep.Findings[0].File, want)
	}
}

// TestValidateSeveralPathsInMarkerDirectories checks that a PATH inside a
// marker directory, checked in its place, is named once in the files when
// several PATHs are given.
func TestValidateSeveralPathsInMarkerDirectories(t *testing.T) {
	root := testutil.WriteTree(t, t.TempDir(), map[string]string{"a/.pace/day-1/gate-report.yaml": brokenYAML, "b/.pace/day-1/gate-report.yaml": brokenYAML})
	t.Chdir(root)
	got := run(t, "validate", "--format", "json", "a/.pace", "b")
	var rep jsonReport
	decodeStrict(t, got.stdout, &rep)
	var files []string
	for _, f := range rep.Findings {
		files = append(files, f.File)
	}
	if want := []string{"a/.pace/day-1/gate-report.yaml", "b/.pace/day-1/gate-report.yaml"}; !slices.Equal(files, want) {
		t.Errorf("files = %q, want %q", files, want)
	}
}

// TestValidateDefaultsToCurrentDirectory runs validate without a PATH.
func TestValidateDefaultsToCurrentDirectory(t *testing.T) {
	root := testutil.WriteTree(t, t.TempDir(), map[string]string{".pace/day-2/gate-report.yaml": brokenYAML})
	t.Chdir(root)
	got := run(t, "validate")
	if got.code != ExitFindings || !strings.Contains(got.stdout, ".pace/day-2/gate-report.yaml:2:") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", got.code, got.stdout, got.stderr)
	}
}

func TestSchemaCommand(t *testing.T) {
	t.Run("lists every kind", func(t *testing.T) {
		got := run(t, "schema")
		if got.code != ExitOK || got.stderr != "" {
			t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
		}
		kinds := artifact.Kinds()
		if len(kinds) == 0 {
			t.Fatal("no kinds")
		}
		for _, k := range kinds {
			if !strings.Contains(got.stdout, k.ID) {
				t.Errorf("schema output does not list %s", k.ID)
			}
		}
	})
	t.Run("prints one kind's JSON Schema", func(t *testing.T) {
		got := run(t, "schema", "pace.gate-report")
		if got.code != ExitOK || got.stderr != "" {
			t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
		}
		var s map[string]any
		if err := json.Unmarshal([]byte(got.stdout), &s); err != nil {
			t.Fatalf("output is not JSON: %v\n%s", err, got.stdout)
		}
		if s["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("$schema = %v", s["$schema"])
		}
		props, _ := s["properties"].(map[string]any)
		for _, field := range []string{"day", "agent", "criteria_results", "gate_decision"} {
			if _, ok := props[field]; !ok {
				t.Errorf("schema has no property %q", field)
			}
		}
		if req, _ := s["required"].([]any); !slices.Contains(req, any("gate_decision")) {
			t.Errorf("required = %v, want it to include gate_decision", s["required"])
		}
	})
}

// TestMainRecoversFromPanics: Main never panics, whatever happens below it.
func TestMainRecoversFromPanics(t *testing.T) {
	var stderr bytes.Buffer
	code := Main([]string{"validate", t.TempDir()}, func(string) string { return "" }, panickingWriter{}, &stderr)
	if code != ExitUsage {
		t.Errorf("exit code = %d, want %d", code, ExitUsage)
	}
	if !strings.Contains(stderr.String(), "internal error") {
		t.Errorf("stderr = %q, want an internal error report", stderr.String())
	}
}

type panickingWriter struct{}

func (panickingWriter) Write([]byte) (int, error) { panic("writer exploded") }

func TestReconcileCommand(t *testing.T) {
	f := ghfake.New()
	defer f.Close()
	f.AddToken("tok", "github-actions[bot]")
	f.AddRepo("acme", "shop", "main")
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		wantCode int
		want     string
	}{
		{name: "no token", env: map[string]string{"GITHUB_REPOSITORY": "acme/shop"}, wantCode: ExitUsage, want: "no token"},
		{name: "no repository", env: map[string]string{"GITHUB_TOKEN": "tok"}, wantCode: ExitUsage, want: "owner/name"},
		{name: "repository with a path", env: map[string]string{"GITHUB_TOKEN": "tok", "GITHUB_API_URL": f.URL()}, args: []string{"--repo", "acme/shop/issues"}, wantCode: ExitUsage, want: "owner/name"},
		{name: "nothing pending", env: map[string]string{"GITHUB_TOKEN": "tok", "GITHUB_API_URL": f.URL()}, args: []string{"--repo", "acme/shop"}, wantCode: ExitOK, want: "0 resolutions"},
		{name: "help", args: []string{"-h"}, wantCode: ExitOK, want: "Usage: phasegate reconcile"},
		{name: "unknown flag", args: []string{"--bogus"}, wantCode: ExitUsage, want: `unknown flag "--bogus"`},
		{name: "arguments", env: map[string]string{"GITHUB_REPOSITORY": "acme/shop"}, args: []string{"now"}, wantCode: ExitUsage, want: "reconcile takes no arguments"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main(append([]string{"reconcile"}, tc.args...), func(k string) string { return tc.env[k] }, &stdout, &stderr)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d; stderr %s", code, tc.wantCode, stderr.String())
			}
			if !strings.Contains(stdout.String()+stderr.String(), tc.want) {
				t.Errorf("output lacks %q:\n%s%s", tc.want, stdout.String(), stderr.String())
			}
		})
	}
}

// TestValidateSARIFRepositoryPaths checks that SARIF names files relative
// to the root of the git repository that holds the checked path, as GitHub
// code scanning reads them, whatever PATH and working directory, and keeps
// them relative to the checked root outside a repository; the JSON format
// keeps them relative to the checked root in every case.
func TestValidateSARIFRepositoryPaths(t *testing.T) {
	files := map[string]string{
		"sub/dir/.pace/day-2/gate-report.yaml":   brokenYAML,
		"sub/dir/.github/phasegate.yml":          "rules: [\n",
		"sub/other/.pace/day-1/gate-report.yaml": wrongTypes,
		"broken-config.yml":                      "rules: [\n",
	}
	repo := testutil.WriteTree(t, t.TempDir(), files)
	if _, err := git.PlainInit(repo, false); err != nil {
		t.Fatal(err)
	}
	// A linked worktree (or a submodule) has a .git file, not a directory.
	worktree := testutil.WriteTree(t, t.TempDir(), files)
	if err := os.WriteFile(filepath.Join(worktree, ".git"), []byte("gitdir: "+filepath.Join(repo, ".git", "worktrees", "wt")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := testutil.WriteTree(t, t.TempDir(), files)
	if r := gitRoot(outside); r != "" {
		t.Fatalf("the temporary directory %s is inside the git repository %s: this test needs one outside", outside, r)
	}
	tests := []struct {
		name     string
		dir      string // working directory
		args     []string
		wantRoot string   // the absolute repository root; "" for none
		wantURIs []string // decoded
	}{
		{name: "subdirectory by absolute path", dir: outside, args: []string{filepath.Join(repo, "sub", "dir")}, wantRoot: repo,
			wantURIs: []string{"sub/dir/.github/phasegate.yml", "sub/dir/.pace/day-2/gate-report.yaml"}},
		{name: "subdirectory from a subdirectory", dir: filepath.Join(repo, "sub"), args: []string{"dir"}, wantRoot: repo,
			wantURIs: []string{"sub/dir/.github/phasegate.yml", "sub/dir/.pace/day-2/gate-report.yaml"}},
		{name: "subdirectory from inside it", dir: filepath.Join(repo, "sub", "dir"), args: nil, wantRoot: repo,
			wantURIs: []string{"sub/dir/.github/phasegate.yml", "sub/dir/.pace/day-2/gate-report.yaml"}},
		{name: "a file", dir: repo, args: []string{"sub/dir/.pace/day-2/gate-report.yaml"}, wantRoot: repo,
			wantURIs: []string{"sub/dir/.pace/day-2/gate-report.yaml"}},
		{name: "several paths", dir: filepath.Join(repo, "sub"), args: []string{"dir", "../sub/other"}, wantRoot: repo,
			wantURIs: []string{"sub/dir/.github/phasegate.yml", "sub/dir/.pace/day-2/gate-report.yaml",
				"sub/other/.pace/day-1/gate-report.yaml", "sub/other/.pace/day-1/gate-report.yaml"}}, // two schema findings there
		{name: "config given apart", dir: filepath.Join(repo, "sub"), args: []string{"--config", "../broken-config.yml", "dir"}, wantRoot: repo,
			wantURIs: []string{"broken-config.yml", "sub/dir/.pace/day-2/gate-report.yaml"}},
		{name: "a marker directory", dir: repo, args: []string{"sub/dir/.pace"}, wantRoot: repo,
			wantURIs: []string{"sub/dir/.pace/day-2/gate-report.yaml"}},
		{name: "a marker directory among several paths", dir: filepath.Join(repo, "sub"), args: []string{"dir/.pace", "other"}, wantRoot: repo,
			wantURIs: []string{"sub/dir/.pace/day-2/gate-report.yaml", "sub/other/.pace/day-1/gate-report.yaml", "sub/other/.pace/day-1/gate-report.yaml"}},
		{name: "a worktree", dir: outside, args: []string{filepath.Join(worktree, "sub", "dir")}, wantRoot: worktree,
			wantURIs: []string{"sub/dir/.github/phasegate.yml", "sub/dir/.pace/day-2/gate-report.yaml"}},
		{name: "outside a repository", dir: outside, args: []string{"sub/dir"},
			wantURIs: []string{".github/phasegate.yml", ".pace/day-2/gate-report.yaml"}},
		{name: "paths in two repositories", dir: outside, args: []string{filepath.Join(repo, "sub", "dir"), filepath.Join(worktree, "sub", "dir")},
			wantURIs: []string{
				filepath.ToSlash(filepath.Join(repo, "sub", "dir")) + "/.pace/day-2/gate-report.yaml",
				filepath.ToSlash(filepath.Join(repo, "sub", "dir", ".github", "phasegate.yml")),
				filepath.ToSlash(filepath.Join(worktree, "sub", "dir")) + "/.pace/day-2/gate-report.yaml",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(tt.dir)
			got := run(t, append([]string{"validate", "--format", "sarif"}, tt.args...)...)
			if got.code != ExitFindings || got.stderr != "" {
				t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
			}
			root, uris := sariftest.Locations(t, []byte(got.stdout))
			wantRoot := ""
			if tt.wantRoot != "" {
				wantRoot = report.DirURI(tt.wantRoot)
			}
			if root != wantRoot {
				t.Errorf("%%SRCROOT%% = %q, want %q", root, wantRoot)
			}
			slices.Sort(uris)
			want := slices.Sorted(slices.Values(tt.wantURIs))
			if !slices.Equal(uris, want) {
				t.Errorf("uris = %q, want %q", uris, want)
			}
			for _, p := range uris {
				if tt.wantRoot == "" {
					continue
				}
				if _, err := os.Stat(filepath.Join(tt.wantRoot, filepath.FromSlash(p))); err != nil {
					t.Errorf("uri %q names no file of the repository: %v", p, err)
				}
			}
		})
	}
	t.Run("json keeps files relative to the checked root", func(t *testing.T) {
		t.Chdir(filepath.Join(repo, "sub"))
		got := run(t, "validate", "--format", "json", "dir")
		var rep jsonReport
		decodeStrict(t, got.stdout, &rep)
		var files []string
		for _, f := range rep.Findings {
			files = append(files, f.File)
		}
		if want := []string{".github/phasegate.yml", ".pace/day-2/gate-report.yaml"}; !slices.Equal(files, want) {
			t.Errorf("files = %q, want %q", files, want)
		}
	})
}

// TestReconcileFailureIsNotSuccess: when reconciling fails, nothing that
// looks like a success is printed; the error and what was done before it go
// to stderr, and the exit code is 2.
func TestReconcileFailureIsNotSuccess(t *testing.T) {
	f := ghfake.New()
	defer f.Close()
	f.AddToken("tok", "github-actions[bot]")
	f.AddRepo("acme", "shop", "main")
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{name: "token GitHub refuses", env: map[string]string{"GITHUB_TOKEN": "not-a-token", "GITHUB_API_URL": f.URL(), "GITHUB_REPOSITORY": "acme/shop"},
			want: []string{"reconciling acme/shop failed:", "401", "before the failure: 0 resolutions"}},
		{name: "unknown repository", env: map[string]string{"GITHUB_TOKEN": "tok", "GITHUB_API_URL": f.URL(), "GITHUB_REPOSITORY": "acme/gone"},
			want: []string{"reconciling acme/gone failed:", "404"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main([]string{"reconcile"}, func(k string) string { return tc.env[k] }, &stdout, &stderr)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d", code, ExitUsage)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing after a failure", stdout.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
		})
	}
}

// TestCommandHelp: every command of the table has its own usage, printed
// alike by `help NAME`, `NAME -h` and `NAME --help` on stdout with exit 0.
func TestCommandHelp(t *testing.T) {
	seen := map[string]string{}
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			want := run(t, "help", c.name)
			if want.code != ExitOK || want.stderr != "" {
				t.Fatalf("help %s: exit %d, stderr %q", c.name, want.code, want.stderr)
			}
			if !strings.HasPrefix(want.stdout, "Usage: phasegate "+c.name) {
				t.Errorf("help %s starts %q, want its own usage line", c.name, firstLine(want.stdout))
			}
			if !strings.Contains(want.stdout, c.name) || strings.Count(want.stdout, "\n") < 3 {
				t.Errorf("help %s is not a usage:\n%s", c.name, want.stdout)
			}
			for _, flag := range []string{"-h", "--help"} {
				got := run(t, c.name, flag)
				if got.code != ExitOK || got.stderr != "" || got.stdout != want.stdout {
					t.Errorf("%s %s: exit %d, stderr %q, stdout differs from help %s:\n%s", c.name, flag, got.code, got.stderr, c.name, got.stdout)
				}
			}
			checkHelpGolden(t, c.name, want.stdout)
			if other, dup := seen[want.stdout]; dup {
				t.Errorf("help %s prints the same usage as help %s", c.name, other)
			}
			seen[want.stdout] = c.name
			// The general help lists the command with its synopsis.
			if general := run(t, "help"); !strings.Contains(general.stdout, "  "+synopsis(c)+" ") {
				t.Errorf("general help does not list %q:\n%s", synopsis(c), general.stdout)
			}
		})
	}
}

// TestGeneralHelp: the general help lists the command table (golden).
func TestGeneralHelp(t *testing.T) {
	got := run(t, "help")
	if got.code != ExitOK || got.stderr != "" {
		t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
	}
	checkHelpGolden(t, "general", got.stdout)
	if noArgs := run(t); noArgs.stderr != got.stdout || noArgs.code != ExitUsage {
		t.Errorf("without arguments: exit %d and stderr differs from the help", noArgs.code)
	}
}

// checkHelpGolden compares a usage with testdata/help/NAME.txt
// (go test ./internal/cli -run 'Help' -update rewrites them).
func checkHelpGolden(t *testing.T, name, got string) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", "help", name+".txt"), []byte(got))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestGateJSONPipelineKey: gate --format json always has "pipeline", a list
// even when no pipeline artifact was found; validate's JSON never has it.
func TestGateJSONPipelineKey(t *testing.T) {
	empty := t.TempDir()
	withPipeline := testutil.WriteTree(t, t.TempDir(), map[string]string{".pace/day-1/gate-report.yaml": validGateReport})
	tests := []struct {
		name     string
		args     []string
		want     string // the raw value of "pipeline"; "" means absent
		wantCode int
	}{
		{name: "gate, no pipeline artifacts", args: []string{"gate", "--format", "json", empty}, want: "[]", wantCode: ExitOK},
		{name: "gate, a PACE day", args: []string{"gate", "--format", "json", withPipeline}, want: `[{"family":"pace"`, wantCode: ExitOK},
		{name: "validate", args: []string{"validate", "--format", "json", withPipeline}, want: "", wantCode: ExitOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := run(t, tc.args...)
			if got.code != tc.wantCode || got.stderr != "" {
				t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
			}
			var raw map[string]json.RawMessage
			if err := json.Unmarshal([]byte(got.stdout), &raw); err != nil {
				t.Fatal(err)
			}
			p, ok := raw["pipeline"]
			switch {
			case tc.want == "" && ok:
				t.Errorf("pipeline = %s, want no pipeline key", p)
			case tc.want != "" && !ok:
				t.Errorf("no pipeline key:\n%s", got.stdout)
			case tc.want != "":
				var compact bytes.Buffer
				if err := json.Compact(&compact, p); err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(compact.String(), tc.want) {
					t.Errorf("pipeline = %s, want it to start %s", compact.String(), tc.want)
				}
			}
		})
	}
}

// TestJSONOutputsKeepHTMLCharacters: `<`, `>` and `&` in a finding reach
// every JSON output as written, never as \u003c, \u003e, \u0026.
func TestJSONOutputsKeepHTMLCharacters(t *testing.T) {
	root := testutil.WriteTree(t, t.TempDir(), map[string]string{
		".pace/day-1/gate-report.yaml": strings.Replace(validGateReport, "gate_decision: SHIP", `gate_decision: "<SHIP & HOLD>"`, 1),
	})
	for _, args := range [][]string{
		{"validate", "--format", "json", root},
		{"gate", "--format", "json", root},
		{"validate", "--format", "sarif", root},
	} {
		t.Run(strings.Join(args[:3], " "), func(t *testing.T) {
			got := run(t, args...)
			if got.code != ExitFindings {
				t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
			}
			if !strings.Contains(got.stdout, "<SHIP & HOLD>") {
				t.Errorf("the finding's text is not as written:\n%s", got.stdout)
			}
			for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
				if strings.Contains(got.stdout, esc) {
					t.Errorf("output escapes %s:\n%s", esc, got.stdout)
				}
			}
		})
	}
}
