// Command appbench measures the GitHub App (`phasegate serve`) checking
// pull requests against an in-process fake GitHub: one pull request that
// adds the whole 10,000-artifact corpus (API calls by route, bytes, time
// from the delivery to the completed phasegate/contracts check run, peak
// RSS), and a burst of pull requests over many repositories on two
// replicas sharing a private redis-server, and on one replica without
// Redis (throughput, time to check run). See bench/app/README.md.
//
//	go -C bench run ./cmd/appbench                       # builds ./cmd/phasegate, runs both
//	go -C bench run ./cmd/appbench -burst=false -runs 5  # the big pull request only
//	go -C bench run ./cmd/appbench -big=false            # the bursts only
//	go -C bench run ./cmd/appbench -big=false -burst=false -grow 10000,50000  # a 1-file change by repository size
//
// Linux only (peak RSS from /proc). Everything listens on loopback, and
// every process it starts is stopped before it exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/phasegate/phasegate/bench/app"
)

type flags struct {
	bin                            string
	big, burst, memory, warmup     bool
	grow                           string
	artifacts, runs                int
	seed                           int64
	repos, prs, prArtifacts        int
	replicas, senders, concurrency int
	installations                  int
	timeout                        time.Duration
}

func main() {
	var f flags
	flag.StringVar(&f.bin, "bin", "", "the phasegate binary (default: go build ./cmd/phasegate into a temporary directory)")
	flag.BoolVar(&f.big, "big", true, "measure the one big pull request")
	flag.IntVar(&f.artifacts, "artifacts", 10000, "artifacts the big pull request adds")
	flag.Int64Var(&f.seed, "seed", 1, "corpus seed")
	flag.IntVar(&f.runs, "runs", 3, "repetitions of the big pull request (the median is reported)")
	flag.BoolVar(&f.burst, "burst", true, "measure the burst")
	flag.StringVar(&f.grow, "grow", "", "measure a 1-file pull request on repositories of these artifact counts (comma-separated, e.g. 1000,10000,50000,100000), cold and warm, beside validate of the checkout")
	flag.IntVar(&f.repos, "repos", 20, "burst: repositories")
	flag.IntVar(&f.prs, "prs", 5, "burst: pull requests per repository")
	flag.IntVar(&f.prArtifacts, "pr-artifacts", 50, "burst: corpus artifacts per pull request (plus one Phase Outcome)")
	flag.IntVar(&f.replicas, "replicas", 2, "burst: replicas sharing Redis")
	flag.BoolVar(&f.memory, "memory", true, "burst: also run it on one replica without Redis")
	flag.IntVar(&f.senders, "senders", 8, "burst: deliveries in flight at once")
	flag.IntVar(&f.concurrency, "installation-concurrency", 0, "burst: serve's --installation-concurrency (0: its default)")
	flag.IntVar(&f.installations, "installations", 1, "burst: App installations the repositories are spread over")
	flag.BoolVar(&f.warmup, "warmup", true, "have each serve process check a small pull request first (untimed)")
	flag.DurationVar(&f.timeout, "timeout", 5*time.Minute, "bound on each wait")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, f); err != nil {
		fmt.Fprintln(os.Stderr, "appbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, f flags) error {
	bin, cleanup, err := phasegate(f.bin)
	if err != nil {
		return err
	}
	defer cleanup()
	fmt.Printf("%s, %s/%s, NumCPU %d; kernel %s; load average before: %s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH,
		runtime.NumCPU(), kernel(), loadavg())
	serve := []string{bin, "serve"}
	if f.big {
		if err := big(ctx, f, serve); err != nil {
			return err
		}
	}
	if f.grow != "" {
		if err := grow(ctx, f, bin); err != nil {
			return err
		}
	}
	if f.burst {
		if err := bursts(ctx, f, serve); err != nil {
			return err
		}
	}
	fmt.Printf("\nload average after: %s\n", loadavg())
	return nil
}

// phasegate is the binary to run: bin, or one built now.
func phasegate(bin string) (string, func(), error) {
	if bin != "" {
		abs, err := filepath.Abs(bin)
		return abs, func() {}, err
	}
	dir, err := os.MkdirTemp("", "appbench-bin-")
	if err != nil {
		return "", nil, err
	}
	out := filepath.Join(dir, "phasegate")
	cmd := exec.Command("go", "build", "-o", out, "github.com/phasegate/phasegate/cmd/phasegate")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	fmt.Fprintln(os.Stderr, "building", out)
	if err := cmd.Run(); err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, fmt.Errorf("go build ./cmd/phasegate: %w", err)
	}
	return out, func() { _ = os.RemoveAll(dir) }, nil
}

func big(ctx context.Context, f flags, serve []string) error {
	runs, err := app.BigPR(ctx, app.BigOptions{Serve: serve, Artifacts: f.artifacts, Seed: f.seed, Runs: f.runs,
		Warmup: f.warmup, Timeout: f.timeout, Progress: os.Stderr})
	if err != nil {
		return err
	}
	r := runs[0]
	fmt.Printf("\n## One pull request adding %d artifacts (%d files in the head commit, %.1f MB added), %d run(s)\n\n",
		r.Artifacts, r.Files, float64(r.Bytes)/1e6, len(runs))
	fmt.Println("| run | delivery → contracts completed | delivery → decisions completed (job done) | API calls | trees | blobs | bytes down | bytes up | peak RSS of serve | verdict | annotations |")
	fmt.Println("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |")
	var toC, toD []time.Duration
	var rss []int64
	for i, r := range runs {
		t := app.Totals(r.Routes)
		verdict, _, _ := strings.Cut(r.Title, ":") // "HOLD: the first reason"
		fmt.Printf("| %d | %s | %s | %d | %d | %d | %.1f MB | %.1f MB | %.1f MiB | %s (%s) | %d |\n", i+1, ms(r.ToContracts), ms(r.ToDone),
			t.Calls, app.CallsTo(r.Routes, "/git/trees/"), app.CallsTo(r.Routes, "/git/blobs/"), float64(t.Down)/1e6, float64(t.Up)/1e6,
			app.MiB(r.PeakRSS), r.Conclusion, verdict, r.Annotations)
		toC, toD, rss = append(toC, r.ToContracts), append(toD, r.ToDone), append(rss, r.PeakRSS)
	}
	sort.Slice(rss, func(i, j int) bool { return rss[i] < rss[j] })
	fmt.Printf("| **median** | **%s** | **%s** | | | | | | **%.1f MiB** | | |\n\n", ms(median(toC)), ms(median(toD)), app.MiB(rss[len(rss)/2]))
	fmt.Printf("phasegate/contracts: %d run(s) on the commit, title %q\nphasegate/decisions: %s\n\n", r.ContractsRuns, r.Title, r.Decisions)
	fmt.Println("API calls of run 1 by route:")
	fmt.Println()
	routes(r.Routes)
	return nil
}

func grow(ctx context.Context, f flags, bin string) error {
	var sizes []int
	for _, s := range strings.Split(f.grow, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("-grow: %q is not a count of artifacts", s)
		}
		sizes = append(sizes, n)
	}
	runs, err := app.Grow(ctx, app.GrowOptions{Serve: []string{bin, "serve"}, Validate: []string{bin, "validate"}, Sizes: sizes,
		Seed: f.seed, Warmup: f.warmup, Timeout: f.timeout, Progress: os.Stderr})
	if err != nil {
		return err
	}
	fmt.Printf("\n## A pull request changing 1 file, by repository size (the App cold, then warm), beside `phasegate validate` of the checkout\n\n")
	fmt.Println("| artifacts | files | validate (exit) | first check → contracts | requests | MB down | 1-file change → contracts | ÷ validate | requests | MB down | contracts | peak RSS: validate | serve, cold (÷ validate) | serve, after both |")
	fmt.Println("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |")
	for _, r := range runs {
		a, b := app.Totals(r.First.Routes), app.Totals(r.Change.Routes)
		fmt.Printf("| %d | %d | %s (%d) | %s | %d | %.2f | %s | %.2fx | %d | %.2f | %s: %s | %.1f MiB | %.1f MiB (%.2fx) | %.1f MiB |\n", r.Artifacts, r.Files,
			ms(r.Validate), r.ValidateExit, ms(r.First.ToContracts), a.Calls, float64(a.Down)/1e6, ms(r.Change.ToContracts),
			r.Change.ToContracts.Seconds()/r.Validate.Seconds(), b.Calls, float64(b.Down)/1e6, r.Change.Conclusion, r.Change.Title,
			app.MiB(r.ValidateRSS), app.MiB(r.ColdRSS), float64(r.ColdRSS)/float64(max(r.ValidateRSS, 1)), app.MiB(r.PeakRSS))
	}
	for _, r := range runs {
		fmt.Printf("\nAPI calls of the first check at %d artifacts, by route:\n\n", r.Artifacts)
		routes(r.First.Routes)
		fmt.Printf("\nAPI calls of the 1-file change at %d artifacts, by route:\n\n", r.Artifacts)
		routes(r.Change.Routes)
	}
	return nil
}

func bursts(ctx context.Context, f flags, serve []string) error {
	type mode struct {
		replicas int
		redis    bool
	}
	modes := []mode{{f.replicas, true}}
	if f.memory {
		modes = append(modes, mode{1, false})
	}
	var results []app.BurstResult
	for _, m := range modes {
		res, err := app.Burst(ctx, app.BurstOptions{Serve: serve, Repos: f.repos, PRsPerRepo: f.prs, Artifacts: f.prArtifacts, Seed: f.seed,
			Replicas: m.replicas, Redis: m.redis, InstallationConcurrency: f.concurrency, Installations: f.installations, Senders: f.senders,
			Warmup: f.warmup, Timeout: f.timeout, Progress: os.Stderr})
		if errors.Is(err, app.ErrNoRedis) {
			fmt.Printf("\nskipped the burst on %d replicas with Redis: %v (apt-get install redis-server)\n", m.replicas, err)
			continue
		}
		if err != nil {
			return err
		}
		results = append(results, res)
	}
	burstTable(f, results)
	return nil
}

func burstTable(f flags, results []app.BurstResult) {
	conc := "serve's default"
	if f.concurrency > 0 {
		conc = fmt.Sprint(f.concurrency)
	}
	fmt.Printf("\n## Burst: %d pull requests over %d repositories (%d artifacts + 1 outcome each) of %d installation(s), --installation-concurrency %s, %d senders\n\n",
		f.repos*f.prs, f.repos, f.prArtifacts, f.installations, conc, f.senders)
	fmt.Println("| replicas | queue | deliveries sent in | all checked in | PRs checked/s | p50 | p90 | p99 | max | p99 to job done | API calls | exactly one completed run | commits checked twice / at once | jobs per replica | mean job run | deferrals | peak RSS per replica |")
	fmt.Println("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- |")
	for _, r := range results {
		queue := "in memory"
		if r.Redis {
			queue = "Redis (durable)"
		}
		var jobs, rss []string
		var n, secs, deferred float64
		for _, p := range r.PerReplica {
			jobs = append(jobs, fmt.Sprintf("%.0f", p.Jobs))
			rss = append(rss, fmt.Sprintf("%.1f MiB", app.MiB(p.PeakRSS)))
			n, secs, deferred = n+p.Jobs, secs+p.JobSeconds, deferred+p.Deferrals
		}
		mean := time.Duration(secs / max(n, 1) * float64(time.Second))
		fmt.Printf("| %d | %s | %s | %s | %.1f | %s | %s | %s | %s | %s | %d | %d / %d | %d / %d | %s | %s | %.0f | %s |\n", r.Replicas, queue,
			ms(r.SendSpan), ms(r.Wall), r.Throughput, ms(app.Quantile(r.ToContracts, 0.5)), ms(app.Quantile(r.ToContracts, 0.9)),
			ms(app.Quantile(r.ToContracts, 0.99)), ms(app.Quantile(r.ToContracts, 1)), ms(app.Quantile(r.ToDone, 0.99)),
			app.Totals(r.Routes).Calls, r.ExactlyOne, r.PRs, r.Repeated, r.Overlapping, strings.Join(jobs, " + "), ms(mean), deferred, strings.Join(rss, ", "))
	}
	for _, r := range results {
		fmt.Printf("\nAPI calls of the burst on %d replica(s) (Redis: %v), by route; answers %v:\n\n", r.Replicas, r.Redis, r.Answers)
		routes(r.Routes)
	}
}

func routes(rs []app.Route) {
	fmt.Println("| route | calls | failed | bytes down | bytes up |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: |")
	for _, r := range append(rs, app.Totals(rs)) {
		fmt.Printf("| `%s` | %d | %d | %d | %d |\n", r.Route, r.Calls, r.Failed, r.Down, r.Up)
	}
}

func median(ds []time.Duration) time.Duration { return app.Quantile(ds, 0.5) }

func ms(d time.Duration) string {
	if d >= 10*time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}
