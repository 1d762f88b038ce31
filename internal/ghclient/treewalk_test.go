package ghclient

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/ghfake"
)

var baseSHA = strings.Repeat("b", 40)

// changeBase is the base commit of the TreeChange tests: same/ never
// changes (three levels, five trees), the rest does in some case.
func changeBase() []ghfake.TreeFile {
	return []ghfake.TreeFile{
		{Path: "same/a.txt", Content: []byte("a")},
		{Path: "same/x/b.txt", Content: []byte("b")},
		{Path: "same/x/y/c.txt", Content: []byte("c")},
		{Path: "same/z/d.txt", Content: []byte("d")},
		{Path: ".pace/day-1/report.yaml", Content: []byte("verdict: hold\n")},
		{Path: ".pace/day-1/notes.md", Content: []byte("n")},
		{Path: "run.sh", Content: []byte("#!/bin/sh\n")},
		{Path: "conf", Content: []byte("conf")},
		{Path: "gone/p.txt", Content: []byte("p")},
		{Path: "gone/q/r.txt", Content: []byte("r")},
		{Path: "link", Content: []byte("run.sh"), Mode: ghfake.ModeSymlink},
		{Path: "vendor/sub", Mode: ghfake.ModeSubmodule, Commit: subSHA},
	}
}

// edit returns changeBase with the files of drop removed and add added.
func edit(drop []string, add ...ghfake.TreeFile) []ghfake.TreeFile {
	var out []ghfake.TreeFile
	for _, f := range changeBase() {
		kept := true
		for _, d := range drop {
			kept = kept && f.Path != d && !strings.HasPrefix(f.Path, d+"/")
		}
		if kept {
			out = append(out, f)
		}
	}
	return append(out, add...)
}

func TestTreeChange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		head      []ghfake.TreeFile
		lim       TreeLimits
		want      map[string]string
		wantErr   string
		wantTrees int // tree reads; 0: not checked
	}{
		{name: "the same tree", head: changeBase(), want: map[string]string{}, wantTrees: 2},
		{name: "a nested file modified: only differing subtrees read",
			head: edit([]string{".pace/day-1/report.yaml"}, ghfake.TreeFile{Path: ".pace/day-1/report.yaml", Content: []byte("verdict: ship\n")}),
			want: map[string]string{".pace/day-1/report.yaml": "modified"}, wantTrees: 6},
		{name: "a file added deep in a new directory",
			head: edit(nil, ghfake.TreeFile{Path: ".pace/day-2/new/x.yaml", Content: []byte("x")}),
			want: map[string]string{".pace/day-2/new/x.yaml": "added"}, wantTrees: 6},
		{name: "a directory removed: its files",
			head: edit([]string{"gone"}), want: map[string]string{"gone/p.txt": "removed", "gone/q/r.txt": "removed"}, wantTrees: 4},
		{name: "a mode change", head: edit([]string{"run.sh"}, ghfake.TreeFile{Path: "run.sh", Content: []byte("#!/bin/sh\n"), Mode: ghfake.ModeExecutable}),
			want: map[string]string{"run.sh": "modified"}},
		{name: "a file becomes a symlink", head: edit([]string{"conf"}, ghfake.TreeFile{Path: "conf", Content: []byte("conf"), Mode: ghfake.ModeSymlink}),
			want: map[string]string{"conf": "modified"}},
		{name: "a symlink retargeted", head: edit([]string{"link"}, ghfake.TreeFile{Path: "link", Content: []byte("conf"), Mode: ghfake.ModeSymlink}),
			want: map[string]string{"link": "modified"}},
		{name: "a submodule moved", head: edit([]string{"vendor/sub"}, ghfake.TreeFile{Path: "vendor/sub", Mode: ghfake.ModeSubmodule, Commit: strings.Repeat("2", 40)}),
			want: map[string]string{"vendor/sub": "modified"}},
		{name: "a file becomes a directory",
			head: edit([]string{"conf"}, ghfake.TreeFile{Path: "conf/a.yaml", Content: []byte("a")}, ghfake.TreeFile{Path: "conf/b/c.yaml", Content: []byte("c")}),
			want: map[string]string{"conf": "removed", "conf/a.yaml": "added", "conf/b/c.yaml": "added"}},
		{name: "a directory becomes a file",
			head: edit([]string{"gone"}, ghfake.TreeFile{Path: "gone", Content: []byte("g")}),
			want: map[string]string{"gone": "added", "gone/p.txt": "removed", "gone/q/r.txt": "removed"}},
		{name: "a directory becomes a submodule",
			head: edit([]string{"gone"}, ghfake.TreeFile{Path: "gone", Mode: ghfake.ModeSubmodule, Commit: subSHA}),
			want: map[string]string{"gone": "added", "gone/p.txt": "removed", "gone/q/r.txt": "removed"}},
		{name: "past MaxEntries", lim: TreeLimits{MaxEntries: 12},
			head:    edit([]string{".pace/day-1/report.yaml"}, ghfake.TreeFile{Path: ".pace/day-1/report.yaml", Content: []byte("x")}),
			wantErr: "the limit is MaxEntries 12"},
		{name: "past MaxListingBytes", lim: TreeLimits{MaxListingBytes: 40},
			head:    edit([]string{".pace/day-1/report.yaml"}, ghfake.TreeFile{Path: ".pace/day-1/report.yaml", Content: []byte("x")}),
			wantErr: "the limit is MaxListingBytes 40"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, Options{})
			e.fake.SetTree(owner, repo, baseSHA, changeBase())
			e.fake.SetTree(owner, repo, headSHA, tt.head)
			got, err := e.c.TreeChange(ctxT(t), owner, repo, baseSHA, headSHA, tt.lim)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrTreeTooLarge) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q wrapping ErrTreeTooLarge", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tt.want) {
				t.Fatalf("changes %v, want %v", got, tt.want)
			}
			trees := e.fake.CountCalls("GET", "/repos/acme/widgets/git/trees/")
			if tt.wantTrees != 0 && trees != tt.wantTrees {
				t.Fatalf("%d tree reads, want %d", trees, tt.wantTrees)
			}
			for _, c := range e.fake.Calls() {
				if strings.Contains(c.Path, "/git/trees/") && strings.Contains(c.Query, "recursive") {
					t.Fatalf("a recursive read: %s?%s", c.Path, c.Query)
				}
			}
		})
	}
}

// TestTreeChangeOfManyFiles: a change in one file among many reads only
// the trees above it, and the entry bound counts what is read, not what the
// commits hold.
func TestTreeChangeOfManyFiles(t *testing.T) {
	t.Parallel()
	var files []ghfake.TreeFile
	for i := 0; i < 300; i++ {
		files = append(files, ghfake.TreeFile{Path: fmt.Sprintf("d%d/f%d.yaml", i%30, i), Content: []byte(fmt.Sprint(i))})
	}
	e := newEnv(t, Options{})
	e.fake.SetTree(owner, repo, baseSHA, files)
	files[7].Content = []byte("changed")
	e.fake.SetTree(owner, repo, headSHA, files)
	// The roots (30 entries each) and d7 (10 each): 80 entries, of 330 a side.
	got, err := e.c.TreeChange(ctxT(t), owner, repo, baseSHA, headSHA, TreeLimits{MaxEntries: 80})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"d7/f7.yaml": "modified"}; !maps.Equal(got, want) {
		t.Fatalf("changes %v, want %v", got, want)
	}
	if _, err := e.c.TreeChange(ctxT(t), owner, repo, baseSHA, headSHA, TreeLimits{MaxEntries: 79}); !errors.Is(err, ErrTreeTooLarge) {
		t.Fatalf("79 entries: err = %v", err)
	}
}
