package ghfake

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// GitHub's limits on check runs.
const (
	// MaxAnnotationsPerRequest is the most annotations one create or update
	// may carry; more are added by further updates.
	MaxAnnotationsPerRequest = 50
	// MaxCheckOutputBytes bounds output.summary and output.text (GitHub
	// documents 65535 characters and enforces 65535 bytes).
	MaxCheckOutputBytes = 65535
	// MaxAnnotationTitle bounds an annotation's title, in characters.
	MaxAnnotationTitle = 255
	// MaxAnnotationBytes bounds an annotation's message and raw_details
	// (64 KB).
	MaxAnnotationBytes = 64 << 10
)

// GitHubActionsAppID is the id of the github-actions App, whose
// installation token a workflow's GITHUB_TOKEN is: a token added for
// github-actions[bot] acts as that App.
const GitHubActionsAppID = 15368

// CheckRun is a check run as the fake stores it (CheckRuns).
type CheckRun struct {
	ID                     int64
	Name                   string
	HeadSHA                string
	Status                 string // queued, in_progress or completed
	Conclusion             string // empty unless completed
	DetailsURL, ExternalID string
	StartedAt, CompletedAt time.Time
	Title, Summary, Text   string // the output
	Annotations            []Annotation
	AppID                  int64
	AppSlug                string
	Creator                string // login of the token that created it
	Writes                 int    // requests that created or updated it
}

// Annotation is a check run annotation.
type Annotation struct {
	Path                   string
	StartLine, EndLine     int
	StartColumn, EndColumn int // 0: none
	Level                  string
	Title, Message         string
	RawDetails             string
}

type checkRun struct {
	CheckRun
	suite int64
}

// CheckRuns returns every check run on sha (any name, any App), oldest
// first, with all their annotations.
func (s *Server) CheckRuns(owner, name, sha string) []CheckRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.repos[key(owner, name)]
	if !ok {
		return nil
	}
	var out []CheckRun
	for _, cr := range r.checkRuns {
		if cr.HeadSHA == sha {
			c := cr.CheckRun
			c.Annotations = append([]Annotation(nil), cr.Annotations...)
			out = append(out, c)
		}
	}
	return out
}

// tokenApp returns the App the request's token belongs to (0 for none).
func (s *Server) tokenApp(q *req) (int64, string) {
	_, cred, _ := strings.Cut(q.r.Header.Get("Authorization"), " ")
	t := s.tokens[cred]
	if t.app != 0 {
		if a := s.apps[t.app]; a != nil {
			return a.id, a.slug
		}
	}
	if strings.EqualFold(t.login, "github-actions[bot]") {
		return GitHubActionsAppID, "github-actions"
	}
	return 0, ""
}

type checkOutputIn struct {
	Title       *string          `json:"title"`
	Summary     *string          `json:"summary"`
	Text        *string          `json:"text"`
	Annotations []map[string]any `json:"annotations"`
}

type checkRunIn struct {
	Name        *string        `json:"name"`
	HeadSHA     *string        `json:"head_sha"`
	DetailsURL  *string        `json:"details_url"`
	ExternalID  *string        `json:"external_id"`
	Status      *string        `json:"status"`
	Conclusion  *string        `json:"conclusion"`
	StartedAt   *string        `json:"started_at"`
	CompletedAt *string        `json:"completed_at"`
	Output      *checkOutputIn `json:"output"`
}

var (
	checkStatuses    = map[string]bool{"queued": true, "in_progress": true, "completed": true}
	checkConclusions = map[string]bool{"success": true, "failure": true, "neutral": true, "cancelled": true,
		"skipped": true, "timed_out": true, "action_required": true} // stale: only GitHub sets it
	annotationLevels = map[string]bool{"notice": true, "warning": true, "failure": true}
)

// createCheckRun is POST /repos/{o}/{r}/check-runs: only an App may
// create one (403 otherwise, and without checks: write).
func (s *Server) createCheckRun(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	appID, slug := s.tokenApp(q)
	if appID == 0 {
		return errReply(403, "You must authenticate via a GitHub App.")
	}
	if !s.grantedLocked(q.login, "checks", "write") {
		return errReply(403, "Resource not accessible by integration")
	}
	var in checkRunIn
	if err := q.decode(&in); err != nil {
		return errReply(400, "Problems parsing JSON")
	}
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		return validationFailed("CheckRun", "name", "missing_field", "")
	}
	if in.HeadSHA == nil || !isHexSHA(*in.HeadSHA) {
		return validationFailed("CheckRun", "head_sha", "invalid", "No commit found for SHA: "+deref(in.HeadSHA))
	}
	now := s.now().UTC()
	cr := &checkRun{CheckRun: CheckRun{ID: s.nextID(), Name: *in.Name, HeadSHA: *in.HeadSHA, Status: "queued",
		StartedAt: now, AppID: appID, AppSlug: slug, Creator: q.login}}
	cr.suite = s.nextID()
	for _, old := range rp.checkRuns {
		if old.AppID == appID && old.HeadSHA == cr.HeadSHA {
			cr.suite = old.suite
			break
		}
	}
	if bad := s.applyCheckRun(cr, &in, now); bad != nil {
		return *bad
	}
	rp.checkRuns = append(rp.checkRuns, cr)
	return reply{status: 201, body: s.checkRunJSON(q, rp, cr)}
}

func isHexSHA(v string) bool {
	if len(v) != 40 {
		return false
	}
	for _, c := range v {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// checkRunOf finds the check run of the request's :id in its repository.
func (s *Server) checkRunOf(q *req) (*repo, *checkRun, bool) {
	rp, ok := s.repoOf(q)
	if !ok {
		return nil, nil, false
	}
	id, err := strconv.ParseInt(q.params["id"], 10, 64)
	if err != nil {
		return nil, nil, false
	}
	for _, cr := range rp.checkRuns {
		if cr.ID == id {
			return rp, cr, true
		}
	}
	return nil, nil, false
}

func (s *Server) getCheckRun(q *req) reply {
	rp, cr, ok := s.checkRunOf(q)
	if !ok {
		return notFound()
	}
	return reply{status: 200, body: s.checkRunJSON(q, rp, cr)}
}

// updateCheckRun is PATCH /repos/{o}/{r}/check-runs/{id}: only the App
// that created the run may update it (403 for any other identity);
// annotations are appended to those it has.
func (s *Server) updateCheckRun(q *req) reply {
	rp, cr, ok := s.checkRunOf(q)
	if !ok {
		return notFound()
	}
	appID, _ := s.tokenApp(q)
	if appID == 0 {
		return errReply(403, "You must authenticate via a GitHub App.")
	}
	if appID != cr.AppID {
		return errReply(403, fmt.Sprintf("Invalid app_id `%d` - check run can only be modified by the GitHub App that created it.", appID))
	}
	if !s.grantedLocked(q.login, "checks", "write") {
		return errReply(403, "Resource not accessible by integration")
	}
	var in checkRunIn
	if err := q.decode(&in); err != nil {
		return errReply(400, "Problems parsing JSON")
	}
	if in.HeadSHA != nil {
		return validationFailed("CheckRun", "head_sha", "invalid", "head_sha cannot be changed")
	}
	next := *cr
	next.Annotations = append([]Annotation(nil), cr.Annotations...)
	if in.Name != nil && *in.Name != "" {
		next.Name = *in.Name
	}
	if bad := s.applyCheckRun(&next, &in, s.now().UTC()); bad != nil {
		return *bad
	}
	*cr = next
	return reply{status: 200, body: s.checkRunJSON(q, rp, cr)}
}

// applyCheckRun validates a create or update body and applies it to cr
// (nothing is applied when it is invalid).
func (s *Server) applyCheckRun(cr *checkRun, in *checkRunIn, now time.Time) *reply {
	bad := func(field, code, msg string) *reply {
		rep := validationFailed("CheckRun", field, code, msg)
		return &rep
	}
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&cr.DetailsURL, in.DetailsURL)
	set(&cr.ExternalID, in.ExternalID)
	if in.Status != nil {
		if !checkStatuses[*in.Status] {
			return bad("status", "invalid", "status is not included in the list")
		}
		cr.Status = *in.Status
	}
	if in.Conclusion != nil {
		if !checkConclusions[*in.Conclusion] {
			return bad("conclusion", "invalid", "conclusion is not included in the list")
		}
		cr.Conclusion, cr.Status = *in.Conclusion, "completed" // a conclusion completes the run
	}
	if cr.Status == "completed" && cr.Conclusion == "" {
		return bad("conclusion", "missing_field", "conclusion is required when status is completed")
	}
	for _, tt := range []struct {
		v   *string
		dst *time.Time
		f   string
	}{{in.StartedAt, &cr.StartedAt, "started_at"}, {in.CompletedAt, &cr.CompletedAt, "completed_at"}} {
		if tt.v != nil {
			t, err := time.Parse(time.RFC3339, *tt.v)
			if err != nil {
				return bad(tt.f, "invalid", tt.f+" is not a valid ISO 8601 timestamp")
			}
			*tt.dst = t.UTC()
		}
	}
	if cr.Status == "completed" && cr.CompletedAt.IsZero() {
		cr.CompletedAt = now
	}
	if in.Output != nil {
		if r := applyOutput(cr, in.Output); r != nil {
			return r
		}
	}
	cr.Writes++
	return nil
}

// applyOutput validates and applies the output object: title and summary
// are required; annotations (at most 50) are appended.
func applyOutput(cr *checkRun, o *checkOutputIn) *reply {
	bad := func(field, code, msg string) *reply {
		rep := validationFailed("CheckRun", field, code, msg)
		return &rep
	}
	switch {
	case o.Title == nil:
		return bad("title", "missing_field", "")
	case o.Summary == nil:
		return bad("summary", "missing_field", "")
	case len(*o.Summary) > MaxCheckOutputBytes:
		return bad("summary", "custom", fmt.Sprintf("summary exceeds a maximum bytesize of %d", MaxCheckOutputBytes))
	case o.Text != nil && len(*o.Text) > MaxCheckOutputBytes:
		return bad("text", "custom", fmt.Sprintf("text exceeds a maximum bytesize of %d", MaxCheckOutputBytes))
	case len(o.Annotations) > MaxAnnotationsPerRequest:
		return bad("annotations", "custom", fmt.Sprintf("Only %d annotations are allowed per request; %d were supplied",
			MaxAnnotationsPerRequest, len(o.Annotations)))
	}
	var add []Annotation
	for i, raw := range o.Annotations {
		a, msg := annotationOf(raw)
		if msg != "" {
			return bad(fmt.Sprintf("annotations[%d]", i), "invalid", msg)
		}
		add = append(add, a)
	}
	cr.Title, cr.Summary = *o.Title, *o.Summary
	if o.Text != nil {
		cr.Text = *o.Text
	}
	cr.Annotations = append(cr.Annotations, add...)
	return nil
}

// annotationOf decodes one annotation as GitHub validates it; msg says
// what is wrong.
func annotationOf(m map[string]any) (a Annotation, msg string) {
	str := func(k string) string { v, _ := m[k].(string); return v }
	num := func(k string) (int, bool) {
		f, ok := m[k].(float64)
		return int(f), ok && f == float64(int(f))
	}
	a.Path, a.Level, a.Message, a.Title, a.RawDetails = str("path"), str("annotation_level"), str("message"), str("title"), str("raw_details")
	var okS, okE bool
	a.StartLine, okS = num("start_line")
	a.EndLine, okE = num("end_line")
	a.StartColumn, _ = num("start_column")
	a.EndColumn, _ = num("end_column")
	switch {
	case a.Path == "" || a.Message == "" || !okS || !okE:
		return a, "path, start_line, end_line, annotation_level and message are required"
	case !annotationLevels[a.Level]:
		return a, "annotation_level is not included in the list"
	case a.StartLine < 1 || a.EndLine < a.StartLine:
		return a, "start_line and end_line are out of order"
	case (a.StartColumn != 0 || a.EndColumn != 0) && a.StartLine != a.EndLine:
		return a, "start_column and end_column may only be given when start_line and end_line are the same"
	case len([]rune(a.Title)) > MaxAnnotationTitle:
		return a, fmt.Sprintf("title is too long (maximum is %d characters)", MaxAnnotationTitle)
	case len(a.Message) > MaxAnnotationBytes || len(a.RawDetails) > MaxAnnotationBytes:
		return a, "message and raw_details are limited to 64 KB"
	}
	return a, ""
}

// listCheckRunsForRef is GET /repos/{o}/{r}/commits/{ref}/check-runs, newest
// first: filter=latest (the default) keeps the newest run of each name and
// App; check_name, status and app_id filter; paginated as GitHub does, in
// a {total_count, check_runs} object.
func (s *Server) listCheckRunsForRef(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	sha := resolveRef(rp, q.params["ref"])
	filter := q.query("filter")
	if filter == "" {
		filter = "latest"
	}
	if filter != "latest" && filter != "all" {
		return validationFailed("CheckRun", "filter", "invalid", "")
	}
	seen := map[string]bool{}
	var list []*checkRun
	for i := len(rp.checkRuns) - 1; i >= 0; i-- {
		cr := rp.checkRuns[i]
		k := strconv.FormatInt(cr.AppID, 10) + "\n" + cr.Name
		switch {
		case cr.HeadSHA != sha,
			q.query("check_name") != "" && cr.Name != q.query("check_name"),
			q.query("status") != "" && cr.Status != q.query("status"),
			q.query("app_id") != "" && strconv.FormatInt(cr.AppID, 10) != q.query("app_id"),
			filter == "latest" && seen[k]:
			continue
		}
		seen[k] = true
		list = append(list, cr)
	}
	page, perPage := pageParams(q.r)
	last := max(1, (len(list)+perPage-1)/perPage)
	lo := min((page-1)*perPage, len(list))
	runs := []any{}
	for _, cr := range list[lo:min(lo+perPage, len(list))] {
		runs = append(runs, s.checkRunJSON(q, rp, cr))
	}
	rep := reply{status: 200, body: map[string]any{"total_count": len(list), "check_runs": runs}}
	if l := linkHeader(q.r, page, perPage, last); l != "" {
		rep.header = map[string][]string{"Link": {l}}
	}
	return rep
}

// listAnnotations is GET /repos/{o}/{r}/check-runs/{id}/annotations, in the
// order they were added.
func (s *Server) listAnnotations(q *req) reply {
	rp, cr, ok := s.checkRunOf(q)
	if !ok {
		return notFound()
	}
	out := []any{}
	for _, a := range cr.Annotations {
		nullable := func(v string) any {
			if v == "" {
				return nil
			}
			return v
		}
		col := func(v int) any {
			if v == 0 {
				return nil
			}
			return v
		}
		out = append(out, map[string]any{
			"path": a.Path, "start_line": a.StartLine, "end_line": a.EndLine,
			"start_column": col(a.StartColumn), "end_column": col(a.EndColumn), "annotation_level": a.Level,
			"title": nullable(a.Title), "message": a.Message, "raw_details": nullable(a.RawDetails),
			"blob_href": s.webURL + "/" + rp.owner + "/" + rp.name + "/blob/" + cr.HeadSHA + "/" + a.Path,
		})
	}
	return reply{status: 200, list: out}
}

func (s *Server) checkRunJSON(q *req, rp *repo, cr *checkRun) map[string]any {
	api := q.apiBase + "/repos/" + rp.owner + "/" + rp.name
	nullable := func(v string) any {
		if v == "" {
			return nil
		}
		return v
	}
	when := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return ts(t)
	}
	id := strconv.FormatInt(cr.ID, 10)
	prs := []any{}
	for _, is := range s.pulls(rp) {
		if is.pr.HeadSHA == cr.HeadSHA && is.state == "open" {
			prs = append(prs, s.minimalPR(q, rp, is))
		}
	}
	return map[string]any{
		"id": cr.ID, "node_id": "CR_" + id, "head_sha": cr.HeadSHA, "name": cr.Name,
		"external_id": cr.ExternalID, "details_url": nullable(cr.DetailsURL),
		"url": api + "/check-runs/" + id, "html_url": s.webURL + "/" + rp.owner + "/" + rp.name + "/runs/" + id,
		"status": cr.Status, "conclusion": nullable(cr.Conclusion),
		"started_at": when(cr.StartedAt), "completed_at": when(cr.CompletedAt),
		"output": map[string]any{"title": nullable(cr.Title), "summary": nullable(cr.Summary), "text": nullable(cr.Text),
			"annotations_count": len(cr.Annotations), "annotations_url": api + "/check-runs/" + id + "/annotations"},
		"check_suite": map[string]any{"id": cr.suite}, "app": s.appJSON(q, cr.AppID, cr.AppSlug),
		"pull_requests": prs,
	}
}

func (s *Server) minimalPR(q *req, rp *repo, is *issue) map[string]any {
	api := q.apiBase + "/repos/" + rp.owner + "/" + rp.name
	branch := func(ref, sha string) map[string]any {
		return map[string]any{"ref": ref, "sha": sha, "repo": map[string]any{"id": rp.id, "url": api, "name": rp.name}}
	}
	return map[string]any{"id": int64(is.number) + rp.id*100000, "number": is.number,
		"url": api + "/pulls/" + strconv.Itoa(is.number), "head": branch(is.pr.HeadRef, is.pr.HeadSHA),
		"base": branch(is.pr.BaseRef, is.pr.BaseSHA)}
}

// appJSON is an App in GitHub's integration shape.
func (s *Server) appJSON(q *req, id int64, slug string) map[string]any {
	epoch := ts(time.Unix(0, 0))
	return map[string]any{
		"id": id, "slug": slug, "node_id": fmt.Sprintf("A_%d", id), "client_id": fmt.Sprintf("Iv1.%d", id),
		"owner": s.simpleUserJSON(q, slug), "name": slug, "description": nil,
		"external_url": "https://example.com/" + url.PathEscape(slug), "html_url": s.webURL + "/apps/" + url.PathEscape(slug),
		"created_at": epoch, "updated_at": epoch, "events": []any{"check_run", "check_suite"},
		"permissions": map[string]any{"checks": "write", "contents": "read", "metadata": "read"},
	}
}
