package decide

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/outcome"
)

// ReviewLister lists a pull request's reviews (ghclient.Client).
type ReviewLister interface {
	PullRequestReviews(ctx context.Context, owner, repo string, number int) ([]ghclient.Review, error)
}

// GateChangeApprover finds the person who approved a pull request that
// changes phasegate's own configuration or workflows: an APPROVED review
// given on the pull request's current head (a push after it needs a new
// one), still the reviewer's latest word, by someone with the right to
// resolve decisions under cfg — never a bot, phasegate itself, an excluded
// account, the pull request's author or anyone who pushed its branch. It
// returns the approver, or "" and what every approval lacked (why).
func (h *Handler) GateChangeApprover(ctx context.Context, gh GitHub, rl ReviewLister, owner, repo string, pr ghclient.PR, cfg config.Config) (approver, why string, err error) {
	reviews, err := rl.PullRequestReviews(ctx, owner, repo, pr.Number)
	if err != nil {
		return "", "", fmt.Errorf("reading the reviews of %s/%s#%d: %w", owner, repo, pr.Number, err)
	}
	identity := cmp.Or(h.Identity, cfg.IdentityOrDefault())
	fs := facts{}
	err = h.settle(ctx, gh, owner, repo, fs, func() (n *need, _ error) {
		approver, why, n = approverOf(reviews, pr, cfg, identity, fs)
		return n, nil
	})
	return approver, why, err
}

// approverOf is GateChangeApprover of the reviews, with the facts read.
func approverOf(reviews []ghclient.Review, pr ghclient.PR, cfg config.Config, identity string, fs facts) (approver, why string, n *need) {
	latest := map[string]ghclient.Review{}
	var order []string
	for _, r := range reviews {
		if r.State == "COMMENTED" || r.State == "PENDING" {
			continue // a comment neither gives nor takes back an approval
		}
		k := strings.ToLower(r.User)
		if _, ok := latest[k]; !ok {
			order = append(order, k)
		}
		latest[k] = r
	}
	why = "no approving review of the pull request's head " + outcome.ShortSHA(pr.HeadSHA)
	for _, k := range order {
		r := latest[k]
		if r.State != "APPROVED" || !strings.EqualFold(r.CommitID, pr.HeadSHA) {
			continue
		}
		ok, reason, n := mayApprove(identity, pr, cfg, r.User, fs)
		switch {
		case n != nil:
			return "", "", n
		case ok:
			return r.User, "", nil
		}
		why = fmt.Sprintf("the approval by %s does not count: %s", outcome.Inline(r.User), reason)
	}
	return "", why, nil
}

// mayApprove is the authorisation of a resolver (authorise), for a
// reviewer of a pull request.
func mayApprove(identity string, pr ghclient.PR, cfg config.Config, login string, fs facts) (bool, string, *need) {
	switch {
	case strings.HasSuffix(strings.ToLower(login), "[bot]"):
		return false, "bots never approve", nil
	case strings.EqualFold(login, identity):
		return false, "phasegate's own identity never approves", nil
	case containsFold(cfg.Resolvers.Exclude, login):
		return false, "this account is excluded from resolving (resolvers.exclude)", nil
	case strings.EqualFold(login, pr.Author):
		return false, "the pull request's author", nil
	}
	f, n := fs.of(need{ref: pr.HeadRef, head: pr.HeadSHA})
	switch {
	case n != nil:
		return false, "", n
	case f.why != "":
		return false, f.why, nil
	case containsFold(f.pushers, login):
		return false, "they pushed the pull request's branch", nil
	}
	perm, listed, unreadable, n := permitted(cfg, login, fs)
	if n != nil || listed {
		return listed, "", n
	}
	if need := cfg.Resolvers.PermissionOrDefault(); rank(perm) < rank(need) {
		return false, fmt.Sprintf("it needs %s permission (they have %s)", need, outcome.Inline(perm)) + unreadableTeams(unreadable), nil
	}
	return true, "", nil
}
