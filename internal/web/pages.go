package web

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// view is what the layout renders around a page.
type view struct {
	Title       string
	Viewer      *Viewer
	LogoutToken string
	Flash       *flash
	// Live names what /events changes reload: "inbox", or "issue" and
	// "commit" with LiveRepo, LiveIssue and LiveSHA.
	Live      string
	LiveRepo  string
	LiveIssue int
	LiveSHA   string
	// Status and Message are an error page's.
	Status  int
	Message string
	Page    any
}

type issueView struct {
	*IssuePage
	// Tokens are the per-action CSRF token of the resolve form.
	Token string
}

type commitView struct{ *CommitPage }

var (
	ownerRE = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)
	repoRE  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
	shaRE   = regexp.MustCompile(`^[0-9a-fA-F]{7,64}$`)
	idRE    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)
)

// maxReason bounds the reason of a resolution, in characters: decide.MaxReason,
// what ResolveAsUser accepts.
const maxReason = 400

// repoParams are the owner and repository of the path, when they can name
// a GitHub repository.
func repoParams(r *http.Request) (owner, repo string, ok bool) {
	owner, repo = r.PathValue("owner"), r.PathValue("repo")
	return owner, repo, ownerRE.MatchString(owner) && repoRE.MatchString(repo) && repo != "." && repo != ".."
}

// issueParams are repoParams and the path's {n}, when it is a positive
// issue or pull request number.
func issueParams(r *http.Request) (owner, repo string, n int, ok bool) {
	owner, repo, ok = repoParams(r)
	n, err := strconv.Atoi(r.PathValue("n"))
	return owner, repo, n, ok && err == nil && n > 0 && n < 1<<31
}

// visible asks GitHub, with the person's own token, whether they can read
// the repository, once the path named one (valid). Not being able to is
// answered exactly as a repository that does not exist; GitHub failing is
// a 502.
func (p *Pages) visible(w http.ResponseWriter, r *http.Request, s *session, valid bool, owner, repo string) bool {
	if !valid {
		p.notFound(w, r, s)
		return false
	}
	ok, err := p.oauth.User(s.token()).CanSee(r.Context(), owner, repo)
	if err == nil && !ok {
		err = ErrNotFound
	}
	if err != nil {
		p.sourceFailed(w, r, s, "checking access to "+owner+"/"+repo, err)
	}
	return err == nil
}

// sourceFailed answers a Source error: ErrNotFound is the 404, anything
// else a 502.
func (p *Pages) sourceFailed(w http.ResponseWriter, r *http.Request, s *session, what string, err error) {
	if errors.Is(err, ErrNotFound) {
		p.notFound(w, r, s)
		return
	}
	p.upstream(w, r, s, what, err)
}

func (p *Pages) issue(w http.ResponseWriter, r *http.Request, s *session) {
	owner, repo, n, ok := issueParams(r)
	if !p.visible(w, r, s, ok, owner, repo) {
		return
	}
	page, err := p.src.Issue(r.Context(), owner, repo, n, s.Login)
	if err != nil {
		p.sourceFailed(w, r, s, "reading "+owner+"/"+repo+"#"+strconv.Itoa(n), err)
		return
	}
	v := p.base(s, page.Title)
	v.Flash = p.takeFlash(w, r, owner, repo, n)
	v.Live, v.LiveRepo, v.LiveIssue = "issue", owner+"/"+repo, n
	v.Page = issueView{IssuePage: page, Token: s.csrfToken(resolveAction(owner, repo, n))}
	p.render(w, r, http.StatusOK, "issue", v)
}

func (p *Pages) commit(w http.ResponseWriter, r *http.Request, s *session) {
	owner, repo, ok := repoParams(r)
	sha := r.PathValue("sha")
	if !p.visible(w, r, s, ok && shaRE.MatchString(sha), owner, repo) {
		return
	}
	p.showCommit(w, r, s, owner, repo, sha, 0)
}

func (p *Pages) pull(w http.ResponseWriter, r *http.Request, s *session) {
	owner, repo, n, ok := issueParams(r)
	if !p.visible(w, r, s, ok, owner, repo) {
		return
	}
	sha, err := p.src.PullHead(r.Context(), owner, repo, n)
	if err != nil {
		p.sourceFailed(w, r, s, "reading pull request "+owner+"/"+repo+"#"+strconv.Itoa(n), err)
		return
	}
	p.showCommit(w, r, s, owner, repo, sha, n)
}

func (p *Pages) showCommit(w http.ResponseWriter, r *http.Request, s *session, owner, repo, sha string, pr int) {
	page, err := p.src.Commit(r.Context(), owner, repo, sha, s.Login)
	if err != nil {
		p.sourceFailed(w, r, s, "reading commit "+owner+"/"+repo+"@"+sha, err)
		return
	}
	if pr != 0 {
		page.PR = pr
	}
	title := "Commit " + short(page.SHA)
	if page.PR != 0 {
		title = "Pull request #" + strconv.Itoa(page.PR)
	}
	v := p.base(s, title)
	v.Live, v.LiveRepo, v.LiveSHA = "commit", owner+"/"+repo, page.SHA
	v.Page = commitView{page}
	p.render(w, r, http.StatusOK, "commit", v)
}

// resolveAction is the CSRF action of an issue's resolve form.
func resolveAction(owner, repo string, n int) string {
	return "resolve " + owner + "/" + repo + "#" + strconv.Itoa(n)
}

// resolve posts the person's own /resolve comment through the Source. A
// refusal is shown (403, or 409 when the decision no longer applies),
// never a 500; success goes back to the issue with a flash.
func (p *Pages) resolve(w http.ResponseWriter, r *http.Request, s *session) {
	owner, repo, n, ok := issueParams(r)
	if !ok {
		p.notFound(w, r, s)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if !s.checkCSRF(resolveAction(owner, repo, n), r.PostFormValue("csrf")) {
		p.fail(w, r, s, http.StatusForbidden, "Refused", "This form is stale or was not sent from its page. Reload the page and try again.")
		return
	}
	req, problem := resolveRequest(r, owner, repo, n, s.Login)
	if problem != "" {
		p.fail(w, r, s, http.StatusBadRequest, "Not resolved", problem)
		return
	}
	if !p.visible(w, r, s, true, owner, repo) {
		return
	}
	commentURL, err := p.src.Resolve(r.Context(), s.token(), req)
	var refused *RefusedError
	switch {
	case errors.As(err, &refused):
		code := http.StatusForbidden
		if refused.Conflict {
			code = http.StatusConflict
		}
		p.fail(w, r, s, code, "Not resolved", refused.Why)
		return
	case err != nil:
		p.sourceFailed(w, r, s, "resolving "+req.Decision+" on "+owner+"/"+repo+"#"+strconv.Itoa(n), err)
		return
	}
	p.setFlash(w, flash{Repo: owner + "/" + repo, Issue: n, Decision: req.Decision, Option: req.Option, CommentURL: commentURL})
	http.Redirect(w, r, "/"+owner+"/"+repo+"/issues/"+strconv.Itoa(n)+"#"+req.Decision, http.StatusSeeOther)
}

// resolveRequest reads the form: a decision, an option and a reason of
// one line (whitespace folded) at most maxReason characters.
func resolveRequest(r *http.Request, owner, repo string, n int, login string) (ResolveRequest, string) {
	req := ResolveRequest{
		Owner: owner, Repo: repo, Issue: n, Viewer: login,
		Decision: r.PostFormValue("decision"), Option: r.PostFormValue("option"),
		Reason: strings.Join(strings.Fields(r.PostFormValue("reason")), " "),
	}
	switch {
	case !idRE.MatchString(req.Decision):
		return req, "The form named no decision."
	case req.Option == "":
		return req, "Pick an option, then resolve."
	case !idRE.MatchString(req.Option):
		return req, "That option is not one of the decision's."
	case utf8.RuneCountInString(req.Reason) > maxReason:
		return req, "The reason is longer than " + strconv.Itoa(maxReason) + " characters."
	}
	return req, ""
}

// base is the layout's view for a signed-in page.
func (p *Pages) base(s *session, title string) view {
	v := view{Title: title}
	if s != nil {
		vw := s.viewer()
		v.Viewer, v.LogoutToken = &vw, s.csrfToken("logout")
	}
	return v
}

// notFound is the one 404 of the pages: the same body and headers for a
// repository that does not exist, one the person cannot see, and any other
// unknown path.
func (p *Pages) notFound(w http.ResponseWriter, r *http.Request, s *session) {
	p.fail(w, r, s, http.StatusNotFound, "Not found", "There is nothing here, or you cannot see it with your GitHub account.")
}

// upstream is a 502: GitHub or the server's source failed.
func (p *Pages) upstream(w http.ResponseWriter, r *http.Request, s *session, what string, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	p.cfg.Logger.Warn("web: "+what, "err", err)
	p.fail(w, r, s, http.StatusBadGateway, "GitHub did not answer", "phasegate could not read this from GitHub just now. Try again in a moment.")
}

func (p *Pages) fail(w http.ResponseWriter, r *http.Request, s *session, code int, title, message string) {
	v := p.base(s, title)
	v.Status, v.Message = code, message
	p.render(w, r, code, "error", v)
}
