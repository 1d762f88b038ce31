package app

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/phasegate/phasegate/internal/ghfake"
)

// serveProc is one `phasegate serve` process on a loopback port.
type serveProc struct {
	name    string
	url     string // http://127.0.0.1:port
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	client  *http.Client
}

// startServe runs argv (a phasegate binary and "serve", or a program that
// runs serve) with env added to this process's environment (minus any
// PHASEGATE_* variable of its own), logging to dir/<name>.log, and waits
// until /readyz answers 200.
func startServe(ctx context.Context, argv, env []string, dir, name string) (*serveProc, error) {
	var last error
	for range 3 { // a free port can be taken before the child binds it
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		p, err := tryServe(ctx, argv, append(env, "PHASEGATE_ADDR="+addr), addr, dir, name)
		if err == nil {
			return p, nil
		}
		last = err
	}
	return nil, last
}

func tryServe(ctx context.Context, argv, env []string, addr, dir, name string) (*serveProc, error) {
	logPath := filepath.Join(dir, name+".log")
	logs, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", logPath, err)
	}
	defer logs.Close() // the child has its own descriptor
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(ownEnv(), env...)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	p := &serveProc{name: name, url: "http://" + addr, cmd: cmd, logPath: logPath, exited: make(chan struct{}),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: time.Minute}}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	deadline := time.Now().Add(time.Minute)
	for {
		select {
		case <-p.exited:
			return nil, fmt.Errorf("serve %s exited before it was ready:\n%s", name, p.logTail())
		case <-ctx.Done():
			p.kill()
			return nil, ctx.Err()
		default:
		}
		if resp, err := p.client.Get(p.url + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		if time.Now().After(deadline) {
			p.kill()
			return nil, fmt.Errorf("serve %s never ready:\n%s", name, p.logTail())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ownEnv is this process's environment without PHASEGATE_* variables.
func ownEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PHASEGATE_") {
			out = append(out, kv)
		}
	}
	return out
}

// send posts a signed delivery and returns the answer's status and body.
func (p *serveProc) send(ctx context.Context, event, id string, body []byte) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url+"/webhook", bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("X-Hub-Signature-256", ghfake.SignWebhook(Secret, body))
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("delivering %s to %s: %w", id, p.name, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, strings.TrimSpace(string(b)), nil
}

// metric sums the samples of the metric name on /metrics.
func (p *serveProc) metric(name string) (float64, error) {
	resp, err := p.client.Get(p.url + "/metrics")
	if err != nil {
		return 0, fmt.Errorf("reading the metrics of %s: %w", p.name, err)
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		rest := line[len(name):]
		if rest == "" || (rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			sum += v
		}
	}
	return sum, sc.Err()
}

// peakRSS is the process's VmHWM in bytes.
func (p *serveProc) peakRSS() (int64, error) {
	return vmHWM(p.cmd.Process.Pid)
}

// stop ends the process gracefully (SIGTERM), or kills it after 30 s.
func (p *serveProc) stop() error {
	select {
	case <-p.exited:
		return fmt.Errorf("serve %s had exited:\n%s", p.name, p.logTail())
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(30 * time.Second):
		p.kill()
		return fmt.Errorf("serve %s did not stop on SIGTERM", p.name)
	}
}

func (p *serveProc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// logTail is the end of the process's log.
func (p *serveProc) logTail() string {
	b, _ := os.ReadFile(p.logPath)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// vmHWM reads the peak resident set size of pid from /proc (Linux).
func vmHWM(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the peak RSS of %d: %w", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parsing VmHWM %q: %w", rest, err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("no VmHWM in /proc/<pid>/status")
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// ErrNoRedis is Burst's error when a Redis run was asked for and
// redis-server is not on PATH.
var ErrNoRedis = errors.New("redis-server is not on PATH")

// redisProc is a private redis-server: loopback, no persistence.
type redisProc struct {
	addr   string
	cmd    *exec.Cmd
	exited chan struct{}
}

func startRedis(dir string) (*redisProc, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNoRedis
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	rdir := filepath.Join(dir, "redis")
	if err := os.MkdirAll(rdir, 0o700); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", rdir, "--daemonize", "no", "--loglevel", "warning")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting redis-server: %w", err)
	}
	r := &redisProc{addr: addr, cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(r.exited)
	}()
	for deadline := time.Now().Add(30 * time.Second); !r.pong(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			r.stop()
			return nil, fmt.Errorf("redis-server on %s did not answer PING", addr)
		}
	}
	return r, nil
}

// pong sends PING and reports whether +PONG came back.
func (r *redisProc) pong() bool {
	c, err := net.DialTimeout("tcp", r.addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

func (r *redisProc) url() string { return "redis://" + r.addr + "/0" }

func (r *redisProc) stop() {
	_ = r.cmd.Process.Kill()
	<-r.exited
}
