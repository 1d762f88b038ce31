package decide

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/phasegate/phasegate/internal/ghclient"
)

// What a decision depends on beyond its thread. The pure functions that
// decide (answer, authorise, approverOf, staleOf, unstale) read it from
// facts; one they lack they name as a need, which settle reads through
// GitHub and adds, then asks again. Which facts are needed depends on the
// decision so far (the target a command lands on, the rule that refuses a
// resolver first), so they are read on demand, in the order the rules ask
// for them, and each once per pass.

// need names one fact.
type need struct {
	base, head string // the comparison of base and head, or with ref:
	ref        string // who pushed branch ref up to head
	team       string // whether login is an active member of team
	login      string // login's permission on the repository (team "")
}

// fact is GitHub's answer to a need.
type fact struct {
	cmp ghclient.Comparison // a comparison, or err
	err error
	// pushers are who pushed the branch, or why says why nobody can be
	// shown not to have.
	pushers []string
	why     string
	// member and unreadable are a team's membership.
	member, unreadable bool
	perm               string
}

type facts map[need]fact

// of is the fact n names, or n when it is not known yet.
func (fs facts) of(n need) (fact, *need) {
	f, ok := fs[n]
	if !ok {
		return f, &n
	}
	return f, nil
}

// settle calls decide until it needs no fact fs lacks, reading each it
// names (the gather step of a decision that depends on what it decided so
// far).
func (h *Handler) settle(ctx context.Context, gh GitHub, owner, repo string, fs facts, decide func() (*need, error)) error {
	for {
		n, err := decide()
		if err != nil || n == nil {
			return err
		}
		if _, known := fs[*n]; known {
			return fmt.Errorf("deciding on %s/%s asked again for %+v", owner, repo, *n)
		}
		f, err := h.read(ctx, gh, owner, repo, *n)
		if err != nil {
			return err
		}
		fs[*n] = f
	}
}

// read asks GitHub for the fact n names. A comparison's error is part of
// the fact (a commit that is gone is an answer); the others' errors stop
// the decision (could not run: the caller retries).
func (h *Handler) read(ctx context.Context, gh GitHub, owner, repo string, n need) (fact, error) {
	switch {
	case n.ref != "":
		pushers, why, err := h.refPushers(ctx, gh, owner, repo, ghclient.PR{HeadRef: n.ref, HeadSHA: n.head})
		return fact{pushers: pushers, why: why}, err
	case n.team != "":
		org, slug, _ := strings.Cut(n.team, "/")
		ok, err := gh.TeamMember(ctx, org, slug, n.login)
		switch {
		case errors.Is(err, ghclient.ErrTeamUnreadable):
			h.logger().Warn("cannot read team membership: resolvers.teams needs the App or a token with organisation Members: read (a workflow's GITHUB_TOKEN never can)",
				"repository", owner+"/"+repo, "team", n.team, "user", n.login, "error", err)
			return fact{unreadable: true}, nil
		case err != nil:
			return fact{}, fmt.Errorf("checking whether %s is in team %s: %w", n.login, n.team, err)
		}
		return fact{member: ok}, nil
	case n.login != "":
		perm, err := gh.CollaboratorPermission(ctx, owner, repo, n.login)
		if err != nil {
			return fact{}, fmt.Errorf("reading the permission of %s on %s/%s: %w", n.login, owner, repo, err)
		}
		return fact{perm: perm}, nil
	}
	cmp, err := h.compare(ctx, gh, owner, repo, n.base, n.head)
	return fact{cmp: cmp, err: err}, nil
}
