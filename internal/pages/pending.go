package pages

import (
	"cmp"
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/web"
)

// The pending index feeds the inbox: the pending decisions of every issue
// the server folded, per repository, kept from the handler's folds
// (decide.Handler.Observe: a comment handled live, a reconcile of an issue
// or a repository, an outcome posted, a read). An issue with nothing
// pending is dropped. Reconcile re-reads only the threads that changed
// (decide.FoldMemo); the index lives in memory next to that memo, so after
// a restart both are empty and the first pass reads every pending thread
// again; and when the index must forget an issue (its bound), it makes the
// memo forget it too, so the next pass reads it again rather than skip it.

// DefaultPendingIssues bounds the issues the index holds.
const DefaultPendingIssues = 50_000

type issueEntry struct {
	owner, repo string
	issue       int
	title       string
	// state names the fold the entry comes from (its newest phasegate
	// comment and its comments): the MayResolve cache's key.
	state  string
	frozen bool
	items  []web.PendingItem // the decision's own fields: no repository, issue or viewer's
}

type pendingIndex struct {
	mu    sync.Mutex
	max   int
	ll    *list.List               // *issueEntry, front: most recently folded
	items map[string]*list.Element // issueKey → element
	// digests: what each observed issue showed last (pending or not), so
	// that only a fold that changed something is a change on the bus.
	digests map[string]string
	// forget is told of an issue the index dropped to stay in its bound.
	forget func(owner, repo string, issue int)
}

func newPendingIndex(limit int, forget func(owner, repo string, issue int)) *pendingIndex {
	return &pendingIndex{max: cmp.Or(max(limit, 0), DefaultPendingIssues), ll: list.New(), items: map[string]*list.Element{}, digests: map[string]string{}, forget: forget}
}

func issueKey(owner, repo string, issue int) string {
	return strings.ToLower(owner+"/"+repo) + "#" + strconv.Itoa(issue)
}

// pendingOf is the pending decisions of a fold: those of the newest
// outcome of each phase that no resolution answers (an older outcome of a
// phase is history, as the `/decisions` reply lists them).
func pendingOf(f decide.Folded) []web.PendingItem {
	var out []web.PendingItem
	for _, o := range f.State.LatestPerPhase() {
		since, url := time.Time{}, ""
		for _, c := range f.Comments {
			if c.ID == o.CommentID {
				since, url = c.CreatedAt, c.HTMLURL
			}
		}
		for _, d := range o.Decisions {
			if d.Resolution != nil {
				continue
			}
			out = append(out, web.PendingItem{Decision: d.ID, Type: d.Type, Phase: o.Outcome.Phase, Question: d.Question,
				Blocking: d.Blocking, Since: since, Options: optionViews(d), CommentURL: url})
		}
	}
	return out
}

// optionViews are a decision's options, the recommended one marked.
func optionViews(d *ledger.Decision) []web.OptionView {
	rec, _ := d.RecommendedOption()
	out := make([]web.OptionView, 0, len(d.Options))
	for _, o := range d.Options {
		out = append(out, web.OptionView{Key: o, Label: o, Recommended: o == rec})
	}
	return out
}

// foldState names a fold: its newest phasegate comment, its comments and
// whether it is frozen.
func foldState(f decide.Folded) string {
	var last int64
	for _, c := range f.Comments {
		last = max(last, c.ID)
	}
	return fmt.Sprintf("%d.%d.%d.%t", f.State.Tip, len(f.Comments), last, f.State.Frozen())
}

// update takes a fold into the index and reports whether it changed what
// the pages show of the issue.
func (p *pendingIndex) update(f decide.Folded) bool {
	if f.State == nil {
		return false
	}
	key := issueKey(f.Owner, f.Repo, f.Issue)
	items := pendingOf(f)
	state := foldState(f)
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s|%s|%+v", state, f.Title, items)))
	digest := hex.EncodeToString(sum[:8])
	var dropped []*issueEntry
	p.mu.Lock()
	old, seen := p.digests[key]
	if len(p.digests) >= 4*p.max {
		p.digests = map[string]string{} // bounded: a change may then be published twice
	}
	p.digests[key] = digest
	el, ok := p.items[key]
	switch {
	case len(items) == 0 && ok:
		p.ll.Remove(el)
		delete(p.items, key)
	case len(items) > 0:
		e := &issueEntry{owner: f.Owner, repo: f.Repo, issue: f.Issue, title: f.Title, state: state, frozen: f.State.Frozen(), items: items}
		if ok {
			if e.title == "" {
				e.title = el.Value.(*issueEntry).title
			}
			p.ll.Remove(el)
		}
		p.items[key] = p.ll.PushFront(e)
		for p.ll.Len() > p.max {
			back := p.ll.Back()
			p.ll.Remove(back)
			e := back.Value.(*issueEntry)
			delete(p.items, issueKey(e.owner, e.repo, e.issue))
			dropped = append(dropped, e)
		}
	}
	p.mu.Unlock()
	for _, e := range dropped {
		if p.forget != nil {
			p.forget(e.owner, e.repo, e.issue)
		}
	}
	return !seen || old != digest
}

// setTitle records an issue's title when the index holds it.
func (p *pendingIndex) setTitle(owner, repo string, issue int, title string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if el, ok := p.items[issueKey(owner, repo, issue)]; ok && title != "" {
		el.Value.(*issueEntry).title = title
	}
}

// issue is the index's entry of an issue (a copy), if it holds one.
func (p *pendingIndex) issue(owner, repo string, issue int) (issueEntry, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	el, ok := p.items[issueKey(owner, repo, issue)]
	if !ok {
		return issueEntry{}, false
	}
	return *el.Value.(*issueEntry), true
}

// pendingRow is one pending decision with its issue, for the inbox.
type pendingRow struct {
	repo  web.RepoRef
	entry issueEntry
	item  web.PendingItem
}

// list is every pending decision of the repositories, blocking first,
// then newest first (then by repository, issue and decision).
func (p *pendingIndex) list(repos []web.RepoRef) []pendingRow {
	want := map[string]web.RepoRef{}
	for _, r := range repos {
		want[strings.ToLower(r.FullName())] = r
	}
	var rows []pendingRow
	p.mu.Lock()
	for el := p.ll.Front(); el != nil; el = el.Next() {
		e := el.Value.(*issueEntry)
		r, ok := want[strings.ToLower(e.owner+"/"+e.repo)]
		if !ok {
			continue
		}
		for _, it := range e.items {
			rows = append(rows, pendingRow{repo: r, entry: *e, item: it})
		}
	}
	p.mu.Unlock()
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		switch {
		case a.item.Blocking != b.item.Blocking:
			return a.item.Blocking
		case !a.item.Since.Equal(b.item.Since):
			return a.item.Since.After(b.item.Since)
		case a.repo.FullName() != b.repo.FullName():
			return a.repo.FullName() < b.repo.FullName()
		case a.entry.issue != b.entry.issue:
			return a.entry.issue < b.entry.issue
		}
		return a.item.Decision < b.item.Decision
	})
	return rows
}
