package ghclient

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/ghfake"
)

// appEnv is a fake GitHub with App 4242 ("phasegate") and a client
// authenticated as the App (real clock: ghinstallation signs with
// time.Now), listing smallPage items a page.
func appEnv(t *testing.T) (*ghfake.Server, *Client) {
	t.Helper()
	return appEnvPaged(t, smallPage)
}

// appEnvPaged is appEnv listing perPage items a page (0: GitHub's maximum).
func appEnvPaged(t *testing.T, perPage int) (*ghfake.Server, *Client) {
	t.Helper()
	key, _ := testKeys(t)
	f := ghfake.New()
	t.Cleanup(f.Close)
	f.AddApp(4242, "phasegate", &key.PublicKey)
	atr, err := NewAppTransport(4242, pemOf(key), f.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{BaseURL: f.URL(), Transport: atr, CacheIdentity: "app-4242", BackoffBase: time.Millisecond, BackoffMax: 2 * time.Millisecond,
		perPage: perPage})
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func TestApp(t *testing.T) {
	key, other := testKeys(t)
	tests := []struct {
		name     string
		signWith []byte
		wantErr  string
		wantBot  string
	}{
		{name: "the app's key", signWith: pemOf(key), wantBot: "phasegate[bot]"},
		{name: "another key", signWith: pemOf(other), wantErr: "401"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := appEnv(t)
			atr, err := NewAppTransport(4242, tt.signWith, f.URL(), nil)
			if err != nil {
				t.Fatal(err)
			}
			c, err := New(Options{BaseURL: f.URL(), Transport: atr})
			if err != nil {
				t.Fatal(err)
			}
			a, err := c.App(ctxT(t))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || StatusCode(err) != 401 {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.ID != 4242 || a.Slug != "phasegate" || a.BotLogin() != tt.wantBot {
				t.Fatalf("app %+v", a)
			}
		})
	}
}

func TestAppNeedsTheJWT(t *testing.T) {
	key, _ := testKeys(t)
	f, _ := appEnv(t)
	f.AddInstallation(4242, 77)
	itr, err := NewInstallationTransport(4242, 77, pemOf(key), f.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{BaseURL: f.URL(), Transport: itr})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.App(ctxT(t)); StatusCode(err) != 401 {
		t.Fatalf("GET /app with an installation token: %v, want 401", err)
	}
}

func TestListInstallations(t *testing.T) {
	tests := []struct {
		name  string
		count int
	}{
		{name: "none", count: 0},
		{name: "one page", count: 3},
		{name: "several pages", count: 2*smallPage + 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, c := appEnv(t)
			for i := 0; i < tt.count; i++ {
				f.AddInstallation(4242, int64(1000+i))
			}
			f.AddInstallation(9999, 5) // another app's
			f.SetInstallationRepos(1000, "acme")
			list, err := c.ListInstallations(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != tt.count {
				t.Fatalf("%d installations, want %d", len(list), tt.count)
			}
			for i, in := range list {
				if in.ID != int64(1000+i) {
					t.Fatalf("installation %d has id %d", i, in.ID)
				}
			}
			if tt.count > 0 && (list[0].Account != "acme" || list[0].RepositorySelection != "selected") {
				t.Fatalf("first installation %+v", list[0])
			}
		})
	}
}

func TestInstallationRepos(t *testing.T) {
	key, _ := testKeys(t)
	tests := []struct {
		name     string
		repos    int
		selected []string
		want     int
	}{
		{name: "all, one page", repos: smallPage - 2, want: smallPage - 2},
		{name: "all, pages followed by total_count", repos: 2*smallPage + 3, want: 2*smallPage + 3},
		{name: "selected", repos: 20, selected: []string{"acme/repo-003", "acme/repo-011"}, want: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := appEnv(t)
			f.AddInstallation(4242, 77)
			for i := 0; i < tt.repos; i++ {
				f.AddRepo("acme", fmt.Sprintf("repo-%03d", i), "main")
			}
			if tt.selected != nil {
				f.SetInstallationRepos(77, "acme", tt.selected...)
			}
			itr, err := NewInstallationTransport(4242, 77, pemOf(key), f.URL(), nil)
			if err != nil {
				t.Fatal(err)
			}
			c, err := New(Options{BaseURL: f.URL(), Transport: itr, perPage: smallPage})
			if err != nil {
				t.Fatal(err)
			}
			list, err := c.InstallationRepos(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != tt.want {
				t.Fatalf("%d repositories, want %d", len(list), tt.want)
			}
			seen := map[string]bool{}
			for _, r := range list {
				if r.Owner != "acme" || r.DefaultBranch != "main" || seen[r.Name] {
					t.Fatalf("repository %+v (twice: %v)", r, seen[r.Name])
				}
				seen[r.Name] = true
			}
		})
	}
}

func TestListHookDeliveries(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	tests := []struct {
		name   string
		recent int // within the window, newest first
		old    int // before it
		want   int
	}{
		{name: "none", want: 0},
		{name: "recent only", recent: smallPage - 2, want: smallPage - 2},
		{name: "pages up to the window", recent: 2*smallPage + 3, old: 3 * smallPage, want: 2*smallPage + 3},
		{name: "old only", old: 5, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, c := appEnv(t)
			for i := 0; i < tt.old; i++ {
				f.AddHookDelivery(ghfake.HookDelivery{GUID: fmt.Sprintf("old-%d", i), Event: "ping", StatusCode: 200,
					DeliveredAt: now.Add(-2*time.Hour - time.Duration(i)*time.Second)})
			}
			for i := 0; i < tt.recent; i++ {
				f.AddHookDelivery(ghfake.HookDelivery{GUID: fmt.Sprintf("new-%d", i), Event: "issue_comment", Action: "created",
					StatusCode: 502, InstallationID: 77, DeliveredAt: now.Add(-time.Duration(i) * time.Second)})
			}
			list, err := c.ListHookDeliveries(ctxT(t), now.Add(-time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != tt.want {
				t.Fatalf("%d deliveries, want %d", len(list), tt.want)
			}
			for i, d := range list {
				if d.GUID != fmt.Sprintf("new-%d", i) || d.OK() || d.Status != "Invalid HTTP Response: 502" || d.InstallationID != 77 {
					t.Fatalf("delivery %d: %+v", i, d)
				}
			}
			// Paging stops at the window: the old deliveries' pages are
			// not all read.
			if pages := f.CountCalls("GET", "/app/hook/deliveries"); tt.old > smallPage && pages > (tt.recent+tt.old)/smallPage {
				t.Fatalf("%d pages read", pages)
			}
		})
	}
}

func TestRedeliverHookDelivery(t *testing.T) {
	f, c := appEnv(t)
	id := f.AddHookDelivery(ghfake.HookDelivery{GUID: "g-1", Event: "issue_comment", StatusCode: 503, Payload: []byte(`{}`)})
	tests := []struct {
		name    string
		id      int64
		wantErr bool
	}{
		{name: "a delivery GitHub knows (202)", id: id},
		{name: "an unknown delivery (404)", id: id + 1000, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.RedeliverHookDelivery(ctxT(t), tt.id)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, tt.wantErr)
			}
		})
	}
	ds := f.HookDeliveries()
	if len(ds) != 2 || !ds[1].Redelivery || ds[1].GUID != "g-1" {
		t.Fatalf("deliveries %+v", ds)
	}
}
