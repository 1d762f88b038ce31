package ghclient

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/bradleyfalzon/ghinstallation/v2"
)

// NewInstallationTransport returns a RoundTripper that authenticates as one
// installation of a GitHub App: it signs a JWT with the App's private key,
// exchanges it for an installation token (POST
// /app/installations/{id}/access_tokens), caches the token and renews it a
// minute before it expires. baseURL is the API root as for Options.BaseURL
// (empty: api.github.com); base is the transport underneath (nil: a clone of
// http.DefaultTransport) — share one base between installations to reuse
// connections.
//
// Pass the result as Options.Transport: the Client's retries, rate-limit
// handling, ETag cache (keyed by app and installation) and write
// serialisation then apply to the installation's requests. The private key
// is never logged or put into an error.
func NewInstallationTransport(appID, installationID int64, privateKeyPEM []byte, baseURL string, base http.RoundTripper) (http.RoundTripper, error) {
	if installationID <= 0 {
		return nil, fmt.Errorf("github app %d: installation id %d is not positive", appID, installationID)
	}
	atr, err := NewAppTransport(appID, privateKeyPEM, baseURL, base)
	if err != nil {
		return nil, err
	}
	return ghinstallation.NewFromAppsTransport(atr.(*ghinstallation.AppsTransport), installationID), nil
}

// NewAppTransport returns a RoundTripper that authenticates as the GitHub
// App itself (a JWT per request), for the /app endpoints: installations,
// hook deliveries. It is a *ghinstallation.AppsTransport.
func NewAppTransport(appID int64, privateKeyPEM []byte, baseURL string, base http.RoundTripper) (http.RoundTripper, error) {
	if appID <= 0 {
		return nil, fmt.Errorf("github app transport: app id %d is not positive", appID)
	}
	u, err := apiBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	if base == nil {
		base = defaultTransport()
	}
	atr, err := ghinstallation.NewAppsTransport(base, appID, privateKeyPEM)
	if err != nil {
		// ghinstallation's message names the parse failure, never the key.
		return nil, fmt.Errorf("github app %d: read private key: %w", appID, err)
	}
	if u != nil {
		atr.BaseURL = strings.TrimSuffix(u.String(), "/")
	}
	return atr, nil
}
