// Package pages is the back end of `phasegate serve`'s own pages
// (internal/web): the web.Source they read. It keeps what the server's
// jobs tell it — the pending decisions the decision handler folded
// (pending.go, fed by Observe), the check results of the check jobs
// (results.go, fed by Record), the change bus of both (bus.go) — and reads
// the rest with the installation's client through the same decision
// handler (decide.Handler.Inspect, which folds and writes nothing). A
// resolution asked for from a page is the person's own /resolve, posted
// with their token (decide.Handler.ResolveAsUser).
package pages

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/phasegate/phasegate/internal/checkjob"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/web"
)

// Config is what the pages take from the server.
type Config struct {
	// Handler builds the decision handler the pages read with; an error
	// while the App's identity is not known. The first one built is kept.
	// Its Observe should be the Source's.
	Handler func() (*decide.Handler, error)
	// Client is the installation client of owner/repo: of installation
	// when it is not 0, else of the installation holding the repository;
	// web.ErrNotFound when the App is not installed there or a name is not
	// one.
	Client func(ctx context.Context, owner, repo string, installation int64) (*ghclient.Client, error)
	// User is a client acting as the person whose token it is.
	User func(token string) (*ghclient.Client, error)
	// AppID is the App's: the commit page counts its own check runs alone.
	AppID int64
	// WebURL is GitHub's web URL, where findings link to their files.
	WebURL string
	// Now is the clock; Logger the log (both required).
	Now    func() time.Time
	Logger *slog.Logger
	// SharedResults, when set, keeps the check results where every
	// replica reads them (in memory, DefaultResultBytes are kept).
	SharedResults SharedResults
	// Forget is told of an issue the inbox's index dropped to stay in its
	// bound, DefaultPendingIssues (decide.FoldMemo.Forget).
	Forget func(owner, repo string, issue int)
	// May, when set, answers MayResolve instead of the handler (tests).
	May MayResolver
	// Deployments lists the deployment requests waiting for an answer
	// (nil: the pages show none): serve's DeploymentStore's List.
	Deployments func(ctx context.Context) ([]decide.Deployment, error)
}

// Source is the web.Source of serve's pages. Build it with New; it is
// safe for concurrent use.
type Source struct {
	cfg     Config
	pending *pendingIndex
	results *resultStore
	changes *bus

	mu      sync.Mutex
	h       *decide.Handler // built once the App's identity is known
	may     MayResolver     // cfg.May, else h
	mayMemo mayCache
}

// MayResolver is what the pages ask of the handler: whether login may
// resolve decision on the issue now, and why not (decide.Handler.MayResolve).
type MayResolver interface {
	MayResolve(ctx context.Context, gh decide.GitHub, owner, repo string, issue int, decision, login string) (bool, string, error)
}

var _ web.Source = (*Source)(nil)

// New builds the pages' Source.
func New(cfg Config) *Source {
	return &Source{cfg: cfg, pending: newPendingIndex(0, cfg.Forget), results: newResultStore(0, cfg.SharedResults), changes: newBus(), may: cfg.May, mayMemo: mayCache{m: map[string]mayAnswer{}}}
}

// open is the installation client of owner/repo and the decision handler,
// which every page that reads a thread needs.
func (p *Source) open(ctx context.Context, owner, repo string) (*ghclient.Client, *decide.Handler, error) {
	gh, err := p.cfg.Client(ctx, owner, repo, 0)
	if err != nil {
		return nil, nil, err
	}
	h, err := p.handler()
	return gh, h, err
}

func (p *Source) handler() (*decide.Handler, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.h != nil {
		return p.h, nil
	}
	h, err := p.cfg.Handler()
	if err != nil {
		return nil, err
	}
	if p.may == nil {
		p.may = h
	}
	p.h = h
	return h, nil
}

// notFound turns GitHub's 404 (and a 422 for a commit it does not know)
// into web.ErrNotFound.
func notFound(err error) error {
	if ghclient.IsNotFound(err) || ghclient.StatusCode(err) == 422 {
		return web.ErrNotFound
	}
	return err
}

// PullHead is the head commit of a pull request.
func (p *Source) PullHead(ctx context.Context, owner, repo string, pr int) (string, error) {
	gh, err := p.cfg.Client(ctx, owner, repo, 0)
	if err != nil {
		return "", err
	}
	if pr <= 0 {
		return "", web.ErrNotFound
	}
	got, err := gh.PullRequest(ctx, owner, repo, pr)
	if err != nil {
		return "", fmt.Errorf("reading pull request #%d of %s/%s: %w", pr, owner, repo, notFound(err))
	}
	return got.HeadSHA, nil
}

var shaRE = regexp.MustCompile(`^[0-9a-fA-F]{7,64}$`)

// Commit is the details page of a commit: its last check result as the
// server recorded it (Checked false when none is known), its
// phasegate/decisions and the issues its change's outcomes go to.
func (p *Source) Commit(ctx context.Context, owner, repo, sha, viewer string) (*web.CommitPage, error) {
	if !shaRE.MatchString(sha) {
		return nil, web.ErrNotFound
	}
	gh, h, err := p.open(ctx, owner, repo)
	if err != nil {
		return nil, err
	}
	page := &web.CommitPage{Owner: owner, Repo: repo, SHA: sha}
	cr, ok, err := p.results.get(ctx, resultKey(owner, repo, sha))
	if err != nil {
		p.cfg.Logger.Warn("pages: the check result could not be read; shown as not checked", "repository", owner+"/"+repo, "sha", sha, "error", err)
	}
	if ok {
		p.fillResult(page, cr)
	}
	st, found, err := h.CommitDecisions(ctx, ownRecords{GitHub: gh, app: p.cfg.AppID, identity: h.Identity}, owner, repo, sha)
	if err != nil {
		return nil, notFound(err)
	}
	if found {
		page.Decisions, page.DecisionsText = st.State, st.Description
	}
	issues, err := h.CommitIssues(ctx, gh, owner, repo, sha)
	if err != nil {
		p.cfg.Logger.Warn("pages: the issues of a commit's outcomes could not be read", "repository", owner+"/"+repo, "sha", sha, "error", err)
	}
	for _, n := range issues {
		ref := web.IssueRef{Number: n}
		if e, ok := p.pending.issue(owner, repo, n); ok {
			ref.Title, ref.Pending = e.title, len(e.items)
		}
		page.Issues = append(page.Issues, ref)
	}
	return page, nil
}

// ownRecords is gh reading only phasegate's own records of a commit: any
// App may create a check run named phasegate/decisions, and anyone with
// write access a status of that context; the pages count the check runs
// of the App itself (its ID) and the statuses it set (its login).
type ownRecords struct {
	decide.GitHub
	app      int64
	identity string
}

func (o ownRecords) CheckRunHistory(ctx context.Context, owner, repo, sha, name string) ([]ghclient.CheckRun, error) {
	runs, err := o.GitHub.CheckRunHistory(ctx, owner, repo, sha, name)
	return slices.DeleteFunc(slices.Clone(runs), func(r ghclient.CheckRun) bool { return r.AppID != o.app }), err
}

func (o ownRecords) StatusHistory(ctx context.Context, owner, repo, sha string, contexts ...string) ([]ghclient.Status, error) {
	sts, err := o.GitHub.StatusHistory(ctx, owner, repo, sha, contexts...)
	return slices.DeleteFunc(slices.Clone(sts), func(st ghclient.Status) bool { return !strings.EqualFold(st.Creator, o.identity) }), err
}

func (o ownRecords) LatestStatus(ctx context.Context, owner, repo, sha, context string) (ghclient.Status, bool, error) {
	sts, err := o.StatusHistory(ctx, owner, repo, sha, context)
	if err != nil || len(sts) == 0 {
		return ghclient.Status{}, false, err
	}
	return sts[0], true, nil
}

// fillResult puts a recorded check result on the page, each finding
// linked to its file at the commit on GitHub, at its line.
func (p *Source) fillResult(page *web.CommitPage, cr commitResult) {
	page.Checked, page.CheckedAt, page.Verdict = true, cr.CheckedAt, cr.Verdict
	page.Reasons = append([]string(nil), cr.Reasons...)
	page.Findings, page.Input = slices.Clone(cr.Findings), slices.Clone(cr.Input)
	for i, f := range page.Findings {
		page.Findings[i].URL = blobURL(p.cfg.WebURL, page.Owner, page.Repo, page.SHA, f.File, f.Line)
	}
	if cr.More > 0 {
		page.Reasons = append(page.Reasons, fmt.Sprintf("%d more findings are not shown here (the first %d are); the check run lists them", cr.More, len(cr.Findings)))
	}
}

// blobURL is a file at a commit on GitHub, at a line:
// {web}/{owner}/{repo}/blob/{sha}/{path}#L{line}, each path segment
// escaped. "" for a finding without a file.
func blobURL(webURL, owner, repo, sha, file string, line int) string {
	if file == "" {
		return ""
	}
	segs := strings.Split(file, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	u := strings.TrimSuffix(webURL, "/") + "/" + url.PathEscape(owner) + "/" + url.PathEscape(repo) + "/blob/" + url.PathEscape(sha) + "/" + strings.Join(segs, "/")
	if line > 0 {
		u += "#L" + strconv.Itoa(line)
	}
	return u
}

// Subscribe delivers the server's changes (bus.go).
func (p *Source) Subscribe() (<-chan web.Change, func()) { return p.changes.subscribe() }

// Resolve posts the person's own /resolve (decide.Handler.ResolveAsUser,
// with their token), after decide re-folded the thread with the
// repository's installation client; the webhook path applies it.
func (p *Source) Resolve(ctx context.Context, token web.Token, r web.ResolveRequest) (string, error) {
	gh, h, err := p.open(ctx, r.Owner, r.Repo)
	if err != nil {
		return "", err
	}
	user, err := p.cfg.User(token.AccessToken)
	if err != nil {
		return "", err
	}
	c, err := h.ResolveAsUser(ctx, gh, user, decide.ResolveAsUser{
		Owner: r.Owner, Repo: r.Repo, Issue: r.Issue, Decision: r.Decision, Option: r.Option, Reason: r.Reason, Login: r.Viewer,
	})
	var refused *decide.RefusedError
	if errors.As(err, &refused) {
		return "", &web.RefusedError{Why: refused.Why}
	}
	if err != nil {
		return "", err
	}
	return c.HTMLURL, nil
}

// Observe is the handler's fold observer (decide.Handler.Observe): the
// index takes the fold, and a fold that changed what a page shows is a
// change on the bus.
func (p *Source) Observe(f decide.Folded) {
	if p.pending.update(f) {
		p.Changed(f.Owner, f.Repo, f.Issue, "")
	}
}

// Changed publishes a change of an issue (sha "") or a commit (issue 0).
func (p *Source) Changed(owner, repo string, issue int, sha string) {
	p.changes.publish(web.Change{Owner: owner, Repo: repo, Issue: issue, SHA: sha})
}

// Record keeps a check job's result for the commit's page and says the
// page changed.
func (p *Source) Record(ctx context.Context, owner, repo, sha string, sum checkjob.Summary, log *slog.Logger) {
	if sum.Report == nil || sha == "" {
		return
	}
	cr := newCommitResult(sum.Report, p.cfg.Now())
	if sum.Input != nil {
		for _, r := range sum.Input.Rows() {
			cr.Input = append(cr.Input, web.InputRow{Name: r.Name, Value: clipText(r.Value), Code: r.Code})
		}
	}
	if err := p.results.put(ctx, resultKey(owner, repo, sha), cr); err != nil {
		log.Warn("pages: the check result could not be shared with the other replicas", "error", err)
	}
	p.Changed(owner, repo, 0, sha)
}

// mayCache remembers MayResolve answers for a minute per (issue state,
// decision, login), so a big inbox does not spend the rate limit.
type mayCache struct {
	mu sync.Mutex
	m  map[string]mayAnswer
}

type mayAnswer struct {
	ok  bool
	why string
	at  time.Time
}

// Bounds of the MayResolve answers.
const (
	mayTTL = time.Minute
	// maxMayEntries bounds the cache (it is emptied when full).
	maxMayEntries = 20_000
	// maxMayChecksPerRequest bounds the questions one inbox asks GitHub;
	// the rest say they were not checked yet.
	maxMayChecksPerRequest = 40
)

func (c *mayCache) get(key string, now time.Time) (mayAnswer, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.m[key]
	if !ok || now.Sub(a.at) >= mayTTL {
		return mayAnswer{}, false
	}
	return a, true
}

func (c *mayCache) put(key string, a mayAnswer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxMayEntries {
		c.m = map[string]mayAnswer{}
	}
	c.m[key] = a
}

// Answers MayResolve gives the pages when it cannot ask.
const (
	whyNotWired     = "resolving from this page is not available yet; comment /resolve on the issue"
	whyNotChecked   = "not checked yet: open the issue to see whether you may resolve it"
	whyNotSignedIn  = "sign in to resolve"
	whyFrozenThread = "the decisions on this issue are frozen: a phasegate comment was edited or deleted"
)

// mayResolve answers whether login may resolve decision on the issue
// whose fold is state, from the cache or by asking (budget permitting:
// *asks is decremented per question).
func (p *Source) mayResolve(ctx context.Context, gh decide.GitHub, owner, repo string, issue int, state, decision, login string, asks *int) (bool, string) {
	if login == "" {
		return false, whyNotSignedIn
	}
	if _, err := p.handler(); err != nil {
		return false, whyNotWired
	}
	key := issueKey(owner, repo, issue) + "@" + state + "|" + decision + "|" + strings.ToLower(login)
	now := p.cfg.Now()
	if a, ok := p.mayMemo.get(key, now); ok {
		return a.ok, a.why
	}
	if *asks <= 0 {
		return false, whyNotChecked
	}
	*asks--
	ok, why, err := p.may.MayResolve(ctx, gh, owner, repo, issue, decision, login)
	if err != nil {
		p.cfg.Logger.Warn("pages: could not tell whether a person may resolve a decision", "repository", owner+"/"+repo, "issue", issue,
			"decision", decision, "error", err)
		return false, "phasegate could not tell whether you may resolve it right now; try again"
	}
	p.mayMemo.put(key, mayAnswer{ok: ok, why: why, at: now})
	return ok, why
}

// Pending is every pending decision the index holds in repos, blocking
// first, then newest first, with MayResolve for viewer (a bounded number
// of questions per call; the answers are kept a minute).
func (p *Source) Pending(ctx context.Context, repos []web.RepoRef, viewer string) ([]web.PendingItem, error) {
	rows := p.pending.list(repos)
	out := make([]web.PendingItem, 0, len(rows))
	asks, titles := maxMayChecksPerRequest, maxTitleReadsPerRequest
	for _, r := range rows {
		it := r.item
		it.Repo, it.Issue, it.IssueTitle, it.Options = r.repo, r.entry.issue, r.entry.title, append([]web.OptionView(nil), it.Options...)
		if it.IssueTitle == "" && titles > 0 {
			titles--
			it.IssueTitle = p.title(ctx, r)
		}
		switch {
		case r.entry.frozen:
			it.WhyNot = whyFrozenThread
		case viewer == "":
			it.WhyNot = whyNotSignedIn
		default:
			gh, err := p.cfg.Client(ctx, r.repo.Owner, r.repo.Name, r.repo.Installation)
			if err != nil {
				return nil, err
			}
			it.MayResolve, it.WhyNot = p.mayResolve(ctx, gh, r.repo.Owner, r.repo.Name, r.entry.issue, r.entry.state, r.item.Decision, viewer, &asks)
		}
		out = append(out, it)
	}
	return out, nil
}

// maxTitleReadsPerRequest bounds the issues whose titles one inbox reads:
// a fold from a check job or a comment knows no title (its payload names
// none); the title read is then kept in the index.
const maxTitleReadsPerRequest = 20

// title reads the title of the row's issue and keeps it in the index; ""
// when it cannot be read (the inbox then names the issue by its number).
func (p *Source) title(ctx context.Context, r pendingRow) string {
	gh, err := p.cfg.Client(ctx, r.repo.Owner, r.repo.Name, r.repo.Installation)
	if err != nil {
		return ""
	}
	is, err := gh.Issue(ctx, r.repo.Owner, r.repo.Name, r.entry.issue)
	if err != nil {
		p.cfg.Logger.Warn("pages: could not read an issue's title", "repository", r.repo.FullName(), "issue", r.entry.issue, "error", err)
		return ""
	}
	p.pending.setTitle(r.repo.Owner, r.repo.Name, r.entry.issue, is.Title)
	return is.Title
}
