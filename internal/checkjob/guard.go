package checkjob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/outcome"
)

// RuleGateChange is the finding on a pull request that edits phasegate's
// own configuration or a workflow that runs phasegate.
const RuleGateChange = "gate.config-change"

// maxWorkflowRead is how much of a workflow file is read to tell whether
// it runs phasegate; a longer one is part of the gate (it could name
// phasegate past what was read).
const maxWorkflowRead = 1 << 20

// guard holds a pull request that changes the gate itself: the
// configuration file (which the App reads from the default branch only, so
// the change would loosen the gate once merged) or a workflow that runs
// phasegate (at the head or at the base). Each such file is an error
// finding until a person with the right to resolve decisions approves the
// pull request on its head; then a warning naming the approver.
func (j *Job) guard(ctx context.Context, gh GitHub, req Request, fsys fs.FS, changed map[string]check.Change, cfg config.Config) ([]check.Finding, error) {
	if req.PR == nil || changed == nil {
		return nil, nil // a push or merge group: the pull request was the gate
	}
	var touched []string
	for name, ch := range changed {
		gated, err := j.gated(ctx, gh, req, fsys, name, ch)
		if err != nil {
			return nil, err
		}
		if gated {
			touched = append(touched, name)
		}
	}
	if len(touched) == 0 {
		return nil, nil
	}
	sort.Strings(touched)
	approver, why, err := j.Handler.GateChangeApprover(ctx, gh, gh, req.Owner, req.Repo, *req.PR, cfg)
	if err != nil {
		return nil, err
	}
	var out []check.Finding
	for _, name := range touched {
		f := check.Finding{File: name, Line: 1, Column: 1, Kind: "config", Rule: RuleGateChange, Severity: check.SeverityError,
			Message: fmt.Sprintf("this pull request changes phasegate's own gate (%s); it holds until a person with the right to resolve decisions approves the pull request on its head (%s)", name, why)}
		if approver != "" {
			f.Severity = check.SeverityWarning
			f.Message = fmt.Sprintf("this pull request changes phasegate's own gate (%s); %s approved it on %s", name, outcome.Inline(approver), outcome.ShortSHA(req.SHA))
		}
		out = append(out, f)
	}
	return out, nil
}

// gated says whether a changed file is part of the gate: the config file,
// or a workflow that mentions phasegate at the head or the base.
func (j *Job) gated(ctx context.Context, gh GitHub, req Request, fsys fs.FS, name string, ch check.Change) (bool, error) {
	if name == j.configPath() {
		return true, nil
	}
	dir, ext := path.Dir(name), strings.ToLower(path.Ext(name))
	if dir != ".github/workflows" || (ext != ".yml" && ext != ".yaml") {
		return false, nil
	}
	if ch != check.Deleted {
		head, err := readHead(fsys, name)
		switch {
		case errors.Is(err, ghclient.ErrTooLarge) || len(head) > maxWorkflowRead:
			return true, nil // too long to tell what it runs: part of the gate
		case err != nil:
			return false, fmt.Errorf("reading %s at %s: %w", name, outcome.ShortSHA(req.SHA), err)
		case runsPhasegate(head):
			return true, nil
		}
	}
	if ch == check.Added {
		return false, nil
	}
	base, found, err := gh.FileContent(ctx, req.Owner, req.Repo, name, req.Base)
	if err != nil {
		return false, fmt.Errorf("reading %s at %s: %w", name, outcome.ShortSHA(req.Base), err)
	}
	// As at the head: too long to tell what it ran, part of the gate.
	return found && (len(base) > maxWorkflowRead || runsPhasegate(base)), nil
}

func readHead(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxWorkflowRead+1))
}

// runsPhasegate says whether a workflow mentions phasegate (its action, its
// image or its binary): case-insensitive, anywhere.
func runsPhasegate(data []byte) bool {
	return bytes.Contains(bytes.ToLower(data), []byte("phasegate"))
}
