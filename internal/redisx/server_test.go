package redisx

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/phasegate/phasegate/internal/redisx/redistest"
)

// quietOnce keeps go-redis's dial errors (expected here) out of the output.
var quietOnce sync.Once

// server is a private redis-server for one test (redistest), with helpers
// for opening replicas on it.
type server struct {
	*redistest.Server
	addr string
}

// startRedis starts a private redis-server, stopped in t.Cleanup.
func startRedis(t *testing.T) *server {
	t.Helper()
	quietOnce.Do(func() { SetLogger(slog.New(slog.DiscardHandler)) })
	s := redistest.Start(t)
	return &server{Server: s, addr: s.Addr()}
}

// client is a plain client for inspecting the server's keys.
func (s *server) client(t *testing.T) *redis.Client { return s.Client(t) }

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
