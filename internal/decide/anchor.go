package decide

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/outcome"
)

// Anchors (docs/security.md, rule 4). The chain of prev= shows every
// deleted phasegate comment that a later one names; the newest one, which
// no later comment names yet, is anchored outside the thread, in commit
// statuses, which nobody can delete or edit. Every status phasegate sets
// has the newest phasegate comment of its issue as its Details link
// (target_url), and the anchors go on the commit each outcome of the
// thread names (commit= in its marker): a commit that never moves, whatever
// happens to the pull requests that carried it (pushed on, closed, merged,
// none). When phasegate/decisions on that commit does not already point at
// the newest comment, a phasegate/ledger status does. A phasegate comment
// of the issue that any of phasegate's statuses on those commits points at
// and that is gone from the thread was deleted: tampering.

// ContextLedger is the status that anchors the newest phasegate comment of
// an issue on the commits its outcomes name. It is a record, not a gate:
// success, or failure while the thread is frozen by tampering.
const ContextLedger = "phasegate/ledger"

// anchorRE reads the comment a status points at: its target URL is the
// html_url of a phasegate comment on the issue, or that comment on serve's
// page of the issue ({public}/{owner}/{repo}/issues/{n}#issuecomment-{id},
// Handler.PagesURL): both end alike.
var anchorRE = regexp.MustCompile(`/(?:issues|pull)/([0-9]{1,10})#issuecomment-([0-9]{1,19})$`)

func anchorOf(targetURL string) (issue int, comment int64, ok bool) {
	m := anchorRE.FindStringSubmatch(targetURL)
	if m == nil {
		return 0, 0, false
	}
	n, err1 := strconv.Atoi(m[1])
	id, err2 := strconv.ParseInt(m[2], 10, 64)
	return n, id, err1 == nil && err2 == nil
}

// checkAnchors reads the pull requests that carried the thread's outcomes
// (for their heads, authors and branches) and the statuses of every commit
// the thread's outcomes name, and records every phasegate comment of this
// issue that one of phasegate's statuses there points at and that is gone.
func (h *Handler) checkAnchors(ctx context.Context, gh GitHub, t *thread) error {
	t.prs = map[int]ghclient.PR{}
	t.history = map[string][]ghclient.Status{}
	t.pushed, t.anchored = nil, nil
	prs, commits := anchorTargets(t)
	for _, n := range prs {
		pr, err := gh.PullRequest(ctx, t.owner, t.repo, n)
		if err != nil {
			if ghclient.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("reading pull request #%d of %s/%s: %w", n, t.owner, t.repo, err)
		}
		t.prs[n] = pr
	}
	for _, c := range commits {
		if err := h.readAnchors(ctx, gh, t, c.sha); err != nil {
			if ghclient.IsNotFound(err) || ghclient.StatusCode(err) == 422 {
				continue // a commit GitHub no longer has
			}
			return err
		}
		t.anchored = append(t.anchored, c.sha)
		if c.noPR {
			t.pushed = append(t.pushed, c.sha)
		}
	}
	return nil
}

func isHead(pr ghclient.PR) bool { return pr.State == "open" && pr.HeadSHA != "" }

// anchorCommit is a commit an outcome of the thread names; noPR when that
// outcome was pushed without a pull request (phasegate/decisions is then
// set on it too).
type anchorCommit struct {
	sha  string
	noPR bool
}

// anchorTargets are the pull requests carrying the thread's outcomes and
// the commits the outcomes name (from the markers, tampered ones too).
func anchorTargets(t *thread) (prs []int, commits []anchorCommit) {
	seenCommit := map[string]int{}
	add := func(pr int, commit string) {
		if pr > 0 {
			prs = append(prs, pr)
		}
		if commit == "" {
			return
		}
		if i, ok := seenCommit[commit]; ok {
			commits[i].noPR = commits[i].noPR || pr == 0
			return
		}
		seenCommit[commit] = len(commits)
		commits = append(commits, anchorCommit{sha: commit, noPR: pr == 0})
	}
	for _, o := range t.st.Outcomes {
		add(o.PR, o.Commit)
	}
	for _, tm := range t.st.Tampered {
		if c, ok := t.comment(tm.CommentID); ok {
			if marks := outcome.ParseMarkers(c.Body); len(marks) > 0 && marks[0].Kind == outcome.KindOutcome {
				add(marks[0].PR, marks[0].Commit)
			}
		}
	}
	for _, sha := range t.extraAnchors {
		add(-1, sha)
	}
	slices.Sort(prs)
	sort.Slice(commits, func(i, j int) bool { return commits[i].sha < commits[j].sha })
	return slices.Compact(prs), commits
}

// readAnchors reads the phasegate statuses of sha and records every
// phasegate comment of this issue they point at that is gone.
func (h *Handler) readAnchors(ctx context.Context, gh GitHub, t *thread, sha string) error {
	history, err := h.recordHistory(ctx, gh, t.owner, t.repo, sha, ContextDecisions, ContextLedger)
	if err != nil {
		return fmt.Errorf("reading the statuses of %s in %s/%s: %w", outcome.ShortSHA(sha), t.owner, t.repo, err)
	}
	t.history[sha] = history
	identity := t.cfg.IdentityOrDefault()
	for _, s := range history {
		if !strings.EqualFold(s.Creator, identity) {
			continue
		}
		if issue, id, ok := anchorOf(s.TargetURL); ok && issue == t.issue && !t.has(id) {
			t.deleted = append(t.deleted, id)
			t.st.Deleted(id)
		}
	}
	return nil
}

func (t *thread) wrote(sha string, s ghclient.Status) {
	if hs, ok := t.history[sha]; ok {
		s.Creator = t.cfg.IdentityOrDefault()
		t.history[sha] = append([]ghclient.Status{s}, hs...)
	}
}

// anchorTip anchors the newest phasegate comment of the thread on every
// commit its outcomes name, unless one of phasegate's statuses there
// already points at it (phasegate/decisions, when that commit is a head).
func (h *Handler) anchorTip(ctx context.Context, gh GitHub, t *thread) error {
	tip, ok := t.comment(t.st.Tip)
	if !ok || tip.HTMLURL == "" {
		return nil
	}
	identity := t.cfg.IdentityOrDefault()
	want := ghclient.Status{Context: ContextLedger, State: "success", TargetURL: h.commentLink(t.owner, t.repo, t.issue, tip),
		Description: fmt.Sprintf("newest phasegate comment on #%d: %d", t.issue, tip.ID)}
	if t.st.Frozen() {
		tm := t.st.Tampered[0]
		want.State = "failure"
		want.Description = fmt.Sprintf("tampering on #%d (comment %d): %s", t.issue, tm.CommentID, tm.Reason)
	}
	for _, sha := range t.anchored {
		if anchoredAt(t.history[sha], identity, want) {
			continue
		}
		if err := h.writeRecord(ctx, gh, t.owner, t.repo, sha, want); err != nil {
			return fmt.Errorf("anchoring the newest phasegate comment of %s/%s#%d on %s: %w", t.owner, t.repo, t.issue, outcome.ShortSHA(sha), err)
		}
		t.wrote(sha, want)
	}
	return nil
}

// anchoredAt reports whether history already anchors want's comment: a
// status of phasegate's points at it and, while the thread is frozen, the
// newest phasegate/ledger status already says so.
func anchoredAt(history []ghclient.Status, identity string, want ghclient.Status) bool {
	pointed := slices.ContainsFunc(history, func(s ghclient.Status) bool {
		return strings.EqualFold(s.Creator, identity) && sameAnchor(s.TargetURL, want.TargetURL)
	})
	if !pointed || want.State == "success" {
		return pointed
	}
	for _, s := range history {
		if s.Context == ContextLedger && strings.EqualFold(s.Creator, identity) {
			return s.State == want.State && sameAnchor(s.TargetURL, want.TargetURL)
		}
	}
	return false
}

// Deletion is a phasegate comment GitHub says was deleted (a signed
// issue_comment "deleted" delivery to the App).
type Deletion struct {
	Owner, Repo string
	Issue       int
	// Comment is the deleted comment: its id, author, html_url and body as
	// the delivery carried them.
	Comment ghclient.Comment
	// Sender is who deleted it, for the record.
	Sender string
}

// RecordDeletion records that a phasegate comment was deleted, where the
// fold finds it again however the heads move afterwards: a phasegate/ledger
// status pointing at the deleted comment on every commit the thread's
// outcomes name (and the commit the deleted comment's own marker names).
// A deleted phasegate comment is tampering by itself: the thread freezes,
// and labels and statuses follow (ReconcileIssue).
func (h *Handler) RecordDeletion(ctx context.Context, gh GitHub, d Deletion) (Result, error) {
	id := d.Comment.ID
	if _, _, ok := anchorOf(d.Comment.HTMLURL); !ok || id <= 0 {
		return Result{}, fmt.Errorf("recording the deletion of comment %d on %s/%s#%d: its URL %q names no issue comment", id, d.Owner, d.Repo, d.Issue, d.Comment.HTMLURL)
	}
	if issue, cid, _ := anchorOf(d.Comment.HTMLURL); issue != d.Issue || cid != id {
		return Result{}, fmt.Errorf("recording the deletion of comment %d on %s/%s#%d: its URL names another comment", id, d.Owner, d.Repo, d.Issue)
	}
	unlock, err := h.locks().Lock(ctx, lockKey(d.Owner, d.Repo, d.Issue))
	if err != nil {
		return Result{}, fmt.Errorf("locking %s/%s#%d: %w", d.Owner, d.Repo, d.Issue, err)
	}
	var extra []string // the commit the deleted comment's outcome marker names
	if marks := outcome.ParseMarkers(d.Comment.Body); len(marks) > 0 && marks[0].Kind == outcome.KindOutcome {
		extra = []string{marks[0].Commit}
	}
	t, err := h.load(ctx, gh, d.Owner, d.Repo, d.Issue, extra, nil)
	if err != nil {
		unlock()
		return Result{}, err
	}
	if t.has(id) {
		unlock()
		return Result{}, nil // not deleted (a stale or replayed delivery): nothing to record
	}
	s := ghclient.Status{Context: ContextLedger, State: "failure", TargetURL: d.Comment.HTMLURL,
		Description: fmt.Sprintf("phasegate comment %d on #%d was deleted", id, d.Issue)}
	if d.Sender != "" && outcome.Actor(d.Sender) {
		s.Description += " by " + d.Sender
	}
	for _, sha := range t.anchored {
		if err := h.writeRecord(ctx, gh, d.Owner, d.Repo, sha, s); err != nil {
			unlock()
			return Result{}, fmt.Errorf("recording the deletion of comment %d on %s: %w", id, outcome.ShortSHA(sha), err)
		}
	}
	unlock()
	return h.ReconcileIssue(ctx, gh, d.Owner, d.Repo, d.Issue)
}

// ErrWiped is the error of posting on an issue whose phasegate comments
// were all deleted.
var ErrWiped = errors.New("every phasegate comment of the issue was deleted")

// checkWiped refuses to post on a thread that holds no phasegate comment
// when phasegate's identity labelled the issue before (the issue's events,
// which nobody can delete, say so): someone deleted every phasegate comment
// of it, which no chain or anchor can show (nothing names the comments any
// more). Re-posting the outcome would reopen decisions that were taken.
func (h *Handler) checkWiped(ctx context.Context, gh GitHub, t *thread) error {
	if t.st.Tip != 0 || len(t.st.Tampered) > 0 {
		return nil
	}
	events, err := gh.LabelEvents(ctx, t.owner, t.repo, t.issue)
	if err != nil {
		return fmt.Errorf("reading the label events of %s/%s#%d: %w", t.owner, t.repo, t.issue, err)
	}
	return wiped(t, events)
}

// wiped is checkWiped's verdict on a thread that holds no phasegate
// comment, from the issue's label events.
func wiped(t *thread, events []ghclient.LabelEvent) error {
	identity := t.cfg.IdentityOrDefault()
	for _, e := range events {
		l := strings.ToLower(e.Label)
		if strings.EqualFold(e.Actor, identity) && (l == LabelPending || strings.HasPrefix(l, labelPhasePrefix)) {
			return fmt.Errorf("%s/%s#%d: %w (phasegate labelled it %s before, and none of its comments is on the thread): "+
				"decisions taken there cannot be reopened; post the Phase Outcome on a new issue", t.owner, t.repo, t.issue, ErrWiped, e.Label)
		}
	}
	return nil
}
