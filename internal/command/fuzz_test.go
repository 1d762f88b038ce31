package command

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"golang.org/x/net/html"
)

// FuzzParse checks, whatever the body:
//   - Parse returns without panicking, at most MaxCommands commands, each on
//     a line of the body (1-based, in order), whose Raw is that line;
//   - a command's fields are consistent with its kind, its rationale is at
//     most MaxRationale characters and its reason is safe to post;
//   - re-parsing the Raw line of a command yields the same command (the
//     rationale then being the part on that line, a prefix of the whole);
//   - wrapped in a code fence no line of the body can close, or with every
//     line quoted or indented as code, the body yields no command;
//   - no command lies on a line that CommonMark (goldmark) puts in fenced
//     or indented code or in an HTML block, nor inside an HTML comment;
//   - the words of every command are text of the rendered comment that a
//     browser shows (checkRendered);
//   - MayHold is true of every body Parse finds a command in.
func FuzzParse(f *testing.F) {
	for _, s := range seedBodies() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		res := ParseAll(body)
		checkResult(t, body, res)
		if len(res.Commands) > 0 && !MayHold(body) {
			t.Fatalf("MayHold is false of a body Parse finds %d commands in", len(res.Commands))
		}
		for _, c := range res.Commands {
			checkReparse(t, c)
		}
		checkHidden(t, body)
		checkOracle(t, body, res.Commands)
		checkRendered(t, body, res.Commands)
		checkBlankShortcut(t, body)
	})
}

// checkResult checks what holds of any result.
func checkResult(t *testing.T, body string, res Result) {
	t.Helper()
	lines := splitLines(body)
	if len(res.Commands) > MaxCommands {
		t.Fatalf("%d commands", len(res.Commands))
	}
	if res.Truncated && len(res.Commands) != MaxCommands {
		t.Fatalf("truncated with %d commands", len(res.Commands))
	}
	last := 0
	for _, c := range res.Commands {
		if c.Line < 1 || c.Line > len(lines) || c.Line <= last {
			t.Fatalf("command on line %d (previous %d) of a body of %d lines", c.Line, last, len(lines))
		}
		last = c.Line
		if want := strings.TrimPrefix(lines[c.Line-1], "\uFEFF"); c.Raw != want && c.Raw != lines[c.Line-1] {
			t.Fatalf("line %d: Raw %q, line %q", c.Line, c.Raw, lines[c.Line-1])
		}
		if len(c.Raw) > MaxLineLen {
			t.Fatalf("command on a line of %d bytes", len(c.Raw))
		}
		checkCommand(t, c)
		checkShown(t, c)
	}
}

// checkShown: a command that is carried out (resolve, decisions, help) is
// on a line whose rendering holds no control character, direction control
// or other format character but the joiners (which the parser allows
// between visible characters other than ASCII): what is read is what is
// shown. The line is rendered with goldmark, so character references are
// decoded by another implementation than the parser's.
func checkShown(t *testing.T, c Command) {
	t.Helper()
	if bad := shownViolation(c); bad != "" {
		t.Fatal(bad)
	}
}

func shownViolation(c Command) string {
	if c.Kind != Resolve && c.Kind != Decisions && c.Kind != Help {
		return ""
	}
	var out strings.Builder
	if err := renderer.Convert([]byte(c.Raw), &out); err != nil {
		return "render: " + err.Error()
	}
	z := html.NewTokenizer(strings.NewReader(out.String()))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return ""
		}
		if tt != html.TextToken && tt != html.CommentToken {
			continue
		}
		for _, r := range string(z.Text()) {
			if r != '\n' && (isControl(r) || isBidi(r) || unicode.Is(unicode.Cf, r) && r != 0x200c && r != 0x200d) {
				return fmt.Sprintf("%s command on line %q, which renders U+%04X", c.Kind, c.Raw, r)
			}
		}
	}
}

func checkCommand(t *testing.T, c Command) {
	t.Helper()
	switch c.Kind {
	case Resolve:
		if !IsID(c.ID) || c.ID != strings.ToUpper(c.ID) || !isName(c.Option) ||
			(c.Phase != "" && (!isName(c.Phase) || c.Phase != strings.ToLower(c.Phase))) ||
			c.Recommended != strings.EqualFold(c.Option, "recommended") || c.Reason != "" || c.Suggestion != "" {
			t.Fatalf("bad resolve command %+v", c)
		}
		if n := utf8.RuneCountInString(c.Rationale); n > MaxRationale || !utf8.ValidString(c.Rationale) ||
			c.Rationale != strings.TrimSpace(c.Rationale) || hasControlExceptNewline(c.Rationale) {
			t.Fatalf("bad rationale %q (%d characters)", c.Rationale, n)
		}
	case Decisions, Help:
		if c.ID != "" || c.Option != "" || c.Reason != "" || c.Rationale != "" {
			t.Fatalf("bad %s command %+v", c.Kind, c)
		}
	case Invalid, Unknown:
		if c.Reason == "" || c.ID != "" || c.Option != "" || c.Rationale != "" || (c.Kind == Unknown) != (c.Suggestion != "") {
			t.Fatalf("bad %s command %+v", c.Kind, c)
		}
		if bad := unsafeReason(c.Reason); bad != "" {
			t.Fatalf("reason %q: %s", c.Reason, bad)
		}
	default:
		t.Fatalf("command of kind %d", c.Kind)
	}
}

func hasControlExceptNewline(s string) bool {
	for _, r := range s {
		if r != '\n' && isControl(r) || isBidi(r) {
			return true
		}
	}
	return false
}

// unsafeReason says what in a reason could do more than show text: outside
// code spans no '@', '#', '<', '>', '[', ']', '!', '\\', '|', '*', '_', '~'
// or line break; inside them no backtick (they are single backticks).
func unsafeReason(r string) string {
	if strings.Count(r, "`")%2 != 0 {
		return "unbalanced backticks"
	}
	for i, part := range strings.Split(r, "`") {
		if i%2 == 1 {
			continue
		}
		if j := strings.IndexAny(part, "@#<>[]!\\|*_~\n\r"); j >= 0 {
			return "markup " + string(part[j]) + " outside a code span"
		}
	}
	return ""
}

// checkReparse: the Raw line of a command, parsed alone, is that command.
func checkReparse(t *testing.T, c Command) {
	t.Helper()
	again := Parse(c.Raw)
	if len(again) != 1 {
		t.Fatalf("raw line %q of a %s command parses to %d commands", c.Raw, c.Kind, len(again))
	}
	a := again[0]
	if a.Line != 1 || a.Raw != c.Raw || a.Kind != c.Kind || a.Phase != c.Phase || a.ID != c.ID || a.Option != c.Option ||
		a.Recommended != c.Recommended || a.Reason != c.Reason || a.Suggestion != c.Suggestion ||
		!strings.HasPrefix(c.Rationale, a.Rationale) || (a.RationaleTruncated && !c.RationaleTruncated) {
		t.Fatalf("raw line %q parses to\n%+v\nin the body to\n%+v", c.Raw, a, c)
	}
}

// checkHidden: the body inside an unbreakable fence, quoted, or indented
// as code yields nothing.
func checkHidden(t *testing.T, body string) {
	t.Helper()
	for _, fence := range []string{"`", "~"} {
		n := max(3, longestRun(body, fence[0])+1)
		wrapped := strings.Repeat(fence, n) + "\n" + body
		if got := Parse(wrapped); len(got) != 0 {
			t.Fatalf("fenced body yields %+v", got)
		}
	}
	lines := splitLines(body)
	if len(lines) > 200 {
		return
	}
	for _, prefix := range []string{"> ", "    ", "\t"} {
		wrapped := prefix + strings.Join(lines, "\n"+prefix)
		if got := Parse(wrapped); len(got) != 0 {
			t.Fatalf("body prefixed with %q yields %+v", prefix, got)
		}
	}
}

func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// splitLines splits a body at LF, CR LF and CR, as Parse does (a line
// ending at the very end does not start another line).
func splitLines(body string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '\n':
			lines = append(lines, body[start:i])
			start = i + 1
		case '\r':
			lines = append(lines, body[start:i])
			if i+1 < len(body) && body[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	if start < len(body) {
		lines = append(lines, body[start:])
	}
	return lines
}

var oracleMarkdown = goldmark.New()

// checkOracle parses body with goldmark (CommonMark 0.31) and fails when a
// command lies on a line that goldmark puts in fenced or indented code or
// in an HTML block, or whose start is inside an inline HTML comment.
// Bodies where goldmark is known to depart from CommonMark as GitHub reads
// it (see oracleSkip) are not checked.
func checkOracle(t *testing.T, body string, cmds []Command) {
	t.Helper()
	if bad := oracleViolation(body, cmds); bad != "" {
		t.Fatal(bad)
	}
}

// oracleViolation is what checkOracle finds wrong, or "".
func oracleViolation(body string, cmds []Command) string {
	if len(cmds) == 0 || oracleSkip(body) {
		return ""
	}
	src := []byte(body)
	starts := lineStarts(body)
	lineOf := func(off int) int { // 1-based line holding byte offset off
		return sort.Search(len(starts), func(i int) bool { return starts[i] > off })
	}
	banned := map[int]string{}
	doc := oracleMarkdown.Parser().Parse(text.NewReader(src))
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		var what string
		switch n := n.(type) {
		case *ast.FencedCodeBlock:
			what = "fenced code"
		case *ast.CodeBlock:
			what = "indented code"
		case *ast.HTMLBlock:
			what = "an HTML block"
			if n.HasClosure() {
				banned[lineOf(n.ClosureLine.Start)] = what
			}
		case *ast.RawHTML:
			segs := n.Segments
			if segs.Len() == 0 {
				return ast.WalkContinue, nil
			}
			first, last := segs.At(0), segs.At(segs.Len()-1)
			if !strings.HasPrefix(string(first.Value(src)), "<!--") {
				return ast.WalkContinue, nil
			}
			for l := lineOf(first.Start) + 1; l <= lineOf(max(last.Stop-1, first.Start)); l++ {
				banned[l] = "an HTML comment"
			}
			return ast.WalkContinue, nil
		default:
			return ast.WalkContinue, nil
		}
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			banned[lineOf(lines.At(i).Start)] = what
		}
		return ast.WalkContinue, nil
	})
	for _, c := range cmds {
		if what, ok := banned[c.Line]; ok {
			return fmt.Sprintf("command %s on line %d, which CommonMark puts in %s", c.Raw, c.Line, what)
		}
	}
	return ""
}

// lineStarts are the byte offsets where the lines of body start.
func lineStarts(body string) []int {
	starts := []int{0}
	for i := 0; i < len(body); i++ {
		if body[i] == '\n' && i+1 < len(body) {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// oracleSkip reports bodies the goldmark oracle cannot judge, because
// goldmark reads them differently from GitHub's cmark-gfm:
//   - goldmark ends lines only at LF (CommonMark also at a lone CR), does
//     not skip a byte order mark, and takes invalid UTF-8 and NUL
//     differently;
//   - a line that is only a pre, script, style or textarea tag (`</pre>`,
//     `<pre/>`) starts an HTML block of type 7 in cmark-gfm and
//     commonmark.js (their start condition 7 excludes no tag name), but
//     not in goldmark, which follows the spec's prose;
//   - a list item whose only content is an empty list item (`* 1.`) stays
//     open across a blank line in cmark-gfm and commonmark.js (it has a
//     child), but goldmark closes it.
func oracleSkip(body string) bool {
	return strings.Contains(strings.ReplaceAll(body, "\r\n", "\n"), "\r") ||
		strings.HasPrefix(body, "\uFEFF") || !utf8.ValidString(body) || strings.IndexByte(body, 0) >= 0 ||
		rawTextTagLine.MatchString(body) || nestedEmptyItem.MatchString(body)
}

var (
	rawTextTagLine  = regexp.MustCompile(`(?im)^[ \t>*+\-0-9.)]*</?(pre|script|style|textarea)\b[^<>]*>[ \t]*$`)
	nestedEmptyItem = regexp.MustCompile(`(?m)^[ \t>]*(?:(?:[*+-]|[0-9]{1,9}[.)])[ \t]+)+(?:[*+-]|[0-9]{1,9}[.)])[ \t]*$`)
)

// FuzzSuggest: Suggest never panics, returns one of the candidates, and
// only one within the distance it promises.
func FuzzSuggest(f *testing.F) {
	f.Add("aprove", "approve,reject,request-changes")
	f.Add("hlp", "help,resolve,decisions")
	f.Add("", "")
	f.Add("ÄPPROVE", "äpprove")
	f.Fuzz(func(t *testing.T, word, cands string) {
		list := strings.Split(cands, ",")
		got, ok := Suggest(word, list)
		if !ok {
			if got != "" {
				t.Fatalf("no suggestion but %q", got)
			}
			return
		}
		found := false
		for _, c := range list {
			found = found || c == got
		}
		if !found {
			t.Fatalf("suggestion %q is not a candidate", got)
		}
		w, g := []rune(strings.ToLower(word)), []rune(strings.ToLower(got))
		if len(w) > maxSuggestLen || len(g) > maxSuggestLen {
			t.Fatalf("suggestion for a word of %d characters", len(w))
		}
	})
}

// fragments are the pieces FuzzParseMarkdown builds bodies from: the
// Markdown that decides whether a line is code, raw HTML, a quote or a
// paragraph, and commands to be hidden in it.
var fragments = []string{
	"\n", "\n", "\n", " ", "  ", "   ", "    ", "\t", "x", "text ",
	"/resolve D-001 approve", "/resolve D-002 recommended", "/decisions", "/phasegate help", "/reslove D-1 x",
	"```", "````", "~~~", "``` a`b", "~~~ `",
	"> ", ">", "- ", "* ", "+ ", "1. ", "2) ", "10. ", "-", "1.",
	"<!--", "-->", "<!-->", "<!-- x -->", "<?", "?>", "<!DOCTYPE", "<![CDATA[", "]]>", ">",
	"<div>", "</div>", "<pre>", "</pre>", "<script>", "</script>", "<details>", "<x-y a=\"1\">", "</x-y>", "<a", "<b c='",
	"'", "\"", "===", "---", "***", "# ", "`", "~", "<", "\\", "*", "=",
	"[", "]", "![", "](", "(", ")", "](x \"", "[a]: /u ", "[a]", "[^1]", "[^1]: ", "<span title=\"", "<img alt='",
	"</details>", "<sub>", "</sub>", "~~", "|", "| --- |", "https://x",
}

// FuzzParseMarkdown is FuzzParse on bodies assembled from fragments (each
// input byte picks one), which reaches the corners of Markdown block
// structure that random bytes rarely do.
func FuzzParseMarkdown(f *testing.F) {
	f.Add([]byte{10, 0, 15, 0, 10, 0, 15, 0, 10})
	f.Add([]byte{38, 0, 10, 0, 39, 0, 10})
	f.Add([]byte{21, 15, 0, 21, 10, 0, 21, 15})
	f.Add([]byte{26, 15, 0, 4, 10, 0, 10})
	f.Add([]byte{43, 0, 15, 0, 44, 0, 10})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 400 {
			return
		}
		var b strings.Builder
		for _, c := range data {
			b.WriteString(fragments[int(c)%len(fragments)])
		}
		body := b.String()
		res := ParseAll(body)
		checkResult(t, body, res)
		for _, c := range res.Commands {
			checkReparse(t, c)
		}
		checkHidden(t, body)
		checkOracle(t, body, res.Commands)
		checkRendered(t, body, res.Commands)
		checkBlankShortcut(t, body)
	})
}

// checkBlankShortcut: skipping a blank line after a blank line changes
// nothing the scanner reports, nor what it holds open.
func checkBlankShortcut(t *testing.T, body string) {
	t.Helper()
	fast, slow := newScanner(MaxDepth), newScanner(MaxDepth)
	slow.noSkip = true
	for i, ln := range splitLines(body) {
		a, b := fast.line(ln), slow.line(ln)
		if a.class != b.class || a.para != b.para || (a.class == lineParagraph && a.text != b.text) ||
			fast.tooDeep != slow.tooDeep || !equalStacks(fast.stack, slow.stack) {
			t.Fatalf("line %d %q: %+v (depth %d) with the shortcut, %+v (depth %d) without", i+1, ln, a, fast.depth(), b, slow.depth())
		}
		if fast.tooDeep {
			return
		}
	}
}

func equalStacks(a, b []mdBlock) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// renderer is goldmark rendering HTML as GitHub does, raw HTML included.
var renderer = goldmark.New(goldmark.WithExtensions(extension.GFM, extension.Footnote),
	goldmark.WithRendererOptions(gmhtml.WithUnsafe()))

// checkRendered renders body to HTML, parses that as a browser does
// (x/net/html's tree builder), and fails when the command word or the
// decision ID of a command is not in the text a reader sees: outside
// comments, attributes and the elements of hidingElements. It is an
// oracle for visibleLines, which builds its own HTML stream and only
// tokenizes it.
func checkRendered(t *testing.T, body string, cmds []Command) {
	t.Helper()
	if bad := renderedViolation(body, cmds); bad != "" {
		t.Fatal(bad)
	}
}

func renderedViolation(body string, cmds []Command) string {
	if len(cmds) == 0 || !utf8.ValidString(body) || strings.IndexByte(body, 0) >= 0 {
		return ""
	}
	var out strings.Builder
	if err := renderer.Convert([]byte(strings.TrimPrefix(body, "\uFEFF")), &out); err != nil {
		return "render: " + err.Error()
	}
	root, err := html.Parse(strings.NewReader(out.String()))
	if err != nil {
		return "parse rendered html: " + err.Error()
	}
	var seen strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			seen.WriteString(n.Data)
		case html.ElementNode:
			if hidingElements[n.Data] {
				return
			}
		case html.CommentNode:
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		seen.WriteByte(' ')
	}
	walk(root)
	text := normalizeSeen(seen.String())
	for _, c := range cmds {
		raw := c.Raw[max(commandIndent(c.Raw), 0):]
		word, rest := nextToken(raw)
		want := []string{normalizeSeen(trimVerbPunct(word))}
		if c.Kind == Resolve {
			id, _ := nextToken(rest)
			want = append(want, normalizeSeen(strings.TrimRight(id, ",;:")))
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				return fmt.Sprintf("command %q on line %d: %q is not in the rendered text %q", c.Raw, c.Line, w, text)
			}
		}
	}
	return ""
}

// normalizeSeen lower-cases s and drops invisible characters and
// separators, so that text compares as a reader sees it.
func normalizeSeen(s string) string {
	return strings.Map(func(r rune) rune {
		if isInvisible(r) || isSeparator(r) || r == '\n' || r == '\r' {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}
