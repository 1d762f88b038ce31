package decide

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/outcome"
)

// Separation of duties (docs/security.md, attack 4): nobody who pushed
// commits of a change may resolve the decisions of the outcomes it carries.
// Besides what the event attests (sender, pusher, the pull request's
// author, verified commit authors), GitHub's repository activity records
// the account behind every push, force push and branch creation of a ref,
// whoever's event first carried the commits and whatever e-mail the commits
// name. phasegate reads it when it posts an outcome (the marker's actors=)
// and again when someone resolves one of a pull request's outcomes (a push
// after the outcome was posted adds its pusher). When the pushers cannot be
// read, nobody can be shown not to be one: the outcome cannot be resolved.

// attest is the accounts an outcome posted for meta's change records: the
// caller's attested accounts and every account GitHub's activity lists as
// having pushed meta.Ref (attested). An empty list (a push with no account,
// more accounts than a marker holds) posts an outcome that cannot be
// resolved.
func (h *Handler) attest(ctx context.Context, gh GitHub, owner, repo string, meta PostMeta) ([]string, error) {
	var pushes []ghclient.Push
	if meta.Ref != "" {
		var err error
		if pushes, err = gh.RefPushes(ctx, owner, repo, meta.Ref); err != nil {
			return nil, fmt.Errorf("reading who pushed %s of %s/%s: %w", meta.Ref, owner, repo, err)
		}
	}
	out, why := attested(meta.Actors, pushes)
	if why != "" {
		h.logger().Warn(why+": its outcomes cannot be resolved", "repository", owner+"/"+repo, "ref", meta.Ref)
	}
	return out, nil
}

// attested is the accounts of actors and pushes, once each, or none and
// why (for the log) when one push has no account or there are more than a
// marker holds; none, too, when one is a login a marker cannot hold.
func attested(actors []string, pushes []ghclient.Push) ([]string, string) {
	list := append([]string(nil), actors...)
	for _, p := range pushes {
		if p.Actor == "" {
			return nil, "a push to the change's branch (" + outcome.ShortSHA(p.After) + ") has no GitHub account"
		}
		list = append(list, p.Actor)
	}
	var out []string
	seen := map[string]bool{}
	for _, a := range list {
		if a == "" || seen[strings.ToLower(a)] {
			continue
		}
		if !outcome.Actor(a) {
			return nil, "" // a login the marker cannot hold: fail closed
		}
		seen[strings.ToLower(a)] = true
		out = append(out, a)
	}
	if len(out) > outcome.MaxActors {
		return nil, fmt.Sprintf("%d accounts pushed the change, more than an outcome marker records", len(out))
	}
	return out, ""
}

// pushedBy says why login may not resolve the decisions of an outcome of
// pull request number, given who pushed its branch so far ("" when login
// did not), or the need to read who did.
func pushedBy(t *thread, number int, login string) (string, *need) {
	if number == 0 {
		return "", nil // pushed without a pull request: the marker records the pushers
	}
	pr, ok := t.prs[number]
	switch {
	case !ok:
		return fmt.Sprintf("pull request #%d, which carried this Phase Outcome, cannot be read, so nobody can be shown not to have pushed it", number), nil
	case pr.HeadRef == "" || pr.HeadSHA == "":
		return fmt.Sprintf("pull request #%d names no head branch, so nobody can be shown not to have pushed it", number), nil
	}
	f, n := t.facts.of(need{ref: pr.HeadRef, head: pr.HeadSHA})
	switch {
	case n != nil || f.why != "":
		return f.why, n
	case containsFold(f.pushers, login):
		return fmt.Sprintf("you pushed commits to `%s`, the branch of pull request #%d that carries this Phase Outcome; someone else must decide", outcome.Inline(pr.HeadRef), number), nil
	}
	return "", nil
}

// refPushers lists the accounts GitHub's activity records as having pushed
// pr's head branch, up to and including the push of its head commit. The
// answer for one head is kept for the life of the process: serve reads it
// when the pull request moves, and a /resolve on that head reads nothing.
func (h *Handler) refPushers(ctx context.Context, gh GitHub, owner, repo string, pr ghclient.PR) (pushers []string, why string, err error) {
	key := strings.ToLower(owner+"/"+repo) + "@" + pr.HeadRef + "@" + pr.HeadSHA
	if v, ok := h.pushers.Load(key); ok {
		return v.([]string), "", nil
	}
	pushes, err := gh.RefPushes(ctx, owner, repo, pr.HeadRef)
	switch {
	case errors.Is(err, ghclient.ErrTruncated):
		return nil, fmt.Sprintf("branch `%s` has more pushes than phasegate reads, so nobody can be shown not to have pushed it", outcome.Inline(pr.HeadRef)), nil
	case ghclient.IsPermissionDenied(err) || ghclient.IsNotFound(err):
		return nil, fmt.Sprintf("GitHub did not say who pushed branch `%s` (%s), so nobody can be shown not to have pushed it", outcome.Inline(pr.HeadRef), outcome.Inline(oneLine(err.Error()))), nil
	case err != nil:
		return nil, "", fmt.Errorf("reading who pushed %s of %s/%s: %w", pr.HeadRef, owner, repo, err)
	}
	head := false
	for _, p := range pushes {
		if p.Actor == "" {
			return nil, fmt.Sprintf("a push to branch `%s` (%s) has no GitHub account (a deploy key?), so nobody can be shown not to have pushed it", outcome.Inline(pr.HeadRef), outcome.ShortSHA(p.After)), nil
		}
		head = head || strings.EqualFold(p.After, pr.HeadSHA)
		pushers = append(pushers, p.Actor)
	}
	if !head {
		return nil, fmt.Sprintf("GitHub's activity for branch `%s` does not show who pushed its head %s, so nobody can be shown not to have pushed it", outcome.Inline(pr.HeadRef), outcome.ShortSHA(pr.HeadSHA)), nil
	}
	h.pushers.Store(key, pushers)
	return pushers, "", nil
}
