package artifact

import "testing"

// sameLineMap fails unless newLineMap's shortcut for files without other
// breaks maps every parser position as the full scan does.
func sameLineMap(t *testing.T, data []byte) {
	t.Helper()
	if encodingProblem(data) != nil {
		return // the YAML parser never sees such a file
	}
	got, want := newLineMap(data), scanLineMap(data)
	if got.lines != want.lines || got.end != want.end || got.identity != want.identity {
		t.Fatalf("%q: %d lines to %v (identity %v); the scan: %d lines to %v (identity %v)", data, got.lines, got.end, got.identity, want.lines, want.end, want.identity)
	}
	for line := 0; line <= want.lines+1; line++ {
		for col := 0; col <= 4; col++ {
			if g, w := got.pos(line, col), want.pos(line, col); g != w {
				t.Fatalf("%q: pos(%d, %d) = %v, the scan's %v", data, line, col, g, w)
			}
		}
		if g, w := got.pos(line, 1).Line, want.pos(line, 1).Line; g != w {
			t.Fatalf("%q: line(%d) = %d, the scan's %d", data, line, g, w)
		}
	}
}

var lineMapSeeds = []string{"", "a", "a\n", "a\nb", "a\r\nb\r\n", "a\rb", "a\r", "\r", "\r\n", "é\nüü", "a\u0085b", "a\u2028b\u2029c\n", "a\r\n\rb", "x: 1\ny: [2,\n 3]\n"}

func TestLineMapShortcut(t *testing.T) {
	for _, s := range lineMapSeeds {
		sameLineMap(t, []byte(s))
	}
}

func FuzzLineMapShortcut(f *testing.F) {
	for _, s := range lineMapSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(sameLineMap)
}
