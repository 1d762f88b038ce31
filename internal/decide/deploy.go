package decide

import (
	"strconv"
	"strings"
	"time"

	"github.com/phasegate/phasegate/internal/ledger"
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
