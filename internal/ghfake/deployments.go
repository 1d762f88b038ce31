package ghfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Custom deployment protection rules: GitHub sends the App a
// deployment_protection_rule "requested" event when a workflow job targets
// an environment that lists the App (RequestDeployment), and waits for
// POST /repos/{owner}/{repo}/actions/runs/{run_id}/deployment_protection_rule
// (DeploymentReviews reads what was posted).

func init() {
	routes = append(routes,
		r("POST", "repos/:owner/:repo/actions/runs/:run_id/deployment_protection_rule", (*Server).reviewDeployment))
}

// DeploymentReview is what an App posted to a workflow run's deployment
// protection rule: an answer (State "approved" or "rejected") or, with no
// State, a comment that leaves the request waiting.
type DeploymentReview struct {
	RunID       int64
	Environment string
	State       string
	Comment     string
	// Sender is the login of the token that posted it.
	Sender string
	At     time.Time
}

// DeploymentReviews returns what was posted to the deployment protection
// rules of a repository's workflow run, oldest first.
func (s *Server) DeploymentReviews(owner, name string, runID int64) []DeploymentReview {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, ok := s.repos[key(owner, name)]
	if !ok {
		return nil
	}
	var out []DeploymentReview
	for _, d := range rp.deployReviews {
		if d.RunID == runID {
			out = append(out, d)
		}
	}
	return out
}

// reviewDeployment handles the POST: 204 No Content, as the description
// says. The body is one of the description's two shapes: environment_name
// and state ("approved" or "rejected", comment optional), or
// environment_name and comment without state. Anything else is 422, and
// JSON that does not parse 400, as GitHub answers its other endpoints; a
// token without deployments: write is refused 403.
func (s *Server) reviewDeployment(q *req) reply {
	rp, ok := s.repoOf(q)
	runID, err := strconv.ParseInt(q.params["run_id"], 10, 64)
	if !ok || err != nil || runID <= 0 {
		return notFound()
	}
	if !s.grantedLocked(q.login, "deployments", "write") {
		return errReply(http.StatusForbidden, "Resource not accessible by integration")
	}
	var in struct {
		Environment *string `json:"environment_name"`
		State       *string `json:"state"`
		Comment     *string `json:"comment"`
	}
	if err := q.decode(&in); err != nil {
		return errReply(http.StatusBadRequest, "Problems parsing JSON")
	}
	switch {
	case in.Environment == nil || *in.Environment == "":
		return errReply(http.StatusUnprocessableEntity, "Invalid request.\n\n\"environment_name\" wasn't supplied.")
	case in.State == nil && in.Comment == nil:
		return errReply(http.StatusUnprocessableEntity, "Invalid request.\n\n\"state\" or \"comment\" wasn't supplied.")
	case in.State != nil && *in.State != "approved" && *in.State != "rejected":
		return errReply(http.StatusUnprocessableEntity, "Invalid request.\n\nFor 'properties/state', \""+*in.State+"\" is not a member of [\"approved\", \"rejected\"].")
	}
	d := DeploymentReview{RunID: runID, Environment: *in.Environment, Sender: q.login, At: s.now().UTC()}
	if in.State != nil {
		d.State = *in.State
	}
	if in.Comment != nil {
		d.Comment = *in.Comment
	}
	rp.deployReviews = append(rp.deployReviews, d)
	return reply{status: http.StatusNoContent}
}

// DeploymentRequest is a deployment_protection_rule "requested" event: a
// job of workflow run RunID targets Environment with commit SHA.
type DeploymentRequest struct {
	Owner, Repo string
	RunID       int64
	Environment string
	SHA, Ref    string
	// Event is what started the workflow run; "push" when empty.
	Event string
	// PullRequests are numbers of the fake's pull requests the run is for.
	PullRequests   []int
	InstallationID int64
	// Sender started the run (the deployment's creator); "": the
	// repository's owner.
	Sender string
	// CallbackURL is the payload's deployment_callback_url; empty: the
	// fake's own endpoint for RunID.
	CallbackURL string
}

// DeploymentRequestPayload is the event's body as GitHub sends it (the
// webhook-deployment-protection-rule-requested schema of its description).
func (s *Server) DeploymentRequestPayload(d DeploymentRequest) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, ok := s.repos[key(d.Owner, d.Repo)]
	if !ok {
		return nil, fmt.Errorf("ghfake: no repository %s/%s", d.Owner, d.Repo)
	}
	q := &req{apiBase: strings.TrimSuffix(s.URL(), "/")}
	api := q.apiBase + "/repos/" + rp.owner + "/" + rp.name
	if d.CallbackURL == "" {
		d.CallbackURL = fmt.Sprintf("%s/actions/runs/%d/deployment_protection_rule", api, d.RunID)
	}
	if d.Event == "" {
		d.Event = "push"
	}
	if d.Sender == "" {
		d.Sender = rp.owner
	}
	pulls := []any{}
	for _, n := range d.PullRequests {
		is, ok := rp.issues[n]
		if !ok || is.pr == nil {
			return nil, fmt.Errorf("ghfake: no pull request %s/%s#%d", d.Owner, d.Repo, n)
		}
		pulls = append(pulls, s.prJSON(q, rp, is))
	}
	id := s.nextID()
	at := ts(s.now())
	deployment := map[string]any{
		"id": id, "node_id": fmt.Sprintf("DE_%d", id), "sha": d.SHA, "ref": d.Ref, "task": "deploy",
		"environment": d.Environment, "original_environment": d.Environment, "creator": s.simpleUserJSON(q, d.Sender),
		"payload": map[string]any{}, "description": nil, "url": fmt.Sprintf("%s/deployments/%d", api, id),
		"statuses_url": fmt.Sprintf("%s/deployments/%d/statuses", api, id), "repository_url": api,
		"created_at": at, "updated_at": at,
	}
	return json.Marshal(map[string]any{
		"action": "requested", "environment": d.Environment, "event": d.Event, "sha": d.SHA, "ref": d.Ref,
		"deployment_callback_url": d.CallbackURL, "deployment": deployment, "pull_requests": pulls,
		"repository": s.repoJSON(q, rp), "sender": s.simpleUserJSON(q, d.Sender),
		"installation": map[string]any{"id": d.InstallationID, "node_id": fmt.Sprintf("MDIz_%d", d.InstallationID)},
	})
}

// RequestDeployment sends the event to the hook target (SetHookTarget),
// signed with its secret, records it as a delivery of the App's webhook
// and returns the target's status code.
func (s *Server) RequestDeployment(d DeploymentRequest) (int, error) {
	body, err := s.DeploymentRequestPayload(d)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	id, repoID, at := s.nextID(), s.repos[key(d.Owner, d.Repo)].id, s.now().UTC()
	s.mu.Unlock()
	rd := &HookDelivery{ID: id, GUID: fmt.Sprintf("deployment-%d", id), DeliveredAt: at, Status: hookStatus(0),
		Event: "deployment_protection_rule", Action: "requested", InstallationID: d.InstallationID,
		RepositoryID: repoID, Payload: body}
	h := s.hooks()
	h.mu.Lock()
	target, secret := h.target, h.secret
	if target != nil {
		h.deliveries = append(h.deliveries, rd)
		h.inflight.Add(1)
	}
	h.mu.Unlock()
	if target == nil {
		return 0, fmt.Errorf("ghfake: no hook target (SetHookTarget)")
	}
	h.send(rd, target, secret)
	h.mu.Lock()
	defer h.mu.Unlock()
	return rd.StatusCode, nil
}
