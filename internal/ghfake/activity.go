package ghfake

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// zeroSHA is the sha GitHub records for the side of a ref update where the
// ref did not exist: before of a branch creation, after of a deletion.
const zeroSHA = "0000000000000000000000000000000000000000"

// Activity types of GET /repos/{owner}/{repo}/activity (the OpenAPI
// description's activity_type enum).
var activityTypes = map[string]bool{"push": true, "force_push": true, "branch_creation": true,
	"branch_deletion": true, "pr_merge": true, "merge_queue_merge": true}

// Activity is one entry of a repository's activity log, as GET
// /repos/{owner}/{repo}/activity lists it.
type Activity struct {
	ID        int64
	Type      string // activity_type: push, force_push, branch_creation, branch_deletion, pr_merge, merge_queue_merge
	Ref       string // refs/heads/<branch>
	Before    string
	After     string
	Actor     string // login; "" when GitHub records no account (actor null)
	Timestamp time.Time
}

// Push is a `git push` for Server.Push.
type Push struct {
	Ref   string // branch name (or refs/heads/<name>)
	After string // the sha the branch moves to
	Actor string // login of the pusher; "" for a push with no account (a deploy key): actor null
	Force bool   // a forced update: recorded as force_push
}

// branchName is ref without its refs/heads/ prefix.
func branchName(ref string) string { return strings.TrimPrefix(ref, "refs/heads/") }

// Push models `git push` by p.Actor: the branch moves from its current sha
// to p.After and the activity log records it at the fake's clock, as
// branch_creation when the branch did not exist (SetBranch or an earlier
// Push makes it exist; before is then forty zeros), force_push when Force
// is set, and push otherwise (the fake keeps no ancestry: Force says
// whether after descends from before). Reads by branch name (statuses,
// commits, contents, git/ref) see p.After from then on; files stored at
// the branch name move to the old sha when files were stored at p.After,
// and otherwise stay (the push is taken to change no file). Open pull
// requests whose head is the branch move their head to p.After.
func (s *Server) Push(owner, name string, p Push) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pushLocked(s.repoLocked(owner, name), p)
}

func (s *Server) pushLocked(r *repo, p Push) {
	branch := branchName(p.Ref)
	before, existed := r.branches[branch]
	typ := "push"
	switch {
	case !existed:
		typ, before = "branch_creation", zeroSHA
	case p.Force:
		typ = "force_push"
	}
	r.branches[branch] = p.After
	if files, ok := r.files[branch]; ok && r.files[p.After] != nil {
		if existed && r.files[before] == nil {
			r.files[before] = files
		}
		delete(r.files, branch)
	}
	for _, is := range r.issues {
		if pr := is.pr; pr != nil && pr.State == "open" && pr.HeadRef == branch && pr.HeadSHA != p.After {
			if !p.Force {
				pr.Commits = append(pr.Commits, pr.HeadSHA)
			}
			pr.HeadSHA = p.After
		}
	}
	s.recordLocked(r, Activity{Type: typ, Ref: branch, Before: before, After: p.After, Actor: p.Actor})
}

// DeleteBranch deletes a branch as actor ("" for no account) and records
// the branch_deletion (after is forty zeros). A branch that does not exist
// is left alone and nothing is recorded.
func (s *Server) DeleteBranch(owner, name, branch, actor string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoLocked(owner, name)
	branch = branchName(branch)
	sha, ok := r.branches[branch]
	if !ok {
		return
	}
	delete(r.branches, branch)
	s.recordLocked(r, Activity{Type: "branch_deletion", Ref: branch, Before: sha, After: zeroSHA, Actor: actor})
}

// AddActivity records an activity as given, without moving any branch
// (for pr_merge, merge_queue_merge, or entries back in time), and returns
// its id. A zero Timestamp is the fake's clock; Ref may be a branch name.
func (s *Server) AddActivity(owner, name string, a Activity) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !activityTypes[a.Type] {
		panic(fmt.Sprintf("ghfake: AddActivity: activity type %q is not one of GitHub's", a.Type))
	}
	return s.recordLocked(s.repoLocked(owner, name), a)
}

func (s *Server) recordLocked(r *repo, a Activity) int64 {
	a.ID = s.nextID()
	a.Ref = "refs/heads/" + branchName(a.Ref)
	if a.Timestamp.IsZero() {
		a.Timestamp = s.now()
	}
	a.Timestamp = a.Timestamp.UTC().Truncate(time.Second)
	if a.Actor != "" {
		a.Actor = s.userLocked(a.Actor).login // as the account spells it
	}
	r.activity = append(r.activity, a)
	return a.ID
}

// Activity returns a copy of the repository's activity log, newest first.
func (s *Server) Activity(owner, name string) []Activity {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.repos[key(owner, name)]
	if !ok {
		return nil
	}
	return sortedActivity(r.activity, false)
}

// sortedActivity is list ordered by timestamp and then id: newest first,
// or oldest first when asc.
func sortedActivity(list []Activity, asc bool) []Activity {
	out := append([]Activity(nil), list...)
	sort.SliceStable(out, func(i, j int) bool { return listedBefore(out[i], out[j], asc) })
	return out
}

// listedBefore reports whether a comes before b in a listing: oldest first
// when asc, else newest first.
func listedBefore(a, b Activity, asc bool) bool {
	if asc {
		return activityBefore(a, b)
	}
	return activityBefore(b, a)
}

// activityBefore reports whether a happened before b (by id when the
// timestamps are equal).
func activityBefore(a, b Activity) bool {
	if !a.Timestamp.Equal(b.Timestamp) {
		return a.Timestamp.Before(b.Timestamp)
	}
	return a.ID < b.ID
}

// simpleUserJSON is the OpenAPI simple-user of login, with every required
// field; nil (JSON null) for no login.
func (s *Server) simpleUserJSON(q *req, login string) any {
	if login == "" {
		return nil
	}
	m := s.userJSON(login).(map[string]any)
	u := q.apiBase + "/users/" + m["login"].(string)
	m["gravatar_id"] = ""
	m["url"] = u
	m["followers_url"] = u + "/followers"
	m["following_url"] = u + "/following{/other_user}"
	m["gists_url"] = u + "/gists{/gist_id}"
	m["starred_url"] = u + "/starred{/owner}{/repo}"
	m["subscriptions_url"] = u + "/subscriptions"
	m["organizations_url"] = u + "/orgs"
	m["repos_url"] = u + "/repos"
	m["events_url"] = u + "/events{/privacy}"
	m["received_events_url"] = u + "/received_events"
	m["user_view_type"] = "public"
	return m
}

func (s *Server) activityJSON(q *req, a Activity) map[string]any {
	return map[string]any{
		"id": a.ID, "node_id": fmt.Sprintf("RA_%d", a.ID), "before": a.Before, "after": a.After, "ref": a.Ref,
		"timestamp": ts(a.Timestamp), "activity_type": a.Type, "actor": s.simpleUserJSON(q, a.Actor),
	}
}

// activityQuery is the parsed query of an activity listing.
type activityQuery struct {
	asc           bool
	perPage       int
	before, after *cursor
	ref, actor    string
	typ           string
	since         time.Time // zero: all time
}

// validationFailedSimple is GitHub's validation-error-simple answer (422).
func validationFailedSimple(msg string) reply {
	return reply{status: http.StatusUnprocessableEntity, body: map[string]any{
		"message": msg, "documentation_url": "https://docs.github.com/rest/repos/repos#list-repository-activities",
		"status": "422",
	}}
}

// parseActivityQuery reads GitHub's documented query parameters of the
// activity listing: direction, per_page, before, after, ref, actor,
// time_period and activity_type.
func parseActivityQuery(q *req, now time.Time) (activityQuery, *reply) {
	bad := func(msg string) (activityQuery, *reply) {
		rep := validationFailedSimple(msg)
		return activityQuery{}, &rep
	}
	aq := activityQuery{perPage: 30, ref: q.query("ref"), actor: q.query("actor"), typ: q.query("activity_type")}
	switch d := q.query("direction"); d {
	case "", "desc":
	case "asc":
		aq.asc = true
	default:
		return bad(fmt.Sprintf("direction %q is not asc or desc", d))
	}
	if v := q.query("per_page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return bad(fmt.Sprintf("per_page %q is not a positive integer", v))
		}
		aq.perPage = min(n, 100)
	}
	var err error
	if aq.before, err = parseCursor(q.query("before")); err != nil {
		return bad("before: " + err.Error())
	}
	if aq.after, err = parseCursor(q.query("after")); err != nil {
		return bad("after: " + err.Error())
	}
	if aq.typ != "" && !activityTypes[aq.typ] {
		return bad(fmt.Sprintf("activity_type %q is not one of push, force_push, branch_creation, branch_deletion, pr_merge, merge_queue_merge", aq.typ))
	}
	switch p := q.query("time_period"); p {
	case "":
	case "day":
		aq.since = now.Add(-24 * time.Hour)
	case "week":
		aq.since = now.Add(-7 * 24 * time.Hour)
	case "month":
		aq.since = now.AddDate(0, -1, 0)
	case "quarter":
		aq.since = now.AddDate(0, -3, 0)
	case "year":
		aq.since = now.AddDate(-1, 0, 0)
	default:
		return bad(fmt.Sprintf("time_period %q is not one of day, week, month, quarter, year", p))
	}
	return aq, nil
}

// matches reports whether a passes the query's filters.
func (aq activityQuery) matches(a Activity) bool {
	switch {
	case aq.ref != "" && a.Ref != "refs/heads/"+branchName(aq.ref):
		return false
	case aq.actor != "" && !strings.EqualFold(a.Actor, aq.actor):
		return false
	case aq.typ != "" && a.Type != aq.typ:
		return false
	case !aq.since.IsZero() && a.Timestamp.Before(aq.since):
		return false
	}
	return true
}

// listActivity is GET /repos/{owner}/{repo}/activity: the activity log,
// newest first (direction=asc: oldest first), filtered, cursor-paginated as
// GitHub does it: the Link header names the next page with after=<cursor>
// and the previous one with before=<cursor>, and has no last page.
func (s *Server) listActivity(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	aq, bad := parseActivityQuery(q, s.now())
	if bad != nil {
		return *bad
	}
	var list []Activity
	for _, a := range sortedActivity(rp.activity, aq.asc) {
		if aq.matches(a) {
			list = append(list, a)
		}
	}
	lo, hi := pageWindow(list, aq)
	out := []any{}
	for _, a := range list[lo:hi] {
		out = append(out, s.activityJSON(q, a))
	}
	rep := reply{status: http.StatusOK, body: out}
	var links []string
	if hi < len(list) && hi > lo {
		links = append(links, cursorLink(q, aq.perPage, "after", list[hi-1], "next"))
	}
	if lo > 0 && hi > lo {
		links = append(links, cursorLink(q, aq.perPage, "before", list[lo], "prev"))
	}
	if len(links) > 0 {
		rep.header = http.Header{"Link": {strings.Join(links, ", ")}}
	}
	return rep
}

// pageWindow is the page of list (in listing order) the query's cursors
// and per_page select: the first per_page items after the after cursor,
// or the last per_page items before the before cursor, or the first
// per_page items.
func pageWindow(list []Activity, aq activityQuery) (lo, hi int) {
	// less orders activities as the listing does.
	less := func(a, b Activity) bool { return listedBefore(a, b, aq.asc) }
	switch {
	case aq.after != nil:
		c := aq.after.activity()
		lo = sort.Search(len(list), func(i int) bool { return less(c, list[i]) })
		return lo, min(lo+aq.perPage, len(list))
	case aq.before != nil:
		c := aq.before.activity()
		hi = sort.Search(len(list), func(i int) bool { return !less(list[i], c) })
		return max(0, hi-aq.perPage), hi
	}
	return 0, min(aq.perPage, len(list))
}

// cursor points at one activity by its timestamp and id, the listing's
// order, so that it stays valid when newer activity arrives.
type cursor struct {
	ts time.Time
	id int64
}

// activity is the cursor's position as an activity, for comparisons.
func (c *cursor) activity() Activity { return Activity{ID: c.id, Timestamp: c.ts} }

// encode is the cursor as an opaque token.
func (c *cursor) encode() string {
	return base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("v1:%d:%d", c.ts.Unix(), c.id)))
}

func parseCursor(s string) (*cursor, error) {
	if s == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("invalid cursor")
	}
	parts := strings.Split(string(b), ":")
	if len(parts) != 3 || parts[0] != "v1" {
		return nil, fmt.Errorf("invalid cursor")
	}
	sec, err1 := strconv.ParseInt(parts[1], 10, 64)
	id, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("invalid cursor")
	}
	return &cursor{ts: time.Unix(sec, 0).UTC(), id: id}, nil
}

// cursorLink is one Link entry: the request's URL with per_page and the
// cursor parameter (after or before) pointing at a.
func cursorLink(q *req, perPage int, param string, a Activity, rel string) string {
	v := q.r.URL.Query()
	v.Del("page")
	v.Del("before")
	v.Del("after")
	v.Set("per_page", strconv.Itoa(perPage))
	v.Set(param, (&cursor{ts: a.Timestamp, id: a.ID}).encode())
	u := url.URL{Scheme: "http", Host: q.r.Host, Path: q.r.URL.Path, RawPath: q.r.URL.RawPath, RawQuery: v.Encode()}
	return "<" + u.String() + `>; rel="` + rel + `"`
}

// getRef is GET /repos/{owner}/{repo}/git/ref/heads/{branch}: the branch's
// sha as the fake stores it (SetBranch, Push). Only branches are modelled.
func (s *Server) getRef(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	ref := q.params["ref"]
	branch, isHead := strings.CutPrefix(ref, "heads/")
	sha, ok := rp.branches[branch]
	if !isHead || !ok {
		return notFound()
	}
	base := q.apiBase + "/repos/" + rp.owner + "/" + rp.name
	return reply{status: http.StatusOK, body: map[string]any{
		"ref": "refs/" + ref, "node_id": "REF_" + base64.RawURLEncoding.EncodeToString([]byte(rp.name+"/"+ref)),
		"url":    base + "/git/refs/" + ref,
		"object": map[string]any{"type": "commit", "sha": sha, "url": base + "/git/commits/" + sha},
	}}
}

// ForgetActivity empties the repository's activity log, as if GitHub no
// longer listed pushes that old; branches stay where they are.
func (s *Server) ForgetActivity(owner, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repoLocked(owner, name).activity = nil
}
