package redisx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// requireRedisEnv makes a missing redis-server a failure rather than a skip.
// .ci/run sets it.
const requireRedisEnv = "PHASEGATE_REQUIRE_REDIS"

// quietOnce keeps go-redis's dial errors (expected here) out of the output.
var quietOnce sync.Once

// server is a private redis-server for one test, on a free loopback port,
// without persistence, in a temporary directory.
type server struct {
	t    *testing.T
	addr string
	cmd  *exec.Cmd
	out  *lockedBuffer

	mu     sync.Mutex
	exited chan struct{}
}

// startRedis starts a private redis-server and waits until it answers PING.
// It is stopped in t.Cleanup. Without redis-server on PATH the test is
// skipped, unless PHASEGATE_REQUIRE_REDIS is set.
func startRedis(t *testing.T) *server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv(requireRedisEnv) != "" {
			t.Fatalf("redis-server is not on PATH and %s is set: %v", requireRedisEnv, err)
		}
		t.Skipf("redis-server is not on PATH (install it, or set %s to make this a failure)", requireRedisEnv)
	}
	quietOnce.Do(func() { SetLogger(slog.New(slog.DiscardHandler)) })
	var last error
	// A free port can be taken between choosing and binding it: try again.
	for range 5 {
		s, err := tryStart(t, bin)
		if err == nil {
			return s
		}
		last = err
	}
	t.Fatalf("starting redis-server: %v", last)
	return nil
}

func tryStart(t *testing.T, bin string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir := t.TempDir()
	out := &lockedBuffer{}
	cmd := exec.Command(bin,
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", dir,
		"--daemonize", "no",
		"--loglevel", "warning",
	)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("running %s: %w", bin, err)
	}
	s := &server{t: t, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd, out: out, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(s.Kill)

	c := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return s, nil
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("redis-server exited: %s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			s.Kill()
			return nil, fmt.Errorf("redis-server on %s did not answer PING: %w\n%s", s.addr, err, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// URL is the server's redis:// URL.
func (s *server) URL() string { return "redis://" + s.addr + "/0" }

// Kill stops the server at once (SIGKILL, as a crash would) and waits for
// it to exit. It may be called more than once.
func (s *server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// client is a plain client for inspecting the server's keys.
func (s *server) client(t *testing.T) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// open opens a Store ("a replica") on the server, closed in t.Cleanup.
func (s *server) open(t *testing.T) *Store {
	t.Helper()
	st, err := Open(testCtx(t), s.URL())
	if err != nil {
		t.Fatalf("Open(%s): %v", s.URL(), err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// testCtx is a generous deadline for one test, so that a hang fails rather
// than blocks; no test depends on its length.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// isCtxErr reports whether err is a ctx ending rather than anything else.
func isCtxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
