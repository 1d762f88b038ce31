package command

import (
	"fmt"
	"strings"
	"testing"
)

// benchBlock is about 2 KiB of comment text as people write it, with
// commands that must not be read (fenced, quoted, indented, in HTML
// comments, other bots') and no command that counts.
const benchBlock = `Thanks for the write-up. I went through the PREQ and the plan with the team
this morning; a few notes before we decide, in no particular order.

> The avatar upload should be resized on the client.
> /resolve D-002 capture
> We can do that in a follow-up.

I disagree a little: resizing on the server is simpler to test, see below.

` + "```go" + `
func resize(img image.Image, w, h int) image.Image {
	// /resolve D-001 approve is what we'd type here
	return imaging.Fit(img, w, h, imaging.Lanczos)
}
` + "```" + `

1. The acceptance criteria for login are testable.
2. The error states are listed, with copy.
   - the empty state needs a design
   - /usr/local/share/fonts is not on the CI image
3. Performance budget: p99 < 200 ms on the dashboard.

<!-- checklist for reviewers:
/resolve D-001 approve
/resolve D-001 reject
-->

| Story | Points | Owner |
| --- | --- | --- |
| login | 3 | @alice |
| avatar | 5 | @bob |

    $ phasegate validate .
    /resolve D-001 approve   (indented code, not a command)

/lgtm
/assign @carol

~~~text
/decisions
/phasegate help
~~~

Some **bold** text, some _emphasis_, a [link](https://example.com/a/b?c=d) and
inline ` + "`/resolve D-003 discard`" + ` code; then a longer paragraph that wraps
over several lines so that the scanner sees ordinary prose most of the time,
which is what real comments are made of: sentences, names, numbers like 42
and 3.14, emoji 🚀 and the occasional non-ASCII word such as café or Zürich.

`

// benchBody is about n bytes of comment text with commands, fewer than
// MaxCommands of them, spread through it.
func benchBody(n int) string {
	var b strings.Builder
	blocks := n / len(benchBlock)
	every := max(1, (blocks+MaxCommands-3)/(MaxCommands-2))
	for i := 0; b.Len() < n; i++ {
		b.WriteString(benchBlock)
		if i%every == every-1 {
			fmt.Fprintf(&b, "/resolve D-%03d approve\nthe reason, on a second line\n\n", i%1000)
		}
	}
	return b.String()[:n]
}

func benchmarkParse(b *testing.B, n int) {
	body := benchBody(n)
	res := ParseAll(body)
	if len(res.Commands) == 0 || res.Truncated || res.TooDeep {
		b.Fatalf("benchmark body: %d commands, truncated %v", len(res.Commands), res.Truncated)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res = ParseAll(body)
	}
	b.ReportMetric(float64(len(res.Commands)), "commands/op")
}

// BenchmarkParse20KiB parses a realistic 20 KiB comment.
func BenchmarkParse20KiB(b *testing.B) { benchmarkParse(b, 20<<10) }

// BenchmarkParse64KiB parses the largest ASCII comment GitHub accepts.
func BenchmarkParse64KiB(b *testing.B) { benchmarkParse(b, 65536) }

// BenchmarkParseMaxBody parses the longest body Parse reads.
func BenchmarkParseMaxBody(b *testing.B) { benchmarkParse(b, MaxBody) }

// BenchmarkParseCommand parses a typical one-line command comment.
func BenchmarkParseCommand(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Parse("/resolve D-001 approve looks good")
	}
}

// adversarialBodies are bodies of MaxBody bytes built to be slow, each
// starting with a command so that it is rendered: the most open blocks for
// the fewest bytes (every blank line then continues MaxDepth-1 list items),
// quote markers, long command-like lines, slash words, comment markers,
// near-miss command words (each costs a Suggest), and the inline Markdown
// that costs goldmark time in proportion to its paragraph's length times
// its openers, as much of it as maxMarkdownWork lets through.
func adversarialBodies() map[string]string {
	para := func(unit string, n int) string {
		return strings.Repeat(unit, n/len(unit)+1)[:n] + "\n\n"
	}
	parts := map[string][]string{
		"nested-items-blank-lines": {strings.Repeat("- ", MaxDepth-1) + "x\n" + strings.Repeat("\n", 2000)},
		"nested-quotes":            {strings.Repeat(">", MaxDepth) + "x\n"},
		"long-lines":               {"/" + strings.Repeat("a", MaxLineLen) + "\n", "/resolve D-1 x " + strings.Repeat("é", MaxLineLen) + "\n"},
		"slash-words":              {"/lgtm /x\n/approve\n/usr/bin\n/a/b/c\n"},
		"comment-markers":          {strings.Repeat("<!--", 50) + strings.Repeat("-->", 50) + "\n"},
		"near-misses":              {"/resolvx\n/decisionz\n/phasegatx\n/reslve\n"},
		"link-openers-1000":        {para("[a](", 1000)},
		"emphasis-1000":            {para("*a_", 1000)},
		"brackets-1000":            {para("[", 500) + para("]", 500)[2:]},
		"link-titles-1000":         {para("[a](b '", 1000)},
	}
	// one paragraph of 64,000 bytes with one opener in sixteen bytes, then one-letter paragraphs
	for name, unit := range map[string]string{"sparse-link-openers-64000": "[a](abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqr", "sparse-emphasis-64000": "*abcdefghijklmn_abcdefghijklmn"} {
		parts[name] = []string{para(unit, 64000) + strings.Repeat("x\n\n", MaxBody/3)}
	}
	// one paragraph of 16,000 bytes, then one-letter paragraphs
	for name, unit := range map[string]string{"link-openers-16000": "[a](", "emphasis-16000": "*a_", "brackets-16000": "[[]", "html-attributes-16000": "<a title='"} {
		parts[name] = []string{para(unit, 16000) + strings.Repeat("x\n\n", MaxBody/3)}
	}
	out := map[string]string{}
	for name, ps := range parts {
		var sb strings.Builder
		sb.WriteString("/resolve D-001 approve\n\n")
		for i := 0; sb.Len() < MaxBody; i++ {
			sb.WriteString(ps[i%len(ps)])
		}
		out[name] = sb.String()[:MaxBody]
	}
	return out
}

func BenchmarkParseAdversarial(b *testing.B) {
	for name, body := range adversarialBodies() {
		b.Run(name, func(b *testing.B) {
			if res := ParseAll(body); res.TooDeep || res.TooLong {
				b.Fatal("too deep or too long")
			}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				ParseAll(body)
			}
		})
	}
}

// TestAllocationsBounded: the allocations of Parse do not grow with the
// body when the body holds no phasegate command: lines of other bots'
// commands (in upper case, with comments and invisible characters) and
// deep nesting cost nothing. (A body with a command is rendered, which
// allocates in proportion to the body, up to MaxBody.)
func TestAllocationsBounded(t *testing.T) {
	unit := "/LGTM <!-- x --> ok\n/Usr/bin\n/x\u200by <!-- y -->\nplain <!-- z --> text\n\n"
	nest := strings.Repeat("> - ", MaxDepth/2-1) + "x\n\n"
	tests := []struct {
		name         string
		small, large string
	}{
		{name: "other slash words", small: strings.Repeat(unit, 10), large: strings.Repeat(unit, MaxBody/len(unit))},
		{name: "nesting", small: nest, large: strings.Repeat(nest, MaxBody/len(nest))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if res := ParseAll(tc.large); res.TooLong || res.TooDeep {
				t.Fatalf("large body not read: %+v", res)
			}
			a := testing.AllocsPerRun(5, func() { ParseAll(tc.small) })
			b := testing.AllocsPerRun(5, func() { ParseAll(tc.large) })
			if b > a {
				t.Errorf("%.0f allocations for %d bytes, %.0f for %d", a, len(tc.small), b, len(tc.large))
			}
		})
	}
}
