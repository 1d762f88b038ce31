package ghclient

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
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
