package ghfake

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Custom deployment protection rules: GitHub sends the App a
// deployment_protection_rule "requested" event when a workflow job targets
// an environment that lists the App (RequestDeployment), and waits for
// POST /repos/{owner}/{repo}/actions/runs/{run_id}/deployment_protection_rule
// (DeploymentReviews reads what was posted). The run waits, listed by
// GET /repos/{owner}/{repo}/actions/runs?status=waiting, with the
// environment in GET …/actions/runs/{run_id}/pending_deployments, until
// every environment of it is answered.

func init() {
	routes = append(routes,
		r("POST", "repos/:owner/:repo/actions/runs/:run_id/deployment_protection_rule", (*Server).reviewDeployment),
		r("GET", "repos/:owner/:repo/actions/runs", (*Server).listWorkflowRuns),
		r("GET", "repos/:owner/:repo/actions/runs/:run_id/pending_deployments", (*Server).pendingDeployments))
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
	if d.State != "" {
		answerRunLocked(rp, d)
	}
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
// It registers workflow run RunID of the repository, if it is not there
// yet (head_sha SHA, head_branch Ref without refs/heads/ or refs/tags/,
// created now), as waiting on Environment.
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
	s.waitLocked(rp, d)
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

// workflowRun is a workflow run whose jobs waited on deployment protection
// rules (DeploymentRequestPayload).
type workflowRun struct {
	id               int64
	headSHA, branch  string
	event            string
	status           string   // "waiting"; "in_progress" or "completed" once answered
	conclusion       string   // "" or "failure"
	pending          []string // the environments still waiting for an answer
	rejected         bool     // an environment of the run was rejected
	created, updated time.Time
}

// waitLocked registers run d.RunID, if new, and d.Environment as pending
// on it.
func (s *Server) waitLocked(rp *repo, d DeploymentRequest) {
	now := s.now().UTC()
	i := slices.IndexFunc(rp.runs, func(w *workflowRun) bool { return w.id == d.RunID })
	if i < 0 {
		branch := strings.TrimPrefix(strings.TrimPrefix(d.Ref, "refs/heads/"), "refs/tags/")
		rp.runs = append(rp.runs, &workflowRun{id: d.RunID, headSHA: d.SHA, branch: branch, event: d.Event, created: now})
		i = len(rp.runs) - 1
	}
	w := rp.runs[i]
	if !slices.Contains(w.pending, d.Environment) {
		w.pending = append(w.pending, d.Environment)
	}
	w.status, w.conclusion, w.updated = "waiting", "", now
}

// answerRunLocked takes an answered environment off its run's pending
// ones. With none left the run goes on, status "in_progress", when every
// environment was approved; when one was rejected it ends, "completed"
// with conclusion "failure", as GitHub fails the job of a rejected
// deployment and with it the run. An environment not pending changes
// nothing.
func answerRunLocked(rp *repo, d DeploymentReview) {
	for _, w := range rp.runs {
		i := slices.Index(w.pending, d.Environment)
		if w.id != d.RunID || i < 0 {
			continue
		}
		w.pending = slices.Delete(w.pending, i, i+1)
		w.rejected = w.rejected || d.State == "rejected"
		w.updated = d.At
		switch {
		case len(w.pending) > 0:
		case w.rejected:
			w.status, w.conclusion = "completed", "failure"
		default:
			w.status = "in_progress"
		}
	}
}

// AgeWorkflowRun moves the creation of a workflow run the fake registered
// (DeploymentRequestPayload) back by d, and reports whether there is such
// a run.
func (s *Server) AgeWorkflowRun(owner, name string, runID int64, d time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, ok := s.repos[key(owner, name)]
	if !ok {
		return false
	}
	for _, w := range rp.runs {
		if w.id == runID {
			w.created = w.created.Add(-d)
			return true
		}
	}
	return false
}

// maxRunResults is how many runs GitHub lists for a filtered listing: "up
// to 1,000 results for each search when using the following parameters:
// actor, branch, check_suite_id, created, event, head_sha, status".
const maxRunResults = 1000

// listWorkflowRuns is GET /repos/{o}/{r}/actions/runs, newest first, in a
// {total_count, workflow_runs} object (total_count counts every match; a
// filtered listing holds at most maxRunResults). status matches a run's
// status or conclusion, as GitHub's does; created takes the >=DATE form of
// GitHub's search syntax, any other form is 422; the other filters
// (actor, branch, event, head_sha, check_suite_id), which phasegate does
// not use, are refused 422 rather than ignored. 403 without actions: read.
func (s *Server) listWorkflowRuns(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	if !s.grantedLocked(q.login, "actions", "read") {
		return errReply(http.StatusForbidden, "Resource not accessible by integration")
	}
	for _, p := range []string{"actor", "branch", "event", "head_sha", "check_suite_id"} {
		if q.query(p) != "" {
			return validationFailed("WorkflowRun", p, "invalid", "ghfake does not filter workflow runs by "+p)
		}
	}
	since, err := createdSince(q.query("created"))
	if err != nil {
		return validationFailed("WorkflowRun", "created", "invalid", err.Error())
	}
	status := q.query("status")
	runs := slices.Clone(rp.runs)
	slices.SortStableFunc(runs, func(a, b *workflowRun) int { return b.created.Compare(a.created) })
	items := []any{}
	for _, w := range runs {
		if (status == "" || status == w.status || status == w.conclusion) && !w.created.Before(since) {
			items = append(items, w)
		}
	}
	total := len(items)
	if status != "" || q.query("created") != "" {
		items = items[:min(total, maxRunResults)]
	}
	rep := s.pagedObject(q, "workflow_runs", items, nil)
	body := rep.body.(map[string]any)
	page := []any{} // only the page asked for is rendered
	for _, w := range body["workflow_runs"].([]any) {
		page = append(page, s.workflowRunJSON(q, rp, w.(*workflowRun)))
	}
	body["workflow_runs"], body["total_count"] = page, total
	return rep
}

// createdSince reads the created filter's >=DATE form: a date, or a date
// and time (RFC 3339), as GitHub's search syntax takes them; "" is no
// filter.
func createdSince(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	d, ok := strings.CutPrefix(v, ">=")
	if !ok {
		return time.Time{}, fmt.Errorf("ghfake takes created=>=DATE only, not %q", v)
	}
	for _, layout := range []string{time.RFC3339, time.DateOnly} {
		if t, err := time.Parse(layout, d); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date", d)
}

// workflowRunJSON is the OpenAPI workflow-run of w: every required field.
func (s *Server) workflowRunJSON(q *req, rp *repo, w *workflowRun) map[string]any {
	api := q.apiBase + "/repos/" + rp.owner + "/" + rp.name
	run := fmt.Sprintf("%s/actions/runs/%d", api, w.id)
	var branch, conclusion any
	if w.branch != "" {
		branch = w.branch
	}
	if w.conclusion != "" {
		conclusion = w.conclusion
	}
	return map[string]any{
		"id": w.id, "node_id": fmt.Sprintf("WFR_%d", w.id), "name": "deploy", "display_title": "deploy",
		"head_branch": branch, "head_sha": w.headSHA, "event": w.event, "status": w.status, "conclusion": conclusion,
		"path": ".github/workflows/deploy.yml", "workflow_id": 1, "run_number": w.id, "run_attempt": 1,
		"url": run, "html_url": fmt.Sprintf("%s/%s/%s/actions/runs/%d", s.webURL, rp.owner, rp.name, w.id),
		"created_at": ts(w.created), "updated_at": ts(w.updated), "run_started_at": ts(w.created),
		"jobs_url": run + "/jobs", "logs_url": run + "/logs", "cancel_url": run + "/cancel", "rerun_url": run + "/rerun",
		"artifacts_url": run + "/artifacts", "check_suite_url": fmt.Sprintf("%s/check-suites/%d", api, w.id),
		"workflow_url": api + "/actions/workflows/1", "pull_requests": []any{}, "head_commit": nil,
		"repository": s.repoJSON(q, rp), "head_repository": s.repoJSON(q, rp),
	}
}

// pendingDeployments is GET /repos/{o}/{r}/actions/runs/{run_id}/pending_deployments:
// the environments of the run still waiting for an answer, as GitHub's
// pending-deployment (no wait timer, no reviewers: an App's rule is not
// a reviewer's). 404 for a run the fake does not know, 403 without
// actions: read.
func (s *Server) pendingDeployments(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	if !s.grantedLocked(q.login, "actions", "read") {
		return errReply(http.StatusForbidden, "Resource not accessible by integration")
	}
	runID, err := strconv.ParseInt(q.params["run_id"], 10, 64)
	i := slices.IndexFunc(rp.runs, func(w *workflowRun) bool { return w.id == runID })
	if err != nil || i < 0 {
		return notFound()
	}
	out := []any{}
	for _, env := range rp.runs[i].pending {
		id := int64(crc32.ChecksumIEEE([]byte(env)))
		out = append(out, map[string]any{
			"environment": map[string]any{"id": id, "node_id": fmt.Sprintf("EN_%d", id), "name": env,
				"url":      q.apiBase + "/repos/" + rp.owner + "/" + rp.name + "/environments/" + url.PathEscape(env),
				"html_url": s.webURL + "/" + rp.owner + "/" + rp.name + "/deployments/activity_log?environments_filter=" + url.QueryEscape(env)},
			"wait_timer": 0, "wait_timer_started_at": nil, "current_user_can_approve": false, "reviewers": []any{},
		})
	}
	return reply{status: http.StatusOK, body: out}
}
