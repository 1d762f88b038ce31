package web

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// MaxSessionTTL is the longest a session lasts (and the default): a working
// day, GitHub's lifetime of an expiring user token.
const MaxSessionTTL = 8 * time.Hour

// stateTTL is how long a sign-in may take between /login and the callback.
const stateTTL = 10 * time.Minute

// session is what the sealed session cookie holds.
type session struct {
	// SID names the session, for its revocation when the person signs out.
	SID    string `json:"s"`
	Login  string `json:"l"`
	ID     int64  `json:"i"`
	Name   string `json:"n,omitempty"`
	Avatar string `json:"a,omitempty"`
	// Token is the person's user access token and TokenExpiry its expiry
	// (Unix seconds, 0 when unknown).
	Token       string `json:"t"`
	TokenExpiry int64  `json:"te,omitempty"`
	Issued      int64  `json:"ia"`
	Expires     int64  `json:"e"`
	// CSRF is the secret the per-action tokens are HMACs under.
	CSRF []byte `json:"c"`
}

// valid reports whether s is a whole session still running at now.
func (s *session) valid(now time.Time) bool {
	t := now.Unix()
	switch {
	case s.SID == "" || s.Login == "" || s.Token == "" || len(s.CSRF) != 32:
		return false
	case t >= s.Expires || t < s.Issued-60 || s.Expires-s.Issued > int64(MaxSessionTTL/time.Second):
		return false
	case s.TokenExpiry != 0 && t >= s.TokenExpiry:
		return false
	}
	return true
}

func (s *session) viewer() Viewer {
	return Viewer{Login: s.Login, ID: s.ID, Name: s.Name, AvatarURL: s.Avatar}
}

func (s *session) token() Token {
	t := Token{AccessToken: s.Token}
	if s.TokenExpiry != 0 {
		t.Expiry = time.Unix(s.TokenExpiry, 0)
	}
	return t
}

// csrfToken is the per-action token of action ("resolve owner/repo#12",
// "logout") under the session's CSRF secret.
func (s *session) csrfToken(action string) string {
	m := hmac.New(sha256.New, s.CSRF)
	m.Write([]byte(action))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkCSRF compares a form's token with the action's, in constant time.
func (s *session) checkCSRF(action, got string) bool {
	return hmac.Equal([]byte(s.csrfToken(action)), []byte(got))
}

// oauthState is what the short-lived sign-in cookie holds between /login
// and /oauth/callback.
type oauthState struct {
	State    string `json:"s"`
	Verifier string `json:"v"`
	Next     string `json:"n"`
	Expires  int64  `json:"e"`
}

// newSession starts a session for v with token t at now: it ends after
// ttl, or when the token does, whichever comes first.
func newSession(v Viewer, t Token, now time.Time, ttl time.Duration) *session {
	s := &session{
		Login: v.Login, ID: v.ID, Name: v.Name, Avatar: v.AvatarURL,
		Token: t.AccessToken, Issued: now.Unix(), Expires: now.Add(ttl).Unix(),
	}
	if !t.Expiry.IsZero() {
		s.TokenExpiry = t.Expiry.Unix()
		s.Expires = min(s.Expires, s.TokenExpiry)
	}
	s.SID, s.CSRF = randomText(16), randomBytes(32)
	return s
}

// session is the request's session: nil when there is none, or it is not
// valid, or the person signed out of it (anywhere: Config.Revocations); an
// error when the sign-outs cannot be read, and the request must then not
// proceed as signed in.
func (p *Pages) session(r *http.Request) (*session, error) {
	s := p.cookieSession(r)
	if s == nil {
		return nil, nil
	}
	revoked, err := p.cfg.Revocations.Revoked(r.Context(), s.SID)
	switch {
	case err != nil:
		return nil, fmt.Errorf("reading the sign-outs: %w", err)
	case revoked:
		return nil, nil
	}
	return s, nil
}

// cookieSession is the request's sealed session, when it is valid,
// whether or not it was signed out of.
func (p *Pages) cookieSession(r *http.Request) *session {
	c, err := r.Cookie(p.sessionCookie)
	if err != nil {
		return nil
	}
	var s session
	if !p.sessions.open(c.Value, &s) || !s.valid(p.cfg.Now()) {
		return nil
	}
	return &s
}

func (p *Pages) setSession(w http.ResponseWriter, s *session) error {
	v, err := p.sessions.seal(s)
	if err != nil {
		return err
	}
	p.setCookie(w, p.sessionCookie, v, "/", int(s.Expires-p.cfg.Now().Unix()))
	return nil
}

// setCookie sets one of the pages' cookies (maxAge -1 clears it): never
// readable by a script, Secure behind TLS, and not sent with another
// site's POST.
func (p *Pages) setCookie(w http.ResponseWriter, name, value, path string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: path, MaxAge: maxAge,
		HttpOnly: true, Secure: p.secure, SameSite: http.SameSiteLaxMode})
}

// Revocations are the sessions people signed out of, each kept until the
// session would have ended: a copy of a signed-out session's cookie opens
// nothing. Every replica must read the same ones (serve shares them in
// Redis with --redis-url). Errors mean "could not read or record": the
// pages then never proceed as signed in.
type Revocations interface {
	// Revoke records that session id ended; until is when it would have.
	Revoke(ctx context.Context, id string, until time.Time) error
	// Revoked reports whether session id was revoked.
	Revoked(ctx context.Context, id string) (bool, error)
}

// maxRevocations bounds the sign-outs one replica keeps in memory.
const maxRevocations = 1 << 20

// memRevocations are the sign-outs of one replica (Config.Revocations'
// default), each kept until its session would have ended.
type memRevocations struct {
	now func() time.Time
	max int // maxRevocations; tests lower it
	mu  sync.Mutex
	ids map[string]time.Time
}

func newMemRevocations(now func() time.Time) *memRevocations {
	return &memRevocations{now: now, max: maxRevocations, ids: map[string]time.Time{}}
}

// Revoke records id until until; when full of live sign-outs, it refuses
// rather than forget one.
func (m *memRevocations) Revoke(_ context.Context, id string, until time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.ids) >= m.max {
		now := m.now()
		for k, t := range m.ids {
			if !now.Before(t) {
				delete(m.ids, k)
			}
		}
	}
	if len(m.ids) >= m.max {
		return fmt.Errorf("recording a sign-out: %d sessions signed out already", len(m.ids))
	}
	m.ids[id] = until
	return nil
}

func (m *memRevocations) Revoked(_ context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.ids[id]
	return ok, nil
}
