package pages

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/phasegate/phasegate/internal/command"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/web"
)

// maxChangedReads bounds the comparisons one issue page asks GitHub for
// (what a push changed after an approval).
const maxChangedReads = 10

// Issue is the details page of an issue: the thread folded exactly as the
// handler folds it (decide.Handler.Inspect, which writes nothing), with
// whether viewer may resolve each pending decision.
func (p *Source) Issue(ctx context.Context, owner, repo string, issue int, viewer string) (*web.IssuePage, error) {
	if issue <= 0 {
		return nil, web.ErrNotFound
	}
	gh, h, err := p.open(ctx, owner, repo)
	if err != nil {
		return nil, err
	}
	is, err := gh.Issue(ctx, owner, repo, issue)
	if err != nil {
		return nil, fmt.Errorf("reading %s/%s#%d: %w", owner, repo, issue, notFound(err))
	}
	in, err := h.Inspect(ctx, gh, owner, repo, issue)
	if err != nil {
		return nil, fmt.Errorf("folding %s/%s#%d: %w", owner, repo, issue, notFound(err))
	}
	p.pending.setTitle(owner, repo, issue, is.Title)
	page := &web.IssuePage{Owner: owner, Repo: repo, Issue: issue, Title: is.Title, URL: is.HTMLURL, Frozen: in.State.Frozen()}
	for _, tm := range in.State.Tampered {
		page.Tampering = append(page.Tampering, web.TamperView{CommentID: tm.CommentID, Reason: tm.Reason})
	}
	page.History = history(in)
	state := foldState(decide.Folded{State: in.State, Comments: in.Comments})
	asks, changedReads := maxMayChecksPerRequest, maxChangedReads
	waiting := p.waitingOn(ctx, owner, repo, issue)
	latest := map[*ledger.Outcome]bool{}
	for _, o := range in.State.LatestPerPhase() {
		latest[o] = true
	}
	for _, o := range in.State.Outcomes {
		ov := outcomeView(in, o, latest[o])
		for _, d := range o.Decisions {
			dv := decisionView(in, d)
			switch {
			case dv.Pending && in.State.Frozen():
				dv.WhyNot = whyFrozenThread
			case dv.Pending && !latest[o]:
				dv.WhyNot = "a newer outcome of this phase replaced this one"
			case dv.Pending:
				dv.MayResolve, dv.WhyNot = p.mayResolve(ctx, gh, owner, repo, issue, state, d.ID, viewer, &asks)
			case changedReads > 0:
				changedReads--
				lines, err := h.ChangedSinceApproval(ctx, gh, owner, repo, in, o, d)
				if err != nil {
					p.cfg.Logger.Warn("pages: what changed since an approval could not be read", "repository", owner+"/"+repo, "issue", issue, "error", err)
				}
				dv.ChangedSinceApproval = lines
			}
			if dv.Pending && latest[o] {
				dv.Deployments = waiting[strings.ToUpper(d.ID)]
			}
			ov.Decisions = append(ov.Decisions, dv)
		}
		page.Outcomes = append(page.Outcomes, ov)
	}
	return page, nil
}

func outcomeView(in *decide.Inspection, o *ledger.Outcome, latest bool) web.OutcomeView {
	ov := web.OutcomeView{ID: o.ID, Phase: o.Outcome.Phase, Commit: o.Commit}
	if c, ok := in.Comment(o.CommentID); ok {
		ov.CommentURL, ov.PostedAt = c.HTMLURL, c.CreatedAt
	}
	pending := 0
	for _, d := range o.Decisions {
		if d.Resolution == nil {
			pending++
		}
	}
	switch {
	case !latest:
		ov.Status = "superseded"
	case pending > 0:
		ov.Status = "pending"
	default:
		ov.Status = "decided"
	}
	var parts []string
	if o.Outcome.Feature != "" {
		parts = append(parts, o.Outcome.Feature)
	}
	parts = append(parts, fmt.Sprintf("%d produced, %d findings, %d decisions (%d pending)",
		len(o.Outcome.Produced), len(o.Outcome.Findings), len(o.Decisions), pending))
	ov.Summary = strings.Join(parts, ": ")
	return ov
}

// decisionView is one decision, pending or as resolved.
func decisionView(in *decide.Inspection, d *ledger.Decision) web.DecisionView {
	rec, _ := d.RecommendedOption()
	dv := web.DecisionView{ID: d.ID, Type: d.Type, Question: d.Question, Options: optionViews(d), Recommendation: rec,
		Blocking: d.Blocking, Resolvers: resolversInWords(in.Config), Pending: d.Resolution == nil}
	if d.Resolution == nil {
		return dv
	}
	r := d.Resolution
	dv.ResolvedBy, dv.Option = r.By, r.Option
	if c, ok := in.Comment(d.ResolutionComment); ok {
		dv.ResolutionURL, dv.ResolvedAt = c.HTMLURL, c.CreatedAt
	}
	if c, ok := in.Comment(r.Command); ok {
		dv.Reason = commandReason(c.Body, d.ID)
	}
	return dv
}

// commandReason is the reason a /resolve command of decision gave: what
// follows its option on the command's line.
func commandReason(body, decision string) string {
	for _, c := range command.Parse(body) {
		if c.Kind == command.Resolve && strings.EqualFold(c.ID, decision) {
			f := strings.Fields(c.Raw)
			if len(f) > 3 {
				return strings.Join(f[3:], " ")
			}
		}
	}
	return ""
}

// resolversInWords says who may resolve the repository's decisions, from
// its configuration (resolvers:), and who never may.
func resolversInWords(cfg config.Config) string {
	r := cfg.Resolvers
	who := []string{"anyone with " + r.PermissionOrDefault() + " permission or more on the repository"}
	if len(r.Users) > 0 {
		who = append(who, "@"+strings.Join(r.Users, ", @"))
	}
	for _, t := range r.Teams {
		who = append(who, "members of @"+t)
	}
	s := strings.Join(who, ", or ") + "; never bots, phasegate itself, or the accounts that pushed or authored the change that carried the outcome"
	if len(r.Exclude) > 0 {
		s += ", nor @" + strings.Join(r.Exclude, ", @")
	}
	return s
}

// history is every phasegate comment and every command of the thread,
// oldest first, with links.
func history(in *decide.Inspection) []web.HistoryEntry {
	identity := in.Config.IdentityOrDefault()
	tampered := map[int64]string{}
	for _, tm := range in.State.Tampered {
		tampered[tm.CommentID] = tm.Reason
	}
	ignored := map[int64]string{}
	for _, ig := range in.State.Ignored {
		ignored[ig.CommentID] = ig.Reason
	}
	cs := slices.Clone(in.Comments)
	slices.SortStableFunc(cs, func(a, b ghclient.Comment) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	var out []web.HistoryEntry
	for _, c := range cs {
		what := commandsOf(c.Body)
		if strings.EqualFold(c.User, identity) {
			what = ourComment(in.State, c)
		}
		if what == "" {
			continue
		}
		if why, ok := tampered[c.ID]; ok {
			what += " — tampered: " + why
		} else if why, ok := ignored[c.ID]; ok {
			what += " — did not count: " + why
		}
		out = append(out, web.HistoryEntry{At: c.CreatedAt, Who: c.User, What: what, CommentURL: c.HTMLURL})
	}
	return out
}

// ourComment says what one of phasegate's comments was.
func ourComment(st *ledger.State, c ghclient.Comment) string {
	marks := outcome.ParseMarkers(c.Body)
	if len(marks) == 0 {
		return ""
	}
	m := marks[0]
	switch m.Kind {
	case outcome.KindOutcome:
		phase := ""
		for _, o := range st.Outcomes {
			if o.CommentID == c.ID {
				phase = " " + o.Outcome.Phase
			}
		}
		return "posted outcome" + phase
	case outcome.KindResolution:
		return fmt.Sprintf("resolved %s: %s (by @%s, comment %d)", m.Decision, m.Option, m.By, m.Command)
	case outcome.KindReply:
		return fmt.Sprintf("replied to comment %d", m.Command)
	}
	return "phasegate comment"
}

// commandsOf is the phasegate commands a person's comment holds, as
// written; "" for none.
func commandsOf(body string) string {
	var lines []string
	for _, c := range command.Parse(body) {
		lines = append(lines, strings.TrimSpace(c.Raw))
	}
	return strings.Join(lines, "; ")
}
