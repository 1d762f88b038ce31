package ghclient

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/ghfake"
)

var (
	keyOnce          sync.Once
	appKey, otherKey *rsa.PrivateKey
)

// testKeys generates the App's RSA key and an unrelated one, once.
func testKeys(t *testing.T) (*rsa.PrivateKey, *rsa.PrivateKey) {
	t.Helper()
	keyOnce.Do(func() {
		var err error
		if appKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			t.Fatal(err)
		}
		if otherKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			t.Fatal(err)
		}
	})
	if appKey == nil || otherKey == nil {
		t.Fatal("no test keys")
	}
	return appKey, otherKey
}

func pemOf(k *rsa.PrivateKey) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
}

func TestInstallationTransport(t *testing.T) {
	key, other := testKeys(t)
	const appID, installationID = 4242, 77
	tests := []struct {
		name         string
		signWith     *rsa.PrivateKey
		installation int64
		baseURL      func(*ghfake.Server) string
		fail         int // token requests answered 502 first

		wantErr        string
		wantTokenCalls int // exactly, or at least when faults are injected
	}{
		{name: "token minted once and used", signWith: key, installation: installationID, wantTokenCalls: 1},
		{name: "enterprise url as GITHUB_API_URL gives it", signWith: key, installation: installationID,
			baseURL: func(f *ghfake.Server) string { return strings.TrimSuffix(f.EnterpriseURL(), "/") }, wantTokenCalls: 1},
		{name: "flaky token endpoint is retried", signWith: key, installation: installationID, fail: 2, wantTokenCalls: 3},
		{name: "a JWT signed with the wrong key is refused, not retried", signWith: other, installation: installationID,
			wantErr: "could not refresh installation id 77's token", wantTokenCalls: 1},
		{name: "unknown installation", signWith: key, installation: 999,
			wantErr: "could not refresh installation id 999's token", wantTokenCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := ghfake.New() // real clock: ghinstallation checks expiry with time.Now
			defer f.Close()
			f.AddApp(appID, "phasegate", &key.PublicKey)
			f.AddInstallation(appID, installationID)
			f.AddRepo(owner, repo, "main")
			n := f.AddIssue(owner, repo, "Feature", "", "alice")
			f.FailNext(tt.fail, 502, "/access_tokens")
			base := f.URL()
			if tt.baseURL != nil {
				base = tt.baseURL(f)
			}
			itr, err := NewInstallationTransport(appID, tt.installation, pemOf(tt.signWith), base, nil)
			if err != nil {
				t.Fatal(err)
			}
			c, err := New(Options{BaseURL: base, Transport: itr, BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			ctx := ctxT(t)
			_, err = c.DefaultBranch(ctx, owner, repo)
			tokenCalls := func() int { return f.CountCalls("POST", "/app/installations/") }
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "PRIVATE KEY") {
					t.Fatal("the error carries the key")
				}
				if got := tokenCalls(); got != tt.wantTokenCalls {
					t.Fatalf("%d token requests, want %d", got, tt.wantTokenCalls)
				}
				return
			}
			if err != nil {
				t.Fatalf("DefaultBranch: %v", err)
			}
			cm, err := c.CreateIssueComment(ctx, owner, repo, n, "outcome")
			if err != nil {
				t.Fatal(err)
			}
			if cm.User != "phasegate[bot]" || !cm.IsBot() {
				t.Fatalf("comment by %q (%s), want the app's bot", cm.User, cm.UserType)
			}
			for i := 0; i < 2; i++ {
				if _, err := c.ListIssueComments(ctx, owner, repo, n); err != nil {
					t.Fatal(err)
				}
			}
			if got := tokenCalls(); got != tt.wantTokenCalls {
				t.Fatalf("%d token requests, want %d", got, tt.wantTokenCalls)
			}
			if c.Stats().NotModified != 1 {
				t.Fatalf("NotModified %d: the cache keyed by installation did not revalidate", c.Stats().NotModified)
			}
			for _, call := range f.Calls() {
				// A host that is not api.* is GitHub Enterprise: the token
				// request and the API calls all go under /api/v3.
				if !call.Enterprise {
					t.Fatalf("call %+v not under /api/v3", call)
				}
				want := "phasegate[bot]"
				if strings.HasPrefix(call.Path, "/app/") {
					want = "app:4242"
				}
				if call.Status < 500 && call.Login != want {
					t.Fatalf("call %s %s acted as %q, want %q", call.Method, call.Path, call.Login, want)
				}
			}
		})
	}
}

func TestInstallationTransportArguments(t *testing.T) {
	key, _ := testKeys(t)
	tests := []struct {
		name         string
		appID, inst  int64
		pem          []byte
		baseURL      string
		wantErr      string
		mustNotLeak  string
		wantIdentity string
	}{
		{name: "ok", appID: 1, inst: 2, pem: pemOf(key), wantIdentity: "app-1/installation-2"},
		{name: "not a key", appID: 1, inst: 2, pem: []byte("-----BEGIN RSA PRIVATE KEY-----\nc2VjcmV0\n-----END RSA PRIVATE KEY-----\n"),
			wantErr: "github app 1: read private key", mustNotLeak: "c2VjcmV0"},
		{name: "no app id", appID: 0, inst: 2, pem: pemOf(key), wantErr: "app id 0"},
		{name: "no installation id", appID: 1, inst: 0, pem: pemOf(key), wantErr: "installation id 0"},
		{name: "bad base url", appID: 1, inst: 2, pem: pemOf(key), baseURL: "::", wantErr: "github api url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt, err := NewInstallationTransport(tt.appID, tt.inst, tt.pem, tt.baseURL, nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if tt.mustNotLeak != "" && strings.Contains(err.Error(), tt.mustNotLeak) {
					t.Fatalf("error %q leaks the key", err)
				}
				if rt != nil {
					t.Fatal("a transport with the error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c, err := New(Options{Transport: rt})
			if err != nil {
				t.Fatal(err)
			}
			ct := findCache(c)
			if ct == nil || ct.identity != tt.wantIdentity {
				t.Fatalf("cache identity %v, want %q", ct, tt.wantIdentity)
			}
		})
	}
}

// findCache digs the ETag layer out of a client's transport stack.
func findCache(c *Client) *cacheTransport {
	rt := c.gh.Client().Transport
	for rt != nil {
		switch t := rt.(type) {
		case *cacheTransport:
			return t
		case *authTransport:
			rt = t.next
		default:
			return nil
		}
	}
	return nil
}
