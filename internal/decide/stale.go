package decide

import (
	"context"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/outcome"
)

// An approval covers the work it was given on (docs/security.md, attack
// 5): a resolution records the commit it was given on (head= in its
// marker), and when the change moves after it and the push changes what
// the decision covers (decisions.invalidate_on_push: the outcome's unit by
// default), the decision is pending again on the new head until a person
// re-confirms it with a new command; the ledger keeps both resolutions.
// This is GitHub's "dismiss stale approvals" and policy-bot's
// invalidate_on_push. A negative resolution is final: no push un-rejects.

// staleness is why a resolution no longer covers a commit.
type staleness struct {
	decision, option, given string
	// files are the changed files the decision covers; empty when the
	// history was rewritten (a force push) or the commit is gone.
	files []string
	// why is set instead of files when the files cannot be listed.
	why string
}

// staleOf says whether d's resolution in effect is stale at sha (nil: it
// still covers sha), from the comparison of the commit it was given on
// with sha (a need while fs lacks it). o is d's outcome.
func staleOf(cfg config.Config, o *ledger.Outcome, d *ledger.Decision, sha string, fs facts) (*staleness, *need, error) {
	r := d.Resolution
	mode := cfg.Decisions.InvalidateOnPushOrDefault()
	if r == nil || mode == config.InvalidateNone || r.Head == "" || strings.EqualFold(r.Head, sha) || ledger.IsNegative(r.Option, cfg.Decisions.NegativeOptions) {
		return nil, nil, nil
	}
	st := &staleness{decision: d.ID, option: r.Option, given: r.Head}
	f, n := fs.of(need{base: r.Head, head: sha})
	switch err := f.err; {
	case n != nil:
		return nil, n, nil
	case ghclient.IsNotFound(err) || ghclient.StatusCode(err) == 422:
		st.why = "the commit it was given on is gone"
		return st, nil, nil
	case err != nil:
		return nil, nil, fmt.Errorf("comparing %s with %s for %s: %w", outcome.ShortSHA(r.Head), outcome.ShortSHA(sha), d.ID, err)
	}
	switch f.cmp.Status {
	case "identical":
		return nil, nil, nil
	case "behind", "diverged":
		st.why = "the branch's history was rewritten since"
		return st, nil, nil
	}
	for name := range f.cmp.Files {
		if mode == config.InvalidateAll || covers(o, name) {
			st.files = append(st.files, name)
		}
	}
	if len(st.files) == 0 {
		return nil, nil, nil
	}
	sort.Strings(st.files)
	return st, nil, nil
}

// compare is gh.CompareWhole, once per process for a pair of commits: a
// comparison GitHub lists only in part is read from the two trees, never
// taken in part, which could leave out a file the decision covers.
func (h *Handler) compare(ctx context.Context, gh GitHub, owner, repo, base, head string) (ghclient.Comparison, error) {
	key := "compare:" + strings.ToLower(owner+"/"+repo) + "@" + base + "..." + head
	if v, ok := h.cached(key); ok {
		return v.(ghclient.Comparison), nil
	}
	cmp, err := gh.CompareWhole(ctx, owner, repo, base, head, h.TreeLimits)
	if err != nil {
		return cmp, err
	}
	h.cache(key, cmp)
	return cmp, nil
}

// covers reports whether a change to file name changes what the outcome's
// decisions are about: a file of the outcome's directory (other Phase
// Outcome files aside: the next phase's outcome is not a change to this
// one's work) or a path one of its produced entries names.
func covers(o *ledger.Outcome, name string) bool {
	if o == nil || o.Outcome == nil {
		return true
	}
	for _, p := range o.Outcome.Produced {
		loc := producedPath(p.Location)
		if loc != "" && (name == loc || strings.HasPrefix(name, strings.TrimSuffix(loc, "/")+"/")) {
			return true
		}
	}
	if k := artifact.ClassifyPath(name); k != nil && k.ID == "outcome.phase-outcome" {
		return false
	}
	dir := path.Dir(o.Source)
	return dir == "." || strings.HasPrefix(name, dir+"/")
}

// producedPath is a produced entry's location as a repository path, or ""
// when it names something else ("issue body", a URL).
func producedPath(loc string) string {
	loc = strings.TrimSpace(loc)
	loc = strings.TrimPrefix(loc, "./")
	if loc == "" || strings.ContainsAny(loc, " \t\n") || strings.Contains(loc, "://") || strings.HasPrefix(loc, "/") || strings.Contains(loc, "..") {
		return ""
	}
	return loc
}

// describe says what a stale decision's status names: the decision, the
// commit it was given on, how to re-confirm it, and what changed since.
func (s *staleness) describe() string {
	head := fmt.Sprintf("%s (%s on %s) is stale, re-confirm with /resolve %s %s: ", s.decision, s.option, outcome.ShortSHA(s.given), s.decision, s.option)
	if s.why != "" {
		return head + s.why
	}
	return head + fmt.Sprintf("%d file(s) changed since: %s", len(s.files), strings.Join(s.files, ", "))
}

// unstale is outcomes with each stale decision unresolved, for the verdict
// of one commit, and the description of the first stale one ("" for none).
func unstale(cfg config.Config, outcomes []*ledger.Outcome, sha string, fs facts) ([]*ledger.Outcome, string, *need, error) {
	out := make([]*ledger.Outcome, 0, len(outcomes))
	first := ""
	for _, o := range outcomes {
		cp := *o
		cp.Decisions = slices.Clone(o.Decisions)
		for i, d := range o.Decisions {
			if d.Resolution == nil || !d.Blocking {
				continue
			}
			st, n, err := staleOf(cfg, o, d, sha, fs)
			if n != nil || err != nil {
				return nil, "", n, err
			}
			if st != nil {
				dd := *d
				dd.Resolution, dd.ResolutionComment = nil, 0
				cp.Decisions[i] = &dd
				if first == "" {
					first = st.describe()
				}
			}
		}
		out = append(out, &cp)
	}
	return out, first, nil, nil
}
