package decide

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/phasegate/phasegate/internal/command"
	"github.com/phasegate/phasegate/internal/ghclient"
)

// Budget is the share of rate limit a reconcile pass may spend (serve's
// --reconcile-budget-share, the installation's primary rate limit left,
// GitHub's secondary limits).
type Budget interface {
	// Allow reports whether the pass may read one more thread; when it may
	// not, reason says why (a metric label: "budget", "rate_limit",
	// "secondary_limit"). Essential work — the listings that find lost
	// commands, and a thread whose recent comments hold one — is refused
	// only by the rate limits themselves, never by the share: a spent
	// share must not leave a lost command unapplied past one interval.
	Allow(essential bool) (reason string, ok bool)
}

// Reasons a pass was cut short, besides the Budget's own.
const (
	CutRateLimit      = "rate_limit"
	CutSecondaryLimit = "secondary_limit"
)

// CutShortError is the error of a repository's reconcile pass that stopped
// before it read every thread that changed: the Budget said no, or GitHub
// answered with a rate limit. The threads it left are read first by the
// next pass (with a Memo; without one, the watermark does not move and the
// next pass lists the same comments again).
type CutShortError struct {
	Owner, Repo string
	Reason      string
	// Deferred are the changed threads not reconciled, in the order the
	// next pass takes them.
	Deferred []int
	// Err is GitHub's answer when a rate limit stopped the pass.
	Err error
}

func (e *CutShortError) Error() string {
	msg := fmt.Sprintf("reconcile of %s/%s cut short (%s): %d changed threads left for the next pass", e.Owner, e.Repo, e.Reason, len(e.Deferred))
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *CutShortError) Unwrap() error { return e.Err }

// ReconcileRepo reconciles every open issue labelled phasegate:pending and
// every issue with a comment created or edited since the previous pass of
// the repository (Watermarks; the reconcile window without them): a
// command lost on an issue that is not pending is still found.
//
// With a Memo, a thread that the two listings show unchanged since its last
// successful reconcile is not read again, and the threads a pass could not
// finish (an error, or cut short) are remembered and read first by the next
// pass, whatever its listings say, so the watermark moves once the listings
// are read. Without one, it moves only after a pass with no error. With a
// Budget, the pass stops when it says so (*CutShortError). Threads whose
// recent comments hold a command go first, then those left by the previous
// pass, then the rest by number.
func (h *Handler) ReconcileRepo(ctx context.Context, gh GitHub, owner, repo string) (Result, error) {
	if reason, ok := h.allow(true); !ok {
		return Result{}, &CutShortError{Owner: owner, Repo: repo, Reason: reason, Deferred: h.Memo.takeDeferred(owner, repo)}
	}
	start := h.now()
	work, err := h.reconcileWork(ctx, gh, owner, repo, start)
	if err != nil {
		return Result{}, err
	}
	var pre *repoConfig
	if h.Memo != nil {
		rc, err := h.repoConfig(ctx, gh, owner, repo)
		if err != nil {
			return Result{}, err
		}
		pre = &rc
		// From here on, what this pass cannot finish is remembered.
		h.Watermarks.passed(owner, repo, start)
	}
	var total Result
	var todo []int
	for _, n := range work.order {
		if pre != nil && !work.forced[n] && h.Memo.unchanged(owner, repo, n, work.listed[n], pre.digest, start) {
			total.Unchanged++
			continue
		}
		todo = append(todo, n)
	}
	var errs []error
	var failed []int
	for i, n := range todo {
		if reason, ok := h.allow(work.commands[n]); !ok {
			return total, h.cutShort(owner, repo, reason, append(failed, todo[i:]...), nil, errs)
		}
		r, err := h.reconcileIssue(ctx, gh, owner, repo, n, pre, work.listed[n].labelList, work.listed[n].title)
		total.add(r)
		total.Reread++
		var rl *ghclient.RateLimitError
		if errors.As(err, &rl) {
			reason := CutRateLimit
			if rl.Secondary {
				reason = CutSecondaryLimit
			}
			return total, h.cutShort(owner, repo, reason, append(failed, todo[i:]...), err, errs)
		}
		if err != nil {
			errs = append(errs, err)
			failed = append(failed, n)
		}
	}
	h.Memo.setDeferred(owner, repo, failed)
	if len(errs) == 0 && h.Memo == nil {
		h.Watermarks.passed(owner, repo, start)
	}
	return total, errors.Join(errs...)
}

func (h *Handler) cutShort(owner, repo, reason string, left []int, cause error, errs []error) error {
	h.Memo.setDeferred(owner, repo, left)
	return errors.Join(append(errs, &CutShortError{Owner: owner, Repo: repo, Reason: reason, Deferred: append([]int(nil), left...), Err: cause})...)
}

func (h *Handler) allow(essential bool) (string, bool) {
	if h.Budget == nil {
		return "", true
	}
	return h.Budget.Allow(essential)
}

// work is what a repository's pass looks at: the threads in the order it
// takes them, what the listings say of each, and those it reads whatever
// the listings say (left by the previous pass).
type work struct {
	order    []int
	listed   map[int]listed
	forced   map[int]bool
	commands map[int]bool // threads whose recent comments hold a command
}

func (h *Handler) reconcileWork(ctx context.Context, gh GitHub, owner, repo string, start time.Time) (work, error) {
	issues, err := gh.ListOpenIssues(ctx, owner, repo, LabelPending)
	if err != nil {
		return work{}, fmt.Errorf("listing the pending issues of %s/%s: %w", owner, repo, err)
	}
	recent, err := gh.ListRepoComments(ctx, owner, repo, h.Watermarks.since(owner, repo, start, cmp.Or(max(h.ReconcileWindow, 0), 24*time.Hour)))
	if err != nil {
		return work{}, fmt.Errorf("listing the recent comments of %s/%s: %w", owner, repo, err)
	}
	return planWork(issues, recent, h.Memo.takeDeferred(owner, repo)), nil
}

// planWork is a pass's work from the pending issues, the recent comments
// and the threads the previous pass left (deferred).
func planWork(issues []ghclient.Issue, recent []ghclient.Comment, deferred []int) work {
	w := work{listed: map[int]listed{}, forced: map[int]bool{}, commands: map[int]bool{}}
	for _, is := range issues {
		w.listed[is.Number] = listed{pending: true, count: is.Comments, labels: labelKey(is.Labels), labelList: is.Labels, title: is.Title}
	}
	for _, c := range recent {
		if c.Issue > 0 {
			in := w.listed[c.Issue]
			in.recent = append(in.recent, c)
			w.listed[c.Issue] = in
			w.commands[c.Issue] = w.commands[c.Issue] || len(command.Parse(c.Body)) > 0
		}
	}
	for _, n := range deferred {
		w.forced[n] = true
		if _, ok := w.listed[n]; !ok {
			w.listed[n] = listed{}
		}
	}
	w.order = slices.Collect(maps.Keys(w.listed))
	rank := func(n int) int {
		switch {
		case w.commands[n]:
			return 0
		case w.forced[n]:
			return 1
		}
		return 2
	}
	slices.SortFunc(w.order, func(a, b int) int { return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a, b)) })
	return w
}
