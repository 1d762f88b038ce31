// Package ledger folds an issue's comments into its state: the issue thread
// is the database. The trust model is in docs/security.md; in short, a
// phasegate comment counts only when
//
//   - its author is the configured phasegate identity,
//   - GitHub shows it unedited (updated_at equals created_at) and its body is
//     exactly what phasegate renders from its marker,
//   - its signature verifies when a signing key is configured,
//   - the phasegate comment its marker says it follows (prev=) is still on
//     the thread, so a deleted phasegate comment shows as a gap,
//   - without a key, what it records can be re-derived from the thread: an
//     outcome's file holds exactly that outcome at the commit it names
//     (Options.SourceID), and a resolution names an existing, unedited
//     command comment by the person it names, written after the outcome was
//     posted, that parses to that decision and option;
//
// and every resolution, with or without a key, must obey the rules phasegate
// itself follows: the resolver is not a bot, not phasegate, and not one of
// the accounts that pushed or authored the outcome. A phasegate comment
// that fails any of these is tampering: it is reported (State.Tampered) and
// freezes the thread (State.Frozen), so tampering can never reopen or change
// a final decision. A person's command counts only as first written: an
// edited comment's commands are never read. Among valid resolutions of one
// decision, the one whose command comes first on the thread wins, whichever
// run posted first.
//
// The fold is pure and deterministic: the same comments always give the
// same state, and folding a prefix then the rest gives what folding all does.
package ledger

import (
	"cmp"
	"errors"
	"slices"
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
	// Edited is set when GitHub shows the comment changed since it was
	// posted (updated_at later than created_at).
	Edited bool
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
	// SourceID, used only without a key, says which outcome ID the file
	// source holds at commit (the caller read it from GitHub before the
	// fold); ok is false when the file is not there. An outcome comment
	// whose file does not hold it is a forgery. Nil skips the check (for a
	// caller that only needs to know what was posted).
	SourceID func(source, commit string) (id string, ok bool)
	// Negative are the options that resolve a decision negatively, which is
	// final (config decisions.negative_options); nil means DefaultNegative.
	Negative []string
}

// State is what an issue's comments record.
type State struct {
	// Outcomes are the trusted outcome comments, oldest first. An outcome
	// posted twice (same id) is listed once, at its first comment.
	Outcomes []*Outcome
	// Tampered are phasegate comments that no longer verify, and gaps
	// where one was deleted.
	Tampered []Tamper
	// Ignored are resolutions that did not count (a later command of a
	// decision already resolved, or one naming an unknown outcome, decision
	// or option).
	Ignored []Ignored
	// Unanswered are people's comments holding phasegate commands that no
	// resolution and no reply of phasegate's answers yet, oldest first:
	// what reconcile still has to apply.
	Unanswered []CommandComment
	// Superseded are resolutions that lost to a resolution of an earlier
	// command (two runs raced) and whose command has no reply saying so yet.
	Superseded []Superseded
	// Phase is the phase the issue has reached (see Phase); "" when the
	// newest outcome's phase is not in the sequence.
	Phase string
	// Tip is the newest phasegate comment on the thread (what the next one
	// names as prev); 0 when there is none.
	Tip int64

	answered map[int64]bool // by a reply, or by a resolution that counts
	replied  map[int64]bool // by a reply
	pending  []CommandComment
	lost     []Superseded
	phases   config.Phases
}

// CommandComment is a person's comment that holds phasegate commands.
type CommandComment struct {
	Comment
	Commands []command.Command
}

// Superseded is a resolution comment that lost the race for its decision.
type Superseded struct {
	// Command is the comment whose command the losing resolution answered.
	Command int64
	// Resolution is the losing resolution comment.
	Resolution int64
	// Winner is the decision as resolved by the earlier command.
	Winner *Decision
}

// Answered reports whether a command comment was answered (a resolution
// names it, or phasegate replied to it).
func (st *State) Answered(commentID int64) bool { return st.answered[commentID] }

// Frozen reports whether the thread was tampered with. A frozen thread's
// decisions are never resolved again: tampering must not reopen or change a
// final decision.
func (st *State) Frozen() bool { return len(st.Tampered) > 0 }

// Outcome is a trusted outcome on the issue and the state of its decisions.
type Outcome struct {
	CommentID int64
	ID        string
	Outcome   *outcome.Outcome
	Source    string
	Commit    string
	PR        int
	// Actors may not resolve the outcome's decisions (see outcome.Meta).
	Actors    []string
	Decisions []*Decision
}

// Decision is a decision of an outcome and its resolution, if any.
type Decision struct {
	outcome.Decision
	// Resolution is the resolution in effect: the newest entry of History;
	// nil while unresolved.
	Resolution        *outcome.Resolution
	ResolutionComment int64
	// History is every resolution that counts, oldest first: the first,
	// then each one given on a later head after a push made the one before
	// it stale (a re-confirmation). The ledger keeps them all.
	History []Resolved
}

// Resolved is one resolution of a decision and its comment.
type Resolved struct {
	Resolution outcome.Resolution
	Comment    int64
}

// Tamper is a phasegate comment that no longer verifies, or a deleted one.
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
	cs := slices.Clone(comments)
	slices.SortStableFunc(cs, func(a, b Comment) int { return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID)) })
	l := New(opts)
	for _, c := range cs {
		l.Add(c)
	}
	return l.State()
}

// Ledger folds comments one at a time, in thread order. Folding a prefix of
// a thread and then the rest gives the state folding it all at once does.
type Ledger struct {
	opts   Options
	st     State
	byID   map[string]*Outcome
	seen   map[int64]bool
	ours   map[int64]bool           // phasegate comments seen (any kind)
	people map[int64]CommandComment // people's comments holding commands
	// rounds: each resolved decision's resolutions, one round per head it
	// was given on, oldest first; the last is the one in effect.
	rounds map[*Decision][]round
}

// round is the winning resolution of a decision given on one head: its
// comment, its command and the head.
type round struct {
	comment, command int64
	head             string
	negative         bool
}

// New starts an empty ledger.
func New(opts Options) *Ledger {
	l := &Ledger{opts: opts, byID: map[string]*Outcome{}, seen: map[int64]bool{}, ours: map[int64]bool{},
		people: map[int64]CommandComment{}, rounds: map[*Decision][]round{},
		st: State{phases: opts.Phases, answered: map[int64]bool{}, replied: map[int64]bool{}}}
	if len(l.st.phases.Sequence) == 0 {
		l.st.phases = config.DefaultPhases
	}
	return l
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
	return slices.ContainsFunc(st.LatestPerPhase(), (*Outcome).UnresolvedBlocking)
}

// UnresolvedBlocking reports whether a blocking decision is unresolved.
func (o *Outcome) UnresolvedBlocking() bool {
	return slices.ContainsFunc(o.Decisions, func(d *Decision) bool { return d.Blocking && d.Resolution == nil })
}

// phase is the phase the thread has reached: the phase of the newest
// outcome, moved on to the next phase of the sequence when its approval
// resolved approve and no blocking decision of it remains.
func (st *State) phase() string {
	if len(st.Outcomes) == 0 {
		return ""
	}
	newest := st.Outcomes[len(st.Outcomes)-1]
	idx := st.phases.Index(newest.Outcome.Phase)
	if idx < 0 {
		return ""
	}
	approved := slices.ContainsFunc(newest.Decisions, func(d *Decision) bool {
		return strings.EqualFold(d.Type, "approval") && d.Resolution != nil && strings.EqualFold(d.Resolution.Option, "approve")
	})
	if approved && !newest.UnresolvedBlocking() && idx+1 < len(st.phases.Sequence) {
		idx++
	}
	return strings.ToLower(st.phases.Sequence[idx])
}

// State is the state so far. It shares memory with the ledger: call State
// again after adding more comments.
func (l *Ledger) State() *State {
	st := &l.st
	st.Unanswered = slices.DeleteFunc(append(st.Unanswered[:0], st.pending...), func(p CommandComment) bool { return st.answered[p.ID] })
	st.Superseded = slices.DeleteFunc(append(st.Superseded[:0], st.lost...), func(s Superseded) bool { return st.replied[s.Command] })
	st.Phase = st.phase()
	return st
}

// Add folds the next comment of the thread.
func (l *Ledger) Add(c Comment) {
	if l.seen[c.ID] {
		return
	}
	l.seen[c.ID] = true
	if l.opts.Identity != "" && strings.EqualFold(c.Author, l.opts.Identity) {
		l.addOurs(c)
		return
	}
	// Anyone else's marker is not phasegate's; their commands are what
	// phasegate answers.
	if cmds := command.Parse(c.Body); len(cmds) > 0 {
		cc := CommandComment{Comment: c, Commands: cmds}
		l.people[c.ID] = cc
		l.st.pending = append(l.st.pending, cc)
	}
}

// addOurs folds a comment by phasegate's identity. A comment that is not
// a phasegate comment at all (another workflow's, posting as the same
// identity) is left alone; one that is, or claims to be, must verify.
func (l *Ledger) addOurs(c Comment) {
	st := &l.st
	marks := outcome.ParseMarkers(c.Body)
	kind := outcome.KindOutcome
	if len(marks) > 0 {
		kind = marks[0].Kind
		l.ours[c.ID] = true
		st.Tip = c.ID
		if p := marks[0].Prev; p > 0 && !l.ours[p] {
			st.tamper(c.ID, kind, "the phasegate comment it follows was deleted")
		}
	}
	// edited wraps a verification: a comment that is phasegate's, or claims
	// to be, and that GitHub shows edited is tampering whatever it says now.
	edited := func(k outcome.Kind, err error) bool {
		if !c.Edited || (len(marks) == 0 && !errors.Is(err, outcome.ErrTampered)) {
			return false
		}
		l.ours[c.ID] = true
		st.Tip = c.ID
		st.tamper(c.ID, k, "it was edited after phasegate posted it")
		return true
	}
	switch kind {
	case outcome.KindReply:
		r, err := outcome.VerifyReplyComment(c.Body, l.opts.Key)
		if edited(outcome.KindReply, err) {
			return
		}
		if err != nil {
			// A reply that does not verify answers nothing. It is not
			// tampering: a reply holds no decision, and any workflow could
			// otherwise freeze a thread by posting one.
			st.Ignored = append(st.Ignored, Ignored{c.ID, "a reply whose signature does not verify"})
			return
		}
		st.answered[r.Command] = true
		st.replied[r.Command] = true
	case outcome.KindOutcome:
		l.addOutcome(c, marks, edited)
	case outcome.KindResolution:
		r, err := outcome.VerifyResolutionComment(c.Body, l.opts.Key)
		if edited(outcome.KindResolution, err) {
			return
		}
		if err != nil {
			st.noteTamper(c, outcome.KindResolution, err)
			return
		}
		l.apply(c, r.Resolution)
	}
}

func (l *Ledger) addOutcome(c Comment, marks []outcome.Marker, edited func(outcome.Kind, error) bool) {
	st := &l.st
	v, err := outcome.VerifyOutcomeComment(c.Body, l.opts.Key)
	if edited(outcome.KindOutcome, err) {
		return
	}
	if err != nil {
		if len(marks) > 0 || errors.Is(err, outcome.ErrTampered) {
			st.noteTamper(c, outcome.KindOutcome, err)
			return
		}
		// Not an outcome comment: maybe a resolution or reply whose marker
		// broke.
		_, rerr := outcome.VerifyResolutionComment(c.Body, l.opts.Key)
		if edited(outcome.KindResolution, rerr) {
			return
		}
		if rerr != nil {
			st.noteTamper(c, outcome.KindResolution, rerr)
		}
		return
	}
	if len(l.opts.Key) == 0 && l.opts.SourceID != nil {
		if id, ok := l.opts.SourceID(v.Source, v.Commit); !ok || id != v.ID {
			st.tamper(c.ID, outcome.KindOutcome, "the file it names does not hold this outcome at the commit it names")
			return
		}
	}
	if l.byID[v.ID] != nil {
		return
	}
	o := &Outcome{CommentID: c.ID, ID: v.ID, Outcome: v.Outcome, Source: v.Source, Commit: v.Commit, PR: v.PR, Actors: v.Actors}
	for _, d := range v.Outcome.Decisions {
		o.Decisions = append(o.Decisions, &Decision{Decision: d})
	}
	l.byID[v.ID] = o
	st.Outcomes = append(st.Outcomes, o)
}

// Deleted records that the phasegate comment id, which a record outside the
// thread names (a phasegate status points at it), is gone from the
// thread: deleted, which is tampering like an edit.
func (st *State) Deleted(id int64) {
	st.tamper(id, "", "a phasegate comment was deleted (a phasegate status still points at it)")
}

func (st *State) tamper(id int64, k outcome.Kind, reason string) {
	if slices.ContainsFunc(st.Tampered, func(t Tamper) bool { return t.CommentID == id && t.Reason == reason }) {
		return
	}
	st.Tampered = append(st.Tampered, Tamper{CommentID: id, Kind: k, Reason: reason})
}

func (st *State) noteTamper(c Comment, k outcome.Kind, err error) {
	var te *outcome.TamperError
	if errors.As(err, &te) {
		st.tamper(c.ID, k, te.Reason)
	}
}

// apply records a resolution: the winner of its decision when its command
// is the earliest valid one. A resolution that breaks the rules phasegate
// follows, or that cannot be re-derived without a key, is tampering.
func (l *Ledger) apply(c Comment, r outcome.Resolution) {
	st := &l.st
	o := l.byID[r.Outcome]
	if o == nil {
		st.answered[r.Command] = true
		st.Ignored = append(st.Ignored, Ignored{c.ID, "it names an outcome that is not (yet) on this issue"})
		return
	}
	d := o.Decision(r.Decision)
	switch {
	case d == nil:
		st.answered[r.Command] = true
		st.Ignored = append(st.Ignored, Ignored{c.ID, "its outcome has no decision " + r.Decision})
		return
	case !d.HasOption(r.Option):
		st.answered[r.Command] = true
		st.Ignored = append(st.Ignored, Ignored{c.ID, "option " + r.Option + " is not one of the decision's options"})
		return
	}
	if why := l.unsound(r, o, d); why != "" {
		st.tamper(c.ID, outcome.KindResolution, why)
		return
	}
	st.answered[r.Command] = true
	l.record(c.ID, r, d)
}

// record counts resolution r (comment id) of decision d. Within the
// resolutions given on one head, the earliest command wins, whichever was
// posted first: a later one is superseded and its author told. A
// resolution given on another head than the one in effect, for a later
// command, is a re-confirmation after a push (decide posts one only when
// the push made the decision stale): it takes effect, and both stay in the
// history. A negative resolution is final: nothing after it counts.
func (l *Ledger) record(id int64, r outcome.Resolution, d *Decision) {
	st := &l.st
	rs := l.rounds[d]
	i := len(rs) - 1
	for i >= 0 && rs[i].head != r.Head {
		i--
	}
	switch {
	case i >= 0 && rs[i].command == r.Command:
		// The same command resolved twice (two runs raced): one resolution.
		st.Ignored = append(st.Ignored, Ignored{id, "it repeats the resolution of the same command"})
		return
	case i >= 0 && rs[i].command < r.Command, i < 0 && len(rs) > 0 && rs[len(rs)-1].command > r.Command:
		st.Ignored = append(st.Ignored, Ignored{id, "the decision was already resolved by an earlier command"})
		st.lost = append(st.lost, Superseded{Command: r.Command, Resolution: id, Winner: d})
		return
	case i < 0 && len(rs) > 0 && rs[len(rs)-1].negative:
		st.Ignored = append(st.Ignored, Ignored{id, "the decision was resolved negatively, which is final"})
		st.lost = append(st.lost, Superseded{Command: r.Command, Resolution: id, Winner: d})
		return
	}
	neg := IsNegative(r.Option, l.opts.Negative)
	if i >= 0 { // an earlier command's resolution arrived later: it wins its round
		w := rs[i]
		st.Ignored = append(st.Ignored, Ignored{w.comment, "the decision was resolved by an earlier command"})
		st.lost = append(st.lost, Superseded{Command: w.command, Resolution: w.comment, Winner: d})
		rs[i] = round{comment: id, command: r.Command, head: r.Head, negative: neg}
		d.History[i] = Resolved{Resolution: r, Comment: id}
	} else {
		rs = append(rs, round{comment: id, command: r.Command, head: r.Head, negative: neg})
		d.History = append(d.History, Resolved{Resolution: r, Comment: id})
	}
	l.rounds[d] = rs
	last := d.History[len(d.History)-1]
	d.Resolution, d.ResolutionComment = &last.Resolution, last.Comment
}

// unsound says why a resolution cannot be phasegate's, or "".
func (l *Ledger) unsound(r outcome.Resolution, o *Outcome, d *Decision) string {
	by := r.By
	switch {
	case strings.HasSuffix(strings.ToLower(by), "[bot]") || strings.EqualFold(by, l.opts.Identity):
		return "it records a bot or phasegate itself as the resolver"
	case containsFold(o.Actors, by):
		return "it records as the resolver an account that pushed or authored the outcome"
	case r.Command <= o.CommentID:
		return "its command was written before the outcome was posted"
	}
	if len(l.opts.Key) > 0 {
		return ""
	}
	// Without a key, anyone posting as phasegate's identity could write a
	// resolution: it counts only when the thread shows the command it names.
	cmd, ok := l.people[r.Command]
	switch {
	case !ok:
		return "the command comment it names is not on the thread (deleted, or never a command)"
	case cmd.Edited:
		return "the command comment it names was edited"
	case !strings.EqualFold(cmd.Author, by):
		return "the command comment it names was written by someone else"
	case r.Auth == "":
		return "it records no authorisation"
	}
	for _, k := range cmd.Commands {
		if k.Kind != command.Resolve || !strings.EqualFold(k.ID, d.ID) {
			continue
		}
		if k.Phase != "" && !strings.EqualFold(k.Phase, strings.TrimPrefix(o.Outcome.Phase, "/")) {
			continue
		}
		if strings.EqualFold(k.Option, r.Option) || (k.Recommended && strings.EqualFold(d.Recommended, r.Option)) {
			return ""
		}
	}
	return "the command comment it names does not ask for this option"
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
	return containsFold(d.Options, option)
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

// IsNegative reports whether option is one of negative (case-insensitive;
// nil means DefaultNegative): a negative resolution is final.
func IsNegative(option string, negative []string) bool {
	if negative == nil {
		negative = DefaultNegative
	}
	return containsFold(negative, option)
}

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
	var pending, rejected []string
	for _, o := range outcomes {
		for _, d := range o.Decisions {
			if !d.Blocking {
				continue
			}
			switch {
			case d.Resolution == nil:
				pending = append(pending, d.ID)
			case IsNegative(d.Resolution.Option, negative):
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
	return slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, s) })
}
