package cli

import (
	"context"
	"fmt"
)

// reconcile re-folds every open issue labelled phasegate:pending in a
// repository and applies the commands that have no answer yet (docs/security.md),
// outside GitHub Actions (a cron job, an operator's shell).
func (e *environment) reconcile(args []string) int {
	fset := e.flags("reconcile", `Applies every /resolve command on the repository's open phasegate:pending issues that has
no answer yet, outside GitHub Actions (a cron job, an operator's shell). The token comes
from $PHASEGATE_TOKEN or $GITHUB_TOKEN; the signing key from $PHASEGATE_SIGNING_KEY.

Exit codes: 0 done; 2 usage error, or a repository or issue could not be reconciled
(what was done before the failure is printed on stderr).`)
	repoFlag := fset.String("repo", e.getenv("GITHUB_REPOSITORY"), "owner/name of the repository (default $GITHUB_REPOSITORY)")
	apiURL := fset.String("github-api-url", e.getenv("GITHUB_API_URL"), "GitHub API base URL, for GitHub Enterprise (default $GITHUB_API_URL, else api.github.com)")
	configPath := fset.String("config", "", "config file on the default branch (default .github/phasegate.yml)")
	if code, done := fset.parse(args); done {
		return code
	}
	if fset.NArg() > 0 {
		return e.failf("reconcile takes no arguments (got %q)", fset.Arg(0))
	}
	owner, repo, gh, h, err := e.gitHub(*repoFlag, *apiURL, *configPath, realClock)
	if err != nil {
		return e.failf("%v", err)
	}
	res, err := h.ReconcileRepo(context.Background(), gh, owner, repo)
	summary := fmt.Sprintf("%d resolutions, %d replies, %d captured issues, %d commands already answered, %d edited phasegate comments",
		res.Resolutions, res.Replies, res.Captured, res.Skipped, res.Tampered)
	if err != nil {
		// Never a success-looking line after a failure: what was done
		// before it goes with the error, on stderr.
		return e.failf("reconciling %s/%s failed: %v\nbefore the failure: %s", owner, repo, err, summary)
	}
	fmt.Fprintf(e.stdout, "%s/%s: %s\n", owner, repo, summary)
	return ExitOK
}
