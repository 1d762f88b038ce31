package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/phasegate/phasegate/internal/check"
)

// SARIF constants. GitHub code scanning accepts SARIF 2.1.0; the schema URI
// is the one GitHub's documentation uses.
const (
	sarifSchema    = "https://json.schemastore.org/sarif-2.1.0.json"
	sarifVersion   = "2.1.0"
	toolName       = "phasegate"
	toolInfoURI    = "https://github.com/phasegate/phasegate"
	srcRoot        = "%SRCROOT%"
	automationID   = "phasegate/"
	fingerprintKey = "phasegateFindingHash/v1"
)

// MaxSARIFResults is the most results one run may hold: GitHub code scanning
// rejects a SARIF file whose run has more. Past it, error findings are kept
// before warnings and the log says how many were left out.
const MaxSARIFResults = 25_000

// sarifLimit is the cap SARIF applies: MaxSARIFResults, lowered only by a
// test, so that proving the cap does not take rendering 25,001 results.
var sarifLimit = MaxSARIFResults

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool               sarifTool                        `json:"tool"`
	Invocations        []sarifInvocation                `json:"invocations"`
	OriginalURIBaseIDs map[string]sarifArtifactLocation `json:"originalUriBaseIds"`
	AutomationDetails  sarifAutomationDetails           `json:"automationDetails"`
	ColumnKind         string                           `json:"columnKind"`
	Results            []sarifResult                    `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string            `json:"name"`
	Version        string            `json:"version,omitempty"`
	InformationURI string            `json:"informationUri"`
	Rules          []sarifDescriptor `json:"rules"`
}

type sarifDescriptor struct {
	ID                   string             `json:"id"`
	Name                 string             `json:"name"`
	ShortDescription     sarifText          `json:"shortDescription"`
	FullDescription      sarifText          `json:"fullDescription"`
	Help                 sarifHelp          `json:"help"`
	HelpURI              string             `json:"helpUri"`
	DefaultConfiguration sarifConfiguration `json:"defaultConfiguration"`
	Properties           sarifRuleProps     `json:"properties"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifHelp struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown"`
}

type sarifConfiguration struct {
	Level string `json:"level"`
}

type sarifRuleProps struct {
	Tags      []string `json:"tags"`
	Precision string   `json:"precision"`
}

type sarifInvocation struct {
	ExecutionSuccessful bool                `json:"executionSuccessful"`
	Notifications       []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Level   string    `json:"level"`
	Message sarifText `json:"message"`
}

type sarifAutomationDetails struct {
	ID string `json:"id"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          *sarifResultProps `json:"properties,omitempty"`
}

type sarifResultProps struct {
	ArtifactKind string `json:"artifactKind"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysicalLocation `json:"physicalLocation"`
}

type sarifPhysicalLocation struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	Region           sarifRegion           `json:"region"`
}

type sarifArtifactLocation struct {
	URI         string     `json:"uri,omitempty"`
	URIBaseID   string     `json:"uriBaseId,omitempty"`
	Description *sarifText `json:"description,omitempty"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn"`
}

// SARIF writes a SARIF 2.1.0 log for GitHub code scanning: one run, the rules
// that the findings use (sorted by ID), and one result per finding with its
// location relative to %SRCROOT% (the checked root, or the repository root
// when r.SourceRoot is set) and a fingerprint that
// survives the finding moving to another line. The output is deterministic.
func SARIF(w io.Writer, r Report) error { return writeSARIF(w, r, sarifLimit) }

func writeSARIF(w io.Writer, r Report, limit int) error {
	// GitHub code scanning rejects the whole log when one result has no
	// location, so a finding about the run rather than a file (no file)
	// is a notification of the invocation, not a result.
	var located, runLevel []check.Finding
	for _, f := range r.Findings {
		if f.File == "" {
			runLevel = append(runLevel, f)
		} else {
			located = append(located, f)
		}
	}
	findings, omitted := capFindings(located, limit)
	rules, index := sarifRules(findings)

	log := sarifLog{
		Schema:  sarifSchema,
		Version: sarifVersion,
		Runs: []sarifRun{{
			Tool:               sarifTool{Driver: sarifDriver{Name: toolName, Version: r.Version, InformationURI: toolInfoURI, Rules: rules}},
			Invocations:        []sarifInvocation{sarifInvocationOf(runLevel, omitted, len(r.Findings), limit)},
			OriginalURIBaseIDs: map[string]sarifArtifactLocation{srcRoot: sourceRoot(r.SourceRoot)},
			AutomationDetails:  sarifAutomationDetails{ID: automationID},
			ColumnKind:         "unicodeCodePoints",
			Results:            sarifResults(findings, index),
		}},
	}
	data, err := EncodeJSON(log)
	if err != nil {
		return fmt.Errorf("encoding sarif log: %w", err)
	}
	return flush(w, string(data), "sarif log")
}

// sarifRules are the rule descriptors, one per distinct rule ID of the
// findings, sorted by ID (an error's severity wins over a warning's), and
// each ID's index among them.
func sarifRules(findings []check.Finding) ([]sarifDescriptor, map[string]int) {
	seen := map[string]check.Severity{}
	for _, f := range findings {
		if prev, ok := seen[f.Rule]; !ok || (prev != check.SeverityError && f.Severity == check.SeverityError) {
			seen[f.Rule] = f.Severity
		}
	}
	ids := slices.Sorted(maps.Keys(seen))
	index := make(map[string]int, len(ids))
	rules := make([]sarifDescriptor, 0, len(ids))
	for i, id := range ids {
		index[id] = i
		rules = append(rules, descriptor(id, seen[id]))
	}
	return rules, index
}

// sarifResults are the results of the findings, each with its location
// relative to %SRCROOT% and a fingerprint numbering the findings that hash
// alike in order.
func sarifResults(findings []check.Finding, index map[string]int) []sarifResult {
	results := make([]sarifResult, 0, len(findings))
	occurrences := map[string]int{}
	for _, f := range findings {
		res := sarifResult{
			RuleID:    f.Rule,
			RuleIndex: index[f.Rule],
			Level:     sarifLevel(f.Severity),
			Message:   sarifText{Text: sarifMessage(f)},
		}
		res.Locations = []sarifLocation{{PhysicalLocation: sarifPhysicalLocation{
			ArtifactLocation: sarifArtifactLocation{URI: fileURI(f.File), URIBaseID: srcRoot},
			Region:           sarifRegion{StartLine: max(1, f.Line), StartColumn: max(1, f.Column)},
		}}}
		hash := findingHash(f)
		occurrences[hash]++
		res.PartialFingerprints = map[string]string{fingerprintKey: fmt.Sprintf("%s:%d", hash, occurrences[hash])}
		if f.Kind != "" {
			res.Properties = &sarifResultProps{ArtifactKind: f.Kind}
		}
		results = append(results, res)
	}
	return results
}

// sarifInvocationOf is the run's invocation: a notification per finding
// about the run rather than a file, and one saying how many of the total
// findings were left out past limit (omitted), if any.
func sarifInvocationOf(runLevel []check.Finding, omitted, total, limit int) sarifInvocation {
	inv := sarifInvocation{ExecutionSuccessful: true}
	for _, f := range runLevel {
		inv.Notifications = append(inv.Notifications, sarifNotification{Level: sarifLevel(f.Severity),
			Message: sarifText{Text: escapeSARIFText(Terminal(f.Rule)) + ": " + sarifMessage(f)}})
	}
	if omitted > 0 {
		inv.Notifications = append(inv.Notifications, sarifNotification{Level: "warning", Message: sarifText{Text: fmt.Sprintf(
			"%d of %d findings are not in this log: GitHub code scanning accepts at most %d results per run (errors were kept first). Run phasegate validate for the full list.",
			omitted, total, limit)}})
	}
	return inv
}

// sourceRoot declares %SRCROOT%. GitHub code scanning ignores
// originalUriBaseIds and reads every relative uri as relative to the root of
// the repository; the declaration is for other viewers. Outside a git
// repository the absolute root is left out: it would be the checked tree,
// which differs from machine to machine and can name a user (SARIF
// §3.14.14), and it is not what code scanning resolves against.
func sourceRoot(uri string) sarifArtifactLocation {
	if uri == "" {
		return sarifArtifactLocation{Description: &sarifText{Text: "The root of the tree phasegate checked (the repository root in CI)."}}
	}
	return sarifArtifactLocation{URI: uri, Description: &sarifText{Text: "The root of the git repository that holds the checked files."}}
}

// DirURI is the absolute "file:" URI of the directory at the absolute path
// dir, ending in '/' as a base URI must (SARIF §3.14.14): each byte other
// than an unreserved character, '/' or ':' is percent-encoded, and a Windows
// path gets its leading '/' (file:///C:/repo/).
func DirURI(dir string) string {
	p := filepath.ToSlash(dir)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	return "file://" + escapePath(p, ":")
}

// descriptor documents a rule. Its text is phasegate's own (never an
// agent's), and descriptions are not message strings, so they are not
// escaped.
func descriptor(id string, seen check.Severity) sarifDescriptor {
	doc := describeRule(id, seen)
	tags := []string{"phasegate"}
	if family, _, ok := strings.Cut(id, "."); ok {
		tags = append(tags, family)
	}
	help := RuleHelpURI(id)
	return sarifDescriptor{
		ID:                   id,
		Name:                 ruleName(id),
		ShortDescription:     sarifText{Text: doc.Short},
		FullDescription:      sarifText{Text: doc.Full},
		Help:                 sarifHelp{Text: doc.Full + "\n\nDocumentation: " + help, Markdown: doc.Full + "\n\n[Documentation of " + id + "](" + help + ")"},
		HelpURI:              help,
		DefaultConfiguration: sarifConfiguration{Level: sarifLevel(doc.Level)},
		Properties:           sarifRuleProps{Tags: tags, Precision: "very-high"},
	}
}

func sarifLevel(s check.Severity) string {
	if s == check.SeverityError {
		return "error"
	}
	return "warning"
}

// sarifMessage is the result message: the finding's message made safe for a
// SARIF plain-text message (see escapeSARIFText), never empty.
func sarifMessage(f check.Finding) string {
	msg := f.Message
	if strings.TrimSpace(msg) == "" {
		msg = describeRule(f.Rule, f.Severity).Short
	}
	return escapeSARIFText(Terminal(msg))
}

// escapeSARIFText escapes a SARIF plain-text message (SARIF 2.1.0 §3.11):
// '{' and '}' are doubled, since single braces are placeholders; and when
// the text holds "](", which starts an embedded link, every '\', '[' and ']'
// is escaped with a backslash so that no link syntax is left for a viewer to
// turn into a link that an agent chose.
func escapeSARIFText(s string) string {
	if strings.ContainsAny(s, "{}") {
		s = strings.NewReplacer("{", "{{", "}", "}}").Replace(s)
	}
	if strings.Contains(s, "](") {
		s = strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`).Replace(s)
	}
	return s
}

// fileURI turns a finding's file (relative, '/'-separated) into a relative
// URI reference: every byte other than an unreserved character (RFC 3986
// §2.3) or a '/' is percent-encoded, so spaces, '#', '?', '%', ':' (which
// would read as a scheme in the first segment), backslashes and non-ASCII
// characters all survive.
func fileURI(p string) string { return escapePath(p, "") }

// escapePath percent-encodes every byte of p other than an unreserved
// character, '/' and the bytes of also.
func escapePath(p, also string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~', c == '/',
			strings.IndexByte(also, c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		}
	}
	return b.String()
}

// findingHash identifies a finding across runs by its rule, file and
// message, and not by its line, so that the alert stays the same alert when
// lines are added above it.
func findingHash(f check.Finding) string {
	sum := sha256.Sum256([]byte(f.Rule + "\x00" + f.File + "\x00" + f.Message + "\x00"))
	return hex.EncodeToString(sum[:])
}

// capFindings keeps at most limit findings, errors first, in their original
// order, and returns how many were left out.
func capFindings(fs []check.Finding, limit int) ([]check.Finding, int) {
	if len(fs) <= limit {
		return fs, 0
	}
	errs, _ := check.Count(fs)
	errRoom := min(errs, limit)
	warnRoom := limit - errRoom
	out := make([]check.Finding, 0, limit)
	for _, f := range fs {
		room := &warnRoom
		if f.Severity == check.SeverityError {
			room = &errRoom
		}
		if *room > 0 {
			*room--
			out = append(out, f)
		}
	}
	return out, len(fs) - len(out)
}
