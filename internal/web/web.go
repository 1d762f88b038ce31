package web

import (
	"cmp"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Config configures the pages.
type Config struct {
	// PublicURL is where people reach the pages, such as
	// https://phasegate.example.com (CheckPublicURL): the origin of the
	// OAuth callback, the origin a state-changing request must come from,
	// and whether cookies are Secure.
	PublicURL string
	// SessionKeys seal the cookies, each at least MinSessionKey bytes; the
	// first seals, every one opens (rotation: put the new key first, drop
	// the old one after MaxSessionTTL).
	SessionKeys [][]byte
	// SessionTTL is how long a session lasts (default and at most
	// MaxSessionTTL), and never past the token's expiry.
	SessionTTL time.Duration
	// GitHubURL is GitHub's web URL (default https://github.com; GHES's
	// https://HOST): links to it are the only outside links the pages show.
	GitHubURL string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logger receives what goes wrong (default slog.Default()). Never a
	// token.
	Logger *slog.Logger
	// MaxStreams bounds the open /events streams overall (default 256) and
	// MaxStreamsPerPerson those of one person (default 4).
	MaxStreams, MaxStreamsPerPerson int
	// Heartbeat is the interval of an /events stream's comment lines that
	// keep proxies from closing it (default 25s).
	Heartbeat time.Duration
	// ReposTTL is how long the repositories a person can see are kept in
	// memory for the inbox and /events (default 2m).
	ReposTTL time.Duration
	// Revocations are the sessions people signed out of (default: in this
	// process's memory; several replicas must share one).
	Revocations Revocations
}

// Pages serves phasegate's own pages. Build it with New.
type Pages struct {
	cfg           Config
	oauth         OAuth
	src           Source
	public        *url.URL
	github        *url.URL
	secure        bool
	sessionCookie string
	stateCookie   string
	flashCookie   string
	sessions      *sealer
	states        *sealer
	flashes       *sealer
	csp           string
	tmpl          map[string]*template.Template
	repos         *repoCache
	streams       *streamLimit
	handler       http.Handler
}

// CheckPublicURL parses the public URL of the pages: https with a host and
// no path, query or credentials; http only for localhost, 127.0.0.1 and
// [::1] (tests and a local try).
func CheckPublicURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSuffix(raw, "/"))
	if err != nil {
		return nil, fmt.Errorf("public URL %q: %w", raw, err)
	}
	switch {
	case u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return nil, fmt.Errorf("public URL %q must be https://HOST[:PORT] with nothing after the host", raw)
	case u.Path != "":
		return nil, fmt.Errorf("public URL %q must have no path: the pages are served at the root of their host", raw)
	case u.Scheme == "https":
		return u, nil
	case u.Scheme == "http" && isLoopbackName(u.Hostname()):
		return u, nil
	}
	return nil, fmt.Errorf("public URL %q must be https (http only for localhost): sessions travel in cookies", raw)
}

func isLoopbackName(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// New checks cfg and builds the pages over oauth and src.
func New(cfg Config, oauth OAuth, src Source) (*Pages, error) {
	if oauth == nil || src == nil {
		return nil, errors.New("web pages: an OAuth client and a Source are required")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("web pages: %w", err)
	}
	p := &Pages{cfg: cfg, oauth: oauth, src: src}
	if p.public, err = CheckPublicURL(cfg.PublicURL); err != nil {
		return nil, fmt.Errorf("web pages: %w", err)
	}
	if p.github, err = url.Parse(strings.TrimSuffix(cfg.GitHubURL, "/")); err != nil || p.github.Host == "" ||
		(p.github.Scheme != "https" && (p.github.Scheme != "http" || !isLoopbackName(p.github.Hostname()))) {
		return nil, fmt.Errorf("web pages: GitHub URL %q must be https://HOST (http only for localhost)", cfg.GitHubURL)
	}
	// Behind TLS the session cookie has the __Host- prefix (the browser
	// then insists on Secure, Path=/ and no Domain), the state cookie the
	// __Secure- prefix (its path is /oauth).
	p.secure = p.public.Scheme == "https"
	p.sessionCookie, p.stateCookie, p.flashCookie = "phasegate_session", "phasegate_oauth", "phasegate_flash"
	if p.secure {
		p.sessionCookie, p.stateCookie, p.flashCookie = "__Host-phasegate_session", "__Secure-phasegate_oauth", "__Host-phasegate_flash"
	}
	if p.sessions, err = newSealer(cfg.SessionKeys, "session"); err != nil {
		return nil, fmt.Errorf("web pages: %w", err)
	}
	// Errors are the session sealer's: the keys are the same.
	p.states, _ = newSealer(cfg.SessionKeys, "oauth state")
	p.flashes, _ = newSealer(cfg.SessionKeys, "flash")
	p.csp = contentSecurityPolicy(p.github)
	// Every page is its template rendered inside templates/layout.html.
	p.tmpl = map[string]*template.Template{}
	for _, name := range []string{"inbox", "issue", "commit", "error", "signedout"} {
		if p.tmpl[name], err = template.New("layout.html").Funcs(p.funcs()).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"); err != nil {
			return nil, fmt.Errorf("web pages: parsing template %s: %w", name, err)
		}
	}
	p.repos = &repoCache{ttl: cfg.ReposTTL, now: cfg.Now, m: map[int64]repoEntry{}}
	p.streams = &streamLimit{max: cfg.MaxStreams, perPerson: cfg.MaxStreamsPerPerson, open: map[int64]int{}}
	p.handler, err = p.routes()
	if err != nil {
		return nil, fmt.Errorf("web pages: %w", err)
	}
	return p, nil
}

func (c Config) withDefaults() (Config, error) {
	switch {
	case c.SessionTTL == 0:
		c.SessionTTL = MaxSessionTTL
	case c.SessionTTL < 0 || c.SessionTTL > MaxSessionTTL:
		return c, fmt.Errorf("session TTL %s must be above 0 and at most %s", c.SessionTTL, MaxSessionTTL)
	}
	c.GitHubURL = cmp.Or(c.GitHubURL, "https://github.com")
	c.Logger = cmp.Or(c.Logger, slog.Default())
	if c.Now == nil {
		c.Now = time.Now
	}
	c.MaxStreams = cmp.Or(max(c.MaxStreams, 0), 256)
	c.MaxStreamsPerPerson = cmp.Or(max(c.MaxStreamsPerPerson, 0), 4)
	c.Heartbeat = cmp.Or(max(c.Heartbeat, 0), 25*time.Second)
	c.ReposTTL = cmp.Or(max(c.ReposTTL, 0), 2*time.Minute)
	c.Revocations = cmp.Or[Revocations](c.Revocations, newMemRevocations(c.Now))
	return c, nil
}

// contentSecurityPolicy allows our own script, style and fetches, GitHub's
// avatars, and nothing inline.
func contentSecurityPolicy(github *url.URL) string {
	img := "'self' https://avatars.githubusercontent.com"
	if github.Host != "github.com" {
		img += " " + github.Scheme + "://" + github.Host
	}
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src " + img +
		"; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
}

// Handler serves the pages: /inbox, /login, /oauth/callback, POST /logout,
// /events, /static/…, /{owner}/{repo}/issues/{n} (POST …/resolve),
// /{owner}/{repo}/pull/{n}, /{owner}/{repo}/commit/{sha}; GET / redirects
// to /inbox and every other path is the pages' 404.
func (p *Pages) Handler() http.Handler { return p.handler }

// routes builds the mux, behind the security headers and Go's
// cross-origin protection (every POST must come from our own origin).
func (p *Pages) routes() (http.Handler, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/inbox", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /login", p.login)
	mux.HandleFunc("GET /oauth/callback", p.callback)
	mux.HandleFunc("POST /logout", p.logout)
	mux.HandleFunc("GET /inbox", p.signedIn(p.inbox))
	mux.HandleFunc("GET /events", p.events)
	mux.HandleFunc("GET /static/{file}", serveStatic)
	mux.HandleFunc("GET /{owner}/{repo}/issues/{n}", p.signedIn(p.issue))
	mux.HandleFunc("GET /{owner}/{repo}/pull/{n}", p.signedIn(p.pull))
	mux.HandleFunc("GET /{owner}/{repo}/commit/{sha}", p.signedIn(p.commit))
	mux.HandleFunc("POST /{owner}/{repo}/issues/{n}/resolve", p.signedIn(p.resolve))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s, _ := p.session(r) // unknown: the 404 as signed out
		p.notFound(w, r, s)
	})
	cop := http.NewCrossOriginProtection()
	if err := cop.AddTrustedOrigin(p.public.Scheme + "://" + p.public.Host); err != nil {
		return nil, fmt.Errorf("trusting the public URL's origin: %w", err)
	}
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.fail(w, r, nil, http.StatusForbidden, "Refused", "This request came from another site. Go back to the page and use its button.")
	}))
	return p.headers(cop.Handler(mux)), nil
}

func (p *Pages) headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", p.csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		if p.secure {
			h.Set("Strict-Transport-Security", "max-age=31536000")
		}
		if !strings.HasPrefix(r.URL.Path, "/static/") {
			h.Set("Cache-Control", "no-store")
		}
		next.ServeHTTP(w, r)
	})
}

// signedIn runs h with the request's session; without one (or signed out
// of), a GET goes to the sign-in (and comes back), anything else is told to
// sign in again; when the sign-outs cannot be read, 503.
func (p *Pages) signedIn(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, err := p.session(r)
		if err != nil {
			p.cfg.Logger.Error("web: checking a session", "err", err)
			p.fail(w, r, nil, http.StatusServiceUnavailable, "Session unknown",
				"phasegate could not check whether you signed out of this session. Try again in a moment.")
			return
		}
		if s == nil {
			next := r.URL.RequestURI()
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				next = strings.TrimSuffix(r.URL.Path, "/resolve")
			}
			http.Redirect(w, r, "/login?next="+url.QueryEscape(next), http.StatusSeeOther)
			return
		}
		h(w, r, s)
	}
}
