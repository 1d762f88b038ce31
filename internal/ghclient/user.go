package ghclient

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-github/v60/github"
)

// The methods of this file read GitHub as a person, with their user access
// token (OAuth.Exchange) in a Client of NewUser: what they can see is what
// GitHub lets them see. CreateIssueComment on such a Client posts as the
// person (GitHub shows the App the comment was made through:
// Comment.ViaApp).

// User is a GitHub account as /user describes it.
type User struct {
	Login     string
	ID        int64
	Name      string // "" when they set none
	AvatarURL string
}

// NewUser builds a Client that acts as a person with their user access
// token: opts as for New (BaseURL, Version, the clock…), with
// opts.Token set to token. Its ETag cache is keyed by the token, so one
// person's answers never serve another's requests.
func NewUser(token string, opts Options) (*Client, error) {
	if token == "" {
		return nil, errors.New("github user client: no user access token")
	}
	opts.Token = token
	opts.Transport = nil // the token authenticates, not an installation transport
	return New(opts)
}

// CurrentUser returns the account the Client's token acts as (GET /user).
func (c *Client) CurrentUser(ctx context.Context) (User, error) {
	ctx = withOp(ctx, "CurrentUser")
	u, _, err := c.gh.Users.Get(ctx, "")
	if err != nil {
		return User{}, fmt.Errorf("read the signed-in user: %w", err)
	}
	if u.GetLogin() == "" {
		return User{}, errors.New("read the signed-in user: github named no login")
	}
	return User{Login: u.GetLogin(), ID: u.GetID(), Name: u.GetName(), AvatarURL: u.GetAvatarURL()}, nil
}

// UserInstallations returns the installations of the App that the person
// can access (GET /user/installations, with a token the App's OAuth flow
// issued), every page.
func (c *Client) UserInstallations(ctx context.Context) ([]Installation, error) {
	return listAll(withOp(ctx, "UserInstallations"), c, "list the installations the user can access", toInstallation,
		func(ctx context.Context, lo github.ListOptions) ([]*github.Installation, *github.Response, error) {
			return c.gh.Apps.ListUserInstallations(ctx, &lo)
		})
}

// UserInstallationRepos returns the repositories of one installation that
// the person can access (GET /user/installations/{id}/repositories), every
// page. Pages are followed by the Link header, or by total_count when a
// server sends none.
func (c *Client) UserInstallationRepos(ctx context.Context, installationID int64) ([]Repository, error) {
	ctx = withOp(ctx, "UserInstallationRepos")
	what := fmt.Sprintf("the repositories of installation %d the user can access", installationID)
	return listRepos(ctx, c.opts.perPage, what, func(opts *github.ListOptions) (*github.ListRepositories, *github.Response, error) {
		return c.gh.Apps.ListUserRepos(ctx, installationID, opts)
	})
}

// RepoVisible reports whether the Client's identity can read the repository
// (GET /repos/{owner}/{repo}): false with a nil error when GitHub answers
// 404, which it does alike for a repository that does not exist and for a
// private one the identity may not see.
func (c *Client) RepoVisible(ctx context.Context, owner, repo string) (bool, error) {
	ctx = withOp(ctx, "RepoVisible")
	_, _, err := c.gh.Repositories.Get(ctx, owner, repo)
	switch {
	case err == nil:
		return true, nil
	case IsNotFound(err):
		return false, nil
	}
	return false, fmt.Errorf("read repository %s: %w", repoName(owner, repo), err)
}

func toRepository(r *github.Repository) Repository {
	return Repository{
		ID: r.GetID(), Owner: r.GetOwner().GetLogin(), Name: r.GetName(), DefaultBranch: r.GetDefaultBranch(),
		Archived: r.GetArchived(), Disabled: r.GetDisabled(), Private: r.GetPrivate(),
	}
}
