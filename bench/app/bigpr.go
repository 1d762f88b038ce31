package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghfake"
)

// BigOptions configure BigPR.
type BigOptions struct {
	// Serve is the command that runs `phasegate serve` (e.g. the binary
	// and "serve"); it is configured by PHASEGATE_* variables.
	Serve []string
	// Artifacts is the size of the corpus the pull request adds (10,000);
	// Seed its seed (bench/corpus).
	Artifacts int
	Seed      int64
	// Runs repeats the measurement, each with a fresh fake and a fresh
	// serve process (default 1).
	Runs int
	// Warmup first has each serve process check a small pull request
	// (untimed, uncounted), as a long-running server has.
	Warmup bool
	// Timeout bounds each wait (default 5 minutes).
	Timeout time.Duration
	// Dir holds the logs and the key (default a temporary directory,
	// removed after).
	Dir string
	// Progress, when set, gets a line per step.
	Progress io.Writer
}

// BigRun is one check of the big pull request.
type BigRun struct {
	// Files is the head commit's file count, Artifacts the corpus's
	// artifacts, Bytes the size of the files the change adds.
	Files, Artifacts int
	Bytes            int64
	// ToContracts is from sending the delivery to seeing the
	// phasegate/contracts check run completed; ToDone to seeing
	// phasegate/decisions completed too (the job's last write).
	ToContracts, ToDone time.Duration
	// Routes are the API requests serve made for the job, by route.
	Routes []Route
	// PeakRSS is the serve process's VmHWM (bytes) after the job.
	PeakRSS int64
	// Conclusion, Title and Annotations are the completed
	// phasegate/contracts check run's; ContractsRuns counts the
	// phasegate/contracts runs on the commit (1 expected).
	Conclusion, Title string
	Annotations       int
	ContractsRuns     int
	// Decisions is the phasegate/decisions check run's conclusion and
	// title.
	Decisions string
}

const (
	bigRepo    = "monorepo"
	warmupRepo = "warmup"
)

// BigPR measures serve checking one pull request that adds the whole
// corpus, Runs times.
func BigPR(ctx context.Context, o BigOptions) ([]BigRun, error) {
	o.Runs = max(o.Runs, 1)
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	if len(o.Serve) == 0 {
		return nil, errors.New("no serve command")
	}
	dir, cleanup, err := workDir(o.Dir, "appbench-big-")
	if err != nil {
		return nil, err
	}
	defer cleanup()
	progress(o.Progress, "generating the %d-artifact corpus (seed %d)", o.Artifacts, o.Seed)
	c, err := corpusChange(o.Artifacts, o.Seed, false, nil)
	if err != nil {
		return nil, err
	}
	var runs []BigRun
	for i := range o.Runs {
		r, err := bigRun(ctx, o, c, filepath.Join(dir, fmt.Sprintf("run-%d", i+1)))
		if err != nil {
			return runs, fmt.Errorf("run %d: %w", i+1, err)
		}
		progress(o.Progress, "run %d: contracts completed %v after the delivery, job done %v; %d API calls; peak RSS %.1f MiB",
			i+1, r.ToContracts.Round(time.Millisecond), r.ToDone.Round(time.Millisecond), Totals(r.Routes).Calls, MiB(r.PeakRSS))
		runs = append(runs, r)
	}
	return runs, nil
}

func bigRun(ctx context.Context, o BigOptions, c change, dir string) (BigRun, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return BigRun{}, err
	}
	w, err := newWorld(dir)
	if err != nil {
		return BigRun{}, err
	}
	defer w.close()
	base := sha('b', 0)
	w.fake.AddRepo(Owner, bigRepo, "main")
	w.fake.SetTree(Owner, bigRepo, base, baseFiles)
	w.fake.SetBranch(Owner, bigRepo, "main", base)
	head := sha('a', 1)
	pr := addPR(w.fake, bigRepo, head, base, c)
	w.fake.AddCommit(Owner, bigRepo, ghfake.Commit{SHA: head, Author: prAuthor, Committer: prAuthor, Message: "add the corpus"})
	p, err := startServe(ctx, o.Serve, w.env(), dir, "serve")
	if err != nil {
		return BigRun{}, err
	}
	defer p.kill()
	if o.Warmup {
		if err := warmup(ctx, w, []*serveProc{p}, o.Timeout); err != nil {
			return BigRun{}, err
		}
	}
	w.meter.Reset()
	cm := &commit{repo: bigRepo, sha: head, pr: pr}
	body := prEvent(Installation, 1, bigRepo, pr, head, base)
	cm.markSent()
	code, answer, err := p.send(ctx, "pull_request", "big-1", body)
	if err != nil {
		return BigRun{}, err
	}
	if code != http.StatusAccepted {
		return BigRun{}, fmt.Errorf("the delivery was answered %d %q", code, answer)
	}
	if err := watch(ctx, w.fake, []*commit{cm}, o.Timeout); err != nil {
		return BigRun{}, fmt.Errorf("%w; serve's log:\n%s", err, p.logTail())
	}
	r := BigRun{Files: len(c.tree), Artifacts: c.artifacts, Bytes: c.bytes,
		ToContracts: cm.contracts.Sub(cm.sent()), ToDone: cm.decisions.Sub(cm.sent()), Routes: w.meter.Routes()}
	if r.PeakRSS, err = p.peakRSS(); err != nil {
		return BigRun{}, err
	}
	runs := w.fake.CheckRuns(Owner, bigRepo, head)
	cr, _ := completedRun(runs, decide.ContextContracts)
	r.Conclusion, r.Title, r.Annotations = cr.Conclusion, cr.Title, len(cr.Annotations)
	if d, ok := completedRun(runs, decide.ContextDecisions); ok {
		r.Decisions = d.Conclusion + ": " + d.Title
	}
	for _, x := range runs {
		if x.Name == decide.ContextContracts {
			r.ContractsRuns++
		}
	}
	return r, p.stop()
}

// warmup has each serve process check a small pull request of its own,
// and waits until it did.
func warmup(ctx context.Context, w *world, ps []*serveProc, timeout time.Duration) error {
	w.fake.AddRepo(Owner, warmupRepo, "main")
	base := sha('b', 0)
	w.fake.SetTree(Owner, warmupRepo, base, baseFiles)
	c, err := corpusChange(5, 99, true, nil)
	if err != nil {
		return err
	}
	var commits []*commit
	for i, p := range ps {
		head := sha('f', i+1)
		pr := addPR(w.fake, warmupRepo, head, base, c)
		cm := &commit{repo: warmupRepo, sha: head, pr: pr}
		cm.markSent()
		code, answer, err := p.send(ctx, "pull_request", fmt.Sprintf("warmup-%d", i), prEvent(Installation, 1000, warmupRepo, pr, head, base))
		if err != nil {
			return err
		}
		if code != http.StatusAccepted {
			return fmt.Errorf("the warm-up delivery was answered %d %q", code, answer)
		}
		commits = append(commits, cm)
	}
	if err := watch(ctx, w.fake, commits, timeout); err != nil {
		return fmt.Errorf("warming up: %w", err)
	}
	time.Sleep(250 * time.Millisecond) // any write after phasegate/decisions
	return nil
}

// workDir is dir, or a new temporary directory removed by cleanup.
func workDir(dir, pattern string) (string, func(), error) {
	if dir != "" {
		return dir, func() {}, os.MkdirAll(dir, 0o700)
	}
	d, err := os.MkdirTemp("", pattern)
	if err != nil {
		return "", nil, err
	}
	return d, func() { _ = os.RemoveAll(d) }, nil
}

func progress(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}

// MiB is bytes in mebibytes.
func MiB(b int64) float64 { return float64(b) / (1 << 20) }
