// Package notify is the event phasegate sends when a decision is resolved
// and when an issue's phase advances: the repository_dispatch client_payload
// (event types phasegate.resolved and phasegate.phase-advanced) and the body
// of the signed POST to an operator's PHASEGATE_NOTIFY_URL are the same JSON
// document, Event.
//
// The package is pure: it builds events from the folded ledger and signs
// and verifies bodies; it does no I/O. The HTTP sender lives in
// internal/notify/webhook, and the repository_dispatch call in
// internal/ghclient (RepositoryDispatch).
//
// Event is a public interface: orchestrators read it. Fields are only ever
// added, never renamed or removed, and Version changes if a meaning does.
// GitHub allows client_payload at most 10 top-level keys: Event has 7 and
// groups the rest.
package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/phasegate/phasegate/internal/ledger"
)

// Event types (repository_dispatch event_type, X-Phasegate-Event).
const (
	// TypeResolved is sent once per resolution of a decision.
	TypeResolved = "phasegate.resolved"
	// TypePhaseAdvanced is sent once per phase advance (the phase:<name>
	// label moved on), after the phasegate.resolved of the resolution that
	// advanced it.
	TypePhaseAdvanced = "phasegate.phase-advanced"
)

// Version is the version of the Event document.
const Version = 1

// HTTP headers of a notification.
const (
	// HeaderSignature carries "sha256=" and the hex HMAC-SHA256 of the body
	// keyed with PHASEGATE_NOTIFY_SECRET, as GitHub's X-Hub-Signature-256.
	HeaderSignature = "X-Phasegate-Signature-256"
	// HeaderEvent is the event type.
	HeaderEvent = "X-Phasegate-Event"
	// HeaderDelivery is Event.ID: the same on every retry, so a receiver
	// can drop duplicates.
	HeaderDelivery = "X-Phasegate-Delivery"
)

// Event is one notification.
type Event struct {
	// Version is 1.
	Version int `json:"version"`
	// Event is TypeResolved or TypePhaseAdvanced.
	Event string `json:"event"`
	// ID identifies the event: the same for every send of it (retries,
	// reruns, replicas), different for any other event.
	ID string `json:"id"`
	// Repository is owner/name.
	Repository string `json:"repository"`
	// Issue is the issue (or pull request) the decision is on.
	Issue Issue `json:"issue"`
	// Decision is the resolved decision (for a phase advance: the one whose
	// resolution advanced the phase).
	Decision Decision `json:"decision"`
	// State is the issue's state after the resolution.
	State State `json:"state"`
}

// Issue names the issue.
type Issue struct {
	Number int `json:"number"`
	// URL is the issue's web page; omitted when unknown.
	URL string `json:"url,omitempty"`
}

// Decision is a resolved decision.
type Decision struct {
	// ID is the decision's id, e.g. D-001.
	ID string `json:"id"`
	// Phase is the phase of the outcome that holds it, as the outcome says.
	Phase string `json:"phase"`
	// Outcome is the id of that outcome.
	Outcome string `json:"outcome"`
	// Type is the decision's type, e.g. approval.
	Type string `json:"type"`
	// Blocking is the decision's blocking flag.
	Blocking bool `json:"blocking"`
	// Option is the option chosen, e.g. approve.
	Option string `json:"option"`
	// Negative is set when Option is one of decisions.negative_options
	// (default reject, request-changes): the pipeline should not go on.
	Negative bool `json:"negative"`
	// By is the login of the person who resolved it.
	By string `json:"by"`
	// CommentURL is the resolution comment's web URL.
	CommentURL string `json:"comment_url"`
}

// State is an issue's state.
type State struct {
	// Phase is the phase the issue has reached ("" when the newest
	// outcome's phase is not in phases.sequence).
	Phase string `json:"phase"`
	// PreviousPhase is the phase before the advance; only in
	// phasegate.phase-advanced.
	PreviousPhase string `json:"previous_phase,omitempty"`
	// Pending is set while a blocking decision is open (the
	// phasegate:pending label).
	Pending bool `json:"pending"`
	// BlockingOpen are the blocking decisions still open, in thread order;
	// never null.
	BlockingOpen []OpenDecision `json:"blocking_open"`
}

// OpenDecision is a blocking decision still open.
type OpenDecision struct {
	ID      string `json:"id"`
	Phase   string `json:"phase"`
	Outcome string `json:"outcome"`
}

// Source is what an event is built from: the issue's fold after the
// resolution, and which decision it resolved.
type Source struct {
	// Repository is owner/name.
	Repository string
	// Issue is the issue's number; IssueURL its web URL (optional).
	Issue    int
	IssueURL string
	// State is the fold of the thread including the resolution comment.
	State *ledger.State
	// Outcome and Decision are the resolved decision and its outcome; the
	// decision must hold its Resolution.
	Outcome  *ledger.Outcome
	Decision *ledger.Decision
	// CommentURL is the resolution comment's html_url.
	CommentURL string
	// Negative are decisions.negative_options; nil means
	// ledger.DefaultNegative.
	Negative []string
}

// Resolved builds the phasegate.resolved event of a resolution.
func Resolved(s Source) (Event, error) {
	return build(TypeResolved, s, "")
}

// PhaseAdvanced builds the phasegate.phase-advanced event of the resolution
// that moved the issue from previous to s.State.Phase.
func PhaseAdvanced(s Source, previous string) (Event, error) {
	if s.State != nil && strings.EqualFold(previous, s.State.Phase) {
		return Event{}, fmt.Errorf("build %s event for %s#%d: the phase did not change (%q)", TypePhaseAdvanced, s.Repository, s.Issue, previous)
	}
	return build(TypePhaseAdvanced, s, previous)
}

func build(typ string, s Source, previous string) (Event, error) {
	where := fmt.Sprintf("build %s event for %s#%d", typ, s.Repository, s.Issue)
	switch {
	case s.State == nil || s.Outcome == nil || s.Decision == nil:
		return Event{}, errors.New(where + ": no state, outcome or decision")
	case s.Decision.Resolution == nil:
		return Event{}, fmt.Errorf("%s: decision %s is not resolved", where, s.Decision.ID)
	case s.Decision.ResolutionComment <= 0:
		return Event{}, fmt.Errorf("%s: decision %s has no resolution comment", where, s.Decision.ID)
	}
	r := s.Decision.Resolution
	return Event{
		Version:    Version,
		Event:      typ,
		ID:         EventID(typ, s.Repository, s.Issue, s.Decision.ResolutionComment),
		Repository: s.Repository,
		Issue:      Issue{Number: s.Issue, URL: s.IssueURL},
		Decision: Decision{
			ID: s.Decision.ID, Phase: s.Outcome.Outcome.Phase, Outcome: s.Outcome.ID, Type: s.Decision.Type,
			Blocking: s.Decision.Blocking, Option: r.Option, Negative: ledger.IsNegative(r.Option, s.Negative), By: r.By,
			CommentURL: s.CommentURL,
		},
		State: State{Phase: s.State.Phase, PreviousPhase: previous, Pending: s.State.Pending(), BlockingOpen: BlockingOpen(s.State)},
	}, nil
}

// EventID is the id of the event of type typ for the resolution comment
// resolutionComment on repository#issue: stable across retries, reruns and
// replicas, unique per event.
func EventID(typ, repository string, issue int, resolutionComment int64) string {
	return fmt.Sprintf("%s:%s#%d:%d", typ, strings.ToLower(repository), issue, resolutionComment)
}

// BlockingOpen are the open blocking decisions of the newest outcome of each
// phase (what keeps phasegate:pending on), in thread order. Never nil.
func BlockingOpen(st *ledger.State) []OpenDecision {
	out := []OpenDecision{}
	latest := st.LatestPerPhase()
	for _, o := range st.Outcomes {
		if !slices.Contains(latest, o) {
			continue
		}
		for _, d := range o.Decisions {
			if d.Blocking && d.Resolution == nil {
				out = append(out, OpenDecision{ID: d.ID, Phase: o.Outcome.Phase, Outcome: o.ID})
			}
		}
	}
	return out
}

// Sign returns the X-Phasegate-Signature-256 value of body: "sha256=" and
// the hex HMAC-SHA256 of the exact body bytes keyed with secret.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}
