package decide

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ledger"
)

// Folded is a thread as the handler has just folded it, for an observer
// (Handler.Observe): serve's pages keep their index of pending decisions
// from it. Everything in it is the handler's: the observer reads it while
// it is called and keeps copies, never the values.
type Folded struct {
	Owner, Repo string
	Issue       int
	// Title is the issue's title when the handler knew it (a reconcile
	// pass's listing of pending issues); "" when it did not.
	Title string
	// Config is the repository's configuration the fold used.
	Config config.Config
	// State is the fold; Comments what it was folded from.
	State    *ledger.State
	Comments []ghclient.Comment
	ReadAt   time.Time
}

func (h *Handler) observe(t *thread) {
	if h.Observe == nil || t == nil || t.st == nil {
		return
	}
	h.Observe(Folded{Owner: t.owner, Repo: t.repo, Issue: t.issue, Title: t.title, Config: t.cfg, State: t.st,
		Comments: t.comments, ReadAt: t.readAt})
}

// IssuePageURL is serve's page of an issue under its public URL:
// {public}/{owner}/{repo}/issues/{n}.
func IssuePageURL(public, owner, repo string, issue int) string {
	return strings.TrimSuffix(public, "/") + "/" + url.PathEscape(owner) + "/" + url.PathEscape(repo) + "/issues/" + strconv.Itoa(issue)
}

// CommitPageURL is serve's page of a commit under its public URL:
// {public}/{owner}/{repo}/commit/{sha}.
func CommitPageURL(public, owner, repo, sha string) string {
	return strings.TrimSuffix(public, "/") + "/" + url.PathEscape(owner) + "/" + url.PathEscape(repo) + "/commit/" + url.PathEscape(sha)
}

// commentLink is the Details link that anchors comment c of the issue:
// its page on serve, {public}/{owner}/{repo}/issues/{n}#issuecomment-{id},
// when PagesURL is set, else the comment on GitHub (its html_url). Both end
// in /issues/{n}#issuecomment-{id}, the form anchorOf reads: the anchor is
// the same whichever the status carries (docs/security.md, rule 4); what
// makes it phasegate's is the status's creator, never the link's host.
func (h *Handler) commentLink(owner, repo string, issue int, c ghclient.Comment) string {
	if h.PagesURL == "" || c.ID <= 0 || issue <= 0 {
		return c.HTMLURL
	}
	return IssuePageURL(h.PagesURL, owner, repo, issue) + "#issuecomment-" + strconv.FormatInt(c.ID, 10)
}

// sameAnchor reports whether two Details links anchor the same comment of
// the same issue (one on GitHub, one on serve's pages), or are equal.
func sameAnchor(a, b string) bool {
	if a == b {
		return true
	}
	ai, ac, aok := anchorOf(a)
	bi, bc, bok := anchorOf(b)
	return aok && bok && ai == bi && ac == bc
}
