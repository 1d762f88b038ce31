package checkjob

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/gate"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/report"
)

// Checked is what Check found: the report (every finding, sorted, and the
// verdict), the outcomes the change carries (vetted for posting), the
// change itself (nil: no base, the commit-aware rules were skipped), the
// configuration it checked with (Blob: the config file's git blob id, ""
// when the default branch has none) and what it skipped, and why.
type Checked struct {
	Report  report.Report
	Carried []Carried
	Changed map[string]check.Change
	Config  config.Config
	Blob    string
	Skipped []string
	// Reused counts the units whose results came from Job.Cache.
	Reused int
}

// RuleConfig is the rule of a finding on the configuration file itself
// (its file is the repository's path of it, whatever directory is checked).
const RuleConfig = "config"

// Check is the checking job of one commit, the action's and the App's: the
// configuration from the default branch, the change, the files (req.Root
// or req.Open), the checker, phasegate's own files guarded (the App), and
// the outcomes vetted. The error means the commit could not be checked
// (the check then fails, never passes); out.Config is the configuration
// (the defaults until it was read) and out.Blob its blob id even then. gh
// nil (the action without a token) reads nothing: the defaults, the
// change from req.Local only, no outcome vetted.
func (j *Job) Check(ctx context.Context, gh GitHub, req Request) (out Checked, err error) {
	var findings []check.Finding
	if out.Config, out.Blob, findings, err = j.config(ctx, gh, req); err != nil {
		return out, err
	}
	if out.Changed, err = j.changed(ctx, gh, req, &out.Skipped); err != nil {
		return out, err
	}
	res, fsys, err := j.run(ctx, req, out.Config, out.Changed)
	if err != nil {
		return out, err
	}
	if !j.Workflow && gh != nil {
		guard, err := j.guard(ctx, gh, req, fsys, out.Changed, out.Config)
		if err != nil {
			return out, err
		}
		findings = append(findings, guard...)
	}
	findings = append(findings, res.Findings...)
	carried, vetted, err := j.vet(ctx, gh, req, res, out.Changed, out.Config)
	if err != nil {
		return out, err
	}
	findings = append(findings, vetted...)
	check.Sort(findings)
	out.Report = report.Report{Artifacts: res.Artifacts, Findings: findings, Pipeline: append([]check.Status{}, res.Statuses...), Version: req.Version}
	out.Report.Verdict = gate.Compute(findings, res.Statuses)
	out.Carried, out.Reused = carried, res.Reused
	return out, nil
}

// run checks the files: the checkout's directory req.Root on this machine
// (check.Validator.Run: the rules read it through an os.Root), else the
// commit's tree req.Open gives, every read error of which fails the check.
// It returns the FS the guard reads the head's files from.
func (j *Job) run(ctx context.Context, req Request, cfg config.Config, changed map[string]check.Change) (check.Result, fs.FS, error) {
	opts := check.Options{Config: cfg, Changed: changed, KeepOutcomes: true, RootName: req.RootName,
		Cache: j.Cache, CacheScope: strings.Join([]string{req.Owner, req.Repo, req.Version, req.Prefix, j.CacheScope}, "\x00"), Known: j.Known}
	if req.Root != "" {
		res, err := j.Validator.Run(ctx, req.Root, opts)
		return res, os.DirFS(req.Root), err
	}
	fsys, err := req.Open(ctx, cfg.Limits.ArtifactLimits().MaxFileSize)
	if err != nil {
		return check.Result{}, nil, fmt.Errorf("reading the files of %s: %w", outcome.ShortSHA(req.SHA), err)
	}
	if opts.RootName == "" {
		opts.RootName = "commit " + outcome.ShortSHA(req.SHA)
	}
	rec := &recordingFS{FS: fsys}
	res, err := j.Validator.RunFS(ctx, rec, opts)
	if err == nil {
		err = rec.err()
	}
	if err != nil {
		return res, nil, fmt.Errorf("checking %s: %w", outcome.ShortSHA(req.SHA), err)
	}
	return res, rec, nil
}

// vet picks the outcomes the change carries and vets the added ones for
// posting: only when they could be posted (a change with a base; for the
// App, not from a fork and with the App the poster). An added outcome that
// names no issue in a change without a pull request is an error finding.
func (j *Job) vet(ctx context.Context, gh GitHub, req Request, res check.Result, changed map[string]check.Change, cfg config.Config) ([]Carried, []check.Finding, error) {
	if gh == nil || changed == nil || !j.Workflow && (req.Fork != "" || !j.poster(cfg)) {
		return nil, nil, nil
	}
	pr := req.PRNumber()
	carried := carriedOutcomes(res.Outcomes, res.Findings, changed, pr)
	var findings []check.Finding
	for _, c := range carried {
		if c.Issue == 0 && c.Added {
			findings = append(findings, check.Finding{File: c.Doc.Path, Line: 1, Column: 1, Kind: "outcome.phase-outcome", Rule: RuleOutcomeNoIssue, Severity: check.SeverityError,
				Message: "this Phase Outcome names no issue (`issue:` or a numbered `feature: feature-N`) and the change has no pull request: it cannot be posted"})
		}
	}
	more, err := vetIssues(ctx, gh, req.Owner, req.Repo, pr, cfg.Outcome.MaxPerPushOrDefault(), carried)
	if err != nil {
		return nil, nil, err
	}
	return carried, append(findings, more...), nil
}

// config reads the gate's configuration from the default branch, never from
// the change under review, and its git blob id ("" when there is no file).
// An invalid file is a finding (at its line) and the defaults apply; a file
// that cannot be read is an error, never the defaults.
func (j *Job) config(ctx context.Context, gh GitHub, req Request) (cfg config.Config, blob string, findings []check.Finding, err error) {
	if gh == nil {
		return config.Default(), "", nil, nil
	}
	path := j.configPath()
	data, found, err := gh.FileContent(ctx, req.Owner, req.Repo, path, "")
	if err != nil {
		return config.Default(), "", nil, fmt.Errorf("reading %s from the default branch: %w", path, err)
	}
	if !found {
		return config.Default(), "", nil, nil
	}
	cfg, probs := config.Parse(data)
	for _, p := range probs {
		findings = append(findings, check.Finding{File: path, Line: p.Line, Column: p.Column, Kind: "config", Rule: RuleConfig, Severity: check.SeverityError,
			Message: p.Message + " (read from the default branch; until this is fixed phasegate checks with the defaults and accepts no resolution)"})
	}
	return cfg, check.BlobID(data), findings, nil
}

func (j *Job) configPath() string { return cmp.Or(j.ConfigPath, config.DefaultPath) }

// changed is the change of req.SHA from req.Base; nil without a base (a
// new branch: the commit-aware rules are skipped, nothing is posted). It
// is the checkout's history (req.Local, exact for the commit checked out)
// when that can tell, else the comparison through the API, from the merge
// base as a pull request's files are, cut to req.Prefix. It is bound to
// req.SHA, never to a pull request (whose files GitHub lists at its head
// as it is now, which may have moved on), and never taken in part
// (ghclient.CompareWhole, within the handler's TreeLimits).
func (j *Job) changed(ctx context.Context, gh GitHub, req Request, skipped *[]string) (map[string]check.Change, error) {
	if req.Base == "" {
		*skipped = append(*skipped, "commit-aware checks and outcome posting: this event has no base commit (a new branch)")
		return nil, nil
	}
	if req.Local != nil {
		changed, err := req.Local(ctx)
		switch {
		case err == nil:
			return changed, nil
		case gh == nil:
			*skipped = append(*skipped, "commit-aware checks: "+err.Error())
			return nil, nil
		}
	}
	cmp, err := gh.CompareWhole(ctx, req.Owner, req.Repo, req.Base, req.SHA, j.Handler.TreeLimits)
	if err != nil {
		return nil, fmt.Errorf("listing the files changed since %s: %w", outcome.ShortSHA(req.Base), err)
	}
	changed := make(map[string]check.Change, len(cmp.Files))
	for name, status := range cmp.Files {
		name, ok := strings.CutPrefix(name, req.Prefix)
		if !ok {
			continue
		}
		switch status {
		case "added", "renamed", "copied":
			changed[name] = check.Added
		case "removed":
			changed[name] = check.Deleted
		default:
			changed[name] = check.Modified
		}
	}
	return changed, nil
}

// recordingFS remembers the first error reading the commit's files that is
// not a missing file: a blob the API failed to give must fail the check,
// never make a file look absent (the checker skips an unreadable file that
// might not be an artifact).
type recordingFS struct {
	fs.FS
	first error
	mu    sync.Mutex
}

func (r *recordingFS) note(err error) error {
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, ghclient.ErrTooLarge) {
		r.mu.Lock()
		if r.first == nil {
			r.first = err
		}
		r.mu.Unlock()
	}
	return err
}

func (r *recordingFS) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first
}

func (r *recordingFS) Open(name string) (fs.File, error) {
	f, err := r.FS.Open(name)
	if err != nil {
		return nil, r.note(err)
	}
	return &recordingFile{File: f, r: r}, nil
}

func (r *recordingFS) ReadDir(name string) ([]fs.DirEntry, error) {
	es, err := fs.ReadDir(r.FS, name)
	return es, r.note(err)
}

func (r *recordingFS) Stat(name string) (fs.FileInfo, error) {
	fi, err := fs.Stat(r.FS, name)
	return fi, r.note(err)
}

// ObjectID is the commit's object id of name (check.IDFS), when the FS
// has them.
func (r *recordingFS) ObjectID(name string, follow bool) (string, error) {
	ids, ok := r.FS.(check.IDFS)
	if !ok {
		return "", errors.ErrUnsupported
	}
	id, err := ids.ObjectID(name, follow)
	return id, r.note(err)
}

func (r *recordingFS) ReadLink(name string) (string, error) {
	t, err := fs.ReadLink(r.FS, name)
	return t, r.note(err)
}

func (r *recordingFS) Lstat(name string) (fs.FileInfo, error) {
	fi, err := fs.Lstat(r.FS, name)
	return fi, r.note(err)
}

type recordingFile struct {
	fs.File
	r *recordingFS
}

func (f *recordingFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		f.r.note(err)
	}
	return n, err
}
