package pages

import (
	"context"
	"fmt"

	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/web"
)

// OAuth is the App's OAuth web flow o as the pages consume it
// (web.OAuth): a signed-in person's reads use Config.User's client.
func (p *Source) OAuth(o *ghclient.OAuth) web.OAuth {
	return pagesOAuth{OAuth: o, users: p.cfg.User}
}

type pagesOAuth struct {
	*ghclient.OAuth // AuthCodeURL
	users           func(token string) (*ghclient.Client, error)
}

func (a pagesOAuth) Exchange(ctx context.Context, code, verifier string) (web.Token, error) {
	t, err := a.OAuth.Exchange(ctx, code, verifier)
	if err != nil {
		return web.Token{}, err
	}
	return web.Token{AccessToken: t.AccessToken, Expiry: t.Expiry}, nil
}

func (a pagesOAuth) Revoke(ctx context.Context, t web.Token) error {
	return a.OAuth.RevokeToken(ctx, t.AccessToken)
}

func (a pagesOAuth) User(t web.Token) web.UserAPI {
	return personAPI{token: t.AccessToken, users: a.users}
}

// personAPI is GitHub read with a person's own token.
type personAPI struct {
	token string
	users func(token string) (*ghclient.Client, error)
}

func (p personAPI) CurrentUser(ctx context.Context) (web.Viewer, error) {
	c, err := p.users(p.token)
	if err != nil {
		return web.Viewer{}, err
	}
	u, err := c.CurrentUser(ctx)
	if err != nil {
		return web.Viewer{}, err
	}
	return web.Viewer{Login: u.Login, ID: u.ID, Name: u.Name, AvatarURL: u.AvatarURL}, nil
}

// maxPersonRepos bounds the repositories one inbox reads (GitHub pages
// them 100 at a time).
const maxPersonRepos = 5000

// Repos is every repository of the App's installations the person can see
// (GitHub answers /user/installations with this App's installations only,
// for a token of this App).
func (p personAPI) Repos(ctx context.Context) ([]web.RepoRef, error) {
	c, err := p.users(p.token)
	if err != nil {
		return nil, err
	}
	insts, err := c.UserInstallations(ctx)
	if err != nil {
		return nil, err
	}
	var out []web.RepoRef
	for _, in := range insts {
		if in.Suspended {
			continue
		}
		repos, err := c.UserInstallationRepos(ctx, in.ID)
		if err != nil {
			return nil, fmt.Errorf("the repositories of installation %d: %w", in.ID, err)
		}
		for _, r := range repos {
			if len(out) == maxPersonRepos {
				return out, nil
			}
			out = append(out, web.RepoRef{Owner: r.Owner, Name: r.Name, Installation: in.ID, Private: r.Private})
		}
	}
	return out, nil
}

func (p personAPI) CanSee(ctx context.Context, owner, repo string) (bool, error) {
	c, err := p.users(p.token)
	if err != nil {
		return false, err
	}
	return c.RepoVisible(ctx, owner, repo)
}
