package check

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/config"
)

// Options of a run.
type Options struct {
	// Config is the repository configuration (globs, ignores, limits).
	Config config.Config
	// Prefix is prepended to every finding's file (used when several roots
	// are checked at once, so that paths stay unambiguous).
	Prefix string
	// Workers is the number of files checked in parallel; 0 means GOMAXPROCS.
	Workers int
}

// Result of a run.
type Result struct {
	// Artifacts is the number of artifacts checked.
	Artifacts int
	// Findings, sorted.
	Findings []Finding
}

// Run discovers the artifacts under root (a directory or one file), decodes
// them and checks each against its schema. Files are read and checked in
// parallel, one at a time per worker, so memory stays flat in the number of
// files. The error is for a root that cannot be read at all or a cancelled
// context; everything wrong with a file is a finding.
func (v *Validator) Run(ctx context.Context, root string, opts Options) (Result, error) {
	files, err := artifact.Discover(root, artifact.DiscoverOptions{Globs: opts.Config.Artifacts, Ignore: opts.Config.Ignore})
	if err != nil {
		return Result{}, err
	}
	limits := opts.Config.Limits.ArtifactLimits()
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}

	type outcome struct {
		artifact bool
		findings []Finding
	}
	results := make([]outcome, len(files))
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(files) {
					return
				}
				ok, fs := v.checkFile(files[i], limits, opts.Prefix)
				results[i] = outcome{ok, fs}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("checking %s: %w", root, err)
	}
	var res Result
	for _, r := range results {
		if r.artifact {
			res.Artifacts++
		}
		res.Findings = append(res.Findings, r.findings...)
	}
	Sort(res.Findings)
	return res, nil
}

// sniffSize is how much of an unclassified file is read to classify it.
const sniffSize = 64 << 10

// checkFile reads, classifies (if needed), decodes and validates one file.
// It reports whether the file is an artifact.
func (v *Validator) checkFile(f artifact.File, limits artifact.Limits, prefix string) (bool, []Finding) {
	rel := prefix + f.Rel
	problem := func(k *artifact.Kind, p artifact.Problem) []Finding {
		id := ""
		if k != nil {
			id = k.ID
		}
		return []Finding{{File: rel, Line: p.Pos.Line, Column: p.Pos.Column, Kind: id, Rule: p.Rule, Severity: SeverityError, Message: p.Message}}
	}
	if f.Problem != nil {
		return true, problem(f.Kind, *f.Problem)
	}
	data, size, err := readLimited(f.Abs, limits.MaxFileSize)
	if err != nil {
		if f.Kind == nil {
			return false, nil // an unreadable file that might not even be an artifact
		}
		return true, problem(f.Kind, artifact.Problem{Pos: artifact.Pos{Line: 1, Column: 1}, Rule: artifact.RuleRead, Message: fmt.Sprintf("could not read the file: %v", errors.Unwrap(err))})
	}
	k := f.Kind
	if k == nil {
		k = artifact.Sniff(f.Rel, data[:min(len(data), sniffSize)])
		if k == nil {
			return false, nil
		}
	}
	if size > limits.MaxFileSize {
		return true, problem(k, artifact.SizeProblem(size, limits.MaxFileSize))
	}
	doc := artifact.Decode(rel, k, data, limits)
	var out []Finding
	for _, p := range doc.Problems {
		out = append(out, problem(k, p)...)
	}
	out = append(out, v.Validate(doc)...)
	return true, out
}

// readLimited reads at most max bytes of the file and returns its real size.
// A file over the limit is not read past the limit.
func readLimited(p string, max int64) ([]byte, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, 0, fmt.Errorf("opening %s: %w", p, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w", p, err)
	}
	if info.Size() > max {
		// Read only the head, enough to classify an unclassified file.
		head := make([]byte, min(max, sniffSize))
		n, err := io.ReadFull(f, head)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, 0, fmt.Errorf("reading %s: %w", p, err)
		}
		return head[:n], info.Size(), nil
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w", p, err)
	}
	return data, int64(len(data)), nil
}
