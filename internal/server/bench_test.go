package server

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/ghfake"
)

// BenchmarkWebhookAccept measures the acknowledgement of a signed 20 KB
// issue_comment delivery, through the handler (no network): verify,
// decode, deduplicate, enqueue; workers drain the queue with a decider
// that does nothing. "command" holds a /resolve line (202), "no_command"
// none (200 ignored). The load and soak benchmarks over loopback live in
// bench/.
func BenchmarkWebhookAccept(b *testing.B) {
	discussion := strings.Repeat("Some discussion of the outcome, quoted at length. ", 400)
	for _, bc := range []struct {
		name string
		text string
		want int
	}{
		{"command", "Looks complete to me.\n/resolve D-001 approve\n\n" + discussion, http.StatusAccepted},
		{"no_command", "Looks complete to me.\n\n" + discussion, http.StatusOK},
	} {
		b.Run(bc.name, func(b *testing.B) { benchWebhook(b, bc.text, bc.want) })
	}
}

const benchPool = 2048

func benchWebhook(b *testing.B, text string, want int) {
	h := newHarness(b, func(c *Config) {
		c.Logger = slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
		c.QueueSize = 1 << 16
		c.Identity = appBot
		// Room for half the pool's delivery and comment keys: a body comes
		// round again once its comment's key is forgotten.
		c.Seen = NewMemSeen(time.Hour, benchPool/2)
	})
	h.srv.onJobDone = nil
	h.start()
	h.waitReady()
	defer h.stop()
	// Distinct comments: one comment re-sent is a replay.
	bodies, sigs := make([][]byte, benchPool), make([]string, benchPool)
	for i := range bodies {
		bodies[i] = commentEvent("created", 5, int64(1000+i), "alice", "alice", text)
		sigs[i] = ghfake.SignWebhook(testSecret, bodies[i])
	}
	b.SetBytes(int64(len(bodies[0])))
	b.ReportAllocs()
	var seq atomic.Int64
	var refused atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := seq.Add(1)
			body, sig := bodies[n%benchPool], sigs[n%benchPool]
			req := httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-GitHub-Event", "issue_comment")
			req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("bench-%d", n))
			req.Header.Set("X-Hub-Signature-256", sig)
			rec := httptest.NewRecorder()
			h.srv.Handler().ServeHTTP(rec, req)
			if rec.Code != want {
				refused.Add(1)
			}
		}
	})
	b.StopTimer()
	if n := refused.Load(); n > 0 {
		b.ReportMetric(float64(n), "refused")
	}
}
