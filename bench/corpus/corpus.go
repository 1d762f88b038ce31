// Package corpus generates a realistic, deterministic corpus of pipeline
// artifacts for benchmarking `phasegate validate` and its peers.
//
// The corpus looks like a monorepo in which many services run the five
// families' pipelines side by side: services/<name>/.pace/day-N/…,
// .pipeline/<issue>/…, artifacts/<task_id>/…, .autopilot/…,
// .planning/phases/<id>/…, .devwork/<feature>/*.outcome.yaml. Files are laid
// out by the families' path conventions, are consistent with their siblings
// (a gate report grades exactly its story card's acceptance criteria, a
// worker changes only files its plan names, a verdict agrees with its submit,
// run-state tallies add up, …), and about 2% of them are deliberately
// invalid (a schema violation; a few are not even parseable).
package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// InvalidRate is the share of files that are deliberately made invalid.
const InvalidRate = 0.02

// File is one generated artifact.
type File struct {
	// Path is slash-separated, relative to the corpus root.
	Path string
	// Kind is the artifact kind ID that the path convention (or, for a few
	// Phase Outcomes, the content) gives, e.g. "pace.gate-report"; "" for a
	// companion file that is not an artifact.
	Kind string
	// Data is the file's content.
	Data []byte
	// Valid is false for a deliberately invalid file.
	Valid bool
	// Defect says what was broken in an invalid file ("" when valid).
	Defect string
	// Syntax is true when the defect makes the file unparseable (or trips
	// a decoder policy such as a duplicate key) rather than a schema
	// violation.
	Syntax bool
}

// Walk generates n artifacts from seed and calls fn for each file, in a
// fixed order. Besides the n artifacts it also yields a few companion files
// that are not artifacts (Kind "": an SCC task's report.md, selftest.log,
// patch.diff, evidence JSON), as a real repository has them next to the
// artifacts. The same n and seed always give the same files. It stops at
// fn's first error and returns it.
func Walk(n int, seed int64, fn func(File) error) error {
	if n < 0 {
		return fmt.Errorf("corpus: negative file count %d", n)
	}
	g := &gen{r: newRnd(seed)}
	count := 0
	for svc := 0; count < n; svc++ {
		g.pending = g.pending[:0]
		g.names = map[string]bool{}
		g.service(svc)
		for _, f := range g.pending {
			if count == n {
				break
			}
			if err := fn(f); err != nil {
				return err
			}
			if f.Kind != "" {
				count++
			}
		}
	}
	return nil
}

// Generate writes n files from seed under dir (created if needed). Existing
// files with the same paths are overwritten; nothing else in dir is touched.
func Generate(dir string, n int, seed int64) error {
	made := map[string]bool{}
	return Walk(n, seed, func(f File) error {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		d := filepath.Dir(p)
		if !made[d] {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("corpus: %w", err)
			}
			made[d] = true
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return fmt.Errorf("corpus: %w", err)
		}
		return nil
	})
}

// Encoding of a generated value.
type encoding int

const (
	encJSON     encoding = iota // one JSON document, 2-space indent
	encYAML                     // one YAML document (also PACE .md files)
	encJSONL                    // a []any of objects, one JSON object per line
	encMarkdown                 // a string, written as is (learnings.md)
)

// gen holds the state of one Walk.
type gen struct {
	r       rnd
	pending []File
	// clock is the service's current time; families move it forward.
	clock time.Time
	// names already used in the current service (issue IDs, features, …).
	names map[string]bool
	// keep, when set (by tests), sees every valid value before encoding.
	keep func(path, kind string, enc encoding, v any)
}

// taken reports whether name was already used in this service, and marks it.
func (g *gen) taken(name string) bool {
	if g.names[name] {
		return true
	}
	g.names[name] = true
	return false
}

// add encodes v and queues it as a file, deciding here whether it is one of
// the deliberately invalid ones.
func (g *gen) add(path, kind string, enc encoding, v any) {
	f := File{Path: path, Kind: kind, Valid: true}
	if g.keep != nil {
		g.keep(path, kind, enc, deepCopy(v))
	}
	if g.r.chance(InvalidRate) {
		if enc != encMarkdown && g.r.chance(0.1) {
			f.Data = g.breakSyntax(enc, encode(enc, v))
			f.Valid, f.Syntax, f.Defect = false, true, "syntax"
			g.pending = append(g.pending, f)
			return
		}
		if nv, defect, ok := g.mutate(kind, enc, v); ok {
			v, f.Valid, f.Defect = nv, false, defect
		}
	}
	f.Data = encode(enc, v)
	g.pending = append(g.pending, f)
}

func encode(enc encoding, v any) []byte {
	switch enc {
	case encJSON:
		return encodeJSON(v)
	case encJSONL:
		var out []byte
		for _, line := range v.([]any) {
			out = append(out, encodeJSONLine(line)...)
			out = append(out, '\n')
		}
		return out
	case encMarkdown:
		return []byte(v.(string))
	}
	return encodeYAML(v)
}

// service generates one service's artifacts: a random subset of the five
// families, each internally consistent.
func (g *gen) service(i int) {
	r := g.r
	base := fmt.Sprintf("services/%s-%03d", pick(r, areas), i)
	g.clock = time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC).Add(time.Duration(r.IntN(60*24)) * time.Hour)
	some := false
	if r.chance(0.65) {
		g.pace(base)
		some = true
	}
	if r.chance(0.7) {
		g.jg(base)
		some = true
	}
	if r.chance(0.6) {
		g.scc(base)
		some = true
	}
	if r.chance(0.3) {
		g.autopilot(base)
		some = true
	}
	if r.chance(0.6) || !some {
		g.outcomes(base)
	}
}
