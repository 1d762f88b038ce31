package ghclient

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-github/v60/github"
)

// maxPerPage is the page size of every list: GitHub's maximum. A Client
// asks for it unless its tests lowered Options.perPage.
const maxPerPage = 100

// maxPages bounds a listing (100,000 items), in case a server's Link headers
// never end.
const maxPages = 1000

// MaxStatusDescription is GitHub's limit on a commit status description.
const MaxStatusDescription = 140

// MaxBodyChars is GitHub's limit on an issue or comment body, in characters.
const MaxBodyChars = 65536

// guardWindow is how far back the idempotency guard looks for a create whose
// response was lost, allowing for clock skew between us and GitHub.
const guardWindow = 2 * time.Minute

type Status struct {
	State       string // error, failure, pending or success
	Context     string // e.g. "phasegate/contracts"
	Description string // truncated to 140 characters
	TargetURL   string // optional
	Creator     string // login that set it (read only: LatestStatus fills it)
}

// Comment is an issue or pull request comment.
type Comment struct {
	ID        int64
	Body      string
	User      string // login of the author
	UserType  string // "User", "Bot" or "Organization"
	CreatedAt time.Time
	UpdatedAt time.Time
	HTMLURL   string
	// Issue is the number of the issue or pull request the comment is on
	// (from its issue_url); set by every listing.
	Issue int
	// NodeID is the comment's GraphQL id (for EditedComments).
	NodeID string
	// Reactions counts the comment's reactions by content (+1, -1, laugh,
	// confused, heart, hooray, rocket, eyes), from the rollup GitHub puts in
	// every listed comment; contents with none are absent. Who reacted is
	// not in the rollup: see CommentReactors.
	Reactions map[string]int
	// ViaApp is the slug of the GitHub App the comment was posted through
	// (GitHub's performed_via_github_app): a person's comment made with a
	// user access token of an App, or an installation's own; "" when none.
	ViaApp string
}

func (c Comment) IsBot() bool { return c.UserType == "Bot" }

// Edited reports whether GitHub shows the comment as changed since it was
// posted: its updated_at is later than its created_at. GitHub moves
// updated_at when the body is edited (by anyone with write access); a
// comment never edited has the two equal.
func (c Comment) Edited() bool { return !c.UpdatedAt.IsZero() && c.UpdatedAt.After(c.CreatedAt) }

type PR struct {
	Number  int
	State   string // open or closed
	Author  string
	HeadSHA string
	HeadRef string
	// HeadRepo is the full name of the head's repository ("" when GitHub
	// names none: a deleted fork).
	HeadRepo string
	BaseSHA  string
	BaseRef  string
	Merged   bool
	HTMLURL  string
}

// Issue is an issue or a pull request, as listed.
type Issue struct {
	Number        int
	Title         string
	Body          string
	State         string
	Author        string
	Labels        []string
	IsPullRequest bool
	HTMLURL       string
	// Comments is the number of comments on it (GitHub's count: a deleted
	// comment is no longer counted), and UpdatedAt when it last changed.
	Comments  int
	UpdatedAt time.Time
}

func repoName(owner, repo string) string { return owner + "/" + repo }

// wrapf is nil when err is, else err wrapped: "<format, args>: <err>".
func wrapf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

// convert maps every item of a GitHub listing to phasegate's shape.
func convert[S, T any](list []S, f func(S) T) []T {
	out := make([]T, 0, len(list))
	for _, s := range list {
		out = append(out, f(s))
	}
	return out
}

// listAll reads every page of a listing (at most maxPages) and maps its
// items to phasegate's shape; after a failure it returns no items and the
// error, wrapped with what.
func listAll[S, T any](ctx context.Context, c *Client, what string, f func(S) T, fetch func(context.Context, github.ListOptions) ([]S, *github.Response, error)) ([]T, error) {
	list, err := paginate(ctx, c.opts.perPage, maxPages, fetch)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return convert(list, f), nil
}

// errMorePages is paginate's error (wrapped) for a list longer than the
// pages it may read; it returns the pages it read.
var errMorePages = errors.New("more pages")

// paginate collects every page of a list, perPage (the Client's page size)
// at a time, reading at most maxPages pages.
func paginate[T any](ctx context.Context, perPage, maxPages int, fetch func(context.Context, github.ListOptions) ([]T, *github.Response, error)) ([]T, error) {
	var all []T
	opts := github.ListOptions{PerPage: perPage, Page: 1}
	for pages := 0; pages < maxPages; pages++ {
		items, resp, err := fetch(ctx, opts)
		if err != nil {
			return all, err
		}
		all = append(all, items...)
		switch {
		case resp != nil && resp.NextPage > opts.Page:
			opts.Page = resp.NextPage
		case stalePage(resp, len(items), perPage):
			opts.Page++ // a full page confirmed by a 304 may predate a new page: look
		default:
			return all, nil
		}
	}
	return all, fmt.Errorf("more than %d pages: %w", maxPages, errMorePages)
}

// stalePage reports a full page without a next link that came from the
// cache after a 304 without a Link of its own: its Link is the one stored
// with it, from before any page was added after it (GitHub's ETag answers
// for the page's content), so the next page must be asked for. A 304 that
// carries a Link says how many pages there are now; a page that was not
// full (perPage items) is the last whatever its Link says.
func stalePage(resp *github.Response, n, perPage int) bool {
	return resp != nil && resp.Response != nil && n >= perPage && resp.Header.Get(revalidatedHeader) != ""
}

// CreateStatus sets a commit status on sha. The description is cut to 140
// characters on a character boundary, with an ellipsis.
func (c *Client) CreateStatus(ctx context.Context, owner, repo, sha string, s Status) error {
	ctx = idempotent(withOp(ctx, "CreateStatus"))
	switch s.State {
	case "error", "failure", "pending", "success":
	default:
		return fmt.Errorf("set status %q on %s@%s: state %q is not error, failure, pending or success",
			s.Context, repoName(owner, repo), sha, s.State)
	}
	if sha == "" {
		return fmt.Errorf("set status %q on %s: no commit sha", s.Context, repoName(owner, repo))
	}
	st := &github.RepoStatus{State: github.String(s.State), Context: optString(s.Context),
		Description: optString(StatusDescription(s.Description)), TargetURL: optString(s.TargetURL)}
	_, _, err := c.gh.Repositories.CreateStatus(ctx, owner, repo, sha, st)
	return wrapf(err, "set status %q on %s@%s", s.Context, repoName(owner, repo), sha)
}

// LatestStatus returns the newest status of context on sha, and whether
// there is one: the head of StatusHistory for that context. A repeated read
// of an unchanged commit costs a 304.
func (c *Client) LatestStatus(ctx context.Context, owner, repo, sha, context string) (Status, bool, error) {
	list, err := c.statusHistory(withOp(ctx, "LatestStatus"), owner, repo, sha, []string{context})
	if err != nil || len(list) == 0 {
		return Status{}, false, err
	}
	return list[0], true, nil
}

// StatusDescription is a status description as GitHub stores it after
// CreateStatus: control characters become spaces, runs of space collapse,
// and a longer text is cut to 140 characters on a rune boundary with "…".
func StatusDescription(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if utf8.RuneCountInString(s) <= MaxStatusDescription {
		return s
	}
	runes := []rune(s)[:MaxStatusDescription-1]
	// Do not leave a combining mark without its base, nor a trailing space.
	for len(runes) > 0 && (unicode.Is(unicode.Mn, runes[len(runes)-1]) || unicode.IsSpace(runes[len(runes)-1])) {
		runes = runes[:len(runes)-1]
	}
	return string(runes) + "…"
}

// issueComment is GitHub's issue comment with what go-github v60's
// IssueComment lacks: the App it was posted through.
type issueComment struct {
	github.IssueComment
	PerformedViaGithubApp *struct {
		Slug string `json:"slug"`
	} `json:"performed_via_github_app"`
}

// reactionsPreview is the media type go-github's comment listings send (the
// reactions rollup); the raw requests below send it too, so that their
// cache entries and answers are the ones go-github's calls had.
const reactionsPreview = "application/vnd.github.squirrel-girl-preview"

func toComment(raw *issueComment) Comment {
	ic := &raw.IssueComment
	via := ""
	if raw.PerformedViaGithubApp != nil {
		via = raw.PerformedViaGithubApp.Slug
	}
	return Comment{
		ViaApp:    via,
		ID:        ic.GetID(),
		Body:      ic.GetBody(),
		User:      ic.GetUser().GetLogin(),
		UserType:  ic.GetUser().GetType(),
		CreatedAt: ic.GetCreatedAt().Time,
		UpdatedAt: ic.GetUpdatedAt().Time,
		HTMLURL:   ic.GetHTMLURL(),
		Issue:     issueNumberOf(ic.GetIssueURL()),
		NodeID:    ic.GetNodeID(),
		Reactions: reactionCounts(ic.Reactions),
	}
}

// issueNumberOf is the number at the end of an issue_url, 0 if none.
func issueNumberOf(u string) int {
	i := strings.LastIndexByte(u, '/')
	n, err := strconv.Atoi(u[i+1:])
	if i < 0 || err != nil || n < 0 {
		return 0
	}
	return n
}

// EditedComments asks GitHub's GraphQL API which of the comments (by node
// id) were ever edited: lastEditedAt is set by any edit, also one made in
// the same second as the post, which the REST API's second-resolution
// updated_at cannot show. A comment GitHub no longer has is absent from the
// result. One query (one point of the GraphQL rate limit) per 100 ids.
func (c *Client) EditedComments(ctx context.Context, nodeIDs []string) (map[string]bool, error) {
	ctx = idempotent(withOp(ctx, "EditedComments")) // a query: safe to repeat
	const query = `query($ids: [ID!]!) { nodes(ids: $ids) { ... on IssueComment { id lastEditedAt } } }`
	out := map[string]bool{}
	for start := 0; start < len(nodeIDs); start += 100 {
		ids := nodeIDs[start:min(start+100, len(nodeIDs))]
		req, err := c.gh.NewRequest("POST", c.graphqlURL(), map[string]any{"query": query, "variables": map[string]any{"ids": ids}})
		if err != nil {
			return nil, fmt.Errorf("ask which comments were edited: %w", err)
		}
		var resp struct {
			Data struct {
				Nodes []*struct {
					ID           string  `json:"id"`
					LastEditedAt *string `json:"lastEditedAt"`
				} `json:"nodes"`
			} `json:"data"`
			Errors []struct {
				Message string `json:"message"`
			} `json:"errors"`
		}
		if _, err := c.gh.Do(ctx, req, &resp); err != nil {
			return nil, fmt.Errorf("ask which comments were edited: %w", err)
		}
		if len(resp.Errors) > 0 {
			return nil, fmt.Errorf("ask which comments were edited: graphql: %s", resp.Errors[0].Message)
		}
		for _, n := range resp.Data.Nodes {
			if n != nil && n.ID != "" {
				out[n.ID] = n.LastEditedAt != nil
			}
		}
	}
	return out, nil
}

// graphqlURL is the GraphQL endpoint beside the REST base URL:
// https://api.github.com/graphql, or https://HOST/api/graphql on GitHub
// Enterprise Server (whose REST base is https://HOST/api/v3/).
func (c *Client) graphqlURL() string {
	base := c.gh.BaseURL.String()
	if strings.HasSuffix(base, "/api/v3/") {
		return strings.TrimSuffix(base, "v3/") + "graphql"
	}
	return base + "graphql"
}

// ListRepoComments returns the comments on every issue and pull request of
// the repository updated at or after since (zero: all), oldest first: one
// paginated read finds the threads that changed since a reconcile pass.
func (c *Client) ListRepoComments(ctx context.Context, owner, repo string, since time.Time) ([]Comment, error) {
	return c.comments(withOp(ctx, "ListRepoComments"), owner, repo, 0, since,
		fmt.Sprintf("list the comments of %s since %s", repoName(owner, repo), since.UTC().Format(time.RFC3339)))
}

// comments lists every comment on issue number (0: on every issue of the
// repository) updated since since (zero: all), oldest first, as go-github's
// IssuesService.ListComments does but decoding performed_via_github_app
// too; what names the listing in an error.
func (c *Client) comments(ctx context.Context, owner, repo string, number int, since time.Time, what string) ([]Comment, error) {
	u := fmt.Sprintf("repos/%v/%v/issues/comments", owner, repo)
	if number != 0 {
		u = fmt.Sprintf("repos/%v/%v/issues/%d/comments", owner, repo, number)
	}
	return listAll(ctx, c, what, toComment, func(ctx context.Context, lo github.ListOptions) ([]*issueComment, *github.Response, error) {
		q := url.Values{"page": {strconv.Itoa(lo.Page)}, "per_page": {strconv.Itoa(lo.PerPage)}}
		if !since.IsZero() {
			q.Set("since", since.UTC().Format(time.RFC3339))
		}
		req, err := c.gh.NewRequest(http.MethodGet, u+"?"+q.Encode(), nil)
		if err != nil {
			return nil, nil, err
		}
		req.Header.Set("Accept", reactionsPreview)
		var list []*issueComment
		resp, err := c.gh.Do(ctx, req, &list)
		return list, resp, err
	})
}

// reactionCounts maps GitHub's reactions rollup to counts by content.
func reactionCounts(r *github.Reactions) map[string]int {
	if r == nil {
		return nil
	}
	out := map[string]int{"+1": r.GetPlusOne(), "-1": r.GetMinusOne(), "laugh": r.GetLaugh(),
		"confused": r.GetConfused(), "heart": r.GetHeart(), "hooray": r.GetHooray(), "rocket": r.GetRocket(), "eyes": r.GetEyes()}
	maps.DeleteFunc(out, func(_ string, n int) bool { return n <= 0 })
	if len(out) == 0 {
		return nil
	}
	return out
}

// ListIssueComments returns every comment on an issue or pull request, oldest
// first. Repeated listings of an unchanged issue cost only 304s.
func (c *Client) ListIssueComments(ctx context.Context, owner, repo string, number int) ([]Comment, error) {
	return c.comments(withOp(ctx, "ListIssueComments"), owner, repo, number, time.Time{}, fmt.Sprintf("list comments on %s#%d", repoName(owner, repo), number))
}

// CreateIssueComment posts a new comment on an issue or pull request. After
// an ambiguous failure it looks for the comment among the issue's recent
// comments (same body, by this identity when known) before posting again,
// so a lost response does not produce a duplicate.
func (c *Client) CreateIssueComment(ctx context.Context, owner, repo string, number int, body string) (Comment, error) {
	ctx = withOp(ctx, "CreateIssueComment")
	if body == "" {
		return Comment{}, fmt.Errorf("comment on %s#%d: empty body", repoName(owner, repo), number)
	}
	if n := utf8.RuneCountInString(body); n > MaxBodyChars {
		return Comment{}, fmt.Errorf("comment on %s#%d: body has %d characters, github allows %d",
			repoName(owner, repo), number, n, MaxBodyChars)
	}
	since := c.opts.Now().Add(-guardWindow)
	var out Comment
	err := c.createOnce(ctx, func(ctx context.Context) error {
		// go-github's IssuesService.CreateComment, decoding performed_via_github_app too.
		req, err := c.gh.NewRequest(http.MethodPost, fmt.Sprintf("repos/%v/%v/issues/%d/comments", owner, repo, number),
			&github.IssueComment{Body: github.String(body)})
		if err != nil {
			return err
		}
		ic := new(issueComment)
		if _, err := c.gh.Do(ctx, req, ic); err != nil {
			return err
		}
		out = toComment(ic)
		if login := out.User; login != "" {
			c.actor.Store(&login)
		}
		return nil
	}, func(ctx context.Context) (bool, error) {
		list, err := c.comments(withOp(ctx, "CreateIssueComment.guard"), owner, repo, number, since, "list the recent comments")
		if err != nil {
			return false, err
		}
		actor := c.actorLogin()
		for _, cm := range slices.Backward(list) {
			if sameText(cm.Body, body) && (actor == "" || strings.EqualFold(cm.User, actor)) {
				out = cm
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return Comment{}, fmt.Errorf("comment on %s#%d: %w", repoName(owner, repo), number, err)
	}
	return out, nil
}

// sameText compares bodies as GitHub stores them (it normalises CRLF).
func sameText(a, b string) bool {
	return strings.ReplaceAll(a, "\r\n", "\n") == strings.ReplaceAll(b, "\r\n", "\n")
}

// createOnce runs create; when the failure is ambiguous (the request may
// have been applied), it asks find whether it was before trying again.
func (c *Client) createOnce(ctx context.Context, create func(context.Context) error, find func(context.Context) (bool, error)) error {
	for attempt := 1; ; attempt++ {
		err := create(ctx)
		if err == nil || !ambiguous(ctx, err) {
			return err
		}
		found, ferr := find(ctx)
		if ferr != nil {
			return fmt.Errorf("%w (and checking whether it was applied failed: %v)", err, ferr)
		}
		if found {
			c.ctr.guardHits.Add(1)
			return nil
		}
		if attempt >= c.opts.MaxAttempts {
			return err
		}
		if serr := c.opts.Sleep(ctx, c.backoff(attempt)); serr != nil {
			return serr
		}
	}
}

// ambiguous reports whether a failed write may nevertheless have been
// applied: a 5xx, or a connection that failed after the request was sent.
func ambiguous(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	if s := StatusCode(err); s >= 500 {
		return true
	}
	var rl *RateLimitError
	if errors.As(err, &rl) || errors.Is(err, errBodyTooLarge) {
		return false
	}
	var ue *url.Error
	var ne net.Error
	return (errors.As(err, &ue) || errors.As(err, &ne)) && !notSent(err)
}

// AddLabels adds labels to an issue; labels it already has stay.
func (c *Client) AddLabels(ctx context.Context, owner, repo string, number int, labels []string) error {
	if len(labels) == 0 {
		return nil
	}
	ctx = idempotent(withOp(ctx, "AddLabels"))
	_, _, err := c.gh.Issues.AddLabelsToIssue(ctx, owner, repo, number, labels)
	return wrapf(err, "add labels %q to %s#%d", labels, repoName(owner, repo), number)
}

// RemoveLabel removes a label from an issue. A label the issue does not
// have (404) is not an error.
func (c *Client) RemoveLabel(ctx context.Context, owner, repo string, number int, label string) error {
	ctx = withOp(ctx, "RemoveLabel")
	// go-github puts the name into the path unescaped.
	_, err := c.gh.Issues.RemoveLabelForIssue(ctx, owner, repo, number, url.PathEscape(label))
	if err != nil && !IsNotFound(err) {
		return fmt.Errorf("remove label %q from %s#%d: %w", label, repoName(owner, repo), number, err)
	}
	return nil
}

// ListLabels returns the names of an issue's labels.
func (c *Client) ListLabels(ctx context.Context, owner, repo string, number int) ([]string, error) {
	return listAll(withOp(ctx, "ListLabels"), c, fmt.Sprintf("list labels of %s#%d", repoName(owner, repo), number), (*github.Label).GetName,
		func(ctx context.Context, lo github.ListOptions) ([]*github.Label, *github.Response, error) {
			return c.gh.Issues.ListLabelsByIssue(ctx, owner, repo, number, &lo)
		})
}

// CreateIssue opens an issue and returns its number and web URL. Like
// CreateIssueComment it checks for the issue before creating it again after
// an ambiguous failure.
func (c *Client) CreateIssue(ctx context.Context, owner, repo, title, body string, labels []string) (number int, htmlURL string, err error) {
	ctx = withOp(ctx, "CreateIssue")
	if strings.TrimSpace(title) == "" {
		return 0, "", fmt.Errorf("create issue in %s: empty title", repoName(owner, repo))
	}
	if n := utf8.RuneCountInString(body); n > MaxBodyChars {
		return 0, "", fmt.Errorf("create issue %q in %s: body has %d characters, github allows %d",
			title, repoName(owner, repo), n, MaxBodyChars)
	}
	since := c.opts.Now().Add(-guardWindow)
	req := &github.IssueRequest{Title: github.String(title), Body: github.String(body)}
	if len(labels) > 0 {
		req.Labels = &labels
	}
	err = c.createOnce(ctx, func(ctx context.Context) error {
		is, _, err := c.gh.Issues.Create(ctx, owner, repo, req)
		if err != nil {
			return err
		}
		number, htmlURL = is.GetNumber(), is.GetHTMLURL()
		return nil
	}, func(ctx context.Context) (bool, error) {
		ctx = withOp(ctx, "CreateIssue.guard")
		list, _, err := c.gh.Issues.ListByRepo(ctx, owner, repo, &github.IssueListByRepoOptions{
			State: "all", Sort: "created", Direction: "desc", Since: since,
			ListOptions: github.ListOptions{PerPage: c.opts.perPage},
		})
		if err != nil {
			return false, err
		}
		actor := c.actorLogin()
		for _, is := range list {
			if is.GetTitle() == title && sameText(is.GetBody(), body) &&
				(actor == "" || strings.EqualFold(is.GetUser().GetLogin(), actor)) {
				number, htmlURL = is.GetNumber(), is.GetHTMLURL()
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return 0, "", fmt.Errorf("create issue %q in %s: %w", title, repoName(owner, repo), err)
	}
	return number, htmlURL, nil
}

// ListOpenIssues lists open issues and pull requests carrying all of labels
// (for reconcile: every open issue labelled phasegate:pending).
func (c *Client) ListOpenIssues(ctx context.Context, owner, repo string, labels ...string) ([]Issue, error) {
	return listAll(withOp(ctx, "ListOpenIssues"), c, fmt.Sprintf("list open issues of %s labelled %q", repoName(owner, repo), labels), toIssue,
		func(ctx context.Context, lo github.ListOptions) ([]*github.Issue, *github.Response, error) {
			return c.gh.Issues.ListByRepo(ctx, owner, repo, &github.IssueListByRepoOptions{
				State: "open", Labels: labels, Sort: "created", Direction: "asc", ListOptions: lo,
			})
		})
}

var reactions = map[string]bool{"+1": true, "-1": true, "laugh": true, "confused": true, "heart": true,
	"hooray": true, "rocket": true, "eyes": true}

// CreateCommentReaction adds a reaction (+1, -1, laugh, confused, heart,
// hooray, rocket, eyes) to an issue comment. Reacting twice is fine: GitHub
// answers 200 with the existing reaction.
func (c *Client) CreateCommentReaction(ctx context.Context, owner, repo string, commentID int64, content string) error {
	if !reactions[content] {
		return fmt.Errorf("react to comment %d in %s: %q is not a github reaction", commentID, repoName(owner, repo), content)
	}
	ctx = idempotent(withOp(ctx, "CreateCommentReaction"))
	_, _, err := c.gh.Reactions.CreateIssueCommentReaction(ctx, owner, repo, commentID, content)
	return wrapf(err, "react %q to comment %d in %s", content, commentID, repoName(owner, repo))
}

// CommentReactors returns the logins that reacted content to an issue
// comment, oldest first. With the rollup of Comment.Reactions it tells
// whether a given identity reacted, for bookkeeping that only that identity
// can write (a reaction is always its author's).
func (c *Client) CommentReactors(ctx context.Context, owner, repo string, commentID int64, content string) ([]string, error) {
	if !reactions[content] {
		return nil, fmt.Errorf("list reactions to comment %d in %s: %q is not a github reaction", commentID, repoName(owner, repo), content)
	}
	ctx = withOp(ctx, "CommentReactors")
	list, err := paginate(ctx, c.opts.perPage, maxPages, func(ctx context.Context, lo github.ListOptions) ([]*github.Reaction, *github.Response, error) {
		return c.gh.Reactions.ListIssueCommentReactions(ctx, owner, repo, commentID, &lo)
	})
	if err != nil {
		return nil, fmt.Errorf("list reactions to comment %d in %s: %w", commentID, repoName(owner, repo), err)
	}
	var out []string
	for _, r := range list {
		if r.GetContent() == content {
			out = append(out, r.GetUser().GetLogin())
		}
	}
	return out, nil
}

var permissionLevels = map[string]bool{"none": true, "read": true, "triage": true, "write": true, "maintain": true, "admin": true}

// CollaboratorPermission returns user's role on the repository: admin,
// maintain, write, triage, read or none. It reads role_name, which tells
// maintain and triage apart (the legacy permission field folds them into
// write and read); a custom role falls back to its base permission. A user
// GitHub does not know (404) has none.
func (c *Client) CollaboratorPermission(ctx context.Context, owner, repo, user string) (string, error) {
	ctx = withOp(ctx, "CollaboratorPermission")
	u := fmt.Sprintf("repos/%s/%s/collaborators/%s/permission", url.PathEscape(owner), url.PathEscape(repo), url.PathEscape(user))
	req, err := c.gh.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return "", fmt.Errorf("read permission of %s on %s: %w", user, repoName(owner, repo), err)
	}
	var out struct {
		Permission string `json:"permission"`
		RoleName   string `json:"role_name"`
	}
	if _, err := c.gh.Do(ctx, req, &out); err != nil {
		if IsNotFound(err) {
			return "none", nil
		}
		return "", fmt.Errorf("read permission of %s on %s: %w", user, repoName(owner, repo), err)
	}
	if permissionLevels[out.RoleName] {
		return out.RoleName, nil
	}
	if permissionLevels[out.Permission] {
		return out.Permission, nil
	}
	return "none", nil
}

// ErrTeamUnreadable is TeamMember's error (wrapped) when the token cannot
// read the team: GitHub answers a membership query 404 for a non-member, a
// team that does not exist and a token that may not read the
// organisation's members alike (a workflow's GITHUB_TOKEN never may; an
// App needs "Members: read", a token the organisation's Members: read or
// read:org), or 403 when the token lacks the permission.
var ErrTeamUnreadable = errors.New("cannot read team membership")

// TeamMember reports whether user is an active member of org/teamSlug (a
// pending invitation is not membership). A 404 means "not a member" only
// when the token can list the team's members; otherwise, and on a 403, the
// error wraps ErrTeamUnreadable, so that no caller mistakes a token that
// sees nothing for a user who belongs to nothing.
func (c *Client) TeamMember(ctx context.Context, org, teamSlug, user string) (bool, error) {
	ctx = withOp(ctx, "TeamMember")
	team := org + "/" + teamSlug
	m, _, err := c.gh.Teams.GetTeamMembershipBySlug(ctx, org, teamSlug, user)
	switch {
	case err == nil:
		return m.GetState() == "active", nil
	case IsPermissionDenied(err):
		return false, fmt.Errorf("read membership of %s in team %s: %w (%w)", user, team, ErrTeamUnreadable, err)
	case !IsNotFound(err):
		return false, fmt.Errorf("read membership of %s in team %s: %w", user, team, err)
	}
	// 404: not a member, or a team this token cannot see. Ask for one
	// member of the team: only a token that can read it gets an answer.
	_, _, err = c.gh.Teams.ListTeamMembersBySlug(ctx, org, teamSlug, &github.TeamListTeamMembersOptions{ListOptions: github.ListOptions{PerPage: 1}})
	switch {
	case err == nil:
		return false, nil
	case IsNotFound(err) || IsPermissionDenied(err):
		return false, fmt.Errorf("read team %s: %w: the team does not exist or the token may not read the organisation's members (%w)", team, ErrTeamUnreadable, err)
	}
	return false, fmt.Errorf("read members of team %s: %w", team, err)
}

func (c *Client) DefaultBranch(ctx context.Context, owner, repo string) (string, error) {
	ctx = withOp(ctx, "DefaultBranch")
	r, _, err := c.gh.Repositories.Get(ctx, owner, repo)
	if err != nil {
		return "", fmt.Errorf("read default branch of %s: %w", repoName(owner, repo), err)
	}
	if r.GetDefaultBranch() == "" {
		return "", fmt.Errorf("read default branch of %s: github named none", repoName(owner, repo))
	}
	return r.GetDefaultBranch(), nil
}

// FileContent returns a file's content at ref (empty: the default branch).
// found is false when GitHub answers 404 (no such file, ref or repository).
// Files over 1 MB, which the contents API does not inline, are read as git
// blobs.
func (c *Client) FileContent(ctx context.Context, owner, repo, path, ref string) ([]byte, bool, error) {
	ctx = withOp(ctx, "FileContent")
	where := fmt.Sprintf("%s:%s", repoName(owner, repo), path)
	var opts *github.RepositoryContentGetOptions
	if ref != "" {
		where += "@" + ref
		opts = &github.RepositoryContentGetOptions{Ref: ref}
	}
	fc, dir, _, err := c.gh.Repositories.GetContents(ctx, owner, repo, path, opts)
	if err != nil {
		if IsNotFound(err) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("read %s: %w", where, err)
	}
	if fc == nil || dir != nil {
		return nil, false, fmt.Errorf("read %s: a directory, not a file", where)
	}
	if fc.GetType() != "file" {
		return nil, false, fmt.Errorf("read %s: a %s, not a file", where, fc.GetType())
	}
	if fc.GetEncoding() == "none" || (fc.Content == nil && fc.GetSize() > 0) {
		b, _, err := c.gh.Git.GetBlobRaw(ctx, owner, repo, fc.GetSHA())
		if err != nil {
			return nil, false, fmt.Errorf("read %s (blob %s): %w", where, fc.GetSHA(), err)
		}
		return b, true, nil
	}
	s, err := fc.GetContent()
	if err != nil {
		return nil, false, fmt.Errorf("decode %s: %w", where, err)
	}
	return []byte(s), true, nil
}

func toPR(p *github.PullRequest) PR {
	return PR{
		Number:   p.GetNumber(),
		State:    p.GetState(),
		Author:   p.GetUser().GetLogin(),
		HeadSHA:  p.GetHead().GetSHA(),
		HeadRef:  p.GetHead().GetRef(),
		HeadRepo: p.GetHead().GetRepo().GetFullName(),
		BaseSHA:  p.GetBase().GetSHA(),
		BaseRef:  p.GetBase().GetRef(),
		Merged:   p.GetMerged(),
		HTMLURL:  p.GetHTMLURL(),
	}
}

func (c *Client) PullRequest(ctx context.Context, owner, repo string, number int) (PR, error) {
	ctx = withOp(ctx, "PullRequest")
	p, _, err := c.gh.PullRequests.Get(ctx, owner, repo, number)
	if err != nil {
		return PR{}, fmt.Errorf("read pull request %s#%d: %w", repoName(owner, repo), number, err)
	}
	return toPR(p), nil
}

// ListOpenPullRequests returns every open pull request, newest first.
func (c *Client) ListOpenPullRequests(ctx context.Context, owner, repo string) ([]PR, error) {
	return listAll(withOp(ctx, "ListOpenPullRequests"), c, "list open pull requests of "+repoName(owner, repo), toPR,
		func(ctx context.Context, lo github.ListOptions) ([]*github.PullRequest, *github.Response, error) {
			return c.gh.PullRequests.List(ctx, owner, repo, &github.PullRequestListOptions{State: "open", ListOptions: lo})
		})
}

// PullRequestsForCommit returns the pull requests that contain sha (open
// ones, or the merged one that brought it to the default branch).
func (c *Client) PullRequestsForCommit(ctx context.Context, owner, repo, sha string) ([]PR, error) {
	return listAll(withOp(ctx, "PullRequestsForCommit"), c, fmt.Sprintf("list pull requests of %s@%s", repoName(owner, repo), sha), toPR,
		func(ctx context.Context, lo github.ListOptions) ([]*github.PullRequest, *github.Response, error) {
			return c.gh.PullRequests.ListPullRequestsWithCommit(ctx, owner, repo, sha, &lo)
		})
}

// maxCompareFiles is GitHub's cap on the files of a comparison.
const maxCompareFiles = 300

// CommitFiles maps each file a commit changes (against its first parent)
// to its status. GitHub lists at most 300 files of a commit.
func (c *Client) CommitFiles(ctx context.Context, owner, repo, sha string) (map[string]string, error) {
	ctx = withOp(ctx, "CommitFiles")
	rc, _, err := c.gh.Repositories.GetCommit(ctx, owner, repo, sha, &github.ListOptions{PerPage: 300})
	if err != nil {
		return nil, fmt.Errorf("read commit %s@%s: %w", repoName(owner, repo), sha, err)
	}
	out := filesMap(rc.Files)
	if len(rc.Files) >= maxCompareFiles {
		return out, fmt.Errorf("read commit %s@%s: %d files: %w", repoName(owner, repo), sha, len(rc.Files), ErrTruncated)
	}
	return out, nil
}

// filesMap maps each file to its status; a renamed file's previous name
// is listed as removed (unless a file of that name is listed too), as a
// comparison of trees sees a rename: a removal plus an addition.
func filesMap(files []*github.CommitFile) map[string]string {
	out := make(map[string]string, len(files))
	for _, f := range files {
		out[f.GetFilename()] = f.GetStatus()
	}
	for _, f := range files {
		if prev := f.GetPreviousFilename(); f.GetStatus() == "renamed" && prev != "" {
			if _, listed := out[prev]; !listed {
				out[prev] = "removed"
			}
		}
	}
	return out
}

// CommitInfo is who GitHub says made a commit.
type CommitInfo struct {
	// Author and Committer are the accounts GitHub links the commit's
	// e-mail addresses to; empty when an address belongs to no account.
	Author, Committer string
	// Verified is GitHub's verdict on the commit's signature: only then do
	// Author and Committer say who made the commit, since anyone can write
	// any name and e-mail into commit metadata.
	Verified bool
	// Tree is the commit's tree id.
	Tree string
}

// Commit returns who made a commit and whether its signature is verified.
func (c *Client) Commit(ctx context.Context, owner, repo, sha string) (CommitInfo, error) {
	ctx = withOp(ctx, "Commit")
	rc, _, err := c.gh.Repositories.GetCommit(ctx, owner, repo, sha, &github.ListOptions{PerPage: 1})
	if err != nil {
		return CommitInfo{}, fmt.Errorf("read commit %s@%s: %w", repoName(owner, repo), sha, err)
	}
	return CommitInfo{Author: rc.GetAuthor().GetLogin(), Committer: rc.GetCommitter().GetLogin(),
		Verified: rc.GetCommit().GetVerification().GetVerified(), Tree: rc.GetCommit().GetTree().GetSHA()}, nil
}

// Issue reads one issue or pull request.
func (c *Client) Issue(ctx context.Context, owner, repo string, number int) (Issue, error) {
	ctx = withOp(ctx, "Issue")
	is, _, err := c.gh.Issues.Get(ctx, owner, repo, number)
	if err != nil {
		return Issue{}, fmt.Errorf("read %s#%d: %w", repoName(owner, repo), number, err)
	}
	return toIssue(is), nil
}

func toIssue(is *github.Issue) Issue {
	it := Issue{Number: is.GetNumber(), Title: is.GetTitle(), Body: is.GetBody(), State: is.GetState(), Author: is.GetUser().GetLogin(),
		IsPullRequest: is.IsPullRequest(), HTMLURL: is.GetHTMLURL(), Comments: is.GetComments(), UpdatedAt: is.GetUpdatedAt().Time}
	for _, l := range is.Labels {
		it.Labels = append(it.Labels, l.GetName())
	}
	return it
}
