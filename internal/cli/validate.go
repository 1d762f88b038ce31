package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/gate"
	"github.com/phasegate/phasegate/internal/history"
	"github.com/phasegate/phasegate/internal/report"
)

type validateFlags struct {
	format string
	config string
	base   string
	paths  []string
}

// checkAbout is what validate and gate do, for their usage.
var checkAbout = map[string]string{
	"validate": `Checks every artifact under each PATH (default .; a PATH may also be one file) against
its kind's contract and prints the findings. Flags may come before or after the PATHs;
-- ends the flags.

Exit codes: 0 no error findings; 1 error findings (verdict HOLD); 2 usage error or
could not run.`,
	"gate": `Checks every artifact under each PATH like validate, then computes the verdict (SHIP,
ADVISORY or HOLD) from the findings and from the decisions the latest artifacts of each
pipeline record, and prints where each pipeline stands and the verdict's reasons.
Flags may come before or after the PATHs; -- ends the flags.

Exit codes: 0 SHIP or ADVISORY; 1 HOLD; 2 usage error or could not run.`,
}

// parseValidateFlags parses the flags and paths of validate and gate. Flags
// may come before or after the paths (as in most tools); "--" ends the
// flags. With -h the usage goes to stdout and flag.ErrHelp is returned; with
// a bad flag the error and the usage go to stderr and a usageError is
// returned, so that the caller does not print the error a second time.
func parseValidateFlags(name string, args []string, e *environment) (validateFlags, error) {
	var f validateFlags
	fset := e.flags(name, checkAbout[name])
	fset.StringVar(&f.format, "format", "text", "output format: "+strings.Join(report.Formats, ", ")+" (text is coloured on a terminal unless NO_COLOR is set)")
	fset.StringVar(&f.config, "config", "", "config file (default: <PATH>/"+config.DefaultPath+" when it exists)")
	fset.StringVar(&f.base, "base", "", "base revision (commit, branch or tag) for the commit-aware checks: outcomes modified since it, JG scope against the files changed since it")
	for {
		err := fset.Parse(args)
		if code, done := fset.handle(err); done {
			if code == ExitOK {
				return f, err // flag.ErrHelp
			}
			return f, usageError{err}
		}
		rest := fset.Args()
		// Parse stops at the first non-flag argument; keep it as a path
		// and parse what follows, unless the flags were ended by "--".
		if len(rest) == 0 || len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			f.paths = append(f.paths, rest...)
			break
		}
		f.paths = append(f.paths, rest[0])
		args = rest[1:]
	}
	if !slices.Contains(report.Formats, f.format) {
		return f, fmt.Errorf("unknown --format %q (want one of %s)", f.format, strings.Join(report.Formats, ", "))
	}
	if len(f.paths) == 0 {
		f.paths = []string{"."}
	}
	return f, nil
}

// usageError is a command-line error that has already been reported.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func (e *environment) validate(args []string) int { return e.check("validate", args) }

// gate validates, then computes the verdict of design §4 from the findings
// and the decisions the latest artifacts of each pipeline record.
func (e *environment) gate(args []string) int { return e.check("gate", args) }

// check is validate and gate: the same flags and checks; gate adds the
// pipelines' decisions to the verdict and prints where each pipeline stands.
func (e *environment) check(name string, args []string) int {
	f, err := parseValidateFlags(name, args, e)
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	var reported usageError
	if errors.As(err, &reported) {
		return ExitUsage
	}
	if err != nil {
		return e.failf("%v", err)
	}
	rep, err := e.runChecks(context.Background(), f)
	if err != nil {
		return e.failf("%v", err)
	}
	if name == "gate" {
		rep.Verdict = gate.Compute(rep.Findings, rep.Pipeline)
		if rep.Pipeline == nil {
			rep.Pipeline = []check.Status{}
		}
	} else {
		rep.Verdict = gate.FromFindings(rep.Findings)
		rep.Pipeline = nil
	}
	rep.Color = e.color && f.format == "text"
	if err := report.Write(e.stdout, f.format, rep); err != nil {
		return e.failf("%v", err)
	}
	if rep.Verdict.Verdict == gate.Hold {
		return ExitFindings
	}
	return ExitOK
}

// runChecks loads the config and checks every PATH.
func (e *environment) runChecks(ctx context.Context, f validateFlags) (report.Report, error) {
	rep := report.Report{Version: Version()}
	v, err := check.NewValidator()
	if err != nil {
		return rep, fmt.Errorf("loading schemas: %w", err)
	}
	cfg, cfgFindings, err := loadConfig(f)
	if err != nil {
		return rep, err
	}
	rep.Findings = append(rep.Findings, cfgFindings...)
	for _, p := range f.paths {
		prefix := ""
		if info, err := os.Stat(p); err == nil && info.IsDir() && len(f.paths) > 1 {
			prefix = strings.TrimSuffix(filepath.ToSlash(filepath.Clean(p)), "/") + "/"
			if prefix == "./" {
				prefix = ""
			}
		}
		opts := check.Options{Config: cfg, Prefix: prefix}
		if f.base != "" {
			if opts.Changed, err = changedSince(ctx, p, f.base); err != nil {
				return rep, err
			}
		}
		res, err := v.Run(ctx, p, opts)
		if err != nil {
			return rep, err
		}
		rep.Artifacts += res.Artifacts
		rep.Findings = append(rep.Findings, res.Findings...)
		rep.Pipeline = append(rep.Pipeline, res.Statuses...)
	}
	check.Sort(rep.Findings)
	check.SortStatuses(rep.Pipeline)
	return rep, nil
}

// changedSince reads which files under PATH changed since base. For a file
// PATH, the history of its directory is read and only that file kept.
func changedSince(ctx context.Context, p, base string) (map[string]check.Change, error) {
	dir, only := p, ""
	if info, err := os.Stat(p); err == nil && !info.IsDir() {
		dir, only = filepath.Dir(p), filepath.Base(p)
	}
	changed, err := history.Changed(ctx, dir, base)
	if err != nil {
		return nil, err
	}
	out := make(map[string]check.Change, len(changed))
	for name, c := range changed {
		if only != "" {
			if name != only {
				continue
			}
			name = filepath.ToSlash(filepath.Clean(p))
		}
		out[name] = check.Change(c)
	}
	return out, nil
}

// loadConfig reads --config, or <first directory PATH>/.github/phasegate.yml
// when it exists. A config that cannot be decoded yields findings and the
// defaults; a --config file that cannot be read is an error.
func loadConfig(f validateFlags) (config.Config, []check.Finding, error) {
	path, display := f.config, f.config
	if path == "" {
		for _, p := range f.paths {
			if info, err := os.Stat(p); err == nil && info.IsDir() {
				path = filepath.Join(p, filepath.FromSlash(config.DefaultPath))
				display = config.DefaultPath
				if len(f.paths) > 1 {
					display = filepath.ToSlash(path)
				}
				break
			}
		}
	}
	if path == "" {
		return config.Default(), nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if f.config == "" && errors.Is(err, fs.ErrNotExist) {
			return config.Default(), nil, nil
		}
		return config.Default(), nil, fmt.Errorf("reading config %s: %w", path, err)
	}
	cfg, probs := config.Parse(data)
	var out []check.Finding
	for _, p := range probs {
		out = append(out, check.Finding{File: filepath.ToSlash(display), Line: p.Line, Column: p.Column, Kind: "config", Rule: "config",
			Severity: check.SeverityError, Message: p.Message + " (phasegate uses the defaults until this is fixed)"})
	}
	return cfg, out, nil
}
