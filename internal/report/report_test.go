package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/gate"
	"github.com/phasegate/phasegate/internal/testutil"
)

// testVersion is the version the golden files are rendered with.
const testVersion = "1.2.3-test"

// realisticFindings are what a run over a small repository with problems in
// three pipeline families could report: several files, errors and warnings,
// a finding without a position, and messages and paths carrying what agents
// write (Markdown, HTML, a link, ANSI escapes, a bidi override, newlines,
// braces, percent signs, workflow-command text, non-ASCII).
func realisticFindings() []check.Finding {
	fs := []check.Finding{
		{File: ".pace/day-1/gate-report.yaml", Line: 1, Column: 1, Kind: "pace.gate-report", Rule: check.RuleSchema, Severity: check.SeverityError,
			Message: "missing required field `deferred`"},
		{File: ".pace/day-1/gate-report.yaml", Line: 9, Column: 16, Kind: "pace.gate-report", Rule: "pace.gate.hold-iff-fail", Severity: check.SeverityError,
			Message: "`gate_decision` is SHIP but criterion 2 is FAIL: **ship it** <script>alert(1)</script> [details](https://evil.example/x)"},
		{File: ".pace/day-1/gate-report.yaml", Line: 12, Column: 5, Kind: "pace.gate-report", Rule: "pace.gate.evidence-nonempty", Severity: check.SeverityWarning,
			Message: "criterion \"Ünïcödé ✓ 日本語 — naïve café\" cites no evidence"},
		{File: ".pipeline/ISSUE-42/review-result.yaml", Line: 3, Column: 9, Kind: "jg.review-result", Rule: check.RuleSchema, Severity: check.SeverityError,
			Message: "`verdict` must be one of \"PASS\", \"FAIL\"; got \"\x1b[32mPASS\x1b[0m\""},
		{File: ".pipeline/ISSUE-42/review-result.yaml", Line: 7, Column: 1, Kind: "jg.review-result", Rule: "yaml.duplicate-key", Severity: check.SeverityError,
			Message: "duplicate key \"verdict\": the later value would silently replace the earlier one"},
		{File: "artifacts/task 7/verdict.json", Line: 0, Column: 0, Kind: "scc.verdict", Rule: "io.read", Severity: check.SeverityError,
			Message: "could not read the file: permission denied"},
		{File: "docs/outcomes/phase #2: α,β.yaml", Line: 4, Column: 3, Kind: "outcome.phase-outcome", Rule: "outcome.decision-options", Severity: check.SeverityWarning,
			Message: "decision D-001 lists no options {recommended} \u202eexe.yaml\u202c\nline2\r::error::pwned %0A 100%"},
	}
	check.Sort(fs)
	return fs
}

func realisticReport() Report {
	fs := realisticFindings()
	return Report{Verdict: gate.FromFindings(fs), Artifacts: 4, Findings: fs, Version: testVersion}
}

func emptyReport() Report {
	return Report{Verdict: gate.FromFindings(nil), Artifacts: 0, Version: testVersion}
}

// fixedCatalogue stands in for the rule layer's catalogue in golden tests,
// so that rewording a rule in internal/check does not change these goldens
// (TestDescribeRuleUsesCatalogue covers the real catalogue).
func fixedCatalogue() map[string]check.Rule {
	return map[string]check.Rule{
		"pace.gate.hold-iff-fail":     {ID: "pace.gate.hold-iff-fail", Severity: check.SeverityError, Basis: "S", Summary: "`gate_decision` is HOLD exactly when at least one criterion result is FAIL."},
		"pace.gate.evidence-nonempty": {ID: "pace.gate.evidence-nonempty", Severity: check.SeverityWarning, Basis: "I", Summary: "Every criterion result cites evidence."},
	}
}

// withFixedCatalogue swaps the catalogue for the duration of a test.
func withFixedCatalogue(t *testing.T) {
	t.Helper()
	saved := catalogue
	catalogue = fixedCatalogue
	t.Cleanup(func() { catalogue = saved })
}

func render(t *testing.T, format string, r Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, format, r); err != nil {
		t.Fatalf("Write(%s): %v", format, err)
	}
	return buf.Bytes()
}

// TestGolden renders the same reports in every format and compares them
// with the files under testdata/golden.
func TestGolden(t *testing.T) {
	withFixedCatalogue(t)
	reports := []struct {
		name   string
		report Report
	}{
		{name: "realistic", report: realisticReport()},
		{name: "empty", report: emptyReport()},
	}
	formats := []struct {
		format string
		ext    string
	}{
		{format: "text", ext: "txt"},
		{format: "json", ext: "json"},
		{format: "sarif", ext: "sarif"},
		{format: "github", ext: "github.txt"},
	}
	if got := len(formats); got != len(Formats) {
		t.Fatalf("the golden test covers %d formats, report.Formats has %d", got, len(Formats))
	}
	for _, rep := range reports {
		for _, f := range formats {
			t.Run(rep.name+"/"+f.format, func(t *testing.T) {
				out := render(t, f.format, rep.report)
				testutil.Golden(t, filepath.Join("testdata", "golden", rep.name+"."+f.ext), out)
				// Rendering twice gives the same bytes.
				if again := render(t, f.format, rep.report); !bytes.Equal(out, again) {
					t.Errorf("%s output is not deterministic", f.format)
				}
			})
		}
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	var buf bytes.Buffer
	err := Write(&buf, "xml", emptyReport())
	if err == nil {
		t.Fatal("Write with an unknown format succeeded")
	}
	for _, f := range Formats {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not list format %q", err, f)
		}
	}
	if buf.Len() != 0 {
		t.Errorf("Write with an unknown format wrote %q", buf.String())
	}
}

type failingWriter struct{}

var errDiskFull = errors.New("disk full")

func (failingWriter) Write([]byte) (int, error) { return 0, errDiskFull }

func TestWriteReturnsWriterErrors(t *testing.T) {
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			err := Write(failingWriter{}, format, realisticReport())
			if !errors.Is(err, errDiskFull) {
				t.Errorf("Write(%s) to a failing writer = %v, want an error wrapping %v", format, err, errDiskFull)
			}
		})
	}
}

// TestJSONShape decodes --format json into exactly the public JSON shape (README, output formats).
func TestJSONShape(t *testing.T) {
	tests := []struct {
		name         string
		report       Report
		wantVerdict  string
		wantFindings int
		wantReasons  int
	}{
		{name: "realistic", report: realisticReport(), wantVerdict: "HOLD", wantFindings: 7, wantReasons: 4},
		{name: "empty", report: emptyReport(), wantVerdict: "SHIP", wantFindings: 0, wantReasons: 0},
		{name: "nil reasons", report: Report{Verdict: gate.Result{Verdict: gate.Ship}}, wantVerdict: "SHIP", wantFindings: 0, wantReasons: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := render(t, "json", tt.report)
			var top map[string]json.RawMessage
			if err := json.Unmarshal(out, &top); err != nil {
				t.Fatalf("output is not one JSON object: %v\n%s", err, out)
			}
			if got, want := sortedKeys(top), []string{"artifacts", "findings", "format_version", "reasons", "verdict"}; !slices.Equal(got, want) {
				t.Fatalf("top-level keys = %v, want %v", got, want)
			}
			if got := string(top["format_version"]); got != "1" {
				t.Errorf("format_version = %s, want 1 (docs/cli.md)", got)
			}
			for _, key := range []string{"findings", "reasons"} {
				if string(top[key]) == "null" {
					t.Errorf("%s is null, want a list", key)
				}
			}
			var out2 struct {
				Verdict   string                       `json:"verdict"`
				Reasons   []string                     `json:"reasons"`
				Artifacts int                          `json:"artifacts"`
				Findings  []map[string]json.RawMessage `json:"findings"`
			}
			if err := json.Unmarshal(out, &out2); err != nil {
				t.Fatal(err)
			}
			if out2.Verdict != tt.wantVerdict {
				t.Errorf("verdict = %q, want %q", out2.Verdict, tt.wantVerdict)
			}
			if len(out2.Reasons) != tt.wantReasons {
				t.Errorf("%d reasons, want %d", len(out2.Reasons), tt.wantReasons)
			}
			if out2.Artifacts != tt.report.Artifacts {
				t.Errorf("artifacts = %d, want %d", out2.Artifacts, tt.report.Artifacts)
			}
			if len(out2.Findings) != tt.wantFindings {
				t.Fatalf("%d findings, want %d", len(out2.Findings), tt.wantFindings)
			}
			for i, f := range out2.Findings {
				if got, want := sortedKeys(f), []string{"column", "file", "kind", "line", "message", "rule", "severity"}; !slices.Equal(got, want) {
					t.Errorf("finding %d keys = %v, want %v", i, got, want)
				}
				var decoded check.Finding
				raw, _ := json.Marshal(f)
				if err := json.Unmarshal(raw, &decoded); err != nil {
					t.Fatal(err)
				}
				if decoded != tt.report.Findings[i] {
					t.Errorf("finding %d decodes to %+v, want %+v (escaping must not change values)", i, decoded, tt.report.Findings[i])
				}
			}
		})
	}
}

// TestJSONIsSafeToPrint checks that bidi and C1 controls never reach the
// output raw, while the decoded strings keep them.
func TestJSONIsSafeToPrint(t *testing.T) {
	tests := []struct {
		name    string
		message string
	}{
		{name: "bidi override", message: "safe\u202etxt.exe"},
		{name: "isolate", message: "a\u2066b\u2069"},
		{name: "C1 CSI", message: "a\u009b31mred"},
		{name: "ANSI", message: "\x1b[31mred\x1b[0m"},
		{name: "line separator", message: "a\u2028b"},
	}
	for _, format := range []string{"json", "sarif"} {
		for _, tt := range tests {
			t.Run(format+"/"+tt.name, func(t *testing.T) {
				f := check.Finding{File: "a.yaml", Line: 1, Column: 1, Rule: "schema", Severity: check.SeverityError, Message: tt.message}
				out := render(t, format, Report{Findings: []check.Finding{f}, Verdict: gate.FromFindings([]check.Finding{f})})
				// Newlines indent the JSON; nothing else may need escaping.
				if flat := strings.ReplaceAll(string(out), "\n", ""); Terminal(flat) != flat {
					t.Errorf("output contains characters that are unsafe to print:\n%q", out)
				}
				if format == "json" {
					var got struct {
						Findings []check.Finding `json:"findings"`
					}
					if err := json.Unmarshal(out, &got); err != nil {
						t.Fatal(err)
					}
					if got.Findings[0].Message != tt.message {
						t.Errorf("decoded message = %q, want %q", got.Findings[0].Message, tt.message)
					}
				}
			})
		}
	}
}

// TestJSONKeepsHTMLCharacters: `<`, `>` and `&` are written as they are in
// every JSON format (encoding/json would write \u003c, \u003e, \u0026),
// in messages, files and the reasons, and decode to the same text.
func TestJSONKeepsHTMLCharacters(t *testing.T) {
	f := check.Finding{File: "docs/a&b <c>.yaml", Line: 1, Column: 1, Kind: "scc.submit", Rule: "scc.submit.artifact-under-task", Severity: check.SeverityError,
		Message: "`artifacts.report_md` is \"<path to report.md>\", not under artifacts/<task_id>/ & more"}
	r := Report{Findings: []check.Finding{f}, Verdict: gate.FromFindings([]check.Finding{f}), Version: testVersion}
	for _, tc := range []struct {
		format string
		want   []string
	}{
		{format: "json", want: []string{`"docs/a&b <c>.yaml"`, `\"<path to report.md>\", not under artifacts/<task_id>/ & more`}},
		{format: "sarif", want: []string{`"docs/a%26b%20%3Cc%3E.yaml"`, `\"<path to report.md>\", not under artifacts/<task_id>/ & more`}},
	} {
		t.Run(tc.format, func(t *testing.T) {
			out := string(render(t, tc.format, r))
			for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
				if strings.Contains(out, esc) {
					t.Errorf("output escapes %s:\n%s", esc, out)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %s:\n%s", w, out)
				}
			}
			var v any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("not JSON: %v", err)
			}
		})
	}
	data, err := EncodeJSON(map[string]string{"m": "<&>"})
	if err != nil || string(data) != "{\n  \"m\": \"<&>\"\n}\n" {
		t.Errorf("EncodeJSON = %q, %v", data, err)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestTextReport(t *testing.T) {
	tests := []struct {
		name      string
		report    Report
		wantLines []string
	}{
		{
			name:      "empty run",
			report:    emptyReport(),
			wantLines: []string{"0 artifacts checked: 0 errors, 0 warnings — SHIP"},
		},
		{
			name: "one warning",
			report: Report{Artifacts: 1, Verdict: gate.Result{Verdict: gate.Advisory}, Findings: []check.Finding{
				{File: "a.yaml", Line: 2, Column: 3, Rule: "r.x", Severity: check.SeverityWarning, Message: "m"},
			}},
			wantLines: []string{"a.yaml:2:3: warning r.x: m", "", "1 artifact checked: 0 errors, 1 warning — ADVISORY"},
		},
		{
			name: "blank line between files, escapes",
			report: Report{Artifacts: 2, Verdict: gate.Result{Verdict: gate.Hold}, Findings: []check.Finding{
				{File: "a.yaml", Line: 1, Column: 1, Rule: "schema", Severity: check.SeverityError, Message: "x\x1b[2Jy"},
				{File: "a.yaml", Line: 2, Column: 1, Rule: "schema", Severity: check.SeverityError, Message: "two\nlines"},
				{File: "b\u202e.yaml", Line: 1, Column: 1, Rule: "schema", Severity: check.SeverityWarning, Message: "ok"},
			}},
			wantLines: []string{
				`a.yaml:1:1: error schema: x\u001b[2Jy`,
				`a.yaml:2:1: error schema: two\u000alines`,
				"",
				`b\u202e.yaml:1:1: warning schema: ok`,
				"",
				"2 artifacts checked: 2 errors, 1 warning — HOLD",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := string(render(t, "text", tt.report))
			if !strings.HasSuffix(out, "\n") {
				t.Fatalf("output does not end with a newline: %q", out)
			}
			got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if !reflect.DeepEqual(got, tt.wantLines) {
				t.Errorf("lines:\n%q\nwant:\n%q", got, tt.wantLines)
			}
		})
	}
}

func TestTerminal(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "plain ascii unchanged", in: "file.yaml:3: missing `x`", want: "file.yaml:3: missing `x`"},
		{name: "unicode unchanged", in: "Ünïcödé ✓ 日本語 🙂", want: "Ünïcödé ✓ 日本語 🙂"},
		{name: "replacement char kept", in: "a\uFFFDb", want: "a\uFFFDb"},
		{name: "empty", in: "", want: ""},
		{name: "ANSI colour", in: "\x1b[31mred\x1b[0m", want: `\u001b[31mred\u001b[0m`},
		{name: "OSC 8 hyperlink", in: "\x1b]8;;https://evil\x07x\x1b]8;;\x07", want: `\u001b]8;;https://evil\u0007x\u001b]8;;\u0007`},
		{name: "newline and carriage return", in: "a\nb\rc", want: `a\u000ab\u000dc`},
		{name: "tab", in: "a\tb", want: `a\u0009b`},
		{name: "NUL and DEL", in: "a\x00b\x7f", want: `a\u0000b\u007f`},
		{name: "C1 CSI as a rune", in: "a\u009b2J", want: `a\u009b2J`},
		{name: "lone invalid byte", in: "a\x9b2J", want: `a\x9b2J`},
		{name: "truncated UTF-8", in: "ab\xe6\x97", want: `ab\xe6\x97`},
		{name: "RLO", in: "invoice\u202egpj.exe", want: `invoice\u202egpj.exe`},
		{name: "LRE PDF", in: "\u202ax\u202c", want: `\u202ax\u202c`},
		{name: "isolates", in: "\u2066\u2067\u2068\u2069", want: `\u2066\u2067\u2068\u2069`},
		{name: "marks", in: "\u200e\u200f\u061c", want: `\u200e\u200f\u061c`},
		{name: "line and paragraph separators", in: "a\u2028b\u2029c", want: `a\u2028b\u2029c`},
		{name: "zero width joiner kept", in: "👩\u200d💻", want: "👩\u200d💻"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Terminal(tt.in)
			if got != tt.want {
				t.Errorf("Terminal(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if Terminal(got) != got {
				t.Errorf("Terminal is not idempotent on %q", got)
			}
		})
	}
}

// sgr matches the colour sequences the text format writes.
var sgr = regexp.MustCompile(`\x1b\[(0|1|1;31|33|1;32)m`)

// TestTextColor: with Color, the text format adds colour sequences and
// nothing else, and an artifact's own escape sequences stay escaped.
func TestTextColor(t *testing.T) {
	reports := []struct {
		name   string
		report Report
	}{
		{name: "realistic", report: realisticReport()},
		{name: "empty", report: emptyReport()},
		{name: "pipeline", report: Report{Verdict: gate.Result{Verdict: gate.Advisory, Reasons: []string{"ADVISORY: \x1b[1;32mSHIP\x1b[0m"}}, Artifacts: 1,
			Pipeline: []check.Status{{Family: "pace", Unit: "PACE day 1", State: "GATE SHIP"}}}},
	}
	for _, rep := range reports {
		t.Run(rep.name, func(t *testing.T) {
			plain := render(t, "text", rep.report)
			rep.report.Color = true
			colored := render(t, "text", rep.report)
			if bytes.Equal(plain, colored) {
				t.Fatal("Color changed nothing")
			}
			stripped := sgr.ReplaceAll(colored, nil)
			if !bytes.Equal(stripped, plain) {
				t.Errorf("without its colour sequences the output differs from the plain one:\n%s\n---\n%s", stripped, plain)
			}
			if bytes.ContainsRune(stripped, 0x1b) {
				t.Errorf("an escape sequence that is not phasegate's reached the output:\n%q", stripped)
			}
			testutil.Golden(t, filepath.Join("testdata", "golden", rep.name+".color.txt"), colored)
		})
	}
}

// TestJSONPipeline: the pipeline key is absent without a pipeline (validate)
// and a list, never null or absent, with one (gate), even an empty one.
func TestJSONPipeline(t *testing.T) {
	tests := []struct {
		name     string
		pipeline []check.Status
		want     string // raw JSON; "" means no key
	}{
		{name: "validate", pipeline: nil, want: ""},
		{name: "gate, none found", pipeline: []check.Status{}, want: "[]"},
		{name: "gate, one unit", pipeline: []check.Status{{Family: "pace", Unit: "PACE day 1", State: "GATE SHIP"}}, want: `[{"family":"pace","unit":"PACE day 1","state":"GATE SHIP"}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := emptyReport()
			r.Pipeline = tc.pipeline
			var top map[string]json.RawMessage
			if err := json.Unmarshal(render(t, "json", r), &top); err != nil {
				t.Fatal(err)
			}
			raw, ok := top["pipeline"]
			if tc.want == "" {
				if ok {
					t.Errorf("pipeline = %s, want no key", raw)
				}
				return
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, raw); err != nil {
				t.Fatalf("pipeline = %q: %v", raw, err)
			}
			if compact.String() != tc.want {
				t.Errorf("pipeline = %s, want %s", compact.String(), tc.want)
			}
		})
	}
}
