package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/command"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghfake"
)

// Issue 20's attacks on serve's acknowledgement path.

// withUpdatedAt sets the comment's updated_at in an issue_comment body.
func withUpdatedAt(t *testing.T, body []byte, at string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	m["comment"].(map[string]any)["updated_at"] = at
	return mustJSON(m)
}

// TestRedTeamReplayedBody: a captured signed comment body re-sent with
// fresh X-GitHub-Delivery IDs (that header is not signed) is a duplicate:
// no job, no API call. An edit is news once per updated_at.
func TestRedTeamReplayedBody(t *testing.T) {
	t.Parallel()
	h := redTeamServe(t, "")
	id := h.command("alice", "/resolve D-001 approve")
	body := commentEvent("created", featureIssue, id, "alice", "alice", "/resolve D-001 approve")
	calls := len(h.fake.Calls())
	replay := func(name string, body []byte, n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			if code, answer := h.send(delivery{event: "issue_comment", body: body}); code != http.StatusOK || answer != "duplicate" {
				t.Fatalf("%s, replay %d: %d %q, want 200 duplicate", name, i, code, answer)
			}
		}
	}
	replay("created", body, 50)
	if n := len(h.fake.Calls()) - calls; n != 0 {
		t.Errorf("50 replays cost %d API calls", n)
	}
	if n := len(h.done); n != 0 {
		t.Errorf("%d jobs ran for the replays", n)
	}

	// phasegate's reply edited twice: each edit is checked once.
	reply := h.newest(appBot, "phasegate:")
	for _, at := range []string{"2026-01-01T00:00:00Z", "2026-01-01T00:05:00Z"} {
		edit := withUpdatedAt(t, commentEvent("edited", featureIssue, reply.ID, appBot, "mallory", reply.Body+" (edited)"), at)
		if code, answer := h.send(delivery{event: "issue_comment", body: edit}); code != http.StatusAccepted {
			t.Fatalf("edit at %s: %d %q", at, code, answer)
		}
		if d := h.waitJobs(1)[0]; d.kind != kindTamper {
			t.Fatalf("edit at %s: job %+v", at, d)
		}
		calls = len(h.fake.Calls())
		replay("edited at "+at, edit, 10)
		if n := len(h.fake.Calls()) - calls; n != 0 {
			t.Errorf("edit at %s: 10 replays cost %d API calls", at, n)
		}
	}
}

func TestCommentReplayKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		repo            string
		id              int64
		action, updated string
		want            string
	}{
		{"created", "Acme/Widgets", 7, "created", "2026-01-01T00:00:00Z", "comment acme/widgets 7 created"},
		{"deleted", "acme/widgets", 7, "deleted", "", "comment acme/widgets 7 deleted"},
		{"edited", "acme/widgets", 7, "edited", "2026-01-01T00:00:00Z", "comment acme/widgets 7 edited 2026-01-01T00:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := commentReplayKey(tt.repo, tt.id, tt.action, tt.updated)
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if validDelivery(got) {
				t.Errorf("%q could be a delivery ID", got)
			}
		})
	}
}

// slowSender opens a connection to addr that declares a body of length
// bytes under a well-formed wrong signature, and sends one byte of it.
func slowSender(t *testing.T, addr string, length int64, id string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(guard))
	fmt.Fprintf(conn, "POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"+
		"X-GitHub-Event: issue_comment\r\nX-GitHub-Delivery: %s\r\nX-Hub-Signature-256: sha256=%s\r\n\r\n{", length, id, strings.Repeat("0f", 32))
	return conn
}

// listen serves h on a loopback port until the test ends.
func listen(t *testing.T, h *harness) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-served })
	return ln.Addr().String()
}

// TestRedTeamSlowSenders: three connections that declare 25 + 25 + 14 MiB
// (the whole default budget) with a wrong signature and send one byte hold
// only what they sent (a chunk each), so a real delivery is answered 202
// while they hold their connections; a sender slower than the minimum rate
// after its grace is cut.
func TestRedTeamSlowSenders(t *testing.T) {
	t.Parallel()
	t.Run("real deliveries are answered while they hold", func(t *testing.T) {
		h := newHarness(t, func(c *Config) { c.bodyGrace, c.bodyReadTimeout = time.Minute, time.Minute })
		addr := listen(t, h)
		h.waitReady()
		for i, mib := range []int64{25, 25, 14} {
			slowSender(t, addr, mib<<20, fmt.Sprintf("slow-%d", i))
		}
		h.until("the three bodies are being read", func() bool { return h.srv.budget.inUse() == 3*bodyChunk })
		body := commentEvent("created", 5, 99, "alice", "alice", "/decisions")
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/webhook", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", "issue_comment")
		req.Header.Set("X-GitHub-Delivery", "real-1")
		req.Header.Set("X-Hub-Signature-256", ghfake.SignWebhook(testSecret, body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("a real delivery beside three slow senders: %d, want 202", resp.StatusCode)
		}
		if n := h.srv.budget.inUse(); n != 3*bodyChunk {
			t.Errorf("%d bytes reserved after the real delivery, want the slow senders' %d", n, 3*bodyChunk)
		}
	})
	t.Run("a sender under the minimum rate is cut", func(t *testing.T) {
		h := newHarness(t, func(c *Config) { c.bodyGrace, c.bodyReadTimeout = 50*time.Millisecond, time.Minute })
		addr := listen(t, h)
		conn := slowSender(t, addr, 25<<20, "slow-1")
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("no answer to a slow sender: %v", err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(answer), "too slowly") {
			t.Fatalf("answer %d %q, want 400 too slowly", resp.StatusCode, answer)
		}
		h.until("the reservation is given back", func() bool { return h.srv.budget.inUse() == 0 })
	})
}

// parsingDecider parses a comment as decide.HandleComment does before its
// first API call, so that a test sees the worker's parse.
type parsingDecider struct{ *fakeDecider }

func (p parsingDecider) HandleComment(ctx context.Context, gh decide.GitHub, ev decide.Event) (decide.Result, error) {
	command.Parse(ev.Comment.Body)
	return p.fakeDecider.HandleComment(ctx, gh, ev)
}

// heapBytes is the heap's live and not yet collected object bytes.
func heapBytes() uint64 {
	s := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	rtmetrics.Read(s)
	return s[0].Value.Uint64()
}

// TestRedTeamHeavyCommentsHeap: 50 parallel signed 64 KiB comments built
// to be heavy for the Markdown parser (a /resolve line, then prose with a
// '[' in every sixteen bytes: ~2.7 MB allocated by each full parse) are
// answered without rendering them, and parsed by at most Workers at once:
// the heap grows by far less than 50 parses' worth.
//
// 50 comments, not 100: as discriminating, for half the CPU (each is parsed
// once by a worker; 3.1 → 1.6 CPU-s under -race). The heap grows by
// 9-13 MiB here (4 parses in flight, whatever n); by 45-76 MiB when the
// acknowledgement path parses them, and by 56-81 MiB when all 50 are
// parsed at once (Workers = n), against a limit of 25 MiB. At 100 it was
// 11-14 and 62-164 MiB, against 40.
func TestRedTeamHeavyCommentsHeap(t *testing.T) {
	const n, workers = 50, 4
	dec := parsingDecider{&fakeDecider{}}
	h := newHarness(t, func(c *Config) {
		c.Workers, c.QueueSize = workers, 2*n
		c.NewDecider = func(DeciderOptions) Decider { return dec }
	})
	h.start()
	h.waitReady()
	text := "/resolve D-001 approve\n" + strings.Repeat("abcdefghijklmno[", 65000/16)
	reqs := make([]*http.Request, n)
	for i := range reqs {
		body := commentEvent("created", 5, int64(1000+i), "alice", "alice", text)
		reqs[i] = rawDelivery(fmt.Sprintf("heavy-%d", i), "issue_comment", bytes.NewReader(body), int64(len(body)), ghfake.SignWebhook(testSecret, body))
	}
	// Collect often, so that the heap measured is close to what is live
	// (the parses in flight), not garbage awaiting the collector. At 25 %
	// of a base heap of about 8-11 MiB, the garbage left is a few MiB (at
	// 10 %, a quarter more CPU under -race, all of it collecting).
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	runtime.GC()
	base := heapBytes()
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			peak.Store(max(peak.Load(), heapBytes()))
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	}()
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range reqs {
		wg.Add(1)
		go func() { defer wg.Done(); codes[i] = serve(h, reqs[i]).Code }()
	}
	wg.Wait()
	h.waitJobs(n)
	close(stop)
	<-sampled
	for i, c := range codes {
		if c != http.StatusAccepted {
			t.Fatalf("heavy comment %d: %d", i, c)
		}
	}
	grew := int64(peak.Load()) - int64(base)
	t.Logf("heap grew by at most %d MiB under %d parallel heavy comments (base %d MiB)", grew>>20, n, base>>20)
	if limit := int64(25 << 20); grew > limit { // bodies, their decoding, the queued jobs and a few parses (all rendered at once: 45-81 MiB)
		t.Errorf("the heap grew by %d MiB, want under %d MiB", grew>>20, limit>>20)
	}
}
