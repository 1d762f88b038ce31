package ghclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"
)

// The answers to a custom deployment protection rule.
const (
	DeploymentApproved = "approved"
	DeploymentRejected = "rejected"
)

// ReviewDeployment answers the deployment protection rule of workflow run
// runID for environment: state DeploymentApproved or DeploymentRejected,
// with an optional comment; or, with state "", posts comment alone and
// leaves the request waiting. GitHub lets an App review only its own rule;
// the token needs deployments: write.
//
// The request goes to the client's API base with the run id, never to a
// deployment_callback_url of the event: that names whatever host the
// payload says. Like every POST, it is repeated only when it surely never
// reached GitHub.
func (c *Client) ReviewDeployment(ctx context.Context, owner, repo string, runID int64, environment, state, comment string) error {
	ctx = withOp(ctx, "ReviewDeployment")
	where := fmt.Sprintf("review the deployment of run %d of %s to %q", runID, repoName(owner, repo), environment)
	switch {
	case runID <= 0 || environment == "":
		return fmt.Errorf("%s: no run id or environment", where)
	case state != "" && state != DeploymentApproved && state != DeploymentRejected:
		return fmt.Errorf("%s: unknown state %q", where, state)
	case state == "" && comment == "":
		return fmt.Errorf("%s: neither a state nor a comment", where)
	}
	body := struct {
		Environment string `json:"environment_name"`
		State       string `json:"state,omitempty"`
		Comment     string `json:"comment,omitempty"`
	}{environment, state, comment}
	u := fmt.Sprintf("repos/%s/%s/actions/runs/%d/deployment_protection_rule", url.PathEscape(owner), url.PathEscape(repo), runID)
	req, err := c.gh.NewRequest(http.MethodPost, u, body)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	_, err = c.gh.Do(ctx, req, nil)
	return wrapf(err, "%s", where)
}

// maxCallbackURL bounds the deployment_callback_url DeploymentRunID reads.
const maxCallbackURL = 2048

// DeploymentRunID is the workflow run id of a deployment_protection_rule
// event, which GitHub gives only inside its deployment_callback_url
// (…/repos/{owner}/{repo}/actions/runs/{run_id}/deployment_protection_rule).
// The URL must name the event's repository (owner and repo, ignoring case)
// and a positive decimal run id; its scheme and host are never used:
// ReviewDeployment answers at the client's API base.
func DeploymentRunID(callbackURL, owner, repo string) (int64, error) {
	if len(callbackURL) > maxCallbackURL {
		return 0, fmt.Errorf("deployment_callback_url of %s: %d bytes, over %d", repoName(owner, repo), len(callbackURL), maxCallbackURL)
	}
	u, err := url.Parse(callbackURL)
	if err != nil {
		return 0, fmt.Errorf("deployment_callback_url of %s: %w", repoName(owner, repo), err)
	}
	segs := strings.Split(u.Path, "/")
	if n := len(segs); n >= 7 {
		s := segs[n-7:]
		id, err := strconv.ParseInt(s[5], 10, 64)
		if s[0] == "repos" && strings.EqualFold(s[1], owner) && strings.EqualFold(s[2], repo) && s[3] == "actions" && s[4] == "runs" &&
			s[6] == "deployment_protection_rule" && err == nil && id > 0 && strconv.FormatInt(id, 10) == s[5] {
			return id, nil
		}
	}
	return 0, fmt.Errorf("deployment_callback_url %q names no workflow run of %s", truncateBytes(callbackURL, 200, "…"), repoName(owner, repo))
}

// WaitingRun is a workflow run waiting on a deployment protection rule (or
// a reviewer, or a wait timer: the listing does not say which; see
// PendingDeployments).
type WaitingRun struct {
	ID                         int64
	HeadSHA, HeadBranch, Event string
	CreatedAt                  time.Time
}

// maxWaitingRunPages bounds WaitingRuns: 10 pages of 100, the 1,000 runs
// GitHub lists at most for a filtered listing.
const maxWaitingRunPages = 10

// WaitingRuns lists the repository's workflow runs waiting on an
// environment that were created at since or later, newest first (GET
// /repos/{owner}/{repo}/actions/runs?status=waiting&created=>=SINCE, every
// page; a zero since: no created filter). GitHub keeps a deployment
// request waiting for 30 days. At most 1,000 runs are read, which is also
// all GitHub lists for a filtered listing: reading that many returns the
// runs read and an error wrapping ErrTruncated, never a silently shorter
// list. The listing is no snapshot: a run answered while its pages are
// read can move another past a page boundary, to be found by the next
// call. After a failure it returns no runs. The token needs actions: read.
func (c *Client) WaitingRuns(ctx context.Context, owner, repo string, since time.Time) ([]WaitingRun, error) {
	ctx = withOp(ctx, "WaitingRuns")
	where := "list the waiting workflow runs of " + repoName(owner, repo)
	opts := &github.ListWorkflowRunsOptions{Status: "waiting"}
	if !since.IsZero() {
		opts.Created = ">=" + since.UTC().Format("2006-01-02T15:04:05Z")
	}
	list, err := paginate(ctx, c.opts.perPage, maxWaitingRunPages, func(ctx context.Context, lo github.ListOptions) ([]*github.WorkflowRun, *github.Response, error) {
		opts.ListOptions = lo
		runs, resp, err := c.gh.Actions.ListRepositoryWorkflowRuns(ctx, owner, repo, opts)
		if runs == nil {
			return nil, resp, err
		}
		return runs.WorkflowRuns, resp, err
	})
	if err != nil && !errors.Is(err, errMorePages) {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	out := convert(list, func(r *github.WorkflowRun) WaitingRun {
		return WaitingRun{ID: r.GetID(), HeadSHA: r.GetHeadSHA(), HeadBranch: r.GetHeadBranch(), Event: r.GetEvent(), CreatedAt: r.GetCreatedAt().Time}
	})
	if err != nil || len(out) >= maxWaitingRunPages*c.opts.perPage {
		return out, fmt.Errorf("%s: %d runs, the most it reads (%d pages of %d): %w", where, len(out), maxWaitingRunPages, c.opts.perPage, ErrTruncated)
	}
	return out, nil
}

// PendingDeployments returns the names of the environments workflow run
// runID waits on (GET /repos/{owner}/{repo}/actions/runs/{run_id}/pending_deployments):
// none once each was answered. The token needs actions: read.
func (c *Client) PendingDeployments(ctx context.Context, owner, repo string, runID int64) ([]string, error) {
	ctx = withOp(ctx, "PendingDeployments")
	where := fmt.Sprintf("list the pending deployments of run %d of %s", runID, repoName(owner, repo))
	u := fmt.Sprintf("repos/%s/%s/actions/runs/%d/pending_deployments", url.PathEscape(owner), url.PathEscape(repo), runID)
	req, err := c.gh.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	var pending []struct {
		Environment struct {
			Name string `json:"name"`
		} `json:"environment"`
	}
	if _, err := c.gh.Do(ctx, req, &pending); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	out := make([]string, 0, len(pending))
	for _, p := range pending {
		out = append(out, p.Environment.Name)
	}
	return out, nil
}
