package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghfake"
)

// GrowOptions configure Grow (issue 32: the App on big repositories).
type GrowOptions struct {
	// Serve is the command that runs `phasegate serve`; Validate the one
	// that runs `phasegate validate` (the binary and "validate").
	Serve, Validate []string
	// Sizes are the repositories' artifact counts (10,000, 50,000, …);
	// Seed the corpus's seed.
	Sizes []int
	Seed  int64
	// Warmup first has each serve process check a small pull request.
	Warmup bool
	// Timeout bounds each wait (default 10 minutes).
	Timeout time.Duration
	// Dir holds the logs, the key and the checkout (default a temporary
	// directory, removed after).
	Dir      string
	Progress io.Writer
}

// GrowStep is one pull request of Grow, from its delivery to its
// phasegate/contracts check run completed.
type GrowStep struct {
	ToContracts time.Duration
	Routes      []Route
	// Conclusion and Title are the completed phasegate/contracts run's.
	Conclusion, Title string
}

// GrowRun is one repository size: the App's first check of the
// repository (a pull request changing one file, the server having seen
// nothing of the repository), then a second pull request changing another
// file on the same base, and `phasegate validate` of the whole checkout.
type GrowRun struct {
	Artifacts, Files int
	Bytes            int64
	First, Change    GrowStep
	// Validate is the wall time of `phasegate validate` of the base
	// commit's files on disk; ValidateExit its exit code; ValidateRSS its
	// peak RSS (VmHWM, polled every 5 ms while it runs).
	Validate     time.Duration
	ValidateExit int
	ValidateRSS  int64
	// ColdRSS is the serve process's VmHWM after the first pull request
	// (the cold check: with -warmup, after a small warmup check too);
	// PeakRSS after both.
	ColdRSS, PeakRSS int64
}

const growRepo = "growing"

// Grow measures, for each size, the App checking a 1-file change of a
// repository of that many artifacts, cold and then warm, beside the CLI
// checking the whole checkout.
func Grow(ctx context.Context, o GrowOptions) ([]GrowRun, error) {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if len(o.Serve) == 0 || len(o.Validate) == 0 {
		return nil, errors.New("no serve or validate command")
	}
	dir, cleanup, err := workDir(o.Dir, "appbench-grow-")
	if err != nil {
		return nil, err
	}
	defer cleanup()
	var out []GrowRun
	for _, n := range o.Sizes {
		progress(o.Progress, "generating the %d-artifact repository (seed %d)", n, o.Seed)
		c, err := corpusChange(n, o.Seed, false, nil)
		if err != nil {
			return out, err
		}
		r, err := growRun(ctx, o, c, filepath.Join(dir, fmt.Sprint(n)))
		if err != nil {
			return out, fmt.Errorf("%d artifacts: %w", n, err)
		}
		progress(o.Progress, "%d artifacts: first check %v (%d calls), 1-file change %v (%d calls), validate %v",
			n, r.First.ToContracts.Round(time.Millisecond), Totals(r.First.Routes).Calls,
			r.Change.ToContracts.Round(time.Millisecond), Totals(r.Change.Routes).Calls, r.Validate.Round(time.Millisecond))
		out = append(out, r)
	}
	return out, nil
}

func growRun(ctx context.Context, o GrowOptions, c change, dir string) (GrowRun, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return GrowRun{}, err
	}
	r := GrowRun{Artifacts: c.artifacts, Files: len(c.tree), Bytes: c.bytes}
	edits := editable(c.tree, 2)
	if len(edits) < 2 {
		return r, errors.New("the corpus has no two YAML artifacts to edit")
	}
	w, err := newWorld(dir)
	if err != nil {
		return r, err
	}
	defer w.close()
	base := sha('b', 0)
	w.fake.AddRepo(Owner, growRepo, "main")
	w.fake.SetTree(Owner, growRepo, base, c.tree)
	w.fake.SetBranch(Owner, growRepo, "main", base)
	w.fake.AddCommit(Owner, growRepo, ghfake.Commit{SHA: base, Author: prAuthor, Committer: prAuthor, Message: "the repository"})
	p, err := startServe(ctx, o.Serve, w.env(), dir, "serve")
	if err != nil {
		return r, err
	}
	defer p.kill()
	if o.Warmup {
		if err := warmup(ctx, w, []*serveProc{p}, o.Timeout); err != nil {
			return r, err
		}
	}
	for i, step := range []*GrowStep{&r.First, &r.Change} {
		if *step, err = growStep(ctx, w, p, c, base, edits[i], i+1, o.Timeout); err != nil {
			return r, fmt.Errorf("pull request %d: %w; serve's log:\n%s", i+1, err, p.logTail())
		}
		if i == 0 {
			if r.ColdRSS, err = p.peakRSS(); err != nil {
				return r, err
			}
		}
	}
	if r.PeakRSS, err = p.peakRSS(); err != nil {
		return r, err
	}
	if err := p.stop(); err != nil {
		return r, err
	}
	r.Validate, r.ValidateExit, r.ValidateRSS, err = validateCheckout(ctx, o.Validate, c, filepath.Join(dir, "checkout"))
	return r, err
}

// growStep opens a pull request that edits one file of the base and
// measures the App checking it.
func growStep(ctx context.Context, w *world, p *serveProc, c change, base, edit string, i int, timeout time.Duration) (GrowStep, error) {
	head := sha('c', i)
	tree := make([]ghfake.TreeFile, len(c.tree))
	copy(tree, c.tree)
	for j := range tree {
		if tree[j].Path == edit {
			tree[j].Content = append(bytes.Clone(tree[j].Content), fmt.Sprintf("\n# edited by pull request %d\n", i)...)
		}
	}
	files := []ghfake.File{{Filename: edit, Status: "modified"}}
	w.fake.SetTree(Owner, growRepo, head, tree)
	w.fake.AddCommit(Owner, growRepo, ghfake.Commit{SHA: head, Author: prAuthor, Committer: prAuthor, Message: "edit " + edit})
	pr := w.fake.AddPullRequest(Owner, growRepo, ghfake.PullRequest{HeadSHA: head, BaseSHA: base, BaseRef: "main", Author: prAuthor})
	w.fake.SetPullRequestFiles(Owner, growRepo, pr, files)
	w.fake.SetCompare(Owner, growRepo, base, head, files)
	w.meter.Reset()
	sent := time.Now()
	code, answer, err := p.send(ctx, "pull_request", fmt.Sprintf("grow-%d", i), prEvent(Installation, 2, growRepo, pr, head, base))
	if err != nil {
		return GrowStep{}, err
	}
	if code != http.StatusAccepted {
		return GrowStep{}, fmt.Errorf("the delivery was answered %d %q", code, answer)
	}
	var s GrowStep
	for deadline := time.Now().Add(timeout); ; time.Sleep(2 * time.Millisecond) {
		runs := w.fake.CheckRuns(Owner, growRepo, head)
		if s.ToContracts == 0 {
			if cr, ok := completedRun(runs, decide.ContextContracts); ok {
				s.ToContracts, s.Conclusion, s.Title = time.Since(sent), cr.Conclusion, cr.Title
			}
		}
		if _, ok := completedRun(runs, decide.ContextDecisions); ok && s.ToContracts != 0 {
			break // the job's last write: nothing of it is left to count
		}
		if time.Now().After(deadline) {
			if s.ToContracts != 0 {
				break // contracts failed to check: decisions may never complete
			}
			return s, fmt.Errorf("no completed %s check run on %s after %v", decide.ContextContracts, head, timeout)
		}
	}
	s.Routes = w.meter.Routes()
	return s, nil
}

// editable picks n YAML artifacts (not Phase Outcomes, which may never be
// edited) spread over the tree, to edit one each.
func editable(tree []ghfake.TreeFile, n int) []string {
	var all []string
	for _, f := range tree {
		if strings.HasSuffix(f.Path, ".yaml") && !strings.HasSuffix(f.Path, ".outcome.yaml") {
			all = append(all, f.Path)
		}
	}
	var out []string
	for i := 1; i <= n && len(all) >= n; i++ {
		out = append(out, all[i*len(all)/(n+1)])
	}
	return out
}

// validateCheckout writes the base commit's files under dir and times
// `phasegate validate` of it; it returns the time, the exit code and the
// process's peak RSS.
func validateCheckout(ctx context.Context, argv []string, c change, dir string) (time.Duration, int, int64, error) {
	for _, f := range c.tree {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return 0, 0, 0, err
		}
		if err := os.WriteFile(p, f.Content, 0o644); err != nil {
			return 0, 0, 0, err
		}
	}
	cmd := exec.CommandContext(ctx, argv[0], append(argv[1:], "--format", "json", dir)...)
	cmd.Stdout = io.Discard
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, 0, err
	}
	// Not the child's ru_maxrss: Go starts it with vfork, and Linux
	// counts the parent's resident set (the corpus, here) in it. VmHWM
	// is the child's own since its exec, and only grows.
	var rss int64
	done := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			if n, err := vmHWM(cmd.Process.Pid); err == nil {
				rss = n
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	err := cmd.Wait()
	took := time.Since(start)
	close(done)
	<-polled
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return took, exit.ExitCode(), rss, nil
	}
	return took, 0, rss, err
}
