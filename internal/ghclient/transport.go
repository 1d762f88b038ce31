package ghclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"

	"github.com/phasegate/phasegate/internal/retry"
)

type ctxKey int

const (
	opKey ctxKey = iota
	idempotentKey
	streamKey
)

// streaming marks a GET whose successful body is handed up unread, as a
// stream (an archive): the retry layer neither buffers it nor bounds it by
// MaxResponseBytes (the caller bounds it), and the ETag cache skips it.
func streaming(ctx context.Context) context.Context {
	return context.WithValue(ctx, streamKey, true)
}

func isStreaming(ctx context.Context) bool {
	v, _ := ctx.Value(streamKey).(bool)
	return v
}

// withOp names the Client method a request belongs to (for OnCall).
func withOp(ctx context.Context, op string) context.Context {
	return context.WithValue(ctx, opKey, op)
}

// idempotent marks a POST that may be repeated safely: doing it twice has the
// effect of doing it once.
func idempotent(ctx context.Context) context.Context {
	return context.WithValue(ctx, idempotentKey, true)
}

// repeatable reports whether a request may be sent again after an ambiguous
// failure.
func repeatable(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete:
		return true
	}
	v, _ := r.Context().Value(idempotentKey).(bool)
	return v
}

// ---- auth ----

// authTransport sends the token to the API's host only: not to a host a
// redirect leads to (the archive download on codeload.github.com, whose URL
// carries a token of its own).
type authTransport struct {
	next   http.RoundTripper
	header string
	host   string
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.EqualFold(req.URL.Host, t.host) {
		return t.next.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", t.header)
	return t.next.RoundTrip(r)
}

// ---- conditional requests ----

// cacheTransport sends If-None-Match for GETs it has an ETag for and turns a
// 304 into the cached 200, so go-github sees a normal response. GitHub does
// not count a 304 against the primary rate limit.
type cacheTransport struct {
	next     http.RoundTripper
	cache    *etagCache
	identity string
	c        *Client
}

func (t *cacheTransport) key(req *http.Request) string {
	id := t.identity
	if a := req.Header.Get("Authorization"); a != "" {
		sum := sha256.Sum256([]byte(a))
		id += "|" + hex.EncodeToString(sum[:8])
	}
	return id + "\n" + req.Header.Get("Accept") + "\n" + req.URL.String()
}

func (t *cacheTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || req.Header.Get("If-None-Match") != "" || req.Header.Get("Range") != "" || isStreaming(req.Context()) {
		return t.next.RoundTrip(req)
	}
	k := t.key(req)
	ent, cached := t.cache.get(k)
	out := req
	if cached {
		out = req.Clone(req.Context())
		out.Header.Set("If-None-Match", ent.etag)
	}
	resp, err := t.next.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotModified && cached:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		t.c.ctr.notModified.Add(1)
		out, err := ent.response(req, resp.Header)
		if err != nil {
			t.cache.remove(k)
		}
		return out, err
	case resp.StatusCode == http.StatusOK && resp.Header.Get("ETag") != "":
		body, err := io.ReadAll(resp.Body) // the retry layer's buffer
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		t.cache.put(newCacheEntry(k, resp.Header.Get("ETag"), resp.Header.Clone(), body))
	case cached:
		t.cache.remove(k)
	}
	return resp, nil
}

// ---- serialised writes ----

// serialTransport sends a Client's writes one at a time: GitHub's guidance
// for staying clear of secondary rate limits. A write holds the slot through
// its retries and rate-limit waits.
type serialTransport struct {
	next http.RoundTripper
	sem  chan struct{}
}

func (t *serialTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return t.next.RoundTrip(req)
	}
	ctx := req.Context()
	select {
	case t.sem <- struct{}{}:
	case <-ctx.Done():
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, ctx.Err()
	}
	defer func() { <-t.sem }()
	return t.next.RoundTrip(req)
}

// ---- retries and rate limits ----

// rateGate holds the client-wide "do not send before" time set by a rate
// limit, and the last rate-limit headers seen.
type rateGate struct {
	mu        sync.Mutex
	until     time.Time
	secondary bool
	rate      Rate
	known     bool
}

func (g *rateGate) block(until time.Time, secondary bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if until.After(g.until) {
		g.until, g.secondary = until, secondary
	}
}

func (g *rateGate) blockedUntil() (time.Time, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.until, g.secondary
}

// observe records the rate-limit headers of a response; a quota used up
// (remaining 0) closes the gate until the reset.
func (g *rateGate) observe(h http.Header, now time.Time) {
	rem := h.Get("X-RateLimit-Remaining")
	if rem == "" {
		return
	}
	var r Rate
	r.Remaining, _ = strconv.Atoi(rem)
	r.Limit, _ = strconv.Atoi(h.Get("X-RateLimit-Limit"))
	r.Used, _ = strconv.Atoi(h.Get("X-RateLimit-Used"))
	r.Resource = h.Get("X-RateLimit-Resource")
	if v, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
		r.Reset = time.Unix(v, 0)
	}
	g.mu.Lock()
	g.rate, g.known = r, true
	g.mu.Unlock()
	if r.Remaining == 0 && (r.Resource == "" || r.Resource == "core") && r.Reset.After(now) {
		g.block(r.Reset.Add(time.Second), false)
	}
}

type retryTransport struct {
	next http.RoundTripper
	c    *Client
}

// errBodyTooLarge ends a request whose response exceeds MaxResponseBytes.
var errBodyTooLarge = errors.New("github response body too large")

type timeoutError struct{ after time.Duration }

func (e *timeoutError) Error() string   { return fmt.Sprintf("no answer from github within %s", e.after) }
func (e *timeoutError) Timeout() bool   { return true }
func (e *timeoutError) Temporary() bool { return true }

// RoundTrip sends req, retrying what is safe to retry: a request that was
// not sent, or a repeatable one after a network error or a server error
// (with backoff, within MaxRetryWait), and any request a rate limit turned
// away (once the gate opens, within MaxRateLimitWait); at most MaxAttempts
// attempts in all.
func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close() // each attempt sends a copy (GetBody: go-github's requests have one)
	}
	r := &retryRun{t: t, ctx: req.Context(), repeat: repeatable(req)}
	for attempt := 1; ; attempt++ {
		if err := r.waitForGate(); err != nil {
			return nil, err
		}
		if attempt > 1 {
			t.c.ctr.retries.Add(1)
		}
		resp, body, err := t.attempt(req, attempt)
		if err != nil {
			if err := r.afterError(err, attempt); err != nil {
				return nil, err
			}
			continue
		}
		if resp, again, err := r.afterResponse(resp, body, attempt); !again {
			return resp, err
		}
	}
}

// retryRun is one request's way through its attempts: whether it may be
// sent again, and what it has waited so far.
type retryRun struct {
	t                         *retryTransport
	ctx                       context.Context
	repeat                    bool // repeatable: safe to send again once sent
	backoffWaited, rateWaited time.Duration
	secondaryStreak           int // secondary rate limits met, for their growing wait
}

// waitForGate waits while the rate gate is closed, or fails with a
// RateLimitError when that would go past MaxRateLimitWait.
func (r *retryRun) waitForGate() error {
	c := r.t.c
	until, secondary := c.gate.blockedUntil()
	if !until.After(c.opts.Now()) {
		return nil
	}
	d := until.Sub(c.opts.Now())
	if r.rateWaited+d > c.opts.MaxRateLimitWait {
		return &RateLimitError{Secondary: secondary, Until: until, MaxWait: c.opts.MaxRateLimitWait}
	}
	c.ctr.rateWaits.Add(1)
	c.ctr.rateWaitNanos.Add(int64(d))
	if err := c.opts.Sleep(r.ctx, d); err != nil {
		return err
	}
	r.rateWaited += d
	return nil
}

// afterError decides on an attempt that got no response: nil after backing
// off when it may be retried, else the error to return.
func (r *retryRun) afterError(err error, attempt int) error {
	c := r.t.c
	if r.ctx.Err() != nil {
		return r.ctx.Err()
	}
	if !retryableErr(err) || (!r.repeat && !notSent(err)) || attempt >= c.opts.MaxAttempts {
		return err
	}
	d := c.backoff(attempt)
	if r.backoffWaited+d > c.opts.MaxRetryWait {
		return err
	}
	if err := c.opts.Sleep(r.ctx, d); err != nil {
		return err
	}
	r.backoffWaited += d
	return nil
}

// afterResponse decides on a response: again after a rate limit (the gate
// makes the next attempt wait) or after backing off from a server error
// that may be retried; otherwise the response (or error) to return.
func (r *retryRun) afterResponse(resp *http.Response, body []byte, attempt int) (out *http.Response, again bool, err error) {
	c, p := r.t.c, r.t.c.opts
	now := c.opts.Now()
	c.gate.observe(resp.Header, now)
	switch kind, wait, secondary := classify(resp, body, now, r.secondaryStreak); kind {
	case rateLimited:
		if secondary {
			r.secondaryStreak++
			c.ctr.secondary.Add(1)
		}
		until := now.Add(wait)
		c.gate.block(until, secondary)
		if attempt >= p.MaxAttempts || r.rateWaited+wait > p.MaxRateLimitWait {
			msg, _ := apiError(body)
			return nil, false, &RateLimitError{Secondary: secondary, Status: resp.StatusCode, Until: until,
				MaxWait: p.MaxRateLimitWait, Message: msg}
		}
		return nil, true, nil
	case serverError:
		if !r.repeat || attempt >= p.MaxAttempts {
			return r.t.deliver(resp), false, nil
		}
		d := max(c.backoff(attempt), retry.RetryAfter(resp.Header.Get("Retry-After"), now))
		if r.backoffWaited+d > p.MaxRetryWait {
			return r.t.deliver(resp), false, nil
		}
		if err := c.opts.Sleep(r.ctx, d); err != nil {
			return nil, false, err
		}
		r.backoffWaited += d
		return nil, true, nil
	default:
		return r.t.deliver(resp), false, nil
	}
}

// deliver hands a response up to go-github. When the quota is used up the
// reset header is withheld: the gate already makes the next request wait for
// it, on the injectable clock and within MaxRateLimitWait, and go-github's
// own check would instead fail that request at once.
func (t *retryTransport) deliver(resp *http.Response) *http.Response {
	if resp.Header.Get("X-RateLimit-Remaining") == "0" {
		resp.Header.Del("X-RateLimit-Reset")
	}
	return resp
}

// attempt sends one try with its own timeout and reads the whole body under
// it, so that a connection dropped mid-body is retried like any other. A
// streaming request's 2xx body is handed up unread instead, its timeout
// becoming an idle timeout between reads.
func (t *retryTransport) attempt(req *http.Request, n int) (*http.Response, []byte, error) {
	ctx := req.Context()
	actx, cancel := context.WithCancel(ctx)
	var timedOut atomic.Bool
	r := req.Clone(actx)
	timer := attemptTimer{after: t.c.opts.AfterFunc, req: r, f: func() { timedOut.Store(true); cancel() }}
	timer.Reset(t.c.opts.AttemptTimeout)
	if req.GetBody != nil && req.Body != nil && req.Body != http.NoBody {
		b, err := req.GetBody()
		if err != nil {
			timer.stop()
			cancel()
			return nil, nil, err
		}
		r.Body = b
	}
	start := time.Now()
	resp, err := t.next.RoundTrip(r)
	var body []byte
	switch {
	case err == nil && isStreaming(ctx) && resp.StatusCode >= 200 && resp.StatusCode < 300:
		timer.Reset(t.c.opts.AttemptTimeout)
		resp.Body = &idleBody{rc: resp.Body, timer: &timer, idle: t.c.opts.AttemptTimeout, cancel: cancel}
		cancel = nil // the body's Close ends the attempt
	case err == nil:
		body, err = io.ReadAll(io.LimitReader(resp.Body, t.c.opts.MaxResponseBytes+1))
		resp.Body.Close()
		if err == nil && int64(len(body)) > t.c.opts.MaxResponseBytes {
			err = fmt.Errorf("%w: over %d bytes", errBodyTooLarge, t.c.opts.MaxResponseBytes)
		}
		if err != nil {
			resp = nil
		} else {
			resp.Body = io.NopCloser(bytes.NewReader(body))
			resp.ContentLength = int64(len(body))
		}
	}
	if cancel != nil {
		timer.stop()
		cancel()
	}
	if err != nil && ctx.Err() == nil && timedOut.Load() {
		err = &timeoutError{after: t.c.opts.AttemptTimeout}
	}
	t.c.ctr.requests.Add(1)
	if resp != nil && resp.StatusCode != http.StatusNotModified {
		t.c.ctr.charged.Add(1)
	}
	if t.c.opts.OnCall != nil {
		op, _ := ctx.Value(opKey).(string)
		call := Call{Op: op, Method: req.Method, Attempt: n, Duration: time.Since(start), Err: err}
		if resp != nil {
			call.Status = resp.StatusCode
		}
		t.c.opts.OnCall(call)
	}
	return resp, body, err
}

// attemptTimer is an attempt's timeout, on Options.AfterFunc's clock
// (time.AfterFunc's by default): f runs once d has passed, unless the
// timer is stopped first.
type attemptTimer struct {
	after func(*http.Request, time.Duration, func()) func() bool
	req   *http.Request
	f     func()
	stop  func() bool
}

// Reset (re)starts the timer for d.
func (a *attemptTimer) Reset(d time.Duration) {
	if a.stop != nil {
		a.stop()
	}
	a.stop = a.after(a.req, d, a.f)
}

// idleBody is a streamed response body: each Read must make progress within
// the idle timeout (else the attempt's context ends and Read fails), and
// Close ends the attempt.
type idleBody struct {
	rc     io.ReadCloser
	timer  *attemptTimer
	idle   time.Duration
	cancel context.CancelFunc
	once   sync.Once
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.timer.Reset(b.idle)
	}
	return n, err
}

func (b *idleBody) Close() error {
	err := b.rc.Close()
	b.once.Do(func() {
		b.timer.stop()
		b.cancel()
	})
	return err
}

const (
	done = iota
	rateLimited
	serverError
)

// classify sorts a response: a rate limit with the wait GitHub asks for, a
// server error worth retrying, or a final answer.
//
// GitHub's rules: a 403 or 429 with x-ratelimit-remaining 0 is the primary
// limit (wait until x-ratelimit-reset); with Retry-After it is a secondary
// limit (wait that long); a 429, or a 403 whose message names a secondary
// rate limit, without either header waits at least a minute, growing
// exponentially. Any other 403 is a permission error.
func classify(resp *http.Response, body []byte, now time.Time, secondaryStreak int) (kind int, wait time.Duration, secondary bool) {
	switch s := resp.StatusCode; {
	case s == http.StatusForbidden || s == http.StatusTooManyRequests:
		if resp.Header.Get("X-RateLimit-Remaining") == "0" {
			if v, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
				return rateLimited, max(time.Unix(v, 0).Sub(now)+time.Second, time.Second), false
			}
			return rateLimited, secondaryDefaultWait, false
		}
		if ra := retry.RetryAfter(resp.Header.Get("Retry-After"), now); ra > 0 {
			return rateLimited, ra, true
		}
		msg, doc := apiError(body)
		msg = strings.ToLower(msg)
		if s == http.StatusTooManyRequests || strings.Contains(msg, "secondary rate limit") || strings.Contains(msg, "abuse") ||
			strings.HasSuffix(doc, "secondary-rate-limits") || strings.HasSuffix(doc, "#abuse-rate-limits") {
			return rateLimited, secondaryDefaultWait << min(secondaryStreak, 4), true
		}
		return done, 0, false
	case retry.Retryable(s): // 408 and 5xx but 501 and 505: the one policy's list (internal/retry)
		return serverError, 0, false
	}
	return done, 0, false
}

// apiError reads GitHub's error JSON: message and documentation_url.
func apiError(body []byte) (message, docURL string) {
	var e struct {
		Message string `json:"message"`
		DocURL  string `json:"documentation_url"`
	}
	if json.Unmarshal(body, &e) == nil {
		return e.Message, e.DocURL
	}
	return "", ""
}

// backoff is the wait before retry number attempt: exponential from
// BackoffBase, capped at BackoffMax, with equal jitter (retry.Policy).
func (c *Client) backoff(attempt int) time.Duration {
	return retry.Policy{Base: c.opts.BackoffBase, Max: c.opts.BackoffMax}.Backoff(attempt, rand.Int64N)
}

// retryableErr reports whether a transport error may go away on retry: the
// shared policy (retry.RetryableErr), except this client's own refusals.
func retryableErr(err error) bool {
	var rl *RateLimitError
	if errors.Is(err, errBodyTooLarge) || errors.As(err, &rl) || !retry.RetryableErr(err) {
		return false
	}
	var ie *ghinstallation.HTTPError
	if errors.As(err, &ie) && ie.Response != nil && ie.Response.StatusCode < 500 {
		return false // the App's key or installation is wrong: retrying will not help
	}
	return true
}

// notSent reports whether a failed request surely never reached GitHub, so
// that even a non-idempotent request may be sent again.
func notSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	var ie *ghinstallation.HTTPError
	return errors.As(err, &ie) // the installation token could not be minted
}
