// Package testutil holds the helpers the tests of several packages share:
// golden files, file trees on disk, edits of in-memory trees, the
// GitHub Actions runner's reading of workflow commands in a log
// (RunWorkflowCommands), and Exit, which ends every test binary. Only
// _test.go files import it; it is not part of phasegate.
//
// Golden files are refreshed, after reviewing the change, by running the
// tests of the packages that compare them with -update, for example
//
//	go test ./internal/report -run TestRulesDoc -update
//
// The flag is defined here, once, so every test binary has it (each ends
// with Exit); a package without golden files ignores it.
package testutil

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files the tests compare with")

// Golden compares got with the golden file at path (relative to the
// package's directory, as tests run there). With -update it first writes
// got to path, creating its directory.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (go test -run '%s' -update writes it): %v", t.Name(), err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (review, then rerun with -update)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// WriteTree writes files (slash-separated paths relative to dir, and their
// contents) under dir, creating directories, and returns dir.
func WriteTree(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Edit changes one file of an in-memory tree (path → content):
//   - with To set, the file moves to To;
//   - with Old set, the N-th occurrence of Old (the first when N < 2) is
//     replaced by New;
//   - else New is the file's new content, "" deleting the file.
type Edit struct {
	File, Old, New, To string
	N                  int
}

// EditTree returns a copy of base with edits applied in order. An Old that
// is not in its file panics: the edit would silently test nothing (edits
// are mostly built in init, where there is no *testing.T).
func EditTree(base map[string]string, edits ...Edit) map[string]string {
	tree := make(map[string]string, len(base))
	for k, v := range base {
		tree[k] = v
	}
	for _, e := range edits {
		switch {
		case e.To != "":
			tree[e.To] = tree[e.File]
			delete(tree, e.File)
		case e.Old != "":
			at := nth(tree[e.File], e.Old, e.N)
			if at < 0 {
				panic("testutil.EditTree: " + e.File + " does not contain " + e.Old)
			}
			tree[e.File] = tree[e.File][:at] + e.New + tree[e.File][at+len(e.Old):]
		case e.New == "":
			delete(tree, e.File)
		default:
			tree[e.File] = e.New
		}
	}
	return tree
}

// Replace replaces the n-th occurrence of old in s (the first when n < 2)
// by new, and panics when there is no such occurrence.
func Replace(s, old, new string, n int) string {
	at := nth(s, old, n)
	if at < 0 {
		panic("testutil.Replace: the text does not contain " + old)
	}
	return s[:at] + new + s[at+len(old):]
}

// nth is the index of the n-th occurrence of old in s (the first when
// n < 2), -1 if there is none.
func nth(s, old string, n int) int {
	at := -1
	for i := 0; i < max(n, 1); i++ {
		j := strings.Index(s[at+1:], old)
		if j < 0 {
			return -1
		}
		at += 1 + j
	}
	return at
}

// Race says the test binary was built with -race (a test sizes its work
// by it: the detector makes code several times slower).
const Race = raceEnabled
