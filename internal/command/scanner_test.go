package command

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// blockFragments are the pieces TestScannerAgainstGoldmark builds bodies
// from: the Markdown that decides whether a line is paragraph text, code or
// raw HTML, with the markers and indentations where column counting
// matters. Tabs are left out: goldmark departs from CommonMark on many of
// them (a tab after a tag that starts an HTML block, after a list marker
// or a block quote marker); the bodies with tabs are written out instead.
var blockFragments = []string{
	"\n", "\n", "\n", "\n", " ", "  ", "   ", "    ", "     ", "x", "text ", "/resolve D-001 approve",
	"> ", ">", "- ", "-     ", "* ", "+ ", "1. ", "1) ", "2. ", "0. ", "10. ", "123456789. ", "1234567890. ", "-", "1.",
	"```", "````", "~~~", "   ```", "``` a", "~~~ `",
	"# ", "#", "####### ", "#x", "===", "---", "- - -", "_ _ _", "***", "**", "= =",
	"<!--", "-->", "<!-- x -->", "<?", "?>", "<!DOCTYPE x>", "<!x>", "<![CDATA[", "]]>",
	"<div>", "</div>", "<DIV class=x>", "<div/>", "<details>", "<script>", "</script>", "<style>", "</style>", "<textarea>", "</textarea>",
	"<x-y>", "</x-y>", "<x-y a=\"1\" b='2' c=d e/>", "<x a=>", "<x a=\"1\"b>", "</x a>", "<a", "<b c='", ">", "\"", "'",
}

// TestScannerAgainstGoldmark: the line scanner (markdown.go) says of every
// line what goldmark, a CommonMark 0.31 parser, makes of it: text of which
// paragraph (or of a setext heading), a line of an HTML block, a line of
// code, or none of these. Through Parse the scanner is backed by the
// rendered comment (visibleLines), which hides whatever it lets through;
// this test holds the scanner to CommonMark on its own. Bodies goldmark
// reads differently from cmark-gfm (oracleSkip) and bodies with link
// reference definitions (which goldmark takes out of paragraphs, and the
// scanner does not resolve) are not compared.
func TestScannerAgainstGoldmark(t *testing.T) {
	bodies := append(seedBodies(), []string{
		"- a\n\n\tb\n\n  - c\n\t\td",
		"1.\ta\n\n    b\n\n1.     c\n      d",
		"> a\n>\tb\n>  ```\n> x\n```",
		"  ```\n   x\n  y\n  ```\nz",
		"    a\n\n\tb\n  \tc\nd",
		"-  \ta\n-    b\n-\n  c",
		"a\n2. b\n\na\n1. b\n\na\n-\n\na\n- \nb",
		"a\n<div>\nb\n\na\n<x-y>\nb\n\n<x-y>\nb\n\nc",
		"<div\n\n<DIV>\nx\n\n<pre>\nx\n</pre>\ny",
		"<!-- a\nb --> c\nd\n\n<? x\ny ?>\nz\n\n<!X\ny>\nz\n\n<![CDATA[\nx\n]]>\ny",
		"# a\n## b ##\n#######\n#x\n#\ty\nz\n===\nw\n---",
		"a\n - - -\nb\n***\n_ _ _\nc",
		"> a\nb\n> ```\nc",
		// the tabs of the CommonMark spec (examples 1–11)
		"\tfoo\tbaz\t\tbim", "  \tfoo\tbaz\t\tbim", "    a\ta\n    ὐ\ta", "  - foo\n\n\tbar", "- foo\n\n\t\tbar",
		">\t\tfoo", "-\t\tfoo", "    foo\n\tbar", " - foo\n   - bar\n\t - baz", "#\tFoo", "*\t*\t*\t",
	}...)
	rng := rand.New(rand.NewPCG(18, 6)) // fixed: the same bodies every run
	for range 5000 {
		var b strings.Builder
		for range 1 + rng.IntN(30) {
			b.WriteString(blockFragments[rng.IntN(len(blockFragments))])
		}
		bodies = append(bodies, b.String())
	}
	failed := 0
	for _, body := range bodies {
		if bad := scannerViolation(body); bad != "" {
			t.Errorf("%q: %s", body, bad)
			if failed++; failed == 10 {
				t.FailNow()
			}
		}
	}
}

// quoteTab finds a tab after a block quote marker and any spaces: goldmark
// departs from CommonMark (commonmark.js, cmark-gfm) on the columns of
// such a tab (">  \t<div>" starts an HTML block in CommonMark, a paragraph
// in goldmark).
var quoteTab = regexp.MustCompile(`(?m)^[ \t>]*> *\t`)

// scannerViolation compares the scanner's reading of the lines of body
// with goldmark's, and says where they differ, or "".
func scannerViolation(body string) string {
	if oracleSkip(body) || strings.Contains(body, "]:") || quoteTab.MatchString(body) {
		return ""
	}
	starts := lineStarts(body)
	lineOf := func(off int) int { return sort.Search(len(starts), func(i int) bool { return starts[i] > off }) }
	want := map[int]string{} // line → "para N", "html" or "code"
	paras := 0
	src := []byte(body)
	_ = ast.Walk(oracleMarkdown.Parser().Parse(text.NewReader(src)), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		what := ""
		switch n := n.(type) {
		case *ast.Paragraph, *ast.TextBlock: // a text block is the paragraph of a tight list item
			paras++
			what = fmt.Sprint("para ", paras)
		case *ast.Heading:
			if lines := n.Lines(); lines.Len() > 0 {
				first := lines.At(0)
				if !strings.Contains(body[starts[lineOf(first.Start)-1]:first.Start], "#") { // setext
					paras++
					what = fmt.Sprint("para ", paras)
				}
			}
		case *ast.HTMLBlock:
			what = "html"
			if n.HasClosure() {
				want[lineOf(n.ClosureLine.Start)] = what
			}
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			what = "code"
		}
		if what != "" {
			lines := n.Lines()
			for i := 0; i < lines.Len(); i++ {
				want[lineOf(lines.At(i).Start)] = what
			}
		}
		return ast.WalkContinue, nil
	})

	sc := newScanner(MaxDepth)
	same := map[string]int{} // goldmark paragraph → scanner paragraph
	lines := splitLines(body)
	for len(lines) > 0 && strings.Trim(lines[len(lines)-1], " \t>") == "" {
		lines = lines[:len(lines)-1] // goldmark leaves the blank lines at the end out of an open block
	}
	for i, ln := range lines {
		n := i + 1
		info := sc.line(ln)
		if sc.tooDeep {
			return ""
		}
		w := want[n]
		got := map[lineClass]string{lineOther: "", lineParagraph: "para", lineCode: "code", lineHTML: "html"}[info.class]
		switch {
		case strings.HasPrefix(w, "para") && got == "para":
			if p, ok := same[w]; ok && p != info.para {
				return fmt.Sprintf("line %d is in goldmark's %s, with line of the scanner's paragraph %d, but in its paragraph %d", n, w, p, info.para)
			}
			same[w] = info.para
		case w == got, w == "" && got == "code": // fences are code to the scanner, and in no block's lines
		default:
			return fmt.Sprintf("line %d %q is %q to goldmark, %q to the scanner", n, ln, w, got)
		}
	}
	return ""
}
