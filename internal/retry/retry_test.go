package retry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// lowest and highest are the extreme draws of a rand(n) in [0, n).
func lowest(int64) int64    { return 0 }
func highest(n int64) int64 { return n - 1 }

func TestBackoff(t *testing.T) {
	p := Policy{Base: 500 * time.Millisecond, Max: 8 * time.Second}
	tests := []struct {
		name    string
		policy  Policy
		attempt int
		rand    func(int64) int64
		want    time.Duration
	}{
		{name: "first, no jitter", policy: p, attempt: 1, want: 500 * time.Millisecond},
		{name: "first, lowest draw is half", policy: p, attempt: 1, rand: lowest, want: 250 * time.Millisecond},
		{name: "first, highest draw is the whole", policy: p, attempt: 1, rand: highest, want: 500 * time.Millisecond},
		{name: "doubles", policy: p, attempt: 3, want: 2 * time.Second},
		{name: "third, lowest draw", policy: p, attempt: 3, rand: lowest, want: time.Second},
		{name: "capped at Max", policy: p, attempt: 6, want: 8 * time.Second},
		{name: "capped, lowest draw", policy: p, attempt: 6, rand: lowest, want: 4 * time.Second},
		{name: "a huge attempt does not overflow", policy: p, attempt: math.MaxInt, rand: highest, want: 8 * time.Second},
		{name: "attempt 0 is the first", policy: p, attempt: 0, want: 500 * time.Millisecond},
		{name: "a negative attempt is the first", policy: p, attempt: -3, want: 500 * time.Millisecond},
		{name: "a Base above Max is Max", policy: Policy{Base: time.Hour, Max: time.Minute}, attempt: 1, want: time.Minute},
		{name: "overflowing shift is Max", policy: Policy{Base: math.MaxInt64 / 2, Max: math.MaxInt64}, attempt: 21, want: math.MaxInt64},
		{name: "odd nanoseconds reach the whole", policy: Policy{Base: 3, Max: 3}, attempt: 1, rand: highest, want: 3},
		{name: "one nanosecond", policy: Policy{Base: 1, Max: 1}, attempt: 5, rand: highest, want: 1},
		{name: "no Max: no wait", policy: Policy{Base: time.Second}, attempt: 2, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.policy.Backoff(tt.attempt, tt.rand); got != tt.want {
				t.Fatalf("Backoff(%d) = %v, want %v", tt.attempt, got, tt.want)
			}
		})
	}
}

// TestBackoffJitter: with a real random source every wait lies in
// [d/2, d] and the waits differ.
func TestBackoffJitter(t *testing.T) {
	p := Policy{Base: 500 * time.Millisecond, Max: 8 * time.Second}
	for attempt := 1; attempt <= 30; attempt++ {
		d := min(p.Base<<min(attempt-1, 20), p.Max)
		seen := map[time.Duration]bool{}
		for range 50 {
			w := p.Backoff(attempt, rand.Int64N)
			if w < d/2 || w > d {
				t.Fatalf("attempt %d: %v outside [%v, %v]", attempt, w, d/2, d)
			}
			seen[w] = true
		}
		if len(seen) < 2 {
			t.Fatalf("attempt %d: no jitter", attempt)
		}
	}
}

func TestAgain(t *testing.T) {
	tests := []struct {
		name     string
		attempts int
		attempt  int
		want     bool
	}{
		{name: "below the bound", attempts: 3, attempt: 2, want: true},
		{name: "at the bound", attempts: 3, attempt: 3, want: false},
		{name: "past the bound", attempts: 3, attempt: 4, want: false},
		{name: "one attempt: never again", attempts: 1, attempt: 1, want: false},
		{name: "no bound", attempts: 0, attempt: 1000, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (Policy{Attempts: tt.attempts}).Again(tt.attempt); got != tt.want {
				t.Fatalf("Again(%d) with Attempts %d = %v, want %v", tt.attempt, tt.attempts, got, tt.want)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		value string
		want  time.Duration
	}{
		{name: "absent", value: "", want: 0},
		{name: "blank", value: "  ", want: 0},
		{name: "seconds", value: "17", want: 17 * time.Second},
		{name: "seconds with blanks", value: " 7 ", want: 7 * time.Second},
		{name: "zero", value: "0", want: 0},
		{name: "leading zeros", value: "007", want: 7 * time.Second},
		{name: "negative", value: "-5", want: 0},
		{name: "plus sign", value: "+5", want: 0},
		{name: "fraction", value: "1.5", want: 0},
		{name: "largest that fits", value: fmt.Sprint(maxSeconds), want: time.Duration(maxSeconds) * time.Second},
		{name: "just over Forever", value: fmt.Sprint(maxSeconds + 1), want: Forever},
		{name: "too many seconds for a Duration", value: "9223372037", want: Forever},
		{name: "too many seconds for an int64", value: "99999999999999999999999", want: Forever},
		{name: "a date past Forever", value: "Fri, 31 Dec 9999 23:59:59 GMT", want: Forever},
		{name: "IMF-fixdate", value: now.Add(30 * time.Second).Format(http.TimeFormat), want: 30 * time.Second},
		{name: "RFC 850 date", value: now.Add(time.Minute).Format(time.RFC850), want: time.Minute},
		{name: "asctime date", value: now.Add(2 * time.Minute).Format(time.ANSIC), want: 2 * time.Minute},
		{name: "date in the past", value: now.Add(-time.Minute).Format(http.TimeFormat), want: 0},
		{name: "date now", value: now.Format(http.TimeFormat), want: 0},
		{name: "not a date", value: "soon", want: 0},
		{name: "RFC 3339 is not an HTTP-date", value: now.Add(time.Minute).Format(time.RFC3339), want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RetryAfter(tt.value, now); got != tt.want {
				t.Fatalf("RetryAfter(%q) = %v, want %v", tt.value, got, tt.want)
			}
		})
	}
}

// FuzzRetryAfter: a Retry-After is whatever the server sends. Parsing it
// never panics, never asks for a negative wait, agrees with net/http on
// which dates are HTTP-dates, and reads delay-seconds as strconv does.
func FuzzRetryAfter(f *testing.F) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, s := range []string{"", "0", "17", "-1", "+1", " 3 ", "1e3", "99999999999999999999",
		"9223372036", "9223372037", now.Add(time.Hour).Format(http.TimeFormat),
		now.Add(-time.Hour).Format(http.TimeFormat), now.Format(time.RFC850), now.Format(time.ANSIC),
		"Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got := RetryAfter(v, now)
		if got < 0 || got > Forever {
			t.Fatalf("RetryAfter(%q) = %v, outside [0, Forever]", v, got)
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && !isDate(v) && n <= maxSeconds && got != time.Duration(n)*time.Second {
			t.Fatalf("RetryAfter(%q) = %v, want %d seconds", v, got, n)
		}
		if d, err := http.ParseTime(v); err == nil && isDate(v) {
			want := time.Duration(0)
			if d.After(now) {
				want = min(d.Sub(now), Forever)
			}
			if got != want {
				t.Fatalf("RetryAfter(%q) = %v, net/http's date says %v", v, got, want)
			}
		}
	})
}

// isDate: v is not all digits (then it is delay-seconds) once trimmed.
func isDate(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return true
		}
	}
	return false
}

func TestRetryable(t *testing.T) {
	tests := []struct {
		status int
		want   bool
	}{
		{200, false}, {204, false}, {302, false}, {304, false},
		{400, false}, {401, false}, {403, false}, {404, false}, {409, false}, {422, false},
		{408, true}, {429, true},
		{500, true}, {502, true}, {503, true}, {504, true}, {599, true},
		{501, false}, {505, false},
		{600, false}, {0, false}, {-1, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			if got := Retryable(tt.status); got != tt.want {
				t.Fatalf("Retryable(%d) = %v, want %v", tt.status, got, tt.want)
			}
		})
	}
}

func TestRetryableErr(t *testing.T) {
	wrap := func(err error) error {
		return &url.Error{Op: "Post", URL: "https://example.invalid/hook", Err: err}
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{name: "nil", err: nil, want: false},
		{name: "connection refused", err: wrap(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), want: true},
		{name: "connection reset", err: wrap(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}), want: true},
		{name: "DNS", err: wrap(&net.DNSError{Err: "no such host", Name: "example.invalid", IsNotFound: true}), want: true},
		{name: "unexpected EOF", err: wrap(io.ErrUnexpectedEOF), want: true},
		{name: "timeout", err: wrap(errors.New("context deadline exceeded")), want: true},
		{name: "unknown authority", err: wrap(x509.UnknownAuthorityError{}), want: false},
		{name: "wrong host name", err: wrap(x509.HostnameError{Host: "example.invalid"}), want: false},
		{name: "expired certificate", err: wrap(x509.CertificateInvalidError{Reason: x509.Expired}), want: false},
		{name: "verification error", err: wrap(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), want: false},
		{name: "wrapped with %w", err: fmt.Errorf("attempt 1: %w", wrap(x509.HostnameError{})), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RetryableErr(tt.err); got != tt.want {
				t.Fatalf("RetryableErr(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestSleep(t *testing.T) {
	tests := []struct {
		name    string
		d       time.Duration
		cancel  bool
		wantErr error
	}{
		{name: "zero returns at once", d: 0},
		{name: "a short wait ends", d: time.Millisecond},
		{name: "a cancelled context ends a long wait", d: time.Hour, cancel: true, wantErr: context.Canceled},
		{name: "a cancelled context with no wait", d: 0, cancel: true, wantErr: context.Canceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			if tc.cancel {
				cancel()
			} else {
				defer cancel()
			}
			if err := Sleep(ctx, tc.d); !errors.Is(err, tc.wantErr) {
				t.Errorf("Sleep = %v, want %v", err, tc.wantErr)
			}
		})
	}
}
