package check

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/outcome"
)

// Phase Outcome rules (docs/contracts/outcome.md, docs/contracts/README.md). A group is
// one outcome file: a *.outcome.yaml, or a YAML file whose top-level keys
// include phase and pending_decisions. Every outcome is its own unit: each
// skill run writes a new, immutable outcome and the older one stays as the
// record, so there is no "latest" outcome to pick from files alone — every
// outcome file gets a Status.
//
// The schema already enforces the three sections, the field types, a
// non-empty id/type/question, at least one option, blocking as a boolean and
// issue as a positive integer; these rules say what a schema cannot.

var _ = registerFamily(&family{
	name:  "outcome",
	check: checkOutcome,
	rules: []Rule{
		{ID: "outcome.decision-id-unique", Severity: SeverityError, Basis: "S", Summary: "Each `pending_decisions[].id` appears once in the outcome: resolutions reference the decision ID and `/resolve D-001` cannot tell two decisions of one outcome apart (docs/contracts/outcome.md), so a duplicate is unresolvable."},
		{ID: "outcome.decision-id-format", Severity: SeverityWarning, Basis: "I", Summary: "A decision id looks like `D-001` (`^D-\\d{3,}$`); one with white space or a colon cannot be typed in `/resolve <id>`."},
		{ID: "outcome.options-count", Severity: SeverityWarning, Basis: "I", Summary: "A decision offers at least two options (one option is no choice)."},
		{ID: "outcome.options-unique", Severity: SeverityWarning, Basis: "I", Summary: "A decision's options are distinct, also ignoring case."},
		{ID: "outcome.option-single-word", Severity: SeverityWarning, Basis: "I", Summary: "An option is one word (`request-changes`, not `request changes`): `/resolve D-001 <option> [rationale…]` reads the first word as the option."},
		{ID: "outcome.option-reserved", Severity: SeverityWarning, Basis: "I", Summary: "No option is called `recommended`: `/resolve D-002 recommended` means the decision's recommended option (docs/contracts/outcome.md), so such an option is ambiguous unless it is itself the recommended one."},
		{ID: "outcome.recommended-in-options", Severity: SeverityWarning, Basis: "I", Summary: "`recommended` is one of the decision's `options` (`/resolve D-002 recommended` must take a real option)."},
		{ID: "outcome.recommended-missing", Severity: SeverityWarning, Basis: "I", Summary: "A decision other than an approval names its `recommended` option (the seed says each decision carries one; its own approval example does not, and an agent does not recommend approving its own work)."},
		{ID: "outcome.approval-blocking", Severity: SeverityWarning, Basis: "I", Summary: "An `approval` decision is `blocking: true` (the approval gates block pipeline advancement)."},
		{ID: "outcome.approval-has-approve", Severity: SeverityWarning, Basis: "I", Summary: "An `approval` decision offers `approve` (phasegate advances the phase when an approval resolves `approve`: docs/contracts/outcome.md)."},
		{ID: "outcome.phase-needs-approval", Severity: SeverityWarning, Basis: "R", Summary: "An outcome of an approval phase (config `outcome.approval_phases`, default requirements, technical-plan, develop) carries an `approval` decision."},
		{ID: "outcome.capture-has-capture", Severity: SeverityWarning, Basis: "I", Summary: "A `capture-out-of-scope` decision offers `capture` (phasegate opens an issue when it resolves `capture`: docs/contracts/outcome.md)."},
		{ID: "outcome.capture-names-finding", Severity: SeverityWarning, Basis: "I", Summary: "A `capture-out-of-scope` decision's question names one of the outcome's findings by its title (the captured issue is opened from that finding, docs/contracts/outcome.md)."},
		{ID: "outcome.finding-category", Severity: SeverityWarning, Basis: "S", Summary: "A finding states its `proposed_category`; a missing or unknown one is treated as in-scope-blocking (the Phase Outcome contract: \"the safe default is in-scope, blocking\")."},
		{ID: "outcome.blocking-finding-has-decision", Severity: SeverityWarning, Basis: "I", Summary: "An in-scope-blocking finding (explicit, or by default) has a blocking decision whose question names it by its title."},
		{ID: "outcome.issue-resolvable", Severity: SeverityWarning, Basis: "I", Summary: "The outcome names its issue: `issue:`, or a numbered `feature: feature-NNN` (docs/contracts/outcome.md); otherwise only the action can post it, on the pull request of its run."},
		{ID: "outcome.immutable", Severity: SeverityError, Basis: "S", Summary: "A committed Phase Outcome is never modified, removed or renamed (docs/contracts/outcome.md): on a push, a changed (not added) outcome file is an error, and so is a removed one (a rename is a removal plus an addition; a removed file is one whose path names a Phase Outcome: `*.outcome.yaml` or a configured glob) — write a new Phase Outcome instead. Needs a base revision."},
	},
})

// Finding categories of the Phase Outcome contract (docs/contracts/outcome.md). A missing or unknown category is treated
// as in-scope-blocking.
const outcomeBlockingCategory = "in-scope-blocking"

var outcomeCategories = map[string]bool{
	"in-scope-blocking":   true,
	"in-scope-deferrable": true,
	"out-of-scope":        true,
	"pre-existing":        true,
}

// defaultApprovalPhases are the phases of the three approval gates (PREQ,
// plan, UAT) of the devwork pipeline.
var defaultApprovalPhases = []string{"requirements", "technical-plan", "develop"}

// outcomeRecommendedWord is the option word that `/resolve D-002 recommended`
// reads as "the decision's recommended option" (docs/contracts/outcome.md).
const outcomeRecommendedWord = "recommended"

var outcomeIDRE = regexp.MustCompile(`^D-[0-9]{3,}$`)

// outcomeDecision is what the rules read of one pending decision.
type outcomeDecision struct {
	index    int
	obj      map[string]any
	id       string
	typ      string
	question string
	options  []string
	// hasOptions says whether options is a list at all.
	hasOptions bool
	blocking   bool
}

func checkOutcome(c *ruleCtx, g *Group) {
	for _, d := range g.Of("outcome.phase-outcome") {
		checkOutcomeDoc(c, d)
	}
}

func checkOutcomeDoc(c *ruleCtx, doc *artifact.Document) {
	outcomeCheckImmutable(c, doc)
	obj := asObj(doc.Value)
	if obj == nil {
		return
	}
	var decisions []outcomeDecision
	for i, e := range asList(obj["pending_decisions"]) {
		m := asObj(e)
		if m == nil {
			continue
		}
		d := outcomeDecision{index: i, obj: m, id: strOr(m, "id"), typ: strOr(m, "type"), question: strOr(m, "question")}
		d.options, d.hasOptions = stringList(m, "options")
		d.blocking, _ = boolean(m, "blocking")
		decisions = append(decisions, d)
	}
	outcomeCheckIDs(c, doc, decisions)
	for _, d := range decisions {
		outcomeCheckOptions(c, doc, d)
		outcomeCheckDecisionType(c, doc, d, obj)
	}
	outcomeCheckApprovalPhase(c, doc, obj, decisions)
	outcomeCheckFindings(c, doc, obj, decisions)
	_, hasIssue := obj["issue"]
	feature, featureIsStr := str(obj, "feature")
	_, hasFeature := obj["feature"]
	if !hasIssue && (featureIsStr || !hasFeature) { // a wrong type is the schema's
		if _, ok := outcome.IssueOf(obj, 0); !ok {
			what := "has no `feature`"
			if featureIsStr {
				what = "has `feature: " + display(feature) + "`, which carries no issue number"
			}
			c.report("outcome.issue-resolvable", doc, ptr("feature"), "the outcome has no `issue` and %s (docs/contracts/outcome.md: feature-NNN names issue NNN): `phasegate validate` cannot tell which issue it belongs to, and the action will post it on the pull request of its run instead of the feature's issue; add `issue: <number>`", what)
		}
	}
	outcomeStatus(c, doc, obj, decisions)
}

// outcomeCheckImmutable: a committed outcome file is never modified.
func outcomeCheckImmutable(c *ruleCtx, doc *artifact.Document) {
	if c.opts.Changed == nil {
		return
	}
	rel := strings.TrimPrefix(doc.Path, c.opts.Prefix)
	if c.ask(depChangeOf, rel); c.opts.Changed[rel] == Modified {
		c.report("outcome.immutable", doc, nil, "this Phase Outcome was modified after it was committed: outcomes are immutable (resolutions on the issue reference its decision IDs); restore the committed version and write a new Phase Outcome instead")
	}
}

// outcomeRemoved: a committed outcome file is never removed, nor renamed
// (which the base comparison sees as a removal and an addition). A removed
// file cannot be read, so it counts as an outcome when its path names one:
// a configured glob of outcome.phase-outcome, or else *.outcome.yaml (and
// no configured glob of another kind); an ignored path is not one. The
// finding is on the removed path, at line 1.
func outcomeRemoved(opts *Options) []Finding {
	if opts.Changed == nil {
		return nil
	}
	var removed, added []string
	for rel, ch := range opts.Changed {
		if !outcomeNamedByPath(rel, opts) {
			continue
		}
		switch ch {
		case Deleted:
			removed = append(removed, rel)
		case Added:
			added = append(added, rel)
		}
	}
	sort.Strings(removed)
	sort.Strings(added)
	var out []Finding
	for _, rel := range removed {
		what := "was removed after it was committed"
		if i := slices.IndexFunc(added, func(a string) bool { return path.Base(a) == path.Base(rel) }); i >= 0 {
			what += " (renamed to " + display(opts.Prefix+added[i]) + "?)"
		}
		out = append(out, Finding{File: opts.Prefix + rel, Line: 1, Column: 1, Kind: "outcome.phase-outcome", Rule: "outcome.immutable", Severity: SeverityError,
			Message: "this Phase Outcome " + what + ": outcomes are immutable (resolutions on the issue reference its decision IDs, and a renamed copy is a new outcome); restore it at " + display(opts.Prefix+rel) + " and write a new Phase Outcome instead"})
	}
	return out
}

// outcomeNamedByPath reports whether rel names a Phase Outcome by its path alone.
func outcomeNamedByPath(rel string, opts *Options) bool {
	match := func(g string) bool { ok, _ := doublestar.Match(g, rel); return ok }
	if slices.ContainsFunc(opts.Config.Ignore, match) {
		return false
	}
	for id, globs := range opts.Config.Artifacts {
		if slices.ContainsFunc(globs, match) {
			return id == "outcome.phase-outcome"
		}
	}
	k := artifact.ClassifyPath(rel)
	return k != nil && k.ID == "outcome.phase-outcome"
}

func outcomeCheckIDs(c *ruleCtx, doc *artifact.Document, decisions []outcomeDecision) {
	first := map[string]int{}
	for _, d := range decisions {
		if _, isStr := str(d.obj, "id"); !isStr || blank(d.id) {
			continue // the schema reports a missing or empty id
		}
		at := ptr("pending_decisions", d.index, "id")
		if j, dup := first[d.id]; dup {
			c.report("outcome.decision-id-unique", doc, at, "decision id %s is used twice (also `pending_decisions[%d]`): `/resolve %s …` could not tell the two apart, and an outcome cannot be edited once committed; give each decision its own id (D-001, D-002, …)", display(d.id), j, outcomeCmdID(d))
		} else {
			first[d.id] = d.index
		}
		if !outcomeIDRE.MatchString(d.id) {
			switch {
			case strings.ContainsAny(d.id, " \t\r\n"):
				c.report("outcome.decision-id-format", doc, at, "decision id %s contains white space, so `/resolve <id> <option>` cannot name it; use the form D-001", display(d.id))
			case strings.Contains(d.id, ":"):
				c.report("outcome.decision-id-format", doc, at, "decision id %s contains a colon, which `/resolve <phase>:<id>` reads as a phase prefix; use the form D-001", display(d.id))
			default:
				c.report("outcome.decision-id-format", doc, at, "decision id %s is not of the form D-001 (D- and at least three digits)", display(d.id))
			}
		}
	}
}

// outcomeLabel names a decision in messages: its id, or its index.
func outcomeLabel(d outcomeDecision) string {
	if !blank(d.id) {
		return "decision " + display(d.id)
	}
	return fmt.Sprintf("`pending_decisions[%d]`", d.index)
}

func outcomeCheckOptions(c *ruleCtx, doc *artifact.Document, d outcomeDecision) {
	label := outcomeLabel(d)
	rec, hasRec := str(d.obj, "recommended")
	if d.hasOptions {
		raw := asList(d.obj["options"])
		if len(raw) == 1 {
			only, _ := raw[0].(string)
			c.report("outcome.options-count", doc, ptr("pending_decisions", d.index, "options"), "%s offers a single option (%s): there is nothing to decide; add the alternative (e.g. reject, discard or defer)", label, display(only))
		}
		seen := map[string]int{}
		for j, e := range raw {
			o, isStr := e.(string)
			if !isStr || blank(o) {
				continue
			}
			at := ptr("pending_decisions", d.index, "options", j)
			key := strings.ToLower(o)
			if k, dup := seen[key]; dup {
				prev, _ := raw[k].(string)
				if prev == o {
					c.report("outcome.options-unique", doc, at, "%s lists option %s twice (also `options[%d]`): remove the repeat", label, display(o), k)
				} else {
					c.report("outcome.options-unique", doc, at, "%s lists options %s and %s, which differ only in case: `/resolve` cannot be relied on to tell them apart; keep one", label, display(prev), display(o))
				}
			} else {
				seen[key] = j
			}
			if strings.ContainsAny(strings.TrimSpace(o), " \t\r\n") {
				c.report("outcome.option-single-word", doc, at, "option %s of %s is several words: `/resolve %s <option> [rationale…]` reads only the first word as the option and the rest as rationale, so this option cannot be chosen; join the words with hyphens (%s)", display(o), label, outcomeCmdID(d), display(strings.Join(strings.Fields(o), "-")))
			}
			if strings.EqualFold(strings.TrimSpace(o), outcomeRecommendedWord) && !(hasRec && rec == o) {
				c.report("outcome.option-reserved", doc, at, "%s has an option called %s, but `/resolve %s recommended` takes the decision's recommended option (docs/contracts/outcome.md), so this option is ambiguous; rename it", label, display(o), outcomeCmdID(d))
			}
		}
		if hasRec && !slices.Contains(d.options, rec) {
			at := ptr("pending_decisions", d.index, "recommended")
			if outcomeHasFold(d.options, rec) {
				c.report("outcome.recommended-in-options", doc, at, "%s recommends %s, which matches an option only when case is ignored: write it exactly as in `options` (%s)", label, display(rec), quoteList(d.options))
			} else {
				c.report("outcome.recommended-in-options", doc, at, "%s recommends %s, which is not one of its options (%s): `/resolve %s recommended` would fail; recommend one of the options", label, display(rec), quoteList(d.options), outcomeCmdID(d))
			}
		}
	}
	if _, present := d.obj["recommended"]; !present && d.typ != "approval" && len(d.options) >= 2 {
		c.report("outcome.recommended-missing", doc, ptr("pending_decisions", d.index), "%s names no `recommended` option: the seed asks each decision to carry a recommendation with reasoning (it is optional, but without it `/resolve %s recommended` has nothing to take); add `recommended: <option>`", label, outcomeCmdID(d))
	}
}

// outcomeCmdID is the decision's id for a command example in a message:
// the id when it has the D-001 form (so no agent text reaches the message
// unquoted), else <id>.
func outcomeCmdID(d outcomeDecision) string {
	if outcomeIDRE.MatchString(d.id) {
		return d.id
	}
	return "<id>"
}

func outcomeCheckDecisionType(c *ruleCtx, doc *artifact.Document, d outcomeDecision, obj map[string]any) {
	label := outcomeLabel(d)
	switch d.typ {
	case "approval":
		if b, ok := boolean(d.obj, "blocking"); ok && !b {
			c.report("outcome.approval-blocking", doc, ptr("pending_decisions", d.index, "blocking"), "%s is an approval but is not blocking: an approval gate must hold the next phase until it is resolved; set `blocking: true`", label)
		}
		if d.hasOptions && len(d.options) > 0 && !outcomeHasFold(d.options, "approve") {
			c.report("outcome.approval-has-approve", doc, ptr("pending_decisions", d.index, "options"), "approval %s does not offer `approve` (its options are %s): the issue moves to the next phase only when an approval resolves approve (docs/contracts/outcome.md); use [approve, request-changes, reject]", label, quoteList(d.options))
		}
	case "capture-out-of-scope":
		if d.hasOptions && len(d.options) > 0 && !outcomeHasFold(d.options, "capture") {
			c.report("outcome.capture-has-capture", doc, ptr("pending_decisions", d.index, "options"), "%s is a capture-out-of-scope decision but does not offer `capture` (its options are %s): only `capture` opens the follow-up issue (docs/contracts/outcome.md); use [capture, discard]", label, quoteList(d.options))
		}
		if blank(d.question) {
			return
		}
		titles := outcomeFindingTitles(obj)
		if slices.ContainsFunc(titles, func(t string) bool { return looselyMatches(d.question, t) }) {
			return
		}
		if len(titles) == 0 {
			c.report("outcome.capture-names-finding", doc, ptr("pending_decisions", d.index, "question"), "%s asks to capture something out of scope, but the outcome has no findings: add the out-of-scope item as a finding (the captured issue is opened from it)", label)
		} else {
			c.report("outcome.capture-names-finding", doc, ptr("pending_decisions", d.index, "question"), "the question of %s names none of the outcome's findings (%s): quote the title of the finding to capture, e.g. \"Capture '<title>' as separate issue?\", so that the captured issue is opened from it", label, quoteList(titles))
		}
	}
}

func outcomeFindingTitles(obj map[string]any) []string {
	var out []string
	for _, e := range asList(obj["findings"]) {
		if t := strOr(asObj(e), "title"); !blank(t) {
			out = append(out, t)
		}
	}
	return out
}

func outcomeCheckApprovalPhase(c *ruleCtx, doc *artifact.Document, obj map[string]any, decisions []outcomeDecision) {
	phase, ok := str(obj, "phase")
	if !ok || blank(phase) || asList(obj["pending_decisions"]) == nil {
		return
	}
	phases := c.opts.Config.Outcome.ApprovalPhases
	if len(phases) == 0 {
		phases = defaultApprovalPhases
	}
	norm := func(p string) string { return strings.ToLower(strings.TrimPrefix(strings.TrimSpace(p), "/")) }
	if !slices.ContainsFunc(phases, func(p string) bool { return norm(p) == norm(phase) }) ||
		slices.ContainsFunc(decisions, func(d outcomeDecision) bool { return d.typ == "approval" }) {
		return
	}
	c.report("outcome.phase-needs-approval", doc, ptr("pending_decisions"), "phase %s is an approval gate but the outcome has no `approval` decision: add one (e.g. `type: approval`, `options: [approve, request-changes, reject]`, `blocking: true`) so that the pipeline waits for a person", display(phase))
}

func outcomeCheckFindings(c *ruleCtx, doc *artifact.Document, obj map[string]any, decisions []outcomeDecision) {
	for i, e := range asList(obj["findings"]) {
		f := asObj(e)
		if f == nil {
			continue
		}
		title := strOr(f, "title")
		name := fmt.Sprintf("finding `findings[%d]`", i)
		if !blank(title) {
			name = "finding " + display(title)
		}
		cat, isStr := str(f, "proposed_category")
		_, present := f["proposed_category"]
		byDefault := false
		switch {
		case !present:
			byDefault = true
			c.report("outcome.finding-category", doc, ptr("findings", i), "%s has no `proposed_category`, so it is treated as in-scope-blocking (the safe default); state the category (in-scope-blocking, in-scope-deferrable, out-of-scope or pre-existing) with its reasoning", name)
		case isStr && !outcomeCategories[cat]:
			byDefault = true
			c.report("outcome.finding-category", doc, ptr("findings", i, "proposed_category"), "%s has the unknown category %s, so it is treated as in-scope-blocking (the safe default); use in-scope-blocking, in-scope-deferrable, out-of-scope or pre-existing", name, display(cat))
		case !isStr:
			continue // the schema reports a category of the wrong type
		}
		if !byDefault && cat != outcomeBlockingCategory {
			continue
		}
		if blank(title) {
			continue // the schema reports the missing title; nothing to match
		}
		why := "is in-scope-blocking"
		if byDefault {
			why = "counts as in-scope-blocking"
		}
		if slices.ContainsFunc(decisions, func(d outcomeDecision) bool { return d.blocking && looselyMatches(d.question, title) }) {
			continue
		}
		var nonBlocking []string // every decision that names it is then non-blocking
		for _, d := range decisions {
			if looselyMatches(d.question, title) {
				nonBlocking = append(nonBlocking, outcomeLabel(d))
			}
		}
		if len(nonBlocking) > 0 {
			c.report("outcome.blocking-finding-has-decision", doc, ptr("findings", i, "title"), "%s %s, but %s about it is not blocking: make that decision blocking, or re-categorise the finding with its reasoning", name, why, strings.Join(nonBlocking, " and "))
			continue
		}
		c.report("outcome.blocking-finding-has-decision", doc, ptr("findings", i, "title"), "%s %s, but no blocking decision names it: add a blocking decision whose question quotes its title (e.g. \"Fix '<title>' before the next phase?\"), or re-categorise the finding with its reasoning", name, why)
	}
}

// outcomeStatus records the outcome's unit and state. It records no
// Decisions: a pending decision does not count for the contracts gate; a
// blocking decision holds only once it is resolved negatively, which only
// the issue's comments know (docs/contracts/README.md: phasegate/decisions, not
// phasegate/contracts).
func outcomeStatus(c *ruleCtx, doc *artifact.Document, obj map[string]any, decisions []outcomeDecision) {
	feature, phase := strings.TrimSpace(strOr(obj, "feature")), strings.TrimSpace(strOr(obj, "phase"))
	unit := "Outcome " + doc.Path
	if feature != "" && phase != "" {
		unit = "Outcome " + feature + " " + phase
	}
	blocking := 0
	for _, d := range decisions {
		if d.blocking {
			blocking++
		}
	}
	state := "no decisions pending"
	if len(decisions) > 0 {
		state = fmt.Sprintf("%s pending (%d blocking)", countWord(len(decisions), "decision", "decisions"), blocking)
	}
	if n := len(asList(obj["findings"])); n > 0 {
		state += ", " + countWord(n, "finding", "findings")
	}
	if n, ok := outcome.IssueOf(obj, 0); ok {
		state += fmt.Sprintf(", issue #%d", n)
	} else if _, present := obj["issue"]; !present {
		state += ", issue: the run's pull request"
	}
	c.status(Status{Family: "outcome", Unit: unit, State: state})
}

func outcomeHasFold(list []string, s string) bool {
	return slices.ContainsFunc(list, func(e string) bool { return strings.EqualFold(strings.TrimSpace(e), strings.TrimSpace(s)) })
}

// quoteList renders agent-written values as a comma-separated list.
func quoteList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = display(s)
	}
	return strings.Join(q, ", ")
}
