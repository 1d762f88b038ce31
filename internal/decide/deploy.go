package decide

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/outcome"
)

// DeploymentWindow is how long GitHub keeps a deployment protection rule
// request open for an answer: a request older than this is never answered.
const DeploymentWindow = 30 * 24 * time.Hour

// Deployment is a deployment protection rule request phasegate was asked to
// answer and has not answered yet: a job of workflow run RunID that deploys
// commit SHA to Environment. serve keeps the waiting ones (in memory, or
// in Redis) and answers each when a decision it waits on is resolved.
type Deployment struct {
	Installation int64  `json:"installation"`
	Owner        string `json:"owner"`
	Repo         string `json:"repo"`
	RunID        int64  `json:"run_id"`
	Environment  string `json:"environment"`
	SHA          string `json:"sha"`
	// Ref is the branch or tag deployed, as the event names it.
	Ref string `json:"ref,omitempty"`
	// Requested is when phasegate was first asked.
	Requested time.Time `json:"requested"`
	// Refound: the reconcile pass found it waiting through the API, not
	// through GitHub's request (its environment may not list phasegate).
	Refound bool `json:"refound,omitempty"`
	// Read says Reason and Waits are what the last answer read; until
	// then the request may wait on any decision of its repository.
	Read   bool             `json:"read,omitempty"`
	Reason string           `json:"reason,omitempty"`
	Waits  []ledger.Waiting `json:"waits,omitempty"`
}

// Key names the request: its repository, run and environment (GitHub's
// names ignore case), the same for every copy of it.
func (d Deployment) Key() string {
	return strings.ToLower(d.Owner+"/"+d.Repo) + "#" + strconv.FormatInt(d.RunID, 10) + "#" + strings.ToLower(d.Environment)
}

// WaitsOn reports whether a change of the issue's decisions may change
// the answer: the request waits on one of its decisions, or on nothing it
// has read yet.
func (d Deployment) WaitsOn(owner, repo string, issue int) bool {
	if !strings.EqualFold(d.Owner, owner) || !strings.EqualFold(d.Repo, repo) {
		return false
	}
	if !d.Read {
		return true
	}
	for _, w := range d.Waits {
		if w.Issue == issue {
			return true
		}
	}
	return false
}

// DeploymentRead is what the decisions say about deploying a commit, read
// fresh for it (DeploymentDecisions).
type DeploymentRead struct {
	// State has SHA, Read, Outcomes and Frozen; Checked and Contracts are
	// the caller's to fill (the App's own record of the commit's checks).
	State ledger.DeployState
	// Config is the repository's configuration on the default branch;
	// Invalid says why it is invalid ("" when it is not).
	Config  config.Config
	Invalid string
}

// DeploymentDecisions reads the Phase Outcomes commit sha's change carries
// (the change SyncCommit reads) and folds their issues' threads again,
// with every resolution a push made stale undone: nothing is taken from a
// cache but a file at a commit, which never changes. It writes nothing.
func (h *Handler) DeploymentDecisions(ctx context.Context, gh GitHub, owner, repo, sha string) (DeploymentRead, error) {
	rc, err := h.repoConfig(ctx, gh, owner, repo)
	if err != nil {
		return DeploymentRead{}, err
	}
	read := DeploymentRead{State: ledger.DeployState{SHA: sha}, Config: rc.cfg, Invalid: rc.invalid}
	carried, _, err := h.carried(ctx, gh, owner, repo, sha, CommitOptions{})
	if err != nil {
		return read, fmt.Errorf("reading the Phase Outcomes of %s in %s/%s: %w", outcome.ShortSHA(sha), owner, repo, err)
	}
	threads := map[int]*thread{}
	outcomes, frozen, _, err := h.threadsOf(ctx, gh, owner, repo, carried, threads)
	if err != nil {
		return read, err
	}
	current, _, err := h.unstaled(ctx, gh, owner, repo, rc.cfg, outcomes, sha)
	if err != nil {
		return read, fmt.Errorf("telling whether a push made a resolution stale on %s: %w", outcome.ShortSHA(sha), err)
	}
	for i, o := range current {
		do := ledger.DeployOutcome{Outcome: o, Issue: carried[i].issue}
		if t := threads[do.Issue]; t != nil {
			if c, ok := t.comment(o.CommentID); ok {
				do.Link = h.commentLink(owner, repo, do.Issue, c)
			}
		}
		for j, d := range o.Decisions {
			if d.Resolution == nil && outcomes[i].Decisions[j].Resolution != nil {
				do.Stale = append(do.Stale, d.ID)
			}
		}
		read.State.Outcomes = append(read.State.Outcomes, do)
	}
	read.State.Read, read.State.Frozen = sha, frozen
	return read, nil
}
