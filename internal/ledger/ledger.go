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
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/phasegate/phasegate/internal/command"
	"github.com/phasegate/phasegate/internal/config"
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
	// Phases is the phase sequence and its aliases, for State.Phase;
	// zero means config.DefaultPhases.
	Phases config.Phases
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
	// Unanswered are people's comments holding phasegate commands that no
	// resolution and no reply of phasegate's answers yet, oldest first:
	// what reconcile still has to apply.
	Unanswered []CommandComment
	// Phase is the phase the issue has reached (see Phase); "" when the
	// newest outcome's phase is not in the sequence.
	Phase string

	answered map[int64]bool
	pending  []CommandComment // commands seen, answered or not
	phases   config.Phases
}

// CommandComment is a person's comment that holds phasegate commands.
type CommandComment struct {
	Comment
	Commands []command.Command
}

// Answered reports whether a command comment was answered (a resolution
// names it, or phasegate replied to it).
func (st *State) Answered(commentID int64) bool { return st.answered[commentID] }

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
	l := &Ledger{opts: opts, byID: map[string]*Outcome{}, seen: map[int64]bool{}}
	l.st.phases = opts.Phases
	if len(l.st.phases.Sequence) == 0 {
		l.st.phases = config.DefaultPhases
	}
	l.st.answered = map[int64]bool{}
	return l
}

// ReplyMarker ends a reply of phasegate's to a command comment, so that the
// command is not answered twice.
func ReplyMarker(commandID int64) string {
	return fmt.Sprintf("<!-- phasegate:reply v1 command=%d -->", commandID)
}

var replyMarker = regexp.MustCompile(`<!-- phasegate:reply v1 command=([0-9]{1,19}) -->\s*$`)

func (st *State) answer(id int64) { st.answered[id] = true }

// refresh recomputes what derives from the fold so far.
func (st *State) refresh() {
	st.Unanswered = st.Unanswered[:0]
	for _, p := range st.pending {
		if !st.answered[p.ID] {
			st.Unanswered = append(st.Unanswered, p)
		}
	}
	st.Phase = st.phase()
}

// LatestPerPhase are the newest trusted outcomes of each phase, newest
// first: an older outcome of a phase is history once the skill ran again.
func (st *State) LatestPerPhase() []*Outcome {
	seen := map[string]bool{}
	var out []*Outcome
	for i := len(st.Outcomes) - 1; i >= 0; i-- {
		o := st.Outcomes[i]
		p := strings.ToLower(o.Outcome.Phase)
		if seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, o)
	}
	return out
}

// Pending reports whether the latest outcome of a phase has an unresolved
// blocking decision (the phasegate:pending label).
func (st *State) Pending() bool {
	for _, o := range st.LatestPerPhase() {
		if o.UnresolvedBlocking() {
			return true
		}
	}
	return false
}

// UnresolvedBlocking reports whether a blocking decision is unresolved.
func (o *Outcome) UnresolvedBlocking() bool {
	for _, d := range o.Decisions {
		if d.Blocking && d.Resolution == nil {
			return true
		}
	}
	return false
}

// phase is the phase the thread has reached (design §7): the phase of the
// newest outcome, moved on to the next phase of the sequence when its
// approval resolved approve and no blocking decision of it remains.
func (st *State) phase() string {
	if len(st.Outcomes) == 0 {
		return ""
	}
	newest := st.Outcomes[len(st.Outcomes)-1]
	name := strings.ToLower(strings.TrimPrefix(newest.Outcome.Phase, "/"))
	if alias, ok := st.phases.Aliases[name]; ok {
		name = alias
	}
	idx := -1
	for i, p := range st.phases.Sequence {
		if strings.EqualFold(p, name) {
			idx = i
		}
	}
	if idx < 0 {
		return ""
	}
	approved := false
	for _, d := range newest.Decisions {
		if strings.EqualFold(d.Type, "approval") && d.Resolution != nil && strings.EqualFold(d.Resolution.Option, "approve") {
			approved = true
		}
	}
	if approved && !newest.UnresolvedBlocking() && idx+1 < len(st.phases.Sequence) {
		idx++
	}
	return strings.ToLower(st.phases.Sequence[idx])
}

// State is the state so far. It shares memory with the ledger: call State
// again after adding more comments.
func (l *Ledger) State() *State {
	l.st.refresh()
	return &l.st
}

// Add folds the next comment of the thread.
func (l *Ledger) Add(c Comment) {
	if l.seen[c.ID] {
		return
	}
	l.seen[c.ID] = true
	st := &l.st
	if l.opts.Identity == "" || !strings.EqualFold(c.Author, l.opts.Identity) {
		// Anyone else's marker is not phasegate's (design §8); their
		// commands are what phasegate answers.
		if cmds := command.Parse(c.Body); len(cmds) > 0 {
			st.pending = append(st.pending, CommandComment{Comment: c, Commands: cmds})
		}
		return
	}
	if m := replyMarker.FindStringSubmatch(c.Body); m != nil {
		if id, err := strconv.ParseInt(m[1], 10, 64); err == nil {
			st.answer(id)
		}
		return
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
	// Even a resolution that does not count answered its command.
	st.answer(r.Command)
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
