package decide

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/phasegate/phasegate/internal/command"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/outcome"
)

// reactConfused marks a command phasegate refused (with its reply). A
// command it carried out needs no reaction: the resolution comment is the
// answer, and 🚀 on it says the pipeline was told.
const reactConfused = "confused"

// handle answers one command comment, with the issue locked and folded:
// each command is decided from the thread and the facts read for it
// (answer, settle), then its resolution is recorded (record); the reply,
// the labels and statuses, and the reaction are written last.
func (h *Handler) handle(ctx context.Context, gh GitHub, t *thread, c Comment, cmds []command.Command, log *slog.Logger) (Result, error) {
	if t.st.Answered(c.ID) {
		return Result{Skipped: 1}, nil
	}
	var res Result
	var lines []string // the reply's lines, for refusals, lists and help
	resolved, refused := 0, 0
	if !t.has(c.ID) {
		return res, fmt.Errorf("comment %d is not (yet) on %s/%s#%d", c.ID, t.owner, t.repo, t.issue)
	}
	sync := false
	if why := refuseAll(t, c); why != "" {
		lines = append(lines, mention(c.Author)+" "+why)
		refused++
		cmds = nil
		// The statuses say why nothing can be resolved.
		sync = t.cfgInvalid != "" || t.st.Frozen()
	}
	for _, cmd := range cmds {
		var s step
		err := h.settle(ctx, gh, t.owner, t.repo, t.facts, func() (n *need, err error) {
			s, n, err = answer(t, c, cmd)
			return n, err
		})
		if err != nil {
			return res, err
		}
		if s.denied != "" {
			log.Info("refused: not authorised", "decision", cmd.ID, "user", c.Author, "why", s.denied)
		}
		if s.res != nil {
			if s.line, err = h.record(ctx, gh, t, s, c, &res, log); err != nil {
				return res, err
			}
			if s.refused = s.line != ""; !s.refused {
				resolved++
			}
		}
		if s.refused {
			refused++
		}
		if s.line != "" {
			lines = append(lines, s.line)
		}
	}
	if len(lines) > 0 {
		if err := h.reply(ctx, gh, t, c.ID, lines); err != nil {
			return res, err
		}
		res.Replies++
	}
	if resolved > 0 || sync {
		if err := h.advance(ctx, gh, t); err != nil {
			return res, err
		}
	} else if res.Replies > 0 {
		// The reply is the newest phasegate comment: anchor it.
		if err := h.anchorTip(ctx, gh, t); err != nil {
			return res, err
		}
	}
	if refused > 0 {
		if err := gh.CreateCommentReaction(ctx, t.owner, t.repo, c.ID, reactConfused); err != nil {
			return res, fmt.Errorf("reacting to comment %d: %w", c.ID, err)
		}
	}
	log.Info("handled command comment", "resolved", resolved, "refused", refused, "replies", res.Replies)
	return res, nil
}

// step is what one command comes to: a line of the reply (refused when it
// refuses the command), or a resolution to record (res, on target).
type step struct {
	line    string
	refused bool
	res     *outcome.Resolution
	target  *target
	// denied is why the commenter may not resolve, for the log.
	denied string
}

func answer(t *thread, c Comment, cmd command.Command) (step, *need, error) {
	switch cmd.Kind {
	case command.Help:
		return step{line: helpText}, nil, nil
	case command.Decisions:
		return step{line: listPending(t)}, nil, nil
	case command.Invalid, command.Unknown:
		return step{line: cmd.Reason, refused: true}, nil, nil
	case command.Resolve:
		return resolve(t, c, cmd)
	}
	return step{}, nil, nil
}

// refuseAll says why none of a comment's commands can be carried out, or
// "": an edited comment is never read (a command counts only as its author
// first wrote it), an invalid config accepts nothing, a tampered thread
// is frozen, and a repository may refuse commands posted through a GitHub
// App (resolvers.via_apps: false; the thread's listing, not the webhook,
// says which App a comment came through).
func refuseAll(t *thread, c Comment) string {
	if tc, _ := t.comment(c.ID); t.edited[c.ID] || (c.Body != "" && outcome.Normalize(tc.Body) != outcome.Normalize(c.Body)) {
		return "this comment was edited since it was posted, and phasegate does not read edited comments: " +
			"write the command in a new comment."
	}
	if t.cfgInvalid != "" {
		return "no decision can be resolved while the phasegate configuration on the default branch is invalid: " +
			outcome.Inline(t.cfgInvalid) + ". Fix it, then comment again."
	}
	if t.st.Frozen() {
		tm := t.st.Tampered[0]
		return fmt.Sprintf("the decisions on this issue are frozen: a phasegate comment was edited or deleted (comment %d: %s). "+
			"Tampering never reopens or changes a decision; see the phasegate/decisions status, and post a new Phase Outcome on a new issue to decide again.",
			tm.CommentID, outcome.Inline(tm.Reason))
	}
	if tc, _ := t.comment(c.ID); tc.ViaApp != "" && !t.cfg.Resolvers.ViaAppsOrDefault() {
		return fmt.Sprintf("this comment was posted through the GitHub App `%s`, and this repository counts only commands typed on GitHub (`resolvers.via_apps: false`): "+
			"write the command in a new comment yourself.", safeToken(tc.ViaApp))
	}
	return ""
}

// reply posts phasegate's reply to a command comment, chained to the newest
// phasegate comment, and folds it in.
func (h *Handler) reply(ctx context.Context, gh GitHub, t *thread, command int64, lines []string) error {
	body, err := outcome.RenderReply(replyText(lines), outcome.Reply{Command: command, Prev: t.st.Tip}, h.Key)
	if err != nil {
		return fmt.Errorf("rendering the reply to comment %d: %w", command, err)
	}
	posted, err := gh.CreateIssueComment(ctx, t.owner, t.repo, t.issue, body)
	if err != nil {
		return fmt.Errorf("replying on %s/%s#%d: %w", t.owner, t.repo, t.issue, err)
	}
	t.posted(posted, h.Key)
	return nil
}

// resolve decides one /resolve: the refusal, or the resolution to record.
func resolve(t *thread, c Comment, cmd command.Command) (step, *need, error) {
	target, already, n, err := targetOf(t, cmd, c.ID)
	if n != nil || err != nil {
		return step{}, n, err
	}
	who := mention(c.Author)
	refuse := func(format string, args ...any) (step, *need, error) {
		return step{line: fmt.Sprintf(format, args...), refused: true}, nil, nil
	}
	switch {
	case target == nil && already != nil:
		already := already.decision
		r := already.Resolution
		return refuse("%s `%s` was already resolved: **%s**, by %s ([resolution](#issuecomment-%d)). Resolutions are final; to revisit it, post a new Phase Outcome.",
			who, outcome.Inline(already.ID), outcome.Inline(r.Option), outcome.Inline("@"+r.By), already.ResolutionComment)
	case target == nil:
		return refuse("%s there is no pending decision `%s` on this issue posted before your comment. %s", who, safeToken(cmd.Target()), pendingSummary(t.st))
	}
	d := target.decision
	option := ""
	switch {
	case cmd.Recommended && d.Recommended == "":
		return refuse("%s `%s` has no recommended option: choose one of %s.", who, outcome.Inline(d.ID), optionList(d.Options))
	case cmd.Recommended:
		option = d.Recommended
	default:
		option = optionOf(d, cmd.Option)
	}
	if option == "" || !d.HasOption(option) {
		msg := fmt.Sprintf("%s `%s` is not an option of `%s`: choose one of %s.", who, safeToken(cmd.Option), outcome.Inline(d.ID), optionList(d.Options))
		if s, ok := command.Suggest(cmd.Option, d.Options); ok {
			msg += fmt.Sprintf(" Did you mean `/resolve %s %s`?", outcome.Inline(d.ID), outcome.Inline(s))
		}
		return step{line: msg, refused: true}, nil, nil
	}
	auth, why, n := authorise(t, c, target.outcome)
	switch {
	case n != nil:
		return step{}, n, nil
	case why != "":
		s, _, _ := refuse("%s you cannot resolve `%s`: %s.", who, outcome.Inline(d.ID), why)
		s.denied = why
		return s, nil, nil
	}
	r := outcome.Resolution{Outcome: target.outcome.ID, Decision: d.ID, Option: option, By: c.Author, Command: c.ID, Auth: auth,
		Head: headOf(t, target.outcome)}
	if !outcome.Token(r.Decision) || !outcome.Token(r.Option) || !outcome.Login(r.By) {
		return refuse("%s `%s` cannot be recorded: its ID or option has characters a resolution cannot hold.", who, outcome.Inline(d.ID))
	}
	return step{res: &r, target: target}, nil, nil
}

// record writes the resolution s decided: the captured issue first when it
// captures, then the resolution comment, chained to the newest phasegate
// comment and folded in, so that the next command and the state advance
// see it. It returns the refusal when the resolution cannot be rendered.
func (h *Handler) record(ctx context.Context, gh GitHub, t *thread, s step, c Comment, res *Result, log *slog.Logger) (string, error) {
	r, d := *s.res, s.target.decision
	if strings.EqualFold(d.Type, "capture-out-of-scope") && strings.EqualFold(r.Option, "capture") {
		n, err := h.capture(ctx, gh, t, s.target, c)
		if err != nil {
			return "", err
		}
		r.Captured = n
		res.Captured++
	}
	r.Prev = t.st.Tip
	body, err := outcome.RenderResolution(r, h.Key)
	if err != nil {
		return fmt.Sprintf("%s `%s` could not be recorded: %s.", mention(c.Author), outcome.Inline(d.ID), outcome.Inline(err.Error())), nil
	}
	posted, err := gh.CreateIssueComment(ctx, t.owner, t.repo, t.issue, body)
	if err != nil {
		return "", fmt.Errorf("recording the resolution of %s on %s/%s#%d: %w", d.ID, t.owner, t.repo, t.issue, err)
	}
	res.Resolutions++
	log.Info("resolved", "decision", d.ID, "option", r.Option, "by", c.Author)
	t.posted(posted, h.Key)
	return "", nil
}

// optionOf is d's option that s names in any case, or "".
func optionOf(d *ledger.Decision, s string) (option string) {
	for _, o := range d.Options {
		if strings.EqualFold(o, s) {
			option = o
		}
	}
	return option
}

// target is the decision a command resolves.
type target struct {
	outcome  *ledger.Outcome
	decision *ledger.Decision
}

// findTarget picks the newest trusted outcome posted before the command
// comment that holds the decision unresolved, filtered by the command's
// phase prefix: a command never lands on an outcome posted after it was
// written. When every such outcome has resolved it, already is the newest
// resolved one.
func findTarget(st *ledger.State, cmd command.Command, commentID int64) (*target, *target) {
	var already *target
	for i := len(st.Outcomes) - 1; i >= 0; i-- {
		o := st.Outcomes[i]
		// Equivalent mutant (>= → >): an outcome comment is phasegate's, never the person's command comment, so the ids are never equal.
		if o.CommentID >= commentID {
			continue
		}
		if cmd.Phase != "" && !strings.EqualFold(strings.TrimPrefix(o.Outcome.Phase, "/"), cmd.Phase) {
			continue
		}
		d := o.Decision(cmd.ID)
		if d == nil {
			continue
		}
		if d.Resolution == nil {
			return &target{o, d}, nil
		}
		if already == nil {
			already = &target{o, d}
		}
	}
	return nil, already
}

// targetOf is findTarget, where a resolution a push made stale
// (decisions.invalidate_on_push) takes a new one on the new head.
func targetOf(t *thread, cmd command.Command, commentID int64) (*target, *target, *need, error) {
	target, already := findTarget(t.st, cmd, commentID)
	if target != nil || already == nil {
		return target, already, nil, nil
	}
	st, n, err := staleOf(t.cfg, already.outcome, already.decision, headOf(t, already.outcome), t.facts)
	if n != nil || err != nil || st == nil {
		return nil, already, n, err
	}
	return already, nil, nil, nil
}

// headOf is the commit a resolution of o's decisions is given on now: the
// head of the pull request that carried o (open, closed or merged), else
// the commit that added it.
func headOf(t *thread, o *ledger.Outcome) string {
	if pr, ok := t.prs[o.PR]; ok && o.PR > 0 && pr.HeadSHA != "" {
		return pr.HeadSHA
	}
	return o.Commit
}

// authorise returns why the commenter may not resolve the decision, or "",
// and on success what allowed them (recorded in the resolution: their
// permission, or "listed"). Bots never resolve; nor does phasegate's
// identity, an excluded account, or an account GitHub attested as having
// pushed or authored the change that carried the outcome (separation of
// duties: an agent must not approve its own work). An outcome with no
// attested account on record cannot be resolved: nobody can be shown not to
// be its author. Everyone else needs the configured permission, or to be
// listed.
func authorise(t *thread, c Comment, o *ledger.Outcome) (auth, why string, n *need) {
	login := c.Author
	switch {
	case c.Bot || strings.HasSuffix(strings.ToLower(login), "[bot]"):
		return "", "bots never resolve decisions", nil
	case strings.EqualFold(login, t.cfg.IdentityOrDefault()):
		return "", "phasegate's own identity never resolves decisions", nil
	case containsFold(t.cfg.Resolvers.Exclude, login):
		return "", "this account is excluded from resolving (resolvers.exclude)", nil
	case len(o.Actors) == 0:
		return "", "the outcome records no account that pushed it, so nobody can be shown not to be its author; post it again with a current phasegate", nil
	case containsFold(o.Actors, login) || (t.prs[o.PR].Author != "" && strings.EqualFold(t.prs[o.PR].Author, login)):
		return "", "you pushed or authored the change that carried this Phase Outcome; someone else must decide", nil
	}
	if why, n := pushedBy(t, o.PR, login); n != nil || why != "" {
		return "", why, n
	}
	perm, listed, unreadable, n := permitted(t.cfg, login, t.facts)
	switch {
	case n != nil:
		return "", "", n
	case listed:
		return "listed", "", nil
	}
	need := t.cfg.Resolvers.PermissionOrDefault()
	if rank(perm) < rank(need) {
		return "", fmt.Sprintf("resolving needs %s permission on this repository (you have %s)", need, outcome.Inline(perm)) + unreadableTeams(unreadable), nil
	}
	return strings.ToLower(perm), "", nil
}

// permitted is the last rule of who may resolve: login is listed in
// resolvers.users or is an active member of one of resolvers.teams, else
// perm is their permission on the repository. A team phasegate cannot read
// is neither membership nor its absence: the refusal names it
// (unreadableTeams), instead of the commenter being told, wrongly, that
// they lack permission and nothing more. A workflow's GITHUB_TOKEN can
// never read teams.
func permitted(cfg config.Config, login string, fs facts) (perm string, listed bool, unreadable []string, n *need) {
	if containsFold(cfg.Resolvers.Users, login) {
		return "", true, nil, nil
	}
	for _, team := range cfg.Resolvers.Teams {
		f, n := fs.of(need{team: team, login: login})
		switch {
		case n != nil:
			return "", false, nil, n
		case f.unreadable:
			unreadable = append(unreadable, team)
		case f.member:
			return "", true, nil, nil
		}
	}
	f, n := fs.of(need{login: login})
	return f.perm, false, unreadable, n
}

// unreadableTeams is what a refusal adds when some of resolvers.teams could
// not be read: "" when all could.
func unreadableTeams(teams []string) string {
	if len(teams) == 0 {
		return ""
	}
	return fmt.Sprintf("; and phasegate cannot read team membership of %s (resolvers.teams) with its token, so it could not tell whether you are in it: "+
		"team membership needs the phasegate App or a token with organisation Members: read (a workflow's GITHUB_TOKEN never has it)", outcome.Inline(strings.Join(teams, ", ")))
}

// rank orders repository permissions: 0 for none or one not known.
func rank(p string) int {
	return slices.Index([]string{"read", "triage", "write", "maintain", "admin"}, strings.ToLower(p)) + 1
}

func containsFold(list []string, s string) bool {
	return slices.ContainsFunc(list, func(x string) bool { return x != "" && strings.EqualFold(x, s) })
}
