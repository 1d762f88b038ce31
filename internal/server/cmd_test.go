package server

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseServe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := filepath.Join(dir, "key.pem")
	if err := os.WriteFile(key, []byte("-----BEGIN RSA PRIVATE KEY-----\nnot checked here\n-----END RSA PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	secretFile := filepath.Join(dir, "secret")
	if err := os.WriteFile(secretFile, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := map[string]string{"PHASEGATE_APP_ID": "42", "PHASEGATE_PRIVATE_KEY_FILE": key, "PHASEGATE_WEBHOOK_SECRET": "s1"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name        string
		env         map[string]string
		args        []string
		wantErr     string
		wantSecrets []string
		wantAddr    string
		wantEvery   time.Duration
		wantRedis   string
		wantLockTTL time.Duration
		wantKey     string // a substring of the key read; default the file's
	}{
		{name: "defaults", env: base, wantSecrets: []string{"s1"}, wantAddr: ":8080", wantEvery: 15 * time.Minute},
		{name: "rotation", env: with("PHASEGATE_WEBHOOK_SECRET", "new, old"), wantSecrets: []string{"new", "old"}, wantAddr: ":8080", wantEvery: 15 * time.Minute},
		{name: "secret file", env: with("PHASEGATE_WEBHOOK_SECRET", "", "PHASEGATE_WEBHOOK_SECRET_FILE", secretFile), wantSecrets: []string{"from-file"}, wantAddr: ":8080", wantEvery: 15 * time.Minute},
		{name: "flags win", env: with("PHASEGATE_ADDR", ":1", "PHASEGATE_RECONCILE_EVERY", "1h", "PHASEGATE_REDIS_URL", "redis://a:6379"),
			args:        []string{"--addr", "127.0.0.1:9000", "--reconcile-every", "0", "--redis-url", "redis://b:6379"},
			wantSecrets: []string{"s1"}, wantAddr: "127.0.0.1:9000", wantEvery: 0, wantRedis: "redis://b:6379"},
		{name: "variables", env: with("PHASEGATE_ADDR", ":1", "PHASEGATE_RECONCILE_EVERY", "1h"), wantSecrets: []string{"s1"}, wantAddr: ":1", wantEvery: time.Hour},
		{name: "no secret", env: with("PHASEGATE_WEBHOOK_SECRET", ""), wantErr: "no webhook secret"},
		{name: "blank secrets only", env: with("PHASEGATE_WEBHOOK_SECRET", " , "), wantErr: "no webhook secret"},
		{name: "bad app id", env: with("PHASEGATE_APP_ID", "x"), wantErr: "numeric id"},
		{name: "no key", env: with("PHASEGATE_PRIVATE_KEY_FILE", ""), wantErr: "no private key"},
		{name: "key in a variable", env: with("PHASEGATE_PRIVATE_KEY_FILE", "", "PHASEGATE_PRIVATE_KEY", "-----BEGIN RSA PRIVATE KEY-----\ninline\n-----END RSA PRIVATE KEY-----\n"),
			wantSecrets: []string{"s1"}, wantAddr: ":8080", wantEvery: 15 * time.Minute, wantKey: "inline"},
		{name: "key file and variable", env: with("PHASEGATE_PRIVATE_KEY", "pem"), wantErr: "set one"},
		{name: "missing key file", env: with("PHASEGATE_PRIVATE_KEY_FILE", filepath.Join(dir, "nope")), wantErr: "reading the private key file"},
		{name: "bad duration", env: with("PHASEGATE_RECONCILE_EVERY", "soon"), wantErr: "duration"},
		{name: "lock ttl variable", env: with("PHASEGATE_LOCK_TTL", "5s"), wantSecrets: []string{"s1"}, wantAddr: ":8080", wantEvery: 15 * time.Minute, wantLockTTL: 5 * time.Second},
		{name: "lock ttl flag wins", env: with("PHASEGATE_LOCK_TTL", "5s"), args: []string{"--lock-ttl", "2m"}, wantSecrets: []string{"s1"}, wantAddr: ":8080", wantEvery: 15 * time.Minute, wantLockTTL: 2 * time.Minute},
		{name: "lock ttl too short", env: with("PHASEGATE_LOCK_TTL", "10ms"), wantErr: "at least 1s"},
		{name: "lock ttl not a duration", env: with("PHASEGATE_LOCK_TTL", "long"), wantErr: "at least 1s"},
		{name: "stray argument", env: base, args: []string{"extra"}, wantErr: "no arguments"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			s, err := parseServe(tc.args, func(k string) string { return tc.env[k] }, &out, &errb)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				for _, secret := range []string{"s1", "from-file"} {
					if strings.Contains(err.Error(), secret) {
						t.Errorf("the error shows a secret: %v", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range s.cfg.Secrets {
				got = append(got, string(b))
			}
			if strings.Join(got, ",") != strings.Join(tc.wantSecrets, ",") {
				t.Errorf("secrets = %v, want %v", got, tc.wantSecrets)
			}
			if tc.wantKey == "" {
				tc.wantKey = "not checked here"
			}
			if !strings.Contains(string(s.cfg.PrivateKeyPEM), tc.wantKey) {
				t.Errorf("private key %q, want it to contain %q", s.cfg.PrivateKeyPEM, tc.wantKey)
			}
			if tc.wantLockTTL == 0 {
				tc.wantLockTTL = DefaultLockTTL
			}
			if s.lockTTL != tc.wantLockTTL {
				t.Errorf("lock ttl = %v, want %v", s.lockTTL, tc.wantLockTTL)
			}
			if s.cfg.Addr != tc.wantAddr || s.cfg.ReconcileEvery != tc.wantEvery || s.redisURL != tc.wantRedis || s.cfg.AppID != 42 || len(s.cfg.PrivateKeyPEM) == 0 {
				t.Errorf("config = addr %q every %v redis %q app %d", s.cfg.Addr, s.cfg.ReconcileEvery, s.redisURL, s.cfg.AppID)
			}
		})
	}
}

func TestMainRefusesToStartWithoutSecret(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	code := Main(nil, func(string) string { return "" }, &stdout, &stderr, "test")
	if code != 2 || !strings.Contains(stderr.String(), "no webhook secret") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

// TestHelpNeverEchoesTheEnvironment: -h prints the documented defaults, not
// the values of the variables (a Redis URL carries its password).
func TestHelpNeverEchoesTheEnvironment(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"PHASEGATE_REDIS_URL":        "redis://:hunter2@redis:6379/0",
		"PHASEGATE_WEBHOOK_SECRET":   "s3cret",
		"PHASEGATE_APP_ID":           "987654",
		"PHASEGATE_PRIVATE_KEY_FILE": "/run/secrets/key-path",
		"PHASEGATE_ADDR":             "10.1.2.3:9999",
	}
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"-h"}, func(k string) string { return env[k] }, &stdout, &stderr, "test"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, v := range env {
		for _, part := range []string{"hunter2", "s3cret", "987654", "key-path", "10.1.2.3"} {
			if strings.Contains(v, part) && strings.Contains(stdout.String()+stderr.String(), part) {
				t.Errorf("-h shows %q from the environment:\n%s", part, stdout.String())
			}
		}
	}
	if !strings.Contains(stdout.String(), `(default ":8080")`) {
		t.Errorf("-h does not show the documented default address:\n%s", stdout.String())
	}
}

func TestParseServeDoorFlags(t *testing.T) {
	t.Parallel()
	key := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(key, []byte("-----BEGIN RSA PRIVATE KEY-----\nnot checked here\n-----END RSA PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name         string
		env          map[string]string
		args         []string
		wantErr      string
		wantMetrics  string
		wantInflight int64
		wantInterval time.Duration
	}{
		{name: "defaults", wantInflight: DefaultMaxInflightBytes, wantInterval: DefaultInstallReconcileInterval},
		{name: "variables", env: map[string]string{"PHASEGATE_METRICS_ADDR": "127.0.0.1:9090", "PHASEGATE_MAX_INFLIGHT_BYTES": "128MiB", "PHASEGATE_INSTALL_RECONCILE_INTERVAL": "10m"},
			wantMetrics: "127.0.0.1:9090", wantInflight: 128 << 20, wantInterval: 10 * time.Minute},
		{name: "flags win", env: map[string]string{"PHASEGATE_MAX_INFLIGHT_BYTES": "128MiB", "PHASEGATE_METRICS_ADDR": ":1"},
			args:        []string{"--max-inflight-bytes", "33554432", "--metrics-addr", ":9090", "--install-reconcile-interval", "30s"},
			wantMetrics: ":9090", wantInflight: 32 << 20, wantInterval: 30 * time.Second},
		{name: "a budget below the largest delivery", env: map[string]string{"PHASEGATE_MAX_INFLIGHT_BYTES": "16MiB"}, wantErr: "at least 25MiB"},
		{name: "a budget that is no size", env: map[string]string{"PHASEGATE_MAX_INFLIGHT_BYTES": "64MB"}, wantErr: "at least 25MiB"},
		{name: "no installation limit", env: map[string]string{"PHASEGATE_INSTALL_RECONCILE_INTERVAL": "0"}, wantErr: "at least 1s"},
		{name: "metrics on the webhook's address", args: []string{"--addr", ":8080", "--metrics-addr", ":8080"}, wantErr: "must differ"},
		{name: "two refused values: the first is named", env: map[string]string{"PHASEGATE_MAX_INFLIGHT_BYTES": "16MiB", "PHASEGATE_INSTALL_RECONCILE_INTERVAL": "0"},
			wantErr: "--max-inflight-bytes / PHASEGATE_MAX_INFLIGHT_BYTES must be"},
		{name: "a refused value before the addresses", env: map[string]string{"PHASEGATE_INSTALL_RECONCILE_INTERVAL": "0"}, args: []string{"--addr", ":8080", "--metrics-addr", ":8080"},
			wantErr: "--install-reconcile-interval / PHASEGATE_INSTALL_RECONCILE_INTERVAL must be"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"PHASEGATE_APP_ID": "42", "PHASEGATE_PRIVATE_KEY_FILE": key, "PHASEGATE_WEBHOOK_SECRET": "s1"}
			for k, v := range tc.env {
				env[k] = v
			}
			var out, errb bytes.Buffer
			s, err := parseServe(tc.args, func(k string) string { return env[k] }, &out, &errb)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.cfg.MetricsAddr != tc.wantMetrics || s.cfg.MaxInflightBytes != tc.wantInflight || s.cfg.InstallReconcileInterval != tc.wantInterval {
				t.Fatalf("metrics %q, in-flight %d, interval %v; want %q, %d, %v", s.cfg.MetricsAddr, s.cfg.MaxInflightBytes, s.cfg.InstallReconcileInterval,
					tc.wantMetrics, tc.wantInflight, tc.wantInterval)
			}
		})
	}
}

// TestMainChecksTheKeyBeforeTheNetwork: a key file that is missing or is
// not an RSA key in PEM stops serve with exit 2 and the file's name, before
// it dials Redis or asks GitHub anything (the listeners see no one).
func TestMainChecksTheKeyBeforeTheNetwork(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	ecKey := filepath.Join(dir, "ec.pem")
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	for path, data := range map[string][]byte{garbage: []byte("not a key\n"), ecKey: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, keyFile, want string
	}{
		{name: "missing", keyFile: filepath.Join(dir, "missing.pem"), want: "missing.pem"},
		{name: "not PEM", keyFile: garbage, want: "private key (" + garbage + ")"},
		{name: "not RSA", keyFile: ecKey, want: "private key (" + ecKey + ")"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var dials atomic.Int64
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					dials.Add(1)
					c.Close()
				}
			}()
			env := map[string]string{"PHASEGATE_APP_ID": "42", "PHASEGATE_WEBHOOK_SECRET": "s1", "PHASEGATE_PRIVATE_KEY_FILE": tc.keyFile,
				"PHASEGATE_ADDR": "127.0.0.1:0", "PHASEGATE_REDIS_URL": "redis://" + ln.Addr().String() + "/0", "PHASEGATE_GITHUB_API_URL": "http://" + ln.Addr().String() + "/"}
			var stdout, stderr bytes.Buffer
			code := Main(nil, func(k string) string { return env[k] }, &stdout, &stderr, "test")
			if code != 2 || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), tc.want)
			}
			if n := dials.Load(); n != 0 {
				t.Errorf("serve connected %d times to Redis or GitHub before refusing the key", n)
			}
		})
	}
}

// TestParseServeLogFlags: --log-level and --log-format (and their
// variables) take only their documented values; a bad one names the flag.
func TestParseServeLogFlags(t *testing.T) {
	t.Parallel()
	base := map[string]string{"PHASEGATE_APP_ID": "42", "PHASEGATE_PRIVATE_KEY": "pem", "PHASEGATE_WEBHOOK_SECRET": "s1"}
	tests := []struct {
		name       string
		env        map[string]string
		args       []string
		wantLevel  slog.Level
		wantFormat string
		wantErr    string
	}{
		{name: "defaults", wantLevel: slog.LevelInfo, wantFormat: "json"},
		{name: "flags", args: []string{"--log-level=debug", "--log-format=text"}, wantLevel: slog.LevelDebug, wantFormat: "text"},
		{name: "variables", env: map[string]string{"PHASEGATE_LOG_LEVEL": "error", "PHASEGATE_LOG_FORMAT": "text"}, wantLevel: slog.LevelError, wantFormat: "text"},
		{name: "flag wins", env: map[string]string{"PHASEGATE_LOG_LEVEL": "error"}, args: []string{"--log-level", "warn"}, wantLevel: slog.LevelWarn, wantFormat: "json"},
		{name: "unknown level", args: []string{"--log-level=verbose"}, wantErr: `--log-level / PHASEGATE_LOG_LEVEL must be debug, info, warn or error (got "verbose")`},
		{name: "slog's offsets are not levels", env: map[string]string{"PHASEGATE_LOG_LEVEL": "info+2"}, wantErr: "--log-level"},
		{name: "capitals", args: []string{"--log-level=INFO"}, wantErr: "--log-level"},
		{name: "unknown format", env: map[string]string{"PHASEGATE_LOG_FORMAT": "logfmt"}, wantErr: `--log-format / PHASEGATE_LOG_FORMAT must be json or text (got "logfmt")`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			getenv := func(k string) string {
				if v, ok := tc.env[k]; ok {
					return v
				}
				return base[k]
			}
			var out, errb bytes.Buffer
			s, err := parseServe(tc.args, getenv, &out, &errb)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				var stdout, stderr bytes.Buffer
				if code := Main(tc.args, getenv, &stdout, &stderr, "test"); code != 2 || !strings.Contains(stderr.String(), tc.wantErr) {
					t.Errorf("Main: exit %d, stderr %q; want 2 naming the flag", code, stderr.String())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.logLevel != tc.wantLevel || s.logFormat != tc.wantFormat {
				t.Errorf("level %v, format %q; want %v, %q", s.logLevel, s.logFormat, tc.wantLevel, tc.wantFormat)
			}
		})
	}
}

func TestNewLogger(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		level  slog.Level
		format string
		want   string // the whole output of one Debug and one Warn
	}{
		{name: "json at info", level: slog.LevelInfo, format: "json", want: `{"level":"WARN","msg":"w","n":1}` + "\n"},
		{name: "text at info", level: slog.LevelInfo, format: "text", want: "level=WARN msg=w n=1\n"},
		{name: "json at debug", level: slog.LevelDebug, format: "json", want: `{"level":"DEBUG","msg":"d","n":0}` + "\n" + `{"level":"WARN","msg":"w","n":1}` + "\n"},
		{name: "text at error", level: slog.LevelError, format: "text", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			l := newLogger(&out, tc.level, tc.format)
			// Without the time, so that the output is exact.
			l = slog.New(withoutTime{l.Handler()})
			l.Debug("d", "n", 0)
			l.Warn("w", "n", 1)
			if out.String() != tc.want {
				t.Errorf("log %q, want %q", out.String(), tc.want)
			}
		})
	}
}

// withoutTime drops records' time, which handlers then leave out.
type withoutTime struct{ slog.Handler }

func (h withoutTime) Handle(ctx context.Context, r slog.Record) error {
	r.Time = time.Time{}
	return h.Handler.Handle(ctx, r)
}

// TestProbe: --probe (the image's health check) exits 0 only when the serve
// on --addr's port answers /readyz 200; it needs none of serve's secrets.
func TestProbe(t *testing.T) {
	t.Parallel()
	var ready atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" && ready.Load() {
			w.WriteHeader(http.StatusOK)
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	tests := []struct {
		name  string
		args  []string
		env   map[string]string
		ready bool
		want  int
	}{
		{name: "ready", args: []string{"--probe", "--addr", srv.Listener.Addr().String()}, ready: true, want: 0},
		{name: "every interface means loopback", args: []string{"--probe", "--addr", ":" + port}, ready: true, want: 0},
		{name: "variables", env: map[string]string{"PHASEGATE_PROBE": "true", "PHASEGATE_ADDR": "0.0.0.0:" + port}, ready: true, want: 0},
		{name: "not ready", args: []string{"--probe", "--addr", srv.Listener.Addr().String()}, want: 1},
		{name: "nothing listening", args: []string{"--probe", "--addr", closedAddr}, ready: true, want: 1},
		{name: "a bad variable", env: map[string]string{"PHASEGATE_PROBE": "yes please"}, want: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ready.Store(tc.ready)
			var stdout, stderr bytes.Buffer
			if code := Main(tc.args, func(k string) string { return tc.env[k] }, &stdout, &stderr, "test"); code != tc.want {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.want, stderr.String())
			}
		})
	}
}

// TestReadinessLogsTheFirstFailure: the readiness probe's GET /app is
// not retried by the client (the probe tries again itself), so a GitHub
// that fails it is logged at its first answer: before, the client's
// backoff hid an unreachable GitHub for about 20 s.
func TestReadinessLogsTheFirstFailure(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.FailNext(1, http.StatusBadGateway, "/app")
	h.start()
	h.waitReady()
	if n := len(h.logs.lines("not ready: GitHub did not answer GET /app")); n != 1 {
		t.Errorf("%d not-ready lines before ready, want 1 (the first attempt's):\n%s", n, h.logs.String())
	}
}
