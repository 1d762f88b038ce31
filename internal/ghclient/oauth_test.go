package ghclient

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

const (
	oauthApp     = int64(77)
	oauthSlug    = "phasegate-test"
	clientID     = "Iv1.phasegate"
	clientSecret = "shh-client-secret"
	callbackURL  = "https://phasegate.example.com/oauth/callback"
)

// oauthEnv is newEnv with the App's OAuth client registered, installed on
// acme (every repository), and alice signed in to the fake's browser.
func oauthEnv(t *testing.T) (*env, *OAuth) {
	t.Helper()
	e := newEnv(t, Options{})
	e.fake.AddAppToken("tok-app", oauthApp, oauthSlug)
	e.fake.AddInstallation(oauthApp, 500)
	e.fake.SetInstallationRepos(500, owner, owner+"/"+repo)
	e.fake.SetOAuthApp(oauthApp, clientID, clientSecret, callbackURL)
	e.fake.SetOAuthUser("alice")
	e.fake.SetPermission(owner, repo, "alice", "write")
	return e, NewOAuth(OAuthConfig{ClientID: clientID, ClientSecret: clientSecret, WebURL: e.fake.WebURL(), RedirectURL: callbackURL})
}

// browse follows GitHub's authorize page as a browser whose person
// consents, and returns the query GitHub sent the browser back with.
func browse(t *testing.T, authURL string) url.Values {
	t.Helper()
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize answered %d, want 302", resp.StatusCode)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(loc.String(), callbackURL+"?") {
		t.Fatalf("redirected to %s, want the callback", loc)
	}
	return loc.Query()
}

func TestOAuthWebFlow(t *testing.T) {
	e, o := oauthEnv(t)
	ctx := ctxT(t)
	verifier := oauth2.GenerateVerifier()
	auth := o.AuthCodeURL("state-123", verifier)
	u, _ := url.Parse(auth)
	for k, want := range map[string]string{"client_id": clientID, "redirect_uri": callbackURL, "state": "state-123",
		"code_challenge_method": "S256", "response_type": "code"} {
		if got := u.Query().Get(k); got != want {
			t.Errorf("authorize %s = %q, want %q", k, got, want)
		}
	}
	if u.Query().Get("code_challenge") == "" || strings.Contains(auth, verifier) || strings.Contains(auth, clientSecret) {
		t.Errorf("authorize URL %s: want the challenge, never the verifier or the secret", auth)
	}
	back := browse(t, auth)
	if back.Get("state") != "state-123" || back.Get("code") == "" {
		t.Fatalf("callback query = %v", back)
	}
	tok, err := o.Exchange(ctx, back.Get("code"), verifier)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok.AccessToken, "ghu_") || time.Until(tok.Expiry) < 7*time.Hour || time.Until(tok.Expiry) > 9*time.Hour {
		t.Errorf("token = %+v, want a ghu_ token expiring in eight hours", tok)
	}
	e.fake.SetUserName("alice", "Alice Liddell")
	uc, err := NewUser(tok.AccessToken, Options{BaseURL: e.fake.URL(), Now: e.clock.Now, Sleep: e.clock.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	me, err := uc.CurrentUser(ctx)
	if err != nil || me.Login != "alice" || me.Name != "Alice Liddell" || me.ID == 0 || me.AvatarURL == "" {
		t.Errorf("CurrentUser = %+v, %v", me, err)
	}
	// The person posts as themselves, through the App.
	e.fake.AddIssue(owner, repo, "an issue", "", "bob")
	posted, err := uc.CreateIssueComment(ctx, owner, repo, 1, "/resolve D-001 approve")
	if err != nil || posted.User != "alice" || posted.ViaApp != oauthSlug {
		t.Fatalf("comment = %+v, %v; want alice's, via %s", posted, err, oauthSlug)
	}
	listed, err := e.c.ListIssueComments(ctx, owner, repo, 1)
	if err != nil || len(listed) != 1 || listed[0].ViaApp != oauthSlug || listed[0].User != "alice" {
		t.Errorf("listed = %+v, %v", listed, err)
	}
	since, err := e.c.ListRepoComments(ctx, owner, repo, epoch.Add(-time.Hour))
	if err != nil || len(since) != 1 || since[0].ViaApp != oauthSlug {
		t.Errorf("repository listing = %+v, %v", since, err)
	}
	mine, err := e.c.CreateIssueComment(ctx, owner, repo, 1, "a comment of a token of its own")
	if err != nil || mine.ViaApp != "" {
		t.Errorf("a person's own token's comment = %+v, %v; want no App", mine, err)
	}
}

func TestOAuthExchangeRefused(t *testing.T) {
	tests := []struct {
		name string
		// act takes a fresh code and verifier and exchanges them wrongly.
		act  func(t *testing.T, e *env, o *OAuth, code, verifier string) error
		want string
	}{
		{name: "a verifier that is not the challenge's", want: "bad_code_verifier",
			act: func(t *testing.T, _ *env, o *OAuth, code, _ string) error {
				_, err := o.Exchange(context.Background(), code, oauth2.GenerateVerifier())
				return err
			}},
		{name: "no verifier", want: "bad_code_verifier",
			act: func(t *testing.T, _ *env, o *OAuth, code, _ string) error {
				_, err := o.Exchange(context.Background(), code, "")
				return err
			}},
		{name: "a code used once already", want: "bad_verification_code",
			act: func(t *testing.T, _ *env, o *OAuth, code, verifier string) error {
				if _, err := o.Exchange(context.Background(), code, verifier); err != nil {
					t.Fatal(err)
				}
				_, err := o.Exchange(context.Background(), code, verifier)
				return err
			}},
		{name: "a code after ten minutes", want: "bad_verification_code",
			act: func(t *testing.T, e *env, o *OAuth, code, verifier string) error {
				e.clock.Advance(10*time.Minute + time.Second)
				_, err := o.Exchange(context.Background(), code, verifier)
				return err
			}},
		{name: "a code GitHub never issued", want: "bad_verification_code",
			act: func(t *testing.T, _ *env, o *OAuth, _, verifier string) error {
				_, err := o.Exchange(context.Background(), "0123456789abcdef0123", verifier)
				return err
			}},
		{name: "a wrong client secret", want: "incorrect_client_credentials",
			act: func(t *testing.T, e *env, _ *OAuth, code, verifier string) error {
				bad := NewOAuth(OAuthConfig{ClientID: clientID, ClientSecret: "guess", WebURL: e.fake.WebURL(), RedirectURL: callbackURL})
				_, err := bad.Exchange(context.Background(), code, verifier)
				return err
			}},
		{name: "another redirect_uri than the code's", want: "redirect_uri_mismatch",
			act: func(t *testing.T, e *env, _ *OAuth, code, verifier string) error {
				other := NewOAuth(OAuthConfig{ClientID: clientID, ClientSecret: clientSecret, WebURL: e.fake.WebURL(), RedirectURL: callbackURL + "/elsewhere"})
				_, err := other.Exchange(context.Background(), code, verifier)
				return err
			}},
		{name: "no code", want: "github sent no code",
			act: func(t *testing.T, _ *env, o *OAuth, _, verifier string) error {
				_, err := o.Exchange(context.Background(), "", verifier)
				return err
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, o := oauthEnv(t)
			verifier := oauth2.GenerateVerifier()
			code := browse(t, o.AuthCodeURL("s", verifier)).Get("code")
			err := tt.act(t, e, o, code, verifier)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one naming %q", err, tt.want)
			}
			for _, secret := range []string{code, verifier, clientSecret} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error %q names a secret", err)
				}
			}
			// GitHub answers the refusal 200, with the error in the body.
			if got := statuses(e.fake, http.MethodPost, "/login/oauth/access_token"); len(got) == 0 && tt.want != "github sent no code" {
				t.Errorf("no token request was made")
			} else if len(got) > 0 && got[len(got)-1] != http.StatusOK {
				t.Errorf("token endpoint statuses = %v, want 200", got)
			}
		})
	}
}

func TestOAuthDeclinedOrMisdirected(t *testing.T) {
	tests := []struct {
		name     string
		user     string
		redirect string
		want     string
	}{
		{name: "the person declines", user: "", redirect: callbackURL, want: "access_denied"},
		{name: "a redirect_uri off the callback's host", user: "alice", redirect: "https://evil.example.com/oauth/callback", want: "redirect_uri_mismatch"},
		{name: "a redirect_uri beside the callback's path", user: "alice", redirect: "https://phasegate.example.com/oauth/callbackx", want: "redirect_uri_mismatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := oauthEnv(t)
			e.fake.SetOAuthUser(tt.user)
			o := NewOAuth(OAuthConfig{ClientID: clientID, ClientSecret: clientSecret, WebURL: e.fake.WebURL(), RedirectURL: tt.redirect})
			back := browse(t, o.AuthCodeURL("st", oauth2.GenerateVerifier()))
			if back.Get("error") != tt.want || back.Get("code") != "" || back.Get("state") != "st" {
				t.Errorf("callback query = %v, want error %s with the state and no code", back, tt.want)
			}
		})
	}
}

// TestOAuthRevokeToken: the App revokes a person's token with its client
// credentials, after which the token reads nothing; wrong credentials, a
// token revoked already and another App's token are errors that name
// neither the token nor the secret.
func TestOAuthRevokeToken(t *testing.T) {
	tests := []struct {
		name    string
		secret  string // the client secret RevokeToken authenticates with
		token   string // "" the person's token; else a token of AddUserToken
		twice   bool
		wantErr bool
	}{
		{name: "the person's token", secret: clientSecret},
		{name: "a wrong client secret", secret: "not-the-secret", wantErr: true},
		{name: "a token revoked already", secret: clientSecret, twice: true, wantErr: true},
		{name: "another App's token", secret: clientSecret, token: "ghu_other_app", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := oauthEnv(t)
			ctx := ctxT(t)
			tok := "ghu_alice_pages"
			e.fake.AddUserToken(tok, "alice", oauthApp)
			revoke := tok
			if tt.token != "" {
				e.fake.AddAppToken("tok-other", 99, "other")
				e.fake.AddUserToken(tt.token, "alice", 99)
				revoke = tt.token
			}
			o := NewOAuth(OAuthConfig{ClientID: clientID, ClientSecret: tt.secret, WebURL: e.fake.WebURL(),
				API: Options{BaseURL: e.fake.URL(), Now: e.clock.Now, Sleep: e.clock.Sleep}})
			if tt.twice {
				if err := o.RevokeToken(ctx, revoke); err != nil {
					t.Fatal(err)
				}
			}
			err := o.RevokeToken(ctx, revoke)
			if (err != nil) != tt.wantErr {
				t.Fatalf("RevokeToken = %v, want an error %v", err, tt.wantErr)
			}
			if err != nil && (strings.Contains(err.Error(), revoke) || strings.Contains(err.Error(), tt.secret)) {
				t.Errorf("the error names the token or the secret: %v", err)
			}
			uc, err := NewUser(tok, Options{BaseURL: e.fake.URL(), Now: e.clock.Now, Sleep: e.clock.Sleep, MaxAttempts: 1})
			if err != nil {
				t.Fatal(err)
			}
			_, err = uc.CurrentUser(ctx)
			if revoked := err != nil; revoked != (tt.token == "" && tt.secret == clientSecret) {
				t.Errorf("after the revocation, the person's token reads /user: %v", err)
			}
		})
	}
}
