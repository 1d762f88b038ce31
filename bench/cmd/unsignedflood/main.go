// Command unsignedflood measures the peak resident memory of a `phasegate
// serve` process while unauthenticated clients push large bodies at it: it
// starts the given binary on 127.0.0.1 (a fresh App key, a GitHub API URL
// that answers nothing, the reconcile loop off), sends -rounds rounds of
// -conns concurrent POST /webhook requests of -size bytes each, and reads
// the process's VmHWM (peak RSS) and VmRSS from /proc/<pid>/status.
//
//	go build -o /tmp/phasegate ./cmd/phasegate
//	go -C bench run ./cmd/unsignedflood -bin /tmp/phasegate                  # no signature header
//	go -C bench run ./cmd/unsignedflood -bin /tmp/phasegate -sig forged      # a well-formed, wrong signature
//	go -C bench run ./cmd/unsignedflood -bin /tmp/phasegate -sig forged -chunked  # no Content-Length
//
// Everything is bounded: at most -rounds × -conns requests, and -timeout
// for the whole run. The server only ever listens on loopback. Linux only
// (/proc).
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	bin := flag.String("bin", "", "the phasegate binary to start (required)")
	conns := flag.Int("conns", 16, "concurrent connections per round")
	size := flag.Int64("size", 24<<20, "body bytes per request")
	rounds := flag.Int("rounds", 3, "rounds of -conns concurrent requests")
	sig := flag.String("sig", "none", "signature header: none (unsigned) or forged (sha256= and 64 hex digits that do not verify)")
	timeout := flag.Duration("timeout", 3*time.Minute, "bound on the whole run")
	chunked := flag.Bool("chunked", false, "send the bodies chunked, without a Content-Length")
	var env multiFlag
	flag.Var(&env, "env", "extra NAME=value for the server (repeatable), e.g. -env PHASEGATE_MAX_INFLIGHT_BYTES=64MiB")
	flag.Parse()
	switch {
	case *bin == "":
		fail(errors.New("-bin is required"))
	case *conns < 1 || *conns > 256:
		fail(errors.New("-conns must be 1..256"))
	case *rounds < 1 || *rounds > 100:
		fail(errors.New("-rounds must be 1..100"))
	case *size < 1 || *size > 64<<20:
		fail(errors.New("-size must be 1..64 MiB"))
	case *sig != "none" && *sig != "forged":
		fail(errors.New("-sig must be none or forged"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, *bin, env, *conns, *rounds, *size, *sig, *chunked); err != nil {
		fail(err)
	}
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "unsignedflood:", err)
	os.Exit(2)
}

func run(ctx context.Context, bin string, env []string, conns, rounds int, size int64, sig string, chunked bool) error {
	dir, err := os.MkdirTemp("", "unsignedflood")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	addr, err := freeLoopback()
	if err != nil {
		return err
	}
	cmd, err := startServe(bin, env, dir, addr)
	if err != nil {
		return err
	}
	pid := cmd.Process.Pid
	defer func() {
		_ = cmd.Process.Kill() // the process this command started, by its pid
		_ = cmd.Wait()
	}()
	url := "http://" + addr + "/webhook"
	if err := waitListening(ctx, "http://"+addr+"/healthz"); err != nil {
		return err
	}
	idle, err := memory(pid)
	if err != nil {
		return err
	}
	fmt.Printf("server %s (pid %d) on %s; -conns %d -size %d -rounds %d -sig %s -chunked=%t; extra env %v\n", bin, pid, addr, conns, size, rounds, sig, chunked, env)
	fmt.Printf("idle: VmHWM %s, VmRSS %s\n", mib(idle.hwm), mib(idle.rss))

	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: conns, MaxIdleConnsPerHost: conns, DisableCompression: true}}
	answers := map[string]int{}
	for r := 1; r <= rounds; r++ {
		if err := round(ctx, client, url, r, conns, size, sig, chunked, pid, answers); err != nil {
			return err
		}
	}
	final, err := memory(pid)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(answers))
	for k := range answers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, answers[k]))
	}
	fmt.Printf("answers: %s\n", strings.Join(parts, ", "))
	fmt.Printf("peak RSS (VmHWM) of serve: %s (idle %s)\n", mib(final.hwm), mib(idle.hwm))
	return nil
}

// startServe starts `bin serve` on addr with a fresh App key under dir,
// against a GitHub that never answers, logging to dir/serve.log.
func startServe(bin string, env []string, dir, addr string) (*exec.Cmd, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	keyFile := filepath.Join(dir, "app.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(),
		"PHASEGATE_ADDR="+addr,
		"PHASEGATE_WEBHOOK_SECRET=flood-test-secret",
		"PHASEGATE_APP_ID=1",
		"PHASEGATE_PRIVATE_KEY_FILE="+keyFile,
		"PHASEGATE_GITHUB_API_URL=http://127.0.0.1:9/", // nothing answers: never ready, never calls GitHub
		"PHASEGATE_RECONCILE_EVERY=0",
	)
	cmd.Env = append(cmd.Env, env...)
	logs, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return nil, err
	}
	defer logs.Close() // the started process has its own descriptor
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	return cmd, nil
}

// round r posts conns deliveries at once, counts their answers, and prints
// the server's memory after them.
func round(ctx context.Context, client *http.Client, url string, r, conns int, size int64, sig string, chunked bool, pid int, answers map[string]int) error {
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := post(ctx, client, url, size, sig, chunked, fmt.Sprintf("flood-%d-%d", r, i))
			mu.Lock()
			answers[a]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	m, err := memory(pid)
	if err != nil {
		return err
	}
	fmt.Printf("round %d: %s; VmHWM %s, VmRSS %s\n", r, time.Since(start).Round(time.Millisecond), mib(m.hwm), mib(m.rss))
	if ctx.Err() != nil {
		return fmt.Errorf("stopped after round %d: %w", r, ctx.Err())
	}
	return nil
}

// post sends one body and returns "<status>" or "error: <kind>".
func post(ctx context.Context, client *http.Client, url string, size int64, sig string, chunked bool, id string) string {
	body := io.LimitReader(filler{}, size)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, body)
	if err != nil {
		return "error: " + err.Error()
	}
	req.ContentLength = size
	if chunked {
		req.ContentLength = -1 // Transfer-Encoding: chunked
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "issue_comment")
	req.Header.Set("X-GitHub-Delivery", id)
	if sig == "forged" {
		req.Header.Set("X-Hub-Signature-256", "sha256="+strings.Repeat("0f", 32))
	}
	resp, err := client.Do(req)
	if err != nil {
		// The server may answer and close before the body is all sent.
		var op *net.OpError
		if errors.As(err, &op) {
			return "error: " + op.Op
		}
		return "error: transport"
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	return strconv.Itoa(resp.StatusCode)
}

// filler is an endless JSON-ish byte stream (no allocation per request).
type filler struct{}

func (filler) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

type mem struct{ hwm, rss int64 } // bytes

// memory reads VmHWM and VmRSS of pid.
func memory(pid int) (mem, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return mem{}, fmt.Errorf("reading the server's memory: %w", err)
	}
	defer f.Close()
	var m mem
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || (name != "VmHWM" && name != "VmRSS") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil {
			return mem{}, fmt.Errorf("parsing %s: %w", name, err)
		}
		if name == "VmHWM" {
			m.hwm = kb << 10
		} else {
			m.rss = kb << 10
		}
	}
	if m.hwm == 0 {
		return mem{}, errors.New("no VmHWM in /proc/<pid>/status")
	}
	return m, sc.Err()
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func freeLoopback() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitListening polls /healthz until the server answers.
func waitListening(ctx context.Context, url string) error {
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the server never answered %s: %w", url, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
