package redisx

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// lockedBuffer is a log destination safe for the goroutines go-redis logs
// from.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestLogToKeepsTheLogJSON: what go-redis itself logs reaches the JSON log
// as records, and nothing else is written there. Not parallel: go-redis's
// logger is the process's, so no other test runs while it is swapped.
func TestLogToKeepsTheLogJSON(t *testing.T) {
	var out lockedBuffer
	LogTo(slog.New(slog.NewJSONHandler(&out, nil)))
	t.Cleanup(func() { redis.SetLogger(quiet{}) })

	// A lease under a millisecond is truncated, and go-redis says so
	// through its logger; the command itself fails (nothing listens).
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer rdb.Close()
	_ = rdb.Set(context.Background(), "k", "v", time.Microsecond).Err()

	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	found := false
	for _, line := range lines {
		var rec struct {
			Level, Msg, Component string
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a line of the log is not JSON: %q (%v)", line, err)
		}
		found = found || (rec.Level == "WARN" && rec.Component == "go-redis" && strings.Contains(rec.Msg, "truncating to 1ms"))
	}
	if !found {
		t.Errorf("go-redis's truncation warning is not in the JSON log:\n%s", out.String())
	}
}
