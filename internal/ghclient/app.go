package ghclient

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/go-github/v60/github"
)

// The methods of this file serve the GitHub App (phasegate serve). App,
// ListInstallations, ListHookDeliveries and RedeliverHookDelivery need a
// Client that authenticates as the App itself (Options.Transport from
// NewAppTransport); InstallationRepos needs one that authenticates as an
// installation (NewInstallationTransport).

// App is a GitHub App as GitHub describes it (GET /app).
type App struct {
	ID      int64
	Slug    string
	Name    string
	Owner   string // login of the account that owns the App
	HTMLURL string
}

// BotLogin is the login the App's installations act as: "<slug>[bot]".
func (a App) BotLogin() string { return a.Slug + "[bot]" }

// Installation is one installation of the App.
type Installation struct {
	ID                  int64
	Account             string // login of the organisation or user it is installed on
	AccountType         string // "Organization" or "User"
	RepositorySelection string // "all" or "selected"
	Suspended           bool
}

// Repository is a repository an installation can access.
type Repository struct {
	ID            int64
	Owner         string
	Name          string
	DefaultBranch string
	Archived      bool
	Disabled      bool
	Private       bool
}

// HookDelivery is one delivery of the App's webhook (a redelivery is a
// delivery of its own, with the same GUID and Redelivery set).
type HookDelivery struct {
	ID             int64
	GUID           string // the X-GitHub-Delivery header
	DeliveredAt    time.Time
	Redelivery     bool
	Status         string // "OK" when the receiver answered 2xx
	StatusCode     int    // the receiver's HTTP status; 0 when none arrived
	Event          string
	Action         string
	InstallationID int64
	RepositoryID   int64
}

// OK reports whether the receiver accepted the delivery.
func (d HookDelivery) OK() bool {
	return d.Status == "OK" || (d.StatusCode >= 200 && d.StatusCode < 300)
}

// App returns the authenticated App (GET /app). It needs the App's JWT: a
// successful answer proves that the private key and the app id match.
func (c *Client) App(ctx context.Context) (App, error) {
	ctx = withOp(ctx, "App")
	a, _, err := c.gh.Apps.Get(ctx, "")
	if err != nil {
		return App{}, fmt.Errorf("read the github app: %w", err)
	}
	if a.GetSlug() == "" {
		return App{}, errors.New("read the github app: github named no slug")
	}
	return App{ID: a.GetID(), Slug: a.GetSlug(), Name: a.GetName(), Owner: a.GetOwner().GetLogin(), HTMLURL: a.GetHTMLURL()}, nil
}

// ListInstallations returns every installation of the App (GET
// /app/installations).
func (c *Client) ListInstallations(ctx context.Context) ([]Installation, error) {
	return listAll(withOp(ctx, "ListInstallations"), c, "list the app's installations", toInstallation,
		func(ctx context.Context, lo github.ListOptions) ([]*github.Installation, *github.Response, error) {
			return c.gh.Apps.ListInstallations(ctx, &lo)
		})
}

// InstallationRepos returns every repository the installation can access
// (GET /installation/repositories). Pages are followed by the Link header,
// or by total_count when a server sends no Link header.
func (c *Client) InstallationRepos(ctx context.Context) ([]Repository, error) {
	ctx = withOp(ctx, "InstallationRepos")
	return listRepos(ctx, c.opts.perPage, "the installation's repositories", func(opts *github.ListOptions) (*github.ListRepositories, *github.Response, error) {
		return c.gh.Apps.ListRepos(ctx, opts)
	})
}

// listRepos follows the pages of a repository listing (what names it in
// errors): by the Link header, or by total_count when a server sends none.
func listRepos(ctx context.Context, perPage int, what string, list func(*github.ListOptions) (*github.ListRepositories, *github.Response, error)) ([]Repository, error) {
	var out []Repository
	opts := &github.ListOptions{PerPage: perPage, Page: 1}
	for pages := 0; ; pages++ {
		if pages >= maxPages {
			return out, fmt.Errorf("list %s: more than %d pages", what, maxPages)
		}
		lr, resp, err := list(opts)
		if err != nil {
			return out, fmt.Errorf("list %s: %w", what, err)
		}
		if lr == nil {
			return out, nil
		}
		out = append(out, convert(lr.Repositories, toRepository)...)
		switch {
		case resp != nil && resp.NextPage > opts.Page:
			opts.Page = resp.NextPage
		case len(lr.Repositories) > 0 && len(out) < lr.GetTotalCount():
			opts.Page++
		default:
			return out, nil
		}
	}
}

// maxDeliveryPages bounds ListHookDeliveries: 10,000 deliveries.
const maxDeliveryPages = 100

// ListHookDeliveries returns the deliveries of the App's webhook since the
// given time, newest first (GET /app/hook/deliveries). GitHub lists newest
// first, so the listing stops at the first page that reaches back past
// since. Cursor pagination (GitHub's) and page pagination are both followed.
func (c *Client) ListHookDeliveries(ctx context.Context, since time.Time) ([]HookDelivery, error) {
	ctx = withOp(ctx, "ListHookDeliveries")
	var out []HookDelivery
	opts := &github.ListCursorOptions{PerPage: c.opts.perPage}
	page := 1
	for pages := 0; pages < maxDeliveryPages; pages++ {
		list, resp, err := c.gh.Apps.ListHookDeliveries(ctx, opts)
		if err != nil {
			return out, fmt.Errorf("list the app's webhook deliveries: %w", err)
		}
		older := false
		for _, d := range list {
			hd := HookDelivery{
				ID: d.GetID(), GUID: d.GetGUID(), DeliveredAt: d.GetDeliveredAt().Time, Redelivery: d.GetRedelivery(),
				Status: d.GetStatus(), StatusCode: d.GetStatusCode(), Event: d.GetEvent(), Action: d.GetAction(),
				InstallationID: d.GetInstallationID(), RepositoryID: d.GetRepositoryID(),
			}
			if !since.IsZero() && hd.DeliveredAt.Before(since) {
				older = true
				continue
			}
			out = append(out, hd)
		}
		switch {
		case older || len(list) == 0 || resp == nil:
			return out, nil
		case resp.Cursor != "":
			opts.Cursor = resp.Cursor
		case resp.NextPage > page:
			page = resp.NextPage
			opts.Page = strconv.Itoa(page)
		default:
			return out, nil
		}
	}
	return out, fmt.Errorf("list the app's webhook deliveries: more than %d pages", maxDeliveryPages)
}

// RedeliverHookDelivery asks GitHub to deliver a delivery of the App's
// webhook again (POST /app/hook/deliveries/{id}/attempts). GitHub answers
// 202 Accepted; the redelivery carries the same X-GitHub-Delivery GUID, so
// a receiver that deduplicates by it never acts twice. The request is not
// repeated blindly after an ambiguous failure (it is not idempotent).
func (c *Client) RedeliverHookDelivery(ctx context.Context, deliveryID int64) error {
	ctx = withOp(ctx, "RedeliverHookDelivery")
	_, _, err := c.gh.Apps.RedeliverHookDelivery(ctx, deliveryID)
	var accepted *github.AcceptedError
	if err != nil && !errors.As(err, &accepted) {
		return fmt.Errorf("redeliver webhook delivery %d: %w", deliveryID, err)
	}
	return nil
}

func toInstallation(in *github.Installation) Installation {
	return Installation{
		ID:                  in.GetID(),
		Account:             in.GetAccount().GetLogin(),
		AccountType:         in.GetAccount().GetType(),
		RepositorySelection: in.GetRepositorySelection(),
		Suspended:           in.SuspendedAt != nil,
	}
}
