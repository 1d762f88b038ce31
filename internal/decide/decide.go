// Package decide is the decision handler shared by the action (on
// issue_comment, schedule and workflow_dispatch) and the App server: the one
// place where the ledger meets GitHub (design §6–8). For a comment holding
// `/resolve D-001 approve` it folds the issue thread, authorises the
// commenter, records an immutable resolution comment and advances state —
// the phasegate:pending and phase:<name> labels, a captured follow-up issue,
// and phasegate/decisions on the pull requests that carry the outcome.
//
// Every step is idempotent: the thread is re-read under a per-issue lock
// before anything is written, and a command already answered (a resolution
// or a reply naming its comment) is not answered again. Handling the same
// comment twice, or concurrently, yields one resolution comment and the
// same labels and statuses. Reconcile applies every command that has no
// answer yet, so a lost delivery or a crash loses nothing.
package decide

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/phasegate/phasegate/internal/command"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ledger"
)

// GitHub is what the handler needs of GitHub (internal/ghclient.Client).
type GitHub interface {
	ListIssueComments(ctx context.Context, owner, repo string, number int) ([]ghclient.Comment, error)
	CreateIssueComment(ctx context.Context, owner, repo string, number int, body string) (ghclient.Comment, error)
	CreateCommentReaction(ctx context.Context, owner, repo string, commentID int64, content string) error
	CollaboratorPermission(ctx context.Context, owner, repo, user string) (string, error)
	TeamMember(ctx context.Context, org, teamSlug, user string) (bool, error)
	DefaultBranch(ctx context.Context, owner, repo string) (string, error)
	FileContent(ctx context.Context, owner, repo, path, ref string) ([]byte, bool, error)
	ListLabels(ctx context.Context, owner, repo string, number int) ([]string, error)
	AddLabels(ctx context.Context, owner, repo string, number int, labels []string) error
	RemoveLabel(ctx context.Context, owner, repo string, number int, label string) error
	CreateIssue(ctx context.Context, owner, repo, title, body string, labels []string) (int, string, error)
	ListOpenIssues(ctx context.Context, owner, repo string, labels ...string) ([]ghclient.Issue, error)
	PullRequest(ctx context.Context, owner, repo string, number int) (ghclient.PR, error)
	CreateStatus(ctx context.Context, owner, repo, sha string, s ghclient.Status) error
	LatestStatus(ctx context.Context, owner, repo, sha, context string) (ghclient.Status, bool, error)
	FileAddedBy(ctx context.Context, owner, repo, path, ref string) (login, sha string, err error)
	CommitAuthor(ctx context.Context, owner, repo, sha string) (author, committer string, err error)
	PullRequestFiles(ctx context.Context, owner, repo string, number int) (map[string]string, error)
}

// Locker serialises the handling of one issue (in memory in one process;
// Redis across the App's replicas).
type Locker interface {
	// Lock blocks until the key is held or ctx ends; unlock releases it.
	Lock(ctx context.Context, key string) (unlock func(), err error)
}

// Handler handles decision commands. It is safe for concurrent use.
type Handler struct {
	// Key is PHASEGATE_SIGNING_KEY; empty for none.
	Key []byte
	// ConfigPath is the config file on the default branch (default
	// .github/phasegate.yml).
	ConfigPath string
	// Identity, when set, is the login phasegate comments as, whatever the
	// repository's config says: the App's <slug>[bot]. Empty: the config's
	// identity (default github-actions[bot], the action's).
	Identity string
	// Locks serialises per issue; nil means an in-memory lock.
	Locks Locker
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock (for logs); nil means time.Now.
	Now func() time.Time

	once sync.Once
	mem  *MemLocker
}

// Comment is the comment that triggered the handler.
type Comment struct {
	ID     int64
	Author string
	// Bot is set when GitHub says the author is a bot (user.type "Bot").
	Bot  bool
	Body string
}

// Event is an issue_comment "created" event.
type Event struct {
	Owner, Repo string
	Issue       int
	Comment     Comment
	// Delivery identifies the webhook delivery or workflow run, for logs.
	Delivery string
}

// Result counts what a call did.
type Result struct {
	Resolutions int // resolution comments posted
	Replies     int // reply comments posted (refusals, lists, help)
	Captured    int // follow-up issues opened
	Skipped     int // commands already answered
	Tampered    int // edited phasegate comments seen
}

func (r *Result) add(o Result) {
	r.Resolutions += o.Resolutions
	r.Replies += o.Replies
	r.Captured += o.Captured
	r.Skipped += o.Skipped
	r.Tampered += o.Tampered
}

func (h *Handler) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}

func (h *Handler) locks() Locker {
	if h.Locks != nil {
		return h.Locks
	}
	h.once.Do(func() { h.mem = NewMemLocker() })
	return h.mem
}

// HandleComment handles a newly created comment: nothing happens unless it
// holds a phasegate command. An error means the work could not be finished
// (GitHub kept failing); what was done is idempotent, so the same event can
// be handled again, and reconcile will finish it otherwise.
func (h *Handler) HandleComment(ctx context.Context, gh GitHub, ev Event) (Result, error) {
	cmds := command.Parse(ev.Comment.Body)
	if len(cmds) == 0 {
		return Result{}, nil
	}
	log := h.logger().With("delivery", ev.Delivery, "repository", ev.Owner+"/"+ev.Repo, "issue", ev.Issue, "comment", ev.Comment.ID)
	unlock, err := h.locks().Lock(ctx, lockKey(ev.Owner, ev.Repo, ev.Issue))
	if err != nil {
		return Result{}, fmt.Errorf("locking %s/%s#%d: %w", ev.Owner, ev.Repo, ev.Issue, err)
	}
	defer unlock()
	t, err := h.load(ctx, gh, ev.Owner, ev.Repo, ev.Issue)
	if err != nil {
		return Result{}, err
	}
	return h.handle(ctx, gh, t, ev.Comment, cmds, log)
}

func lockKey(owner, repo string, issue int) string {
	return strings.ToLower(owner+"/"+repo) + "#" + strconv.Itoa(issue)
}

// thread is an issue as the handler sees it: its config and folded state.
type thread struct {
	owner, repo string
	issue       int
	cfg         config.Config
	comments    []ghclient.Comment
	st          *ledger.State
}

// load reads the config from the default branch and folds the thread.
func (h *Handler) load(ctx context.Context, gh GitHub, owner, repo string, issue int) (*thread, error) {
	cfg, err := h.config(ctx, gh, owner, repo)
	if err != nil {
		return nil, err
	}
	if h.Identity != "" {
		cfg.Identity = h.Identity
	}
	comments, err := gh.ListIssueComments(ctx, owner, repo, issue)
	if err != nil {
		return nil, fmt.Errorf("reading the comments of %s/%s#%d: %w", owner, repo, issue, err)
	}
	t := &thread{owner: owner, repo: repo, issue: issue, cfg: cfg, comments: comments}
	t.fold(h.Key)
	return t, nil
}

// fold folds the comments (again, after phasegate added some).
func (t *thread) fold(key []byte) {
	lc := make([]ledger.Comment, len(t.comments))
	for i, c := range t.comments {
		lc[i] = ledger.Comment{ID: c.ID, Author: c.User, Body: c.Body, CreatedAt: c.CreatedAt}
	}
	t.st = ledger.Fold(lc, ledger.Options{Identity: t.cfg.IdentityOrDefault(), Key: key, Phases: t.cfg.PhasesOrDefault()})
}

// config reads the configuration from the default branch; an invalid file
// means the defaults (never "allow everything").
func (h *Handler) config(ctx context.Context, gh GitHub, owner, repo string) (config.Config, error) {
	path := h.ConfigPath
	if path == "" {
		path = config.DefaultPath
	}
	branch, err := gh.DefaultBranch(ctx, owner, repo)
	if err != nil {
		return config.Default(), fmt.Errorf("reading the default branch of %s/%s: %w", owner, repo, err)
	}
	data, found, err := gh.FileContent(ctx, owner, repo, path, branch)
	if err != nil {
		return config.Default(), fmt.Errorf("reading %s of %s/%s: %w", path, owner, repo, err)
	}
	if !found {
		return config.Default(), nil
	}
	cfg, probs := config.Parse(data)
	if len(probs) > 0 {
		h.logger().Warn("invalid config: using the defaults", "repository", owner+"/"+repo, "path", path, "problem", probs[0].Message, "line", probs[0].Line)
	}
	return cfg, nil
}

// ReconcileIssue applies every command on the issue that has no answer yet.
func (h *Handler) ReconcileIssue(ctx context.Context, gh GitHub, owner, repo string, issue int) (Result, error) {
	unlock, err := h.locks().Lock(ctx, lockKey(owner, repo, issue))
	if err != nil {
		return Result{}, fmt.Errorf("locking %s/%s#%d: %w", owner, repo, issue, err)
	}
	defer unlock()
	t, err := h.load(ctx, gh, owner, repo, issue)
	if err != nil {
		return Result{}, err
	}
	log := h.logger().With("repository", owner+"/"+repo, "issue", issue, "reconcile", true)
	var total Result
	total.Tampered = len(t.st.Tampered)
	bots := map[int64]bool{}
	for _, c := range t.comments {
		bots[c.ID] = c.IsBot()
	}
	for _, u := range append([]ledger.CommandComment(nil), t.st.Unanswered...) {
		if t.st.Answered(u.ID) { // answered while handling an earlier one
			continue
		}
		r, err := h.handle(ctx, gh, t, Comment{ID: u.ID, Author: u.Author, Bot: bots[u.ID], Body: u.Body}, u.Commands, log.With("comment", u.ID))
		total.add(r)
		if err != nil {
			return total, err
		}
	}
	// Labels and statuses follow the thread even when nothing was applied:
	// an edited phasegate comment fails phasegate/decisions.
	if err := h.advance(ctx, gh, t); err != nil {
		return total, err
	}
	return total, nil
}

// ReconcileRepo reconciles every open issue labelled phasegate:pending.
func (h *Handler) ReconcileRepo(ctx context.Context, gh GitHub, owner, repo string) (Result, error) {
	issues, err := gh.ListOpenIssues(ctx, owner, repo, LabelPending)
	if err != nil {
		return Result{}, fmt.Errorf("listing the pending issues of %s/%s: %w", owner, repo, err)
	}
	var total Result
	var errs []error
	for _, is := range issues {
		r, err := h.ReconcileIssue(ctx, gh, owner, repo, is.Number)
		total.add(r)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return total, errors.Join(errs...)
}
