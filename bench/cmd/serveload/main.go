// Command serveload measures phasegate serve's webhook acknowledgement over
// loopback: it starts a real server (backed by an in-process fake GitHub and
// a decider that does nothing) and sends it signed ~20 KB issue_comment
// deliveries from N connections.
//
//	go -C bench run ./cmd/serveload -duration 30s -conns 32
//	go -C bench run ./cmd/serveload -duration 30s -conns 8,32,64
//	go -C bench run ./cmd/serveload -duration 30s -conns 32 -rate 2000  # open loop at the budget rate
//	go -C bench run ./cmd/serveload -soak 10m -conns 32     # samples goroutines and heap every 10 s
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/phasegate/phasegate/bench/serve"
)

func main() {
	duration := flag.Duration("duration", 30*time.Second, "length of each run")
	conns := flag.String("conns", "32", "concurrent connections; a comma-separated list runs each in turn")
	size := flag.Int("size", 20<<10, "payload size in bytes")
	workers := flag.Int("workers", 0, "server workers (0: the server's default, 16)")
	queue := flag.Int("queue", 0, "server queue size (0: the server's default, 1024)")
	warmup := flag.Duration("warmup", 2*time.Second, "unrecorded load before each run")
	soak := flag.Duration("soak", 0, "soak for this long instead (one connection count), sampling every -every")
	rate := flag.Float64("rate", 0, "pace the load at this many deliveries/s (open loop; latency from the scheduled time); 0: closed loop")
	every := flag.Duration("every", 10*time.Second, "soak sampling period")
	unique := flag.Bool("unique-comments", true, "a fresh comment id for every delivery (serve answers a replayed comment as a duplicate)")
	flag.Parse()

	var levels []int
	for _, f := range strings.Split(*conns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			fail(fmt.Errorf("-conns: %q is not a positive number", f))
		}
		levels = append(levels, n)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	fmt.Printf("go %s, %s/%s, GOMAXPROCS %d, NumCPU %d\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU())
	fmt.Printf("load average before: %s\n", loadavg())
	e, err := serve.Start(serve.Options{Workers: *workers, QueueSize: *queue})
	if err != nil {
		fail(err)
	}
	defer func() {
		if err := e.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "serveload: close:", err)
		}
		fmt.Printf("load average after: %s\n", loadavg())
	}()
	fmt.Printf("server ready at %s\n\n", e.URL)

	if *soak > 0 {
		runSoak(ctx, e, levels[0], *size, *rate, *soak, *every)
		return
	}
	var rows []string
	for _, c := range levels {
		if *warmup > 0 {
			if _, err := serve.Run(ctx, serve.Load{URL: e.URL, Conns: c, Size: *size, Rate: *rate, Duration: *warmup, UniqueComments: *unique}); err != nil {
				fail(err)
			}
		}
		r, err := serve.Run(ctx, serve.Load{URL: e.URL, Conns: c, Size: *size, Rate: *rate, Duration: *duration, UniqueComments: *unique})
		if err != nil {
			fail(err)
		}
		if r.Errors > 0 {
			fmt.Fprintf(os.Stderr, "conns %d: %d transport errors, first: %v\n", c, r.Errors, r.FirstErr)
		}
		fmt.Fprintf(os.Stderr, "conns %d: codes %s\n", c, r.CodesString())
		rows = append(rows, r.Row())
	}
	fmt.Println(serve.TableHeader)
	for _, r := range rows {
		fmt.Println(r)
	}
}

func runSoak(ctx context.Context, e *serve.Env, conns, size int, rate float64, d, every time.Duration) {
	var answered atomic.Int64
	done := make(chan serve.Result, 1)
	start := time.Now()
	go func() {
		r, err := serve.Run(ctx, serve.Load{URL: e.URL, Conns: conns, Size: size, Rate: rate, Duration: d, Progress: &answered})
		if err != nil {
			fail(err)
		}
		done <- r
	}()
	fmt.Printf("soak: %s at %d connections; process-wide samples (server + load generator) every %s\n\n", d, conns, every)
	fmt.Println("| t | answered | deliveries/s (interval) | goroutines | heap in-use | live heap (last GC) | RSS |")
	fmt.Println("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	sample := func(prev int64, dt time.Duration) int64 {
		n := answered.Load()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(live)
		var liveB uint64
		if live[0].Value.Kind() == metrics.KindUint64 {
			liveB = live[0].Value.Uint64()
		}
		fmt.Printf("| %s | %d | %.0f | %d | %.1f MB | %.1f MB | %s |\n",
			time.Since(start).Round(time.Second), n, float64(n-prev)/dt.Seconds(),
			runtime.NumGoroutine(), mb(ms.HeapInuse), mb(liveB), rss())
		return n
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	var prev int64
	last := start
	for {
		select {
		case r := <-done:
			sample(prev, time.Since(last))
			fmt.Printf("\n%s\n%s\n", serve.TableHeader, r.Row())
			fmt.Fprintf(os.Stderr, "codes %s; %d transport errors (first %v)\n", r.CodesString(), r.Errors, r.FirstErr)
			return
		case now := <-tick.C:
			prev = sample(prev, now.Sub(last))
			last = now
		}
	}
}

func mb(b uint64) float64 { return float64(b) / (1 << 20) }

// rss is VmRSS from /proc/self/status (Linux), or "-".
func rss() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "-"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			f := strings.Fields(l)
			if len(f) >= 2 {
				if kb, err := strconv.ParseFloat(f[1], 64); err == nil {
					return fmt.Sprintf("%.1f MB", kb/1024)
				}
			}
		}
	}
	return "-"
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "serveload:", err)
	os.Exit(1)
}
