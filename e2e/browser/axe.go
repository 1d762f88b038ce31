package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/chromedp/chromedp"
)

// AxeTags are the axe-core rule tags every scan runs: WCAG 2.0 and 2.1 at
// levels A and AA, and axe's best practices (landmarks, one main, headings …).
var AxeTags = []string{"wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"}

// axeFile is axe-core's browser bundle, relative to the e2e module (npm ci
// in e2e/ installs the version e2e/package-lock.json pins).
var axeFile = filepath.Join("node_modules", "axe-core", "axe.min.js")

// Violation is one axe-core rule a page breaks, with every element that
// breaks it.
type Violation struct {
	ID      string   `json:"id"`     // the rule: "image-alt", "color-contrast" …
	Impact  string   `json:"impact"` // minor, moderate, serious or critical
	Help    string   `json:"help"`
	HelpURL string   `json:"helpUrl"`
	Tags    []string `json:"tags"`
	Nodes   []Node   `json:"nodes"`
}

// Node is one element that breaks a rule.
type Node struct {
	// Target is the CSS selector path axe gives the element.
	Target         []string `json:"target"`
	HTML           string   `json:"html"`
	FailureSummary string   `json:"failureSummary"`
}

// String is the violation in one line per element, for a test's failure.
func (v Violation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %s — %s", v.ID, v.Impact, v.Help, v.HelpURL)
	for _, n := range v.Nodes {
		summary := strings.ReplaceAll(n.FailureSummary, "\n", " ")
		fmt.Fprintf(&b, "\n    %s %s: %s", strings.Join(n.Target, " "), n.HTML, summary)
	}
	return b.String()
}

// IDs are the rule IDs of vs, in axe's order.
func IDs(vs []Violation) []string {
	ids := make([]string, len(vs))
	for i, v := range vs {
		ids[i] = v.ID
	}
	return ids
}

// axeResult is what the scan script returns.
type axeResult struct {
	Version      string      `json:"version"`
	Passes       int         `json:"passes"`
	Inapplicable int         `json:"inapplicable"`
	Violations   []Violation `json:"violations"`
}

// axeSource reads axe.min.js once per test binary.
var axeSource = sync.OnceValues(func() (string, error) {
	dir, err := moduleDir()
	if err != nil {
		return "", err
	}
	return readAxe(dir)
})

// readAxe reads axe-core's bundle in the e2e module at dir; an error, saying
// how to install it, when it is missing.
func readAxe(dir string) (string, error) {
	path := filepath.Join(dir, axeFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("the accessibility scans need axe-core, and %s cannot be read (%w): run `npm ci` in e2e/ (.ci/run does; e2e/package-lock.json pins the version)", path, err)
	}
	return string(data), nil
}

// Axe scans the page of ctx's tab with axe-core (AxeTags) and returns the
// rules it breaks, none for an accessible page. axe-core is evaluated into
// the page over the DevTools protocol (Runtime.evaluate), not loaded by a
// <script src>, so the page's Content-Security-Policy neither blocks it nor
// has to allow it. An error means the scan could not run — including an
// axe-core that ran no rule, so a page that swallows the script never passes
// as clean.
func Axe(ctx context.Context) ([]Violation, error) {
	src, err := axeSource()
	if err != nil {
		return nil, err
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](src)); err != nil {
		return nil, fmt.Errorf("injecting axe-core: %w", err)
	}
	tags, err := json.Marshal(AxeTags)
	if err != nil {
		return nil, fmt.Errorf("running axe-core: %w", err)
	}
	script := `axe.run(document, {runOnly: {type: "tag", values: ` + string(tags) + `}, resultTypes: ["violations"]})
  .then(r => JSON.stringify({
    version: r.testEngine.version, passes: r.passes.length, inapplicable: r.inapplicable.length,
    violations: r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl, tags: v.tags,
      nodes: v.nodes.map(n => ({target: n.target.map(String), html: n.html, failureSummary: n.failureSummary}))}))}))`
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](script, chromedp.EvalAwaitPromise))
	if err != nil {
		return nil, fmt.Errorf("running axe-core: %w", err)
	}
	var res axeResult
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		return nil, fmt.Errorf("reading axe-core's results: %w", err)
	}
	if res.Version == "" || res.Passes+res.Inapplicable+len(res.Violations) == 0 {
		return nil, errors.New("axe-core ran no rule on the page")
	}
	return res.Violations, nil
}
