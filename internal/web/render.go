package web

import (
	"bytes"
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// render writes the page whole, or a bare 500 when a template fails (a
// bug: nothing half-written).
func (p *Pages) render(w http.ResponseWriter, r *http.Request, code int, name string, v view) {
	var buf bytes.Buffer
	if err := p.tmpl[name].ExecuteTemplate(&buf, "layout", v); err != nil {
		p.cfg.Logger.Error("web: rendering "+name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

// funcs are the templates' helpers. Every URL that comes from the Source
// goes through link (or avatar): it is shown as a link only when it is
// https on GitHub's host or ours.
func (p *Pages) funcs() template.FuncMap {
	return template.FuncMap{
		"link":        p.link,
		"avatar":      p.avatar,
		"when":        func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
		"iso":         func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"ago":         p.ago,
		"short":       short,
		"pagePath":    pagePath,
		"runURL":      p.runURL,
		"verdictIcon": verdictIcon,
		"stateIcon":   stateIcon,
		"lower":       strings.ToLower,
		"initial": func(s string) string {
			if s == "" {
				return ""
			}
			return strings.ToLower(s[:1])
		},
	}
}

// link is u when it is a URL of GitHub's web origin or our own: https, or
// the http of a loopback origin configured so (New accepts http only on a
// loopback address: a local try, a fake GitHub); "" otherwise (the template
// then shows no link).
func (p *Pages) link(u string) string {
	x, err := url.Parse(u)
	if err != nil || x.User != nil || x.Opaque != "" {
		return ""
	}
	for _, o := range []*url.URL{p.github, p.public} {
		if strings.EqualFold(x.Host, o.Host) && (x.Scheme == "https" || x.Scheme == o.Scheme) {
			return x.String()
		}
	}
	return ""
}

// avatar is u when it is an https avatar on GitHub's avatar host (or
// GHES's own host): the CSP's img-src allows no other.
func (p *Pages) avatar(u string) string {
	x, err := url.Parse(u)
	if err != nil || x.Scheme != "https" || x.User != nil {
		return ""
	}
	if x.Host == "avatars.githubusercontent.com" || (p.github.Host != "github.com" && strings.EqualFold(x.Host, p.github.Host)) {
		return x.String()
	}
	return ""
}

// ago says how long before now t was, in the largest whole unit.
func (p *Pages) ago(t time.Time) string {
	d := p.cfg.Now().Sub(t)
	switch {
	case t.IsZero():
		return ""
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute") + " ago"
	case d < 48*time.Hour:
		return plural(int(d/time.Hour), "hour") + " ago"
	}
	return plural(int(d/(24*time.Hour)), "day") + " ago"
}

// pagePath is the path of one of these pages, each segment escaped; ""
// when a segment is empty or a dot segment (no link is shown then).
func pagePath(segs ...string) string {
	esc := make([]string, len(segs))
	for i, s := range segs {
		if s == "" || s == "." || s == ".." {
			return ""
		}
		esc[i] = url.PathEscape(s)
	}
	return "/" + strings.Join(esc, "/")
}

// runURL is a workflow run on GitHub: {web}/{owner}/{repo}/actions/runs/{id}.
func (p *Pages) runURL(owner, repo string, id int64) string {
	path := pagePath(owner, repo, "actions", "runs", strconv.FormatInt(id, 10))
	if path == "" || id <= 0 {
		return ""
	}
	return p.github.String() + path
}

func short(sha string) string { return sha[:min(len(sha), 7)] }

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

// verdictIcon is the sign shown with a verdict's word (never colour alone).
func verdictIcon(v string) string {
	switch v {
	case "SHIP":
		return "✔"
	case "ADVISORY":
		return "⚠"
	case "HOLD":
		return "✖"
	}
	return "?"
}

// stateIcon is the sign of a status state or a decision's.
func stateIcon(s string) string {
	switch s {
	case "success", "resolved":
		return "✔"
	case "pending":
		return "◷"
	case "failure", "error":
		return "✖"
	}
	return "•"
}

func serveStatic(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	data, err := fs.ReadFile(staticFS, "static/"+name)
	if err != nil || strings.HasPrefix(name, ".") {
		http.NotFound(w, r)
		return
	}
	switch {
	case strings.HasSuffix(name, ".js"):
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	case strings.HasSuffix(name, ".css"):
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=300")
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(data))
}

// flash is the message an issue page shows once after a resolution.
type flash struct {
	Repo       string `json:"r"`
	Issue      int    `json:"i"`
	Decision   string `json:"d"`
	Option     string `json:"o"`
	CommentURL string `json:"u,omitempty"`
	Expires    int64  `json:"e"`
}

const flashTTL = time.Minute

func (p *Pages) setFlash(w http.ResponseWriter, f flash) {
	f.Expires = p.cfg.Now().Add(flashTTL).Unix()
	v, err := p.flashes.seal(f)
	if err != nil {
		return
	}
	p.setCookie(w, p.flashCookie, v, "/", int(flashTTL.Seconds()))
}

// takeFlash is the flash for this issue, once.
func (p *Pages) takeFlash(w http.ResponseWriter, r *http.Request, owner, repo string, n int) *flash {
	c, err := r.Cookie(p.flashCookie)
	if err != nil {
		return nil
	}
	var f flash
	if !p.flashes.open(c.Value, &f) || p.cfg.Now().Unix() >= f.Expires || f.Repo != owner+"/"+repo || f.Issue != n {
		return nil
	}
	p.setCookie(w, p.flashCookie, "", "/", -1)
	return &f
}
