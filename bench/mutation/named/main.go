// Command named runs phasegate's named mutations: hand-written mutants of
// the defences that gremlins cannot reach (a `case` of a `switch` without a
// tag, whose condition gremlins reports as not covered) or that need more
// than one token changed (a check removed). Each mutation names a file, a
// snippet of it (whole lines, compared without leading and trailing white
// space) and what replaces it. For each one it builds the mutated file in a
// temporary directory, runs the package's tests against it with
// `go test -count=1 -overlay`, so that the source tree is never written,
// and says whether the tests killed the mutant.
//
//	go -C bench run ./mutation/named -root .. [-list bench/mutation/mutations.txt] [-out FILE] [-run REGEXP] [-check]
//
// It prints its progress on stderr and the results, as TSV, on stdout or to
// the -out file. It works in the repository root, the product module (-root,
// default the current directory; -list and -out are relative to it): the
// mutated files and the go test runs are the product's, while this program
// is in the bench module (bench/go.mod).
//
// A snippet that is not in its file, or is in it more than once, is
// reported (NOT FOUND, AMBIGUOUS) and makes the exit status 3, as does a
// mutant that does not build (NOT VIABLE): the list needs fixing after the
// code changed. -check only looks the snippets up. See bench/mutation/README.md.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Mutation is one named mutant.
type Mutation struct {
	Name    string
	Defence string
	File    string // relative to the module root, slash-separated
	Pkg     string // the package whose tests run; default ./<dir of File>/
	Orig    []string
	Mutated []string
	Line    int // where the mutation starts in the list file
}

// Statuses of a named mutation.
const (
	Killed     = "KILLED"
	Lived      = "LIVED"
	TimedOut   = "TIMED OUT"
	NotViable  = "NOT VIABLE"
	NotFound   = "NOT FOUND"
	Ambiguous  = "AMBIGUOUS"
	Found      = "FOUND" // -check
	statusHead = "name\tstatus\tseconds\tfile\tkilled_by\tdefence"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("named", flag.ContinueOnError)
	fl.SetOutput(stderr)
	list := fl.String("list", "bench/mutation/mutations.txt", "the list of named mutations")
	out := fl.String("out", "", "also write the results as TSV to this file")
	only := fl.String("run", "", "run only the mutations whose name matches this regular expression")
	check := fl.Bool("check", false, "only check that every snippet is found exactly once")
	timeout := fl.Duration("timeout", 10*time.Minute, "go test -timeout of one mutant")
	root := fl.String("root", ".", "the repository root (the product module), where it reads the list, mutates and runs go test")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if err := os.Chdir(*root); err != nil {
		fmt.Fprintln(stderr, "named: -root:", err)
		return 2
	}
	muts, err := readList(*list)
	if err != nil {
		fmt.Fprintln(stderr, "named:", err)
		return 2
	}
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			fmt.Fprintln(stderr, "named: -run:", err)
			return 2
		}
		muts = filter(muts, re)
	}
	tmp, err := os.MkdirTemp("", "phasegate-named-")
	if err != nil {
		fmt.Fprintln(stderr, "named:", err)
		return 2
	}
	defer os.RemoveAll(tmp)
	rows := []string{statusHead}
	bad := 0
	for i, m := range muts {
		r := runOne(m, tmp, *check, *timeout)
		fmt.Fprintf(stderr, "[%d/%d] %-44s %-10s %5.1fs %s\n", i+1, len(muts), m.Name, r.status, r.seconds, r.note)
		switch r.status {
		case NotFound, Ambiguous, NotViable:
			bad++
		}
		rows = append(rows, strings.Join([]string{m.Name, r.status, fmt.Sprintf("%.1f", r.seconds), m.File, strings.Join(r.killedBy, " "), m.Defence}, "\t"))
	}
	text := strings.Join(rows, "\n") + "\n"
	if *out == "" {
		fmt.Fprint(stdout, text)
	} else if err := os.WriteFile(*out, []byte(text), 0o644); err != nil {
		fmt.Fprintln(stderr, "named:", err)
		return 2
	}
	if bad > 0 {
		fmt.Fprintf(stderr, "named: %d mutation(s) NOT FOUND, AMBIGUOUS or NOT VIABLE: fix %s\n", bad, *list)
		return 3
	}
	return 0
}

func filter(muts []Mutation, re *regexp.Regexp) []Mutation {
	var out []Mutation
	for _, m := range muts {
		if re.MatchString(m.Name) {
			out = append(out, m)
		}
	}
	return out
}

type result struct {
	status   string
	seconds  float64
	killedBy []string
	note     string
}

// runOne applies m in an overlay and runs its package's tests.
func runOne(m Mutation, tmp string, check bool, timeout time.Duration) result {
	src, err := os.ReadFile(filepath.FromSlash(m.File))
	if err != nil {
		return result{status: NotFound, note: err.Error()}
	}
	mutated, n := apply(string(src), m.Orig, m.Mutated)
	switch {
	case n == 0:
		return result{status: NotFound, note: fmt.Sprintf("the original snippet (list line %d) is not in %s", m.Line, m.File)}
	case n > 1:
		return result{status: Ambiguous, note: fmt.Sprintf("the original snippet (list line %d) is in %s %d times", m.Line, m.File, n)}
	case check:
		return result{status: Found}
	}
	dir := filepath.Join(tmp, safeName(m.Name))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return result{status: NotViable, note: err.Error()}
	}
	abs, err := filepath.Abs(filepath.FromSlash(m.File))
	if err != nil {
		return result{status: NotViable, note: err.Error()}
	}
	file := filepath.Join(dir, filepath.Base(m.File))
	overlay := filepath.Join(dir, "overlay.json")
	ov, _ := json.Marshal(map[string]map[string]string{"Replace": {abs: file}})
	if err := os.WriteFile(file, []byte(mutated), 0o644); err != nil {
		return result{status: NotViable, note: err.Error()}
	}
	if err := os.WriteFile(overlay, ov, 0o644); err != nil {
		return result{status: NotViable, note: err.Error()}
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), timeout+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "-tags", "integration", "-count=1", "-timeout", timeout.String(), "-overlay", overlay, m.pkg())
	output, err := cmd.CombinedOutput()
	r := result{seconds: time.Since(start).Seconds()}
	r.status, r.killedBy = verdict(string(output), err)
	if r.status == NotViable {
		r.note = firstLines(string(output), 5)
	}
	return r
}

// verdict reads go test's output: the failing tests when it failed.
func verdict(output string, err error) (string, []string) {
	if err == nil {
		return Lived, nil
	}
	var exit *exec.ExitError
	switch {
	case strings.Contains(output, "[build failed]") || strings.Contains(output, "[setup failed]") || !errors.As(err, &exit):
		return NotViable, nil
	case strings.Contains(output, "panic: test timed out"):
		return TimedOut, nil
	}
	seen := map[string]bool{}
	var tests []string
	for _, m := range failRE.FindAllStringSubmatch(output, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			tests = append(tests, m[1])
		}
	}
	sort.Strings(tests)
	if len(tests) > maxKillers {
		tests = append(tests[:maxKillers], fmt.Sprintf("+%d more", len(tests)-maxKillers))
	}
	return Killed, tests
}

// maxKillers bounds the failing tests listed per mutant.
const maxKillers = 6

var failRE = regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)`)

func (m Mutation) pkg() string {
	if m.Pkg != "" {
		return m.Pkg
	}
	return "./" + filepath.ToSlash(filepath.Dir(filepath.FromSlash(m.File))) + "/"
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " | ")
}

// apply replaces the one run of lines of src that matches orig (each line
// compared without leading and trailing white space) with mutated, indented
// as the run was. n is how many runs match; src is returned unchanged
// unless n is 1.
func apply(src string, orig, mutated []string) (string, int) {
	lines := strings.Split(src, "\n")
	want := trimAll(orig)
	if len(want) == 0 {
		return src, 0
	}
	at, n := -1, 0
	for i := 0; i+len(want) <= len(lines); i++ {
		if equalTrimmed(lines[i:i+len(want)], want) {
			at, n = i, n+1
		}
	}
	if n != 1 {
		return src, n
	}
	indent := leading(lines[at])
	base := leading(orig[0])
	repl := make([]string, 0, len(mutated))
	for _, l := range mutated {
		if strings.TrimSpace(l) == "" {
			repl = append(repl, "")
			continue
		}
		repl = append(repl, indent+strings.TrimPrefix(l, base))
	}
	out := append(append(append([]string{}, lines[:at]...), repl...), lines[at+len(want):]...)
	return strings.Join(out, "\n"), 1
}

func trimAll(ls []string) []string {
	out := make([]string, 0, len(ls))
	for _, l := range ls {
		out = append(out, strings.TrimSpace(l))
	}
	return out
}

func equalTrimmed(got, want []string) bool {
	for i := range want {
		if strings.TrimSpace(got[i]) != want[i] {
			return false
		}
	}
	return true
}

func leading(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " \t"))] }

// readList reads the list of named mutations (its format is described at
// the top of the list file).
func readList(path string) ([]Mutation, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseList(f, path)
}

// parseList reads blocks of
//
//	mutation: NAME
//	defence: TEXT
//	file: PATH
//	pkg: PATTERN          (optional)
//	original:
//	LINES…
//	mutated:
//	LINES…                (none: the original lines are removed)
//	end
//
// Outside a block, blank lines and lines starting with # are ignored.
func parseList(r io.Reader, path string) ([]Mutation, error) {
	var muts []Mutation
	var cur *Mutation
	section := "" // "", "head", "original", "mutated"
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		switch section {
		case "original", "mutated":
			if err := bodyLine(cur, &section, line); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, n, err)
			}
			if section == "" {
				muts = append(muts, *cur)
				cur = nil
			}
			continue
		}
		if cur == nil && (strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		var err error
		cur, section, err = headLine(cur, line, n)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("%s: mutation %q has no end", path, cur.Name)
	}
	return muts, checkNames(muts, path)
}

func headLine(cur *Mutation, line string, n int) (*Mutation, string, error) {
	key, val, _ := strings.Cut(line, ":")
	val = strings.TrimSpace(val)
	if cur == nil {
		if key != "mutation" || val == "" {
			return nil, "", fmt.Errorf("want \"mutation: NAME\", got %q", line)
		}
		return &Mutation{Name: val, Line: n}, "head", nil
	}
	switch key {
	case "defence":
		cur.Defence = val
	case "file":
		cur.File = val
	case "pkg":
		cur.Pkg = val
	case "original":
		if cur.File == "" {
			return nil, "", fmt.Errorf("mutation %q has no file", cur.Name)
		}
		return cur, "original", nil
	default:
		return nil, "", fmt.Errorf("mutation %q: unknown line %q", cur.Name, line)
	}
	return cur, "head", nil
}

func bodyLine(cur *Mutation, section *string, line string) error {
	switch {
	case *section == "original" && line == "mutated:":
		if len(trimAll(cur.Orig)) == 0 || strings.TrimSpace(cur.Orig[0]) == "" {
			return fmt.Errorf("mutation %q: the original snippet is empty or starts with a blank line", cur.Name)
		}
		*section = "mutated"
	case *section == "mutated" && line == "end":
		*section = ""
	case *section == "original":
		cur.Orig = append(cur.Orig, line)
	default:
		cur.Mutated = append(cur.Mutated, line)
	}
	return nil
}

func checkNames(muts []Mutation, path string) error {
	seen := map[string]bool{}
	for _, m := range muts {
		if seen[m.Name] {
			return fmt.Errorf("%s: mutation %q is listed twice", path, m.Name)
		}
		seen[m.Name] = true
	}
	return nil
}
