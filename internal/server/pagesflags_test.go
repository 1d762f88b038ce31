package server

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/pages"
)

func TestParsePages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := strings.Repeat("k", 32)
	keyFile := filepath.Join(dir, "session")
	if err := os.WriteFile(keyFile, []byte(key+"\n"+strings.Repeat("o", 40)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	secretFile := filepath.Join(dir, "client-secret")
	if err := os.WriteFile(secretFile, []byte("cs-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	all := map[string]string{"PHASEGATE_PUBLIC_URL": "https://phasegate.example.com", "PHASEGATE_OAUTH_CLIENT_ID": "Iv23liTEST",
		"PHASEGATE_OAUTH_CLIENT_SECRET": "cs-Sekr1t", "PHASEGATE_SESSION_KEY": key}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range all {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name       string
		env        map[string]string
		args       []string
		wantOff    bool
		wantErr    string
		wantWeb    string
		wantKeys   int
		wantSecret string
	}{
		{name: "off", env: map[string]string{}, wantOff: true},
		{name: "on", env: all, wantWeb: "https://github.com", wantKeys: 1, wantSecret: "cs-Sekr1t"},
		{name: "files", env: with("PHASEGATE_OAUTH_CLIENT_SECRET", "", "PHASEGATE_SESSION_KEY", ""),
			args: []string{"--oauth-client-secret-file", secretFile, "--session-key-file", keyFile}, wantWeb: "https://github.com", wantKeys: 2, wantSecret: "cs-from-file"},
		{name: "rotation in the variable", env: with("PHASEGATE_SESSION_KEY", key+","+strings.Repeat("p", 32)), wantWeb: "https://github.com", wantKeys: 2, wantSecret: "cs-Sekr1t"},
		{name: "GHES", env: with("PHASEGATE_GITHUB_API_URL", "https://ghe.corp.example/api/v3"), wantWeb: "https://ghe.corp.example", wantKeys: 1, wantSecret: "cs-Sekr1t"},
		{name: "web URL given", env: with("PHASEGATE_GITHUB_WEB_URL", "https://ghe.corp.example/"), wantWeb: "https://ghe.corp.example", wantKeys: 1, wantSecret: "cs-Sekr1t"},
		{name: "localhost for tests", env: with("PHASEGATE_PUBLIC_URL", "http://127.0.0.1:8080"), wantWeb: "https://github.com", wantKeys: 1, wantSecret: "cs-Sekr1t"},
		{name: "only some", env: map[string]string{"PHASEGATE_PUBLIC_URL": "https://phasegate.example.com"}, wantErr: "missing --oauth-client-id"},
		{name: "short key", env: with("PHASEGATE_SESSION_KEY", "short-Sekr1t"), wantErr: "at least 32"},
		{name: "one short key of two", env: with("PHASEGATE_SESSION_KEY", key+",short-Sekr1t"), wantErr: "session key 2 is 12 bytes"},
		{name: "http public URL", env: with("PHASEGATE_PUBLIC_URL", "http://phasegate.example.com"), wantErr: "--public-url / PHASEGATE_PUBLIC_URL: public URL \"http://phasegate.example.com\" must be https"},
		{name: "public URL with a path", env: with("PHASEGATE_PUBLIC_URL", "https://phasegate.example.com/pg"), wantErr: "no path"},
		{name: "http GitHub", env: with("PHASEGATE_GITHUB_WEB_URL", "http://ghe.corp.example"), wantErr: "github-web-url"},
		{name: "secret twice", env: all, args: []string{"--oauth-client-secret-file", secretFile}, wantErr: "set one"},
		{name: "bad client id", env: with("PHASEGATE_OAUTH_CLIENT_ID", "a b"), wantErr: "client ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"PHASEGATE_APP_ID": "42", "PHASEGATE_WEBHOOK_SECRET": "s1", "PHASEGATE_PRIVATE_KEY": "pem"}
			for k, v := range tt.env {
				env[k] = v
			}
			s, err := parseServe(tt.args, func(k string) string { return env[k] }, io.Discard, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "Sekr1t") {
					t.Errorf("the error echoes a secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantOff {
				if s.pages != nil {
					t.Errorf("pages on: %+v", s.pages)
				}
				return
			}
			if s.pages == nil {
				t.Fatal("pages off")
			}
			if s.pages.GitHubWebURL != tt.wantWeb || len(s.pages.SessionKeys) != tt.wantKeys || s.pages.ClientSecret != tt.wantSecret {
				t.Errorf("web %q, %d keys, secret %q", s.pages.GitHubWebURL, len(s.pages.SessionKeys), s.pages.ClientSecret)
			}
		})
	}
}

func TestMainRefusesBadPages(t *testing.T) {
	t.Parallel()
	env := map[string]string{"PHASEGATE_APP_ID": "42", "PHASEGATE_WEBHOOK_SECRET": "s1", "PHASEGATE_PRIVATE_KEY": "pem",
		"PHASEGATE_PUBLIC_URL": "https://phasegate.example.com", "PHASEGATE_OAUTH_CLIENT_ID": "Iv23liTEST",
		"PHASEGATE_OAUTH_CLIENT_SECRET": "cs-Sekr1t", "PHASEGATE_SESSION_KEY": "short-Sekr1t-key"}
	var stdout, stderr bytes.Buffer
	if code := Main(nil, func(k string) string { return env[k] }, &stdout, &stderr, "test"); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if strings.Contains(stderr.String()+stdout.String(), "Sekr1t") || !strings.Contains(stderr.String(), "session key") {
		t.Errorf("stderr %q", stderr.String())
	}
}

// The pages take every path but the webhook's, health's and metrics';
// POST / stays the webhook.
func TestPagesMounted(t *testing.T) {
	t.Parallel()
	var gotSource *pages.Source
	mounted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Header().Set("X-Pages", "1") })
	s, err := New(Config{Secrets: [][]byte{testSecret}, AppID: appID, PrivateKeyPEM: pemOf(appKey(t)),
		Pages: func(src *pages.Source, _ ghclient.Options) (http.Handler, error) {
			gotSource = src
			return mounted, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if gotSource == nil {
		t.Fatal("the pages got no source")
	}
	tests := []struct {
		method, path string
		pages        bool
	}{
		{method: "GET", path: "/", pages: true},
		{method: "GET", path: "/inbox", pages: true},
		{method: "GET", path: "/acme/app/issues/7", pages: true},
		{method: "POST", path: "/acme/app/issues/7/resolve", pages: true},
		{method: "POST", path: "/", pages: false},
		{method: "POST", path: "/webhook", pages: false},
		{method: "GET", path: "/healthz", pages: false},
		{method: "GET", path: "/metrics", pages: false},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			w := httptest.NewRecorder()
			s.Handler().ServeHTTP(w, httptest.NewRequest(tt.method, tt.path, nil))
			if got := w.Header().Get("X-Pages") == "1"; got != tt.pages {
				t.Errorf("served by the pages: %v, want %v (status %d)", got, tt.pages, w.Code)
			}
		})
	}
}

// The pages' OAuth client sends people to GitHub with the PKCE challenge
// of the verifier (RFC 7636's example) and the callback under the public
// URL.
func TestPagesAuthCodeURL(t *testing.T) {
	t.Parallel()
	o := (&PagesOptions{PublicURL: "https://pg.example", ClientID: "Iv1.x", GitHubWebURL: "https://github.com"}).oauth(ghclient.Options{})
	got := o.AuthCodeURL("st", "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
	if !strings.Contains(got, "code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM") ||
		!strings.HasPrefix(got, "https://github.com/login/oauth/authorize?") || !strings.Contains(got, "redirect_uri=https%3A%2F%2Fpg.example%2Foauth%2Fcallback") {
		t.Errorf("AuthCodeURL %q", got)
	}
}
