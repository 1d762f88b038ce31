package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
)

// reconcile re-folds every open issue labelled phasegate:pending in a
// repository and applies the commands that have no answer yet (design §8),
// outside GitHub Actions (a cron job, an operator's shell).
func (e *environment) reconcile(args []string) int {
	fset := flag.NewFlagSet("phasegate reconcile", flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	repoFlag := fset.String("repo", e.getenv("GITHUB_REPOSITORY"), "owner/name of the repository (default $GITHUB_REPOSITORY)")
	apiURL := fset.String("github-api-url", e.getenv("GITHUB_API_URL"), "GitHub API base URL, for GitHub Enterprise (default $GITHUB_API_URL, else api.github.com)")
	configPath := fset.String("config", "", "config file on the default branch (default .github/phasegate.yml)")
	usage := func(w io.Writer) {
		fmt.Fprint(w, "Usage: phasegate reconcile [flags]\n\nApplies every /resolve command on the repository's open phasegate:pending issues that has no answer yet.\nThe token comes from $PHASEGATE_TOKEN or $GITHUB_TOKEN; the signing key from $PHASEGATE_SIGNING_KEY. Flags:\n")
		fset.SetOutput(w)
		fset.PrintDefaults()
	}
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(e.stdout)
			return ExitOK
		}
		fmt.Fprintf(e.stderr, "phasegate: %v\n\n", err)
		usage(e.stderr)
		return ExitUsage
	}
	if fset.NArg() > 0 {
		return e.failf("reconcile takes no arguments (got %q)", fset.Arg(0))
	}
	owner, repo, ok := strings.Cut(*repoFlag, "/")
	if !ok || owner == "" || repo == "" {
		return e.failf("--repo must be owner/name (got %q)", *repoFlag)
	}
	token := e.getenv("PHASEGATE_TOKEN")
	if token == "" {
		token = e.getenv("GITHUB_TOKEN")
	}
	if token == "" {
		return e.failf("no token: set PHASEGATE_TOKEN or GITHUB_TOKEN")
	}
	gh, err := ghclient.New(ghclient.Options{Token: token, BaseURL: *apiURL, Version: Version()})
	if err != nil {
		return e.failf("creating the GitHub client: %v", err)
	}
	var key []byte
	if k := e.getenv("PHASEGATE_SIGNING_KEY"); k != "" {
		key = []byte(k)
	}
	h := &decide.Handler{Key: key, ConfigPath: *configPath}
	res, err := h.ReconcileRepo(context.Background(), gh, owner, repo)
	fmt.Fprintf(e.stdout, "%s/%s: %d resolutions, %d replies, %d captured issues, %d commands already answered, %d edited phasegate comments\n",
		owner, repo, res.Resolutions, res.Replies, res.Captured, res.Skipped, res.Tampered)
	if err != nil {
		return e.failf("reconciling %s/%s: %v", owner, repo, err)
	}
	return ExitOK
}
