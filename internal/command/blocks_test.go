package command

import "testing"

// TestHTMLBlockStart: the CommonMark HTML block start conditions as
// cmark-gfm reads them. A line that starts an HTML block hides the lines
// after it (up to its end condition, or a blank line for types 6 and 7);
// one that does not is paragraph text, so the command after it is read.
func TestHTMLBlockStart(t *testing.T) {
	tests := []struct {
		line string
		want int
	}{
		{line: "<", want: 0},
		{line: "<script>", want: 1},
		{line: "<SCRIPT>", want: 1},
		{line: "<pre", want: 1},
		{line: "<style type=x>", want: 1},
		{line: "<pre/>", want: 7}, // cmark-gfm: type 7 excludes no tag name
		{line: "</script>", want: 7},
		{line: "<!-- x", want: 2},
		{line: "<!-->", want: 2},
		{line: "<?php", want: 3},
		{line: "<!DOCTYPE html>", want: 4},
		{line: "<!doctype html>", want: 0}, // cmark-gfm: an upper-case letter after "<!"
		{line: "<!x", want: 0},
		{line: "<![CDATA[", want: 5},
		{line: "<div>", want: 6},
		{line: "<DIV class=x>", want: 6},
		{line: "</div>", want: 6},
		{line: "<div/>", want: 6},
		{line: "<div", want: 6},
		{line: "<details open>", want: 6},
		{line: "<divx>", want: 7},
		{line: "<x-y>", want: 7},
		{line: "<x-y a=\"1\" b='2' c=d e :f _g.h-i checked/>", want: 7},
		{line: "<x-y a = \"1\">", want: 7},
		{line: "<x-y\ta=1>", want: 7},
		{line: "<x-y a=\"1\">  ", want: 7},
		{line: "</x-y  >", want: 7},
		{line: "<x-y a=>", want: 0},
		{line: "<x-y a= >", want: 0},
		{line: "<x-y a=", want: 0},
		{line: "<x-y a", want: 0},
		{line: "<x-y a=\"1\"b>", want: 0},
		{line: "<x-y 1a>", want: 0},
		{line: "<x-y a='1>", want: 0},
		{line: "<x-y a=\"\x00\">", want: 0},
		{line: "<x-y a=b`c>", want: 0},
		{line: "<x-y a=\"1\"> x", want: 0},
		{line: "</x-y a>", want: 0},
		{line: "</>", want: 0},
		{line: "<1>", want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			if got := htmlBlockStart(tc.line); got != tc.want {
				t.Errorf("htmlBlockStart(%q) = %d, want %d", tc.line, got, tc.want)
			}
		})
	}
}

// TestHTMLBlockEnds: the end conditions of HTML blocks of types 1–5; a
// type 6 or 7 block ends only at a blank line.
func TestHTMLBlockEnds(t *testing.T) {
	tests := []struct {
		typ  int
		line string
		want bool
	}{
		{typ: 1, line: "x </script> y", want: true},
		{typ: 1, line: "</SCRIPT>", want: true},
		{typ: 1, line: "<b>x</pre>", want: true},
		{typ: 1, line: "</textarea >", want: false},
		{typ: 1, line: "</scripts>", want: false},
		{typ: 1, line: "</b> <", want: false},
		{typ: 2, line: "a -->", want: true},
		{typ: 2, line: "a --", want: false},
		{typ: 3, line: "?>", want: true},
		{typ: 4, line: ">", want: true},
		{typ: 5, line: "]]>", want: true},
		{typ: 5, line: "]]", want: false},
		{typ: 6, line: "</div>", want: false},
	}
	for _, tc := range tests {
		if got := htmlBlockEnds(tc.typ, tc.line); got != tc.want {
			t.Errorf("htmlBlockEnds(%d, %q) = %v, want %v", tc.typ, tc.line, got, tc.want)
		}
	}
}

// TestParseThematicBreak: a thematic break ends a paragraph, and with it
// the rationale of a /resolve; two marks are paragraph text.
func TestParseThematicBreak(t *testing.T) {
	runParseCases(t, []parseCase{
		{name: "underscores", body: "/resolve D-001 approve\nreason\n_ _ _\nmore", want: []Command{withRationale(resolve(1, "D-001", "approve"), "reason")}},
		{name: "asterisks", body: "/resolve D-001 approve\nreason\n***\nmore", want: []Command{withRationale(resolve(1, "D-001", "approve"), "reason")}},
		{name: "spaced hyphens", body: "/resolve D-001 approve\nreason\n- - -\nmore", want: []Command{withRationale(resolve(1, "D-001", "approve"), "reason")}},
		{name: "two marks are text", body: "/resolve D-001 approve\n_ _\nmore", want: []Command{withRationale(resolve(1, "D-001", "approve"), "_ _\nmore")}},
		{name: "other text on the line", body: "/resolve D-001 approve\n_ _ _ x\nmore", want: []Command{withRationale(resolve(1, "D-001", "approve"), "_ _ _ x\nmore")}},
		{name: "a break before the command", body: "x\n***\n/resolve D-001 approve", want: []Command{resolve(3, "D-001", "approve")}},
	})
}
