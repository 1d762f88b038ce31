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
	t    testing.TB
	bin  string
	addr string
	out  *lockedBuffer

	mu     sync.Mutex // guards cmd and exited, which Restart replaces
	cmd    *exec.Cmd
	exited chan struct{}
}

// Start starts a private redis-server and waits until it answers PING. It
// is killed in t.Cleanup. Without redis-server on PATH the test is skipped,
// unless RequireEnv is set.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := start(t, Binary(t), t.TempDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Kill)
	return s
}

// Binary is the path of redis-server. Without it on PATH the test is
// skipped, unless RequireEnv is set.
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("redis-server is not on PATH and %s is set: %v", RequireEnv, err)
		}
		t.Skipf("redis-server is not on PATH (install it, or set %s to make this a failure)", RequireEnv)
	}
	return bin
}

// start starts the redis-server bin for t (nil: a shared server, which no
// test owns) in a directory of dir on a free port.
func start(t testing.TB, bin string, dir func() string) (*Server, error) {
	var last error
	for range 5 { // a free port can be taken between choosing and binding it
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		s := &Server{t: t, bin: bin, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), out: &lockedBuffer{}}
		if last = s.run(dir()); last == nil {
			return s, nil
		}
	}
	return nil, fmt.Errorf("starting redis-server: %w", last)
}

// Databases is how many databases each server has (redis-server's default
// is 16): tests that share one server take one each (SharedDB).
const Databases = 64

// DB is one database of a redis-server.
type DB struct {
	Addr string // host:port
	N    int    // the database's number
}

// URL is the database's redis:// URL.
func (d DB) URL() string { return "redis://" + d.Addr + "/" + strconv.Itoa(d.N) }

// Client is a plain client of the database for inspecting its keys,
// closed in t.Cleanup.
func (d DB) Client(t testing.TB) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: d.Addr, DB: d.N, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// shared is the redis-server the tests of a binary share (SharedDB), each
// in a database of its own: starting a server costs more CPU under -race
// than most tests that use one (about 0.06 CPU-s).
var shared struct {
	mu  sync.Mutex
	srv *Server
	dir string
	dbs chan int // the free databases
}

// SharedDB is a database for t alone on the redis-server the binary's
// tests share, started by the first call; it is emptied and given back
// in t.Cleanup, after the cleanups registered later (the test's clients).
// A test that kills or restarts its server needs its own (Start). The
// binary's TestMain calls StopShared once its tests have run.
func SharedDB(t testing.TB) DB {
	t.Helper()
	bin := Binary(t)
	shared.mu.Lock()
	if shared.srv == nil {
		dir, err := os.MkdirTemp("", "redistest-")
		if err != nil {
			shared.mu.Unlock()
			t.Fatal(err)
		}
		s, err := start(nil, bin, func() string { return dir })
		if err != nil {
			_ = os.RemoveAll(dir)
			shared.mu.Unlock()
			t.Fatal(err)
		}
		shared.srv, shared.dir, shared.dbs = s, dir, make(chan int, Databases)
		for n := 1; n < Databases; n++ {
			shared.dbs <- n
		}
	}
	addr, dbs := shared.srv.Addr(), shared.dbs
	shared.mu.Unlock()
	d := DB{Addr: addr}
	select {
	case d.N = <-dbs:
	case <-time.After(30 * time.Second):
		t.Fatalf("no free database on the shared redis-server (%d)", Databases-1)
	}
	c := d.Client(t) // closed after the cleanup below
	t.Cleanup(func() {
		if err := c.FlushDB(context.Background()).Err(); err != nil {
			t.Errorf("emptying database %d of the shared redis-server: %v", d.N, err)
			return // not given back
		}
		dbs <- d.N
	})
	return d
}

// StopShared kills the shared redis-server of SharedDB, if a test started
// it.
func StopShared() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv != nil {
		shared.srv.Kill()
		_ = os.RemoveAll(shared.dir)
		shared.srv = nil
	}
}

// run starts the process on s.addr, in dir, and waits until it answers
// PING.
func (s *Server) run(dir string) error {
	_, port, _ := net.SplitHostPort(s.addr)
	out := s.out
	cmd := exec.Command(s.bin,
		"--port", port,
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", dir,
		"--daemonize", "no",
		"--loglevel", "warning",
		"--databases", strconv.Itoa(Databases),
	)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("running %s: %w", s.bin, err)
	}
	exited := make(chan struct{})
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()

	c := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("redis-server exited: %s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			s.Kill()
			return fmt.Errorf("redis-server on %s did not answer PING: %w\n%s", s.addr, err, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.addr }

// URL is the server's redis:// URL (database 0).
func (s *Server) URL() string { return "redis://" + s.addr + "/0" }

// Kill stops the server at once (SIGKILL, as a crash would) and waits for
// it to exit. It may be called more than once.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-exited:
		return
	default:
	}
	_ = cmd.Process.Kill()
	<-exited
}

// Restart starts the server again on the same address, empty (it keeps
// nothing: no persistence), after Kill; it fails the test when it cannot.
// Only a server of Start restarts (a shared one has no test to fail).
func (s *Server) Restart() {
	s.t.Helper()
	s.Kill()
	var err error
	for range 50 { // the port may linger for a moment
		if err = s.run(s.t.TempDir()); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("restarting redis-server on %s: %v", s.addr, err)
}

// Client is a plain client for inspecting the server's keys, closed in
// t.Cleanup.
func (s *Server) Client(t testing.TB) *redis.Client { return DB{Addr: s.addr}.Client(t) }

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
