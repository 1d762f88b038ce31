// Package webhook POSTs phasegate's events (internal/notify) to an
// operator-configured URL, for orchestrators that do not run on GitHub
// (GitLab CI, Jenkins, Bitbucket): `phasegate serve` with
// PHASEGATE_NOTIFY_URL.
//
// This package does I/O (HTTP to the operator's endpoint, never to GitHub);
// the event itself and its signature are built by the pure package notify.
//
// Each request carries the event as JSON, signed like GitHub signs webhooks:
// X-Phasegate-Signature-256 is "sha256=" and the hex HMAC-SHA256 of the body
// keyed with PHASEGATE_NOTIFY_SECRET; X-Phasegate-Event names the event type
// and X-Phasegate-Delivery its id (the same on every retry). A send is
// retried with exponential backoff and jitter on network errors, 408, 429
// and 5xx (Retry-After honoured, bounded), a bounded number of times.
//
// The sender never connects to a loopback, private, link-local, unspecified,
// multicast or otherwise reserved address unless Options.AllowPrivate is set
// (PHASEGATE_NOTIFY_ALLOW_PRIVATE=true): the check runs on the address being
// dialled (a net.Dialer Control hook), after DNS resolution, so a name that
// resolves, or later re-resolves, to an internal address (DNS rebinding) is
// refused too. Redirects are never followed and HTTP proxies from the
// environment are not used (the check would see the proxy, not the target).
package webhook

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/phasegate/phasegate/internal/notify"
	"github.com/phasegate/phasegate/internal/retry"
)

// Environment variables read by OptionsFromEnv.
const (
	EnvURL          = "PHASEGATE_NOTIFY_URL"
	EnvSecret       = "PHASEGATE_NOTIFY_SECRET"
	EnvAllowPrivate = "PHASEGATE_NOTIFY_ALLOW_PRIVATE"
)

// Defaults of Options.
const (
	DefaultMaxAttempts    = 6
	DefaultBackoffBase    = time.Second
	DefaultBackoffMax     = time.Minute
	DefaultAttemptTimeout = 10 * time.Second
)

// maxResponseBytes is how much of an answer is read (and discarded) so the
// connection can be reused.
const maxResponseBytes = 64 << 10

// Options configures a Sender.
type Options struct {
	// URL is the endpoint (http or https).
	URL string
	// Secret keys the HMAC signature; required.
	Secret []byte
	// AllowPrivate lets the sender connect to loopback, private, link-local
	// and other internal addresses (an endpoint inside the operator's
	// network).
	AllowPrivate bool
	// Version is phasegate's version, sent as User-Agent phasegate/<Version>.
	Version string
	// MaxAttempts bounds the attempts of one event (default 6).
	MaxAttempts int
	// BackoffBase and BackoffMax shape the waits between attempts: base,
	// 2×base, 4×base… capped at max, each with jitter (a uniform draw in
	// [d/2, d]). A Retry-After is honoured up to BackoffMax. Defaults 1s
	// and 1m.
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// AttemptTimeout bounds one attempt: connect, send, answer (default
	// 10s).
	AttemptTimeout time.Duration
	// Sleep waits between attempts (tests pass a fake). It must return
	// ctx.Err() when ctx ends first. Default: a timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

// OptionsFromEnv reads PHASEGATE_NOTIFY_URL, PHASEGATE_NOTIFY_SECRET and
// PHASEGATE_NOTIFY_ALLOW_PRIVATE. ok is false when no URL is set (no
// notifications). A URL without a secret is an error: an unsigned
// notification could be forged by anyone who can reach the receiver. The
// secret is never part of an error.
func OptionsFromEnv(getenv func(string) string) (opts Options, ok bool, err error) {
	opts.URL = strings.TrimSpace(getenv(EnvURL))
	if opts.URL == "" {
		return Options{}, false, nil
	}
	opts.Secret = []byte(getenv(EnvSecret))
	if len(opts.Secret) == 0 {
		return Options{}, false, fmt.Errorf("%s is set but %s is not: notifications must be signed", EnvURL, EnvSecret)
	}
	if v := strings.TrimSpace(getenv(EnvAllowPrivate)); v != "" {
		b, perr := strconv.ParseBool(v)
		if perr != nil {
			return Options{}, false, fmt.Errorf("%s must be true or false (got %q)", EnvAllowPrivate, v)
		}
		opts.AllowPrivate = b
	}
	return opts, true, nil
}

// Sender sends events to one URL. It is safe for concurrent use.
type Sender struct {
	url    string
	where  string // scheme://host, for errors: the path may hold a token
	secret []byte
	ua     string
	opts   Options
	client *http.Client
}

// New builds a Sender. It refuses a URL that is not absolute http(s), an
// empty secret, and (without AllowPrivate) a URL whose host is an internal
// IP address; a host name is checked each time it is dialled.
func New(opts Options) (*Sender, error) {
	u, err := url.Parse(strings.TrimSpace(opts.URL))
	if err != nil {
		return nil, errors.New("notify url: not a url")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, fmt.Errorf("notify url %s://%s: want an absolute http or https url", u.Scheme, u.Host)
	}
	where := u.Scheme + "://" + u.Host
	if len(opts.Secret) == 0 {
		return nil, fmt.Errorf("notify url %s: no secret to sign with", where)
	}
	if !opts.AllowPrivate {
		if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && Blocked(ip) {
			return nil, fmt.Errorf("notify url %s: %s is an internal address (set %s=true to allow it)", where, ip, EnvAllowPrivate)
		}
	}
	opts.MaxAttempts = cmp.Or(max(opts.MaxAttempts, 0), DefaultMaxAttempts)
	opts.BackoffBase = cmp.Or(max(opts.BackoffBase, 0), DefaultBackoffBase)
	opts.BackoffMax = cmp.Or(max(opts.BackoffMax, 0), DefaultBackoffMax)
	opts.AttemptTimeout = cmp.Or(max(opts.AttemptTimeout, 0), DefaultAttemptTimeout)
	if opts.Sleep == nil {
		opts.Sleep = retry.Sleep
	}
	dialer := &net.Dialer{Timeout: opts.AttemptTimeout, KeepAlive: 30 * time.Second, Control: control(opts.AllowPrivate)}
	tr := &http.Transport{
		Proxy:                 nil, // a proxy would be what the guard sees
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   opts.AttemptTimeout,
		ExpectContinueTimeout: time.Second,
	}
	client := &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a redirect is an answer, never followed
		},
	}
	return &Sender{url: u.String(), where: where, secret: append([]byte(nil), opts.Secret...), ua: "phasegate/" + cmp.Or(opts.Version, "dev"), opts: opts, client: client}, nil
}

// BlockedAddressError is the refusal to connect to an internal address.
type BlockedAddressError struct {
	Addr netip.Addr
}

func (e *BlockedAddressError) Error() string {
	return fmt.Sprintf("refusing to connect to %s, an internal address (set %s=true to allow it)", e.Addr, EnvAllowPrivate)
}

// control is the dialer's Control hook: it sees the resolved address of
// every connection attempt.
func control(allowPrivate bool) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		if allowPrivate {
			return nil
		}
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return fmt.Errorf("refusing to connect to %q: %w", address, err)
		}
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return fmt.Errorf("refusing to connect to %q: not an ip address", address)
		}
		if Blocked(ip) {
			return &BlockedAddressError{Addr: ip.WithZone("")}
		}
		return nil
	}
}

// reserved are ranges no public endpoint lives in, beyond what netip's
// predicates cover.
var reserved = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT (and some clouds' metadata)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and the broadcast address
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001::/32"),       // Teredo (tunnels to anywhere)
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated)
}

var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96") // IPv4 embedded in the last 32 bits
	sixTo4 = netip.MustParsePrefix("2002::/16")    // IPv4 embedded in bits 16–47
)

// Blocked reports whether ip is an address the sender refuses without
// AllowPrivate: loopback, private (RFC 1918, fc00::/7), link-local
// (169.254.0.0/16, where cloud metadata services live, and fe80::/10),
// unspecified, multicast, and the reserved ranges, including IPv4 addresses
// in IPv4-mapped, NAT64 and 6to4 form.
func Blocked(ip netip.Addr) bool {
	ip = ip.WithZone("").Unmap()
	if !ip.IsValid() {
		return true
	}
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return true
	}
	for _, p := range reserved {
		if p.Contains(ip) {
			return true
		}
	}
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return Blocked(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	case sixTo4.Contains(ip):
		return Blocked(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
	}
	return false
}

// Notify sends ev (its JSON document) signed, with the event and delivery
// headers, retrying as configured. It returns nil once the receiver
// answered 2xx; otherwise the last failure.
func (s *Sender) Notify(ctx context.Context, ev notify.Event) error {
	where := fmt.Sprintf("notify %s of %s %s", s.where, ev.Event, ev.ID)
	body, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("%s: encode: %w", where, err)
	}
	sig := notify.Sign(s.secret, body)
	policy := retry.Policy{Base: s.opts.BackoffBase, Max: s.opts.BackoffMax, Attempts: s.opts.MaxAttempts}
	for attempt := 1; ; attempt++ {
		wait, again, err := s.attempt(ctx, ev.Event, ev.ID, sig, body)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return fmt.Errorf("%s: attempt %d: %w", where, attempt, ctx.Err())
		case !again:
			return fmt.Errorf("%s: attempt %d: %w", where, attempt, err)
		case !policy.Again(attempt):
			return fmt.Errorf("%s: gave up after %d attempts: %w", where, attempt, err)
		}
		if wait <= 0 {
			wait = policy.Backoff(attempt, rand.Int64N)
		}
		if serr := s.opts.Sleep(ctx, min(wait, s.opts.BackoffMax)); serr != nil {
			return fmt.Errorf("%s: attempt %d: %w (then: %w)", where, attempt, err, serr)
		}
	}
}

// attempt sends once. again says whether another attempt may succeed; wait
// is the receiver's Retry-After, if any.
func (s *Sender) attempt(ctx context.Context, event, delivery, sig string, body []byte) (wait time.Duration, again bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return 0, false, errors.New("cannot build the request")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", s.ua)
	req.Header.Set(notify.HeaderSignature, sig)
	req.Header.Set(notify.HeaderEvent, event)
	req.Header.Set(notify.HeaderDelivery, delivery)
	resp, err := s.client.Do(req)
	if err != nil {
		var blocked *BlockedAddressError
		if errors.As(err, &blocked) {
			return 0, false, blocked
		}
		return 0, retry.RetryableErr(err), scrub(err, s.url, s.where)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBytes))
	resp.Body.Close()
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		return 0, false, nil
	case code >= 300 && code < 400:
		return 0, false, fmt.Errorf("answered %d (a redirect, not followed)", code)
	case retry.Retryable(code):
		return retry.RetryAfter(resp.Header.Get("Retry-After"), time.Now()), true, fmt.Errorf("answered %d", code)
	default:
		return 0, false, fmt.Errorf("answered %d", code)
	}
}

// scrub keeps the URL's path and query (which may hold a token) out of an
// error.
func scrub(err error, full, where string) error {
	msg := strings.ReplaceAll(err.Error(), full, where)
	var ue *url.Error
	if errors.As(err, &ue) {
		msg = strings.ReplaceAll(ue.Err.Error(), full, where)
	}
	return errors.New(msg)
}
