// Package decide is the decision handler shared by the action (on
// issue_comment, schedule and workflow_dispatch) and the App server: the one
// place where the ledger meets GitHub (docs/contracts/outcome.md). For a comment holding
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
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/phasegate/phasegate/internal/command"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/outcome"
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
	StatusHistory(ctx context.Context, owner, repo, sha string, contexts ...string) ([]ghclient.Status, error)
	RefPushes(ctx context.Context, owner, repo, ref string) ([]ghclient.Push, error)
	CompareWhole(ctx context.Context, owner, repo, base, head string, lim ghclient.TreeLimits) (ghclient.Comparison, error)
	LabelEvents(ctx context.Context, owner, repo string, number int) ([]ghclient.LabelEvent, error)
	ListRepoComments(ctx context.Context, owner, repo string, since time.Time) ([]ghclient.Comment, error)
	EditedComments(ctx context.Context, nodeIDs []string) (map[string]bool, error)
	PullRequestsForCommit(ctx context.Context, owner, repo, sha string) ([]ghclient.PR, error)
	CommitFiles(ctx context.Context, owner, repo, sha string) (map[string]string, error)
	RepositoryDispatch(ctx context.Context, owner, repo, eventType string, payload any) error
	CommentReactors(ctx context.Context, owner, repo string, commentID int64, content string) ([]string, error)
	CreateCheckRun(ctx context.Context, owner, repo string, cr ghclient.CheckRun) (int64, error)
	UpdateCheckRun(ctx context.Context, owner, repo string, id int64, cr ghclient.CheckRun) error
	CheckRunHistory(ctx context.Context, owner, repo, sha, name string) ([]ghclient.CheckRun, error)
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
	// TreeLimits bound the reading of a change from the trees of its
	// commits, when GitHub lists it only in part (zero: ghclient's
	// defaults): serve's, for phasegate/decisions and the App's checks.
	TreeLimits ghclient.TreeLimits
	// Locks serialises per issue; nil means an in-memory lock.
	Locks Locker
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// ReconcileWindow is how far back ReconcileRepo looks for comments on
	// issues that are not labelled phasegate:pending; zero means 24 hours.
	ReconcileWindow time.Duration
	// Watermarks, when set, make ReconcileRepo list only the comments since
	// its previous successful pass of the repository (less WatermarkSkew).
	Watermarks *Watermarks
	// Memo, when set, makes ReconcileRepo skip the threads its listings
	// show unchanged since their last successful reconcile (FoldMemo).
	Memo *FoldMemo
	// Budget, when set, is asked before ReconcileRepo reads each thread
	// again; when it says no, the pass stops with a *CutShortError naming
	// the threads left, which the next pass takes first.
	Budget Budget

	// ConfigTTL is how long a repository's missing config file is
	// remembered (a 404 has no ETag, so re-reading it costs rate limit);
	// zero means one minute. A config that exists is re-read every time,
	// with a conditional request.
	ConfigTTL time.Duration

	// Notifier, when set, is told of every resolution (serve's notify URL).
	Notifier Notifier

	// Publish is where gates and anchors are recorded: PublishStatuses
	// ("" too: the action's way), PublishChecks (the App's check runs) or
	// PublishBoth.
	Publish string

	// Observe, when set, is told of every fold of a thread: its live
	// handling, its reconcile, an outcome posted on it, a read
	// (Inspect), and a commit's sync (observe.go). Serve's pages keep
	// their index of pending decisions with it. It must be quick and must
	// not change what it is given.
	Observe func(Folded)
	// PagesURL, when set, is serve's public URL: the Details links of the
	// statuses and check runs phasegate sets lead to its pages, keeping the
	// anchor form (observe.go, docs/security.md rule 4).
	PagesURL string

	once        sync.Once
	reads       readCache
	sent        sync.Map // "owner/repo:comment:reaction" → recorded as sent
	editAnswers sync.Map // "comment@updated_at" → whether GraphQL says it was edited
	noDispatch  sync.Map // "owner/repo" → when the token was refused a dispatch
	mem         *MemLocker
	noCfg       sync.Map // "owner/repo:path" → time the config was found missing
	sources     sync.Map // "owner/repo@commit:path" → outcome id ("" when absent)
	pushers     sync.Map // "owner/repo@ref@head" → who pushed ref up to head
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
	// Labels are the issue's labels as the event's payload lists them; nil
	// when unknown (they are then read). They save a read; a stale list
	// only delays a label change to the next pass.
	Labels []string
}

// Result counts what a call did.
type Result struct {
	Resolutions int // resolution comments posted
	Replies     int // reply comments posted (refusals, lists, help)
	Captured    int // follow-up issues opened
	Skipped     int // commands already answered
	Tampered    int // edited phasegate comments seen
	// DispatchDenied counts threads whose repository_dispatch the token was
	// not allowed to send (it needs contents: write): the pipeline was not
	// told, and the caller should say so.
	DispatchDenied int
	// Unchanged counts the threads ReconcileRepo did not read again (its
	// listings showed them unchanged since their last reconcile, FoldMemo),
	// Reread those it read.
	Unchanged int
	Reread    int
}

func (r *Result) add(o Result) {
	r.DispatchDenied += o.DispatchDenied
	r.Resolutions += o.Resolutions
	r.Replies += o.Replies
	r.Captured += o.Captured
	r.Skipped += o.Skipped
	r.Tampered += o.Tampered
	r.Unchanged += o.Unchanged
	r.Reread += o.Reread
}

func (h *Handler) logger() *slog.Logger { return cmp.Or(h.Logger, slog.Default()) }

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
	t, err := h.load(ctx, gh, ev.Owner, ev.Repo, ev.Issue, nil, nil)
	if err != nil {
		return Result{}, err
	}
	t.labels = ev.Labels
	defer h.observe(t)
	// Commands earlier on the thread that have no answer yet (their
	// delivery is late or lost) go first: the first valid command wins by
	// its position on the thread, never by which delivery arrived first.
	if err := h.checkEdits(ctx, gh, t, ev.Comment.ID); err != nil {
		return Result{}, err
	}
	total, err := h.answerUnanswered(ctx, gh, t, ev.Comment.ID, log)
	if err != nil {
		return total, err
	}
	r, err := h.handle(ctx, gh, t, ev.Comment, cmds, log)
	total.add(r)
	if t.dispatchDenied {
		total.DispatchDenied++
	}
	return total, err
}

// thread is an issue as the handler sees it: its config and folded state.
type thread struct {
	owner, repo string
	issue       int
	cfg         config.Config
	// cfgInvalid says why the config is invalid; "" when it is valid. An
	// invalid config fails closed: no resolution is accepted.
	cfgInvalid string
	comments   []ghclient.Comment
	st         *ledger.State
	sources    map[string]string // "commit:path" → outcome id, "" when absent
	// prs are the pull requests carrying the thread's outcomes (open,
	// closed and merged), read once per load; open ones are heads.
	prs map[int]ghclient.PR
	// history is the phasegate statuses (phasegate/decisions and
	// phasegate/ledger) of each commit the thread's outcomes name, newest
	// first, as read and then written: the anchors.
	history map[string][]ghclient.Status
	// synced is phasegate/decisions as advance set it on each commit it
	// synced under this issue's lock (syncStatuses).
	synced map[string]ghclient.Status
	// anchored are the commits the thread's outcomes name that GitHub has:
	// where the newest phasegate comment is anchored.
	anchored []string
	// extraAnchors are more commits to read anchors from (the commit a
	// deleted outcome comment named).
	extraAnchors []string
	// deleted are phasegate comments a status points at that are gone.
	deleted []int64
	// edited are comments GraphQL says were edited (lastEditedAt), which
	// the REST timestamps may not show.
	edited map[int64]bool
	// fresh are the phasegate comments this run posted: no status can
	// point at them yet.
	fresh map[int64]bool
	// labels are the issue's labels from the event, used once; nil: read.
	labels []string
	// dispatchDenied is set when the token may not send repository_dispatch.
	dispatchDenied bool
	// pushed are the commits that added outcomes posted without a pull
	// request: phasegate/decisions is set there too.
	pushed []string
	// readAt is when the comments were read; labelsAfter the issue's
	// labels once advance brought them in line (nil: not known).
	readAt      time.Time
	labelsAfter []string
	// title is the issue's title when a listing gave it ("": not known),
	// for the observer.
	title string
	// facts are what GitHub said of the pass's commands beyond the thread
	// (read on demand: settle).
	facts facts
}

// repoConfig is a repository's configuration read once for a whole
// reconcile pass, with the digest of its bytes.
type repoConfig struct {
	cfg     config.Config
	invalid string
	digest  string
}

// load reads the config from the default branch (pre when it was read
// already) and folds the thread, reading the anchors of the extra commits
// too.
func (h *Handler) load(ctx context.Context, gh GitHub, owner, repo string, issue int, extra []string, pre *repoConfig) (*thread, error) {
	if pre == nil {
		rc, err := h.repoConfig(ctx, gh, owner, repo)
		if err != nil {
			return nil, err
		}
		pre = &rc
	}
	cfg, invalid := pre.cfg, pre.invalid
	if h.Identity != "" {
		cfg.Identity = h.Identity
	}
	readAt := h.now()
	comments, err := gh.ListIssueComments(ctx, owner, repo, issue)
	if err != nil {
		return nil, fmt.Errorf("reading the comments of %s/%s#%d: %w", owner, repo, issue, err)
	}
	t := &thread{owner: owner, repo: repo, issue: issue, cfg: cfg, cfgInvalid: invalid, comments: comments, extraAnchors: extra, fresh: map[int64]bool{},
		readAt: readAt, facts: facts{}}
	if err := h.confirmEdits(ctx, gh, t); err != nil {
		return nil, err
	}
	if len(h.Key) == 0 {
		if err := h.readSources(ctx, gh, t); err != nil {
			return nil, err
		}
	}
	t.fold(h.Key)
	if err := h.checkAnchors(ctx, gh, t); err != nil {
		return nil, err
	}
	h.observe(t)
	return t, nil
}

// fold folds the comments (again, after phasegate added some).
func (t *thread) fold(key []byte) {
	lc := make([]ledger.Comment, len(t.comments))
	for i, c := range t.comments {
		lc[i] = ledger.Comment{ID: c.ID, Author: c.User, Body: c.Body, CreatedAt: c.CreatedAt, Edited: t.edited[c.ID]}
	}
	opts := ledger.Options{Identity: t.cfg.IdentityOrDefault(), Key: key, Phases: t.cfg.PhasesOrDefault(), Negative: t.cfg.Decisions.NegativeOptions}
	if len(key) == 0 {
		opts.SourceID = func(source, commit string) (string, bool) {
			id := t.sources[commit+":"+source]
			return id, id != ""
		}
	}
	t.st = ledger.Fold(lc, opts)
	for _, id := range t.deleted {
		t.st.Deleted(id)
	}
}

func (t *thread) comment(id int64) (ghclient.Comment, bool) { return commentIn(t.comments, id) }

func (t *thread) has(id int64) bool { _, ok := t.comment(id); return ok }

// posted adds a comment this run posted to the thread and folds it in.
func (t *thread) posted(c ghclient.Comment, key []byte) {
	t.comments = append(t.comments, c)
	t.fresh[c.ID] = true
	t.fold(key)
}

func commentIn(cs []ghclient.Comment, id int64) (ghclient.Comment, bool) {
	if i := slices.IndexFunc(cs, func(c ghclient.Comment) bool { return c.ID == id }); i >= 0 {
		return cs[i], true
	}
	return ghclient.Comment{}, false
}

// repoConfig reads the configuration from the default branch (the
// contents API's default ref), with the digest of the file's bytes (""
// when there is none): a fold memo stands only under the configuration it
// was made with. An invalid file fails closed: invalid says why, and the
// handler then accepts no resolution, never falling back to defaults.
func (h *Handler) repoConfig(ctx context.Context, gh GitHub, owner, repo string) (repoConfig, error) {
	path := cmp.Or(h.ConfigPath, config.DefaultPath)
	ttl := cmp.Or(max(h.ConfigTTL, 0), time.Minute)
	missKey := strings.ToLower(owner+"/"+repo) + ":" + path
	if at, ok := h.noCfg.Load(missKey); ok && h.now().Sub(at.(time.Time)) < ttl {
		return repoConfig{cfg: config.Default()}, nil
	}
	data, found, err := gh.FileContent(ctx, owner, repo, path, "")
	if err != nil {
		return repoConfig{cfg: config.Default()}, fmt.Errorf("reading %s of %s/%s: %w", path, owner, repo, err)
	}
	if !found {
		h.noCfg.Store(missKey, h.now())
		return repoConfig{cfg: config.Default()}, nil
	}
	h.noCfg.Delete(missKey)
	cfg, probs := config.Parse(data)
	rc := repoConfig{cfg: cfg}
	if len(data) > 0 {
		sum := sha256.Sum256(data)
		rc.digest = hex.EncodeToString(sum[:])
	}
	if len(probs) > 0 {
		rc.invalid = fmt.Sprintf("%s is invalid (line %d: %s)", path, probs[0].Line, probs[0].Message)
		h.logger().Warn("invalid config: no resolution is accepted until it is fixed", "repository", owner+"/"+repo, "path", path, "problem", probs[0].Message, "line", probs[0].Line)
	}
	return rc, nil
}

// ReconcileIssue applies every command on the issue that has no answer yet,
// tells the author of a command whose resolution lost a race which command
// won, and brings labels and statuses in line with the thread. A command
// that cannot be answered (GitHub keeps failing) is logged and skipped: the
// pass goes on with the next, and the next pass retries it.
func (h *Handler) ReconcileIssue(ctx context.Context, gh GitHub, owner, repo string, issue int) (Result, error) {
	return h.reconcileIssue(ctx, gh, owner, repo, issue, nil, nil, "")
}

// reconcileIssue is ReconcileIssue with the pass's configuration (nil:
// read it), the issue's labels from the pending listing (nil: read
// them) and its title from that listing ("": not known). After a success the thread is remembered in the memo; after a
// failure it is forgotten, so the next pass reads it again.
func (h *Handler) reconcileIssue(ctx context.Context, gh GitHub, owner, repo string, issue int, pre *repoConfig, labels []string, title string) (Result, error) {
	unlock, err := h.locks().Lock(ctx, lockKey(owner, repo, issue))
	if err != nil {
		return Result{}, fmt.Errorf("locking %s/%s#%d: %w", owner, repo, issue, err)
	}
	defer unlock()
	t, err := h.load(ctx, gh, owner, repo, issue, nil, pre)
	if err != nil {
		h.Memo.Forget(owner, repo, issue)
		return Result{}, err
	}
	t.labels = labels
	t.title = title
	res, err := h.reconcileThread(ctx, gh, t)
	h.observe(t)
	if err != nil || pre == nil {
		h.Memo.Forget(owner, repo, issue)
		return res, err
	}
	h.Memo.record(t, pre.digest)
	return res, nil
}

// reconcileThread answers what the loaded thread leaves unanswered and
// brings its labels and statuses in line.
func (h *Handler) reconcileThread(ctx context.Context, gh GitHub, t *thread) (Result, error) {
	log := h.logger().With("repository", t.owner+"/"+t.repo, "issue", t.issue, "reconcile", true)
	total := Result{Tampered: len(t.st.Tampered)}
	if len(t.st.Outcomes) == 0 && len(t.st.Tampered) == 0 {
		t.labelsAfter = nil
		return total, nil // not a phasegate thread: nothing to answer
	}
	if err := h.checkEdits(ctx, gh, t, 0); err != nil {
		return total, err
	}
	r, err := h.answerUnanswered(ctx, gh, t, 0, log)
	total.add(r)
	errs := []error{err}
	for _, s := range append([]ledger.Superseded(nil), t.st.Superseded...) {
		if err := h.replySuperseded(ctx, gh, t, s); err != nil {
			log.Warn("could not answer a superseded resolution; the next pass retries it", "comment", s.Command, "error", err)
			errs = append(errs, err)
			continue
		}
		total.Replies++
	}
	// Labels and statuses follow the thread even when nothing was applied:
	// an edited phasegate comment fails phasegate/decisions.
	if err := h.advance(ctx, gh, t); err != nil {
		errs = append(errs, err)
	}
	if t.dispatchDenied {
		total.DispatchDenied++
	}
	return total, errors.Join(errs...)
}

// answerUnanswered answers the commands on the thread that have no answer
// yet, oldest first: those before comment before, when it is not 0 (a live
// comment's), the first error stopping it; else all of them (a reconcile
// pass), an error logged and the next command answered.
func (h *Handler) answerUnanswered(ctx context.Context, gh GitHub, t *thread, before int64, log *slog.Logger) (Result, error) {
	var total Result
	var errs []error
	for _, u := range append([]ledger.CommandComment(nil), t.st.Unanswered...) {
		if (before != 0 && u.ID >= before) || t.st.Answered(u.ID) { // answered while handling an earlier one
			continue
		}
		c, _ := t.comment(u.ID)
		r, err := h.handle(ctx, gh, t, Comment{ID: u.ID, Author: u.Author, Bot: c.IsBot(), Body: u.Body}, u.Commands, log.With("command", u.ID))
		total.add(r)
		switch {
		case err != nil && before != 0:
			return total, err
		case err != nil:
			log.Warn("could not answer a command; the next pass retries it", "comment", u.ID, "error", err)
			errs = append(errs, err)
		}
	}
	return total, errors.Join(errs...)
}

// checkEdits asks GitHub's GraphQL API whether the unanswered command
// comments (those before the comment before, when before is not 0) were
// ever edited, and refolds. The REST listing's updated_at has one-second
// resolution, so an edit in the same second as the post shows only there.
// A command the handler reads from a webhook's created event needs no
// check: the event holds the text as first written.
func (h *Handler) checkEdits(ctx context.Context, gh GitHub, t *thread, before int64) error {
	if marked, err := h.askEdits(ctx, gh, t, commandsToAsk(t, before), false); err != nil || !marked {
		return err
	}
	t.fold(h.Key)
	return nil
}

// commandsToAsk are checkEdits' comments: the unanswered commands (before
// comment before, when it is not 0) not known to be edited, with a node id.
func commandsToAsk(t *thread, before int64) (ask []ghclient.Comment) {
	for _, u := range t.st.Unanswered {
		if c, ok := t.comment(u.ID); ok && (before == 0 || u.ID < before) && c.NodeID != "" && !t.edited[c.ID] {
			ask = append(ask, c)
		}
	}
	return ask
}

// confirmEdits decides which comments were edited. The REST listing's
// updated_at later than created_at says a comment may have been; GraphQL's
// lastEditedAt, which only an edit of the body sets, says whether it was:
// phasegate's own reactions on its comments must never read as an edit,
// whatever else moves updated_at. A comment's answer is remembered for its
// updated_at, so a re-fold asks nothing again. Without a node id, the REST
// timestamps decide.
func (h *Handler) confirmEdits(ctx context.Context, gh GitHub, t *thread) error {
	t.edited = map[int64]bool{}
	var ask []ghclient.Comment
	for _, c := range t.comments {
		if !c.Edited() {
			continue
		}
		switch v, ok := h.editAnswers.Load(editKey(c)); {
		case ok:
			t.edited[c.ID] = v.(bool)
		case c.NodeID == "":
			t.edited[c.ID] = true
		default:
			ask = append(ask, c)
		}
	}
	_, err := h.askEdits(ctx, gh, t, ask, true)
	return err
}

// askEdits asks GitHub's GraphQL API whether the comments were ever edited,
// records each answer for the comment's updated_at, and reports whether
// one was. A comment GraphQL does not know counts as edited when the REST
// timestamps say so (rest).
func (h *Handler) askEdits(ctx context.Context, gh GitHub, t *thread, cs []ghclient.Comment, rest bool) (bool, error) {
	if len(cs) == 0 {
		return false, nil
	}
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.NodeID
	}
	edited, err := gh.EditedComments(ctx, ids)
	if err != nil {
		return false, fmt.Errorf("checking which comments of %s/%s#%d were edited: %w", t.owner, t.repo, t.issue, err)
	}
	marked := false
	for _, c := range cs {
		e := editedBy(edited, c, rest)
		t.edited[c.ID] = e
		h.editAnswers.Store(editKey(c), e)
		marked = marked || e
	}
	return marked, nil
}

// editedBy is whether GraphQL's answer says c was edited: one it does not
// know counts as edited when the REST timestamps say it may be (rest).
func editedBy(answer map[string]bool, c ghclient.Comment, rest bool) bool {
	e, known := answer[c.NodeID]
	return e || (rest && !known)
}

func editKey(c ghclient.Comment) string {
	return fmt.Sprintf("%d@%s", c.ID, c.UpdatedAt.UTC().Format(time.RFC3339Nano))
}

// replySuperseded answers the command of a resolution that lost a race:
// an earlier command had resolved the decision, so this one does not count.
func (h *Handler) replySuperseded(ctx context.Context, gh GitHub, t *thread, s ledger.Superseded) error {
	who := "@" + s.Winner.Resolution.By
	author := ""
	if c, ok := t.comment(s.Command); ok {
		author = mention(c.User) + " "
	}
	line := fmt.Sprintf("%sthe resolution of `%s` posted for this comment ([here](#issuecomment-%d)) does not count: "+
		"`%s` was already resolved by an earlier command: **%s**, by %s ([resolution](#issuecomment-%d)).",
		author, outcome.Inline(s.Winner.ID), s.Resolution, outcome.Inline(s.Winner.ID), outcome.Inline(s.Winner.Resolution.Option),
		outcome.Inline(who), s.Winner.ResolutionComment)
	if err := h.reply(ctx, gh, t, s.Command, []string{line}); err != nil {
		return err
	}
	return gh.CreateCommentReaction(ctx, t.owner, t.repo, s.Command, reactConfused)
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}
