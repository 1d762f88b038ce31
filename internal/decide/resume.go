package decide

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/notify"
)

// A resolution must move the agent pipeline that waits for it. Labels set
// with a workflow's GITHUB_TOKEN start no workflow, so after each
// resolution phasegate sends a repository_dispatch (phasegate.resolved, and
// phasegate.phase-advanced when the resolution moved the phase), and, for
// orchestrators outside GitHub, the same event to the operator's notify URL
// (serve). Exactly once per resolution, across reruns and replicas: the
// ledger says what was sent — phasegate reacts 🚀 to its own resolution
// comment once the dispatch is out, and ❤️ once the notify URL took it. A
// reaction is always its author's, so nobody else's 🚀 can suppress an event.
// A crash between sending and reacting sends again on the next pass: event
// ids (notify.EventID) let receivers drop the repeat.

// Notifier sends events to an operator-configured URL (serve's
// PHASEGATE_NOTIFY_URL; internal/notify/webhook.Sender).
type Notifier interface {
	Notify(ctx context.Context, ev notify.Event) error
}

// Reactions that record what was sent.
const (
	reactDispatched = "rocket"
	reactNotified   = "heart"
)

// deniedFor is how long a repository whose token may not dispatch is left
// alone before the next try.
const deniedFor = 10 * time.Minute

// resume sends the events of every resolution on the thread that has not
// been sent yet.
func (h *Handler) resume(ctx context.Context, gh GitHub, t *thread) error {
	if t.st.Frozen() || t.cfgInvalid != "" {
		return nil
	}
	dispatch := t.cfg.Decisions.DispatchOrDefault()
	if !dispatch && h.Notifier == nil {
		return nil
	}
	for _, o := range t.st.Outcomes {
		for _, d := range o.Decisions {
			if d.Resolution == nil || d.ResolutionComment == 0 {
				continue
			}
			c, ok := t.comment(d.ResolutionComment)
			if !ok {
				continue
			}
			if err := h.resumeOne(ctx, gh, t, o, d, c, dispatch); err != nil {
				return err
			}
		}
	}
	return nil
}

func (h *Handler) resumeOne(ctx context.Context, gh GitHub, t *thread, o *ledger.Outcome, d *ledger.Decision, c ghclient.Comment, dispatch bool) error {
	log := h.logger().With("repository", t.owner+"/"+t.repo, "issue", t.issue, "decision", d.ID)
	build := sync.OnceValues(func() ([]notify.Event, error) {
		src := notify.Source{Repository: t.owner + "/" + t.repo, Issue: t.issue, State: t.st, Outcome: o, Decision: d,
			CommentURL: c.HTMLURL, Negative: t.cfg.Decisions.NegativeOptions}
		ev, err := notify.Resolved(src)
		if err != nil {
			return nil, err
		}
		events := []notify.Event{ev}
		if prev, ok := advancedFrom(t, o, d); ok {
			if adv, err := notify.PhaseAdvanced(src, prev); err == nil {
				events = append(events, adv)
			}
		}
		return events, nil
	})
	at, denied := h.noDispatch.Load(strings.ToLower(t.owner + "/" + t.repo))
	if dispatch && !(denied && h.now().Sub(at.(time.Time)) < deniedFor) {
		err := h.sendOnce(ctx, gh, t, c, reactDispatched, build, func(ev notify.Event) error {
			err := gh.RepositoryDispatch(ctx, t.owner, t.repo, ev.Event, ev)
			if err == nil {
				log.Info("dispatched", "event", ev.Event, "id", ev.ID)
			}
			return err
		})
		switch {
		case ghclient.IsPermissionDenied(err):
			h.noDispatch.Store(strings.ToLower(t.owner+"/"+t.repo), h.now())
			t.dispatchDenied = true
			log.Warn("repository_dispatch skipped: the token may not dispatch (it needs contents: write); the pipeline is not told", "error", err)
		case err != nil:
			return fmt.Errorf("dispatching the events of %s on %s/%s#%d: %w", d.ID, t.owner, t.repo, t.issue, err)
		}
	}
	if h.Notifier != nil {
		if err := h.sendOnce(ctx, gh, t, c, reactNotified, build, func(ev notify.Event) error { return h.Notifier.Notify(ctx, ev) }); err != nil {
			return fmt.Errorf("notifying the events of %s: %w", d.ID, err)
		}
	}
	return nil
}

// sendOnce sends the events of resolution comment c with send, unless
// phasegate's reaction content on c says they were sent, and then records
// them sent with that reaction.
func (h *Handler) sendOnce(ctx context.Context, gh GitHub, t *thread, c ghclient.Comment, content string,
	build func() ([]notify.Event, error), send func(notify.Event) error) error {
	sent, err := h.reactedBy(ctx, gh, t, c, content)
	if err != nil || sent {
		return err
	}
	evs, err := build()
	if err != nil {
		return fmt.Errorf("building the events: %w", err)
	}
	for _, ev := range evs {
		if err := send(ev); err != nil {
			return fmt.Errorf("sending %s: %w", ev.Event, err)
		}
	}
	if err := gh.CreateCommentReaction(ctx, t.owner, t.repo, c.ID, content); err != nil {
		return fmt.Errorf("recording what was sent: %w", err)
	}
	h.sent.Store(sentKey(t, c.ID, content), true)
	return nil
}

// advancedFrom reports whether resolving d moved the issue's phase, and
// from which: an approval of the newest outcome resolved approve with
// nothing blocking left, in a phase that has a next one.
func advancedFrom(t *thread, o *ledger.Outcome, d *ledger.Decision) (string, bool) {
	if len(t.st.Outcomes) == 0 || t.st.Outcomes[len(t.st.Outcomes)-1] != o {
		return "", false
	}
	if !strings.EqualFold(d.Type, "approval") || !strings.EqualFold(d.Resolution.Option, "approve") || o.UnresolvedBlocking() {
		return "", false
	}
	phases := t.cfg.PhasesOrDefault()
	i := phases.Index(o.Outcome.Phase)
	if i < 0 || i+1 >= len(phases.Sequence) {
		return "", false
	}
	return strings.ToLower(phases.Sequence[i]), true
}

// reactedBy reports whether phasegate's identity reacted content to c: the
// listing's rollup says whether anyone did; only then are the reactors read.
func (h *Handler) reactedBy(ctx context.Context, gh GitHub, t *thread, c ghclient.Comment, content string) (bool, error) {
	if _, ok := h.sent.Load(sentKey(t, c.ID, content)); ok {
		return true, nil
	}
	if c.Reactions[content] == 0 {
		return false, nil
	}
	who, err := gh.CommentReactors(ctx, t.owner, t.repo, c.ID, content)
	if err != nil {
		return false, fmt.Errorf("reading the reactions to comment %d: %w", c.ID, err)
	}
	if !containsFold(who, t.cfg.IdentityOrDefault()) {
		return false, nil
	}
	h.sent.Store(sentKey(t, c.ID, content), true)
	return true, nil
}

func sentKey(t *thread, comment int64, content string) string {
	return fmt.Sprintf("%s/%s:%d:%s", strings.ToLower(t.owner), strings.ToLower(t.repo), comment, content)
}
