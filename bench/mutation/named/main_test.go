package main

import (
	"errors"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

func TestApply(t *testing.T) {
	src := "func f() {\n\tswitch {\n\tcase a:\n\t\treturn 1\n\tcase b:\n\t\treturn 2\n\t}\n}\n"
	tests := []struct {
		name          string
		orig, mutated []string
		want          string
		wantN         int
	}{
		{name: "lines removed", orig: []string{"case a:", "  return 1"}, want: "func f() {\n\tswitch {\n\tcase b:\n\t\treturn 2\n\t}\n}\n", wantN: 1},
		{name: "replaced, indented as the match", orig: []string{"  case b:"}, mutated: []string{"  case c:", "    x()"},
			want: "func f() {\n\tswitch {\n\tcase a:\n\t\treturn 1\n\tcase c:\n\t  x()\n\t\treturn 2\n\t}\n}\n", wantN: 1},
		{name: "not found", orig: []string{"case z:"}, want: src},
		{name: "a part of a line is not a match", orig: []string{"case"}, want: src},
		{name: "found twice", orig: []string{"}"}, want: src, wantN: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, n := apply(src, tc.orig, tc.mutated)
			if got != tc.want || n != tc.wantN {
				t.Errorf("apply = %q, %d; want %q, %d", got, n, tc.want, tc.wantN)
			}
		})
	}
}

func TestParseList(t *testing.T) {
	list := "# comment\n\nmutation: x/one\ndefence: d\nfile: internal/p/p.go\noriginal:\n\tif a {\n# not a comment here\nmutated:\nend\n" +
		"mutation: x/two\nfile: internal/p/q.go\npkg: ./internal/...\noriginal:\nb\nmutated:\nc\nend\n"
	muts, err := parseList(strings.NewReader(list), "list")
	if err != nil {
		t.Fatal(err)
	}
	want := []Mutation{
		{Name: "x/one", Defence: "d", File: "internal/p/p.go", Orig: []string{"\tif a {", "# not a comment here"}, Line: 3},
		{Name: "x/two", File: "internal/p/q.go", Pkg: "./internal/...", Orig: []string{"b"}, Mutated: []string{"c"}, Line: 11},
	}
	if !reflect.DeepEqual(muts, want) {
		t.Errorf("parseList =\n%+v\nwant\n%+v", muts, want)
	}
	if muts[0].pkg() != "./internal/p/" {
		t.Errorf("pkg = %q", muts[0].pkg())
	}
	for _, bad := range []string{
		"file: x.go\n",
		"mutation: a\nfile: x.go\noriginal:\nx\nmutated:\n",
		"mutation: a\noriginal:\n",
		"mutation: a\nfile: x.go\noriginal:\n\nmutated:\nend\n",
		"mutation: a\nfile: x.go\noriginal:\nx\nmutated:\nend\nmutation: a\nfile: x.go\noriginal:\nx\nmutated:\nend\n",
		"mutation: a\nfile: x.go\nwhat: x\n",
	} {
		if _, err := parseList(strings.NewReader(bad), "list"); err == nil {
			t.Errorf("parseList(%q) = nil error", bad)
		}
	}
}

func TestVerdict(t *testing.T) {
	exit := exec.Command("false").Run()
	tests := []struct {
		name, output string
		err          error
		want         string
		wantTests    []string
	}{
		{name: "passed", want: Lived},
		{name: "failed", output: "--- FAIL: TestA (0.00s)\n    --- FAIL: TestA/b (0.00s)\nFAIL\n", err: exit, want: Killed, wantTests: []string{"TestA", "TestA/b"}},
		{name: "build failed", output: "FAIL\tx [build failed]\n", err: exit, want: NotViable},
		{name: "timed out", output: "panic: test timed out after 1s\n", err: exit, want: TimedOut},
		{name: "go did not run", err: errors.New("exec: not found"), want: NotViable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, tests := verdict(tc.output, tc.err)
			if got != tc.want || !reflect.DeepEqual(tests, tc.wantTests) {
				t.Errorf("verdict = %s %v, want %s %v", got, tests, tc.want, tc.wantTests)
			}
		})
	}
}
