package server

import (
	"cmp"
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

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/pages"
	"github.com/phasegate/phasegate/internal/redisx"
	"github.com/phasegate/phasegate/internal/web"
)

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
	if err := o.validate(); err != nil {
		return fmt.Errorf("serve's pages: %w", err)
	}
	o.GitHubWebURL = cmp.Or(o.GitHubWebURL, "https://github.com")
	cfg.Pages, cfg.PublicURL = o.handler(cfg.Logger, cfg.Now), o.PublicURL
	return nil
}

// validate checks the public URL (and sets it as parsed), that there is an
// OAuth client, and the session keys.
func (o *PagesOptions) validate() error {
	u, err := web.CheckPublicURL(o.PublicURL)
	if err != nil {
		return err
	}
	o.PublicURL = u.String()
	switch {
	case strings.TrimSpace(o.ClientID) == "" || strings.TrimSpace(o.ClientSecret) == "":
		return errors.New("the OAuth client ID and secret are required")
	case len(o.SessionKeys) == 0:
		return errors.New("a session key is required")
	}
	for i, k := range o.SessionKeys {
		if len(k) < web.MinSessionKey {
			return fmt.Errorf("session key %d is %d bytes; each must be at least %d (generate one with: openssl rand -base64 48)", i+1, len(k), web.MinSessionKey)
		}
	}
	return nil
}

func pageFlags(fset *flag.FlagSet, f *serveFlags) {
	f.publicURL = fset.String("public-url", "", "serve the details pages and the decision inbox at this https URL (with --oauth-client-id, the client secret and the session key; all or none) ($PHASEGATE_PUBLIC_URL)")
	f.oauthClientID = fset.String("oauth-client-id", "", "the GitHub App's client ID, for signing in to the pages ($PHASEGATE_OAUTH_CLIENT_ID)")
	f.oauthSecretFile = fset.String("oauth-client-secret-file", "", "a file holding the GitHub App's client secret ($PHASEGATE_OAUTH_CLIENT_SECRET_FILE, or the secret itself in $PHASEGATE_OAUTH_CLIENT_SECRET)")
	f.sessionKeyFile = fset.String("session-key-file", "", "a file holding the key(s) sealing the pages' session cookies, at least 32 bytes each, comma- or newline-separated, the first sealing ($PHASEGATE_SESSION_KEY_FILE, or the keys themselves in $PHASEGATE_SESSION_KEY)")
	f.githubWebURL = fset.String("github-web-url", "", "GitHub's web URL, where people sign in (default https://github.com, or https://HOST when --github-api-url is GHES's https://HOST/api/v3) ($PHASEGATE_GITHUB_WEB_URL)")
}

// parsePages reads the pages' settings; nil when none is set, an error
// when only some are, or one is not acceptable. Errors never echo a secret.
func parsePages(f *serveFlags, getenv func(string) string) (*PagesOptions, error) {
	secret, err := secretValue(*f.oauthSecretFile, "PHASEGATE_OAUTH_CLIENT_SECRET", "the OAuth client secret", getenv)
	if err != nil {
		return nil, err
	}
	keys, err := secretValue(*f.sessionKeyFile, "PHASEGATE_SESSION_KEY", "the session key", getenv)
	if err != nil {
		return nil, err
	}
	p := &PagesOptions{PublicURL: strings.TrimSpace(*f.publicURL), ClientID: strings.TrimSpace(*f.oauthClientID), ClientSecret: secret}
	var missing []string
	for _, m := range []struct{ v, name string }{
		{p.PublicURL, "--public-url"}, {p.ClientID, "--oauth-client-id"},
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
func (p *PagesOptions) check(keys, webURL, apiURL string) error {
	if _, err := web.CheckPublicURL(p.PublicURL); err != nil {
		return fmt.Errorf("--public-url / PHASEGATE_PUBLIC_URL: %w", err) // name what to fix
	}
	if strings.ContainsFunc(p.ClientID, func(r rune) bool { return r <= ' ' || r == '&' || r == '#' || r == '?' }) {
		return errors.New("--oauth-client-id / PHASEGATE_OAUTH_CLIENT_ID must be the App's client ID, such as Iv23li…")
	}
	for _, k := range strings.FieldsFunc(keys, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		p.SessionKeys = append(p.SessionKeys, []byte(strings.TrimSpace(k)))
	}
	if err := p.validate(); err != nil {
		return err
	}
	var err error
	p.GitHubWebURL, err = githubWebURL(webURL, apiURL)
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
		return "", fmt.Errorf("reading %s file: %w", what, err)
	}
	return strings.TrimSpace(string(data)), nil
}

// handler builds the pages over the server's Source, on the clock now
// (nil: time.Now).
func (p *PagesOptions) handler(logger *slog.Logger, now func() time.Time) func(*pages.Source, ghclient.Options) (http.Handler, error) {
	return func(src *pages.Source, api ghclient.Options) (http.Handler, error) {
		w, err := web.New(web.Config{PublicURL: p.PublicURL, SessionKeys: p.SessionKeys, GitHubURL: p.GitHubWebURL, Logger: logger,
			Now: now, Revocations: p.SignedOut}, src.OAuth(p.oauth(api)), src)
		if err != nil {
			return nil, err
		}
		return w.Handler(), nil
	}
}

// oauth is the App's OAuth web flow for the pages: GitHub's authorize and
// token endpoints at its web URL, the callback under the public URL, and
// the API (api) where a signed-out person's token is revoked.
func (p *PagesOptions) oauth(api ghclient.Options) *ghclient.OAuth {
	return ghclient.NewOAuth(ghclient.OAuthConfig{ClientID: p.ClientID, ClientSecret: p.ClientSecret, WebURL: p.GitHubWebURL,
		RedirectURL: p.PublicURL + "/oauth/callback", API: api})
}

// sharedSignOuts keep the pages' sign-outs in Redis, where every replica
// reads them (web.Revocations): each for the longest a session lasts, with
// a margin for the replicas' clocks, whatever its own end.
type sharedSignOuts struct{ blobs *redisx.Blobs }

// signOutTTL is how long Redis keeps a sign-out: longer than any session.
const signOutTTL = web.MaxSessionTTL + 5*time.Minute

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

// pagesHandler is the decision handler the pages read with: the server's
// identity, key, config path, publish mode and observer.
func (s *Server) pagesHandler() (*decide.Handler, error) {
	id := s.Identity()
	if id == "" {
		return nil, errors.New("the App's identity is not known yet (the server is not ready)")
	}
	return &decide.Handler{Key: s.cfg.SigningKey, ConfigPath: s.cfg.ConfigPath, Identity: id, Locks: s.cfg.Locker,
		Logger: s.log, Publish: s.cfg.Publish, Memo: s.memo, Observe: s.observe, PagesURL: s.cfg.PublicURL}, nil
}

// repoClient is the installation client of owner/repo: installation's,
// or the one holding the repository when it is 0; web.ErrNotFound when
// the App is not installed there.
func (s *Server) repoClient(ctx context.Context, owner, repo string, installation int64) (*ghclient.Client, error) {
	if installation == 0 {
		if !validName(owner) || !validName(repo) {
			return nil, web.ErrNotFound
		}
		var err error
		if installation, err = s.installationOf(ctx, owner, repo); err != nil {
			return nil, err
		}
	}
	return s.client(installation)
}
