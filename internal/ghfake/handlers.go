package ghfake

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// route is one endpoint: a method and a path pattern whose ":name" segments
// capture a parameter and whose final "*name" captures the rest of the path.
type route struct {
	method  string
	pattern []string
	handle  func(*Server, *req) reply
}

func r(method, pattern string, h func(*Server, *req) reply) route {
	return route{method: method, pattern: strings.Split(strings.Trim(pattern, "/"), "/"), handle: h}
}

var routes = []route{
	r("GET", "rate_limit", (*Server).getRateLimit),
	r("POST", "app/installations/:id/access_tokens", (*Server).accessToken),
	r("GET", "repos/:owner/:repo", (*Server).getRepo),
	r("GET", "repos/:owner/:repo/contents/*path", (*Server).getContents),
	r("GET", "repos/:owner/:repo/git/blobs/:sha", (*Server).getBlob),
	r("GET", "repos/:owner/:repo/git/trees/:sha", (*Server).getTree),
	r("GET", "repos/:owner/:repo/tarball", (*Server).getTarball),
	r("GET", "repos/:owner/:repo/tarball/*ref", (*Server).getTarball),
	r("GET", "_codeload/:owner/:repo/legacy.tar.gz/:sha", (*Server).getCodeload),
	r("POST", "repos/:owner/:repo/check-runs", (*Server).createCheckRun),
	r("GET", "repos/:owner/:repo/check-runs/:id", (*Server).getCheckRun),
	r("PATCH", "repos/:owner/:repo/check-runs/:id", (*Server).updateCheckRun),
	r("GET", "repos/:owner/:repo/check-runs/:id/annotations", (*Server).listAnnotations),
	r("GET", "repos/:owner/:repo/commits/:ref/check-runs", (*Server).listCheckRunsForRef),
	r("GET", "repos/:owner/:repo/issues", (*Server).listIssues),
	r("POST", "repos/:owner/:repo/issues", (*Server).createIssue),
	r("GET", "repos/:owner/:repo/issues/comments", (*Server).listRepoComments),
	r("GET", "repos/:owner/:repo/issues/comments/:id", (*Server).getComment),
	r("PATCH", "repos/:owner/:repo/issues/comments/:id", (*Server).editComment),
	r("DELETE", "repos/:owner/:repo/issues/comments/:id", (*Server).deleteComment),
	r("GET", "repos/:owner/:repo/issues/comments/:id/reactions", (*Server).listReactions),
	r("POST", "repos/:owner/:repo/issues/comments/:id/reactions", (*Server).createReaction),
	r("GET", "repos/:owner/:repo/issues/:number", (*Server).getIssue),
	r("GET", "repos/:owner/:repo/issues/:number/comments", (*Server).listComments),
	r("POST", "repos/:owner/:repo/issues/:number/comments", (*Server).createComment),
	r("GET", "repos/:owner/:repo/issues/:number/labels", (*Server).listLabels),
	r("POST", "repos/:owner/:repo/issues/:number/labels", (*Server).addLabels),
	r("DELETE", "repos/:owner/:repo/issues/:number/labels/:name", (*Server).removeLabel),
	r("GET", "repos/:owner/:repo/issues/:number/events", (*Server).listIssueEvents),
	r("GET", "repos/:owner/:repo/collaborators/:user/permission", (*Server).getPermission),
	r("GET", "orgs/:org/teams/:slug/memberships/:user", (*Server).getMembership),
	r("GET", "orgs/:org/teams/:slug/members", (*Server).listTeamMembers),
	r("POST", "repos/:owner/:repo/statuses/:sha", (*Server).createStatus),
	r("GET", "repos/:owner/:repo/commits/:ref/statuses", (*Server).listStatuses),
	r("GET", "repos/:owner/:repo/commits/:ref/status", (*Server).combinedStatus),
	r("GET", "repos/:owner/:repo/commits", (*Server).listCommits),
	r("GET", "repos/:owner/:repo/commits/:sha", (*Server).getCommit),
	r("GET", "repos/:owner/:repo/commits/:sha/pulls", (*Server).commitPulls),
	r("GET", "repos/:owner/:repo/pulls", (*Server).listPulls),
	r("GET", "repos/:owner/:repo/pulls/:number", (*Server).getPull),
	r("GET", "repos/:owner/:repo/pulls/:number/files", (*Server).pullFiles),
	r("GET", "repos/:owner/:repo/pulls/:number/reviews", (*Server).listReviews),
	r("GET", "repos/:owner/:repo/compare/:basehead", (*Server).compare),
	r("GET", "repos/:owner/:repo/activity", (*Server).listActivity),
	r("GET", "repos/:owner/:repo/git/ref/*ref", (*Server).getRef),
	r("POST", "repos/:owner/:repo/dispatches", (*Server).createDispatch),
	r("POST", "graphql", (*Server).graphql),
	r("POST", "api/graphql", (*Server).graphql), // GitHub Enterprise Server
}

// graphql answers the one GraphQL query phasegate sends: the lastEditedAt
// of issue comments by node id (nodes(ids: $ids)). Anything else is a
// GraphQL error, as GitHub answers an unknown field.
func (s *Server) graphql(q *req) reply {
	var in struct {
		Query     string `json:"query"`
		Variables struct {
			IDs []string `json:"ids"`
		} `json:"variables"`
	}
	if err := q.decode(&in); err != nil {
		return errReply(400, "Problems parsing JSON")
	}
	if !strings.Contains(in.Query, "nodes(ids:") || !strings.Contains(in.Query, "lastEditedAt") {
		return reply{status: 200, body: map[string]any{"errors": []any{map[string]any{"message": "ghfake: unsupported query"}}}}
	}
	if len(in.Variables.IDs) > 100 {
		return reply{status: 200, body: map[string]any{"errors": []any{map[string]any{"message": "You may not request more than 100 nodes at once"}}}}
	}
	nodes := []any{}
	for _, id := range in.Variables.IDs {
		n, err := strconv.ParseInt(strings.TrimPrefix(id, "IC_"), 10, 64)
		c := s.comment[n]
		if err != nil || !strings.HasPrefix(id, "IC_") || c == nil || c.deleted {
			nodes = append(nodes, nil)
			continue
		}
		var edited any
		if !c.lastEdited.IsZero() {
			edited = ts(c.lastEdited)
		}
		nodes = append(nodes, map[string]any{"__typename": "IssueComment", "id": id, "lastEditedAt": edited})
	}
	return reply{status: 200, body: map[string]any{"data": map[string]any{"nodes": nodes}}}
}

func match(pattern, segs []string) (map[string]string, bool) {
	params := map[string]string{}
	for i, p := range pattern {
		if strings.HasPrefix(p, "*") {
			if i >= len(segs) {
				return nil, false
			}
			params[p[1:]] = strings.Join(segs[i:], "/")
			return params, true
		}
		if i >= len(segs) {
			return nil, false
		}
		switch {
		case strings.HasPrefix(p, ":"):
			params[p[1:]] = segs[i]
		case p != segs[i]:
			return nil, false
		}
	}
	return params, len(pattern) == len(segs)
}

func (s *Server) routeLocked(q *req) reply {
	method := q.r.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	for _, rt := range routes {
		if rt.method != method {
			continue
		}
		if params, ok := match(rt.pattern, q.segs); ok {
			q.params = params
			if denied := s.repoAccessLocked(q); denied != nil {
				return *denied
			}
			return rt.handle(s, q)
		}
	}
	return notFound()
}

// ---- JSON shapes ----

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func (s *Server) userJSON(login string) any {
	if login == "" {
		return nil
	}
	u := s.userLocked(login)
	return map[string]any{
		"login": u.login, "id": u.id, "node_id": fmt.Sprintf("U_%d", u.id), "type": u.typ,
		"site_admin": false, "html_url": s.webURL + "/" + u.login,
		"avatar_url": fmt.Sprintf("https://avatars.githubusercontent.com/u/%d?v=4", u.id),
	}
}

// repoJSON is the OpenAPI full-repository of rp (also a repository and a
// minimal-repository): every required field.
func (s *Server) repoJSON(q *req, rp *repo) map[string]any {
	api := q.apiBase + "/repos/" + rp.owner + "/" + rp.name
	web := s.webURL + "/" + rp.owner + "/" + rp.name
	created := ts(time.Unix(1700000000, 0))
	m := map[string]any{
		"id": rp.id, "node_id": fmt.Sprintf("R_%d", rp.id), "name": rp.name, "full_name": rp.owner + "/" + rp.name,
		"owner": s.simpleUserJSON(q, rp.owner), "private": rp.private, "html_url": web, "description": nil, "fork": false,
		"url": api, "default_branch": rp.defaultBranch, "visibility": map[bool]string{false: "public", true: "private"}[rp.private],
		"clone_url": web + ".git", "git_url": "git://github.com/" + rp.owner + "/" + rp.name + ".git",
		"ssh_url": "git@github.com:" + rp.owner + "/" + rp.name + ".git", "svn_url": web, "mirror_url": nil, "homepage": nil,
		"language": nil, "license": nil, "size": 0, "forks": 0, "forks_count": 0, "stargazers_count": 0, "watchers": 0,
		"watchers_count": 0, "open_issues": 0, "open_issues_count": 0, "network_count": 0, "subscribers_count": 0,
		"has_issues": true, "has_projects": false, "has_wiki": false, "has_pages": false, "has_downloads": false,
		"has_discussions": false, "archived": false, "disabled": false,
		"pushed_at": created, "created_at": created, "updated_at": created,
	}
	for k, v := range map[string]string{
		"archive_url": "/{archive_format}{/ref}", "assignees_url": "/assignees{/user}", "blobs_url": "/git/blobs{/sha}",
		"branches_url": "/branches{/branch}", "collaborators_url": "/collaborators{/collaborator}",
		"comments_url": "/comments{/number}", "commits_url": "/commits{/sha}", "compare_url": "/compare/{base}...{head}",
		"contents_url": "/contents/{+path}", "contributors_url": "/contributors", "deployments_url": "/deployments",
		"downloads_url": "/downloads", "events_url": "/events", "forks_url": "/forks", "git_commits_url": "/git/commits{/sha}",
		"git_refs_url": "/git/refs{/sha}", "git_tags_url": "/git/tags{/sha}", "hooks_url": "/hooks",
		"issue_comment_url": "/issues/comments{/number}", "issue_events_url": "/issues/events{/number}",
		"issues_url": "/issues{/number}", "keys_url": "/keys{/key_id}", "labels_url": "/labels{/name}",
		"languages_url": "/languages", "merges_url": "/merges", "milestones_url": "/milestones{/number}",
		"notifications_url": "/notifications{?since,all,participating}", "pulls_url": "/pulls{/number}",
		"releases_url": "/releases{/id}", "stargazers_url": "/stargazers", "statuses_url": "/statuses/{sha}",
		"subscribers_url": "/subscribers", "subscription_url": "/subscription", "tags_url": "/tags", "teams_url": "/teams",
		"trees_url": "/git/trees{/sha}",
	} {
		m[k] = api + v
	}
	return m
}

func (s *Server) labelJSON(q *req, rp *repo, name string) any {
	l := rp.labels[strings.ToLower(name)]
	return map[string]any{
		"id": l.id, "node_id": fmt.Sprintf("LA_%d", l.id), "name": l.name, "color": l.color, "default": false,
		"description": nil, "url": q.apiBase + "/repos/" + rp.owner + "/" + rp.name + "/labels/" + l.name,
	}
}

func (s *Server) association(rp *repo, login string) string {
	if strings.EqualFold(login, rp.owner) {
		return "OWNER"
	}
	if p, ok := rp.perms[strings.ToLower(login)]; ok && p.base != "none" {
		return "COLLABORATOR"
	}
	return "NONE"
}

func (s *Server) issueJSON(q *req, rp *repo, is *issue) map[string]any {
	labels := []any{}
	for _, l := range is.labels {
		labels = append(labels, s.labelJSON(q, rp, l))
	}
	kind := "issues"
	if is.pr != nil {
		kind = "pull"
	}
	base := q.apiBase + "/repos/" + rp.owner + "/" + rp.name
	m := map[string]any{
		"id": int64(is.number) + rp.id*100000, "node_id": fmt.Sprintf("I_%d_%d", rp.id, is.number),
		"number": is.number, "title": is.title, "body": is.body, "state": is.state, "user": s.simpleUserJSON(q, is.author),
		"labels": labels, "comments": s.liveComments(is), "created_at": ts(is.createdAt), "updated_at": ts(is.updatedAt),
		"closed_at": nil, "locked": false, "author_association": s.association(rp, is.author),
		"assignee": nil, "assignees": []any{}, "milestone": nil, "repository_url": base,
		"labels_url":   base + "/issues/" + strconv.Itoa(is.number) + "/labels{/name}",
		"comments_url": base + "/issues/" + strconv.Itoa(is.number) + "/comments",
		"events_url":   base + "/issues/" + strconv.Itoa(is.number) + "/events",
		"url":          base + "/issues/" + strconv.Itoa(is.number),
		"html_url":     fmt.Sprintf("%s/%s/%s/%s/%d", s.webURL, rp.owner, rp.name, kind, is.number),
	}
	if is.pr != nil {
		html := fmt.Sprintf("%s/%s/%s/pull/%d", s.webURL, rp.owner, rp.name, is.number)
		var mergedAt any
		if is.pr.Merged {
			mergedAt = ts(is.updatedAt)
		}
		m["pull_request"] = map[string]any{
			"url": base + "/pulls/" + strconv.Itoa(is.number), "html_url": html,
			"diff_url": html + ".diff", "patch_url": html + ".patch", "merged_at": mergedAt,
		}
	}
	return m
}

// liveComments is an issue's number of comments as GitHub counts them:
// deleted ones are gone.
func (s *Server) liveComments(is *issue) int {
	n := 0
	for _, id := range is.comments {
		if c := s.comment[id]; c != nil && !c.deleted {
			n++
		}
	}
	return n
}

func (s *Server) commentJSON(q *req, rp *repo, c *comment) map[string]any {
	base := q.apiBase + "/repos/" + rp.owner + "/" + rp.name
	kind := "issues"
	if is := rp.issues[c.number]; is != nil && is.pr != nil {
		kind = "pull"
	}
	return map[string]any{
		"id": c.id, "node_id": fmt.Sprintf("IC_%d", c.id), "body": c.body, "user": s.simpleUserJSON(q, c.author),
		"created_at": ts(c.createdAt), "updated_at": ts(c.updatedAt),
		"author_association":       s.association(rp, c.author),
		"url":                      base + "/issues/comments/" + strconv.FormatInt(c.id, 10),
		"issue_url":                base + "/issues/" + strconv.Itoa(c.number),
		"html_url":                 fmt.Sprintf("%s/%s/%s/%s/%d#issuecomment-%d", s.webURL, rp.owner, rp.name, kind, c.number, c.id),
		"reactions":                reactionRollup(base+"/issues/comments/"+strconv.FormatInt(c.id, 10)+"/reactions", c.reactions),
		"performed_via_github_app": s.viaJSON(q, c),
	}
}

// reactionRollup is the reactions summary GitHub puts in a comment: every
// content with its count, and the total.
func reactionRollup(url string, rs []Reaction) map[string]any {
	m := map[string]any{"url": url, "total_count": len(rs)}
	for content := range reactionContents {
		m[content] = 0
	}
	for _, r := range rs {
		m[r.Content] = m[r.Content].(int) + 1
	}
	return m
}

func (s *Server) statusJSON(q *req, rp *repo, st *status) map[string]any {
	var desc, target any
	if st.desc != "" {
		desc = st.desc
	}
	if st.targetURL != "" {
		target = st.targetURL
	}
	creator := s.simpleUserJSON(q, st.creator)
	var avatar any
	if m, ok := creator.(map[string]any); ok {
		avatar = m["avatar_url"]
	}
	return map[string]any{
		"id": st.id, "node_id": fmt.Sprintf("SC_%d", st.id), "state": st.state, "context": st.context,
		"description": desc, "target_url": target, "created_at": ts(st.createdAt), "updated_at": ts(st.createdAt),
		"creator": creator, "avatar_url": avatar,
		"url": q.apiBase + "/repos/" + rp.owner + "/" + rp.name + "/statuses/" + st.sha,
	}
}

func fileJSON(q *req, rp *repo, f File) map[string]any {
	sha := blobSHA([]byte(f.Filename + f.Status))
	web := "https://github.com/" + rp.owner + "/" + rp.name
	m := map[string]any{
		"sha": sha, "filename": f.Filename, "status": f.Status,
		"additions": 1, "deletions": 0, "changes": 1,
		"contents_url": q.apiBase + "/repos/" + rp.owner + "/" + rp.name + "/contents/" + f.Filename,
		"blob_url":     web + "/blob/" + sha + "/" + f.Filename,
		"raw_url":      web + "/raw/" + sha + "/" + f.Filename,
	}
	if f.PreviousFilename != "" {
		m["previous_filename"] = f.PreviousFilename
	}
	return m
}

// prJSON is the OpenAPI pull-request of is (also a pull-request-simple):
// every required field.
func (s *Server) prJSON(q *req, rp *repo, is *issue) map[string]any {
	pr := is.pr
	branch := func(ref, sha string) map[string]any {
		return map[string]any{"label": rp.owner + ":" + ref, "ref": ref, "sha": sha, "user": s.simpleUserJSON(q, rp.owner),
			"repo": s.repoJSON(q, rp)}
	}
	var mergeSHA, mergedAt, closedAt any
	if pr.MergeCommitSHA != "" {
		mergeSHA = pr.MergeCommitSHA
	}
	if pr.Merged {
		mergedAt = ts(is.updatedAt)
	}
	if pr.State == "closed" {
		closedAt = ts(is.updatedAt)
	}
	labels := []any{}
	for _, l := range is.labels {
		labels = append(labels, s.labelJSON(q, rp, l))
	}
	api := q.apiBase + "/repos/" + rp.owner + "/" + rp.name
	self := api + "/pulls/" + strconv.Itoa(is.number)
	html := fmt.Sprintf("%s/%s/%s/pull/%d", s.webURL, rp.owner, rp.name, is.number)
	issue := api + "/issues/" + strconv.Itoa(is.number)
	statuses := api + "/statuses/" + pr.HeadSHA
	link := func(u string) map[string]any { return map[string]any{"href": u} }
	return map[string]any{
		"id": int64(is.number) + rp.id*100000, "node_id": fmt.Sprintf("PR_%d_%d", rp.id, is.number),
		"number": is.number, "state": pr.State, "title": is.title, "body": is.body, "user": s.simpleUserJSON(q, is.author),
		"draft": pr.Draft, "merged": pr.Merged, "merge_commit_sha": mergeSHA, "merged_at": mergedAt, "closed_at": closedAt,
		"created_at": ts(is.createdAt), "updated_at": ts(is.updatedAt),
		"head": branch(pr.HeadRef, pr.HeadSHA), "base": branch(pr.BaseRef, pr.BaseSHA),
		"url": self, "html_url": html, "issue_url": issue, "statuses_url": statuses,
		"diff_url": html + ".diff", "patch_url": html + ".patch",
		"comments_url": issue + "/comments", "commits_url": self + "/commits",
		"review_comments_url": self + "/comments", "review_comment_url": api + "/pulls/comments{/number}",
		"_links": map[string]any{
			"self": link(self), "html": link(html), "issue": link(issue), "comments": link(issue + "/comments"),
			"review_comments": link(self + "/comments"), "review_comment": link(api + "/pulls/comments{/number}"),
			"commits": link(self + "/commits"), "statuses": link(statuses),
		},
		"labels": labels, "assignee": nil, "assignees": []any{}, "requested_reviewers": []any{}, "requested_teams": []any{},
		"milestone": nil, "locked": false, "active_lock_reason": nil, "auto_merge": nil,
		"author_association": s.association(rp, is.author),
		"mergeable":          nil, "mergeable_state": "unknown", "merged_by": nil, "maintainer_can_modify": false,
		"comments": s.liveComments(is), "review_comments": 0, "commits": 1, "additions": 0, "deletions": 0,
		"changed_files": len(rp.prFiles[is.number]),
	}
}

func (s *Server) commitJSON(q *req, rp *repo, c *commitRec, withFiles bool) map[string]any {
	person := func(name, email, login string) map[string]any {
		if name == "" {
			name = login
		}
		if email == "" && login != "" {
			email = login + "@users.noreply.github.com"
		}
		return map[string]any{"name": name, "email": email, "date": ts(c.Date)}
	}
	api := q.apiBase + "/repos/" + rp.owner + "/" + rp.name
	tree, ok := rp.commitTrees[c.SHA]
	if !ok {
		tree = blobSHA([]byte("tree " + c.SHA))
	}
	var verifiedAt any
	if c.Verified {
		verifiedAt = ts(c.Date)
	}
	m := map[string]any{
		"sha": c.SHA, "node_id": "C_" + c.SHA,
		"url":          api + "/commits/" + c.SHA,
		"html_url":     s.webURL + "/" + rp.owner + "/" + rp.name + "/commit/" + c.SHA,
		"comments_url": api + "/commits/" + c.SHA + "/comments",
		"commit": map[string]any{
			"url":           api + "/git/commits/" + c.SHA,
			"author":        person(c.AuthorName, c.AuthorEmail, c.Author),
			"committer":     person("", "", c.Committer),
			"message":       c.Message,
			"comment_count": 0,
			"tree":          map[string]any{"sha": tree, "url": api + "/git/trees/" + tree},
			"verification": map[string]any{"verified": c.Verified, "reason": map[bool]string{true: "valid", false: "unsigned"}[c.Verified],
				"signature": nil, "payload": nil, "verified_at": verifiedAt},
		},
		"author": s.simpleUserJSON(q, c.Author), "committer": s.simpleUserJSON(q, c.Committer), "parents": []any{},
	}
	if withFiles {
		files := []any{}
		for _, f := range c.Files {
			files = append(files, fileJSON(q, rp, f))
		}
		m["files"] = files
	}
	return m
}

// blobSHA is git's blob id of content.
func blobSHA(content []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// ---- helpers ----

func (s *Server) repoOf(q *req) (*repo, bool) {
	rp, ok := s.repos[key(q.params["owner"], q.params["repo"])]
	return rp, ok
}

func (s *Server) issueOf(q *req) (*repo, *issue, bool) {
	rp, ok := s.repoOf(q)
	if !ok {
		return nil, nil, false
	}
	n, err := strconv.Atoi(q.params["number"])
	if err != nil {
		return nil, nil, false
	}
	is, ok := rp.issues[n]
	return rp, is, ok
}

func (s *Server) commentOf(q *req) (*repo, *comment, bool) {
	rp, ok := s.repoOf(q)
	if !ok {
		return nil, nil, false
	}
	id, err := strconv.ParseInt(q.params["id"], 10, 64)
	if err != nil {
		return nil, nil, false
	}
	c, ok := s.comment[id]
	if !ok || c.deleted || !strings.EqualFold(c.owner, rp.owner) || !strings.EqualFold(c.repo, rp.name) {
		return nil, nil, false
	}
	return rp, c, true
}

func (s *Server) labelIssueLocked(rp *repo, is *issue, name, actor string) {
	k := strings.ToLower(name)
	l, ok := rp.labels[k]
	if !ok {
		l = &label{id: s.nextID(), name: name, color: "ededed"}
		rp.labels[k] = l
	}
	for _, have := range is.labels {
		if strings.EqualFold(have, name) {
			return
		}
	}
	is.labels = append(is.labels, l.name)
	sort.Slice(is.labels, func(i, j int) bool { return strings.ToLower(is.labels[i]) < strings.ToLower(is.labels[j]) })
	s.issueEventLocked(is, "labeled", l.name, actor)
}

// issueEventLocked records an event of the issue at the fake's clock.
func (s *Server) issueEventLocked(is *issue, event, label, actor string) {
	is.events = append(is.events, issueEvent{id: s.nextID(), event: event, label: label, actor: actor, createdAt: s.now().UTC()})
}

// listIssueEvents is GET /repos/{owner}/{repo}/issues/{number}/events,
// oldest first.
func (s *Server) listIssueEvents(q *req) reply {
	rp, is, ok := s.issueOf(q)
	if !ok {
		return notFound()
	}
	out := []any{}
	for _, e := range is.events {
		login := e.actor
		if login == "" {
			login = "ghost" // a label set by no known account: GitHub names the deleted-user placeholder
		}
		actor := s.simpleUserJSON(q, login)
		out = append(out, map[string]any{
			"id": e.id, "node_id": fmt.Sprintf("LE_%d", e.id),
			"url":   q.apiBase + "/repos/" + rp.owner + "/" + rp.name + "/issues/events/" + strconv.FormatInt(e.id, 10),
			"actor": actor, "event": e.event, "commit_id": nil, "commit_url": nil, "created_at": ts(e.createdAt),
			"label": map[string]any{"name": e.label, "color": "ededed"}, "performed_via_github_app": nil,
		})
	}
	return reply{status: 200, list: out}
}

// resolveRef maps a branch name to its SHA; anything else is returned as is.
func resolveRef(rp *repo, ref string) string {
	if sha, ok := rp.branches[ref]; ok {
		return sha
	}
	return ref
}

func permissionRank(p string) int {
	switch p {
	case "admin":
		return 5
	case "maintain":
		return 4
	case "write":
		return 3
	case "triage":
		return 2
	case "read":
		return 1
	}
	return 0
}

// ---- handlers ----

func (s *Server) getRateLimit(q *req) reply {
	st := s.rateLocked(identityOf(q.login))
	core := map[string]any{"limit": st.limit, "remaining": max(0, st.limit-st.used), "used": st.used, "reset": st.reset.Unix()}
	search := map[string]any{"limit": 30, "remaining": 30, "used": 0, "reset": s.now().Add(time.Minute).Unix()}
	return reply{status: 200, body: map[string]any{"resources": map[string]any{"core": core, "search": search}, "rate": core}}
}

func (s *Server) getRepo(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	return reply{status: 200, body: s.repoJSON(q, rp)}
}

// largeFile is the size above which the contents API answers encoding
// "none" with no content, as GitHub does for files over 1 MB.
const largeFile = 1 << 20

func (s *Server) getContents(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	ref := q.query("ref")
	if ref == "" {
		ref = rp.defaultBranch
	}
	files := rp.files[ref]
	if files == nil {
		if sha := resolveRef(rp, ref); sha != ref {
			files = rp.files[sha]
		}
	}
	if files == nil {
		if _, isBranch := rp.branches[ref]; !isBranch && ref != rp.defaultBranch && !s.knownCommit(rp, ref) {
			return errReply(404, "No commit found for the ref "+ref)
		}
		return notFound()
	}
	path := strings.Trim(q.params["path"], "/")
	if content, ok := files[path]; ok {
		m := s.contentJSON(q, rp, ref, "file", path, blobSHA(content), len(content))
		if len(content) > largeFile {
			m["encoding"], m["content"] = "none", ""
		} else {
			m["encoding"], m["content"] = "base64", wrap60(base64.StdEncoding.EncodeToString(content))
		}
		return reply{status: 200, body: m}
	}
	var entries []any
	seen := map[string]bool{}
	names := make([]string, 0, len(files))
	for p := range files {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		rest, ok := strings.CutPrefix(p, path+"/")
		if path == "" {
			rest, ok = p, true
		}
		if !ok {
			continue
		}
		child, _, isDir := strings.Cut(rest, "/")
		if seen[child] {
			continue
		}
		seen[child] = true
		typ, full := "file", strings.TrimPrefix(path+"/"+child, "/")
		if isDir {
			typ = "dir"
		}
		sha, size := blobSHA([]byte(full)), 0
		if content, ok := files[full]; ok && !isDir {
			sha, size = blobSHA(content), len(content)
		}
		entries = append(entries, s.contentJSON(q, rp, ref, typ, full, sha, size))
	}
	if entries == nil {
		return notFound()
	}
	return reply{status: 200, body: entries}
}

// contentJSON is a content-file (without its content) or an entry of a
// content-directory.
func (s *Server) contentJSON(q *req, rp *repo, ref, typ, path, sha string, size int) map[string]any {
	base := q.apiBase + "/repos/" + rp.owner + "/" + rp.name
	self := base + "/contents/" + path + "?ref=" + ref
	html := s.webURL + "/" + rp.owner + "/" + rp.name + "/blob/" + ref + "/" + path
	git := base + "/git/blobs/" + sha
	var download any = "https://raw.githubusercontent.com/" + rp.owner + "/" + rp.name + "/" + ref + "/" + path
	if typ == "dir" {
		html = s.webURL + "/" + rp.owner + "/" + rp.name + "/tree/" + ref + "/" + path
		git = base + "/git/trees/" + sha
		download = nil
	}
	return map[string]any{
		"type": typ, "name": path[strings.LastIndex(path, "/")+1:], "path": path, "size": size, "sha": sha,
		"url": self, "git_url": git, "html_url": html, "download_url": download,
		"_links": map[string]any{"self": self, "git": git, "html": html},
	}
}

func (s *Server) knownCommit(rp *repo, sha string) bool {
	for _, c := range rp.commits {
		if c.SHA == sha {
			return true
		}
	}
	return false
}

func wrap60(b64 string) string {
	var sb strings.Builder
	for len(b64) > 60 {
		sb.WriteString(b64[:60])
		sb.WriteByte('\n')
		b64 = b64[60:]
	}
	sb.WriteString(b64)
	sb.WriteByte('\n')
	return sb.String()
}

func (s *Server) listIssues(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	state := q.query("state")
	if state == "" {
		state = "open"
	}
	var want []string
	if l := q.query("labels"); l != "" {
		want = strings.Split(l, ",")
	}
	var since time.Time
	if v := q.query("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return validationFailed("Issue", "since", "invalid", "")
		}
		since = t
	}
	creator := q.query("creator")
	var list []*issue
	for _, is := range rp.issues {
		if state != "all" && is.state != state {
			continue
		}
		if creator != "" && !strings.EqualFold(is.author, creator) {
			continue
		}
		if !since.IsZero() && is.updatedAt.Before(since) {
			continue
		}
		if !hasAllLabels(is.labels, want) {
			continue
		}
		list = append(list, is)
	}
	sortKey := q.query("sort")
	asc := q.query("direction") == "asc"
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		var less bool
		switch sortKey {
		case "updated":
			less = a.updatedAt.Before(b.updatedAt) || (a.updatedAt.Equal(b.updatedAt) && a.number < b.number)
		case "comments":
			less = len(a.comments) < len(b.comments) || (len(a.comments) == len(b.comments) && a.number < b.number)
		default:
			less = a.number < b.number
		}
		if asc {
			return less
		}
		return !less
	})
	out := []any{}
	for _, is := range list {
		out = append(out, s.issueJSON(q, rp, is))
	}
	return reply{status: 200, list: out}
}

func hasAllLabels(have, want []string) bool {
	for _, w := range want {
		w = strings.TrimSpace(w)
		found := false
		for _, h := range have {
			if strings.EqualFold(h, w) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func (s *Server) createIssue(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	var in struct {
		Title  *string  `json:"title"`
		Body   string   `json:"body"`
		Labels []string `json:"labels"`
	}
	if err := q.decode(&in); err != nil {
		return errReply(400, "Problems parsing JSON")
	}
	if in.Title == nil || strings.TrimSpace(*in.Title) == "" {
		return validationFailed("Issue", "title", "missing_field", "")
	}
	if utf8.RuneCountInString(in.Body) > MaxBodyChars {
		return validationFailed("Issue", "body", "custom", fmt.Sprintf("body is too long (maximum is %d characters)", MaxBodyChars))
	}
	is := s.addIssueLocked(rp, *in.Title, in.Body, q.login, in.Labels)
	return reply{status: 201, body: s.issueJSON(q, rp, is)}
}

func (s *Server) getIssue(q *req) reply {
	rp, is, ok := s.issueOf(q)
	if !ok {
		return notFound()
	}
	return reply{status: 200, body: s.issueJSON(q, rp, is)}
}

// MaxBodyChars is GitHub's limit on the length of an issue or comment body.
const MaxBodyChars = 65536

func (s *Server) listComments(q *req) reply {
	rp, is, ok := s.issueOf(q)
	if !ok {
		return notFound()
	}
	return s.commentsSince(q, rp, is.comments)
}

// listRepoComments is GET /repos/{owner}/{repo}/issues/comments: every
// comment of the repository's issues and pull requests, oldest first, those
// updated at or after since when it is given.
func (s *Server) listRepoComments(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	return s.commentsSince(q, rp, rp.commentIDs)
}

// commentsSince lists the comments ids that are not deleted and, with the
// query's since, were updated at or after it.
func (s *Server) commentsSince(q *req, rp *repo, ids []int64) reply {
	var since time.Time
	if v := q.query("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return validationFailed("IssueComment", "since", "invalid", "")
		}
		since = t
	}
	var list []*comment
	for _, id := range ids {
		c := s.comment[id]
		if c == nil || c.deleted || (!since.IsZero() && c.updatedAt.Before(since)) {
			continue
		}
		list = append(list, c)
	}
	return reply{status: 200, total: len(list), page: func(i int) any { return s.commentJSON(q, rp, list[i]) }}
}

func (s *Server) commentBody(q *req) (string, *reply) {
	var in struct {
		Body *string `json:"body"`
	}
	if err := q.decode(&in); err != nil {
		rep := errReply(400, "Problems parsing JSON")
		return "", &rep
	}
	if in.Body == nil || *in.Body == "" {
		rep := validationFailed("IssueComment", "body", "missing_field", "")
		return "", &rep
	}
	if utf8.RuneCountInString(*in.Body) > MaxBodyChars {
		rep := validationFailed("IssueComment", "body", "custom",
			fmt.Sprintf("Body is too long (maximum is %d characters)", MaxBodyChars))
		return "", &rep
	}
	return *in.Body, nil
}

func (s *Server) createComment(q *req) reply {
	rp, is, ok := s.issueOf(q)
	if !ok {
		return notFound()
	}
	body, bad := s.commentBody(q)
	if bad != nil {
		return *bad
	}
	c := s.addCommentLocked(rp, is, q.login, body)
	c.viaID, c.viaSlug = s.actingApp(q)
	return reply{status: 201, body: s.commentJSON(q, rp, c)}
}

func (s *Server) getComment(q *req) reply {
	rp, c, ok := s.commentOf(q)
	if !ok {
		return notFound()
	}
	return reply{status: 200, body: s.commentJSON(q, rp, c)}
}

func (s *Server) mayModerate(rp *repo, login string, author string) bool {
	if strings.EqualFold(login, author) || strings.EqualFold(login, rp.owner) {
		return true
	}
	return permissionRank(rp.perms[strings.ToLower(login)].role) >= permissionRank("write")
}

func (s *Server) editComment(q *req) reply {
	rp, c, ok := s.commentOf(q)
	if !ok {
		return notFound()
	}
	if !s.mayModerate(rp, q.login, c.author) {
		return errReply(403, "Must have admin rights to Repository.")
	}
	body, bad := s.commentBody(q)
	if bad != nil {
		return *bad
	}
	c.body = body
	c.updatedAt = editTime(s.now().UTC(), c.createdAt)
	c.lastEdited = s.now().UTC()
	return reply{status: 200, body: s.commentJSON(q, rp, c)}
}

func (s *Server) deleteComment(q *req) reply {
	rp, c, ok := s.commentOf(q)
	if !ok {
		return notFound()
	}
	if !s.mayModerate(rp, q.login, c.author) {
		return errReply(403, "Must have admin rights to Repository.")
	}
	c.deleted = true
	return reply{status: 204}
}

var reactionContents = map[string]bool{"+1": true, "-1": true, "laugh": true, "confused": true, "heart": true,
	"hooray": true, "rocket": true, "eyes": true}

func (s *Server) reactionJSON(q *req, rc Reaction, at time.Time) map[string]any {
	return map[string]any{"id": rc.ID, "node_id": fmt.Sprintf("REA_%d", rc.ID), "user": s.simpleUserJSON(q, rc.User),
		"content": rc.Content, "created_at": ts(at)}
}

func (s *Server) listReactions(q *req) reply {
	_, c, ok := s.commentOf(q)
	if !ok {
		return notFound()
	}
	out := []any{}
	for _, rc := range c.reactions {
		if want := q.query("content"); want != "" && rc.Content != want {
			continue
		}
		out = append(out, s.reactionJSON(q, rc, c.createdAt))
	}
	return reply{status: 200, list: out}
}

func (s *Server) createReaction(q *req) reply {
	_, c, ok := s.commentOf(q)
	if !ok {
		return notFound()
	}
	var in struct {
		Content string `json:"content"`
	}
	if err := q.decode(&in); err != nil {
		return errReply(400, "Problems parsing JSON")
	}
	if !reactionContents[in.Content] {
		return validationFailed("Reaction", "content", "invalid", "")
	}
	for _, rc := range c.reactions {
		if strings.EqualFold(rc.User, q.login) && rc.Content == in.Content {
			return reply{status: 200, body: s.reactionJSON(q, rc, s.now())}
		}
	}
	rc := Reaction{ID: s.nextID(), User: q.login, Content: in.Content}
	c.reactions = append(c.reactions, rc)
	return reply{status: 201, body: s.reactionJSON(q, rc, s.now())}
}

func (s *Server) issueLabels(q *req, rp *repo, is *issue) []any {
	out := []any{}
	for _, l := range is.labels {
		out = append(out, s.labelJSON(q, rp, l))
	}
	return out
}

func (s *Server) listLabels(q *req) reply {
	rp, is, ok := s.issueOf(q)
	if !ok {
		return notFound()
	}
	return reply{status: 200, list: s.issueLabels(q, rp, is)}
}

func (s *Server) addLabels(q *req) reply {
	rp, is, ok := s.issueOf(q)
	if !ok {
		return notFound()
	}
	var names []string
	if err := q.decode(&names); err != nil {
		var in struct {
			Labels []string `json:"labels"`
		}
		if err := q.decode(&in); err != nil {
			return errReply(400, "Problems parsing JSON")
		}
		names = in.Labels
	}
	for _, n := range names {
		if strings.TrimSpace(n) == "" || utf8.RuneCountInString(n) > 50 {
			return validationFailed("Label", "name", "invalid", "")
		}
	}
	for _, n := range names {
		s.labelIssueLocked(rp, is, n, q.login)
	}
	is.updatedAt = s.now().UTC()
	return reply{status: 200, body: s.issueLabels(q, rp, is)}
}

func (s *Server) removeLabel(q *req) reply {
	rp, is, ok := s.issueOf(q)
	if !ok {
		return notFound()
	}
	name := q.params["name"]
	for i, l := range is.labels {
		if strings.EqualFold(l, name) {
			is.labels = append(is.labels[:i:i], is.labels[i+1:]...)
			s.issueEventLocked(is, "unlabeled", l, q.login)
			is.updatedAt = s.now().UTC()
			return reply{status: 200, body: s.issueLabels(q, rp, is)}
		}
	}
	return errReply(404, "Label does not exist")
}

func (s *Server) getPermission(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	login := q.params["user"]
	u, known := s.users[strings.ToLower(login)]
	if !known {
		return errReply(404, login+" is not a user")
	}
	p, ok := rp.perms[strings.ToLower(login)]
	switch {
	case ok:
	case strings.EqualFold(login, rp.owner):
		p = perm{role: "admin", base: "admin"}
	default:
		p = perm{role: "none", base: "none"}
	}
	user := s.simpleUserJSON(q, u.login).(map[string]any)
	user["role_name"] = p.role
	user["permissions"] = map[string]any{"admin": p.base == "admin", "maintain": p.role == "maintain" || p.base == "admin",
		"push": permissionRank(p.base) >= permissionRank("write"), "triage": permissionRank(p.base) >= permissionRank("write") || p.role == "triage",
		"pull": p.base != "none"}
	return reply{status: 200, body: map[string]any{"permission": p.base, "role_name": p.role, "user": user}}
}

// getMembership handles GET /orgs/{org}/teams/{slug}/memberships/{user}:
// 404 for a user who is not a member, as for a team that does not exist or
// a token without the members permission (a workflow's GITHUB_TOKEN never
// has it): GitHub answers all three alike.
func (s *Server) getMembership(q *req) reply {
	if !s.grantedLocked(q.login, "members", "read") {
		return notFound()
	}
	members := s.teams[strings.ToLower(q.params["org"]+"/"+q.params["slug"])]
	state, ok := members[strings.ToLower(q.params["user"])]
	if !ok {
		return notFound()
	}
	return reply{status: 200, body: map[string]any{
		"url":  q.apiBase + "/orgs/" + q.params["org"] + "/teams/" + q.params["slug"] + "/memberships/" + q.params["user"],
		"role": "member", "state": state,
	}}
}

// listTeamMembers handles GET /orgs/{org}/teams/{slug}/members: the active
// members, in login order; 404 for a team that does not exist or a token
// without the members permission.
func (s *Server) listTeamMembers(q *req) reply {
	members, ok := s.teams[strings.ToLower(q.params["org"]+"/"+q.params["slug"])]
	if !ok || !s.grantedLocked(q.login, "members", "read") {
		return notFound()
	}
	var logins []string
	for login, state := range members {
		if state == "active" {
			logins = append(logins, login)
		}
	}
	sort.Strings(logins)
	out := []any{}
	for _, login := range logins {
		out = append(out, s.simpleUserJSON(q, s.userLocked(login).login))
	}
	return reply{status: 200, list: out}
}

// maxStatusesPerContext is GitHub's limit on the statuses of one sha and
// context; statuses are never deleted, so a sha's history only grows.
const maxStatusesPerContext = 1000

var statusStates = map[string]bool{"error": true, "failure": true, "pending": true, "success": true}

func (s *Server) createStatus(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	var in struct {
		State       string `json:"state"`
		TargetURL   string `json:"target_url"`
		Description string `json:"description"`
		Context     string `json:"context"`
	}
	if err := q.decode(&in); err != nil {
		return errReply(400, "Problems parsing JSON")
	}
	if !statusStates[in.State] {
		return validationFailed("Status", "state", "custom", "state is not included in the list")
	}
	if utf8.RuneCountInString(in.Description) > 140 {
		return validationFailed("Status", "description", "custom", "description is too long (maximum is 140 characters)")
	}
	if in.Context == "" {
		in.Context = "default"
	}
	sha := q.params["sha"]
	n := 0
	for _, old := range rp.statuses[sha] {
		if old.context == in.Context {
			n++
		}
	}
	if n >= maxStatusesPerContext {
		return validationFailed("Status", "context", "custom", "This SHA and context has reached the maximum number of statuses.")
	}
	st := &status{id: s.nextID(), sha: sha, state: in.State, context: in.Context, desc: in.Description,
		targetURL: in.TargetURL, creator: q.login, createdAt: s.now().UTC()}
	rp.statuses[sha] = append(rp.statuses[sha], st)
	return reply{status: 201, body: s.statusJSON(q, rp, st)}
}

func (s *Server) listStatuses(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	list := rp.statuses[resolveRef(rp, q.params["ref"])]
	out := []any{}
	for i := len(list) - 1; i >= 0; i-- {
		out = append(out, s.statusJSON(q, rp, list[i]))
	}
	return reply{status: 200, list: out}
}

func (s *Server) combinedStatus(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	sha := resolveRef(rp, q.params["ref"])
	list := rp.statuses[sha]
	latest := map[string]*status{}
	var order []string
	for i := len(list) - 1; i >= 0; i-- {
		if _, ok := latest[list[i].context]; !ok {
			latest[list[i].context] = list[i]
			order = append(order, list[i].context)
		}
	}
	state := "success"
	if len(order) == 0 {
		state = "pending"
	}
	statuses := []any{}
	for _, c := range order {
		st := latest[c]
		switch {
		case st.state == "error" || st.state == "failure":
			state = "failure"
		case st.state == "pending" && state != "failure":
			state = "pending"
		}
		statuses = append(statuses, s.statusJSON(q, rp, st))
	}
	return reply{status: 200, body: map[string]any{
		"state": state, "sha": sha, "total_count": len(order), "statuses": statuses,
		"repository": s.repoJSON(q, rp),
		"commit_url": q.apiBase + "/repos/" + rp.owner + "/" + rp.name + "/commits/" + sha,
		"url":        q.apiBase + "/repos/" + rp.owner + "/" + rp.name + "/commits/" + sha + "/status",
	}}
}

func (s *Server) sortedCommits(rp *repo) []*commitRec {
	list := append([]*commitRec(nil), rp.commits...)
	sort.SliceStable(list, func(i, j int) bool {
		if !list[i].Date.Equal(list[j].Date) {
			return list[i].Date.After(list[j].Date)
		}
		return list[i].order > list[j].order
	})
	return list
}

func (s *Server) listCommits(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	if ref := q.query("sha"); ref != "" {
		if _, isBranch := rp.branches[ref]; !isBranch && ref != rp.defaultBranch && !s.knownCommit(rp, ref) {
			return errReply(404, "No commit found for SHA: "+ref)
		}
	}
	path := strings.Trim(q.query("path"), "/")
	out := []any{}
	for _, c := range s.sortedCommits(rp) {
		if path != "" && !touches(c.Files, path) {
			continue
		}
		out = append(out, s.commitJSON(q, rp, c, false))
	}
	return reply{status: 200, list: out}
}

func touches(files []File, path string) bool {
	for _, f := range files {
		if f.Filename == path || f.PreviousFilename == path || strings.HasPrefix(f.Filename, path+"/") {
			return true
		}
	}
	return false
}

func (s *Server) getCommit(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	sha := resolveRef(rp, q.params["sha"])
	for _, c := range rp.commits {
		if c.SHA == sha {
			return reply{status: 200, body: s.commitJSON(q, rp, c, true)}
		}
	}
	return validationFailed("Commit", "sha", "invalid", "No commit found for SHA: "+sha)
}

func (s *Server) pulls(rp *repo) []*issue {
	var out []*issue
	for _, is := range rp.issues {
		if is.pr != nil {
			out = append(out, is)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].number > out[j].number })
	return out
}

func (s *Server) commitPulls(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	sha := q.params["sha"]
	out := []any{}
	for _, is := range s.pulls(rp) {
		pr := is.pr
		hit := !pr.Unlisted && (pr.HeadSHA == sha || (pr.MergeCommitSHA != "" && pr.MergeCommitSHA == sha))
		for _, c := range pr.Commits {
			hit = hit || !pr.Unlisted && c == sha
		}
		if hit {
			out = append(out, s.prJSON(q, rp, is))
		}
	}
	return reply{status: 200, list: out}
}

func (s *Server) listPulls(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	state := q.query("state")
	if state == "" {
		state = "open"
	}
	out := []any{}
	for _, is := range s.pulls(rp) {
		if state != "all" && is.pr.State != state {
			continue
		}
		if b := q.query("base"); b != "" && is.pr.BaseRef != b {
			continue
		}
		out = append(out, s.prJSON(q, rp, is))
	}
	return reply{status: 200, list: out}
}

func (s *Server) getPull(q *req) reply {
	rp, is, ok := s.issueOf(q)
	if !ok || is.pr == nil {
		return notFound()
	}
	return reply{status: 200, body: s.prJSON(q, rp, is)}
}

// maxPullFiles is GitHub's cap on the files listed for a pull request.
const maxPullFiles = 3000

// pullFiles is GET /repos/{o}/{r}/pulls/{n}/files: as GitHub, in path order
// and at most maxPullFiles, whatever the order the files were set in; only
// the page asked for is rendered.
func (s *Server) pullFiles(q *req) reply {
	rp, is, ok := s.issueOf(q)
	if !ok || is.pr == nil {
		return notFound()
	}
	files := slices.SortedStableFunc(slices.Values(rp.prFiles[is.number]), func(a, b File) int { return strings.Compare(a.Filename, b.Filename) })
	return reply{status: 200, page: func(i int) any { return fileJSON(q, rp, files[i]) }, total: min(len(files), maxPullFiles)}
}
