// Package redistest runs private redis-server processes for tests, the way
// net/http/httptest runs HTTP servers: each on a free loopback port, without
// persistence, in a temporary directory, stopped when the test ends.
//
// A missing redis-server skips the test, unless PHASEGATE_REQUIRE_REDIS is
// set (.ci/run sets it, so CI fails instead of silently skipping).
package redistest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RequireEnv makes a missing redis-server a failure rather than a skip.
const RequireEnv = "PHASEGATE_REQUIRE_REDIS"

// Server is one private redis-server.
type Server struct {
	addr string
	cmd  *exec.Cmd
	out  *lockedBuffer

	mu     sync.Mutex
	exited chan struct{}
}

// Start starts a private redis-server and waits until it answers PING. It
// is killed in t.Cleanup. Without redis-server on PATH the test is skipped,
// unless RequireEnv is set.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("redis-server is not on PATH and %s is set: %v", RequireEnv, err)
		}
		t.Skipf("redis-server is not on PATH (install it, or set %s to make this a failure)", RequireEnv)
	}
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

func tryStart(t testing.TB, bin string) (*Server, error) {
	port, err := FreePort()
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
	s := &Server{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd, out: out, exited: make(chan struct{})}
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

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.addr }

// URL is the server's redis:// URL (database 0).
func (s *Server) URL() string { return "redis://" + s.addr + "/0" }

// Output is what the server printed.
func (s *Server) Output() string { return s.out.String() }

// Kill stops the server at once (SIGKILL, as a crash would) and waits for
// it to exit. It may be called more than once.
func (s *Server) Kill() {
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

// Client is a plain client for inspecting the server's keys, closed in
// t.Cleanup.
func (s *Server) Client(t testing.TB) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// FreePort is a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
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
