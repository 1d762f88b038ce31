// Command ackcompare compares phasegate serve's webhook acknowledgement with
// a palantir/go-githubapp v0.30.0 receiver whose handler does nothing
// (bench/peer, its own module), under the same driver (bench/serve.Run) and
// the same signed ~20 KB issue_comment deliveries: a closed loop on 8
// connections (deliveries/s), then paced loads at 2,000/s and 4,000/s
// (achieved rate, p50 / p99 from the scheduled time), and each server's CPU
// per delivery (utime + stime from /proc/<pid>/stat over the run, divided
// by the deliveries answered). Each server is its own process: phasegate is
// this binary re-executed with -role phasegate (bench/serve.Start: a real
// server.Server backed by an in-process fake GitHub, a decider that does
// nothing), the peer is the -peer binary. The scenarios run -rounds times,
// the order of the two servers rotating each round; the summary is the
// median of the rounds.
//
//	bench/peer/run.sh                   # builds both, 3 rounds of 10 s runs
//	go -C bench run ./cmd/ackcompare -peer /tmp/peer -duration 10s -rounds 3
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/phasegate/phasegate/bench/serve"
)

func main() {
	role := flag.String("role", "", "internal: \"phasegate\" serves phasegate's webhook endpoint and prints its URL")
	peer := flag.String("peer", "", "the bench/peer binary (go-githubapp receiver)")
	duration := flag.Duration("duration", 10*time.Second, "length of each measured run")
	warmup := flag.Duration("warmup", 2*time.Second, "unrecorded load before each run")
	rounds := flag.Int("rounds", 3, "rounds; the server order rotates each round, the summary is the median")
	conns := flag.Int("conns", 8, "connections of the closed loop")
	pacedConns := flag.Int("paced-conns", 64, "connections of the paced loads (bounds the requests in flight)")
	rates := flag.String("rates", "2000,4000", "paced rates, deliveries/s, comma-separated")
	size := flag.Int("size", 20<<10, "payload size in bytes")
	unique := flag.Bool("unique-comments", true, "give every delivery its own comment id, signed as it is sent (a server deduplicating by comment sees no repeats); false: 16 signed payloads cycled")
	waitQuiet := flag.Duration("wait-quiet", 0, "before starting, wait up to this long for the 1-minute load average to drop below -quiet-load")
	quietLoad := flag.Float64("quiet-load", 1, "see -wait-quiet")
	cpuProfile := flag.String("cpuprofile", "", "write the phasegate server process's CPU profile (its whole life, idle periods included) to this file")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *role == "phasegate" {
		if err := servePhasegate(ctx, *cpuProfile); err != nil {
			fail(err)
		}
		return
	}
	if *peer == "" {
		fail(errors.New("-peer: the bench/peer binary is required (bench/peer/run.sh builds it)"))
	}
	if *rounds < 1 || *rounds > 20 || *duration <= 0 || *duration > 10*time.Minute {
		fail(errors.New("-rounds must be 1..20 and -duration in (0, 10m]"))
	}
	scen := []scenario{{conns: *conns}}
	for _, f := range strings.Split(*rates, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || r <= 0 {
			fail(fmt.Errorf("-rates: %q is not a positive rate", f))
		}
		scen = append(scen, scenario{conns: *pacedConns, rate: r})
	}
	waitForQuiet(ctx, *waitQuiet, *quietLoad)
	c := compare{duration: *duration, warmup: *warmup, rounds: *rounds, size: *size, unique: *unique, scenarios: scen, cpuProfile: *cpuProfile}
	if err := c.run(ctx, *peer); err != nil {
		fail(err)
	}
}

// servePhasegate is the -role phasegate child: it starts the server, prints
// its URL and serves until its standard input closes or ctx ends; with a
// profile path, it records its CPU profile there meanwhile.
func servePhasegate(ctx context.Context, profile string) error {
	e, err := serve.Start(serve.Options{})
	if err != nil {
		return err
	}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return errors.Join(err, e.Close())
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return errors.Join(err, f.Close(), e.Close())
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	fmt.Println(e.URL)
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	<-ctx.Done()
	return e.Close()
}

// scenario is one load: a closed loop (rate 0) or paced.
type scenario struct {
	conns int
	rate  float64
}

func (s scenario) String() string {
	if s.rate == 0 {
		return fmt.Sprintf("closed loop, %d connections", s.conns)
	}
	return fmt.Sprintf("paced %.0f/s, %d connections", s.rate, s.conns)
}

// server is a running server process.
type server struct {
	name  string
	url   string
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// start runs a server process and reads its URL from the first line of
// its output (within a minute).
func start(name string, args ...string) (*server, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	s := &server{name: name, cmd: cmd, stdin: in}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- strings.TrimSpace(sc.Text())
		}
		close(line)
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case u, ok := <-line:
		if ok && strings.HasPrefix(u, "http://127.0.0.1:") {
			s.url = u
			return s, nil
		}
	case <-time.After(time.Minute):
	}
	s.stop()
	return nil, fmt.Errorf("%s printed no loopback URL", name)
}

// stop closes the server's standard input and waits for it (killing it
// after 30 s).
func (s *server) stop() {
	s.stdin.Close()
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// cpu is the process's user + system CPU time so far, from /proc/<pid>/stat.
func (s *server) cpu() (time.Duration, error) {
	path := fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid)
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	ticks, err := statTicks(string(b))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return time.Duration(ticks) * time.Second / time.Duration(clockTicks), nil
}

// statTicks is utime + stime (fields 14 and 15) of a /proc/<pid>/stat line,
// in clock ticks. The command name (field 2) may hold spaces and
// parentheses, so the fields are counted from its last ')'.
func statTicks(stat string) (int64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("no command name")
	}
	f := strings.Fields(stat[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, fmt.Errorf("%d fields after the command name, want at least 13", len(f))
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	k, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return u + k, nil
}

// clockTicks is sysconf(_SC_CLK_TCK): 100 on every Linux the Go runtime
// supports outside alpha/ia64.
var clockTicks = func() int64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if n, err2 := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil && err2 == nil && n > 0 {
		return n
	}
	return 100
}()

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// waitForQuiet waits up to d for the 1-minute load average to drop below
// limit: a shared machine skews every number.
func waitForQuiet(ctx context.Context, d time.Duration, limit float64) {
	for end := time.Now().Add(d); time.Now().Before(end) && ctx.Err() == nil; time.Sleep(5 * time.Second) {
		l, err := strconv.ParseFloat(strings.Fields(loadavg())[0], 64)
		if err != nil || l < limit {
			return
		}
	}
}

func header() {
	fmt.Printf("go %s, %s/%s, GOMAXPROCS %d, NumCPU %d\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU())
	fmt.Printf("load average before: %s\n", loadavg())
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "ackcompare:", err)
	os.Exit(1)
}
