package redisx

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/phasegate/phasegate/internal/redisx/redistest"
)

// quietOnce keeps go-redis's dial errors (expected here) out of the output.
var quietOnce sync.Once

// server is a redis-server for one test (redistest), with helpers for
// opening replicas on it: a database of the package's shared server
// (startRedis), or a server of the test's own (startOwnRedis).
type server struct {
	*redistest.Server
	addr string
	db   int
}

// shared is the redis-server most of the package's tests share, each in a
// database of its own (dbs): 20 servers started for 20 tests were half of
// the package's CPU under -race. Started by the first test that needs it,
// killed by TestMain.
var shared struct {
	once sync.Once
	srv  *redistest.Server
	dir  string
	err  error
	dbs  chan int // the free databases
}

// startRedis gives the test a database of its own on the shared
// redis-server, emptied and given back in t.Cleanup. A test that kills or
// restarts its server uses startOwnRedis.
func startRedis(t *testing.T) *server {
	t.Helper()
	quietOnce.Do(func() { SetLogger(slog.New(slog.DiscardHandler)) })
	bin := redistest.Binary(t)
	shared.once.Do(func() {
		if shared.dir, shared.err = os.MkdirTemp("", "redisx-test-"); shared.err != nil {
			return
		}
		shared.srv, shared.err = redistest.StartShared(bin, shared.dir)
		shared.dbs = make(chan int, redistest.Databases)
		for db := 1; db < redistest.Databases; db++ {
			shared.dbs <- db
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	s := &server{Server: shared.srv, addr: shared.srv.Addr()}
	select {
	case s.db = <-shared.dbs:
	case <-time.After(guard):
		t.Fatal("no free database on the shared redis-server")
	}
	c := s.client(t)
	t.Cleanup(func() {
		// The test's clients are closed (cleanups run last first): the
		// database goes back empty.
		if err := c.FlushDB(context.Background()).Err(); err != nil {
			t.Errorf("emptying database %d: %v", s.db, err)
			return
		}
		shared.dbs <- s.db
	})
	return s
}

// guard bounds a wait that should never be long.
const guard = 30 * time.Second

// startOwnRedis starts a private redis-server for a test that kills it,
// stopped in t.Cleanup.
func startOwnRedis(t *testing.T) *server {
	t.Helper()
	quietOnce.Do(func() { SetLogger(slog.New(slog.DiscardHandler)) })
	s := redistest.Start(t)
	return &server{Server: s, addr: s.Addr()}
}

// stopShared kills the shared redis-server, if a test started it.
func stopShared() {
	if shared.srv != nil {
		shared.srv.Kill()
	}
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
	}
}

// URL is the redis:// URL of the test's database.
func (s *server) URL() string { return "redis://" + s.addr + "/" + strconv.Itoa(s.db) }

// client is a plain client for inspecting the test's keys, closed in
// t.Cleanup.
func (s *server) client(t *testing.T) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.addr, DB: s.db, MaxRetries: -1})
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

func freePort() (int, error) { return redistest.FreePort() }

// testCtx is a generous deadline for one test, so that a hang fails rather
// than blocks; no test depends on its length.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// isCtxErr reports whether err is a ctx ending rather than anything else.
func isCtxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
