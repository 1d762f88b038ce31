package ghfake

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// AddApp registers a GitHub App: JWTs signed with the private key of pub and
// issued for id are accepted on /app endpoints. Installation tokens act as
// "<slug>[bot]", a Bot.
func (s *Server) AddApp(id int64, slug string, pub *rsa.PublicKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apps[id] = &app{id: id, slug: slug, key: pub}
	s.userLocked(slug + "[bot]").typ = "Bot"
}

// AddAppToken makes requests authenticated with tok act as an installation
// of App appID ("<slug>[bot]", a Bot), as a minted installation token does,
// without the JWT exchange: for tests of what only an App may do (check
// runs). The App is registered (without a key) when it is not yet.
func (s *Server) AddAppToken(tok string, appID int64, slug string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.apps[appID]; !ok {
		s.apps[appID] = &app{id: appID, slug: slug}
	}
	slug = s.apps[appID].slug
	s.userLocked(slug + "[bot]").typ = "Bot"
	s.tokens[tok] = token{login: slug + "[bot]", app: appID}
}

// AddInstallation installs app appID with installation id installationID.
func (s *Server) AddInstallation(appID, installationID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inst[installationID] = appID
}

// verifyJWT checks a GitHub App JWT as GitHub does: RS256, signed by the
// app's key, iss the app id, not expired, issued no later than a minute from
// now, and valid for at most ten minutes.
func verifyJWT(tok string, apps map[int64]*app, now time.Time) (*app, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil, errors.New("not a JWT")
	}
	hb, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	var header struct {
		Alg string `json:"alg"`
	}
	if err := json.Unmarshal(hb, &header); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if header.Alg != "RS256" {
		return nil, fmt.Errorf("alg %q is not RS256", header.Alg)
	}
	cb, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, fmt.Errorf("claims: %w", err)
	}
	var claims struct {
		Iss json.RawMessage `json:"iss"`
		Iat int64           `json:"iat"`
		Exp int64           `json:"exp"`
	}
	if err := json.Unmarshal(cb, &claims); err != nil {
		return nil, fmt.Errorf("claims: %w", err)
	}
	iss := strings.Trim(string(claims.Iss), `"`)
	id, err := strconv.ParseInt(iss, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("iss %q is not an app id", iss)
	}
	a, ok := apps[id]
	if !ok || a.key == nil {
		return nil, fmt.Errorf("no app %d", id)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, fmt.Errorf("signature: %w", err)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(a.key, crypto.SHA256, sum[:], sig); err != nil {
		return nil, errors.New("signature does not verify")
	}
	iat, exp := time.Unix(claims.Iat, 0), time.Unix(claims.Exp, 0)
	switch {
	case !now.Before(exp):
		return nil, errors.New("'Expiration time' claim ('exp') is too far in the past")
	case iat.After(now.Add(time.Minute)):
		return nil, errors.New("'Issued at' claim ('iat') must be an Integer representing a time in the past")
	case exp.Sub(iat) > 10*time.Minute:
		return nil, errors.New("'Expiration time' claim ('exp') is too far in the future")
	}
	return a, nil
}

// accessToken handles POST /app/installations/{id}/access_tokens.
func (s *Server) accessToken(q *req) reply {
	if !strings.HasPrefix(q.login, "app:") {
		return errReply(401, "A JSON web token could not be decoded")
	}
	appID, _ := strconv.ParseInt(strings.TrimPrefix(q.login, "app:"), 10, 64)
	instID, err := strconv.ParseInt(q.params["id"], 10, 64)
	if err != nil || s.inst[instID] != appID {
		return notFound()
	}
	a := s.apps[appID]
	now := s.now().UTC()
	tok := fmt.Sprintf("ghs_fake%d_%d", instID, s.nextID())
	exp := now.Add(time.Hour)
	s.tokens[tok] = token{login: a.slug + "[bot]", expires: exp, app: appID}
	perms := map[string]any{"issues": "write", "pull_requests": "write", "statuses": "write", "contents": "read", "metadata": "read", "members": "read"}
	if set, ok := s.perms[strings.ToLower(a.slug+"[bot]")]; ok {
		perms = map[string]any{}
		for k, v := range set {
			perms[k] = v
		}
	}
	return reply{status: 201, body: map[string]any{
		"token":                tok,
		"expires_at":           exp.Format(time.RFC3339),
		"permissions":          perms,
		"repository_selection": "all",
	}}
}
