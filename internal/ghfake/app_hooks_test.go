package ghfake

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func appJWT(t *testing.T, k *rsa.PrivateKey, appID int64) string {
	t.Helper()
	now := time.Now()
	h, _ := json.Marshal(map[string]any{"alg": "RS256", "typ": "JWT"})
	c, _ := json.Marshal(map[string]any{"iss": fmt.Sprint(appID), "iat": now.Add(-30 * time.Second).Unix(), "exp": now.Add(5 * time.Minute).Unix()})
	in := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	sum := sha256.Sum256([]byte(in))
	sig, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return in + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// installationToken mints an installation token the way an App does.
func installationToken(t *testing.T, s *Server, jwt string, installation int64) string {
	t.Helper()
	a := do(t, s, "POST", fmt.Sprintf("/app/installations/%d/access_tokens", installation), "", "", "Authorization", "Bearer "+jwt)
	if a.status != 201 {
		t.Fatalf("access token: %d %s", a.status, a.body)
	}
	var out struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(a.body, &out); err != nil {
		t.Fatal(err)
	}
	return out.Token
}

func TestAppEndpointsAuth(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s := newTestServer(t)
	s.AddApp(7, "phasegate", &key.PublicKey)
	s.AddInstallation(7, 11)
	s.AddInstallation(7, 12)
	s.AddRepo("acme", "gadgets", "main")
	s.AddRepo("other", "thing", "main")
	s.SetInstallationRepos(12, "acme", "acme/gadgets")
	jwt := appJWT(t, key, 7)
	tok11 := installationToken(t, s, jwt, 11)
	tok12 := installationToken(t, s, jwt, 12)

	tests := []struct {
		name       string
		method     string
		path       string
		auth       string
		wantStatus int
		wantBody   string // a substring
	}{
		{name: "app with its JWT", method: "GET", path: "/app", auth: "Bearer " + jwt, wantStatus: 200, wantBody: `"slug":"phasegate"`},
		{name: "app with a token", method: "GET", path: "/app", auth: "token " + tok, wantStatus: 401},
		{name: "app anonymously", method: "GET", path: "/app", wantStatus: 401},
		{name: "installations", method: "GET", path: "/app/installations", auth: "Bearer " + jwt, wantStatus: 200, wantBody: `"account":{"avatar_url"`},
		{name: "installations need the JWT", method: "GET", path: "/app/installations", auth: "token " + tok11, wantStatus: 401},
		{name: "all repositories", method: "GET", path: "/installation/repositories", auth: "token " + tok11, wantStatus: 200, wantBody: `"total_count":3`},
		{name: "selected repositories", method: "GET", path: "/installation/repositories", auth: "token " + tok12, wantStatus: 200, wantBody: `"total_count":1`},
		{name: "repositories need an installation token", method: "GET", path: "/installation/repositories", auth: "token " + tok, wantStatus: 403},
		{name: "repositories refuse the JWT", method: "GET", path: "/installation/repositories", auth: "Bearer " + jwt, wantStatus: 401},
		{name: "deliveries need the JWT", method: "GET", path: "/app/hook/deliveries", auth: "token " + tok11, wantStatus: 401},
		{name: "redelivering an unknown delivery", method: "POST", path: "/app/hook/deliveries/999999/attempts", auth: "Bearer " + jwt, wantStatus: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hdr []string
			if tt.auth != "" {
				hdr = []string{"Authorization", tt.auth}
			}
			a := do(t, s, tt.method, tt.path, "", "", hdr...)
			if a.status != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", a.status, tt.wantStatus, a.body)
			}
			if !strings.Contains(string(a.body), tt.wantBody) {
				t.Fatalf("body %s lacks %s", a.body, tt.wantBody)
			}
		})
	}
}

func TestRedeliveryIsSentSigned(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte("hook secret")
	tests := []struct {
		name       string
		answer     int
		wantStatus string
	}{
		{name: "target accepts", answer: 202, wantStatus: "OK"},
		{name: "target fails", answer: 503, wantStatus: "Invalid HTTP Response: 503"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t)
			s.AddApp(7, "phasegate", &key.PublicKey)
			payload := []byte(`{"action":"created","installation":{"id":11}}`)
			var got *http.Request
			var gotBody []byte
			s.SetHookTarget(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = r
				gotBody, _ = io.ReadAll(r.Body)
				w.WriteHeader(tt.answer)
			}), secret)
			id := s.AddHookDelivery(HookDelivery{GUID: "guid-1", Event: "issue_comment", Action: "created", StatusCode: 503, InstallationID: 11, Payload: payload})
			jwt := appJWT(t, key, 7)
			if a := do(t, s, "POST", fmt.Sprintf("/app/hook/deliveries/%d/attempts", id), "", "", "Authorization", "Bearer "+jwt); a.status != 202 {
				t.Fatalf("redeliver: %d %s", a.status, a.body)
			}
			s.WaitHookDeliveries()
			if got == nil {
				t.Fatal("the target got nothing")
			}
			if sig := got.Header.Get("X-Hub-Signature-256"); sig != SignWebhook(secret, payload) {
				t.Fatalf("signature %q", sig)
			}
			if got.Header.Get("X-GitHub-Delivery") != "guid-1" || got.Header.Get("X-GitHub-Event") != "issue_comment" || string(gotBody) != string(payload) {
				t.Fatalf("headers %v body %s", got.Header, gotBody)
			}
			ds := s.HookDeliveries()
			if len(ds) != 2 || !ds[1].Redelivery || ds[1].GUID != "guid-1" || ds[1].Status != tt.wantStatus || ds[0].Status != "Invalid HTTP Response: 503" {
				t.Fatalf("deliveries %+v", ds)
			}
			a := do(t, s, "GET", "/app/hook/deliveries", "", "", "Authorization", "Bearer "+jwt)
			var list []struct {
				ID         int64  `json:"id"`
				Redelivery bool   `json:"redelivery"`
				Status     string `json:"status"`
			}
			if err := json.Unmarshal(a.body, &list); err != nil || len(list) != 2 || !list[0].Redelivery {
				t.Fatalf("listing (newest first) %s", a.body)
			}
		})
	}
}
