package app

import (
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
)

// Route is what the fake GitHub answered on one route ("GET
// /repos/{owner}/{repo}/git/blobs/{sha}").
type Route struct {
	Route string
	// Calls counts the requests; Failed those answered with a status of
	// 400 or more.
	Calls, Failed int
	// Down is the bytes of the answers' bodies, Up those of the requests'.
	Down, Up int64
}

// Meter counts the requests a fake GitHub answers, by route, and their
// bytes. It wraps the fake's handler (ghfake.SetWrapper).
type Meter struct {
	mu     sync.Mutex
	routes map[string]*Route
}

func newMeter() *Meter { return &Meter{routes: map[string]*Route{}} }

// Reset forgets every count.
func (m *Meter) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.routes = map[string]*Route{}
}

// Routes are the counts so far, the most called first.
func (m *Meter) Routes() []Route {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Route, 0, len(m.routes))
	for _, r := range m.routes {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Calls != out[j].Calls {
			return out[i].Calls > out[j].Calls
		}
		return out[i].Route < out[j].Route
	})
	return out
}

// Totals sums the routes.
func Totals(rs []Route) Route {
	t := Route{Route: "total"}
	for _, r := range rs {
		t.Calls += r.Calls
		t.Failed += r.Failed
		t.Down += r.Down
		t.Up += r.Up
	}
	return t
}

// CallsTo sums the calls of the routes whose name contains part.
func CallsTo(rs []Route, part string) int {
	n := 0
	for _, r := range rs {
		if strings.Contains(r.Route, part) {
			n += r.Calls
		}
	}
	return n
}

func (m *Meter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &countingWriter{ResponseWriter: w, status: http.StatusOK}
		body := &countingReader{r: r.Body}
		r.Body = body
		h.ServeHTTP(cw, r)
		name := r.Method + " " + RouteOf(r.URL.Path)
		m.mu.Lock()
		defer m.mu.Unlock()
		rt := m.routes[name]
		if rt == nil {
			rt = &Route{Route: name}
			m.routes[name] = rt
		}
		rt.Calls++
		if cw.status >= 400 {
			rt.Failed++
		}
		rt.Down += cw.n
		rt.Up += body.n
	})
}

// RouteOf turns an API path into its route: owner and repository, numbers,
// commit and object SHAs, contents paths and label names become
// placeholders.
func RouteOf(path string) string {
	path = strings.TrimPrefix(path, "/api/v3")
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if len(segs) >= 3 && segs[0] == "repos" {
		segs[1], segs[2] = "{owner}", "{repo}"
	}
	for i := 1; i < len(segs); i++ {
		switch prev := segs[i-1]; {
		case prev == "contents" || prev == "tarball" || prev == "zipball":
			return "/" + strings.Join(append(segs[:i:i], "{path}"), "/")
		case prev == "labels" && i >= 3 && segs[i-3] == "issues":
			segs[i] = "{name}"
		case isNumber(segs[i]):
			segs[i] = "{n}"
		case isSHA(segs[i]):
			segs[i] = "{sha}"
		}
	}
	return "/" + strings.Join(segs, "/")
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isSHA(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

type countingWriter struct {
	http.ResponseWriter
	status int
	n      int64
}

func (w *countingWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.n += int64(n)
	return n, err
}

func (w *countingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

type countingReader struct {
	r io.ReadCloser
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) Close() error { return c.r.Close() }
