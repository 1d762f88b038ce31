package decide

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/phasegate/phasegate/internal/command"
	"github.com/phasegate/phasegate/internal/ghclient"
)

// What `phasegate serve`'s pages ask of the handler. A page never resolves
// anything itself: it asks whether the signed-in person may (MayResolve),
// and a resolution made from it is that person's own `/resolve` comment,
// posted with their token (ResolveAsUser), which the webhook path then
// authorises and applies exactly as a typed one (and reconcile, if the
// delivery is lost). The thread stays the only source of truth.

// CommentPoster posts a comment as a person: a ghclient.Client of their
// user access token (ghclient.NewUser).
type CommentPoster interface {
	CreateIssueComment(ctx context.Context, owner, repo string, number int, body string) (ghclient.Comment, error)
}

// ResolveAsUser is a resolution a person asks for from a page.
type ResolveAsUser struct {
	Owner, Repo string
	Issue       int
	Decision    string // "D-001"
	Option      string // one of the decision's options
	Reason      string // free text, may be empty; made one plain line (ComposeResolve)
	Login       string // the person, as GitHub's /user answers for their token
}

// RefusedError is a resolution a person may not make, or that no longer
// applies (resolved meanwhile, an unknown option, a frozen thread): Why says
// so in words for them. Nothing was posted.
type RefusedError struct{ Why string }

func (e *RefusedError) Error() string { return "refused: " + e.Why }

func refused(format string, args ...any) error {
	return &RefusedError{Why: fmt.Sprintf(format, args...)}
}

// MaxReason is the longest reason ResolveAsUser posts, in characters; a
// longer one is cut.
const MaxReason = 400

// PageFooter is the line under a resolution posted from a page: it shows
// how the comment was made, and parses as no command.
const PageFooter = "_Posted through phasegate's decision page._"

// MayResolve reports whether login may resolve decision on the issue right
// now, and why not when they may not: the authorisation a typed `/resolve`
// by login would meet (the same code: bots, phasegate's identity, excluded
// accounts, whoever pushed or authored the change, the permission,
// resolvers.users and .teams), on a decision that is pending, on a thread
// that is not frozen, under a valid configuration — and, as the page posts
// through the App, not in a repository that refuses commands posted through
// an App (resolvers.via_apps: false). It reads with gh (the App's
// installation client) and writes nothing.
func (h *Handler) MayResolve(ctx context.Context, gh GitHub, owner, repo string, issue int, decision, login string) (ok bool, why string, err error) {
	t, err := h.load(ctx, gh, owner, repo, issue, nil, nil)
	if err != nil {
		return false, "", err
	}
	_, why, err = h.mayResolve(ctx, gh, t, decision, login)
	if err != nil {
		return false, "", err
	}
	return why == "", why, nil
}

// mayResolve is MayResolve on a loaded thread, with the decision it would
// land on.
func (h *Handler) mayResolve(ctx context.Context, gh GitHub, t *thread, decision, login string) (*target, string, error) {
	switch {
	case t.cfgInvalid != "":
		return nil, "no decision can be resolved while the phasegate configuration on the default branch is invalid: " + t.cfgInvalid, nil
	case t.st.Frozen():
		return nil, fmt.Sprintf("the decisions on this issue are frozen: a phasegate comment was edited or deleted (comment %d)", t.st.Tampered[0].CommentID), nil
	case !t.cfg.Resolvers.ViaAppsOrDefault():
		return nil, "this repository counts only commands typed on GitHub (resolvers.via_apps: false): comment /resolve on the issue yourself", nil
	}
	// A comment posted now comes after every outcome of the thread: the
	// target and the authorisation a typed /resolve by login would meet.
	cmd := command.Command{Kind: command.Resolve, ID: strings.ToUpper(decision)}
	c := Comment{Author: login, Bot: strings.HasSuffix(strings.ToLower(login), "[bot]")}
	var target, already *target
	why := ""
	err := h.settle(ctx, gh, t.owner, t.repo, t.facts, func() (n *need, err error) {
		if target, already, n, err = targetOf(t, cmd, math.MaxInt64); target != nil {
			_, why, n = authorise(t, c, target.outcome)
		}
		return n, err
	})
	switch {
	case err != nil:
		return nil, "", err
	case target == nil && already != nil:
		r := already.decision.Resolution
		return nil, fmt.Sprintf("%s was already resolved: %s, by @%s", already.decision.ID, r.Option, r.By), nil
	case target == nil:
		return nil, fmt.Sprintf("there is no pending decision %s on this issue", decision), nil
	}
	return target, why, nil
}

// ResolveAsUser posts r.Login's own `/resolve <decision> <option> <reason>`
// comment with user (their user access token), after re-folding the thread
// with app under the issue's lock: it refuses (a *RefusedError, nothing
// posted) when the decision is not pending, the option is not one of its
// options, the thread is frozen, the configuration is invalid or refuses
// commands posted through an App, or MayResolve says no; and when the
// composed body (ComposeResolve) does not parse back to exactly the one
// intended command. It does not apply the resolution: the webhook of the
// new comment does, as for a typed one. A /resolve of the same decision by
// the same person already on the thread and not yet answered is returned
// instead of posting a second one.
func (h *Handler) ResolveAsUser(ctx context.Context, app GitHub, user CommentPoster, r ResolveAsUser) (ghclient.Comment, error) {
	unlock, err := h.locks().Lock(ctx, lockKey(r.Owner, r.Repo, r.Issue))
	if err != nil {
		return ghclient.Comment{}, fmt.Errorf("locking %s/%s#%d: %w", r.Owner, r.Repo, r.Issue, err)
	}
	defer unlock()
	t, err := h.load(ctx, app, r.Owner, r.Repo, r.Issue, nil, nil)
	if err != nil {
		return ghclient.Comment{}, err
	}
	// login's /resolve of the decision with no answer yet (its webhook is
	// on its way) is the comment asked for.
	for _, u := range t.st.Unanswered {
		resolves := slices.ContainsFunc(u.Commands, func(c command.Command) bool {
			return c.Kind == command.Resolve && strings.EqualFold(c.ID, r.Decision)
		})
		if c, ok := t.comment(u.ID); ok && resolves && strings.EqualFold(u.Author, r.Login) {
			return c, nil
		}
	}
	target, why, err := h.mayResolve(ctx, app, t, r.Decision, r.Login)
	switch {
	case err != nil:
		return ghclient.Comment{}, err
	case why != "":
		return ghclient.Comment{}, &RefusedError{Why: why}
	}
	d := target.decision
	option := optionOf(d, r.Option)
	if option == "" {
		return ghclient.Comment{}, refused("%q is not an option of %s: choose one of %s", r.Option, d.ID, strings.Join(d.Options, ", "))
	}
	body, err := ComposeResolve(d.ID, option, r.Reason)
	if err != nil {
		return ghclient.Comment{}, err
	}
	posted, err := user.CreateIssueComment(ctx, r.Owner, r.Repo, r.Issue, body)
	if err != nil {
		return ghclient.Comment{}, fmt.Errorf("posting the /resolve %s %s of %s on %s/%s#%d: %w", d.ID, option, r.Login, r.Owner, r.Repo, r.Issue, err)
	}
	h.logger().Info("posted a resolution from a page", "repository", r.Owner+"/"+r.Repo, "issue", r.Issue, "decision", d.ID,
		"option", option, "user", r.Login, "comment", posted.ID)
	return posted, nil
}

// ComposeResolve is the body of a resolution posted from a page:
//
//	/resolve D-001 approve <reason>
//
//	_Posted through phasegate's decision page._
//
// The reason is made one plain line a reader sees as it was typed: line
// breaks, control, format (zero-width, direction-changing) and other
// invisible characters become spaces, runs of space one, at most MaxReason
// characters, and every character Markdown or HTML could turn into hidden
// text, markup, a link or another line is escaped (& < > as entities,
// \ ` * _ ~ [ ] | with a backslash).
// The body must then parse (command.Parse) to exactly one command: that
// /resolve, with that decision, option and reason, or it is refused
// (a *RefusedError).
func ComposeResolve(decision, option, reason string) (string, error) {
	if !plainToken(decision) || !plainToken(option) || strings.EqualFold(option, command.RecommendedWord) {
		return "", refused("%q %q cannot be written as a command", decision, option)
	}
	line := "/resolve " + decision + " " + option
	why := reasonEscaper(reason)
	if why != "" {
		line += " " + why
	}
	body := line + "\n\n" + PageFooter
	cmds := command.Parse(body)
	if len(cmds) != 1 {
		return "", refused("the resolution would read as %d commands, not one: rephrase the reason", len(cmds))
	}
	c := cmds[0]
	if c.Kind != command.Resolve || c.Phase != "" || c.Recommended || !strings.EqualFold(c.ID, decision) || c.Option != option || c.Rationale != why {
		return "", refused("the resolution would not read back as /resolve %s %s with its reason: rephrase the reason", decision, option)
	}
	return body, nil
}

// plainToken reports whether s can stand as a command word: letters,
// digits, '.', '_', ':' and '-' only.
func plainToken(s string) bool {
	return s != "" && len(s) <= command.MaxToken && !strings.ContainsFunc(s, func(r rune) bool { return !tokenRune(r) })
}

// reasonEscaper is escapeReason; a test switches it off to show that the
// parse-back check stands on its own.
var reasonEscaper = escapeReason

func escapeReason(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Co, unicode.Noncharacter_Code_Point) || r == '\uFFFD' {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > MaxReason {
		s = strings.TrimSpace(string([]rune(s)[:MaxReason-1])) + "…"
	}
	return reasonMarkup.Replace(s)
}

// reasonMarkup escapes what Markdown or HTML could read as markup: & < >
// as entities (a backslash-escaped "<!--" still reads as a comment to
// command.Parse), the rest with a backslash.
var reasonMarkup = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "~", `\~`,
	"[", `\[`, "]", `\]`, "|", `\|`)
