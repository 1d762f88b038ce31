package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/phasegate/phasegate/internal/ghfake"
)

// Load is one load run: Conns client goroutines, each with its own
// keep-alive connection, POST signed deliveries back to back (closed loop)
// until Duration has passed or Count deliveries were sent, whichever comes
// first. At least one of Duration and Count must be set.
type Load struct {
	URL      string // must be a loopback address
	Secret   []byte // default Secret
	Conns    int    // default 8
	Duration time.Duration
	Count    int64
	// Size is the payload size in bytes (default 20 KB).
	Size int
	// Bodies is how many distinct payloads (issues and comment ids) are
	// cycled through (default 16); each is signed once.
	Bodies int
	// UniqueComments gives every delivery its own comment id (in the
	// comment's "id" and "html_url"), signing each as it is sent, so that a
	// server deduplicating by what the body identifies sees no repeats.
	// Ids come from a counter shared by every Run of the process.
	UniqueComments bool
	// Prefix starts every X-GitHub-Delivery id (default "load-<unix nanos>").
	Prefix string
	// Progress, if set, counts the answers as they come (for the soak).
	Progress *atomic.Int64
	// Rate, if positive, paces the load (open loop): deliveries are
	// scheduled at Rate per second and each latency is measured from its
	// scheduled time, so a stall is not hidden by the senders waiting
	// (coordinated omission). Conns bounds the requests in flight. Zero: a
	// closed loop, each connection sending back to back.
	Rate float64
}

// Result is what a Load measured.
type Result struct {
	Conns     int
	Offered   float64 // Load.Rate; 0 for a closed loop
	Size      int     // payload bytes
	Sent      int64
	Elapsed   time.Duration
	Codes     map[int]int64 // HTTP status → count
	Errors    int64         // transport errors (no answer)
	FirstErr  error
	latencies hist
}

// Rate is acknowledged (2xx) deliveries per second.
func (r Result) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.OK()) / r.Elapsed.Seconds()
}

// OK is the number of 2xx answers.
func (r Result) OK() int64 {
	var n int64
	for c, k := range r.Codes {
		if c >= 200 && c < 300 {
			n += k
		}
	}
	return n
}

// Non2xx is the number of answers other than 2xx.
func (r Result) Non2xx() int64 { return r.latencies.count() - r.OK() }

// Quantile is the q quantile (0..1) of the latencies of the answered
// requests (time from sending the request to reading the whole answer),
// within about 1 %.
func (r Result) Quantile(q float64) time.Duration { return r.latencies.quantile(q) }

// Max is the largest latency (exact).
func (r Result) Max() time.Duration { return time.Duration(r.latencies.max) }

// Run runs the load. It refuses non-loopback URLs.
func Run(ctx context.Context, l Load) (Result, error) {
	if err := l.check(); err != nil {
		return Result{}, err
	}
	l.defaults()
	bodies := make([]signed, l.Bodies)
	for i := range bodies {
		id := 9_000_000 + int64(i)
		if l.UniqueComments {
			id = uniqueBase + int64(i)
		}
		b := Payload(100+i, id, l.Size)
		bodies[i] = signed{b, ghfake.SignWebhook(l.Secret, b), []byte(strconv.FormatInt(id, 10))}
	}
	tr := &http.Transport{
		MaxIdleConns:        l.Conns,
		MaxIdleConnsPerHost: l.Conns,
		MaxConnsPerHost:     l.Conns,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
	}
	defer tr.CloseIdleConnections()

	if l.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, l.Duration)
		defer cancel()
	}
	ld := &loader{
		l:      l,
		client: &http.Client{Transport: tr, Timeout: 30 * time.Second},
		bodies: bodies,
		res:    Result{Conns: l.Conns, Offered: l.Rate, Size: len(bodies[0].body), Codes: map[int]int64{}},
	}
	start := time.Now()
	if l.Rate > 0 {
		ld.sched = make(chan time.Time, 1<<16)
		go pace(ctx, ld.sched, start, l.Rate, l.Count)
	}
	var wg sync.WaitGroup
	for c := 0; c < l.Conns; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ld.conn(ctx)
		}()
	}
	wg.Wait()
	res := ld.res
	res.Elapsed = time.Since(start)
	res.Errors = ld.errCount.Load()
	res.Sent = res.latencies.count() + res.Errors
	return res, nil
}

// check refuses a load that is not against loopback or has no end.
func (l *Load) check() error {
	u, err := url.Parse(l.URL)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s is not a loopback address", u.Host)
	}
	if l.Duration <= 0 && l.Count <= 0 {
		return errors.New("a load needs a duration or a count")
	}
	return nil
}

// defaults fills in what the load leaves unset.
func (l *Load) defaults() {
	if l.Secret == nil {
		l.Secret = Secret
	}
	if l.Conns <= 0 {
		l.Conns = 8
	}
	if l.Size <= 0 {
		l.Size = 20 << 10
	}
	if l.Bodies <= 0 {
		l.Bodies = 16
	}
	if l.Prefix == "" {
		l.Prefix = "load-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	}
}

// signed is a payload, its signature and its comment id.
type signed struct {
	body []byte
	sig  string
	id   []byte
}

// uniqueBase is the first comment id of UniqueComments: ten digits, like
// every id after it (up to 999,999,999 deliveries), so the payload size does
// not change.
const uniqueBase = 9_000_000_000

// commentSeq numbers the deliveries of UniqueComments across runs.
var commentSeq atomic.Int64

// unique is b with a fresh comment id, signed.
func (b signed) unique(secret []byte) signed {
	id := []byte(strconv.FormatInt(uniqueBase+commentSeq.Add(1)%999_999_999, 10))
	body := bytes.ReplaceAll(b.body, b.id, id)
	return signed{body, ghfake.SignWebhook(secret, body), id}
}

// loader is a running load, shared by its connections.
type loader struct {
	l        Load
	client   *http.Client
	bodies   []signed
	sched    chan time.Time // with a Rate, when each delivery is due
	seq      atomic.Int64   // deliveries taken
	errCount atomic.Int64
	mu       sync.Mutex // guards res
	res      Result
}

// conn sends deliveries on one connection until the load ends, then adds
// what it measured to the result.
func (ld *loader) conn(ctx context.Context) {
	var h hist
	codes := map[int]int64{}
	var firstErr error
	for ctx.Err() == nil {
		var due time.Time
		if ld.sched != nil {
			var ok bool
			if due, ok = <-ld.sched; !ok {
				break
			}
		}
		n := ld.seq.Add(1)
		if ld.l.Count > 0 && n > ld.l.Count {
			break
		}
		code, d, err := ld.send(ctx, n, due)
		if err != nil {
			if ctx.Err() != nil { // cut off by the end of the run: not an error
				break
			}
			ld.errCount.Add(1)
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		h.add(d)
		codes[code]++
		if ld.l.Progress != nil {
			ld.l.Progress.Add(1)
		}
	}
	ld.mu.Lock()
	defer ld.mu.Unlock()
	ld.res.latencies.merge(&h)
	for c, k := range codes {
		ld.res.Codes[c] += k
	}
	if ld.res.FirstErr == nil {
		ld.res.FirstErr = firstErr
	}
}

// send posts delivery n and returns its status code and latency, measured
// from due if it is set.
func (ld *loader) send(ctx context.Context, n int64, due time.Time) (int, time.Duration, error) {
	b := ld.bodies[int(n)%len(ld.bodies)]
	if ld.l.UniqueComments {
		b = b.unique(ld.l.Secret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ld.l.URL, bytes.NewReader(b.body))
	if err != nil {
		panic(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "GitHub-Hookshot/phasegate-bench")
	req.Header.Set("X-GitHub-Event", "issue_comment")
	req.Header.Set("X-GitHub-Delivery", ld.l.Prefix+"-"+strconv.FormatInt(n, 10))
	req.Header.Set("X-GitHub-Hook-Installation-Target-Type", "integration")
	req.Header.Set("X-Hub-Signature-256", b.sig)
	t0 := time.Now()
	if !due.IsZero() {
		t0 = due
	}
	resp, err := ld.client.Do(req)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if err != nil {
		return 0, 0, err
	}
	return resp.StatusCode, time.Since(t0), nil
}

// pace sends the scheduled times of a load at rate per second, waking every
// millisecond, until ctx ends or count were scheduled; then it closes ch.
func pace(ctx context.Context, ch chan<- time.Time, start time.Time, rate float64, count int64) {
	defer close(ch)
	interval := time.Duration(float64(time.Second) / rate)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	var i int64
	for {
		for now := time.Now(); ; i++ {
			if count > 0 && i >= count {
				return
			}
			due := start.Add(time.Duration(i) * interval)
			if due.After(now) {
				break
			}
			select {
			case ch <- due:
			case <-ctx.Done():
				return
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// CodesString renders the status counts, "202:1234 503:5".
func (r Result) CodesString() string {
	cs := make([]int, 0, len(r.Codes))
	for c := range r.Codes {
		cs = append(cs, c)
	}
	sort.Ints(cs)
	s := ""
	for i, c := range cs {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%d:%d", c, r.Codes[c])
	}
	return s
}

// TableHeader and Row render results as a Markdown table.
const TableHeader = "| conns | rate | payload | duration | answered | deliveries/s (2xx) | p50 | p99 | max | non-2xx | errors |\n" +
	"| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"

// Row is the result as a row of TableHeader.
func (r Result) Row() string {
	rate := "closed loop"
	if r.Offered > 0 {
		rate = fmt.Sprintf("%.0f/s paced", r.Offered)
	}
	return fmt.Sprintf("| %d | %s | %d B | %.1f s | %d | %.0f | %s | %s | %s | %d | %d |",
		r.Conns, rate, r.Size, r.Elapsed.Seconds(), r.latencies.count(), r.Rate(),
		ms(r.Quantile(0.50)), ms(r.Quantile(0.99)), ms(r.Max()), r.Non2xx(), r.Errors)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// hist is a log-linear latency histogram in nanoseconds: exact below 64 ns,
// then 64 buckets per power of two (≤ 1.6 % error). Its size is fixed, so a
// long soak does not grow the heap it measures.
type hist struct {
	b   [64 + 58*64]int64
	n   int64
	max int64
}

func bucket(v int64) int {
	if v < 64 {
		if v < 0 {
			return 0
		}
		return int(v)
	}
	e := bits.Len64(uint64(v)) - 7 // v>>e is in [64, 128)
	return 64 + e*64 + int(v>>e) - 64
}

// lower is the smallest value of bucket i; mid the middle of it.
func mid(i int) int64 {
	if i < 64 {
		return int64(i)
	}
	e := (i - 64) / 64
	m := int64((i-64)%64 + 64)
	return m<<e + (int64(1)<<e)/2
}

func (h *hist) add(d time.Duration) {
	v := int64(d)
	h.b[bucket(v)]++
	h.n++
	if v > h.max {
		h.max = v
	}
}

func (h *hist) merge(o *hist) {
	for i, k := range o.b {
		h.b[i] += k
	}
	h.n += o.n
	if o.max > h.max {
		h.max = o.max
	}
}

func (h *hist) count() int64 { return h.n }

func (h *hist) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := int64(q*float64(h.n-1)) + 1
	var seen int64
	for i, k := range h.b {
		seen += k
		if seen >= rank {
			v := mid(i)
			if v > h.max {
				v = h.max
			}
			return time.Duration(v)
		}
	}
	return time.Duration(h.max)
}
