// Package retry is the one retry and backoff policy of phasegate's outbound
// HTTP clients: internal/ghclient (GitHub) and internal/notify/webhook (the
// operator's URL). It decides, and never sends: how long to back off
// before the next attempt (Policy.Backoff), how long a server asked to be
// left alone (RetryAfter), and whether an answer (Retryable) or a transport
// error (RetryableErr) may go away on retry. The clients keep their own
// loops, clocks and bounds; Sleep is the one context-aware wait that they
// and `phasegate decisions --wait` use when no test replaces their clock.
//
// It is pure and imports no phasegate package, so that ghclient, which
// knows GitHub and not phasegate, may use it.
package retry

import (
	"context"
	"crypto/x509"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Policy shapes the waits between attempts: Base, 2×Base, 4×Base… capped
// at Max, with equal jitter. Attempts bounds the attempts of one request
// (the first included); the caller enforces it with Policy.Again.
type Policy struct {
	Base, Max time.Duration
	Attempts  int
}

// Backoff is the wait after attempt number attempt (1 for the first) failed:
// d = min(Base·2^(attempt-1), Max), then "equal jitter": d/2 plus a uniform
// draw in [0, d/2], so the wait lies in [d/2, d]. rand(n) must return a
// value in [0, n) (math/rand/v2's Int64N); nil means no jitter (d).
//
// Equal jitter, not full jitter (a draw in [0, d]): both clients used it
// before this package, their tests bound the waits from below, and a retry
// never comes back at once, which matters for a client (ghclient) that
// bounds the total time it backs off: the waits sum to at least half the
// nominal ones, so the bound gives a known number of retries. The half that
// is drawn still spreads clients that failed together.
func (p Policy) Backoff(attempt int, rand func(n int64) int64) time.Duration {
	if p.Max <= 0 {
		return 0
	}
	d := p.Base << min(max(attempt-1, 0), 20)
	if d <= 0 || d > p.Max {
		d = p.Max
	}
	if rand == nil {
		return d
	}
	half := d / 2
	return half + time.Duration(rand(int64(d-half)+1))
}

// Again reports whether attempt number attempt may be followed by another:
// attempt < Attempts (no bound when Attempts is 0 or less).
func (p Policy) Again(attempt int) bool {
	return p.Attempts <= 0 || attempt < p.Attempts
}

// Forever is the longest wait RetryAfter returns, about 146 years: far past
// any bound a client sets, and small enough that a client adding its own
// bounded waits to it cannot overflow a Duration.
const Forever = time.Duration(1 << 62)

// maxSeconds is the largest Retry-After in seconds below Forever.
const maxSeconds = int64(Forever / time.Second)

// RetryAfter is the wait a Retry-After header value asks for (RFC 9110
// §10.2.3): delay-seconds, or an HTTP-date taken from now. 0 when the value
// is empty, malformed, negative or a date already past; at most Forever
// (the caller caps it with its own bound).
func RetryAfter(value string, now time.Time) time.Duration {
	v := strings.TrimSpace(value)
	if v == "" {
		return 0
	}
	if strings.Trim(v, "0123456789") == "" { // v is not empty: all digits
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || secs > maxSeconds {
			return Forever // all digits: only "out of range" is possible
		}
		return time.Duration(secs) * time.Second
	}
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			return min(max(t.Sub(now), 0), Forever) // 0 for a date already past
		}
	}
	return 0
}

// HTTP-date formats (net/http.ParseTime's, without importing net/http: the
// preferred IMF-fixdate and the two obsolete ones recipients must accept).
var dateLayouts = []string{
	"Mon, 02 Jan 2006 15:04:05 GMT",
	"Monday, 02-Jan-06 15:04:05 MST",
	"Mon Jan _2 15:04:05 2006",
}

// Retryable reports whether an answer with this status may be followed by a
// successful retry: 408 Request Timeout, 429 Too Many Requests and the 5xx
// server errors, except 501 Not Implemented and 505 HTTP Version Not
// Supported, which say the request itself will never work there.
func Retryable(status int) bool {
	switch {
	case status == 408 || status == 429:
		return true
	case status == 501 || status == 505:
		return false
	}
	return status >= 500 && status <= 599
}

// RetryableErr reports whether a transport error (no answer at all) may go
// away on retry: any network error, a timeout, a dropped connection, except
// a certificate the client does not trust, which a retry meets again.
// Whether the request may be sent again at all (it may have reached the
// server) is the caller's to decide.
func RetryableErr(err error) bool {
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var certErr x509.CertificateInvalidError
	return err != nil && !errors.As(err, &unknownAuth) && !errors.As(err, &hostErr) && !errors.As(err, &certErr)
}

// Sleep waits for d or until ctx ends, whichever comes first, and returns
// ctx's error in the second case. A d of zero or less returns at once.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
