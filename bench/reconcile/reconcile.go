package reconcile

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
)

// Options shape a run. The zero value is issue 20's busy repository.
type Options struct {
	Issues   int           // threads (default 200)
	Comments int           // comments per thread, the outcome included (default 300)
	Changed  int           // threads that get a new comment before each later pass (default 10)
	Passes   int           // later passes (default 4: one hour at the default interval)
	Interval time.Duration // between passes (default 15m, serve's --reconcile-every)
	Share    float64       // the reconcile budget's share of the hourly limit (default 0.2)
	Key      []byte        // the signing key (default none)
	// Baseline runs the pass as it was before issue 20: no fold memo, the
	// client's default cache.
	Baseline bool
	// Log, when set, gets a line per pass; with Routes, the charged
	// requests by route too.
	Log    io.Writer
	Routes bool
}

func (o Options) withDefaults() Options {
	if o.Issues <= 0 {
		o.Issues = 200
	}
	if o.Comments <= 0 {
		o.Comments = 300
	}
	if o.Changed <= 0 {
		o.Changed = 10
	}
	if o.Passes <= 0 {
		o.Passes = 4
	}
	if o.Interval <= 0 {
		o.Interval = 15 * time.Minute
	}
	if o.Share <= 0 {
		o.Share = 0.2
	}
	return o
}

// Pass is what one pass cost.
type Pass struct {
	N            int
	Changed      int           // threads changed since the previous pass
	Requests     int           // requests the fake answered
	NotModified  int           // of which 304 (free of the primary rate limit)
	Charged      int           // requests that cost primary rate limit
	ThreadReads  int           // threads whose comments were read
	Resolutions  int           // lost commands applied
	Took         time.Duration // wall time
	ByRoute      map[string]int
	ChargedRoute map[string]int
}

// Result is a run: the first pass (after a restart) and the later ones.
type Result struct {
	Options    Options
	Setup      time.Duration
	Passes     []Pass
	LostFound  bool // every lost command was applied in the pass after it
	RateLimit  int  // the fake's hourly limit
	HourlyRate int  // charged requests an hour at the interval, from the later passes' mean
	Budget     int  // Share × RateLimit
}

// Run builds the busy repository and runs the passes.
func Run(ctx context.Context, o Options) (Result, error) {
	o = o.withDefaults()
	res := Result{Options: o, RateLimit: ghfake.DefaultRateLimit}
	res.Budget = int(o.Share * float64(res.RateLimit))
	f := ghfake.New()
	defer f.Close()
	clock := ghfake.NewManualClock(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	f.SetClock(clock.Now)
	t0 := time.Now()
	if err := buildWorld(f, clock, o); err != nil {
		return res, err
	}
	copts := ghclient.Options{BaseURL: f.URL(), Token: Token, Now: clock.Now, Sleep: clock.Sleep}
	var marks *decide.Watermarks
	var memo *decide.FoldMemo
	handler := func() *decide.Handler {
		// serve builds a handler per repository pass; the watermarks and
		// the memo are the server's.
		return &decide.Handler{Key: o.Key, Identity: Identity, Now: clock.Now, Watermarks: marks, Memo: memo,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	}
	// The process before the restart: its pass brought every thread's
	// labels and statuses in line, as a server that ran for a while has.
	settle, err := ghclient.New(copts)
	if err != nil {
		return res, fmt.Errorf("building the client: %w", err)
	}
	if _, err := handler().ReconcileRepo(ctx, settle, Owner, Repo); err != nil {
		return res, fmt.Errorf("settling: %w", err)
	}
	res.Setup = time.Since(t0)
	if o.Log != nil {
		fmt.Fprintf(o.Log, "setup (fill the fake, settle every thread): %s\n", res.Setup.Round(time.Millisecond))
	}
	// The restarted process, an hour later (a fresh hour of rate limit): an
	// empty cache, no watermark, no memo.
	clock.Advance(time.Hour)
	gh, err := ghclient.New(copts)
	if err != nil {
		return res, fmt.Errorf("building the client: %w", err)
	}
	marks = &decide.Watermarks{}
	if !o.Baseline {
		memo = decide.NewFoldMemo(0)
	}
	res.LostFound = true
	for n := 0; n <= o.Passes; n++ {
		var lost []int64
		changed := 0
		if n > 0 {
			clock.Advance(o.Interval)
			lost, changed = changeThreads(f, clock, o, n)
		}
		f.ResetCalls()
		start := time.Now()
		r, err := handler().ReconcileRepo(ctx, gh, Owner, Repo)
		if err != nil {
			return res, fmt.Errorf("pass %d: %w", n, err)
		}
		p := tally(f.Calls(), n, changed)
		p.Took, p.Resolutions = time.Since(start), r.Resolutions
		for _, id := range lost {
			if !answered(f, id) {
				res.LostFound = false
			}
		}
		res.Passes = append(res.Passes, p)
		logPass(o, p)
	}
	res.HourlyRate = hourly(res.Passes[1:], o.Interval)
	return res, nil
}

// hourly is the charged requests an hour of passes like these at interval.
func hourly(later []Pass, interval time.Duration) int {
	sum := 0
	for _, p := range later {
		sum += p.Charged
	}
	return int(float64(sum) / float64(len(later)) * float64(time.Hour) / float64(interval))
}

func logPass(o Options, p Pass) {
	if o.Log == nil {
		return
	}
	fmt.Fprintf(o.Log, "pass %d: %d changed, %d requests (%d answered 304, %d charged), %d thread reads, %d resolutions, %s\n",
		p.N, p.Changed, p.Requests, p.NotModified, p.Charged, p.ThreadReads, p.Resolutions, p.Took.Round(time.Millisecond))
	if p.N > 0 && o.Routes {
		fmt.Fprintf(o.Log, "  charged by route: %v\n", p.ChargedRoute)
	}
}

// changeThreads adds a comment to o.Changed threads (a different set each
// pass); the first of them gets a /resolve whose delivery was lost. It
// returns the lost commands' ids.
func changeThreads(f *ghfake.Server, clock *ghfake.ManualClock, o Options, pass int) (lost []int64, changed int) {
	for i := 0; i < o.Changed; i++ {
		n := 1 + (pass*o.Changed+i)%o.Issues
		clock.Advance(time.Second)
		if i == 0 {
			lost = append(lost, f.AddComment(Owner, Repo, n, Approver, "/resolve D-001 approve"))
			continue
		}
		f.AddComment(Owner, Repo, n, "reviewer", chatter(n, 1000+pass))
	}
	return lost, o.Changed
}

// answered reports whether phasegate answered the command: a resolution
// or reply comment naming it.
func answered(f *ghfake.Server, id int64) bool {
	c, ok := f.Comment(id)
	if !ok {
		return false
	}
	for _, x := range f.Comments(Owner, Repo, c.Issue) {
		if x.User == Identity && x.ID > id && strings.Contains(x.Body, fmt.Sprintf("command=%d", id)) {
			return true
		}
	}
	return false
}

// tally counts one pass's calls.
func tally(calls []ghfake.Call, n, changed int) Pass {
	p := Pass{N: n, Changed: changed, ByRoute: map[string]int{}, ChargedRoute: map[string]int{}}
	threads := map[string]bool{}
	for _, c := range calls {
		p.Requests++
		r := c.Method + " " + route(c.Path)
		p.ByRoute[r]++
		if c.Status == 304 {
			p.NotModified++
		} else {
			p.Charged++
			p.ChargedRoute[r]++
		}
		if c.Method == "GET" && strings.HasSuffix(c.Path, "/comments") && strings.Contains(c.Path, "/issues/") && !strings.HasSuffix(c.Path, "/issues/comments") {
			threads[c.Path] = true
		}
	}
	p.ThreadReads = len(threads)
	return p
}

// route replaces numbers and commit ids in an API path with placeholders.
func route(path string) string {
	parts := strings.Split(path, "/")
	for i, s := range parts {
		if s == "" {
			continue
		}
		if strings.Trim(s, "0123456789") == "" {
			parts[i] = "{n}"
		} else if len(s) == 40 && strings.Trim(s, "0123456789abcdef") == "" {
			parts[i] = "{sha}"
		}
	}
	return strings.Join(parts, "/")
}
