package ghfake_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/ghfake"
)

// The OAuth web flow as a client without golang.org/x/oauth2 sees it: the
// answers' shapes GitHub documents, form-encoded by default and JSON when
// asked.
func TestOAuthTokenEndpointShapes(t *testing.T) {
	const callback = "http://127.0.0.1:1/cb"
	verifier := "a-verifier-of-at-least-forty-three-characters-long-ok"
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	tests := []struct {
		name      string
		authorize url.Values
		wantAuth  int    // the authorize answer's status
		wantError string // the error of the redirect, or of the token answer
		accept    string
		basic     bool // client credentials in an Authorization: Basic header
	}{
		{name: "form answer", authorize: url.Values{"code_challenge": {challenge}, "code_challenge_method": {"S256"}}, wantAuth: 302},
		{name: "json answer", authorize: url.Values{"code_challenge": {challenge}, "code_challenge_method": {"S256"}}, wantAuth: 302, accept: "application/json"},
		{name: "credentials in basic auth", authorize: url.Values{}, wantAuth: 302, basic: true},
		{name: "plain PKCE is refused", authorize: url.Values{"code_challenge": {verifier}, "code_challenge_method": {"plain"}}, wantAuth: 302, wantError: "invalid_request"},
		{name: "an unknown client", authorize: url.Values{"client_id": {"Iv1.nobody"}}, wantAuth: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := ghfake.New()
			defer f.Close()
			f.AddAppToken("tok-app", 9, "app9")
			f.SetOAuthApp(9, "Iv1.nine", "secret9", callback)
			f.SetOAuthUser("alice")
			q := url.Values{"client_id": {"Iv1.nine"}, "state": {"xyz"}}
			for k, v := range tt.authorize {
				q[k] = v
			}
			resp, err := noFollow.Get(f.WebURL() + "/login/oauth/authorize?" + q.Encode())
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.wantAuth {
				t.Fatalf("authorize = %d, want %d", resp.StatusCode, tt.wantAuth)
			}
			if resp.StatusCode != http.StatusFound {
				return
			}
			loc, _ := url.Parse(resp.Header.Get("Location"))
			if loc.Query().Get("state") != "xyz" || loc.Query().Get("error") != tt.wantError {
				t.Fatalf("redirect = %s", loc)
			}
			if tt.wantError != "" {
				return
			}
			form := url.Values{"code": {loc.Query().Get("code")}, "code_verifier": {verifier}}
			if !tt.basic {
				form.Set("client_id", "Iv1.nine")
				form.Set("client_secret", "secret9")
			}
			req, _ := http.NewRequest(http.MethodPost, f.WebURL()+"/login/oauth/access_token", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if tt.accept != "" {
				req.Header.Set("Accept", tt.accept)
			}
			if tt.basic {
				req.SetBasicAuth("Iv1.nine", "secret9")
			}
			resp, err = http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var tok string
			if tt.accept == "application/json" {
				var m map[string]any
				if err := json.Unmarshal(body, &m); err != nil {
					t.Fatalf("json answer %s: %v", body, err)
				}
				if m["expires_in"] != float64(28800) || m["token_type"] != "bearer" {
					t.Errorf("json answer = %s", body)
				}
				tok, _ = m["access_token"].(string)
			} else {
				v, _ := url.ParseQuery(string(body))
				if v.Get("expires_in") != "28800" || !strings.HasPrefix(v.Get("refresh_token"), "ghr_") {
					t.Errorf("form answer = %s", body)
				}
				tok = v.Get("access_token")
			}
			// The token acts as alice.
			req, _ = http.NewRequest(http.MethodGet, f.URL()+"user", nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err = http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var u struct{ Login string }
			_ = json.NewDecoder(resp.Body).Decode(&u)
			resp.Body.Close()
			if resp.StatusCode != 200 || u.Login != "alice" {
				t.Errorf("/user with the token = %d %+v", resp.StatusCode, u)
			}
		})
	}
}
