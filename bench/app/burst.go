package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghfake"
)

// BurstOptions configure Burst.
type BurstOptions struct {
	// Serve is the command that runs `phasegate serve` (BigOptions.Serve).
	Serve []string
	// Repos repositories with PRsPerRepo pull requests each; each pull
	// request adds Artifacts corpus artifacts (a corpus of its own seed)
	// and a Phase Outcome on an issue of its repository.
	Repos, PRsPerRepo, Artifacts int
	Seed                         int64
	// Replicas serve processes take the deliveries, round-robin.
	Replicas int
	// Redis: the replicas share a private redis-server (the durable
	// queue); without it each replica runs its in-memory queue.
	Redis bool
	// InstallationConcurrency is --installation-concurrency (0: serve's
	// default); it applies with Redis only.
	InstallationConcurrency int
	// Installations spreads the repositories over this many App
	// installations, round-robin (default 1: one organisation).
	Installations int
	// Senders deliver at once (default 8).
	Senders int
	// Warmup, Timeout, Dir, Progress: as in BigOptions.
	Warmup   bool
	Timeout  time.Duration
	Dir      string
	Progress io.Writer
}

// BurstResult is what one burst measured.
type BurstResult struct {
	PRs, Replicas int
	Redis         bool
	// Answers counts the deliveries' answers by status.
	Answers map[int]int
	// SendSpan is from the first delivery sent to the last one answered;
	// Wall from the first delivery sent to the last phasegate/contracts
	// check run seen completed; Throughput is PRs / Wall, per second.
	SendSpan, Wall time.Duration
	Throughput     float64
	// ToContracts are the times from each delivery to its completed
	// phasegate/contracts check run; ToDone to phasegate/decisions too.
	ToContracts, ToDone []time.Duration
	// Routes are the API requests of the burst, by route.
	Routes []Route
	// PerReplica: the jobs each replica handled and its peak RSS.
	PerReplica []ReplicaStat
	// Checks of the outcome: pull requests whose commit has exactly one
	// completed phasegate/contracts run (want PRs), commits with more
	// than one run, and pairs of runs on one commit that overlapped in
	// time (checked by two jobs at once: want 0).
	ExactlyOne, Repeated, Overlapping int
}

// ReplicaStat is one replica's share of a burst.
type ReplicaStat struct {
	Name string
	// Jobs handled during the burst and the seconds they took in all
	// (phasegate_handler_duration_seconds count and sum).
	Jobs, JobSeconds float64
	// Deferrals: durable jobs scheduled to run again
	// (phasegate_queue_job_retries_total: their installation was busy, …).
	Deferrals float64
	APICalls  float64 // phasegate_github_api_calls_total during the burst
	PeakRSS   int64
}

// Burst measures a burst of pull requests over several repositories on
// Replicas serve processes.
func Burst(ctx context.Context, o BurstOptions) (BurstResult, error) {
	o = burstDefaults(o)
	if len(o.Serve) == 0 {
		return BurstResult{}, errors.New("no serve command")
	}
	dir, cleanup, err := workDir(o.Dir, "appbench-burst-")
	if err != nil {
		return BurstResult{}, err
	}
	defer cleanup()
	w, err := newWorld(dir)
	if err != nil {
		return BurstResult{}, err
	}
	defer w.close()
	commits, err := burstWorld(w.fake, o)
	if err != nil {
		return BurstResult{}, err
	}
	env := w.env()
	if o.Redis {
		rdb, err := startRedis(dir)
		if err != nil {
			return BurstResult{}, err
		}
		defer rdb.stop()
		env = append(env, "PHASEGATE_REDIS_URL="+rdb.url())
	}
	if o.InstallationConcurrency > 0 {
		env = append(env, "PHASEGATE_INSTALLATION_CONCURRENCY="+strconv.Itoa(o.InstallationConcurrency))
	}
	var ps []*serveProc
	defer func() {
		for _, p := range ps {
			p.kill()
		}
	}()
	for i := range o.Replicas {
		p, err := startServe(ctx, o.Serve, env, dir, fmt.Sprintf("replica-%c", 'a'+i))
		if err != nil {
			return BurstResult{}, err
		}
		ps = append(ps, p)
	}
	return runBurst(ctx, o, w, ps, commits)
}

func burstDefaults(o BurstOptions) BurstOptions {
	o.Replicas = max(o.Replicas, 1)
	o.Installations = max(o.Installations, 1)
	if o.Senders <= 0 {
		o.Senders = 8
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	return o
}

// burstWorld stores the repositories and their pull requests in the fake
// and returns the commits to check, in the order they are delivered:
// round-robin over the repositories.
func burstWorld(f *ghfake.Server, o BurstOptions) ([]*commit, error) {
	base := sha('b', 0)
	byRepo := make([][]*commit, o.Repos)
	for i := 1; i < o.Installations; i++ {
		f.AddInstallation(AppID, Installation+int64(i))
	}
	for r := range o.Repos {
		name := fmt.Sprintf("svc-%02d", r)
		f.AddRepo(Owner, name, "main")
		f.SetTree(Owner, name, base, baseFiles)
		f.SetBranch(Owner, name, "main", base)
		for p := range o.PRsPerRepo {
			issue := f.AddIssue(Owner, name, fmt.Sprintf("Feature %d", p+1), "", prAuthor)
			path, data := outcomeFor(issue)
			c, err := corpusChange(o.Artifacts, o.Seed+int64(r*1000+p), true, map[string]string{path: data})
			if err != nil {
				return nil, err
			}
			head := sha('a', r*1000+p+1)
			pr := addPR(f, name, head, base, c)
			f.AddCommit(Owner, name, ghfake.Commit{SHA: head, Author: prAuthor, Committer: prAuthor, Message: "add the artifacts"})
			byRepo[r] = append(byRepo[r], &commit{repo: name, sha: head, pr: pr, installation: Installation + int64(r%o.Installations)})
		}
	}
	var out []*commit
	for p := range o.PRsPerRepo {
		for r := range o.Repos {
			out = append(out, byRepo[r][p])
		}
	}
	return out, nil
}

func runBurst(ctx context.Context, o BurstOptions, w *world, ps []*serveProc, commits []*commit) (BurstResult, error) {
	if o.Warmup {
		progress(o.Progress, "warming up %d replica(s)", len(ps))
		if err := warmup(ctx, w, ps, o.Timeout); err != nil {
			return BurstResult{}, err
		}
	}
	before, err := replicaCounts(ps)
	if err != nil {
		return BurstResult{}, err
	}
	w.meter.Reset()
	progress(o.Progress, "delivering %d pull requests to %d replica(s)", len(commits), len(ps))
	watched := make(chan error, 1)
	go func() { watched <- watch(ctx, w.fake, commits, o.Timeout) }()
	res := BurstResult{PRs: len(commits), Replicas: len(ps), Redis: o.Redis}
	var lastAnswer time.Time
	res.Answers, lastAnswer, err = deliver(ctx, ps, commits, o.Senders)
	if err != nil {
		return res, err
	}
	if err := <-watched; err != nil {
		return res, fmt.Errorf("%w; replica logs:\n%s", err, ps[0].logTail())
	}
	time.Sleep(250 * time.Millisecond) // any write after phasegate/decisions
	first, last := commits[0].sent(), time.Time{}
	for _, c := range commits {
		res.ToContracts = append(res.ToContracts, c.contracts.Sub(c.sent()))
		res.ToDone = append(res.ToDone, c.decisions.Sub(c.sent()))
		if c.contracts.After(last) {
			last = c.contracts
		}
	}
	res.SendSpan, res.Wall = lastAnswer.Sub(first), last.Sub(first)
	res.Throughput = float64(len(commits)) / res.Wall.Seconds()
	res.Routes = w.meter.Routes()
	res.ExactlyOne, res.Repeated, res.Overlapping = runChecks(w.fake, commits)
	if res.PerReplica, err = replicaStats(ps, before); err != nil {
		return res, err
	}
	for _, p := range ps {
		if err := p.stop(); err != nil {
			return res, err
		}
	}
	return res, nil
}

// deliver sends every commit's delivery, senders at a time, to the
// replicas round-robin; it returns the answers by status and when the
// last one came.
func deliver(ctx context.Context, ps []*serveProc, commits []*commit, senders int) (map[int]int, time.Time, error) {
	var mu sync.Mutex
	answers := map[int]int{}
	var last time.Time
	var errs []error
	next := make(chan int)
	var wg sync.WaitGroup
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				c := commits[i]
				body := prEvent(c.installation, 100+i, c.repo, c.pr, c.sha, sha('b', 0))
				c.markSent()
				code, answer, err := ps[i%len(ps)].send(ctx, "pull_request", fmt.Sprintf("burst-%d", i), body)
				mu.Lock()
				answers[code]++
				last = time.Now()
				if err == nil && code != http.StatusAccepted {
					err = fmt.Errorf("delivery %d answered %d %q", i, code, answer)
				}
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	for i := range commits {
		next <- i
	}
	close(next)
	wg.Wait()
	return answers, last, errors.Join(errs...)
}

// runChecks counts the commits with exactly one completed
// phasegate/contracts run, those with more than one, and the pairs of
// runs on one commit whose lifetimes overlapped.
func runChecks(f *ghfake.Server, commits []*commit) (one, repeated, overlapping int) {
	for _, c := range commits {
		var runs []ghfake.CheckRun
		for _, r := range f.CheckRuns(Owner, c.repo, c.sha) {
			if r.Name == decide.ContextContracts {
				runs = append(runs, r)
			}
		}
		if len(runs) == 1 && runs[0].Status == "completed" {
			one++
		}
		if len(runs) > 1 {
			repeated++
		}
		for i := range runs {
			for j := i + 1; j < len(runs); j++ {
				a, b := runs[i], runs[j]
				if a.CompletedAt.IsZero() || b.CompletedAt.IsZero() || a.StartedAt.Before(b.CompletedAt) && b.StartedAt.Before(a.CompletedAt) {
					overlapping++
				}
			}
		}
	}
	return one, repeated, overlapping
}

// replicaCounts reads each replica's counters so far.
func replicaCounts(ps []*serveProc) ([]ReplicaStat, error) {
	var out []ReplicaStat
	for _, p := range ps {
		st := ReplicaStat{Name: p.name}
		for _, m := range []struct {
			name string
			to   *float64
		}{
			{"phasegate_handler_duration_seconds_count", &st.Jobs},
			{"phasegate_handler_duration_seconds_sum", &st.JobSeconds},
			{"phasegate_queue_job_retries_total", &st.Deferrals},
			{"phasegate_github_api_calls_total", &st.APICalls},
		} {
			v, err := p.metric(m.name)
			if err != nil {
				return nil, err
			}
			*m.to = v
		}
		out = append(out, st)
	}
	return out, nil
}

// replicaStats are the replicas' counts since before, and their peak RSS.
func replicaStats(ps []*serveProc, before []ReplicaStat) ([]ReplicaStat, error) {
	now, err := replicaCounts(ps)
	if err != nil {
		return nil, err
	}
	for i, p := range ps {
		now[i].Jobs -= before[i].Jobs
		now[i].JobSeconds -= before[i].JobSeconds
		now[i].Deferrals -= before[i].Deferrals
		now[i].APICalls -= before[i].APICalls
		if now[i].PeakRSS, err = p.peakRSS(); err != nil {
			return nil, err
		}
	}
	return now, nil
}
