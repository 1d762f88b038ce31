// Package ledger folds an issue's comments into its state (design §8): the
// issue thread is the database. A phasegate comment counts only when its
// author is the configured phasegate identity and its body still verifies
// (it hashes to its marker's id, and its signature verifies when a signing
// key is configured); an edited phasegate comment is reported as tampering,
// and anyone else's marker is ignored. The fold is pure and deterministic:
// the same comments always give the same state, and folding a prefix then the
// rest gives what folding all does.
package ledger

import (
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/phasegate/phasegate/internal/outcome"
)

// Comment is one issue comment, as the fold needs it.
type Comment struct {
	ID        int64
	Author    string
	Body      string
	CreatedAt time.Time
}

// Options of a fold.
type Options struct {
	// Identity is the login phasegate comments as (e.g. github-actions[bot]
	// in the action, <app-slug>[bot] for the App). Compared case-insensitively.
	Identity string
	// Key is the signing key; empty when none is configured.
	Key []byte
}

// State is what an issue's comments record.
type State struct {
	// Outcomes are the trusted outcome comments, oldest first. An outcome
	// posted twice (same id) is listed once, at its first comment.
	Outcomes []*Outcome
	// Tampered are phasegate comments that no longer verify.
	Tampered []Tamper
	// Ignored are resolutions that did not count (a later resolution of a
	// decision already resolved, or one naming an unknown outcome, decision
	// or option).
	Ignored []Ignored
}

// Outcome is a trusted outcome on the issue and the state of its decisions.
type Outcome struct {
	CommentID int64
	ID        string
	Outcome   *outcome.Outcome
	Source    string
	Commit    string
	PR        int
	Decisions []*Decision
}

// Decision is a decision of an outcome and its resolution, if any.
type Decision struct {
	outcome.Decision
	// Resolution is the first valid resolution; nil while unresolved.
	Resolution *outcome.Resolution
	// ResolutionComment is the id of the resolution comment.
	ResolutionComment int64
}

// Tamper is an edited phasegate comment.
type Tamper struct {
	CommentID int64
	Kind      outcome.Kind
	Reason    string
}

// Ignored is a resolution comment that did not count, and why.
type Ignored struct {
	CommentID int64
	Reason    string
}

// Fold folds comments (in any order: they are sorted by creation time, then
// id, and a comment listed twice counts once) into the state.
func Fold(comments []Comment, opts Options) *State {
	cs := append([]Comment(nil), comments...)
	sort.SliceStable(cs, func(i, j int) bool {
		if !cs[i].CreatedAt.Equal(cs[j].CreatedAt) {
			return cs[i].CreatedAt.Before(cs[j].CreatedAt)
		}
		return cs[i].ID < cs[j].ID
	})
	l := New(opts)
	for _, c := range cs {
		l.Add(c)
	}
	return l.State()
}

// Ledger folds comments one at a time, in thread order. Folding a prefix of
// a thread and then the rest gives the state folding it all at once does.
type Ledger struct {
	opts Options
	st   State
	byID map[string]*Outcome
	seen map[int64]bool
}

// New starts an empty ledger.
func New(opts Options) *Ledger {
	return &Ledger{opts: opts, byID: map[string]*Outcome{}, seen: map[int64]bool{}}
}

// State is the state so far. It shares memory with the ledger: adding more
// comments updates it.
func (l *Ledger) State() *State { return &l.st }

// Add folds the next comment of the thread.
func (l *Ledger) Add(c Comment) {
	if l.seen[c.ID] {
		return
	}
	l.seen[c.ID] = true
	st := &l.st
	if l.opts.Identity == "" || !strings.EqualFold(c.Author, l.opts.Identity) {
		return // anyone else's marker is not phasegate's (design §8)
	}
	marks := outcome.ParseMarkers(c.Body)
	kind := outcome.KindOutcome
	if len(marks) > 0 {
		kind = marks[0].Kind
	}
	switch kind {
	case outcome.KindOutcome:
		v, err := outcome.VerifyOutcomeComment(c.Body, l.opts.Key)
		if err != nil {
			if len(marks) > 0 || errors.Is(err, outcome.ErrTampered) {
				st.noteTamper(c, outcome.KindOutcome, err)
				return
			}
			// Not an outcome comment: maybe a resolution whose marker broke.
			if _, rerr := outcome.VerifyResolutionComment(c.Body, l.opts.Key); rerr != nil {
				st.noteTamper(c, outcome.KindResolution, rerr)
			}
			return
		}
		if l.byID[v.ID] != nil {
			return
		}
		o := &Outcome{CommentID: c.ID, ID: v.ID, Outcome: v.Outcome, Source: v.Source, Commit: v.Commit, PR: v.PR}
		for _, d := range v.Outcome.Decisions {
			o.Decisions = append(o.Decisions, &Decision{Decision: d})
		}
		l.byID[v.ID] = o
		st.Outcomes = append(st.Outcomes, o)
	case outcome.KindResolution:
		r, err := outcome.VerifyResolutionComment(c.Body, l.opts.Key)
		if err != nil {
			st.noteTamper(c, outcome.KindResolution, err)
			return
		}
		st.apply(c.ID, l.byID, r.Resolution)
	}
}

func (st *State) noteTamper(c Comment, k outcome.Kind, err error) {
	var te *outcome.TamperError
	if errors.As(err, &te) {
		st.Tampered = append(st.Tampered, Tamper{CommentID: c.ID, Kind: k, Reason: te.Reason})
	}
}

// apply records a resolution when it is the first valid one of its decision.
func (st *State) apply(commentID int64, byID map[string]*Outcome, r outcome.Resolution) {
	o := byID[r.Outcome]
	if o == nil {
		st.Ignored = append(st.Ignored, Ignored{commentID, "it names an outcome that is not (yet) on this issue"})
		return
	}
	d := o.Decision(r.Decision)
	switch {
	case d == nil:
		st.Ignored = append(st.Ignored, Ignored{commentID, "its outcome has no decision " + r.Decision})
	case !d.HasOption(r.Option):
		st.Ignored = append(st.Ignored, Ignored{commentID, "option " + r.Option + " is not one of the decision's options"})
	case d.Resolution != nil:
		st.Ignored = append(st.Ignored, Ignored{commentID, "the decision was already resolved"})
	default:
		rr := r
		d.Resolution, d.ResolutionComment = &rr, commentID
	}
}

// Decision returns the outcome's decision with that id (case-insensitive), or nil.
func (o *Outcome) Decision(id string) *Decision {
	for _, d := range o.Decisions {
		if strings.EqualFold(d.ID, id) {
			return d
		}
	}
	return nil
}

// HasOption reports whether option is one of the decision's options
// (case-insensitive).
func (d *Decision) HasOption(option string) bool {
	for _, o := range d.Options {
		if strings.EqualFold(o, option) {
			return true
		}
	}
	return false
}

// Outcome returns the trusted outcome with that id, or nil.
func (st *State) Outcome(id string) *Outcome {
	for _, o := range st.Outcomes {
		if o.ID == id {
			return o
		}
	}
	return nil
}

// DefaultNegative are the options that resolve a decision negatively.
var DefaultNegative = []string{"reject", "request-changes"}

// Verdict of a set of outcomes' blocking decisions, for phasegate/decisions.
type Verdict struct {
	// State is "success", "pending" or "failure".
	State string
	// Description says why, for the commit status.
	Description string
}

// Decisions is the phasegate/decisions verdict over the blocking decisions
// of the given outcomes: failure when one was resolved negatively (an
// option in negative), pending while one is unresolved, success otherwise.
func Decisions(outcomes []*Outcome, negative []string) Verdict {
	if negative == nil {
		negative = DefaultNegative
	}
	var pending, rejected []string
	for _, o := range outcomes {
		for _, d := range o.Decisions {
			if !d.Blocking {
				continue
			}
			switch {
			case d.Resolution == nil:
				pending = append(pending, d.ID)
			case containsFold(negative, d.Resolution.Option):
				rejected = append(rejected, d.ID+" → "+d.Resolution.Option)
			}
		}
	}
	switch {
	case len(rejected) > 0:
		return Verdict{"failure", "resolved negatively: " + strings.Join(rejected, ", ")}
	case len(pending) > 0:
		return Verdict{"pending", "waiting for " + strings.Join(pending, ", ") + " (comment /resolve <ID> <option>)"}
	}
	return Verdict{"success", "all blocking decisions resolved"}
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
