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

	"github.com/phasegate/phasegate/internal/ghfake"
)

// BenchmarkWebhookAccept measures the acknowledgement of a signed 20 KB
// issue_comment delivery holding a command, through the handler (no
// network): verify, parse, deduplicate, enqueue; workers drain the queue
// with a decider that does nothing. The load and soak benchmarks over
// loopback live in bench/.
func BenchmarkWebhookAccept(b *testing.B) {
	h := newHarness(b, func(c *Config) {
		c.Logger = slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
		c.QueueSize = 1 << 16
		c.Identity = appBot
	})
	h.srv.onJobDone = nil
	h.start()
	h.waitReady()
	defer h.stop()
	text := "Looks complete to me.\n/resolve D-001 approve\n\n" + strings.Repeat("Some discussion of the outcome, quoted at length. ", 400)
	body := commentEvent("created", 5, 99, "alice", "alice", text)
	sig := ghfake.SignWebhook(testSecret, body)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	var seq atomic.Int64
	var refused atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-GitHub-Event", "issue_comment")
			req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("bench-%d", seq.Add(1)))
			req.Header.Set("X-Hub-Signature-256", sig)
			rec := httptest.NewRecorder()
			h.srv.Handler().ServeHTTP(rec, req)
			if rec.Code != http.StatusAccepted {
				refused.Add(1)
			}
		}
	})
	b.StopTimer()
	if n := refused.Load(); n > 0 {
		b.ReportMetric(float64(n), "refused")
	}
}
