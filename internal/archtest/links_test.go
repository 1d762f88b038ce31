package archtest

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"

	"github.com/phasegate/phasegate/internal/artifact"
)

// The docs' relative links: every link of README.md, CONTRIBUTING.md,
// SECURITY.md and docs/**/*.md to a file of the repository must lead to a
// file that exists and, with a #fragment, to a heading of that file as
// GitHub anchors it. The docs are split by task across pages, so a section
// that moves breaks the links to it; this test says which.

// linkedDocs are the Markdown files whose links are checked.
func linkedDocs(fsys fs.FS) ([]string, error) {
	docs := []string{"README.md", "CONTRIBUTING.md", "SECURITY.md"}
	err := fs.WalkDir(fsys, "docs", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			docs = append(docs, p)
		}
		return err
	})
	return docs, err
}

func TestDocLinksResolve(t *testing.T) {
	fsys := os.DirFS(moduleRoot(t))
	docs, err := linkedDocs(fsys)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range brokenLinks(fsys, docs) {
		t.Error(b)
	}
}

// TestDocLinksCatchBroken: the check fails on each kind of broken link
// planted in a small tree, and passes the good ones.
func TestDocLinksCatchBroken(t *testing.T) {
	pages := fstest.MapFS{
		"docs/app.md":     {Data: []byte("# Install the App (`phasegate serve`): the recommended path\n\n## Flags\n\n## Flags\n\n## Décisions & co.\n")},
		"docs/cli.md":     {Data: []byte("# The CLI\n\n```sh\n# not a heading\n```\n\n<a name=\"old-name\"></a>\n## `decisions`\n")},
		"bin/run.sh":      {Data: []byte("#!/bin/sh\n")},
		"docs/sub/x.md":   {Data: []byte("# X\n")},
		"SECURITY.md":     {Data: []byte("# Security\n")},
		"CONTRIBUTING.md": {Data: []byte("# Contributing\n")},
	}
	tests := []struct {
		name, readme, want string // want: "" when no link is broken
	}{
		{name: "a file", readme: "[app](docs/app.md) and [run](bin/run.sh) and [dir](docs/sub/)"},
		{name: "a heading", readme: "[it](docs/app.md#install-the-app-phasegate-serve-the-recommended-path)"},
		{name: "a duplicate heading", readme: "[it](docs/app.md#flags-1)"},
		{name: "a heading with a letter and punctuation", readme: "[it](docs/app.md#décisions--co)"},
		{name: "a heading in code", readme: "[it](docs/cli.md#decisions) and [old](docs/cli.md#old-name)"},
		{name: "this page", readme: "# Top\n\n[up](#top) [up](./README.md#top)"},
		{name: "a link in a page below", readme: "[x](docs/sub/x.md#x)"},
		{name: "a URL", readme: "[gh](https://github.com/a/b#nowhere) [mail](mailto:a@b.c)"},
		{name: "code is not a link", readme: "`[a](missing.md)`\n\n```md\n[a](missing.md)\n```\n"},
		{name: "a line anchor of code", readme: "[l](bin/run.sh#L1)"},
		{name: "a missing file", readme: "[gone](docs/gone.md)", want: "README.md:1: docs/gone.md: no such file docs/gone.md"},
		{name: "a missing heading", readme: "[app](docs/app.md#install-the-app)", want: "no heading #install-the-app in docs/app.md"},
		{name: "a third duplicate", readme: "[app](docs/app.md#flags-2)", want: "no heading #flags-2"},
		{name: "a heading of this page", readme: "# Top\n\n[x](#bottom)", want: "README.md:3: #bottom: no heading #bottom in README.md"},
		{name: "a comment in code is no heading", readme: "[x](docs/cli.md#not-a-heading)", want: "no heading #not-a-heading"},
		{name: "a fragment of a script", readme: "[x](bin/run.sh#main)", want: "bin/run.sh has no headings"},
		{name: "out of the repository", readme: "[x](../other/README.md)", want: "leaves the repository"},
		{name: "a section that moved", readme: "see [Install the App](#install-the-app-phasegate-serve-the-recommended-path)", want: "no heading #install-the-app-phasegate-serve-the-recommended-path in README.md"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{"README.md": {Data: []byte(tc.readme + "\n")}}
			for k, v := range pages {
				fsys[k] = v
			}
			docs, err := linkedDocs(fsys)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(brokenLinks(fsys, docs), "\n")
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("broken links:\n%s\nwant one containing %q", got, tc.want)
			}
		})
	}
}

func TestHeadingAnchor(t *testing.T) {
	tests := []struct{ heading, want string }{
		{"Quick start", "quick-start"},
		{"Install the App (`phasegate serve`): the recommended path for organisations", "install-the-app-phasegate-serve-the-recommended-path-for-organisations"},
		{"Decisions: `/resolve D-001 approve`", "decisions-resolve-d-001-approve"},
		{"`outcome.approval-blocking`", "outcomeapproval-blocking"},
		{"Commit-aware checks (`--base REV`)", "commit-aware-checks---base-rev"},
		{"GitHub Enterprise Server: mirror the image", "github-enterprise-server-mirror-the-image"},
		{"Agreement with upstream's own validators", "agreement-with-upstreams-own-validators"},
		{"Unauthenticated bodies (issue 10)", "unauthenticated-bodies-issue-10"},
		{"See [the CLI](cli.md) now", "see-the-cli-now"},
		{"snake_case and CAPS", "snake_case-and-caps"},
	}
	for _, tc := range tests {
		t.Run(tc.heading, func(t *testing.T) {
			if got := headingAnchor(tc.heading); got != tc.want {
				t.Errorf("headingAnchor(%q) = %q, want %q", tc.heading, got, tc.want)
			}
		})
	}
}

var (
	// mdLink is an inline link or image's target, with an optional title.
	mdLink = regexp.MustCompile(`\]\(\s*<?([^\s()<>]*)>?(?:\s+"[^"]*")?\s*\)`)
	// mdRefDef is a reference definition: [label]: target.
	mdRefDef = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*<?([^\s<>]+)>?`)
	// atxHeading is a heading line; its text is group 1.
	atxHeading = regexp.MustCompile(`^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	// htmlAnchor is an explicit anchor: <a name="x"> or id="x".
	htmlAnchor = regexp.MustCompile(`<a\s[^>]*(?:name|id)="([^"]+)"`)
	// inlineLink is [text](target) in a heading, which GitHub anchors by its text.
	inlineLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	// lineAnchor is GitHub's anchor of a line (range) of a file it shows as code.
	lineAnchor = regexp.MustCompile(`^L\d+(-L\d+)?$`)
	// scheme starts an absolute URL (https:, mailto:, …).
	scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
)

// mdLine is a line of a Markdown file outside its fenced code blocks.
type mdLine struct {
	n    int
	text string
}

// proseLines are the lines of a Markdown text outside fenced code blocks
// (``` or ~~~, at any indentation, as in list items).
func proseLines(text string) []mdLine {
	var out []mdLine
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:3]
		case fence != "" && strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]+" \t") == "":
			fence = ""
		case fence == "":
			out = append(out, mdLine{n: i + 1, text: line})
		}
	}
	return out
}

// stripCodeSpans drops inline code (`…`, “…“) from a line: a link
// written in code is not a link.
func stripCodeSpans(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '`' {
			b.WriteByte(line[i])
			i++
			continue
		}
		n := 0
		for i+n < len(line) && line[i+n] == '`' {
			n++
		}
		tick := strings.Repeat("`", n)
		end := strings.Index(line[i+n:], tick)
		if end < 0 {
			b.WriteString(tick)
			i += n
			continue
		}
		i += n + end + n
	}
	return b.String()
}

// headingAnchor is GitHub's anchor of a heading's text: its rendered text
// lower-cased, every character but letters, marks, digits, connector
// punctuation ('_'), '-' and spaces dropped, and each space turned to '-'.
func headingAnchor(heading string) string {
	text := inlineLink.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r) || unicode.Is(unicode.Pc, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the fragments a Markdown text's headings (and explicit HTML
// anchors) define; a repeated heading gets -1, -2, … as on GitHub.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range proseLines(text) {
		// Each regexp runs only on the lines holding the text it starts
		// with (a regexp on every line was most of the test's time).
		if strings.Contains(l.text, "<a") {
			for _, m := range htmlAnchor.FindAllStringSubmatch(l.text, -1) {
				out[m[1]] = true
			}
		}
		if !strings.HasPrefix(strings.TrimLeft(l.text, " "), "#") {
			continue
		}
		m := atxHeading.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		a := headingAnchor(m[1])
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// linkTargets are the link targets of a Markdown text with their lines.
func linkTargets(text string) []mdLine {
	var out []mdLine
	for _, l := range proseLines(text) {
		if !strings.Contains(l.text, "]") {
			continue // neither an inline link nor a reference definition
		}
		line := stripCodeSpans(l.text)
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			out = append(out, mdLine{n: l.n, text: m[1]})
		}
		if m := mdRefDef.FindStringSubmatch(line); m != nil {
			out = append(out, mdLine{n: l.n, text: m[1]})
		}
	}
	return out
}

// brokenLinks lists each relative link of docs (paths in fsys) that names
// no file, or a heading its file does not have, as "doc:line: target: why".
func brokenLinks(fsys fs.FS, docs []string) []string {
	var out []string
	cache := map[string]map[string]bool{}
	for _, doc := range docs {
		data, err := fs.ReadFile(fsys, doc)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", doc, err))
			continue
		}
		for _, l := range linkTargets(string(data)) {
			if why := checkLink(fsys, doc, l.text, cache); why != "" {
				out = append(out, fmt.Sprintf("%s:%d: %s: %s", doc, l.n, l.text, why))
			}
		}
	}
	return out
}

// checkLink says why target, a link of doc, is broken, or "".
func checkLink(fsys fs.FS, doc, target string, cache map[string]map[string]bool) string {
	if target == "" || scheme.MatchString(target) || strings.HasPrefix(target, "//") {
		return ""
	}
	rel, frag, _ := strings.Cut(target, "#")
	rel, err := url.PathUnescape(rel)
	if err != nil {
		return "not a valid path"
	}
	file := doc
	switch {
	case strings.HasPrefix(rel, "/"):
		file = path.Clean(strings.TrimPrefix(rel, "/"))
	case rel != "":
		file = path.Join(path.Dir(doc), rel)
	}
	if file == ".." || strings.HasPrefix(file, "../") {
		return "leaves the repository"
	}
	info, err := fs.Stat(fsys, file)
	if err != nil {
		return "no such file " + file
	}
	if frag == "" {
		return ""
	}
	if info.IsDir() || !strings.HasSuffix(file, ".md") {
		if !info.IsDir() && lineAnchor.MatchString(frag) {
			return ""
		}
		return file + " has no headings: a #fragment cannot point into it"
	}
	return checkFragment(fsys, file, frag, cache)
}

// checkFragment says why frag is no anchor of the Markdown file, or "".
func checkFragment(fsys fs.FS, file, frag string, cache map[string]map[string]bool) string {
	if cache[file] == nil {
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			return err.Error()
		}
		cache[file] = anchors(string(data))
	}
	if f, err := url.PathUnescape(frag); err == nil && cache[file][f] {
		return ""
	}
	return "no heading #" + frag + " in " + file
}

// TestKindsPageListsEveryKind: docs/kinds.md, the table `phasegate schema`
// prints, names every kind of the family table.
func TestKindsPageListsEveryKind(t *testing.T) {
	text := readRoot(t, "docs/kinds.md")
	for _, fam := range artifact.Families() {
		for _, k := range fam.Kinds {
			if !strings.Contains(text, "| `"+k.ID+"` |") {
				t.Errorf("docs/kinds.md does not list kind `%s`", k.ID)
			}
		}
	}
}
