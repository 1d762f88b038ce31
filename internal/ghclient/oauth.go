package ghclient

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// The person's side: a GitHub App's user-to-server OAuth web flow (the
// authorization code flow with state and PKCE) and the token it yields.
// `phasegate serve`'s pages sign a person in with it and then read GitHub,
// and post their own `/resolve` comment, with that person's token through a
// Client of NewUser.
//
// GitHub's web flow (https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-user-access-token-for-a-github-app):
// the browser goes to WEB/login/oauth/authorize?client_id&redirect_uri&state
// &code_challenge&code_challenge_method=S256; after consent GitHub sends it
// back to redirect_uri?code&state; the server then POSTs the code, its
// client secret and the PKCE verifier to WEB/login/oauth/access_token. The
// token of an App with expiring user tokens lasts eight hours. Those two
// endpoints are on the web host (https://github.com, or https://HOST on
// GitHub Enterprise Server), not the API's.

// OAuthConfig configures the App's OAuth web flow.
type OAuthConfig struct {
	// ClientID and ClientSecret are the App's OAuth client credentials (the
	// App's settings page; not its app id nor its private key).
	ClientID     string
	ClientSecret string
	// WebURL is GitHub's web root: https://github.com (default), or
	// https://HOST for GitHub Enterprise Server.
	WebURL string
	// RedirectURL is where GitHub sends the browser back with the code: the
	// App's callback URL (serve's PUBLIC_URL/oauth/callback).
	RedirectURL string
	// API are the options of the REST API client RevokeToken uses
	// (BaseURL, Version, retries, metrics…); its Token and Transport's
	// credentials are replaced by the client's.
	API Options
}

// OAuth is the App's OAuth web flow. It is safe for concurrent use.
type OAuth struct {
	cfg oauth2.Config
	api Options
}

// UserToken is a person's user access token (user-to-server).
type UserToken struct {
	AccessToken string
	// Expiry is when GitHub stops accepting it; zero when GitHub named no
	// lifetime (an App that does not expire its user tokens).
	Expiry time.Time
}

// NewOAuth returns the App's OAuth web flow.
func NewOAuth(cfg OAuthConfig) *OAuth {
	web := cmp.Or(strings.TrimRight(cfg.WebURL, "/"), "https://github.com")
	return &OAuth{api: cfg.API, cfg: oauth2.Config{
		ClientID:     cfg.ClientID,
		ClientSecret: cfg.ClientSecret,
		RedirectURL:  cfg.RedirectURL,
		Endpoint: oauth2.Endpoint{
			AuthURL:  web + "/login/oauth/authorize",
			TokenURL: web + "/login/oauth/access_token",
			// GitHub documents the client credentials as form parameters.
			AuthStyle: oauth2.AuthStyleInParams,
		},
	}}
}

// AuthCodeURL is GitHub's authorize page for this state and the PKCE S256
// challenge of verifier (oauth2.GenerateVerifier makes one). A GitHub App
// asks for no scopes: its permissions are the App's.
func (o *OAuth) AuthCodeURL(state, verifier string) string {
	return o.cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier))
}

// Exchange trades the code GitHub sent back for the person's token, proving
// the PKCE verifier. GitHub answers a refused exchange (a wrong, used or
// expired code, a verifier that does not match, wrong client credentials)
// with 200 and an error in the body: that is an error too, naming GitHub's
// error code, never the code or the secret.
func (o *OAuth) Exchange(ctx context.Context, code, verifier string) (UserToken, error) {
	if code == "" {
		return UserToken{}, errors.New("exchange the oauth code: github sent no code")
	}
	ctx = context.WithValue(ctx, oauth2.HTTPClient, &http.Client{Timeout: 30 * time.Second})
	tok, err := o.cfg.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode != "" {
			return UserToken{}, fmt.Errorf("exchange the oauth code at %s: github refused it: %s (%s)", o.cfg.Endpoint.TokenURL, re.ErrorCode, re.ErrorDescription)
		}
		if errors.As(err, &re) && re.Response != nil {
			return UserToken{}, fmt.Errorf("exchange the oauth code at %s: github answered %s", o.cfg.Endpoint.TokenURL, re.Response.Status)
		}
		return UserToken{}, fmt.Errorf("exchange the oauth code at %s: %w", o.cfg.Endpoint.TokenURL, err)
	}
	if tok.AccessToken == "" {
		return UserToken{}, fmt.Errorf("exchange the oauth code at %s: github answered no access token", o.cfg.Endpoint.TokenURL)
	}
	return UserToken{AccessToken: tok.AccessToken, Expiry: tok.Expiry}, nil
}

// RevokeToken revokes a person's user access token at GitHub (DELETE
// /applications/{client_id}/token, authenticated as the App's OAuth client
// with basic auth): every copy of it stops working. The error never names
// the token or the secret.
func (o *OAuth) RevokeToken(ctx context.Context, accessToken string) error {
	if accessToken == "" {
		return errors.New("revoke a user token: no token")
	}
	opts := o.api
	opts.Token, opts.CacheEntries = "", -1
	opts.authorization = "Basic " + base64.StdEncoding.EncodeToString([]byte(o.cfg.ClientID+":"+o.cfg.ClientSecret))
	c, err := New(opts)
	if err != nil {
		return fmt.Errorf("revoke a user token: %w", err)
	}
	_, err = c.gh.Authorizations.Revoke(withOp(ctx, "RevokeToken"), o.cfg.ClientID, accessToken)
	return wrapf(err, "revoke a user token of client %s", o.cfg.ClientID)
}
