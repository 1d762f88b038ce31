package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/notify"
)

var secret = []byte("notify-test-secret")

func event() notify.Event {
	return notify.Event{Version: notify.Version, Event: notify.TypeResolved, ID: notify.EventID(notify.TypeResolved, "acme/shop", 42, 2002),
		Repository: "acme/shop", Issue: notify.Issue{Number: 42},
		Decision: notify.Decision{ID: "D-001", Phase: "requirements", Outcome: "b3b0", Type: "approval", Blocking: true, Option: "approve", By: "alice"},
		State:    notify.State{Phase: "planning", BlockingOpen: []notify.OpenDecision{}}}
}

// sleeper records waits instead of waiting.
type sleeper struct {
	mu    sync.Mutex
	slept []time.Duration
}

func (s *sleeper) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slept = append(s.slept, d)
	return nil
}

func (s *sleeper) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.slept...)
}

func newSender(t *testing.T, rawURL string, sl *sleeper, opts Options) *Sender {
	t.Helper()
	opts.URL, opts.Secret, opts.AllowPrivate = rawURL, secret, true
	if sl != nil {
		opts.Sleep = sl.Sleep
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// The receiver can verify what it got with the shared secret, as it would
// check GitHub's X-Hub-Signature-256.
func TestSignedDelivery(t *testing.T) {
	type got struct {
		header http.Header
		body   []byte
		path   string
	}
	ch := make(chan got, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ch <- got{header: r.Header.Clone(), body: b, path: r.URL.RequestURI()}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	s := newSender(t, srv.URL+"/hooks/phasegate?team=a", &sleeper{}, Options{Version: "v1.2.3"})
	ev := event()
	if err := s.Notify(ctxT(t), ev); err != nil {
		t.Fatal(err)
	}
	g := <-ch
	if g.header.Get("X-Phasegate-Signature-256") != notify.Sign(secret, g.body) {
		t.Errorf("signature %q does not verify over %s", g.header.Get("X-Phasegate-Signature-256"), g.body)
	}
	if g.header.Get("X-Phasegate-Signature-256") == notify.Sign([]byte("other"), g.body) {
		t.Error("signature verifies under another secret")
	}
	for h, want := range map[string]string{
		"X-Phasegate-Event":    "phasegate.resolved",
		"X-Phasegate-Delivery": "phasegate.resolved:acme/shop#42:2002",
		"Content-Type":         "application/json",
		"User-Agent":           "phasegate/v1.2.3",
	} {
		if g.header.Get(h) != want {
			t.Errorf("%s: %q, want %q", h, g.header.Get(h), want)
		}
	}
	if g.path != "/hooks/phasegate?team=a" {
		t.Errorf("posted to %s", g.path)
	}
	var back notify.Event
	if err := json.Unmarshal(g.body, &back); err != nil || back.ID != ev.ID || back.Decision.Option != "approve" {
		t.Errorf("body %s decodes to %+v (%v)", g.body, back, err)
	}
}

// answers scripts a receiver: one status per request, the last repeated; 0
// drops the connection without answering.
func answers(t *testing.T, codes []int, header http.Header) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	var deliveries sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		deliveries.Store(r.Header.Get("X-Phasegate-Delivery"), true)
		code := codes[min(i, len(codes)-1)]
		if code == 0 {
			hj, ok := w.(http.Hijacker)
			if !ok {
				t.Error("cannot hijack")
				return
			}
			c, _, _ := hj.Hijack()
			c.Close()
			return
		}
		for k, v := range header {
			w.Header()[k] = v
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		k := 0
		deliveries.Range(func(any, any) bool { k++; return true })
		if k > 1 {
			t.Errorf("retries carried %d delivery ids, want one", k)
		}
	})
	return srv, &n
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name         string
		codes        []int
		header       http.Header
		maxAttempts  int
		wantErr      string // "" for success
		wantAttempts int64
		wantWaits    []time.Duration // exact waits; nil: checked against the backoff bounds
	}{
		{name: "success at once", codes: []int{200}, wantAttempts: 1},
		{name: "503 twice then 200", codes: []int{503, 503, 200}, wantAttempts: 3},
		{name: "connection dropped then 202", codes: []int{0, 202}, wantAttempts: 2},
		{name: "429 with Retry-After", codes: []int{429, 200}, header: http.Header{"Retry-After": {"7"}}, wantAttempts: 2, wantWaits: []time.Duration{7 * time.Second}},
		{name: "Retry-After capped at BackoffMax", codes: []int{503, 200}, header: http.Header{"Retry-After": {"3600"}}, wantAttempts: 2, wantWaits: []time.Duration{time.Minute}},
		{name: "408 is retried", codes: []int{408, 204}, wantAttempts: 2},
		{name: "gives up after N", codes: []int{500}, maxAttempts: 4, wantErr: "gave up after 4 attempts: answered 500", wantAttempts: 4},
		{name: "gives up after the default", codes: []int{502}, wantErr: "gave up after 6 attempts", wantAttempts: 6},
		{name: "400 is final", codes: []int{400, 200}, wantErr: "attempt 1: answered 400", wantAttempts: 1},
		{name: "401 is final", codes: []int{401}, wantErr: "answered 401", wantAttempts: 1},
		{name: "501 is final", codes: []int{501, 200}, wantErr: "attempt 1: answered 501", wantAttempts: 1},
		{name: "505 is final", codes: []int{505, 200}, wantErr: "attempt 1: answered 505", wantAttempts: 1},
		{name: "a redirect is not followed", codes: []int{302}, header: http.Header{"Location": {"http://127.0.0.1:1/"}}, wantErr: "redirect, not followed", wantAttempts: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, n := answers(t, tc.codes, tc.header)
			sl := &sleeper{}
			s := newSender(t, srv.URL, sl, Options{MaxAttempts: tc.maxAttempts})
			err := s.Notify(ctxT(t), event())
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
			}
			if n.Load() != tc.wantAttempts {
				t.Errorf("%d attempts, want %d", n.Load(), tc.wantAttempts)
			}
			waits := sl.waits()
			if int64(len(waits)) != tc.wantAttempts-1 {
				t.Fatalf("waited %v, want %d waits", waits, tc.wantAttempts-1)
			}
			for i, w := range waits {
				if tc.wantWaits != nil {
					if w != tc.wantWaits[i] {
						t.Errorf("wait %d: %s, want %s", i+1, w, tc.wantWaits[i])
					}
					continue
				}
				nominal := min(DefaultBackoffBase<<i, DefaultBackoffMax)
				if w < nominal/2 || w > nominal {
					t.Errorf("wait %d: %s, want within [%s, %s]", i+1, w, nominal/2, nominal)
				}
			}
		})
	}
}

// TestUntrustedCertificateIsFinal: a certificate the sender does not trust
// is met again on every retry, so the first attempt is the last.
func TestUntrustedCertificateIsFinal(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	srv.StartTLS()
	t.Cleanup(srv.Close)
	sl := &sleeper{}
	s := newSender(t, srv.URL, sl, Options{})
	err := s.Notify(ctxT(t), event())
	if err == nil || !strings.Contains(err.Error(), "attempt 1:") || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("error %v, want the first attempt's certificate error", err)
	}
	if w := sl.waits(); len(w) != 0 || n.Load() != 0 {
		t.Fatalf("waited %v and was answered %d times, want no retry and no answer", w, n.Load())
	}
}

func TestCancelledWhileWaiting(t *testing.T) {
	srv, n := answers(t, []int{503}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	s := newSender(t, srv.URL, nil, Options{Sleep: func(context.Context, time.Duration) error { cancel(); return context.Canceled }})
	err := s.Notify(ctx, event())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if n.Load() != 1 {
		t.Errorf("%d attempts, want 1", n.Load())
	}
}

// Internal addresses are refused unless allowed: as a literal in the URL
// (at New) and as what a host name resolves to (at dial time).
func TestInternalAddressesRefused(t *testing.T) {
	tests := []string{
		"http://127.0.0.1:8080/hook",
		"http://127.1.2.3/hook",
		"http://10.0.0.1/hook",
		"http://172.16.5.4/hook",
		"http://192.168.1.1/hook",
		"http://169.254.169.254/latest/meta-data/",
		"http://0.0.0.0/hook",
		"http://100.100.100.200/hook",
		"http://[::1]:8080/hook",
		"http://[::]/hook",
		"http://[fe80::1%25eth0]/hook",
		"http://[fd00:ec2::254]/hook",
		"http://[::ffff:127.0.0.1]/hook",
		"http://[::ffff:10.0.0.1]/hook",
		"http://[64:ff9b::a9fe:a9fe]/hook",
		"http://[2002:7f00:1::]/hook",
		"http://224.0.0.1/hook",
		"http://255.255.255.255/hook",
	}
	for _, u := range tests {
		t.Run(u, func(t *testing.T) {
			_, err := New(Options{URL: u, Secret: secret})
			if err == nil || !strings.Contains(err.Error(), "internal address") {
				t.Fatalf("New(%s) = %v, want a refusal", u, err)
			}
			if strings.Contains(err.Error(), "/hook") || strings.Contains(err.Error(), "meta-data") {
				t.Errorf("the error names the url's path: %v", err)
			}
			if _, err := New(Options{URL: u, Secret: secret, AllowPrivate: true}); err != nil {
				t.Errorf("with AllowPrivate: %v", err)
			}
		})
	}
}

// A host name that resolves to loopback is refused when it is dialled:
// nothing reaches the receiver. The same receiver is reached with
// AllowPrivate.
func TestDialTimeGuard(t *testing.T) {
	srv, n := answers(t, []int{204}, nil)
	u, _ := url.Parse(srv.URL)
	_, port, _ := net.SplitHostPort(u.Host)
	byName := "http://localhost:" + port + "/hook"
	sl := &sleeper{}
	s, err := New(Options{URL: byName, Secret: secret, Sleep: sl.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Notify(ctxT(t), event())
	var blocked *BlockedAddressError
	if !errors.As(err, &blocked) || !blocked.Addr.IsLoopback() {
		t.Fatalf("error %v, want a refused loopback address", err)
	}
	if n.Load() != 0 || len(sl.waits()) != 0 {
		t.Errorf("%d requests arrived and %d retries happened; want none (a refusal is final)", n.Load(), len(sl.waits()))
	}

	s = newSender(t, byName, sl, Options{})
	if err := s.Notify(ctxT(t), event()); err != nil {
		t.Fatalf("with AllowPrivate: %v", err)
	}
	if n.Load() != 1 {
		t.Errorf("%d requests arrived, want 1", n.Load())
	}
}

// The Control hook sees every address the dialer connects to, whatever name
// led there (DNS rebinding: a public name answering 10.0.0.1 the second
// time).
func TestControlHook(t *testing.T) {
	tests := []struct {
		address string
		allow   bool
		want    bool // refused
	}{
		{address: "10.0.0.1:443", want: true},
		{address: "127.0.0.1:80", want: true},
		{address: "[::1]:443", want: true},
		{address: "169.254.169.254:80", want: true},
		{address: "[fe80::1%eth0]:443", want: true},
		{address: "140.82.112.3:443", want: false},
		{address: "[2606:4700:4700::1111]:443", want: false},
		{address: "10.0.0.1:443", allow: true, want: false},
		{address: "not-an-ip:443", want: true},
	}
	for _, tc := range tests {
		t.Run(tc.address, func(t *testing.T) {
			err := control(tc.allow)("tcp", tc.address, nil)
			if (err != nil) != tc.want {
				t.Errorf("control(%s) = %v, want refused %v", tc.address, err, tc.want)
			}
		})
	}
}

func TestBlocked(t *testing.T) {
	tests := []struct {
		ip   string
		want bool
	}{
		{"127.0.0.1", true}, {"10.1.2.3", true}, {"172.31.255.255", true}, {"192.168.0.1", true},
		{"169.254.169.254", true}, {"0.0.0.0", true}, {"0.1.2.3", true}, {"100.64.0.1", true},
		{"192.0.2.1", true}, {"198.18.0.1", true}, {"240.0.0.1", true}, {"255.255.255.255", true},
		{"224.0.0.251", true}, {"::1", true}, {"::", true}, {"fc00::1", true}, {"fe80::1", true},
		{"ff02::1", true}, {"::ffff:192.168.1.1", true}, {"64:ff9b::7f00:1", true}, {"2002:a00:1::", true},
		{"2001:db8::1", true}, {"2001:0:4136:e378::1", true},
		{"8.8.8.8", false}, {"140.82.112.3", false}, {"172.32.0.1", false}, {"100.128.0.1", false},
		{"2606:4700:4700::1111", false}, {"::ffff:8.8.8.8", false}, {"64:ff9b::808:808", false}, {"2002:808:808::", false},
	}
	for _, tc := range tests {
		t.Run(tc.ip, func(t *testing.T) {
			if got := Blocked(netip.MustParseAddr(tc.ip)); got != tc.want {
				t.Errorf("Blocked(%s) = %v, want %v", tc.ip, got, tc.want)
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{name: "no secret", opts: Options{URL: "https://ci.example.com/hook"}, want: "no secret"},
		{name: "not http", opts: Options{URL: "ftp://ci.example.com/hook", Secret: secret}, want: "http or https"},
		{name: "relative", opts: Options{URL: "/hook", Secret: secret}, want: "http or https"},
		{name: "not a url", opts: Options{URL: "http://[::1", Secret: secret}, want: "not a url"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func TestOptionsFromEnv(t *testing.T) {
	tests := []struct {
		name      string
		env       map[string]string
		wantOK    bool
		wantAllow bool
		wantErr   string
	}{
		{name: "not configured", env: map[string]string{}},
		{name: "url and secret", env: map[string]string{EnvURL: "https://ci.example.com/hook", EnvSecret: "s3cret"}, wantOK: true},
		{name: "allow private", env: map[string]string{EnvURL: "http://10.0.0.5/hook", EnvSecret: "s3cret", EnvAllowPrivate: "true"}, wantOK: true, wantAllow: true},
		{name: "allow private false", env: map[string]string{EnvURL: "https://ci.example.com/hook", EnvSecret: "s3cret", EnvAllowPrivate: "false"}, wantOK: true},
		{name: "no secret", env: map[string]string{EnvURL: "https://ci.example.com/hook"}, wantErr: "PHASEGATE_NOTIFY_SECRET is not"},
		{name: "bad bool", env: map[string]string{EnvURL: "https://ci.example.com/hook", EnvSecret: "s3cret", EnvAllowPrivate: "yes please"}, wantErr: "true or false"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts, ok, err := OptionsFromEnv(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("the error echoes the secret: %v", err)
				}
				return
			}
			if err != nil || ok != tc.wantOK || opts.AllowPrivate != tc.wantAllow {
				t.Fatalf("OptionsFromEnv = %+v, %v, %v", opts, ok, err)
			}
			if ok && (opts.URL != tc.env[EnvURL] || string(opts.Secret) != tc.env[EnvSecret]) {
				t.Errorf("options %+v", opts)
			}
		})
	}
}
