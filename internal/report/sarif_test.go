package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/gate"
	"github.com/phasegate/phasegate/internal/testutil"
	"github.com/phasegate/phasegate/internal/testutil/sariftest"
)

// validateSARIF validates a log against the official schema.
func validateSARIF(t *testing.T, log []byte) error {
	t.Helper()
	return sariftest.Validate(log)
}

// TestSARIFValidAgainstOfficialSchema renders logs for the situations that
// stress the format and validates each against the OASIS schema.
func TestSARIFValidAgainstOfficialSchema(t *testing.T) {
	one := func(f check.Finding) Report {
		fs := []check.Finding{f}
		return Report{Artifacts: 1, Findings: fs, Verdict: gate.FromFindings(fs), Version: testVersion}
	}
	tests := []struct {
		name   string
		report Report
	}{
		{name: "realistic", report: realisticReport()},
		{name: "empty run", report: emptyReport()},
		{name: "no version", report: Report{Verdict: gate.FromFindings(nil)}},
		{name: "line and column 0", report: one(check.Finding{File: "a.yaml", Rule: "io.read", Severity: check.SeverityError, Message: "unreadable"})},
		{name: "negative position", report: one(check.Finding{File: "a.yaml", Line: -3, Column: -1, Rule: "schema", Severity: check.SeverityError, Message: "x"})},
		{name: "no file", report: one(check.Finding{Rule: "config", Severity: check.SeverityError, Message: "whole run"})},
		{name: "empty message", report: one(check.Finding{File: "a.yaml", Line: 1, Column: 1, Rule: "schema", Severity: check.SeverityError})},
		{name: "unknown rule", report: one(check.Finding{File: "a.yaml", Line: 1, Column: 1, Rule: "x.y-z", Severity: check.SeverityWarning, Message: "m"})},
		{name: "hostile path", report: one(check.Finding{File: "a:b/%7e #1?q=1&r\\s [x] ü.yaml", Line: 2, Column: 2, Rule: "schema", Severity: check.SeverityError, Message: "m"})},
		{name: "absolute-looking path", report: one(check.Finding{File: "/tmp/x y/a.yaml", Line: 2, Column: 2, Rule: "schema", Severity: check.SeverityError, Message: "m"})},
		{name: "invalid UTF-8 in message", report: one(check.Finding{File: "a.yaml", Line: 1, Column: 1, Rule: "schema", Severity: check.SeverityError, Message: "bad \xff byte"})},
		{name: "repository root", report: repoReport()},
		{name: "repository root with hostile characters", report: func() Report {
			r := one(check.Finding{File: "sub/a.yaml", Line: 1, Column: 1, Rule: "schema", Severity: check.SeverityError, Message: "m"})
			r.SourceRoot = DirURI("/home/x y/%7e #1?q=ü/repo")
			return r
		}()},
		{name: "windows repository root", report: func() Report {
			r := one(check.Finding{File: "sub/a.yaml", Line: 1, Column: 1, Rule: "schema", Severity: check.SeverityError, Message: "m"})
			r.SourceRoot = DirURI(`C:\work\repo`)
			return r
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := render(t, "sarif", tt.report)
			if err := validateSARIF(t, out); err != nil {
				t.Errorf("log is not valid SARIF 2.1.0: %v\n%s", err, out)
			}
			// GitHub's ingestion rule beyond the schema: one result
			// without a location, or without a uri, fails the whole
			// upload.
			var log decodedLog
			if err := json.Unmarshal(out, &log); err != nil {
				t.Fatal(err)
			}
			for i, r := range log.Runs[0].Results {
				if len(r.Locations) == 0 || r.Locations[0].PhysicalLocation.ArtifactLocation.URI == "" {
					t.Errorf("result %d (%s) has no location with a uri: code scanning would reject the log", i, r.RuleID)
				}
			}
		})
	}
}

// TestSARIFRunLevelFindings checks that a finding about the run rather than
// a file becomes a notification of the invocation, at its level, and not a
// result without a location (which code scanning rejects).
func TestSARIFRunLevelFindings(t *testing.T) {
	fs := []check.Finding{
		{Rule: "discovery.nothing-found", Severity: check.SeverityWarning, Message: "no artifact found under {sub}"},
		{Rule: "config", Severity: check.SeverityError, Message: "whole run"},
		{File: "a.yaml", Line: 2, Column: 1, Rule: "schema", Severity: check.SeverityError, Message: "m"},
	}
	var buf bytes.Buffer
	if err := writeSARIF(&buf, Report{Findings: fs, Verdict: gate.FromFindings(fs)}, 1); err != nil {
		t.Fatal(err)
	}
	if err := validateSARIF(t, buf.Bytes()); err != nil {
		t.Fatalf("not valid SARIF: %v", err)
	}
	var log decodedLog
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if len(run.Results) != 1 || run.Results[0].RuleID != "schema" {
		t.Errorf("results = %+v, want the one finding with a file", run.Results)
	}
	type note struct{ level, text string }
	var got []note
	for _, n := range run.Invocations[0].Notifications {
		got = append(got, note{n.Level, n.Message.Text})
	}
	want := []note{
		{"warning", "discovery.nothing-found: no artifact found under {{sub}}"},
		{"error", "config: whole run"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("notifications = %q, want %q", got, want)
	}
}

// TestSARIFSchemaRejectsInvalidLogs shows that the schema check above can
// fail: each log breaks one rule of SARIF 2.1.0.
func TestSARIFSchemaRejectsInvalidLogs(t *testing.T) {
	valid := render(t, "sarif", realisticReport())
	tests := []struct {
		name   string
		mutate func(log map[string]any)
	}{
		{name: "startLine 0", mutate: func(log map[string]any) {
			region(log)["startLine"] = 0
		}},
		{name: "unknown level", mutate: func(log map[string]any) {
			result0(log)["level"] = "fatal"
		}},
		{name: "no message", mutate: func(log map[string]any) {
			delete(result0(log), "message")
		}},
		{name: "uri with a backslash", mutate: func(log map[string]any) {
			artifactLocation(log)["uri"] = `a\b.yaml`
		}},
		{name: "uri with a bad escape", mutate: func(log map[string]any) {
			artifactLocation(log)["uri"] = "a%zz.yaml"
		}},
		{name: "wrong version", mutate: func(log map[string]any) {
			log["version"] = "2.0.0"
		}},
		{name: "unknown property", mutate: func(log map[string]any) {
			result0(log)["severity"] = "error"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log map[string]any
			if err := json.Unmarshal(valid, &log); err != nil {
				t.Fatal(err)
			}
			tt.mutate(log)
			broken, err := json.Marshal(log)
			if err != nil {
				t.Fatal(err)
			}
			if err := validateSARIF(t, broken); err == nil {
				t.Errorf("the schema accepted a log with %s", tt.name)
			}
		})
	}
}

func run0(log map[string]any) map[string]any {
	return log["runs"].([]any)[0].(map[string]any)
}

func result0(log map[string]any) map[string]any {
	return run0(log)["results"].([]any)[0].(map[string]any)
}

func physical0(log map[string]any) map[string]any {
	return result0(log)["locations"].([]any)[0].(map[string]any)["physicalLocation"].(map[string]any)
}

func region(log map[string]any) map[string]any { return physical0(log)["region"].(map[string]any) }

func artifactLocation(log map[string]any) map[string]any {
	return physical0(log)["artifactLocation"].(map[string]any)
}

// decodedLog is the part of a SARIF log the structural tests look at.
type decodedLog struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name           string `json:"name"`
				Version        string `json:"version"`
				InformationURI string `json:"informationUri"`
				Rules          []struct {
					ID                   string `json:"id"`
					Name                 string `json:"name"`
					ShortDescription     struct{ Text string }
					FullDescription      struct{ Text string }
					HelpURI              string `json:"helpUri"`
					DefaultConfiguration struct{ Level string }
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Invocations []struct {
			ExecutionSuccessful bool `json:"executionSuccessful"`
			Notifications       []struct {
				Level   string
				Message struct{ Text string }
			} `json:"toolExecutionNotifications"`
		} `json:"invocations"`
		OriginalURIBaseIDs map[string]json.RawMessage `json:"originalUriBaseIds"`
		AutomationDetails  struct{ ID string }        `json:"automationDetails"`
		Results            []decodedResult            `json:"results"`
	} `json:"runs"`
}

type decodedResult struct {
	RuleID    string `json:"ruleId"`
	RuleIndex int    `json:"ruleIndex"`
	Level     string `json:"level"`
	Message   struct{ Text string }
	Locations []struct {
		PhysicalLocation struct {
			ArtifactLocation struct {
				URI       string `json:"uri"`
				URIBaseID string `json:"uriBaseId"`
			} `json:"artifactLocation"`
			Region struct {
				StartLine   int `json:"startLine"`
				StartColumn int `json:"startColumn"`
			} `json:"region"`
		} `json:"physicalLocation"`
	} `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
}

func decodeSARIF(t *testing.T, r Report) decodedLog {
	t.Helper()
	var log decodedLog
	if err := json.Unmarshal(render(t, "sarif", r), &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(log.Runs))
	}
	return log
}

// TestSARIFStructure checks what GitHub code scanning relies on.
func TestSARIFStructure(t *testing.T) {
	withFixedCatalogue(t)
	rep := realisticReport()
	log := decodeSARIF(t, rep)
	run := log.Runs[0]

	if log.Schema != "https://json.schemastore.org/sarif-2.1.0.json" || log.Version != "2.1.0" {
		t.Errorf("$schema, version = %q, %q", log.Schema, log.Version)
	}
	d := run.Tool.Driver
	if d.Name != "phasegate" || d.Version != testVersion || d.InformationURI != "https://github.com/phasegate/phasegate" {
		t.Errorf("driver = %q %q %q", d.Name, d.Version, d.InformationURI)
	}
	if run.AutomationDetails.ID != "phasegate/" {
		t.Errorf("automationDetails.id = %q, want phasegate/", run.AutomationDetails.ID)
	}
	if len(run.Invocations) != 1 || !run.Invocations[0].ExecutionSuccessful {
		t.Errorf("invocations = %+v, want one that succeeded", run.Invocations)
	}
	if _, ok := run.OriginalURIBaseIDs["%SRCROOT%"]; !ok {
		t.Errorf("originalUriBaseIds has no %%SRCROOT%%: %v", run.OriginalURIBaseIDs)
	}

	// Rules: the distinct rule IDs of the findings, sorted, each documented.
	var wantIDs []string
	for _, f := range rep.Findings {
		if !slices.Contains(wantIDs, f.Rule) {
			wantIDs = append(wantIDs, f.Rule)
		}
	}
	slices.Sort(wantIDs)
	var gotIDs []string
	for _, r := range d.Rules {
		gotIDs = append(gotIDs, r.ID)
		if r.Name == "" || r.ShortDescription.Text == "" || r.FullDescription.Text == "" {
			t.Errorf("rule %s lacks a name or a description: %+v", r.ID, r)
		}
		if want := "https://github.com/phasegate/phasegate/blob/main/docs/rules.md#" + RuleAnchor(r.ID); r.HelpURI != want {
			t.Errorf("rule %s helpUri = %q, want %q", r.ID, r.HelpURI, want)
		}
		if r.DefaultConfiguration.Level != "error" && r.DefaultConfiguration.Level != "warning" {
			t.Errorf("rule %s default level = %q", r.ID, r.DefaultConfiguration.Level)
		}
	}
	if !slices.Equal(gotIDs, wantIDs) {
		t.Errorf("rules = %v, want %v", gotIDs, wantIDs)
	}

	// Results: one per finding, in order.
	if len(run.Results) != len(rep.Findings) {
		t.Fatalf("%d results, want %d", len(run.Results), len(rep.Findings))
	}
	seenFingerprints := map[string]bool{}
	for i, res := range run.Results {
		f := rep.Findings[i]
		if res.RuleID != f.Rule || d.Rules[res.RuleIndex].ID != f.Rule {
			t.Errorf("result %d: ruleId %q, rules[%d] = %q, want %q", i, res.RuleID, res.RuleIndex, d.Rules[res.RuleIndex].ID, f.Rule)
		}
		if res.Level != string(f.Severity) {
			t.Errorf("result %d level = %q, want %q", i, res.Level, f.Severity)
		}
		if res.Message.Text == "" {
			t.Errorf("result %d has an empty message", i)
		}
		if len(res.Locations) != 1 {
			t.Fatalf("result %d has %d locations, want 1", i, len(res.Locations))
		}
		pl := res.Locations[0].PhysicalLocation
		if pl.ArtifactLocation.URIBaseID != "%SRCROOT%" {
			t.Errorf("result %d uriBaseId = %q", i, pl.ArtifactLocation.URIBaseID)
		}
		if path, err := url.PathUnescape(pl.ArtifactLocation.URI); err != nil || path != f.File {
			t.Errorf("result %d uri %q decodes to %q (%v), want %q", i, pl.ArtifactLocation.URI, path, err, f.File)
		}
		if pl.Region.StartLine != max(1, f.Line) || pl.Region.StartColumn != max(1, f.Column) {
			t.Errorf("result %d region = %d:%d, finding at %d:%d", i, pl.Region.StartLine, pl.Region.StartColumn, f.Line, f.Column)
		}
		fp := res.PartialFingerprints["phasegateFindingHash/v1"]
		if fp == "" || seenFingerprints[fp] {
			t.Errorf("result %d fingerprint %q is empty or not unique", i, fp)
		}
		seenFingerprints[fp] = true
	}
}

func TestSARIFFingerprints(t *testing.T) {
	base := check.Finding{File: "a.yaml", Line: 3, Column: 1, Rule: "schema", Severity: check.SeverityError, Message: "m"}
	fingerprint := func(fs ...check.Finding) []string {
		log := decodeSARIF(t, Report{Findings: fs, Verdict: gate.FromFindings(fs)})
		var out []string
		for _, r := range log.Runs[0].Results {
			out = append(out, r.PartialFingerprints["phasegateFindingHash/v1"])
		}
		return out
	}
	moved := base
	moved.Line, moved.Column = 40, 7
	tests := []struct {
		name  string
		other check.Finding
		same  bool
	}{
		{name: "moved to another line", other: moved, same: true},
		{name: "other severity", other: check.Finding{File: "a.yaml", Line: 3, Column: 1, Rule: "schema", Severity: check.SeverityWarning, Message: "m"}, same: true},
		{name: "other message", other: check.Finding{File: "a.yaml", Line: 3, Column: 1, Rule: "schema", Severity: check.SeverityError, Message: "n"}},
		{name: "other file", other: check.Finding{File: "b.yaml", Line: 3, Column: 1, Rule: "schema", Severity: check.SeverityError, Message: "m"}},
		{name: "other rule", other: check.Finding{File: "a.yaml", Line: 3, Column: 1, Rule: "syntax", Severity: check.SeverityError, Message: "m"}},
		{name: "file and message do not run together", other: check.Finding{File: "a.yam", Line: 3, Column: 1, Rule: "schema", Severity: check.SeverityError, Message: "lm"}},
	}
	want := fingerprint(base)[0]
	if !strings.HasSuffix(want, ":1") {
		t.Errorf("fingerprint %q does not end with the occurrence :1", want)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fingerprint(tt.other)[0]
			if (got == want) != tt.same {
				t.Errorf("fingerprint %q vs %q: same = %v, want %v", got, want, got == want, tt.same)
			}
		})
	}
	t.Run("duplicates are told apart by occurrence", func(t *testing.T) {
		got := fingerprint(base, moved)
		if len(got) != 2 || got[0] == got[1] || got[0] != want || !strings.HasSuffix(got[1], ":2") {
			t.Errorf("fingerprints of two identical findings = %v", got)
		}
	})
}

func TestSARIFCapsResults(t *testing.T) {
	w := func(file string) check.Finding {
		return check.Finding{File: file, Line: 1, Column: 1, Rule: "pace.x", Severity: check.SeverityWarning, Message: "w"}
	}
	e := func(file string) check.Finding {
		return check.Finding{File: file, Line: 2, Column: 1, Rule: "schema", Severity: check.SeverityError, Message: "e"}
	}
	tests := []struct {
		name      string
		findings  []check.Finding
		limit     int
		wantFiles []string
		wantNote  string // substring of the notification; "" means none
	}{
		{name: "under the limit", findings: []check.Finding{w("a"), e("b")}, limit: 3, wantFiles: []string{"a", "b"}},
		{name: "at the limit", findings: []check.Finding{w("a"), e("b"), w("c")}, limit: 3, wantFiles: []string{"a", "b", "c"}},
		{name: "errors are kept first, order is kept", findings: []check.Finding{w("a"), w("b"), e("c"), w("d"), e("e")}, limit: 3,
			wantFiles: []string{"a", "c", "e"}, wantNote: "2 of 5 findings are not in this log: GitHub code scanning accepts at most 3 results"},
		{name: "only errors fit", findings: []check.Finding{w("a"), e("b"), e("c"), e("d")}, limit: 2,
			wantFiles: []string{"b", "c"}, wantNote: "2 of 4 findings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := writeSARIF(&buf, Report{Findings: tt.findings, Verdict: gate.FromFindings(tt.findings)}, tt.limit); err != nil {
				t.Fatal(err)
			}
			if err := validateSARIF(t, buf.Bytes()); err != nil {
				t.Fatalf("capped log is not valid SARIF: %v", err)
			}
			var log decodedLog
			if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
				t.Fatal(err)
			}
			var files []string
			for _, r := range log.Runs[0].Results {
				files = append(files, r.Locations[0].PhysicalLocation.ArtifactLocation.URI)
			}
			if !slices.Equal(files, tt.wantFiles) {
				t.Errorf("results for %v, want %v", files, tt.wantFiles)
			}
			notes := log.Runs[0].Invocations[0].Notifications
			switch {
			case tt.wantNote == "" && len(notes) != 0:
				t.Errorf("notifications = %+v, want none", notes)
			case tt.wantNote != "" && (len(notes) != 1 || notes[0].Level != "warning" || !strings.Contains(notes[0].Message.Text, tt.wantNote)):
				t.Errorf("notifications = %+v, want one warning containing %q", notes, tt.wantNote)
			}
		})
	}
}

// TestSARIFHoldsAtMostGitHubsLimit checks the limit SARIF really uses.
func TestSARIFHoldsAtMostGitHubsLimit(t *testing.T) {
	if MaxSARIFResults != 25_000 {
		t.Errorf("MaxSARIFResults = %d; GitHub code scanning rejects runs with more than 25,000 results", MaxSARIFResults)
	}
	if sarifLimit != MaxSARIFResults {
		t.Fatalf("SARIF caps at %d results, not MaxSARIFResults (%d)", sarifLimit, MaxSARIFResults)
	}
	// The cap, lowered: one past 25,000 results took 35 s under -race
	// (indenting 15 MB of JSON). Not parallel: the parallel tests, which
	// read sarifLimit, run after this one has restored it.
	sarifLimit = 250
	t.Cleanup(func() { sarifLimit = MaxSARIFResults })
	fs := make([]check.Finding, sarifLimit+1)
	for i := range fs {
		fs[i] = check.Finding{File: fmt.Sprintf("d/%05d.yaml", i), Line: 1, Column: 1, Rule: "pace.x", Severity: check.SeverityWarning, Message: "w"}
	}
	var log struct {
		Runs []struct {
			Results []json.RawMessage `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(render(t, "sarif", Report{Findings: fs, Verdict: gate.FromFindings(fs)}), &log); err != nil {
		t.Fatal(err)
	}
	if got := len(log.Runs[0].Results); got != sarifLimit {
		t.Errorf("%d results, want %d", got, sarifLimit)
	}
}

// uriRefChars are the unreserved characters, '/' and percent escapes: a
// path made only of them is a valid relative reference (RFC 3986).
var uriRefChars = regexp.MustCompile(`^(?:[A-Za-z0-9._~/-]|%[0-9A-F]{2})*$`)

func TestFileURI(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "plain", in: ".pace/day-1/gate-report.yaml", want: ".pace/day-1/gate-report.yaml"},
		{name: "tilde and underscore", in: "a_b/~c.json", want: "a_b/~c.json"},
		{name: "space", in: "task 7/verdict.json", want: "task%207/verdict.json"},
		{name: "colon would read as a scheme", in: "c:/x.yaml", want: "c%3A/x.yaml"},
		{name: "fragment and query", in: "a#1?b=2.yaml", want: "a%231%3Fb%3D2.yaml"},
		{name: "percent", in: "100%.yaml", want: "100%25.yaml"},
		{name: "backslash", in: `a\b.yaml`, want: "a%5Cb.yaml"},
		{name: "non-ASCII as UTF-8", in: "ü/日.yaml", want: "%C3%BC/%E6%97%A5.yaml"},
		{name: "brackets and comma", in: "[x],y.yaml", want: "%5Bx%5D%2Cy.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fileURI(tt.in)
			if got != tt.want {
				t.Errorf("fileURI(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if !uriRefChars.MatchString(got) {
				t.Errorf("%q has characters a URI does not allow unescaped", got)
			}
			u, err := url.Parse(got)
			if err != nil || u.Scheme != "" || u.Fragment != "" || u.RawQuery != "" {
				t.Errorf("%q is not a plain relative reference: %+v, %v", got, u, err)
			}
			if back, err := url.PathUnescape(got); err != nil || back != tt.in {
				t.Errorf("%q unescapes to %q (%v), want %q", got, back, err, tt.in)
			}
		})
	}
}

func TestEscapeSARIFText(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "plain", in: "missing field `x`", want: "missing field `x`"},
		{name: "array index kept", in: "`criteria_results[0].criterion` must not be empty", want: "`criteria_results[0].criterion` must not be empty"},
		{name: "braces doubled", in: "expected {a} or }{", want: "expected {{a}} or }}{{"},
		{name: "placeholder neutralised", in: "see {0}", want: "see {{0}}"},
		{name: "embedded link escaped", in: "see [docs](https://evil.example)", want: `see \[docs\](https://evil.example)`},
		{name: "location link escaped", in: "[here](1)", want: `\[here\](1)`},
		{name: "backslash escaped with a link", in: `a\[b](c)`, want: `a\\\[b\](c)`},
		{name: "backslash alone kept", in: `C:\dir`, want: `C:\dir`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := escapeSARIFText(tt.in); got != tt.want {
				t.Errorf("escapeSARIFText(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestRuleAnchorAndName(t *testing.T) {
	tests := []struct {
		id         string
		wantAnchor string
		wantName   string
	}{
		{id: "schema", wantAnchor: "schema", wantName: "Schema"},
		{id: "pace.gate.hold-iff-fail", wantAnchor: "pacegatehold-iff-fail", wantName: "PaceGateHoldIffFail"},
		{id: "limits.file-size", wantAnchor: "limitsfile-size", wantName: "LimitsFileSize"},
		{id: "jg.test_result.fail-v2", wantAnchor: "jgtest_resultfail-v2", wantName: "JgTestResultFailV2"},
		{id: "Scc.Verdict", wantAnchor: "sccverdict", wantName: "SccVerdict"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			if got := RuleAnchor(tt.id); got != tt.wantAnchor {
				t.Errorf("RuleAnchor(%q) = %q, want %q", tt.id, got, tt.wantAnchor)
			}
			if got := ruleName(tt.id); got != tt.wantName {
				t.Errorf("ruleName(%q) = %q, want %q", tt.id, got, tt.wantName)
			}
		})
	}
}

// TestDescribeRuleUsesCatalogue checks the real rule catalogue of
// internal/check: every rule there is documented from its own summary and
// default severity.
func TestDescribeRuleUsesCatalogue(t *testing.T) {
	rules := check.Rules()
	if len(rules) == 0 {
		t.Skip("the rule catalogue is empty")
	}
	for _, r := range rules {
		t.Run(r.ID, func(t *testing.T) {
			d := describeRule(r.ID, check.SeverityWarning)
			if d.Short != r.Summary || d.Level != r.Severity {
				t.Errorf("describeRule(%s) = %+v, want summary %q and level %s", r.ID, d, r.Summary, r.Severity)
			}
			if !strings.HasPrefix(d.Full, r.Summary) || !strings.Contains(d.Full, r.ID) {
				t.Errorf("full description %q does not start with the summary or name the rule", d.Full)
			}
		})
	}
}

func TestDescribeRuleFallback(t *testing.T) {
	tests := []struct {
		name      string
		id        string
		seen      check.Severity
		wantLevel check.Severity
		wantShort string
	}{
		{name: "builtin ignores seen", id: "syntax", seen: check.SeverityWarning, wantLevel: check.SeverityError, wantShort: "The file is well-formed YAML or JSON."},
		{name: "unknown uses seen warning", id: "nope.rule", seen: check.SeverityWarning, wantLevel: check.SeverityWarning, wantShort: "phasegate rule nope.rule."},
		{name: "unknown uses seen error", id: "nope.rule", seen: check.SeverityError, wantLevel: check.SeverityError, wantShort: "phasegate rule nope.rule."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := describeRule(tt.id, tt.seen)
			if d.Level != tt.wantLevel || d.Short != tt.wantShort || d.Full == "" {
				t.Errorf("describeRule(%q, %s) = %+v, want level %s, short %q", tt.id, tt.seen, d, tt.wantLevel, tt.wantShort)
			}
		})
	}
}

// repoReport is the realistic report as the CLI renders it for SARIF when
// it checked sub/dir of a git repository at /home/runner/work/shop/shop.
func repoReport() Report {
	r := realisticReport()
	r.Findings = Rebase(r.Findings, "sub/dir/")
	r.SourceRoot = "file:///home/runner/work/shop/shop/"
	return r
}

// TestSARIFSourceRoot checks %SRCROOT%: declared as the absolute repository
// root when the caller knows it, described only when it does not, and every
// result relative to it.
func TestSARIFSourceRoot(t *testing.T) {
	withFixedCatalogue(t)
	tests := []struct {
		name     string
		report   Report
		golden   string
		wantURI  string
		wantFile string // the first result's uri
	}{
		{name: "outside a repository", report: realisticReport(), golden: "realistic.sarif", wantFile: ".pace/day-1/gate-report.yaml"},
		{name: "inside a repository", report: repoReport(), golden: "repo.sarif", wantURI: "file:///home/runner/work/shop/shop/", wantFile: "sub/dir/.pace/day-1/gate-report.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := render(t, "sarif", tt.report)
			testutil.Golden(t, filepath.Join("testdata", "golden", tt.golden), out)
			if err := validateSARIF(t, out); err != nil {
				t.Fatalf("log is not valid SARIF 2.1.0: %v", err)
			}
			var log decodedLog
			if err := json.Unmarshal(out, &log); err != nil {
				t.Fatal(err)
			}
			var root struct {
				URI         string `json:"uri"`
				Description struct{ Text string }
			}
			if err := json.Unmarshal(log.Runs[0].OriginalURIBaseIDs["%SRCROOT%"], &root); err != nil {
				t.Fatalf("originalUriBaseIds[%%SRCROOT%%]: %v", err)
			}
			if root.URI != tt.wantURI || root.Description.Text == "" {
				t.Errorf("%%SRCROOT%% = %+v, want uri %q and a description", root, tt.wantURI)
			}
			res := log.Runs[0].Results
			if len(res) != len(tt.report.Findings) {
				t.Fatalf("%d results, want %d", len(res), len(tt.report.Findings))
			}
			loc := res[0].Locations[0].PhysicalLocation.ArtifactLocation
			if loc.URI != tt.wantFile || loc.URIBaseID != "%SRCROOT%" {
				t.Errorf("first result at %q (base %q), want %q on %%SRCROOT%%", loc.URI, loc.URIBaseID, tt.wantFile)
			}
			// Resolved against the root, every uri lands inside it.
			if tt.wantURI != "" {
				base, err := url.Parse(tt.wantURI)
				if err != nil {
					t.Fatal(err)
				}
				for i, r := range res {
					ref, err := url.Parse(r.Locations[0].PhysicalLocation.ArtifactLocation.URI)
					if err != nil {
						t.Fatalf("result %d: %v", i, err)
					}
					if got := base.ResolveReference(ref); !strings.HasPrefix(got.Path, "/home/runner/work/shop/shop/sub/dir/") {
						t.Errorf("result %d resolves to %s, outside the checked directory", i, got)
					}
				}
			}
		})
	}
}

func TestDirURI(t *testing.T) {
	tests := []struct {
		name string
		dir  string
		want string
		// wantElsewhere, when set, is the want off Windows, where
		// filepath.ToSlash leaves '\' alone.
		wantElsewhere string
	}{
		{name: "unix", dir: "/home/runner/work/shop/shop", want: "file:///home/runner/work/shop/shop/"},
		{name: "trailing slash kept single", dir: "/github/workspace/", want: "file:///github/workspace/"},
		{name: "filesystem root", dir: "/", want: "file:///"},
		{name: "hostile characters", dir: "/tmp/x y/%7e #1?q=ü", want: "file:///tmp/x%20y/%257e%20%231%3Fq%3D%C3%BC/"},
		{name: "windows drive", dir: `C:\work\repo`, want: "file:///C:/work/repo/", wantElsewhere: "file:///C:%5Cwork%5Crepo/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DirURI(tt.dir)
			if tt.wantElsewhere != "" && filepath.Separator != '\\' {
				tt.want = tt.wantElsewhere
			}
			if got != tt.want {
				t.Errorf("DirURI(%q) = %q, want %q", tt.dir, got, tt.want)
			}
			u, err := url.Parse(got)
			if err != nil || u.Scheme != "file" || u.RawQuery != "" || u.Fragment != "" || !strings.HasSuffix(u.Path, "/") {
				t.Errorf("%q is not an absolute file URI of a directory: %+v, %v", got, u, err)
			}
		})
	}
}

func TestRebase(t *testing.T) {
	fs := []check.Finding{
		{File: "a.yaml", Line: 2, Rule: "schema", Message: "m"},
		{Rule: "config", Message: "no file"},
		{File: ".pace/day-1/gate-report.yaml", Rule: "schema"},
	}
	tests := []struct {
		name   string
		prefix string
		want   []string
	}{
		{name: "no prefix", prefix: "", want: []string{"a.yaml", "", ".pace/day-1/gate-report.yaml"}},
		{name: "subdirectory", prefix: "sub/dir/", want: []string{"sub/dir/a.yaml", "", "sub/dir/.pace/day-1/gate-report.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Rebase(fs, tt.prefix)
			var files []string
			for i, f := range got {
				files = append(files, f.File)
				if f.Line != fs[i].Line || f.Rule != fs[i].Rule || f.Message != fs[i].Message {
					t.Errorf("finding %d changed beyond its file: %+v", i, f)
				}
			}
			if !slices.Equal(files, tt.want) {
				t.Errorf("files = %q, want %q", files, tt.want)
			}
			if fs[0].File != "a.yaml" {
				t.Errorf("Rebase changed its input: %q", fs[0].File)
			}
		})
	}
}

// Rebase returns a copy of fs with prefix ("" or a '/'-separated directory
// ending in '/') put before every file: it turns files relative to a checked
// directory into files relative to the repository that holds it, for a
// Report with SourceRoot. Findings without a file are kept as they are.
func Rebase(fs []check.Finding, prefix string) []check.Finding {
	out := make([]check.Finding, len(fs))
	for i, f := range fs {
		if f.File != "" {
			f.File = path.Join(prefix, f.File)
		}
		out[i] = f
	}
	return out
}
