package ghclient

import (
	"fmt"
	"net/http"
	"testing"
)

// userClient is a Client of alice's user token, issued through the App,
// listing smallPage items a page.
func userClient(t *testing.T, e *env, login string) *Client {
	t.Helper()
	tok := "ghu_" + login
	e.fake.AddUserToken(tok, login, oauthApp)
	c, err := NewUser(tok, Options{BaseURL: e.fake.URL(), Now: e.clock.Now, Sleep: e.clock.Sleep, perPage: smallPage})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNewUserNeedsAToken(t *testing.T) {
	if _, err := NewUser("", Options{}); err == nil {
		t.Error("NewUser without a token: want an error")
	}
}

func TestRepoVisible(t *testing.T) {
	tests := []struct {
		name    string
		login   string
		repo    string
		private bool
		want    bool
	}{
		{name: "a public repository", login: "mallory", repo: repo, want: true},
		{name: "a private repository the person may read", login: "alice", repo: repo, private: true, want: true},
		{name: "a private repository the person may not read", login: "mallory", repo: repo, private: true, want: false},
		{name: "a repository that does not exist", login: "alice", repo: "nope", want: false},
		{name: "a private repository the App is not installed on", login: "alice", repo: "secret", private: true, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := oauthEnv(t)
			e.fake.AddRepo(owner, "secret", "main")
			e.fake.SetPermission(owner, "secret", "alice", "admin")
			if tt.private {
				e.fake.SetRepoPrivate(owner, tt.repo, true)
			}
			uc := userClient(t, e, tt.login)
			got, err := uc.RepoVisible(ctxT(t), owner, tt.repo)
			if err != nil || got != tt.want {
				t.Errorf("RepoVisible = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	t.Run("a failure is an error, not invisibility", func(t *testing.T) {
		e, _ := oauthEnv(t)
		uc := userClient(t, e, "alice")
		e.fake.FailNext(DefaultMaxAttempts, http.StatusServiceUnavailable, "/repos/"+owner+"/"+repo)
		if got, err := uc.RepoVisible(ctxT(t), owner, repo); err == nil || got {
			t.Errorf("RepoVisible = %v, %v; want an error", got, err)
		}
	})
}

// TestPrivateRepoAnswersLikeMissing: a person without access to a private
// repository gets exactly what a missing one answers, on the repository and
// under it.
func TestPrivateRepoAnswersLikeMissing(t *testing.T) {
	e, _ := oauthEnv(t)
	e.fake.SetRepoPrivate(owner, repo, true)
	e.fake.AddIssue(owner, repo, "private", "", "alice")
	uc := userClient(t, e, "mallory")
	ctx := ctxT(t)
	_, errPrivate := uc.ListIssueComments(ctx, owner, repo, 1)
	_, errMissing := uc.ListIssueComments(ctx, owner, "missing", 1)
	if !IsNotFound(errPrivate) || !IsNotFound(errMissing) {
		t.Errorf("private: %v; missing: %v; want 404 for both", errPrivate, errMissing)
	}
	if _, err := uc.CreateIssueComment(ctx, owner, repo, 1, "/resolve D-001 approve"); !IsNotFound(err) {
		t.Errorf("comment on a private repository the person cannot see: %v, want 404", err)
	}
}

func TestUserInstallations(t *testing.T) {
	e, _ := oauthEnv(t)
	// A second installation, on another account, with 8 repositories of
	// which alice may read 6 (two pages), and one she may not see at all.
	e.fake.AddInstallation(oauthApp, 600)
	var names []string
	for i := 0; i < smallPage+3; i++ {
		name := fmt.Sprintf("r%03d", i)
		e.fake.AddRepo("globex", name, "main")
		names = append(names, "globex/"+name)
		if i < smallPage+1 {
			e.fake.SetPermission("globex", name, "alice", "read")
		}
	}
	e.fake.SetInstallationRepos(600, "globex", names...)
	e.fake.AddInstallation(oauthApp, 700)
	e.fake.SetInstallationRepos(700, "initech", "initech/tps")
	e.fake.AddRepo("initech", "tps", "main")
	// Another App's installation is not this App's user's business.
	e.fake.AddAppToken("tok-other", 88, "other-app")
	e.fake.AddInstallation(88, 800)
	e.fake.SetInstallationRepos(800, owner, owner+"/"+repo)

	uc := userClient(t, e, "alice")
	ctx := ctxT(t)
	insts, err := uc.UserInstallations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(insts) != 2 || insts[0].ID != 500 || insts[1].ID != 600 || insts[1].Account != "globex" || insts[1].RepositorySelection != "selected" {
		t.Fatalf("installations = %+v, want 500 and 600", insts)
	}
	repos, err := uc.UserInstallationRepos(ctx, 600)
	if err != nil {
		t.Fatal(err)
	}
	if len(repos) != smallPage+1 || repos[0].Owner != "globex" || repos[0].Name != "r000" || repos[smallPage].Name != "r005" {
		t.Errorf("repositories = %d (%+v…), want r000…r005", len(repos), repos[:min(2, len(repos))])
	}
	if got := statuses(e.fake, http.MethodGet, "/user/installations/600/repositories"); len(got) != 2 {
		t.Errorf("pages read = %v, want 2 (followed by the Link header)", got)
	}
	if _, err := uc.UserInstallationRepos(ctx, 700); !IsNotFound(err) {
		t.Errorf("an installation the person cannot access: %v, want 404", err)
	}
	// An installation token is no person.
	inst := e.c
	if _, err := inst.CurrentUser(ctx); err != nil {
		t.Errorf("a person's own token reads /user: %v", err)
	}
	app, err := New(Options{BaseURL: e.fake.URL(), Token: "tok-app", Now: e.clock.Now, Sleep: e.clock.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.UserInstallations(ctx); StatusCode(err) != http.StatusForbidden {
		t.Errorf("an installation's token lists /user/installations: %v, want 403", err)
	}
}
