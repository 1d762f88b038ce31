package ledger

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/outcome"
)

// The answers to a deployment protection rule (DeploymentAnswer).
const (
	DeployApprove = "approve"
	DeployWait    = "wait"
	DeployReject  = "reject"
)

// DeployState is what a deployment of one commit is answered from, every
// part read fresh for that commit when answering.
type DeployState struct {
	// SHA is the commit deployed: the event's sha.
	SHA string
	// Checked is the commit whose contracts verdict Contracts is; "" when
	// phasegate never checked SHA.
	Checked string
	// Contracts is that verdict as gate spells it: SHIP, ADVISORY or HOLD.
	Contracts string
	// Read is the commit Outcomes and Frozen were read for.
	Read string
	// Outcomes are the outcomes the commit's change carries, as their
	// ledgers record them with stale resolutions undone.
	Outcomes []DeployOutcome
	// Frozen is the first tampering on their threads; "" when none.
	Frozen string
}

// DeployOutcome is a carried outcome and where its decisions are answered.
type DeployOutcome struct {
	Outcome *Outcome
	Issue   int
	// Link is where a person answers its decisions (the issue, or the
	// decision page).
	Link string
	// Stale are the IDs of its decisions whose resolution a push made
	// stale (already unresolved in Outcome).
	Stale []string
}

// DeployAnswer is how a deployment protection rule is answered.
type DeployAnswer struct {
	// Action is DeployApprove, DeployWait or DeployReject.
	Action string
	// Reason says why, in one line.
	Reason string
	// Waiting are the decisions a waiting deployment waits for.
	Waiting []Waiting
}

// Waiting is a blocking decision a deployment waits for.
type Waiting struct {
	Decision string `json:"decision"`
	Issue    int    `json:"issue"`
	Link     string `json:"link,omitempty"`
	// Stale: it was resolved, and a push since made it stale.
	Stale bool `json:"stale,omitempty"`
}

// DeploymentAnswer answers a deployment of st.SHA to an environment that
// requires the blocking decisions of the phases in require (nil: every
// blocking decision of the commit). It approves only when the state was
// read for st.SHA, phasegate checked st.SHA and its contracts verdict is
// SHIP or ADVISORY, no thread is frozen, and every required blocking
// decision is resolved positively (not in negative). It rejects when a
// thread is frozen or a required decision was resolved negatively, and
// waits otherwise. An outcome whose phase is not in phases counts under
// every require: renaming a phase never takes decisions out of the gate.
func DeploymentAnswer(st DeployState, require []string, phases config.Phases, negative []string) DeployAnswer {
	sha := outcome.ShortSHA(st.SHA)
	if st.SHA == "" || st.Read != st.SHA {
		return DeployAnswer{Action: DeployWait, Reason: "the decisions were not read for commit " + sha}
	}
	if st.Frozen != "" {
		return DeployAnswer{Action: DeployReject, Reason: st.Frozen}
	}
	var rejected []string
	var waiting []Waiting
	for _, o := range st.Outcomes {
		if o.Outcome == nil || !requiredPhase(o.Outcome, require, phases) {
			continue
		}
		for _, d := range o.Outcome.Decisions {
			switch {
			case !d.Blocking:
			case d.Resolution == nil:
				waiting = append(waiting, Waiting{Decision: d.ID, Issue: o.Issue, Link: o.Link, Stale: slices.Contains(o.Stale, d.ID)})
			case IsNegative(d.Resolution.Option, negative):
				rejected = append(rejected, fmt.Sprintf("%s → %s (#%d)", d.ID, d.Resolution.Option, o.Issue))
			}
		}
	}
	a := DeployAnswer{Action: DeployWait, Waiting: waiting}
	switch {
	case len(rejected) > 0:
		return DeployAnswer{Action: DeployReject, Reason: "resolved negatively: " + strings.Join(rejected, ", ")}
	case st.Checked != st.SHA:
		a.Reason = "phasegate has not checked commit " + sha
	case st.Contracts != "SHIP" && st.Contracts != "ADVISORY":
		a.Reason = fmt.Sprintf("the contracts of commit %s are %s", sha, cmp.Or(st.Contracts, "unknown"))
	case len(waiting) > 0:
		a.Reason = fmt.Sprintf("waiting for %d blocking decision(s)", len(waiting))
	default:
		return DeployAnswer{Action: DeployApprove, Reason: fmt.Sprintf("contracts %s and every required blocking decision resolved for commit %s", st.Contracts, sha)}
	}
	return a
}

// requiredPhase reports whether o's decisions count under require.
func requiredPhase(o *Outcome, require []string, phases config.Phases) bool {
	if len(require) == 0 || o.Outcome == nil {
		return true
	}
	at := phases.Index(o.Outcome.Phase)
	return at < 0 || slices.ContainsFunc(require, func(r string) bool { return phases.Index(r) == at })
}
