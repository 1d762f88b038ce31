package ghclient

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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
