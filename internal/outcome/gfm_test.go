package outcome

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"
)

// gfm renders GitHub-flavoured Markdown (tables, strikethrough, autolinks,
// task lists) to HTML the way GitHub's renderer does before its sanitiser:
// raw HTML is passed through, so that any raw HTML an agent managed to get
// into a comment shows up as a tag in the output.
var gfm = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithRendererOptions(gmhtml.WithUnsafe()),
)

// renderHTML renders a comment body to HTML.
func renderHTML(t testing.TB, body string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := gfm.Convert([]byte(body), &buf); err != nil {
		t.Fatalf("goldmark: %v", err)
	}
	return buf.String()
}

// allowedTags are the HTML elements phasegate's own Markdown produces
// (headings, paragraphs, emphasis, tables, code, line breaks, the collapsed
// YAML block) plus the links GFM makes of bare URLs and the resolution's
// link to its command.
var allowedTags = map[string]bool{
	"h3": true, "h4": true, "p": true, "strong": true, "em": true,
	"table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true,
	"code": true, "pre": true, "br": true, "details": true, "summary": true, "a": true,
}

var (
	tagRE = regexp.MustCompile(`<(/?)([A-Za-z][A-Za-z0-9-]*)([^>]*)>`)
	// mentionRE is GitHub's @mention (and @org/team) rule, simplified to
	// err on the side of finding one: an @ right before a letter or digit
	// that does not follow a word character.
	mentionRE = regexp.MustCompile(`(^|[^A-Za-z0-9_])@[A-Za-z0-9]`)
	// refRE finds #123 and GH-123 references.
	refRE   = regexp.MustCompile(`(^|[^A-Za-z0-9_])(#|(?i:gh-))[0-9]`)
	hrefRE  = regexp.MustCompile(`href="([^"]*)"`)
	elemsRE = map[string]*regexp.Regexp{
		"pre":  regexp.MustCompile(`(?s)<pre[ >].*?</pre>`),
		"code": regexp.MustCompile(`(?s)<code>.*?</code>`),
		"a":    regexp.MustCompile(`(?s)<a [^>]*>.*?</a>`),
	}
	lineBreakRE = regexp.MustCompile(`<br ?/?>|</?(p|h3|h4|td|th|tr|table|thead|tbody|details|summary)>`)
)

// inertReport lists what in the HTML of a comment is not inert: a tag
// outside allowedTags, a details/summary element beyond the comment's own,
// an HTML comment other than the marker, an @mention other than the ones
// allowed, a #N reference other than the ones allowed, a link that is not
// http(s) or the command fragment, or a visible line that starts with "/"
// (text in code elements excepted: those are phasegate's commands).
func inertReport(out string, wantDetails int, mentions, refs []string) []string {
	var bad []string
	counts := map[string]int{}
	for _, m := range tagRE.FindAllStringSubmatch(out, -1) {
		name := strings.ToLower(m[2])
		if !allowedTags[name] {
			bad = append(bad, fmt.Sprintf("tag <%s%s> is not one phasegate writes", m[1], m[2]))
		}
		counts[m[1]+name]++
		if name == "a" && m[1] == "" {
			href := hrefRE.FindStringSubmatch(m[3])
			if href == nil || !(strings.HasPrefix(href[1], "http://") || strings.HasPrefix(href[1], "https://") || strings.HasPrefix(href[1], "#issuecomment-")) {
				bad = append(bad, fmt.Sprintf("link %q", m[0]))
			}
		}
	}
	for _, tag := range []string{"details", "summary"} {
		if counts[tag] != wantDetails || counts["/"+tag] != wantDetails {
			bad = append(bad, fmt.Sprintf("%d <%s> and %d </%s>, want %d", counts[tag], tag, counts["/"+tag], tag, wantDetails))
		}
	}
	if n := strings.Count(out, "<!--"); n != 1 {
		bad = append(bad, fmt.Sprintf("%d HTML comments, want only the marker", n))
	}
	if n := strings.Count(out, "-->"); n != 1 {
		bad = append(bad, fmt.Sprintf("%d comment ends, want only the marker's", n))
	}
	// The text a reader sees and GitHub scans for mentions and references:
	// no pre, code or link elements (GitHub links neither inside them),
	// tags dropped, entities decoded.
	text := out
	for _, name := range []string{"pre", "code", "a"} {
		text = elemsRE[name].ReplaceAllString(text, " ")
	}
	text = lineBreakRE.ReplaceAllString(text, "\n")
	text = html.UnescapeString(tagRE.ReplaceAllString(text, ""))
	if i := strings.LastIndex(text, "<!--"); i >= 0 {
		text = text[:i] // the marker
	}
	for _, line := range strings.Split(text, "\n") {
		for _, m := range mentionRE.FindAllString(line, -1) {
			if !allowedIn(line, "@", mentions) {
				bad = append(bad, fmt.Sprintf("mention %q in %q", m, line))
			}
		}
		for _, m := range refRE.FindAllString(line, -1) {
			if !allowedIn(line, "#", refs) {
				bad = append(bad, fmt.Sprintf("reference %q in %q", m, line))
			}
		}
		if strings.HasPrefix(strings.TrimSpace(line), "/") {
			bad = append(bad, fmt.Sprintf("line starts with /: %q", line))
		}
	}
	return bad
}

// allowedIn reports whether every prefix+name occurrence in line is one of
// the allowed names.
func allowedIn(line, prefix string, allowed []string) bool {
	rest := line
	for _, a := range allowed {
		rest = strings.ReplaceAll(rest, prefix+a, "")
	}
	return (prefix == "@" && !mentionRE.MatchString(rest)) || (prefix == "#" && !refRE.MatchString(rest))
}

// markdownReport lists what in an outcome comment's Markdown source could
// act as something else: a line outside the YAML fence that starts with "/"
// (a command to phasegate's parser), an @mention anywhere (the fence
// included: e-mail notifications are plain text), or an HTML comment
// delimiter anywhere but in the marker on the last line.
func markdownReport(body string) []string {
	var bad []string
	lines := strings.Split(body, "\n")
	fence := ""
	for i, line := range lines {
		switch {
		case fence == "" && strings.HasPrefix(line, "```"):
			fence = strings.TrimRight(line, "yaml")
			continue
		case fence != "" && line == fence:
			fence = ""
			continue
		}
		if fence == "" && strings.HasPrefix(strings.TrimLeft(line, " \t"), "/") {
			bad = append(bad, fmt.Sprintf("line %d starts with /: %q", i+1, line))
		}
	}
	if fence != "" {
		bad = append(bad, "the YAML fence is not closed")
	}
	if m := mentionRE.FindString(body); m != "" {
		bad = append(bad, fmt.Sprintf("the text (even plain, as in an e-mail) holds a mention %q", m))
	}
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "<!-- phasegate:") {
		bad = append(bad, "the marker is not the last line")
	}
	if n := strings.Count(body, "<!--"); n != 1 {
		bad = append(bad, fmt.Sprintf("%d '<!--' in the body, want the marker's only", n))
	}
	if n := strings.Count(body, "-->"); n != 1 {
		bad = append(bad, fmt.Sprintf("%d '-->' in the body, want the marker's only", n))
	}
	return bad
}
