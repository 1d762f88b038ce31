package ghclient

import (
	"context"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/ghfake/ghfaketest"
)

const (
	owner    = "acme"
	repo     = "widgets"
	botToken = "tok-phasegate"
	botLogin = "phasegate-bot"
)

// smallPage is the page size the pagination tests lower their client to
// (Options.perPage): a listing of a few items then spans several pages, so
// page boundaries, Link headers, conditional and stale pages and the bounds
// on pages are proven without hundreds of items (the fake pages by per_page
// as GitHub does). TestListingsAskForGitHubsMaximum proves that a Client
// otherwise asks for maxPerPage, GitHub's maximum.
const smallPage = 5

var epoch = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// env is a fake GitHub and a client talking to it on a shared manual clock.
type env struct {
	fake  *ghfake.Server
	clock *ghfake.ManualClock
	c     *Client
}

// newEnv starts a fake with acme/widgets and a bot token, and a client on a
// manual clock shared with the fake, so waits take no real time.
func newEnv(t *testing.T, opts Options) *env {
	t.Helper()
	f := ghfake.New()
	t.Cleanup(f.Close)
	return newEnvOn(t, f, opts)
}

// newEnvOn is newEnv on a fake the test started (to put a proxy in front of
// it, say).
func newEnvOn(t *testing.T, f *ghfake.Server, opts Options) *env {
	t.Helper()
	ghfaketest.Verify(t, f)
	clock := ghfake.NewManualClock(epoch)
	f.SetClock(clock.Now)
	f.AddToken(botToken, botLogin)
	f.AddUser(botLogin, "Bot")
	f.AddRepo(owner, repo, "main")
	if opts.BaseURL == "" {
		opts.BaseURL = f.URL()
	}
	if opts.Token == "" {
		opts.Token = botToken
	}
	if opts.Now == nil {
		opts.Now = clock.Now
	}
	if opts.Sleep == nil {
		opts.Sleep = clock.Sleep
	}
	c, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return &env{fake: f, clock: clock, c: c}
}

func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// statuses returns the statuses of the logged calls matching method and path
// prefix, in order.
func statuses(f *ghfake.Server, method, prefix string) []int {
	var out []int
	for _, c := range f.Calls() {
		if c.Method == method && len(c.Path) >= len(prefix) && c.Path[:len(prefix)] == prefix {
			out = append(out, c.Status)
		}
	}
	return out
}
