package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/checkjob"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/gate"
	"github.com/phasegate/phasegate/internal/history"
	"github.com/phasegate/phasegate/internal/report"
)

type validateFlags struct {
	format string
	config string
	base   string
	kind   string
	cache  string
	color  colorFlag
	paths  []string
}

// checkAbout is what validate and gate do, for their usage.
var checkAbout = map[string]string{
	"validate": `Checks every artifact under each PATH (default .; a PATH may also be one file) against
its kind's contract and prints the findings. Flags may come before or after the PATHs;
-- ends the flags.

Exit codes: 0 no error finding (verdict SHIP or ADVISORY); 1 an error finding (verdict
HOLD); 2 usage error, or could not run (a PATH or --config that cannot be read).`,
	"gate": `Checks every artifact under each PATH like validate, then computes the verdict (SHIP,
ADVISORY or HOLD) from the findings and from the decisions the latest artifacts of each
pipeline record, and prints where each pipeline stands and the verdict's reasons.
Flags may come before or after the PATHs; -- ends the flags.

Exit codes: 0 SHIP or ADVISORY; 1 HOLD (an error finding, or a pipeline whose latest
decision holds, with no error finding at all); 2 usage error, or could not run (a PATH
or --config that cannot be read).`,
}

// parseValidateFlags parses the flags and paths of validate and gate. Flags
// may come before or after the paths (as in most tools); "--" ends the
// flags. With -h the usage goes to stdout; with a bad flag or value the
// error (and the usage, for a flag) goes to stderr. done says the command
// ends there, with code.
func (e *environment) parseValidateFlags(name string, args []string) (f validateFlags, code int, done bool) {
	fset := e.flags(name, checkAbout[name])
	fset.StringVar(&f.format, "format", "text", "output format: "+strings.Join(report.Formats, ", ")+" (only text is ever coloured: see --color)")
	fset.StringVar(&f.config, "config", "", "config file (default: <PATH>/"+config.DefaultPath+" when it exists)")
	fset.StringVar(&f.kind, "kind", "", "check each PATH, which must be a file, as this artifact kind (e.g. pace.gate-report; 'phasegate schema' lists them), whatever its path or content say")
	fset.StringVar(&f.cache, "cache", "", "file of the units' results kept between runs: a unit whose files (by content), configuration and phasegate version are those of a result the file holds is not checked again; read when it exists, rewritten after the run")
	addColorFlags(fset.FlagSet, &f.color)
	f.color = e.color // after: the usage's default stays auto
	fset.StringVar(&f.base, "base", "", "base revision (commit, branch or tag) for the commit-aware checks: outcomes modified since it, JG scope against the files changed since it")
	for {
		if code, done := fset.parse(args); done {
			return f, code, true
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
		return f, e.failf("unknown --format %q (want one of %s)", f.format, strings.Join(report.Formats, ", ")), true
	}
	if len(f.paths) == 0 {
		f.paths = []string{"."}
	}
	if f.kind != "" {
		if artifact.KindByID(f.kind) == nil {
			return f, e.failf("unknown --kind %q%s (run 'phasegate schema' to list the kinds)", f.kind, didYouMean(f.kind, kindIDs())), true
		}
		for _, p := range f.paths {
			if isDir(p) {
				return f, e.failf("--kind applies to files, but %s is a directory: name the files to check as %s", p, f.kind), true
			}
		}
	}
	return f, ExitOK, false
}

// check is validate and gate: the same flags and checks; gate adds the
// pipelines' decisions to the verdict of docs/contracts/README.md and
// prints where each pipeline stands.
func (e *environment) check(name string, args []string) int {
	f, code, done := e.parseValidateFlags(name, args)
	if done {
		return code
	}
	for _, p := range f.paths {
		if err := e.readablePath(p); err != nil {
			return e.failf("%s", report.Terminal(err.Error()))
		}
	}
	rep, sarif, err := e.runChecks(context.Background(), f)
	if err != nil {
		return e.failf("%s", report.Terminal(err.Error()))
	}
	if name == "gate" {
		rep.Verdict = gate.Compute(rep.Findings, rep.Pipeline)
		rep.Pipeline = append([]check.Status{}, rep.Pipeline...)
	} else {
		rep.Verdict = gate.FromFindings(rep.Findings)
		rep.Pipeline = nil
	}
	out := rep
	out.Color = f.format == "text" && useColor(f.color, e.stdout, e.getenv)
	if sarif.root != "" {
		// Code scanning reads every path as relative to the repository
		// root: SARIF alone gets the files rebased there.
		out.Findings, out.SourceRoot = sarif.findings, report.DirURI(sarif.root)
		check.Sort(out.Findings)
	}
	if err := e.writeReport(f.format, out); err != nil {
		return e.failf("%v", err)
	}
	if rep.Verdict.Verdict == gate.Hold {
		return ExitFindings
	}
	return ExitOK
}

// openCache reads --cache's file (nil without --cache) and the scope of
// its results. The directory stays open for the file's Save until the
// command's process ends.
func openCache(name string) (*checkjob.UnitFile, string, error) {
	if name == "" {
		return nil, "", nil
	}
	dir, err := os.OpenRoot(filepath.Dir(name))
	if err != nil {
		return nil, "", fmt.Errorf("reading the cache %s: %w", name, err)
	}
	cache, err := checkjob.OpenUnitFile(dir, filepath.Base(name))
	if err != nil {
		dir.Close()
		return nil, "", err
	}
	scope, err := checkjob.ProgramScope(Version())
	return cache, scope, err
}

// runChecks loads the config and checks every PATH. With --format sarif it
// also returns the findings rebased on the git repository that holds the
// PATHs (see repoFindings).
func (e *environment) runChecks(ctx context.Context, f validateFlags) (report.Report, repoFindings, error) {
	rep := report.Report{Version: Version()}
	var sarif repoFindings
	if f.format == "sarif" {
		sarif.root = repoRootOf(f.paths)
	}
	v, err := check.NewValidator()
	if err != nil {
		return rep, sarif, fmt.Errorf("loading schemas: %w", err)
	}
	cfg, cfgFindings, cfgBase, err := loadConfig(f)
	if err != nil {
		return rep, sarif, err
	}
	cache, scope, err := openCache(f.cache)
	if err != nil {
		return rep, sarif, err
	}
	rep.Findings = append(rep.Findings, cfgFindings...)
	sarif.add(cfgBase, cfgFindings)
	for _, p := range f.paths {
		// A directory's files are relative to it, or to the directory
		// holding the marker directory it lies in (see
		// artifact.ContextRoot); with several PATHs that directory is put
		// in front of them.
		prefix, filesBase, ctxPrefix := "", "", ""
		if isDir(p) {
			filesBase, ctxPrefix = artifact.ContextRoot(p)
			if len(f.paths) > 1 {
				prefix = strings.TrimSuffix(filepath.ToSlash(filepath.Clean(filesBase)), "/") + "/"
				if prefix == "./" {
					prefix = ""
				}
			}
		}
		opts := check.Options{Config: cfg, Prefix: prefix, Kind: artifact.KindByID(f.kind), RootName: p}
		if cache != nil {
			opts.Cache, opts.CacheScope = cache, scope
			if filesBase != "" {
				opts.Known = history.KnownIDs(filesBase)
			}
		}
		if f.base != "" {
			// A directory PATH inside a marker directory is checked
			// relative to the directory holding the marker (see
			// artifact.ContextRoot).
			if opts.Changed, err = changedSince(ctx, p, f.base, ctxPrefix); err != nil {
				return rep, sarif, err
			}
		}
		res, err := v.Run(ctx, p, opts)
		if err != nil {
			return rep, sarif, err
		}
		rep.Artifacts += res.Artifacts
		rep.Findings = append(rep.Findings, res.Findings...)
		rep.Pipeline = append(rep.Pipeline, res.Statuses...)
		// A file PATH's file is the PATH, relative to the working directory.
		if prefix != "" {
			filesBase = ""
		}
		sarif.add(filesBase, res.Findings)
	}
	check.Sort(rep.Findings)
	check.SortStatuses(rep.Pipeline)
	if cache != nil {
		if err := cache.Save(); err != nil {
			return rep, sarif, err
		}
	}
	return rep, sarif, nil
}

// repoFindings are the findings with their files relative to root, the git
// repository that holds every checked PATH ("" when there is none: then
// nothing is collected and SARIF keeps the files relative to the checked
// root).
type repoFindings struct {
	root     string
	findings []check.Finding
}

// add collects fs, whose files are relative to the directory base ("" for
// the working directory) or absolute.
func (r *repoFindings) add(base string, fs []check.Finding) {
	if r.root == "" {
		return
	}
	absBase, err := filepath.Abs(base)
	if err != nil {
		r.root = "" // cannot place the files: keep them as they are
		return
	}
	for _, f := range fs {
		if f.File != "" {
			p := filepath.FromSlash(f.File)
			if !filepath.IsAbs(p) {
				p = filepath.Join(absBase, p)
			}
			rel, err := filepath.Rel(r.root, p)
			if err != nil {
				r.root = ""
				return
			}
			f.File = filepath.ToSlash(rel)
		}
		r.findings = append(r.findings, f)
	}
}

// repoRootOf is the root of the git repository that holds every path: the
// nearest directory at or above each one with a .git directory, or a .git
// file (a worktree or a submodule). It is "" when a path is in no
// repository, or when the paths are in different ones.
func repoRootOf(paths []string) string {
	root := ""
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return ""
		}
		if !isDir(abs) {
			abs = filepath.Dir(abs)
		}
		r := gitRoot(abs)
		if r == "" || root != "" && r != root {
			return ""
		}
		root = r
	}
	return root
}

// readablePath is an error naming PATH when phasegate cannot read it: it
// does not exist, a directory on its way is a file, or it is a directory
// that cannot be listed or a file that cannot be opened (a socket). A pipe
// or a terminal is left to the check, which reads it once: opened here, a
// pipe would lose what it holds.
func (e *environment) readablePath(p string) error {
	info, err := os.Stat(p)
	if err == nil && info.Mode()&(fs.ModeNamedPipe|fs.ModeCharDevice) == 0 {
		var f *os.File
		if f, err = e.open(p); err == nil {
			if info.IsDir() {
				if _, err = f.ReadDir(1); errors.Is(err, io.EOF) {
					err = nil
				}
			}
			f.Close()
		}
	}
	if err != nil {
		return fmt.Errorf("cannot read PATH %s: %w", p, err)
	}
	return nil
}

// isDir reports whether p is a directory (false when it cannot be read).
func isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}

// gitRoot walks up from the absolute directory dir to the first directory
// holding a .git directory or file, and returns it ("" when there is none).
func gitRoot(dir string) string {
	for {
		if info, err := os.Stat(filepath.Join(dir, ".git")); err == nil && (info.IsDir() || info.Mode().IsRegular()) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// changedSince reads which files under PATH changed since base, named
// with prefix in front. For a file PATH, the history of its directory is
// read and only that file kept.
func changedSince(ctx context.Context, p, base, prefix string) (map[string]check.Change, error) {
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
		out[prefix+name] = check.Change(c)
	}
	return out, nil
}

// loadConfig reads --config, or <first directory PATH>/.github/phasegate.yml
// when it exists. A config that cannot be decoded yields findings and the
// defaults; a --config file that cannot be read is an error. base is the
// directory the findings' file is relative to ("" for the working
// directory).
func loadConfig(f validateFlags) (config.Config, []check.Finding, string, error) {
	path, display, base := f.config, f.config, ""
	if path == "" {
		for _, p := range f.paths {
			if isDir(p) {
				path = filepath.Join(p, filepath.FromSlash(config.DefaultPath))
				display, base = config.DefaultPath, p
				if len(f.paths) > 1 {
					display, base = filepath.ToSlash(path), ""
				}
				break
			}
		}
	}
	if path == "" {
		return config.Default(), nil, "", nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if f.config == "" && errors.Is(err, fs.ErrNotExist) {
			return config.Default(), nil, "", nil
		}
		return config.Default(), nil, "", fmt.Errorf("reading config %s: %w", path, err)
	}
	cfg, probs := config.Parse(data)
	var out []check.Finding
	for _, p := range probs {
		out = append(out, check.Finding{File: filepath.ToSlash(display), Line: p.Line, Column: p.Column, Kind: "config", Rule: "config",
			Severity: check.SeverityError, Message: p.Message + " (phasegate uses the defaults until this is fixed)"})
	}
	return cfg, out, base, nil
}
