package redisx

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/phasegate/phasegate/internal/testutil/redistest"
)

// quietOnce keeps go-redis's dial errors (expected here) out of the output.
var quietOnce sync.Once

// quiet is go-redis's logger, saying nothing.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// server is a redis-server for one test (redistest), with helpers for
// opening replicas on it: a database of the binary's shared server
// (startRedis), or a server of the test's own (startOwnRedis).
type server struct {
	*redistest.Server // nil for a database of the shared server
	addr              string
	url               string
	client            func(t *testing.T) *redis.Client
}

// startRedis gives the test a database of its own on the shared
// redis-server (redistest.SharedDB), emptied and given back in t.Cleanup:
// the 22 servers started, one for each test, were half the package's CPU
// under -race. A test that kills its server uses startOwnRedis.
func startRedis(t *testing.T) *server {
	t.Helper()
	quietOnce.Do(func() { redis.SetLogger(quiet{}) })
	db := redistest.SharedDB(t)
	return &server{addr: db.Addr, url: db.URL(), client: func(t *testing.T) *redis.Client { return db.Client(t) }}
}

// startOwnRedis starts a private redis-server for a test that kills it,
// stopped in t.Cleanup.
func startOwnRedis(t *testing.T) *server {
	t.Helper()
	quietOnce.Do(func() { redis.SetLogger(quiet{}) })
	s := redistest.Start(t)
	return &server{Server: s, addr: s.Addr(), url: s.URL(), client: func(t *testing.T) *redis.Client { return s.Client(t) }}
}

// URL is the redis:// URL of the test's database.
func (s *server) URL() string { return s.url }

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
