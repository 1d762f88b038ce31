package web

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
)

// login starts the sign-in: a fresh state and PKCE verifier go into a
// short-lived sealed cookie only the callback receives, and the browser to
// GitHub's authorize page. (A link, never a form: the CSP's form-action
// 'self' would stop a form's redirect to GitHub.)
func (p *Pages) login(w http.ResponseWriter, r *http.Request) {
	st := oauthState{
		State:    randomText(32),
		Verifier: randomText(32), // 43 characters, RFC 7636's shortest
		Next:     safeNext(r.URL.Query().Get("next")),
		Expires:  p.cfg.Now().Add(stateTTL).Unix(),
	}
	v, err := p.states.seal(st)
	if err != nil {
		p.cfg.Logger.Error("web: starting a sign-in", "err", err)
		p.fail(w, r, nil, http.StatusInternalServerError, "Sign-in failed", "phasegate could not start the sign-in. Try again.")
		return
	}
	p.setCookie(w, p.stateCookie, v, "/oauth", int(stateTTL.Seconds()))
	http.Redirect(w, r, p.oauth.AuthCodeURL(st.State, st.Verifier), http.StatusFound)
}

// callback ends the sign-in: the state must be the cookie's (compared in
// constant time), the code is exchanged with the verifier, the person is
// read with their token, and the session set. Anything wrong leaves no
// session.
func (p *Pages) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var st oauthState
	c, err := r.Cookie(p.stateCookie)
	p.setCookie(w, p.stateCookie, "", "/oauth", -1)
	if err != nil || !p.states.open(c.Value, &st) || p.cfg.Now().Unix() >= st.Expires {
		p.fail(w, r, nil, http.StatusBadRequest, "Sign-in expired",
			"This sign-in was not started here, or took too long. Sign in again.")
		return
	}
	got := q.Get("state")
	if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(st.State)) != 1 {
		p.fail(w, r, nil, http.StatusBadRequest, "Sign-in refused",
			"The answer from GitHub does not belong to this sign-in. Sign in again.")
		return
	}
	if q.Get("error") != "" || q.Get("code") == "" {
		p.fail(w, r, nil, http.StatusBadRequest, "Sign-in cancelled",
			"GitHub did not authorise the sign-in. Sign in again when you are ready.")
		return
	}
	tok, err := p.oauth.Exchange(r.Context(), q.Get("code"), st.Verifier)
	if err != nil || tok.AccessToken == "" {
		p.cfg.Logger.Warn("web: exchanging a sign-in code", "err", err)
		p.fail(w, r, nil, http.StatusBadGateway, "Sign-in failed", "GitHub did not accept the sign-in. Sign in again.")
		return
	}
	v, err := p.oauth.User(tok).CurrentUser(r.Context())
	if err != nil || v.Login == "" {
		p.cfg.Logger.Warn("web: reading the signed-in person", "err", err)
		p.fail(w, r, nil, http.StatusBadGateway, "Sign-in failed", "GitHub did not say who you are. Sign in again.")
		return
	}
	if err := p.setSession(w, newSession(v, tok, p.cfg.Now(), p.cfg.SessionTTL)); err != nil {
		p.cfg.Logger.Error("web: sealing a session", "err", err)
		p.fail(w, r, nil, http.StatusInternalServerError, "Sign-in failed", "phasegate could not start your session. Sign in again.")
		return
	}
	p.cfg.Logger.Info("web: signed in", "login", v.Login)
	http.Redirect(w, r, st.Next, http.StatusSeeOther)
}

// logout ends the session everywhere (its form carries the per-action
// token): its id is recorded as signed out until it would have ended, so
// that a copy of the cookie opens nothing on any replica, and the person's
// GitHub token is revoked. When the sign-out cannot be recorded, the cookie
// stays and the person is told to try again; a refusal at GitHub is logged
// and does not keep the session.
func (p *Pages) logout(w http.ResponseWriter, r *http.Request) {
	s := p.cookieSession(r)
	if s != nil && !s.checkCSRF("logout", r.PostFormValue("csrf")) {
		p.fail(w, r, nil, http.StatusForbidden, "Refused", "This form is stale. Reload the page and sign out again.")
		return
	}
	if s != nil {
		if err := p.cfg.Revocations.Revoke(r.Context(), s.SID, time.Unix(s.Expires, 0)); err != nil {
			p.cfg.Logger.Error("web: recording a sign-out", "login", s.Login, "err", err)
			p.fail(w, r, nil, http.StatusServiceUnavailable, "Sign-out failed",
				"phasegate could not end your session everywhere. Go back and sign out again in a moment.")
			return
		}
		if err := p.oauth.Revoke(r.Context(), s.token()); err != nil {
			p.cfg.Logger.Warn("web: revoking a signed-out person's GitHub token", "login", s.Login, "err", err)
		}
		p.cfg.Logger.Info("web: signed out", "login", s.Login)
	}
	p.setCookie(w, p.sessionCookie, "", "/", -1)
	p.render(w, r, http.StatusOK, "signedout", view{Title: "Signed out"})
}

// safeNext is where to go after signing in: a path of these pages only
// (never another origin, never back into the sign-in), else the inbox.
func safeNext(next string) string {
	const home = "/inbox"
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || len(next) > 2048 {
		return home
	}
	if strings.ContainsFunc(next, func(r rune) bool { return r == '\\' || unicode.IsControl(r) || unicode.IsSpace(r) }) {
		return home
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(u.Path, "/") {
		return home
	}
	if u.Path == "/login" || strings.HasPrefix(u.Path, "/oauth/") || u.Path == "/logout" {
		return home
	}
	return u.RequestURI()
}
