package command

import (
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"golang.org/x/net/html"
)

// This file is the rendering half of the parser. The line scanner
// (markdown.go) knows CommonMark's block structure as GitHub's cmark-gfm
// reads it, but not inline structure: a line it calls paragraph text may
// still be the inside of a link title, an image's alt text, a multi-line
// HTML attribute, a code span or a link reference definition, or a
// paragraph that a browser never shows (inside an attribute, a comment or a
// <details> element left open by raw HTML). visibleLines parses the body as
// GitHub renders it — goldmark with the GFM and footnote extensions — and
// says which lines start with text a reader sees. A command must be both:
// paragraph text to the scanner and visible here.

// markdown is the goldmark parser: CommonMark with GitHub's extensions
// (tables, strikethrough, task lists, autolinks, footnotes). Its Parse is
// safe for concurrent use.
var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM, extension.Footnote)).Parser()

// maxMarkdownWork bounds the inline parsing goldmark is asked to do. Some
// inline Markdown ("[a](" repeated, "*a_" repeated, many unmatched
// brackets) costs goldmark time in proportion to the length of its
// paragraph times the number of openers in it, so a body is rendered only
// when, summed over its paragraphs, the length in bytes times the count of
// inline punctuation (markdownPunct) is at most this: a paragraph of 16 KiB
// that is all brackets, or 64 KiB of prose with one such character in
// sixteen. A body over it yields no command (Result.TooComplex).
const maxMarkdownWork = 1 << 28

// markdownPunct reports whether c can open or close inline Markdown or raw
// HTML.
func markdownPunct(c byte) bool { return strings.IndexByte("[]()!*_~`<>\\&\"'", c) >= 0 }

// Markers stand for a command line's first character in the HTML that
// visibleLines builds; they are removed from raw HTML so that a comment
// cannot forge one.
const (
	markOpen  = '\uE000'
	markClose = '\uE001'
)

// hidingElements are the elements whose content visibleLines takes as not
// seen, or not seen as a command:
//   - <details>, whose content shows only once a reader opens it (an open
//     one is treated the same: phasegate does not tell the two apart), and
//     <template>, whose content never shows;
//   - <sub> and <sup>, whose text nested a few deep is too small to read;
//   - <del>, <s> and <strike>: a struck-out command is withdrawn;
//   - fallback and alternative content that a browser does not show when it
//     can show the element (<video>, <audio>, <object>, <canvas>, <rp>),
//     form controls and foreign content GitHub removes (<select>,
//     <datalist>, <svg>, <math>);
//   - the raw-text elements, whose content is code or dropped.
var hidingElements = map[string]bool{
	"details": true, "template": true, "sub": true, "sup": true, "del": true, "s": true, "strike": true,
	"video": true, "audio": true, "object": true, "canvas": true, "rp": true,
	"select": true, "datalist": true, "svg": true, "math": true,
	"iframe": true, "noembed": true, "noframes": true, "noscript": true, "plaintext": true,
	"script": true, "style": true, "textarea": true, "title": true, "xmp": true,
}

// visibleLines returns the numbers of the lines of body that start, after
// at most three columns of spaces, with a "/" a reader of the rendered
// comment sees at the start of a line of a paragraph (or of a setext
// heading): the start of a text node that is a direct child of a paragraph
// not inside a footnote, outside every HTML comment, attribute and hiding
// element. ok is false when the body is too complex to render
// (maxMarkdownWork) or nested deeper than MaxDepth.
func visibleLines(body string) (lines map[int]bool, ok bool) {
	starts := map[int]int{} // offset in the source of a line's first non-space, when it is "/" → line number
	src, ok := markdownSource(body, starts)
	if !ok {
		return nil, false
	}
	if len(starts) == 0 {
		return map[int]bool{}, true
	}
	html, marked := markLineStarts([]byte(src), starts)
	if len(marked) == 0 {
		return map[int]bool{}, true
	}
	return seenMarkers(html, marked), true
}

// markdownSource is the document goldmark reads: the lines of body, each
// ended by LF (it does not end lines at a lone CR), without a leading byte
// order mark, and with runs of blank lines cut to two (they cost goldmark
// time in proportion to the open blocks, and change no block structure).
// It adds to starts the offset in it of each line's first non-space, when
// that is "/", with the line's number. ok is false when the body is nested
// deeper than MaxDepth or its paragraphs cost more than maxMarkdownWork.
func markdownSource(body string, starts map[int]int) (src string, ok bool) {
	var b strings.Builder
	b.Grow(len(body) + 1) // a capacity hint: any size gives the same text
	sc := newScanner(MaxDepth)
	work, para, paraLen, paraPunct := 0, 0, 0, 0
	blanks := 0
	forEachLine(body, func(n int, ln string) bool {
		info := sc.line(ln)
		if sc.tooDeep {
			return false
		}
		if info.class != lineParagraph || info.para != para {
			work += paraLen * paraPunct
			para, paraLen, paraPunct = 0, 0, 0
			if info.class == lineParagraph {
				para = info.para
			}
		}
		if para != 0 {
			paraLen += len(ln)
			for i := 0; i < len(ln); i++ {
				if markdownPunct(ln[i]) {
					paraPunct++
				}
			}
		}
		if onlySpaceTab(ln) {
			if blanks++; blanks > 2 {
				return true
			}
		} else {
			blanks = 0
		}
		if i := commandIndent(ln); i >= 0 && ln[i] == '/' {
			starts[b.Len()+i] = n
		}
		b.WriteString(ln)
		b.WriteByte('\n')
		return true
	})
	work += paraLen * paraPunct
	if sc.tooDeep || work > maxMarkdownWork {
		return "", false
	}
	return b.String(), true
}

// markLineStarts parses source and renders the skeleton of its HTML that
// seenMarkers reads: paragraphs and headings as <p>…</p>, raw HTML as is
// (with any marker characters in it replaced), and a marker
// markOpen+index+markClose at each text node that starts at an offset of
// starts and is text of its paragraph or heading itself (lineText). marked
// holds the line number of each marker, by index.
func markLineStarts(source []byte, starts map[int]int) (html string, marked []int) {
	doc := markdown.Parse(text.NewReader(source))
	var out strings.Builder
	raw := func(b []byte) {
		s := string(b)
		if strings.ContainsRune(s, markOpen) || strings.ContainsRune(s, markClose) {
			s = strings.NewReplacer(string(markOpen), "\uFFFD", string(markClose), "\uFFFD").Replace(s)
		}
		out.WriteString(s)
	}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		switch n := n.(type) {
		case *ast.Paragraph, *ast.Heading:
			if entering {
				out.WriteString("<p>")
			} else {
				out.WriteString("</p>\n")
			}
		case *ast.HTMLBlock:
			if entering {
				lines := n.Lines()
				for i := 0; i < lines.Len(); i++ {
					seg := lines.At(i)
					raw(seg.Value(source))
				}
				if n.HasClosure() {
					raw(n.ClosureLine.Value(source))
				}
				out.WriteByte('\n')
			}
		case *ast.RawHTML:
			if entering {
				for i := 0; i < n.Segments.Len(); i++ {
					seg := n.Segments.At(i)
					raw(seg.Value(source))
				}
			}
		case *ast.Text:
			if line, ok := starts[n.Segment.Start]; entering && ok && lineText(n) {
				out.WriteRune(markOpen)
				out.WriteString(strconv.Itoa(len(marked)))
				out.WriteRune(markClose)
				marked = append(marked, line)
			}
		}
		return ast.WalkContinue, nil
	})
	return out.String(), marked
}

// lineText reports whether a text node is text of a paragraph or heading
// itself (not of a link, an image, emphasis or a code span), outside any
// footnote and table.
func lineText(n ast.Node) bool {
	switch n.Parent().Kind() {
	case ast.KindParagraph, ast.KindTextBlock, ast.KindHeading:
	default:
		return false
	}
	for p := n.Parent(); p != nil; p = p.Parent() {
		switch p.Kind() {
		case extast.KindFootnote, extast.KindFootnoteList, extast.KindTable:
			return false
		}
	}
	return true
}

// seenMarkers tokenizes doc as a browser does and returns the lines of the
// markers that come out as text outside hiding elements; a marker inside a
// comment, a tag (as an attribute) or a tag left open at the end is never
// text.
func seenMarkers(doc string, marked []int) map[int]bool {
	seen := map[int]bool{}
	z := html.NewTokenizer(strings.NewReader(doc))
	open := map[string]int{}
	hidden := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return seen
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			if hidingElements[string(name)] {
				open[string(name)]++
				hidden++
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if open[string(name)] > 0 {
				open[string(name)]--
				hidden--
			}
		case html.TextToken:
			if hidden > 0 {
				continue
			}
			t := string(z.Text())
			for {
				i := strings.IndexRune(t, markOpen)
				if i < 0 {
					break
				}
				t = t[i+len(string(markOpen)):]
				j := strings.IndexRune(t, markClose)
				// Markers are scrubbed from raw HTML, and the ones written
				// here always hold an index: j > 0, and k < len(marked).
				if j < 0 {
					break
				}
				if k, err := strconv.Atoi(t[:j]); err == nil && k >= 0 && k < len(marked) {
					seen[marked[k]] = true
				}
				t = t[j:]
			}
		}
	}
}

// forEachLine calls f with the number (from 1) and text of each line of
// body, as Parse splits them, until f returns false.
func forEachLine(body string, f func(n int, ln string) bool) {
	pos := 0
	if strings.HasPrefix(body, "\uFEFF") {
		pos = len("\uFEFF") // a byte order mark is not text
	}
	for n := 1; pos < len(body); n++ {
		rest := body[pos:]
		line, next := rest, len(body)
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line, next = rest[:i], pos+i+1
		}
		if i := strings.IndexByte(line, '\r'); i >= 0 {
			if i != len(line)-1 {
				next = pos + i + 1 // a lone CR ends the line
			}
			line = line[:i]
		}
		pos = next
		if !f(n, line) {
			return
		}
	}
}
