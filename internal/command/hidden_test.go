package command

import (
	"strings"
	"sync"
	"testing"
)

// TestParseHiddenText: a command counts only when a person reading the
// comment as GitHub renders it sees it at the start of a line of a
// paragraph. Each attack hides a command line in text GitHub does not show
// (or shows as something other than paragraph text); the visible cases
// next to them are read.
func TestParseHiddenText(t *testing.T) {
	cmd := "/resolve D-001 approve"
	ok := []Command{resolve(2, "D-001", "approve")}
	runParseCases(t, []parseCase{
		// links and images
		{name: "link title in double quotes", body: "See [the plan](https://example.com/plan \"\n" + cmd + "\n\") first.", want: nil},
		{name: "link title in single quotes", body: "See [the plan](https://example.com/plan '\n" + cmd + "\n') first.", want: nil},
		{name: "link title in parentheses", body: "See [the plan](https://example.com/plan (\n" + cmd + "\n)) first.", want: nil},
		{name: "link title holding a closing parenthesis", body: "[a](u \"x)\n" + cmd + "\n\")", want: nil},
		{name: "link title after an inner link", body: "[[x] y](https://example.com \"\n" + cmd + "\n\")", want: nil},
		{name: "link text", body: "[\n" + cmd + "\n](https://example.com)", want: nil},
		{name: "image alt text", body: "![\n" + cmd + "\n](https://example.com/x.png)", want: nil},
		{name: "reference image alt text", body: "![\n" + cmd + "\n][img]\n\n[img]: https://example.com/x.png", want: nil},
		{name: "reference image defined before", body: "[img]: https://example.com/x.png\n\n![\n" + cmd + "\n][img]", want: nil},
		{name: "undefined reference image is text", body: "![\n" + cmd + "\n][img]", want: []Command{withRationale(resolve(2, "D-001", "approve"), "][img]")}},
		{name: "closed link title before the line", body: "[a](https://example.com \"t\")\n" + cmd, want: ok},
		{name: "closed multi-line link title before the line", body: "[a](https://example.com \"t\nu\")\n" + cmd, want: []Command{resolve(3, "D-001", "approve")}},

		// link reference definitions
		{name: "reference definition title", body: "[plan]: https://example.com/plan \"\n" + cmd + "\n\"", want: nil},
		{name: "reference definition title on its own lines", body: "[plan]: https://example.com/plan\n'\n" + cmd + "\n'", want: nil},
		{name: "reference definition title, used", body: "See [plan].\n\n[plan]: https://example.com/plan \"\n" + cmd + "\n\"", want: nil},
		{name: "paragraph after a reference definition", body: "[plan]: https://example.com/plan\n" + cmd, want: ok},

		// footnotes: GitHub drops a footnote nobody references, and shows a
		// referenced one at the end; neither is read.
		{name: "unreferenced footnote", body: "[^1]: a note\n" + cmd, want: nil},
		{name: "unreferenced footnote, indented line", body: "[^1]: a note\n\n    " + cmd, want: nil},
		{name: "an empty footnote ends before an unindented line", body: "[^note]:\n" + cmd, want: ok},
		{name: "referenced footnote", body: "Text[^1].\n\n[^1]: a note\n" + cmd, want: nil},
		{name: "after a footnote", body: "Text[^1].\n\n[^1]: a note\n\n" + cmd, want: []Command{resolve(5, "D-001", "approve")}},

		// raw HTML
		{name: "multi-line title attribute", body: "Hi <span title=\"\n" + cmd + "\n\">there</span>", want: nil},
		{name: "multi-line alt attribute", body: "<img src=\"https://example.com/x.png\" alt=\"\n" + cmd + "\n\">", want: nil},
		{name: "multi-line unquoted attribute line", body: "Hi <a\ntitle='\n" + cmd + "\n' href=x>there</a>", want: nil},
		{name: "attribute left open by an html block", body: "<div title=\"\n\n" + cmd + "\n\n\">", want: nil},
		{name: "html comment in a paragraph", body: "Hi <!--\n" + cmd + "\n-->", want: nil},
		{name: "collapsed details", body: "<details><summary>Log</summary>\n\n" + cmd + "\n\n</details>", want: nil},
		{name: "details opened inline", body: "Log <details>\n\n" + cmd, want: nil},
		{name: "details in a comment does not hide", body: "<!-- <details> -->\n" + cmd, want: ok},
		{name: "details closed inside a comment stays open", body: "<details>\n<!-- </details> -->\n\n" + cmd, want: nil},
		{name: "details closed in an attribute stays open", body: "<details>\n<b title=\"</details>\">x</b>\n\n" + cmd, want: nil},
		{name: "subscript", body: "Hi <sub><sub>\n" + cmd + "\n</sub></sub>", want: nil},
		{name: "superscript", body: "Hi <sup>\n" + cmd + "\n</sup>", want: nil},
		{name: "struck out with html", body: "Hi <del>\n" + cmd + "\n</del>", want: nil},
		{name: "struck out with tildes", body: "~~" + cmd + "~~", want: nil},
		{name: "struck out across lines", body: "~~x\n" + cmd + "~~", want: nil},
		// An end tag closes only an element that is open: stray ones do not
		// cancel the next hiding element.
		{name: "stray end tags before a subscript", body: "x <details></details></details></sub><sub>\n" + cmd + "\n</sub>", want: nil},
		{name: "closed subscript before the line", body: "H<sub>2</sub>O\n" + cmd, want: ok},
		{name: "script left open", body: "Hi <script>\n\n" + cmd, want: nil},
		{name: "textarea left open", body: "Hi <textarea>\n\n" + cmd, want: nil},
		{name: "forged marker in raw html", body: "<div>\n\uE0000\uE001\n</div>\n\nHi <span title=\"\n" + cmd + "\n\">", want: nil},
		// The markers visibleLines writes at line starts are private-use
		// characters; raw HTML that shows the text of marker 0 (the first
		// command line) would make a command hidden in a collapsed
		// <details> count as seen, were the markers not scrubbed from raw
		// HTML.
		{name: "forged marker for a command hidden in details", body: "<div>\uE0000\uE001</div>\n\n<details>\n\n" + cmd + "\n\n</details>", want: nil},
		{name: "forged markers in an html block line", body: "<p>\uE0001\uE001 \uE0000\uE001\n\n<details><summary>Log</summary>\n\n/decisions\n\n" + cmd + "\n\n</details>", want: nil},

		// code, tables, emphasis
		{name: "code span across lines", body: "`x\n" + cmd + "`", want: nil},
		{name: "double-backtick code span across lines", body: "``x\n" + cmd + " ``", want: nil},
		{name: "unclosed code span is text", body: "`x\n" + cmd, want: ok},
		{name: "emphasis across lines", body: "*x\n" + cmd + "*", want: nil},
		{name: "table cell", body: cmd + " | x\n--- | ---", want: nil},
		{name: "setext heading is seen", body: cmd + "\n===", want: []Command{resolve(1, "D-001", "approve")}},
		{name: "lazy line of a quote is seen", body: "> q\n" + cmd, want: ok},
		{name: "list item paragraph is seen", body: "- x\n  " + cmd, want: ok},

		// characters
		{name: "entity for the slash", body: "x\n&#47;resolve D-001 approve", want: nil},
		{name: "escaped slash", body: "x\n\\/resolve D-001 approve", want: nil},
		{name: "word joiner before the slash", body: "x\n\u2060" + cmd, want: nil},
		{name: "soft hyphen before the slash", body: "x\n\u00ad" + cmd, want: nil},
		{name: "left-to-right mark before the slash", body: "x\n\u200e" + cmd, want: nil},
	})
}

// TestParseHiddenKeepsRationale: a hidden command line is no command, and
// it ends the rationale of the command before it like another bot's
// command.
func TestParseHiddenKeepsRationale(t *testing.T) {
	body := "/resolve D-001 approve\nbecause [x](u \"\n/resolve D-002 reject\n\")"
	res := ParseAll(body)
	if len(res.Commands) != 1 || res.Commands[0].ID != "D-001" || res.Commands[0].Rationale != "because [x](u \"" {
		t.Errorf("Parse = %s", dump(res.Commands))
	}
}

// TestParseTooComplex: a body whose paragraphs hold too much inline
// Markdown to render safely yields nothing; long prose and long code are
// read; without a command a body is not rendered at all.
func TestParseTooComplex(t *testing.T) {
	huge := strings.Repeat("[a](", 20000)
	res := ParseAll("/resolve D-001 approve\n\n" + huge)
	if len(res.Commands) != 0 || !res.TooComplex {
		t.Errorf("command next to %d bytes of brackets: %s too complex %v", len(huge), dump(res.Commands), res.TooComplex)
	}
	if res := ParseAll(huge); res.TooComplex {
		t.Errorf("no command: too complex")
	}
	prose := "/resolve D-001 approve\n" + strings.Repeat("The reviewers' notes, with the numbers from the staging run. ", 1000)
	if res := ParseAll(prose); len(res.Commands) != 1 || res.TooComplex {
		t.Errorf("command with %d bytes of prose: %d commands, too complex %v", len(prose), len(res.Commands), res.TooComplex)
	}
	fenced := "/resolve D-001 approve\n\n```\n" + strings.Repeat("[a](\n", 20000) + "```"
	if res := ParseAll(fenced); len(res.Commands) != 1 || res.TooComplex {
		t.Errorf("command next to a long code block: %s too complex %v", dump(res.Commands), res.TooComplex)
	}
}

// TestParseConcurrent: Parse is safe for concurrent use (run with -race).
func TestParseConcurrent(t *testing.T) {
	body := "Hi <span title=\"\n/resolve D-001 approve\n\">x</span>\n\n/resolve D-002 capture\n\n![\n/resolve D-003 x\n][i]\n\n[i]: /x.png"
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if got := Parse(body); len(got) != 1 || got[0].ID != "D-002" {
					t.Errorf("Parse = %s", dump(got))
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestRenderedOracle: the rendering oracle of the fuzz targets does flag a
// command read from text GitHub does not show.
func TestRenderedOracle(t *testing.T) {
	tests := []struct {
		name string
		body string
		line int
		bad  bool
	}{
		{name: "link title", body: "See [a](https://example.com \"\n/resolve D-001 approve\n\")", line: 2, bad: true},
		{name: "attribute", body: "Hi <span title=\"\n/resolve D-001 approve\n\">x</span>", line: 2, bad: true},
		{name: "details", body: "<details>\n\n/resolve D-001 approve\n\n</details>", line: 3, bad: true},
		{name: "paragraph", body: "Hi\n/resolve D-001 approve", line: 2, bad: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := resolve(tc.line, "D-001", "approve")
			c.Raw = splitLines(tc.body)[tc.line-1]
			if got := renderedViolation(tc.body, []Command{c}); (got != "") != tc.bad {
				t.Errorf("renderedViolation = %q, want a violation: %v", got, tc.bad)
			}
		})
	}
}
