package ghclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"
)

// Push is one entry of a repository's activity that put commits on a ref.
type Push struct {
	Actor  string    // the login of the account that pushed; "" when GitHub records none (actor null, e.g. a deploy key)
	Type   string    // "push", "force_push" or "branch_creation"
	Ref    string    // e.g. refs/heads/feature
	Before string    // sha before
	After  string    // sha after
	At     time.Time // timestamp
}

// maxActivityPages bounds RefPushes: 1,000 activities of the ref.
const maxActivityPages = 10

// pushTypes are the activity types that put commits on a ref.
var pushTypes = map[string]bool{"push": true, "force_push": true, "branch_creation": true}

// activity is one item of GET /repos/{owner}/{repo}/activity (the OpenAPI
// activity schema).
type activity struct {
	ID           int64     `json:"id"`
	Before       string    `json:"before"`
	After        string    `json:"after"`
	Ref          string    `json:"ref"`
	Timestamp    time.Time `json:"timestamp"`
	ActivityType string    `json:"activity_type"`
	Actor        *struct {
		Login string `json:"login"`
	} `json:"actor"`
}

// RefPushes lists every activity of the repository on ref (a branch name or
// refs/heads/<name>) that put commits on it — activity types push,
// force_push and branch_creation — newest first, from GET
// /repos/{owner}/{repo}/activity?ref=…&per_page=100 (one listing without
// activity_type, filtered here, so one request per page rather than
// three). Pages are cursor-paginated: the next page is the Link header's
// after= cursor. At most 10 pages are read: a ref with more activity
// returns what was read and an error wrapping ErrTruncated. Repeated reads
// of unchanged pages cost 304s through the ETag cache.
func (c *Client) RefPushes(ctx context.Context, owner, repo, ref string) ([]Push, error) {
	ctx = withOp(ctx, "RefPushes")
	if strings.TrimSpace(ref) == "" {
		return nil, fmt.Errorf("list pushes in %s: no ref", repoName(owner, repo))
	}
	full := ref
	if !strings.HasPrefix(full, "refs/") {
		full = "refs/heads/" + full
	}
	where := fmt.Sprintf("list pushes to %s in %s", full, repoName(owner, repo))
	out := []Push{}
	after := ""
	for range maxActivityPages {
		page, next, err := c.activityPage(ctx, owner, repo, full, after)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		for _, a := range page {
			if pushTypes[a.ActivityType] && a.Ref == full {
				p := Push{Type: a.ActivityType, Ref: a.Ref, Before: a.Before, After: a.After, At: a.Timestamp}
				if a.Actor != nil {
					p.Actor = a.Actor.Login
				}
				out = append(out, p)
			}
		}
		if next == "" {
			return out, nil
		}
		after = next
	}
	return out, fmt.Errorf("%s: more than %d pages of activity: %w", where, maxActivityPages, ErrTruncated)
}

// activityPage reads one page of the activity of ref, from the after
// cursor (empty: the first page), and returns the next page's cursor
// (empty: none).
func (c *Client) activityPage(ctx context.Context, owner, repo, ref, after string) ([]activity, string, error) {
	q := url.Values{"ref": {ref}, "per_page": {strconv.Itoa(c.opts.perPage)}}
	if after != "" {
		q.Set("after", after)
	}
	u := fmt.Sprintf("repos/%s/%s/activity?%s", url.PathEscape(owner), url.PathEscape(repo), q.Encode())
	req, err := c.gh.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return nil, "", err
	}
	var page []activity
	resp, err := c.gh.Do(ctx, req, &page)
	if err != nil {
		return nil, "", err
	}
	if resp.After != "" && resp.After == after {
		return page, "", errors.New("github repeated the cursor of the page it answered")
	}
	return page, resp.After, nil
}

// Comparison is GET /repos/{owner}/{repo}/compare/{base}...{head}.
type Comparison struct {
	Status    string            // "ahead", "behind", "diverged" or "identical"
	Files     map[string]string // changed file → status (renames: see how filesMap handles previous_filename)
	MergeBase string            // merge_base_commit.sha
}

// Compare compares two commits: how head stands to base, the files
// changed from their merge base to head (renamed under the new name, the previous name listed as removed), and
// the merge base. GitHub lists at most 300 files; at that count the
// comparison comes with an error wrapping ErrTruncated.
func (c *Client) Compare(ctx context.Context, owner, repo, base, head string) (Comparison, error) {
	cmp, _, err := c.gh.Repositories.CompareCommits(withOp(ctx, "Compare"), owner, repo, base, head, nil)
	if err != nil {
		return Comparison{}, fmt.Errorf("compare %s %s...%s: %w", repoName(owner, repo), base, head, err)
	}
	out := Comparison{Status: cmp.GetStatus(), Files: filesMap(cmp.Files), MergeBase: cmp.GetMergeBaseCommit().GetSHA()}
	if len(cmp.Files) >= maxCompareFiles {
		return out, fmt.Errorf("compare %s %s...%s: %d files: %w", repoName(owner, repo), base, head, len(cmp.Files), ErrTruncated)
	}
	return out, nil
}

// StatusHistory returns the statuses on sha whose context is one of
// contexts (every status when none is given), newest first: one listing
// of GET /repos/{owner}/{repo}/commits/{sha}/statuses for all of them.
// GitHub keeps every status ever set (up to 1,000 per context) and nobody
// can delete one, so the list is a history; at most 300 statuses back (3
// pages of 100) are read.
func (c *Client) StatusHistory(ctx context.Context, owner, repo, sha string, contexts ...string) ([]Status, error) {
	return c.statusHistory(withOp(ctx, "StatusHistory"), owner, repo, sha, contexts)
}

func (c *Client) statusHistory(ctx context.Context, owner, repo, sha string, contexts []string) ([]Status, error) {
	list, err := paginate(ctx, c.opts.perPage, 3, func(ctx context.Context, lo github.ListOptions) ([]*github.RepoStatus, *github.Response, error) {
		return c.gh.Repositories.ListStatuses(ctx, owner, repo, sha, &lo)
	})
	if err != nil && !errors.Is(err, errMorePages) {
		return nil, fmt.Errorf("read statuses of %s@%s: %w", repoName(owner, repo), sha, err)
	}
	out := []Status{}
	for _, st := range list {
		if len(contexts) == 0 || slices.Contains(contexts, st.GetContext()) {
			out = append(out, Status{State: st.GetState(), Context: st.GetContext(), Description: st.GetDescription(),
				TargetURL: st.GetTargetURL(), Creator: st.GetCreator().GetLogin()})
		}
	}
	return out, nil
}

// LabelEvent is who labelled or unlabelled an issue, from its events.
type LabelEvent struct {
	Event string // "labeled" or "unlabeled"
	Label string
	Actor string // "" when GitHub records none
}

// LabelEvents lists who labelled and unlabelled an issue, oldest first (GET
// /repos/{owner}/{repo}/issues/{number}/events; nobody can delete an event).
// At most 10 pages of 100 events are read; more is an error wrapping
// ErrTruncated, with what was read.
func (c *Client) LabelEvents(ctx context.Context, owner, repo string, number int) ([]LabelEvent, error) {
	ctx = withOp(ctx, "LabelEvents")
	list, err := paginate(ctx, c.opts.perPage, 10, func(ctx context.Context, lo github.ListOptions) ([]*github.IssueEvent, *github.Response, error) {
		return c.gh.Issues.ListIssueEvents(ctx, owner, repo, number, &lo)
	})
	if err != nil && !errors.Is(err, errMorePages) {
		return nil, fmt.Errorf("read the events of %s#%d: %w", repoName(owner, repo), number, err)
	}
	var out []LabelEvent
	for _, e := range list {
		if e.GetEvent() == "labeled" || e.GetEvent() == "unlabeled" {
			out = append(out, LabelEvent{Event: e.GetEvent(), Label: e.GetLabel().GetName(), Actor: e.GetActor().GetLogin()})
		}
	}
	if err != nil {
		return out, fmt.Errorf("read the events of %s#%d: more than 10 pages: %w", repoName(owner, repo), number, ErrTruncated)
	}
	return out, nil
}
