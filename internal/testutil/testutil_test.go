package testutil

import (
	"maps"
	"os"
	"path/filepath"
	"testing"
)

func TestEditTree(t *testing.T) {
	base := map[string]string{"a": "x y x y", "b": "keep"}
	tests := []struct {
		name  string
		edits []Edit
		want  map[string]string
	}{
		{name: "no edit", want: base},
		{name: "first occurrence", edits: []Edit{{File: "a", Old: "x", New: "z"}}, want: map[string]string{"a": "z y x y", "b": "keep"}},
		{name: "second occurrence", edits: []Edit{{File: "a", Old: "x", New: "z", N: 2}}, want: map[string]string{"a": "x y z y", "b": "keep"}},
		{name: "new content", edits: []Edit{{File: "c", New: "new"}}, want: map[string]string{"a": "x y x y", "b": "keep", "c": "new"}},
		{name: "delete", edits: []Edit{{File: "b"}}, want: map[string]string{"a": "x y x y"}},
		{name: "move, then edit", edits: []Edit{{File: "b", To: "d"}, {File: "d", Old: "keep", New: "kept"}}, want: map[string]string{"a": "x y x y", "d": "kept"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EditTree(base, tt.edits...); !maps.Equal(got, tt.want) {
				t.Errorf("EditTree = %v, want %v", got, tt.want)
			}
			if base["a"] != "x y x y" || base["b"] != "keep" || len(base) != 2 {
				t.Fatalf("EditTree changed its base: %v", base)
			}
		})
	}
}

func TestEditThatDoesNotApplyPanics(t *testing.T) {
	tests := []struct {
		name string
		edit func()
	}{
		{name: "EditTree, no such text", edit: func() { EditTree(map[string]string{"a": "x"}, Edit{File: "a", Old: "y", New: "z"}) }},
		{name: "EditTree, no such occurrence", edit: func() { EditTree(map[string]string{"a": "x"}, Edit{File: "a", Old: "x", New: "z", N: 2}) }},
		{name: "Replace", edit: func() { Replace("x", "y", "z", 1) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic: the edit would silently test nothing")
				}
			}()
			tt.edit()
		})
	}
}

func TestWriteTreeAndGolden(t *testing.T) {
	dir := WriteTree(t, t.TempDir(), map[string]string{"a/b/c.txt": "hello\n", "d.txt": ""})
	got, err := os.ReadFile(filepath.Join(dir, "a", "b", "c.txt"))
	if err != nil {
		t.Fatal(err)
	}
	Golden(t, filepath.Join(dir, "a", "b", "c.txt"), got)
	if fi, err := os.Stat(filepath.Join(dir, "d.txt")); err != nil || fi.Size() != 0 {
		t.Fatalf("d.txt: %v %v", fi, err)
	}
}
