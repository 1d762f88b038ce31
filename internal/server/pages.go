package server

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/redisx"
	"github.com/phasegate/phasegate/internal/web"
)

// pagesSettings are the settings of serve's own pages (internal/web): all
// of the public URL, the OAuth client and the session key, or none.
type pagesSettings struct {
	publicURL    string
	clientID     string
	clientSecret string // never printed
	sessionKeys  [][]byte
	githubWebURL string
	now          func() time.Time // the pages' clock; nil: time.Now
	signedOut    web.Revocations  // nil: in memory
}

// PagesOptions are the settings of serve's own pages, as serve's flags
// give them (--public-url, --oauth-client-id, the client secret, the
// session key, --github-web-url).
type PagesOptions struct {
	// PublicURL is where people reach the pages (web.CheckPublicURL):
	// https://HOST, or http on a loopback address.
	PublicURL string
	// ClientID and ClientSecret are the GitHub App's OAuth client.
	ClientID, ClientSecret string
	// SessionKeys seal the session cookies, each at least
	// web.MinSessionKey bytes; the first seals.
	SessionKeys [][]byte
	// GitHubWebURL is GitHub's web URL, where people sign in (default
	// https://github.com; http only on a loopback address, for a fake).
	GitHubWebURL string
	// SignedOut are the sessions people signed out of, shared by every
	// replica (Redis: sharedSignOuts); nil: this process's memory.
	SignedOut web.Revocations
}

// WithPages turns serve's own pages on in cfg: it checks o and sets
// cfg.PublicURL (the Details links lead there) and cfg.Pages (New mounts
// them). The pages log to cfg.Logger and read the time from cfg.Now, as
// they are when WithPages is called (nil: the defaults).
func WithPages(cfg *Config, o PagesOptions) error {
	u, err := web.CheckPublicURL(o.PublicURL)
	if err != nil {
		return fmt.Errorf("serve's pages: %w", err)
	}
	switch {
	case strings.TrimSpace(o.ClientID) == "" || strings.TrimSpace(o.ClientSecret) == "":
		return errors.New("serve's pages: the OAuth client ID and secret are required")
	case len(o.SessionKeys) == 0:
		return errors.New("serve's pages: a session key is required")
	}
	for i, k := range o.SessionKeys {
		if len(k) < web.MinSessionKey {
			return fmt.Errorf("serve's pages: session key %d is %d bytes; each must be at least %d", i+1, len(k), web.MinSessionKey)
		}
	}
	p := &pagesSettings{publicURL: u.String(), clientID: o.ClientID, clientSecret: o.ClientSecret,
		sessionKeys: o.SessionKeys, githubWebURL: o.GitHubWebURL, now: cfg.Now, signedOut: o.SignedOut}
	if p.githubWebURL == "" {
		p.githubWebURL = "https://github.com"
	}
	cfg.Pages, cfg.PublicURL = p.handler(cfg.Logger), p.publicURL
	return nil
}

// options are the settings as WithPages takes them.
func (p *pagesSettings) options() PagesOptions {
	return PagesOptions{PublicURL: p.publicURL, ClientID: p.clientID, ClientSecret: p.clientSecret,
		SessionKeys: p.sessionKeys, GitHubWebURL: p.githubWebURL, SignedOut: p.signedOut}
}

// pageFlags defines the pages' flags on fset.
func pageFlags(fset *flag.FlagSet, f *serveFlags) {
	f.publicURL = fset.String("public-url", "", "serve the details pages and the decision inbox at this https URL (with --oauth-client-id, the client secret and the session key; all or none) ($PHASEGATE_PUBLIC_URL)")
	f.oauthClientID = fset.String("oauth-client-id", "", "the GitHub App's client ID, for signing in to the pages ($PHASEGATE_OAUTH_CLIENT_ID)")
	f.oauthSecretFile = fset.String("oauth-client-secret-file", "", "a file holding the GitHub App's client secret ($PHASEGATE_OAUTH_CLIENT_SECRET_FILE, or the secret itself in $PHASEGATE_OAUTH_CLIENT_SECRET)")
	f.sessionKeyFile = fset.String("session-key-file", "", "a file holding the key(s) sealing the pages' session cookies, at least 32 bytes each, comma- or newline-separated, the first sealing ($PHASEGATE_SESSION_KEY_FILE, or the keys themselves in $PHASEGATE_SESSION_KEY)")
	f.githubWebURL = fset.String("github-web-url", "", "GitHub's web URL, where people sign in (default https://github.com, or https://HOST when --github-api-url is GHES's https://HOST/api/v3) ($PHASEGATE_GITHUB_WEB_URL)")
}

// parsePages reads the pages' settings; nil when none is set, an error
// when only some are, or one is not acceptable. Errors never echo a secret.
func parsePages(f *serveFlags, getenv func(string) string) (*pagesSettings, error) {
	secret, err := secretValue(*f.oauthSecretFile, "PHASEGATE_OAUTH_CLIENT_SECRET", "the OAuth client secret", getenv)
	if err != nil {
		return nil, err
	}
	keys, err := secretValue(*f.sessionKeyFile, "PHASEGATE_SESSION_KEY", "the session key", getenv)
	if err != nil {
		return nil, err
	}
	p := &pagesSettings{publicURL: strings.TrimSpace(*f.publicURL), clientID: strings.TrimSpace(*f.oauthClientID), clientSecret: secret}
	var missing []string
	for _, m := range []struct{ v, name string }{
		{p.publicURL, "--public-url"}, {p.clientID, "--oauth-client-id"},
		{secret, "the OAuth client secret (--oauth-client-secret-file or PHASEGATE_OAUTH_CLIENT_SECRET)"},
		{keys, "the session key (--session-key-file or PHASEGATE_SESSION_KEY)"},
	} {
		if m.v == "" {
			missing = append(missing, m.name)
		}
	}
	switch {
	case len(missing) == 4:
		return nil, nil
	case len(missing) > 0:
		return nil, fmt.Errorf("the pages need a public URL, an OAuth client and a session key; missing %s", strings.Join(missing, ", "))
	}
	return p, p.check(keys, *f.githubWebURL, *f.apiURL)
}

// check validates the settings and sets the keys and GitHub's web URL.
func (p *pagesSettings) check(keys, webURL, apiURL string) error {
	u, err := web.CheckPublicURL(p.publicURL)
	if err != nil {
		return fmt.Errorf("--public-url / PHASEGATE_PUBLIC_URL: %w", err)
	}
	p.publicURL = u.String()
	if strings.ContainsFunc(p.clientID, func(r rune) bool { return r <= ' ' || r == '&' || r == '#' || r == '?' }) {
		return errors.New("--oauth-client-id / PHASEGATE_OAUTH_CLIENT_ID must be the App's client ID, such as Iv23li…")
	}
	for i, k := range strings.FieldsFunc(keys, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		k = strings.TrimSpace(k)
		if len(k) < web.MinSessionKey {
			return fmt.Errorf("session key %d is %d bytes; each must be at least %d (generate one with: openssl rand -base64 48)", i+1, len(k), web.MinSessionKey)
		}
		p.sessionKeys = append(p.sessionKeys, []byte(k))
	}
	if len(p.sessionKeys) == 0 {
		return errors.New("the session key is empty")
	}
	p.githubWebURL, err = githubWebURL(webURL, apiURL)
	return err
}

// githubWebURL is the flag's value, checked, or the one the API URL
// implies: GHES's https://HOST/api/v3 is https://HOST.
func githubWebURL(flagValue, apiURL string) (string, error) {
	if flagValue == "" {
		if u, err := url.Parse(apiURL); err == nil && u.Scheme == "https" && u.Host != "" && strings.TrimSuffix(u.Path, "/") == "/api/v3" {
			return "https://" + u.Host, nil
		}
		return "https://github.com", nil
	}
	u, err := url.Parse(strings.TrimSuffix(flagValue, "/"))
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Path != "" || u.User != nil || u.RawQuery != "" {
		return "", fmt.Errorf("--github-web-url / PHASEGATE_GITHUB_WEB_URL must be https://HOST (got %q)", flagValue)
	}
	return u.String(), nil
}

// secretValue is a secret from a file (the flag or its variable) or from
// the variable holding the secret itself; at most one of them.
func secretValue(file, variable, what string, getenv func(string) string) (string, error) {
	inline := strings.TrimSpace(getenv(variable))
	switch {
	case file != "" && inline != "":
		return "", fmt.Errorf("both a file and %s are set for %s: set one", variable, what)
	case file == "":
		return inline, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("reading the file of %s: %w", what, err)
	}
	return strings.TrimSpace(string(data)), nil
}

// handler builds the pages over the Source the server gives them.
func (p *pagesSettings) handler(logger *slog.Logger) func(web.Source, func(string) (*ghclient.Client, error), ghclient.Options) (http.Handler, error) {
	return func(src web.Source, users func(string) (*ghclient.Client, error), api ghclient.Options) (http.Handler, error) {
		pages, err := web.New(web.Config{
			PublicURL: p.publicURL, SessionKeys: p.sessionKeys, GitHubURL: p.githubWebURL, Logger: logger, Now: p.now,
			Revocations: p.signedOut,
		}, p.oauth(users, api), src)
		if err != nil {
			return nil, err
		}
		return pages.Handler(), nil
	}
}

// oauth is the App's OAuth web flow for the pages: GitHub's authorize and
// token endpoints at its web URL, the callback under the public URL, and
// the API (api) where a signed-out person's token is revoked.
func (p *pagesSettings) oauth(users userClients, api ghclient.Options) web.OAuth {
	return pagesOAuth{users: users, o: ghclient.NewOAuth(ghclient.OAuthConfig{
		ClientID: p.clientID, ClientSecret: p.clientSecret, WebURL: p.githubWebURL,
		RedirectURL: p.publicURL + "/oauth/callback", API: api,
	})}
}

// sharedSignOuts keep the pages' sign-outs in Redis, where every replica
// reads them (web.Revocations): each for the longest a session lasts, with
// a margin for the replicas' clocks, whatever its own end.
type sharedSignOuts struct{ blobs *redisx.Blobs }

// signOutTTL is how long Redis keeps a sign-out: longer than any session.
const signOutTTL = web.MaxSessionTTL + 5*time.Minute

// newSharedSignOuts keeps the sign-outs in store under
// "phasegate:signed-out:".
func newSharedSignOuts(store *redisx.Store) sharedSignOuts {
	return sharedSignOuts{blobs: store.Blobs("phasegate:signed-out:", signOutTTL)}
}

func (s sharedSignOuts) Revoke(ctx context.Context, id string, _ time.Time) error {
	return s.blobs.Put(ctx, id, []byte{'1'})
}

func (s sharedSignOuts) Revoked(ctx context.Context, id string) (bool, error) {
	_, ok, err := s.blobs.Get(ctx, id)
	return ok, err
}

// pagesSource is what the pages show: the server's Source, resolving as
// the person.
func (s *Server) pagesSource() web.Source {
	p := s.Pages()
	p.ResolveWith = p.resolveAsPerson
	return p
}
