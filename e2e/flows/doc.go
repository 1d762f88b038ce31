// Package flows holds the browser tests of `phasegate serve`'s pages: the
// flows a person goes through in a real headless Chromium (e2e/browser),
// against the real server (internal/server, its pages turned on with
// server.WithPages) and internal/ghfake as GitHub and as GitHub's OAuth
// provider, all in the test process.
//
// Every test builds its own world (world_test.go): a fake GitHub holding
// two repositories of one installation, pull requests whose check jobs post
// the Phase Outcomes, and a server whose clock is fixed, so that the pages
// show the same times on every run. Run them with `go -C e2e test ./flows/`;
// `-update` rewrites the README's screenshots in docs/img/.
package flows
