package decide

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/outcome"
)

// Labels and statuses phasegate manages (docs/contracts/README.md).
const (
	LabelPending     = "phasegate:pending"
	LabelCaptured    = "phasegate:captured"
	labelPhasePrefix = "phase:"
	// ContextDecisions is the commit status of decisions.
	ContextDecisions = "phasegate/decisions"
)

// advance brings labels and statuses in line with the thread (docs/contracts/outcome.md).
//
// phasegate:pending is the reconcile loop's work list, so it comes off
// last: a replica that dies between two steps leaves the issue labelled,
// and the next reconcile pass finishes the labels and the statuses.
//
// A frozen (tampered) thread keeps its labels as they are: tampering never
// moves a decision's state; only phasegate/decisions turns failure.
func (h *Handler) advance(ctx context.Context, gh GitHub, t *thread) error {
	if t.st.Frozen() {
		return h.syncStatuses(ctx, gh, t)
	}
	have := t.labels
	t.labels = nil // after this pass's changes, the event's list is stale
	if have == nil {
		var err error
		if have, err = gh.ListLabels(ctx, t.owner, t.repo, t.issue); err != nil {
			return fmt.Errorf("reading the labels of %s/%s#%d: %w", t.owner, t.repo, t.issue, err)
		}
	}
	p := planLabels(have, t.st)
	if len(p.add) > 0 {
		if err := gh.AddLabels(ctx, t.owner, t.repo, t.issue, p.add); err != nil {
			return fmt.Errorf("labelling %s/%s#%d: %w", t.owner, t.repo, t.issue, err)
		}
	}
	if err := h.unlabel(ctx, gh, t, p.remove); err != nil {
		return err
	}
	if err := h.syncStatuses(ctx, gh, t); err != nil {
		return err
	}
	if err := h.unlabel(ctx, gh, t, p.unpend); err != nil {
		return err
	}
	t.labelsAfter = p.after
	return h.resume(ctx, gh, t)
}

func (h *Handler) unlabel(ctx context.Context, gh GitHub, t *thread, labels []string) error {
	for _, l := range labels {
		if err := gh.RemoveLabel(ctx, t.owner, t.repo, t.issue, l); err != nil {
			return fmt.Errorf("unlabelling %s/%s#%d: %w", t.owner, t.repo, t.issue, err)
		}
	}
	return nil
}

// labelPlan is how an issue's labels follow its thread: the labels to add,
// to remove before the statuses are set and after them (unpend), and the
// labels the issue has then.
type labelPlan struct{ add, remove, unpend, after []string }

// planLabels: phasegate:pending exactly while the latest outcome of a phase
// has an unresolved blocking decision (it comes off after the statuses);
// phase:<name> moves to the next phase of the sequence when an approval
// resolved approve and nothing blocking remains in its outcome.
func planLabels(have []string, st *ledger.State) labelPlan {
	var p labelPlan
	pending, phase := st.Pending(), st.Phase
	if pending && !containsFold(have, LabelPending) {
		p.add = append(p.add, LabelPending)
	}
	if phase != "" && !containsFold(have, labelPhasePrefix+phase) {
		p.add = append(p.add, labelPhasePrefix+phase)
	}
	p.after = append(append([]string{}, have...), p.add...)
	for _, l := range have {
		lower := strings.ToLower(l)
		switch {
		case phase != "" && strings.HasPrefix(lower, labelPhasePrefix) && lower != labelPhasePrefix+phase:
			p.remove = append(p.remove, l)
		case !pending && strings.EqualFold(l, LabelPending):
			p.unpend = append(p.unpend, l)
		default:
			continue
		}
		p.after = slices.DeleteFunc(p.after, func(x string) bool { return strings.EqualFold(x, l) })
	}
	return p
}

// syncStatuses recomputes phasegate/decisions on the head commit of every
// open pull request that carries an outcome of this issue (the marker's
// pr=), and on the commits that added outcomes pushed without one, as a
// function of that commit (SyncCommit); then anchors the newest phasegate
// comment on every commit the outcomes name (anchorTip). Each status's
// target URL is the newest phasegate comment of the thread: the Details
// link, and the anchor that shows a deleted newest comment.
func (h *Handler) syncStatuses(ctx context.Context, gh GitHub, t *thread) error {
	type head struct {
		sha, name string
		opts      CommitOptions
	}
	var heads []head
	for _, n := range slices.Sorted(maps.Keys(t.prs)) {
		if pr := t.prs[n]; isHead(pr) {
			heads = append(heads, head{pr.HeadSHA, fmt.Sprintf("pull request #%d", n), CommitOptions{PR: &pr}})
		}
	}
	for _, sha := range t.pushed {
		heads = append(heads, head{sha, outcome.ShortSHA(sha), CommitOptions{}})
	}
	if t.synced == nil {
		t.synced = map[string]ghclient.Status{}
	}
	for _, hd := range heads {
		st, err := h.syncCommit(ctx, gh, t.owner, t.repo, hd.sha, hd.opts, map[int]*thread{t.issue: t})
		if err != nil {
			return fmt.Errorf("setting %s on %s: %w", ContextDecisions, hd.name, err)
		}
		t.synced[hd.sha] = st
	}
	return h.anchorTip(ctx, gh, t)
}

// setStatus sets s on sha unless the newest status of its context already
// says the same and identity set it: a re-fold of an unchanged issue writes
// nothing, and a long-open pull request does not pile up statuses (GitHub
// keeps at most 1,000 per context and commit). A status someone else set is
// always overwritten. history is the context's statuses when the caller
// read them already, or knows there is none like s (an empty list); nil:
// read the newest. When the read fails, it writes. It reports whether it
// wrote.
func (h *Handler) setStatus(ctx context.Context, gh GitHub, owner, repo, sha, identity string, s ghclient.Status, history []ghclient.Status) (bool, error) {
	if history == nil {
		if cur, found, err := h.latestRecord(ctx, gh, owner, repo, sha, s.Context); err == nil && found {
			history = []ghclient.Status{cur}
		}
	}
	if len(history) > 0 && sameStatus(history[0], s, identity) {
		return false, nil
	}
	err := h.writeRecord(ctx, gh, owner, repo, sha, s)
	return err == nil, err
}

// sameStatus reports whether cur, a status GitHub holds, is s as identity
// set it: then s need not be written again.
func sameStatus(cur, s ghclient.Status, identity string) bool {
	return identity != "" && strings.EqualFold(cur.Creator, identity) && cur.State == s.State &&
		cur.Description == ghclient.StatusDescription(s.Description) && cur.TargetURL == s.TargetURL
}

// capture opens the follow-up issue of a capture-out-of-scope decision
// (docs/contracts/outcome.md), or finds the one an earlier, interrupted attempt opened (its
// body carries a hidden marker naming the outcome and decision).
func (h *Handler) capture(ctx context.Context, gh GitHub, t *thread, tg *target, c Comment) (int, error) {
	d := tg.decision
	fields := fmt.Sprintf("outcome=%s decision=%s issue=%d", tg.outcome.ID, d.ID, t.issue)
	// Signed when a key is set, like every phasegate marker: with the
	// author check below, nobody else's issue is taken for the capture.
	mark := fmt.Sprintf("<!-- phasegate:captured v1 %s sig=%s -->", fields, outcome.SignText(h.Key, "phasegate:captured v1\n"+fields))
	existing, err := gh.ListOpenIssues(ctx, t.owner, t.repo, LabelCaptured)
	if err != nil {
		return 0, fmt.Errorf("listing captured issues of %s/%s: %w", t.owner, t.repo, err)
	}
	for _, is := range existing {
		// Only an issue phasegate itself opened counts: anyone who can
		// open issues could pre-create one carrying the marker.
		if strings.Contains(is.Body, mark) && strings.EqualFold(is.Author, t.cfg.IdentityOrDefault()) {
			return is.Number, nil
		}
	}
	f := findingFor(tg.outcome.Outcome, d)
	title := d.Question
	reasoning := ""
	if f != nil {
		title, reasoning = f.Title, f.Reasoning
	}
	title = strings.Join(strings.Fields(title), " ")
	if len([]rune(title)) > 200 {
		title = string([]rune(title)[:200]) + "…"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Captured from #%d: out of scope for %s (%s, decision `%s`), resolved `capture` by %s.\n\n",
		t.issue, outcome.Inline(tg.outcome.Outcome.Feature), outcome.Inline(tg.outcome.Outcome.Phase), outcome.Inline(d.ID), mention(c.Author))
	if reasoning != "" {
		fmt.Fprintf(&b, "> %s\n\n", outcome.Inline(reasoning))
	}
	b.WriteString(mark)
	n, _, err := gh.CreateIssue(ctx, t.owner, t.repo, outcome.Inline(title), b.String(), []string{LabelCaptured})
	if err != nil {
		return 0, fmt.Errorf("opening the captured issue for %s on %s/%s: %w", d.ID, t.owner, t.repo, err)
	}
	return n, nil
}

// findingFor is the finding a capture decision is about: the one whose title
// its question quotes, else the only out-of-scope finding.
func findingFor(o *outcome.Outcome, d *ledger.Decision) *outcome.Finding {
	var oos []*outcome.Finding
	for i := range o.Findings {
		f := &o.Findings[i]
		if f.Title != "" && strings.Contains(strings.ToLower(d.Question), strings.ToLower(f.Title)) {
			return f
		}
		if strings.EqualFold(f.Category, "out-of-scope") {
			oos = append(oos, f)
		}
	}
	if len(oos) == 1 {
		return oos[0]
	}
	return nil
}
