package decide

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/outcome"
)

// The phasegate/decisions status of a commit is a function of the commit,
// never of the event that computes it: the Phase Outcomes the commit's
// change carries, and the ledger of their issues. The change is the open
// pull request's whose head the commit is (the comparison of its base and
// the commit: the diff from the merge base, as its files are), else the diff from the merge base with the default branch,
// else, for a commit on the default branch, the commit's own diff. A push,
// a pull_request, a merge_group, a /resolve and a reconcile pass all call
// SyncCommit, so the order in which they run cannot change the answer.
// When the change cannot be determined, the status is error, never success.

// maxCommitOutcomes bounds the outcome files read for one commit.
const maxCommitOutcomes = 50

// CommitOptions are what a caller already knows about a commit.
type CommitOptions struct {
	// PR is the open pull request whose head the commit is, when the
	// caller read it (saves a lookup); nil, or without its base sha:
	// looked up.
	PR *ghclient.PR
	// DefaultBranch is the repository's default branch when the caller
	// knows it (the event payload); "": read.
	DefaultBranch string
	// TargetURL is the Details link when no phasegate comment decides the
	// status (the workflow run); a status about outcomes links the newest
	// phasegate comment of their issue. "": the pull request whose head
	// the commit is. Every status phasegate sets has a Details link.
	TargetURL string
}

// SyncCommit computes phasegate/decisions of commit sha and sets it (when
// it differs from what phasegate last set). It returns the status set.
func (h *Handler) SyncCommit(ctx context.Context, gh GitHub, owner, repo, sha string, opts CommitOptions) (ghclient.Status, error) {
	return h.syncCommit(ctx, gh, owner, repo, sha, opts, map[int]*thread{})
}

// syncCommit is SyncCommit, given the threads the caller folded already
// (its own, under its issue's lock).
//
// It runs under a lock on the commit (the Handler's Locker, so across
// replicas too): two handlers of different issues whose outcomes the
// commit carries would otherwise each compute the status from the ledgers
// they read, and the one that read the older ledger could write last,
// leaving "pending" over decided work. Every other thread is read inside
// the lock, and a caller's thread cannot change while its issue is locked
// (only phasegate writes a ledger, under that lock), so the last status
// written is computed from ledgers no older than any status before it.
func (h *Handler) syncCommit(ctx context.Context, gh GitHub, owner, repo, sha string, opts CommitOptions, threads map[int]*thread) (ghclient.Status, error) {
	unlock, err := h.locks().Lock(ctx, "commit:"+strings.ToLower(owner+"/"+repo+"@"+sha))
	if err != nil {
		return ghclient.Status{}, fmt.Errorf("locking commit %s of %s/%s: %w", outcome.ShortSHA(sha), owner, repo, err)
	}
	defer unlock()
	// Their status histories were read before the lock: another handler
	// may have set the commit's status since.
	before := maps.Clone(threads)
	rc, err := h.repoConfig(ctx, gh, owner, repo)
	if err != nil {
		return ghclient.Status{}, err
	}
	identity := cmp.Or(h.Identity, rc.cfg.IdentityOrDefault())
	s := ghclient.Status{Context: ContextDecisions, TargetURL: opts.TargetURL}
	carried, pr, err := h.carried(ctx, gh, owner, repo, sha, opts)
	if s.TargetURL == "" && pr != nil {
		s.TargetURL = pr.HTMLURL
	}
	if err != nil {
		s.State, s.Description = "error", "could not determine the Phase Outcomes this change carries: "+oneLine(err.Error())
		_, err := h.setStatus(ctx, gh, owner, repo, sha, identity, s, nil)
		return s, err
	}
	if opts.PR != nil && opts.PR.State == "open" && len(carried) > 0 {
		// Who pushed its head, so that a /resolve on it reads nothing
		// more (serve syncs when a pull request moves); errors are left to
		// the /resolve.
		_, _, _ = h.refPushers(ctx, gh, owner, repo, *opts.PR)
	}
	outcomes, frozen, firstIssue, err := h.threadsOf(ctx, gh, owner, repo, carried, threads)
	if err != nil {
		return s, err
	}
	current, stale, err := h.unstaled(ctx, gh, owner, repo, rc.cfg, outcomes, sha)
	if err != nil {
		s.State, s.Description = "error", "could not tell whether a push made a resolution stale: "+oneLine(err.Error())
		_, err2 := h.setStatus(ctx, gh, owner, repo, sha, identity, s, nil)
		return s, errors.Join(err, err2)
	}
	v := verdict(len(carried), current, rc.cfg, rc.invalid, frozen, stale)
	s.State, s.Description = v.State, v.Description
	return h.publish(ctx, gh, owner, repo, sha, identity, s, threads[firstIssue], threads, before)
}

// unstaled is unstale with the comparisons it needs read: outcomes with
// each resolution a push made stale at sha undone, and the description of
// the first stale one.
func (h *Handler) unstaled(ctx context.Context, gh GitHub, owner, repo string, cfg config.Config, outcomes []*ledger.Outcome, sha string) ([]*ledger.Outcome, string, error) {
	fs, current, stale := facts{}, outcomes, ""
	err := h.settle(ctx, gh, owner, repo, fs, func() (n *need, err error) {
		current, stale, n, err = unstale(cfg, outcomes, sha, fs)
		return n, err
	})
	return current, stale, err
}

// verdict is phasegate/decisions of a commit from what was read for it:
// how many outcomes its change carries, as their ledgers record them with
// stale resolutions undone (unstale, whose first description is stale),
// the first tampering on their threads, and the configuration.
func verdict(carried int, outcomes []*ledger.Outcome, cfg config.Config, invalid, frozen, stale string) ledger.Verdict {
	v := ledger.Decisions(outcomes, cfg.Decisions.NegativeOptions)
	if v.State == "pending" && stale != "" {
		v.Description = stale
	}
	switch {
	case carried == 0:
		v = ledger.Verdict{State: "success", Description: "no Phase Outcome in this change"}
	case frozen != "":
		v = ledger.Verdict{State: "failure", Description: frozen}
	}
	if invalid != "" {
		v = ledger.Verdict{State: "error", Description: "phasegate config invalid: " + invalid}
	}
	return v
}

// threadsOf folds the issue of each carried outcome (once per issue, kept
// in threads) and returns the outcomes as their ledgers record them (an
// outcome not posted yet has nothing resolved), the first tampering found
// and the first issue.
func (h *Handler) threadsOf(ctx context.Context, gh GitHub, owner, repo string, carried []carriedOutcome, threads map[int]*thread) (
	outcomes []*ledger.Outcome, frozen string, firstIssue int, err error) {
	for _, c := range carried {
		issue := c.issue
		var on *ledger.Outcome
		if issue > 0 {
			t := threads[issue]
			if t == nil {
				t, err = h.load(ctx, gh, owner, repo, issue, nil, nil)
				switch {
				case ghclient.IsNotFound(err):
					// No such issue: the outcome cannot be posted (the
					// check says why), so nothing resolved it.
					outcomes = append(outcomes, unposted(c))
					continue
				case err != nil:
					return nil, "", 0, err
				}
				threads[issue] = t
			}
			if firstIssue == 0 {
				firstIssue = issue
			}
			on = t.st.Outcome(c.id)
			if t.st.Frozen() && frozen == "" {
				frozen = fmt.Sprintf("tampering on #%d (comment %d): %s", issue, t.st.Tampered[0].CommentID, t.st.Tampered[0].Reason)
			}
		}
		if on == nil { // not posted (yet): nothing resolved it
			on = unposted(c)
		}
		outcomes = append(outcomes, on)
	}
	return outcomes, frozen, firstIssue, nil
}

// unposted is a carried outcome that is not on its thread: none of its
// decisions is resolved.
func unposted(c carriedOutcome) *ledger.Outcome {
	on := &ledger.Outcome{ID: c.id, Outcome: c.o}
	for _, d := range c.o.Decisions {
		on.Decisions = append(on.Decisions, &ledger.Decision{Decision: d})
	}
	return on
}

// publish sets s on sha, linking the newest phasegate comment of the first
// thread (the anchor), records it in the threads' histories and returns it.
// The statuses of a thread read before the commit was locked (before) may
// say to write, never to skip the write: then the newest is read again.
func (h *Handler) publish(ctx context.Context, gh GitHub, owner, repo, sha, identity string, s ghclient.Status, first *thread, threads map[int]*thread,
	before map[int]*thread) (ghclient.Status, error) {
	var history []ghclient.Status
	if first != nil {
		if c, ok := first.comment(first.st.Tip); ok {
			s.TargetURL = h.commentLink(owner, repo, first.issue, c)
			if first.fresh[c.ID] {
				history = []ghclient.Status{} // posted by this run: no status points at it yet
			}
		}
	}
	for n, t := range threads {
		hs, ok := t.history[sha]
		if !ok {
			continue
		}
		// Never nil: a history read with no such status says there is none.
		hs = slices.DeleteFunc(append([]ghclient.Status{}, hs...), func(s ghclient.Status) bool { return s.Context != ContextDecisions })
		if before[n] != nil && len(hs) > 0 && sameStatus(hs[0], s, identity) {
			continue
		}
		history = hs
	}
	wrote, err := h.setStatus(ctx, gh, owner, repo, sha, identity, s, history)
	if wrote {
		for _, t := range threads {
			t.wrote(sha, s)
		}
	}
	return s, err
}

// carriedOutcome is a Phase Outcome file of a change, read at its commit,
// and the issue it goes to (outcome.IssueOf; 0: none).
type carriedOutcome struct {
	id    string
	o     *outcome.Outcome
	issue int
}

// carried reads the Phase Outcomes the commit's change adds or modifies,
// and the pull request whose head it is (nil for none).
func (h *Handler) carried(ctx context.Context, gh GitHub, owner, repo, sha string, opts CommitOptions) ([]carriedOutcome, *ghclient.PR, error) {
	files, pr, err := h.change(ctx, gh, owner, repo, sha, opts)
	if err != nil {
		return nil, pr, err
	}
	number := 0
	if pr != nil {
		number = pr.Number
	}
	var names []string
	for name, status := range files {
		if status == "removed" {
			continue
		}
		k, ext := artifact.ClassifyPath(name), strings.ToLower(path.Ext(name))
		if (k != nil && k.ID == "outcome.phase-outcome") || (k == nil && (ext == ".yaml" || ext == ".yml")) { // unclassified: maybe an outcome by content
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if len(names) > maxCommitOutcomes {
		return nil, pr, fmt.Errorf("the change has more than %d candidate outcome files", maxCommitOutcomes)
	}
	kind := artifact.KindByID("outcome.phase-outcome")
	var out []carriedOutcome
	for _, name := range names {
		data, found, err := h.content(ctx, gh, owner, repo, name, sha)
		if err != nil {
			return nil, pr, fmt.Errorf("reading %s at %s: %w", name, outcome.ShortSHA(sha), err)
		}
		if !found || (artifact.ClassifyPath(name) == nil && artifact.Sniff(name, data) != kind) {
			continue
		}
		id, o, value := outcomeOf(name, data)
		if id == "" {
			continue // the check reports why
		}
		issue, _ := outcome.IssueOf(value, number)
		out = append(out, carriedOutcome{id: id, o: o, issue: issue})
	}
	return out, pr, nil
}

// change is the files of the commit's change and the pull request whose
// head the commit is. A pull request's change is the comparison of its
// base and sha, bound to sha: GitHub lists a pull request's files at its
// head as it is now, and a push after the pull request was read would make
// sha's status judge the next head's change.
func (h *Handler) change(ctx context.Context, gh GitHub, owner, repo, sha string, opts CommitOptions) (map[string]string, *ghclient.PR, error) {
	pr := opts.PR
	if pr == nil || pr.BaseSHA == "" { // a caller's pull request without its base (an event that names none) is read again
		pr = nil
		prs, err := gh.PullRequestsForCommit(ctx, owner, repo, sha)
		if err != nil {
			return nil, nil, fmt.Errorf("finding the pull request of %s: %w", outcome.ShortSHA(sha), err)
		}
		sort.Slice(prs, func(i, j int) bool { return prs[i].Number < prs[j].Number })
		if i := slices.IndexFunc(prs, func(p ghclient.PR) bool { return p.State == "open" && p.HeadSHA == sha }); i >= 0 {
			pr = &prs[i]
		}
	}
	if pr != nil {
		if pr.BaseSHA == "" {
			return nil, pr, fmt.Errorf("pull request #%d names no base commit", pr.Number)
		}
		cmp, err := h.compare(ctx, gh, owner, repo, pr.BaseSHA, sha)
		if err != nil {
			return nil, pr, fmt.Errorf("listing the change of pull request #%d at %s: %w", pr.Number, outcome.ShortSHA(sha), err)
		}
		return cmp.Files, pr, nil
	}
	branch := opts.DefaultBranch
	if branch == "" {
		b, err := gh.DefaultBranch(ctx, owner, repo)
		if err != nil {
			return nil, nil, fmt.Errorf("reading the default branch: %w", err)
		}
		branch = b
	}
	cmp, err := gh.CompareWhole(ctx, owner, repo, branch, sha, h.TreeLimits) // not h.compare: a branch moves
	if err != nil {
		return nil, nil, fmt.Errorf("comparing %s with %s: %w", outcome.ShortSHA(sha), branch, err)
	}
	if cmp.Status == "identical" || cmp.Status == "behind" { // sha is on the branch: its own change
		if cmp.Files, err = gh.CommitFiles(ctx, owner, repo, sha); err != nil {
			return nil, nil, fmt.Errorf("listing the files of %s: %w", outcome.ShortSHA(sha), err)
		}
	}
	return cmp.Files, nil, nil
}

// content reads a file at a commit, once per process: a commit's content
// never changes.
func (h *Handler) content(ctx context.Context, gh GitHub, owner, repo, name, sha string) ([]byte, bool, error) {
	key := "file:" + strings.ToLower(owner+"/"+repo) + "@" + sha + ":" + name
	if v, ok := h.cached(key); ok {
		data := v.([]byte)
		return data, data != nil, nil
	}
	data, found, err := gh.FileContent(ctx, owner, repo, name, sha)
	if err != nil {
		return nil, false, err
	}
	if !found {
		data = nil
	}
	h.cache(key, data)
	return data, found, nil
}

// readCache holds immutable reads (a file at a commit, a pull request's
// files for a head and base) for the life of the process, bounded.
type readCache struct {
	mu sync.Mutex
	m  map[string]any
}

const maxCached = 4096

func (h *Handler) cached(key string) (any, bool) {
	h.reads.mu.Lock()
	defer h.reads.mu.Unlock()
	v, ok := h.reads.m[key]
	return v, ok
}

func (h *Handler) cache(key string, v any) {
	h.reads.mu.Lock()
	defer h.reads.mu.Unlock()
	// Equivalent mutant (>= → >): a bound one entry higher only changes how much memory the cache may hold, never a read's result.
	if h.reads.m == nil || len(h.reads.m) >= maxCached {
		h.reads.m = map[string]any{}
	}
	h.reads.m[key] = v
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
