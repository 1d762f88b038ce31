// Package ghclient is the only package of phasegate that talks to GitHub.
//
// It wraps go-github (v60) behind plain structs and small methods, and puts a
// transport stack under it that makes every caller a well-behaved API
// client:
//
//	go-github
//	  └ auth          Authorization: token … (or RevokeToken's basic auth)
//	    └ etag cache  If-None-Match on repeated GETs; a 304 becomes the cached 200
//	      └ writes    non-GET requests one at a time per Client
//	        └ retry   backoff with jitter on 5xx, network errors and timeouts;
//	                  Retry-After and x-ratelimit-reset honoured, bounded;
//	                  the per-attempt hook (metrics) and the rate-limit gauge
//	          └ base  http.Transport, or the caller's (ghinstallation for the App)
//
// One Client stands for one GitHub identity (a token, or one App
// installation): its cache, write queue and rate-limit state are per Client,
// so create one per identity and reuse it.
//
// Writes and retries. GET, HEAD, PUT and DELETE are retried on 5xx, network
// errors and per-attempt timeouts. A POST is retried by the transport only
// when it is idempotent in effect (setting a commit status, adding labels,
// adding a reaction: repeating them changes nothing) or when it surely never
// reached GitHub (dial and DNS errors, an installation token that could not
// be minted, a rate-limit refusal). The writes that create something —
// CreateIssueComment, CreateIssue, CreateCheckRun, and the check-run updates
// that append annotations — are not blindly repeated: after an ambiguous
// failure (a 5xx or a connection lost after the request was sent) they
// first look for what they were creating (the comment, the issue, the run,
// the annotation count) and take it if it is there (an idempotency guard),
// and send again only if it is not.
//
// Archives and the blobs of a CommitFS are streamed: their bodies are
// neither buffered nor cached, bounded by the caller's limit instead of
// MaxResponseBytes, and a read that stalls for AttemptTimeout fails. The
// token goes to the API's host only, never to a host a redirect leads to.
// phasegate's own writes are also idempotent at the application level (it
// re-reads the issue before it writes), so the guard is a second line.
package ghclient

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v60/github"

	"github.com/phasegate/phasegate/internal/retry"
)

// Defaults of Options.
const (
	DefaultMaxAttempts      = 8
	DefaultBackoffBase      = 500 * time.Millisecond
	DefaultBackoffMax       = 8 * time.Second
	DefaultMaxRetryWait     = time.Minute
	DefaultMaxRateLimitWait = 2 * time.Minute
	DefaultAttemptTimeout   = 30 * time.Second
	DefaultCacheEntries     = 8192
	DefaultCacheBytes       = 32 << 20
	DefaultMaxResponseBytes = 64 << 20
	// secondaryDefaultWait is GitHub's guidance for a secondary rate limit
	// that names no wait: at least one minute, growing exponentially.
	secondaryDefaultWait = time.Minute
)

// Options configures a Client. The zero value talks to api.github.com
// without authentication.
type Options struct {
	// Token authenticates as a user or as the workflow (GITHUB_TOKEN).
	Token string
	// Transport is the base transport under the stack: the App passes the
	// RoundTripper of NewInstallationTransport. Default: a clone of
	// http.DefaultTransport.
	Transport http.RoundTripper
	// BaseURL is the REST API root: empty for api.github.com, or a GitHub
	// Enterprise Server URL such as https://ghe.example.com/api/v3/ (the
	// /api/v3/ suffix is added when missing). The upload URL is derived.
	BaseURL string
	// Version is phasegate's version, sent as User-Agent phasegate/<Version>.
	Version string

	// CacheIdentity names the identity in ETag cache keys when it cannot be
	// derived (token auth and NewInstallationTransport derive it).
	CacheIdentity string
	// CacheEntries bounds the ETag cache (default 8192 responses; negative
	// disables it). CacheBytes bounds its size (default 32 MiB, bodies
	// counted as kept: deflated from 2 KiB).
	CacheEntries int
	CacheBytes   int64

	// MaxAttempts bounds the attempts of one request (default 8).
	MaxAttempts int
	// BackoffBase and BackoffMax shape the exponential backoff between
	// retries (defaults 500ms and 8s per wait, with jitter).
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// MaxRetryWait bounds the backoff one request may spend (default 1m).
	MaxRetryWait time.Duration
	// MaxRateLimitWait bounds the time one request may wait for a rate
	// limit (Retry-After or x-ratelimit-reset; default 2m). A longer wait is
	// not slept: the request fails at once with a *RateLimitError.
	MaxRateLimitWait time.Duration
	// AttemptTimeout bounds one attempt, headers and body (default 30s).
	AttemptTimeout time.Duration
	// MaxResponseBytes bounds a response body (default 64 MiB).
	MaxResponseBytes int64

	// Now and Sleep replace the clock (tests). Sleep must return ctx.Err()
	// when ctx ends first.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// AfterFunc replaces time.AfterFunc for the attempt timeout (tests): it
	// calls f once d has passed on its clock, unless stop is called first
	// (stop reports whether it was). req is the attempt's request, so that a
	// fake GitHub that hangs it can fire its timer at once, which then ends
	// the attempt exactly as its running out would (ghfake.JumpClock).
	AfterFunc func(req *http.Request, d time.Duration, f func()) (stop func() bool)
	// OnCall, if set, is called after every HTTP attempt (metrics: API
	// calls by operation, method and status). It must be fast and safe for
	// concurrent use.
	OnCall func(Call)

	// perPage lowers the page size of every listing below GitHub's maximum
	// (maxPerPage, the default and the only production value): the
	// package's tests page through a few small pages, so that page
	// boundaries, Link headers and the bounds on pages are proven without
	// hundreds of items.
	perPage int
	// authorization is the Authorization header without a Token: the OAuth
	// client's basic auth (RevokeToken).
	authorization string
}

// Call describes one HTTP attempt, for OnCall.
type Call struct {
	Op       string // the Client method, e.g. "ListIssueComments"; empty outside them
	Method   string
	Status   int // 0 when no response arrived
	Attempt  int // 1 for the first try of a request
	Duration time.Duration
	Err      error
}

// Stats are a Client's counters since it was created.
type Stats struct {
	Requests       int64         // HTTP attempts sent
	NotModified    int64         // 304 answers served from the ETag cache
	Retries        int64         // attempts after the first
	RateLimitWaits int64         // waits for a rate limit
	RateLimitWait  time.Duration // total time waited for rate limits
	GuardHits      int64         // creates found already applied after an ambiguous failure
	// Charged counts the attempts GitHub answered with anything but 304
	// Not Modified: what counts against the primary rate limit.
	Charged int64
	// SecondaryLimits counts the answers that were a secondary rate limit
	// (403 or 429 with Retry-After, or naming one).
	SecondaryLimits int64
}

// Rate is the primary rate limit as last reported by GitHub.
type Rate struct {
	Limit     int
	Remaining int
	Used      int
	Reset     time.Time
	Resource  string
}

// Client is a GitHub API client for one identity. It is safe for
// concurrent use.
type Client struct {
	gh *github.Client
	// opts are the Options New was given, defaults filled in (the clock
	// and perPage too).
	opts Options
	gate *rateGate
	ctr  *counters

	actor atomic.Pointer[string] // login of this identity, learnt from created comments
}

type counters struct {
	requests, notModified, retries, rateWaits, rateWaitNanos, guardHits atomic.Int64
	charged, secondary                                                  atomic.Int64
}

func New(opts Options) (*Client, error) {
	base, err := apiBaseURL(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	opts.MaxAttempts = cmp.Or(opts.MaxAttempts, DefaultMaxAttempts)
	opts.BackoffBase = cmp.Or(opts.BackoffBase, DefaultBackoffBase)
	opts.BackoffMax = cmp.Or(opts.BackoffMax, DefaultBackoffMax)
	opts.MaxRetryWait = cmp.Or(opts.MaxRetryWait, DefaultMaxRetryWait)
	opts.MaxRateLimitWait = cmp.Or(opts.MaxRateLimitWait, DefaultMaxRateLimitWait)
	opts.AttemptTimeout = cmp.Or(opts.AttemptTimeout, DefaultAttemptTimeout)
	opts.MaxResponseBytes = cmp.Or(opts.MaxResponseBytes, DefaultMaxResponseBytes)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Sleep == nil {
		opts.Sleep = retry.Sleep
	}
	if opts.AfterFunc == nil {
		opts.AfterFunc = func(_ *http.Request, d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	opts.perPage = cmp.Or(min(max(opts.perPage, 0), maxPerPage), maxPerPage)
	c := &Client{
		gate: &rateGate{},
		ctr:  &counters{},
		opts: opts,
	}

	baseRT := opts.Transport
	if baseRT == nil {
		baseRT = defaultTransport()
	}

	identity := cacheIdentity(opts, baseRT)
	var rt http.RoundTripper = &retryTransport{next: baseRT, c: c}
	rt = &serialTransport{next: rt, sem: make(chan struct{}, 1)}
	if opts.CacheEntries >= 0 {
		cache := newETagCache(cmp.Or(opts.CacheEntries, DefaultCacheEntries), cmp.Or(opts.CacheBytes, DefaultCacheBytes))
		rt = &cacheTransport{next: rt, cache: cache, identity: identity, c: c}
	}
	if opts.Token != "" {
		opts.authorization = "token " + opts.Token
	}
	if opts.authorization != "" {
		host := "api.github.com"
		if base != nil {
			host = base.Host
		}
		rt = &authTransport{next: rt, header: opts.authorization, host: host}
	}
	gh := github.NewClient(&http.Client{Transport: rt})
	if base != nil {
		// Set the URLs directly: go-github's WithEnterpriseURLs would append
		// /api/uploads/ to the uploads host of a ghe.com tenant.
		gh.BaseURL = base
		if gh.UploadURL, err = url.Parse(uploadURL(base)); err != nil {
			return nil, fmt.Errorf("derive github upload url from %q: %w", opts.BaseURL, err)
		}
	}
	gh.UserAgent = "phasegate/" + cmp.Or(opts.Version, "dev")
	c.gh = gh
	return c, nil
}

// cacheIdentity names the identity in ETag cache keys: Options.CacheIdentity,
// else the installation of an App's transport, else a hash of the token.
func cacheIdentity(opts Options, baseRT http.RoundTripper) string {
	if it, ok := baseRT.(*ghinstallation.Transport); ok && opts.CacheIdentity == "" {
		return fmt.Sprintf("app-%d/installation-%d", it.AppID(), it.InstallationID())
	}
	if opts.Token != "" && opts.CacheIdentity == "" {
		sum := sha256.Sum256([]byte(opts.Token))
		return "token-" + hex.EncodeToString(sum[:8])
	}
	return opts.CacheIdentity
}

// apiBaseURL parses the API root; nil means api.github.com.
func apiBaseURL(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("parse github api url %q: %w", s, err)
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("github api url %q: want an absolute http(s) url", s)
	}
	if u.Host == "api.github.com" && strings.Trim(u.Path, "/") == "" {
		return nil, nil
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	if !strings.HasSuffix(u.Path, "/api/v3/") && !strings.HasPrefix(u.Host, "api.") && !strings.Contains(u.Host, ".api.") {
		u.Path += "api/v3/"
	}
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}

// uploadURL derives the upload root from the API root: …/api/v3/ becomes
// …/api/uploads/; an api.<host> root becomes uploads.<host>.
func uploadURL(base *url.URL) string {
	u := *base
	switch {
	case strings.HasSuffix(u.Path, "/api/v3/"):
		u.Path = strings.TrimSuffix(u.Path, "/api/v3/") + "/api/uploads/"
	case strings.HasPrefix(u.Host, "api."):
		u.Host = "uploads." + strings.TrimPrefix(u.Host, "api.")
	}
	return u.String()
}

func (c *Client) Stats() Stats {
	return Stats{
		Requests:        c.ctr.requests.Load(),
		NotModified:     c.ctr.notModified.Load(),
		Retries:         c.ctr.retries.Load(),
		RateLimitWaits:  c.ctr.rateWaits.Load(),
		RateLimitWait:   time.Duration(c.ctr.rateWaitNanos.Load()),
		GuardHits:       c.ctr.guardHits.Load(),
		Charged:         c.ctr.charged.Load(),
		SecondaryLimits: c.ctr.secondary.Load(),
	}
}

// RateLimit returns the primary rate limit from the last response that
// reported one; ok is false before any did.
func (c *Client) RateLimit() (r Rate, ok bool) {
	c.gate.mu.Lock()
	defer c.gate.mu.Unlock()
	return c.gate.rate, c.gate.known
}

// Blocked reports whether the Client holds its requests back now because
// GitHub rate-limited one (until when, and whether a secondary limit did).
func (c *Client) Blocked() (until time.Time, secondary bool, blocked bool) {
	until, secondary = c.gate.blockedUntil()
	if !until.After(c.opts.Now()) {
		return time.Time{}, false, false
	}
	return until, secondary, true
}

// RateLimitError is returned when GitHub rate-limits a request and the wait
// it asks for exceeds Options.MaxRateLimitWait, or the attempts ran out.
type RateLimitError struct {
	Secondary bool      // a secondary (abuse) limit rather than the hourly quota
	Status    int       // 403 or 429; 0 when refused before sending
	Until     time.Time // when GitHub allows requests again
	MaxWait   time.Duration
	Message   string // GitHub's message, if any
}

func (e *RateLimitError) Error() string {
	kind := "primary rate limit exhausted"
	if e.Secondary {
		kind = "secondary rate limit hit"
	}
	msg := fmt.Sprintf("github %s until %s (waiting is allowed up to %s)", kind, e.Until.UTC().Format(time.RFC3339), e.MaxWait)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// ErrTruncated is returned (wrapped, with the partial result) when GitHub
// caps a list: a comparison lists at most 300 files, a pull request 3000.
var ErrTruncated = errors.New("github truncated the list")

// StatusCode returns the HTTP status of a GitHub API error in err's chain,
// or 0.
func StatusCode(err error) int {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode
	}
	var rl *RateLimitError
	if errors.As(err, &rl) {
		return rl.Status
	}
	return 0
}

// IsNotFound reports whether err is GitHub's 404.
func IsNotFound(err error) bool { return StatusCode(err) == http.StatusNotFound }

func defaultTransport() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 16
	t.ResponseHeaderTimeout = 0 // the retry layer bounds each attempt
	return t
}

func (c *Client) actorLogin() string {
	if p := c.actor.Load(); p != nil {
		return *p
	}
	return ""
}
