package command

import (
	"strings"
	"testing"
)

// The parser's defences are layered: a command line must be paragraph text
// to the line scanner (markdown.go) and its comment tracking (text.go),
// and visible in the rendered comment (visible.go). Through Parse, a layer
// that hides too little is covered by the next, so each layer is also
// tested on its own here: a regression in one is a hole in the defence
// even while the other still holds.

// TestSkipComments: whether an HTML comment is open at the end of a line,
// given whether one was open at its start; the markers may stand at the
// very start of what is left of the line.
func TestSkipComments(t *testing.T) {
	tests := []struct {
		s          string
		open, want bool
	}{
		{s: "", open: false, want: false},
		{s: "", open: true, want: true},
		{s: "<!--", open: false, want: true},
		{s: "-->", open: true, want: false},
		{s: "a <!-- b --> c", open: false, want: false},
		{s: "<!-- a --><!--", open: false, want: true},
		{s: "--><!--", open: true, want: true},
		{s: "<!-->", open: false, want: false},
		{s: "<!--->", open: false, want: false},
		{s: "a --> b", open: false, want: false},
	}
	for _, tc := range tests {
		if _, got := visibleText(tc.s, tc.open, false); got != tc.want {
			t.Errorf("visibleText(%q, %v, false) open = %v, want %v", tc.s, tc.open, got, tc.want)
		}
	}
}

// TestVisibleText: a line without the parts inside HTML comments.
func TestVisibleText(t *testing.T) {
	tests := []struct {
		s        string
		open     bool
		want     string
		wantOpen bool
	}{
		{s: "a b", open: false, want: "a b", wantOpen: false},
		{s: "a b", open: true, want: "", wantOpen: true},
		{s: "<!--a-->b", open: false, want: "b", wantOpen: false},
		{s: "-->b", open: true, want: "b", wantOpen: false},
		{s: "a<!--b-->c", open: false, want: "ac", wantOpen: false},
		{s: "a<!---->c<!--", open: false, want: "ac", wantOpen: true},
		{s: "a <!-- b", open: false, want: "a ", wantOpen: true},
		{s: "x --> y <!-- z --> w", open: true, want: " y  w", wantOpen: false},
		{s: "<!-->a", open: false, want: "a", wantOpen: false},
	}
	for _, tc := range tests {
		got, open := visibleText(tc.s, tc.open, true)
		if got != tc.want || open != tc.wantOpen {
			t.Errorf("visibleText(%q, %v) = %q, %v; want %q, %v", tc.s, tc.open, got, open, tc.want, tc.wantOpen)
		}
		if _, skip := visibleText(tc.s, tc.open, false); skip != tc.wantOpen {
			t.Errorf("visibleText(%q, %v, false) open = %v, with the text %v", tc.s, tc.open, skip, tc.wantOpen)
		}
	}
}

// TestMarkdownSource: runs of blank lines are cut to two (they cost
// goldmark time and change no block structure), lines end with LF, and
// the start of each line whose first non-space is "/" is recorded.
func TestMarkdownSource(t *testing.T) {
	starts := map[int]int{}
	src, ok := markdownSource("a\r\n\n\n  \n\n/b\r /c\n\t/d", starts)
	if want := "a\n\n\n/b\n /c\n\t/d\n"; !ok || src != want {
		t.Errorf("markdownSource = %q, %v; want %q", src, ok, want)
	}
	if want := map[int]int{4: 6, 8: 7}; len(starts) != len(want) || starts[4] != 6 || starts[8] != 7 {
		t.Errorf("starts = %v, want %v", starts, want)
	}
}

// TestParseWorkLimit: the rendering work is counted per paragraph (its
// length times its inline punctuation), so many short lines of brackets
// count as the paragraph they make; a paragraph at the limit is rendered,
// one character over it is not.
func TestParseWorkLimit(t *testing.T) {
	cmd := "/resolve D-001 approve\n\n"
	if res := ParseAll(cmd + strings.Repeat("[[[[[[[[\n", 4096)); !res.TooComplex || len(res.Commands) != 0 {
		t.Errorf("4096 short lines of brackets: too complex %v, %s", res.TooComplex, dump(res.Commands))
	}
	if res := ParseAll(cmd + strings.Repeat("[", 1<<14)); res.TooComplex || len(res.Commands) != 1 {
		t.Errorf("a paragraph of 2^14 brackets (at the limit): too complex %v, %s", res.TooComplex, dump(res.Commands))
	}
	if res := ParseAll(cmd + strings.Repeat("[", 1<<14) + "x"); !res.TooComplex {
		t.Errorf("a paragraph of 2^14 brackets and a letter: not too complex")
	}
}
