package checkjob

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/gate"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/report"
)

// checked is what check found: the report, the outcomes the change
// carries, and the configuration it checked with (blob: the config file's
// git blob id, "" when the default branch has none).
type checked struct {
	rep     report.Report
	carried []Carried
	cfg     config.Config
	blob    string
}

// check runs the checking flow on the commit: the configuration from the
// default branch, the change, the files through req.Open, the checker,
// phasegate's own files guarded, and the outcomes vetted. The error means
// the commit could not be checked (the check then fails); out.cfg is the
// configuration (the defaults until it was read) and out.blob its blob id
// even then.
func (j *Job) check(ctx context.Context, gh GitHub, req Request) (out checked, err error) {
	var findings []check.Finding
	if out.cfg, out.blob, findings, err = j.config(ctx, gh, req); err != nil {
		return out, err
	}
	changed, err := j.changed(ctx, gh, req)
	if err != nil {
		return out, err
	}
	fsys, err := req.Open(ctx, out.cfg.Limits.ArtifactLimits().MaxFileSize)
	if err != nil {
		return out, fmt.Errorf("reading the files of %s: %w", shortSHA(req.SHA), err)
	}
	rec := &recordingFS{FS: fsys}
	res, err := j.Validator.RunFS(ctx, rec, check.Options{Config: out.cfg, Changed: changed, KeepOutcomes: true, RootName: "commit " + shortSHA(req.SHA)})
	if err == nil {
		err = rec.err()
	}
	if err != nil {
		return out, fmt.Errorf("checking %s: %w", shortSHA(req.SHA), err)
	}
	guard, err := j.guard(ctx, gh, req, rec, changed, out.cfg)
	if err != nil {
		return out, err
	}
	findings = append(append(findings, res.Findings...), guard...)
	carried, vetted, err := j.vet(ctx, gh, req, res, changed, out.cfg)
	if err != nil {
		return out, err
	}
	findings = append(findings, vetted...)
	check.Sort(findings)
	out.rep = report.Report{Artifacts: res.Artifacts, Findings: findings, Pipeline: res.Statuses, Version: req.Version}
	if out.rep.Pipeline == nil {
		out.rep.Pipeline = []check.Status{}
	}
	out.rep.Verdict = gate.Compute(findings, res.Statuses)
	out.carried = carried
	return out, nil
}

// vet picks the outcomes the change carries and vets the added ones for
// posting (only when they could be posted: a change with a base, not from a
// fork).
func (j *Job) vet(ctx context.Context, gh GitHub, req Request, res check.Result, changed map[string]check.Change, cfg config.Config) ([]Carried, []check.Finding, error) {
	if changed == nil || req.Fork != "" || !j.poster(cfg) {
		return nil, nil, nil
	}
	pr := 0
	if req.PR != nil {
		pr = req.PR.Number
	}
	carried := CarriedOutcomes(res.Outcomes, res.Findings, changed, pr)
	var findings []check.Finding
	for _, c := range carried {
		if c.Issue == 0 && c.Added {
			findings = append(findings, check.Finding{File: c.Doc.Path, Line: 1, Column: 1, Kind: "outcome.phase-outcome", Rule: RuleOutcomeNoIssue, Severity: check.SeverityError,
				Message: "this Phase Outcome names no issue (`issue:` or a numbered `feature: feature-N`) and the change has no pull request: it cannot be posted"})
		}
	}
	more, err := Vet(ctx, gh, req.Owner, req.Repo, pr, cfg.Outcome.MaxPerPushOrDefault(), carried)
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
		findings = append(findings, check.Finding{File: path, Line: p.Line, Column: p.Column, Kind: "config", Rule: "config", Severity: check.SeverityError,
			Message: p.Message + " (read from the default branch; until this is fixed phasegate checks with the defaults and accepts no resolution)"})
	}
	return cfg, blobID(data), findings, nil
}

// blobID is the git blob id of data: the SHA-1 of "blob <len>\x00" and data,
// as `git hash-object` computes it.
func blobID(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

func (j *Job) configPath() string {
	if j.ConfigPath != "" {
		return j.ConfigPath
	}
	return config.DefaultPath
}

// changed is the change of req.SHA from req.Base: their comparison, from
// the merge base as a pull request's files are; nil without a base. It is
// bound to req.SHA, never to a pull request (whose files GitHub lists at its
// head as it is now, which may have moved on). A change longer than GitHub
// lists is read from the trees of the merge base and req.SHA
// (ghclient.TreeChange), never taken in part: what it cannot read within
// the handler's TreeLimits fails the check.
func (j *Job) changed(ctx context.Context, gh GitHub, req Request) (map[string]check.Change, error) {
	if req.Base == "" {
		return nil, nil
	}
	cmp, err := gh.Compare(ctx, req.Owner, req.Repo, req.Base, req.SHA)
	files := cmp.Files
	if errors.Is(err, ghclient.ErrTruncated) {
		files, err = j.treeChange(ctx, gh, req, cmp.MergeBase)
	}
	if err != nil {
		return nil, fmt.Errorf("listing the files changed since %s: %w", shortSHA(req.Base), err)
	}
	changed := make(map[string]check.Change, len(files))
	for name, status := range files {
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

// treeChange is the whole change of req.SHA from mergeBase (its merge base
// with req.Base), read from the two trees: a comparison lists at most 300
// files, and a change it cuts could hide an edit of the gate past the cut.
func (j *Job) treeChange(ctx context.Context, gh GitHub, req Request, mergeBase string) (map[string]string, error) {
	if mergeBase == "" {
		return nil, fmt.Errorf("GitHub gave no merge base of %s and %s", shortSHA(req.Base), shortSHA(req.SHA))
	}
	files, err := gh.TreeChange(ctx, req.Owner, req.Repo, mergeBase, req.SHA, j.Handler.TreeLimits)
	if err != nil {
		return nil, fmt.Errorf("GitHub lists only part of the change, and its trees could not be compared: %w", err)
	}
	return files, nil
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
