package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/ghfake"
)

func TestPayload(t *testing.T) {
	b := Payload(7, 42, 20<<10)
	if len(b) < 20<<10 || len(b) > 21<<10 {
		t.Fatalf("payload is %d bytes, want about 20 KB", len(b))
	}
	var p struct {
		Action  string
		Comment struct{ Body string }
		Issue   struct{ Number int }
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if p.Action != "created" || p.Issue.Number != 7 || !strings.Contains(p.Comment.Body, "\n/resolve D-001 approve\n") {
		t.Fatalf("unexpected payload: action %q issue %d", p.Action, p.Issue.Number)
	}
}

func TestHistQuantiles(t *testing.T) {
	var h hist
	for i := 1; i <= 1000; i++ {
		h.add(time.Duration(i) * time.Microsecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 500 * time.Microsecond}, {0.99, 990 * time.Microsecond}, {1, time.Millisecond}} {
		got := h.quantile(c.q)
		if d := got - c.want; d < -c.want/50 || d > c.want/50 {
			t.Errorf("q%.2f = %s, want %s ± 2 %%", c.q, got, c.want)
		}
	}
	if h.max != int64(time.Millisecond) || h.count() != 1000 {
		t.Errorf("max %d count %d", h.max, h.count())
	}
}

func TestRefusesNonLoopback(t *testing.T) {
	if _, err := Run(context.Background(), Load{URL: "http://192.0.2.1/webhook", Count: 1}); err == nil {
		t.Fatal("a non-loopback URL was accepted")
	}
}

// TestShortLoad runs 2 s of load and checks only logical outcomes: every
// delivery answered 202, no transport error, each delivery handled once. It
// asserts nothing about time.
func TestShortLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback load")
	}
	e, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	r, err := Run(context.Background(), Load{URL: e.URL, Conns: 8, Duration: 2 * time.Second, UniqueComments: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s\n%s", TableHeader, r.Row())
	if r.Errors != 0 {
		t.Errorf("%d transport errors, first: %v", r.Errors, r.FirstErr)
	}
	if r.OK() == 0 || r.Codes[http.StatusAccepted] != r.OK() || r.Non2xx() != 0 {
		t.Errorf("answers %s, want only 202", r.CodesString())
	}

	// Paced (open loop): exactly Count deliveries, all acknowledged.
	rp, err := Run(context.Background(), Load{URL: e.URL, Conns: 4, Rate: 1000, Count: 200, UniqueComments: true})
	if err != nil {
		t.Fatal(err)
	}
	if rp.Codes[http.StatusAccepted] != 200 || rp.Non2xx() != 0 || rp.Errors != 0 {
		t.Errorf("paced: answers %s, %d errors (first %v); want 202:200", rp.CodesString(), rp.Errors, rp.FirstErr)
	}

	// A replayed delivery id is acknowledged as a duplicate (200), not queued again.
	r2, err := Run(context.Background(), Load{URL: e.URL, Conns: 2, Count: 10, Prefix: "replay", UniqueComments: true})
	if err != nil {
		t.Fatal(err)
	}
	r3, err := Run(context.Background(), Load{URL: e.URL, Conns: 2, Count: 10, Prefix: "replay"})
	if err != nil {
		t.Fatal(err)
	}
	if r2.Codes[http.StatusAccepted] != 10 || r3.Codes[http.StatusOK] != 10 {
		t.Errorf("first pass %s, replay %s; want 202:10 then 200:10", r2.CodesString(), r3.CodesString())
	}
}

// BenchmarkServeLoopback sends b.N signed 20 KB issue_comment deliveries
// over loopback from 32 connections; ns/op is the inverse of the
// throughput, and p50/p99 are reported as metrics.
func BenchmarkServeLoopback(b *testing.B) {
	e, err := Start(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	b.SetBytes(int64(len(Payload(100, 9_000_000, 20<<10))))
	b.ResetTimer()
	r, err := Run(context.Background(), Load{URL: e.URL, Conns: 32, Count: int64(b.N), UniqueComments: true})
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if r.Errors != 0 || r.Non2xx() != 0 {
		b.Fatalf("answers %s, %d errors (first %v)", r.CodesString(), r.Errors, r.FirstErr)
	}
	b.ReportMetric(r.Rate(), "deliveries/s")
	b.ReportMetric(float64(r.Quantile(0.5).Microseconds()), "p50-µs")
	b.ReportMetric(float64(r.Quantile(0.99).Microseconds()), "p99-µs")
}

func TestUniqueComments(t *testing.T) {
	orig := signed{body: Payload(100, uniqueBase, 20<<10), id: []byte("9000000000")}
	orig.sig = ghfake.SignWebhook(Secret, orig.body)
	seen := map[int64]bool{}
	for i := 0; i < 3; i++ {
		u := orig.unique(Secret)
		if len(u.body) != len(orig.body) {
			t.Errorf("unique body is %d bytes, want %d", len(u.body), len(orig.body))
		}
		if u.sig != ghfake.SignWebhook(Secret, u.body) {
			t.Error("unique body is not signed with its own signature")
		}
		var p struct {
			Comment struct {
				ID      int64
				HTMLURL string `json:"html_url"`
			}
		}
		if err := json.Unmarshal(u.body, &p); err != nil {
			t.Fatal(err)
		}
		if string(u.id) != strconv.FormatInt(p.Comment.ID, 10) || !strings.HasSuffix(p.Comment.HTMLURL, "-"+string(u.id)) {
			t.Errorf("comment id %d, url %s; want both %s", p.Comment.ID, p.Comment.HTMLURL, u.id)
		}
		if seen[p.Comment.ID] || p.Comment.ID == uniqueBase {
			t.Errorf("comment id %d repeated", p.Comment.ID)
		}
		seen[p.Comment.ID] = true
	}
}
