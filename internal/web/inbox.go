package web

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

type inboxView struct {
	Items       []PendingItem
	Deployments []Deployment
	Total       int
	Filter      inboxFilter
	// Repos, Phases and Types are the choices of the filter's selects.
	Repos, Phases, Types []string
}

// inboxFilter is the inbox's GET form.
type inboxFilter struct {
	Repo, Phase, Type string
	Mine              bool
}

// Any reports whether the filter narrows anything.
func (f inboxFilter) Any() bool { return f.Repo != "" || f.Phase != "" || f.Type != "" || f.Mine }

func (p *Pages) inbox(w http.ResponseWriter, r *http.Request, s *session) {
	repos, err := p.repos.get(r.Context(), s.ID, p.oauth.User(s.token()))
	if err != nil {
		p.upstream(w, r, s, "listing the repositories of "+s.Login, err)
		return
	}
	items, err := p.src.Pending(r.Context(), repos, s.Login)
	if err != nil {
		p.upstream(w, r, s, "listing the pending decisions of "+s.Login, err)
		return
	}
	deps, err := p.src.Deployments(r.Context(), repos)
	if err != nil {
		p.upstream(w, r, s, "listing the deployments waiting in the repositories of "+s.Login, err)
		return
	}
	q := r.URL.Query()
	f := inboxFilter{Repo: q.Get("repo"), Phase: q.Get("phase"), Type: q.Get("type"), Mine: q.Get("mine") == "1"}
	iv := inboxView{Total: len(items), Filter: f}
	iv.Deployments = slices.DeleteFunc(deps, func(d Deployment) bool { return f.Repo != "" && f.Repo != d.Repo.FullName() })
	iv.Repos, iv.Phases, iv.Types = choices(items)
	sortPending(items)
	iv.Items = slices.DeleteFunc(items, func(it PendingItem) bool {
		return f.Repo != "" && f.Repo != it.Repo.FullName() || f.Phase != "" && f.Phase != it.Phase ||
			f.Type != "" && f.Type != it.Type || f.Mine && !it.MayResolve
	})
	v := p.base(s, "Inbox")
	v.Live, v.Page = "inbox", iv
	p.render(w, r, http.StatusOK, "inbox", v)
}

// sortPending puts blocking decisions first, then the newest.
func sortPending(items []PendingItem) {
	slices.SortStableFunc(items, func(a, b PendingItem) int {
		if a.Blocking != b.Blocking {
			if a.Blocking {
				return -1
			}
			return 1
		}
		return b.Since.Compare(a.Since)
	})
}

// choices are the distinct repositories, phases and types of items, sorted.
func choices(items []PendingItem) (repos, phases, types []string) {
	for _, it := range items {
		repos = append(repos, it.Repo.FullName())
		phases = append(phases, it.Phase)
		types = append(types, it.Type)
	}
	clean := func(s []string) []string {
		s = slices.DeleteFunc(s, func(x string) bool { return x == "" })
		slices.SortFunc(s, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
		return slices.Compact(s)
	}
	return clean(repos), clean(phases), clean(types)
}

// repoCache keeps, per person, the repositories they can see, for a few
// minutes: the inbox and every /events change ask it.
type repoCache struct {
	ttl time.Duration
	now func() time.Time
	mu  sync.Mutex
	m   map[int64]repoEntry
}

type repoEntry struct {
	at    time.Time
	repos []RepoRef
}

// maxCached bounds the people whose repositories are kept.
const maxCached = 4096

// get is person id's visible repositories, from memory when fresh.
func (c *repoCache) get(ctx context.Context, id int64, api UserAPI) ([]RepoRef, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.m[id]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < c.ttl {
		return e.repos, nil
	}
	repos, err := api.Repos(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCached {
		for k, old := range c.m {
			if now.Sub(old.at) >= c.ttl {
				delete(c.m, k)
			}
		}
		if len(c.m) >= maxCached {
			clear(c.m)
		}
	}
	c.m[id] = repoEntry{at: now, repos: repos}
	return repos, nil
}

// sees reports whether repos holds owner/name (GitHub's names are
// case-insensitive).
func sees(repos []RepoRef, owner, name string) bool {
	return slices.ContainsFunc(repos, func(r RepoRef) bool {
		return strings.EqualFold(r.Owner, owner) && strings.EqualFold(r.Name, name)
	})
}
