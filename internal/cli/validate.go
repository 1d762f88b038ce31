package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/gate"
	"github.com/phasegate/phasegate/internal/report"
)

type validateFlags struct {
	format string
	config string
	paths  []string
}

// parseValidateFlags parses the flags and paths of validate. Flags may come
// before or after the paths (as in most tools); "--" ends the flags. With -h
// the usage goes to stdout and flag.ErrHelp is returned; with a bad flag the
// error and the usage go to stderr and a usageError is returned, so that the
// caller does not print the error a second time.
func parseValidateFlags(name string, args []string, e *environment) (validateFlags, error) {
	var f validateFlags
	fset := flag.NewFlagSet("phasegate "+name, flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	fset.StringVar(&f.format, "format", "text", "output format: "+strings.Join(report.Formats, ", "))
	fset.StringVar(&f.config, "config", "", "config file (default: <PATH>/"+config.DefaultPath+" when it exists)")
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: phasegate %s [flags] [PATH...]\n\nChecks every artifact under each PATH (default .). Flags:\n", name)
		fset.SetOutput(w)
		fset.PrintDefaults()
		fset.SetOutput(io.Discard)
	}
	for {
		err := fset.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			usage(e.stdout)
			return f, err
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "phasegate: %v\n\n", err)
			usage(e.stderr)
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

func (e *environment) validate(args []string) int {
	f, err := parseValidateFlags("validate", args, e)
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
	rep.Verdict = gate.FromFindings(rep.Findings)
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
		res, err := v.Run(ctx, p, check.Options{Config: cfg, Prefix: prefix})
		if err != nil {
			return rep, err
		}
		rep.Artifacts += res.Artifacts
		rep.Findings = append(rep.Findings, res.Findings...)
	}
	check.Sort(rep.Findings)
	return rep, nil
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
