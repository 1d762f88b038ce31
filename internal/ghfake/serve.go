package ghfake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Faults configures injected failures. A zero Faults injects nothing.
type Faults struct {
	// Seed seeds the generator that decides which requests fail, so that a
	// run with the same sequence of requests fails the same requests.
	Seed uint64
	// ServerErrorRate is the fraction of requests answered 500, 502, 503 or
	// 504 before they are processed (nothing changes on the server).
	ServerErrorRate float64
	// LostResponseRate is the fraction of successful writes answered 502
	// after they were processed: the change happened, the client cannot
	// know (a gateway timeout after the backend committed).
	LostResponseRate float64
	// SecondaryRate is the fraction of requests answered 403 with a
	// secondary rate limit message and Retry-After (see RetryAfter).
	SecondaryRate float64
	// RetryAfter is the Retry-After of injected secondary limits, rounded up
	// to whole seconds (default 1s).
	RetryAfter time.Duration
	// HangRate is the fraction of requests that hang for HangFor (or until
	// the client gives up) before they are processed.
	HangRate float64
	HangFor  time.Duration
	// MaxHangs caps how many requests hang (0: no cap). Each hang costs the
	// client its attempt timeout in real time, so a test that needs a few
	// to exercise that timeout can draw them early and stop there.
	MaxHangs int
	// Latency is added to every request; for writes it is spent inside the
	// window the overlapping-writes detector watches.
	Latency time.Duration
	// PathContains limits the random faults to requests whose API path
	// contains this string (empty: all requests).
	PathContains string
	// WritesOnly limits the random faults to writes (non-GET requests).
	WritesOnly bool
}

// ExpireHangs makes every request drawn to hang call expire with it first (a
// JumpClock's Expire: it fires the attempt timer of the client that sent it),
// so that the client gives up at once, as its attempt timeout would have
// made it, instead of after that timeout in real time; the request then
// hangs until its client goes away (or HangFor). A request whose timer
// expire does not find (false: one sent without such a timer, such as
// ghinstallation's token requests) is not hung: it is answered as if no
// fault had been drawn, and does not count against MaxHangs.
func (s *Server) ExpireHangs(expire func(r *http.Request) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireHang = expire
}

// expireHung calls the ExpireHangs hook for a request drawn to hang, and
// reports whether it is to hang.
func (s *Server) expireHung(r *http.Request) bool {
	s.mu.Lock()
	expire := s.expireHang
	s.mu.Unlock()
	if expire == nil || expire(r) {
		return true
	}
	s.mu.Lock()
	s.hangs--
	s.mu.Unlock()
	return false
}

// SetFaults replaces the fault configuration and reseeds the generator.
func (s *Server) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = f
	s.hangs = 0
	s.rng = rand.New(rand.NewPCG(f.Seed, f.Seed^0x9e3779b97f4a7c15))
}

type scripted struct {
	status       int
	pathContains string
}

// FailNext makes the next n requests whose path contains pathContains (any
// path when empty) answer status (for example 502) before they are
// processed.
func (s *Server) FailNext(n, status int, pathContains string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 0; i < n; i++ {
		s.failNext = append(s.failNext, scripted{status: status, pathContains: pathContains})
	}
}

// SecondaryLimit makes every request answer status (403 or 429) with a
// secondary rate limit message and a Retry-After counting down to now+d.
func (s *Server) SecondaryLimit(d time.Duration, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secUntil = s.now().Add(d)
	s.secStatus = status
}

// ExhaustPrimary uses up login's primary rate limit until now+resetIn:
// requests answer 403 (or the status set by SetPrimaryLimitStatus) with
// x-ratelimit-remaining 0 and x-ratelimit-reset at the reset time.
func (s *Server) ExhaustPrimary(login string, resetIn time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.rateLocked(identityOf(login))
	st.used = st.limit
	st.reset = s.now().Add(resetIn)
}

// SetPrimaryLimitStatus sets the status of primary rate limit answers: 403
// (default) or 429; GitHub uses both.
func (s *Server) SetPrimaryLimitStatus(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.primaryCode = status
}

func identityOf(login string) string {
	if login == "" {
		return "anonymous"
	}
	return strings.ToLower(login)
}

// Hold stops the first request that matches it before the fake processes
// it, until the test releases it or the client goes away: a test can then
// kill the client "mid-handling" at a known step. A request whose client
// went away while held is not processed, as when a connection dies before
// GitHub acted on it.
type Hold struct {
	method, path string
	arrived      chan Call
	release      chan struct{}
	gone         chan struct{}
	once         sync.Once
}

// HoldNext holds the next request with this method whose API path contains
// pathContains.
func (s *Server) HoldNext(method, pathContains string) *Hold {
	h := &Hold{method: method, path: pathContains, arrived: make(chan Call, 1), release: make(chan struct{}), gone: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holds = append(s.holds, h)
	return h
}

// Arrived receives the held request once it arrived (its User-Agent tells
// which client sent it).
func (h *Hold) Arrived() <-chan Call { return h.arrived }

// Gone is closed when the held request's client went away.
func (h *Hold) Gone() <-chan struct{} { return h.gone }

// Release lets the held request (or the next one to match) go on.
func (h *Hold) Release() { h.once.Do(func() { close(h.release) }) }

func (s *Server) takeHold(method, path string) *Hold {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, h := range s.holds {
		if h.method == method && strings.Contains(path, h.path) {
			s.holds = append(s.holds[:i:i], s.holds[i+1:]...)
			return h
		}
	}
	return nil
}

// wait blocks the request until it is released (true) or its client went
// away (false).
func (h *Hold) wait(r *http.Request, c Call) bool {
	h.arrived <- c
	select {
	case <-h.release:
		return true
	case <-r.Context().Done():
		close(h.gone)
		return false
	}
}

// Call is one request the fake answered.
type Call struct {
	Method      string
	Path        string // API path, unescaped, without the /api/v3 prefix
	Query       string // raw query
	Status      int
	Login       string // acting identity; empty when anonymous
	Conditional bool   // an If-None-Match was sent
	Enterprise  bool   // the request came under /api/v3
	Fault       string // "", "5xx", "lost-response", "secondary", "primary", "hang", "held", "scripted"
	UserAgent   string
}

const maxCallLog = 200000

// Calls returns the call log, oldest first.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// CountCalls counts logged calls with this method (any when empty) whose
// path starts with pathPrefix.
func (s *Server) CountCalls(method, pathPrefix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		if (method == "" || c.Method == method) && strings.HasPrefix(c.Path, pathPrefix) {
			n++
		}
	}
	return n
}

// ResetCalls empties the call log.
func (s *Server) ResetCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = nil
}

// MaxConcurrentWrites is the largest number of writes (non-GET requests) one
// identity ever had in flight at once.
func (s *Server) MaxConcurrentWrites() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := 0
	for _, v := range s.maxInflight {
		m = max(m, v)
	}
	return m
}

// MaxConcurrentRequests is the largest number of requests (reads and
// writes, all identities) the fake ever handled at once.
func (s *Server) MaxConcurrentRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxActive
}

// OverlappingWrites counts writes that started while another write by the
// same identity was in flight.
func (s *Server) OverlappingWrites() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.overlaps
}

// reply is what a handler answers; serve turns it into HTTP.
type reply struct {
	status int
	body   any   // JSON-encoded
	list   []any // a paginated JSON array
	// page, with total, is a paginated JSON array whose items are built
	// only for the page asked for: item i of total (a listing of tens of
	// thousands of comments renders 100 per request, not all of them).
	page   func(i int) any
	total  int
	raw    []byte
	ctype  string
	header http.Header // extra headers (a cursor-paginated listing's Link)
}

func errReply(status int, msg string) reply {
	return reply{status: status, body: map[string]any{
		"message":           msg,
		"documentation_url": "https://docs.github.com/rest",
		"status":            strconv.Itoa(status),
	}}
}

func notFound() reply { return errReply(http.StatusNotFound, "Not Found") }

func validationFailed(resource, field, code, msg string) reply {
	e := map[string]any{"resource": resource, "field": field, "code": code}
	if msg != "" {
		e["message"] = msg
	}
	return reply{status: http.StatusUnprocessableEntity, body: map[string]any{
		"message":           "Validation Failed",
		"errors":            []any{e},
		"documentation_url": "https://docs.github.com/rest",
		"status":            "422",
	}}
}

// req is a request being handled.
type req struct {
	r       *http.Request
	segs    []string
	params  map[string]string
	login   string
	apiBase string // scheme://host[/api/v3] without trailing slash
	body    []byte
}

func (q *req) query(name string) string { return q.r.URL.Query().Get(name) }

func (q *req) decode(v any) error {
	if len(q.body) == 0 {
		return fmt.Errorf("empty body")
	}
	return json.Unmarshal(q.body, v)
}

// splitPath splits the escaped path into unescaped segments and strips the
// GitHub Enterprise /api/v3 prefix.
func splitPath(r *http.Request) (segs []string, enterprise bool) {
	raw := strings.Trim(r.URL.EscapedPath(), "/")
	if raw == "" {
		return nil, false
	}
	for _, p := range strings.Split(raw, "/") {
		u, err := url.PathUnescape(p)
		if err != nil {
			u = p
		}
		segs = append(segs, u)
	}
	if len(segs) >= 2 && segs[0] == "api" && segs[1] == "v3" {
		return segs[2:], true
	}
	return segs, false
}

func isWrite(method string) bool {
	return method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions
}

// serve handles one request: it authenticates it, counts it among the
// requests in flight, applies the latency, holds and injected faults, routes
// it, and logs the call.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	segs, enterprise := splitPath(r)
	if !enterprise && len(segs) >= 2 && segs[0] == "login" && segs[1] == "oauth" {
		s.serveOAuth(w, r, "/"+strings.Join(segs, "/")) // the web host's, not the API's
		return
	}
	call := Call{Method: r.Method, Path: "/" + strings.Join(segs, "/"), Query: r.URL.RawQuery,
		Conditional: r.Header.Get("If-None-Match") != "", Enterprise: enterprise, UserAgent: r.UserAgent()}
	body, err := readBody(r.Body, r.ContentLength)
	if err != nil {
		s.finish(w, r, &call, "anonymous", errReply(http.StatusBadRequest, "Problems parsing JSON"), nil, false)
		return
	}
	prefix := ""
	if enterprise {
		prefix = "/api/v3"
	}
	q := &req{r: r, segs: segs, apiBase: "http://" + r.Host + prefix, body: body}

	s.mu.Lock()
	login, authFail := s.authenticateLocked(r, segs)
	q.login, call.Login = login, login
	identity := identityOf(login)
	if authFail != "" {
		s.mu.Unlock()
		s.finish(w, r, &call, identity, errReply(http.StatusUnauthorized, authFail), nil, false)
		return
	}
	write := isWrite(r.Method)
	leave := s.enterLocked(identity, write)
	fault, hang := s.drawFaultLocked(call.Path, write)
	latency := s.faults.Latency
	s.mu.Unlock()
	defer leave()

	fault, ok := s.delay(r, &call, fault, latency, hang)
	if !ok {
		return
	}
	s.mu.Lock()
	rep, extra, count := s.answerLocked(q, &call, identity, fault, write)
	s.mu.Unlock()
	s.finish(w, r, &call, identity, rep, extra, count)
}

// enterLocked counts a request in flight, and a write among identity's
// writes in flight (an overlap when another was); leave uncounts it.
func (s *Server) enterLocked(identity string, write bool) (leave func()) {
	s.active++
	s.maxActive = max(s.maxActive, s.active)
	if write {
		s.inflight[identity]++
		if s.inflight[identity] > 1 {
			s.overlaps++
		}
		s.maxInflight[identity] = max(s.maxInflight[identity], s.inflight[identity])
	}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if write {
			s.inflight[identity]--
		}
		s.active--
	}
}

// delay spends the latency, waits while the request is held, and hangs it
// when the drawn fault is "hang" (then no fault is left). It returns the
// fault left, and false when the client went away (the call is logged
// without a status, and nothing is processed).
func (s *Server) delay(r *http.Request, call *Call, fault string, latency, hang time.Duration) (string, bool) {
	if !sleepCtx(r.Context(), latency) {
		return fault, false
	}
	if h := s.takeHold(r.Method, call.Path); h != nil {
		call.Fault = "held"
		if !h.wait(r, *call) {
			s.logGone(call)
			return fault, false
		}
	}
	if fault == "hang" && !s.expireHung(r) {
		return "", true
	}
	if fault == "hang" {
		call.Fault = "hang"
		if !sleepCtx(r.Context(), hang) {
			s.logGone(call)
			return fault, false
		}
		fault = ""
	}
	return fault, true
}

// logGone logs a call whose client went away before it was answered.
func (s *Server) logGone(call *Call) {
	s.mu.Lock()
	call.Status = 0
	s.logLocked(*call)
	s.mu.Unlock()
}

// answerLocked is the answer to q: a secondary or primary rate limit in
// force, the injected fault, a write denied to identity, or else the
// route's answer (replaced by a 502 when its response is to be lost).
// count says whether the request counts against the primary rate limit.
func (s *Server) answerLocked(q *req, call *Call, identity, fault string, write bool) (rep reply, extra http.Header, count bool) {
	now := s.now()
	extra = http.Header{}
	st := s.rateLocked(identity)
	switch {
	case now.Before(s.secUntil):
		call.Fault = "secondary"
		rep = secondaryReply(s.secStatus)
		extra.Set("Retry-After", strconv.Itoa(ceilSeconds(s.secUntil.Sub(now))))
	case st.used >= st.limit && !isRateLimitPath(q.segs):
		call.Fault = "primary"
		rep = errReply(s.primaryCode, fmt.Sprintf("API rate limit exceeded for %s.", identity))
		rep.body.(map[string]any)["documentation_url"] = "https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"
	case fault == "secondary":
		call.Fault = "secondary"
		rep = secondaryReply(http.StatusForbidden)
		ra := s.faults.RetryAfter
		if ra <= 0 {
			ra = time.Second
		}
		extra.Set("Retry-After", strconv.Itoa(ceilSeconds(ra)))
	case strings.HasPrefix(fault, "status:"):
		code, _ := strconv.Atoi(strings.TrimPrefix(fault, "status:"))
		call.Fault = "scripted"
		rep = errReply(code, http.StatusText(code))
	case fault == "5xx":
		call.Fault = "5xx"
		codes := []int{500, 502, 503, 504}
		rep = errReply(codes[s.rng.IntN(len(codes))], "Server Error")
	case write && s.deny[identity]:
		rep = errReply(http.StatusForbidden, "Resource not accessible by integration")
	default:
		rep = s.routeLocked(q)
		count = !isRateLimitPath(q.segs)
		if fault == "lost-response" && rep.status < 300 {
			call.Fault = "lost-response"
			rep = errReply(http.StatusBadGateway, "Server Error")
		}
	}
	return rep, extra, count
}

// isRateLimitPath reports whether a path costs no primary rate limit:
// GET /rate_limit, and codeload's archive downloads (not the API).
func isRateLimitPath(segs []string) bool {
	return (len(segs) == 1 && segs[0] == "rate_limit") || (len(segs) > 0 && segs[0] == "_codeload")
}

func secondaryReply(status int) reply {
	rep := errReply(status, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.")
	rep.body.(map[string]any)["documentation_url"] = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
	return rep
}

func ceilSeconds(d time.Duration) int {
	n := int((d + time.Second - 1) / time.Second)
	if n < 1 {
		n = 1
	}
	return n
}

// drawFaultLocked decides the fault of one request: a scripted failure
// first, then the random ones.
func (s *Server) drawFaultLocked(path string, write bool) (fault string, hang time.Duration) {
	for i, sc := range s.failNext {
		if strings.Contains(path, sc.pathContains) {
			s.failNext = append(s.failNext[:i:i], s.failNext[i+1:]...)
			return "status:" + strconv.Itoa(sc.status), 0
		}
	}
	f := s.faults
	if (f.PathContains != "" && !strings.Contains(path, f.PathContains)) || (f.WritesOnly && !write) {
		return "", 0
	}
	if f.HangRate > 0 && s.rng.Float64() < f.HangRate && (f.MaxHangs == 0 || s.hangs < f.MaxHangs) {
		s.hangs++
		return "hang", f.HangFor
	}
	if f.SecondaryRate > 0 && s.rng.Float64() < f.SecondaryRate {
		return "secondary", 0
	}
	if f.ServerErrorRate > 0 && s.rng.Float64() < f.ServerErrorRate {
		return "5xx", 0
	}
	if write && f.LostResponseRate > 0 && s.rng.Float64() < f.LostResponseRate {
		return "lost-response", 0
	}
	return "", 0
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// finish encodes a reply: pagination, ETag and 304, rate-limit headers, and
// logs the call. count says whether the answer counts against the primary
// rate limit; an answer of 304 Not Modified never does.
func (s *Server) finish(w http.ResponseWriter, r *http.Request, call *Call, identity string, rep reply, extra http.Header, count bool) {
	h := w.Header()
	for k, v := range extra {
		h[k] = v
	}
	for k, v := range rep.header {
		h[k] = v
	}
	payload, ctype := s.payload(r, h, rep)
	if rep.raw == nil {
		defer putPayloadBuffer(payload) // written (copied) by the time finish returns
	}
	status := rep.status
	notModified := false
	if r.Method == http.MethodGet && status == http.StatusOK {
		// The ETag answers for the representation (GitHub's, like Rails'
		// Rack::ETag, digests the body), not the Link header: a page whose
		// items did not change answers 304 when a page is added after it.
		// The 304 carries the current Link; ghclient does not rely on it.
		d := sha256.New()
		d.Write([]byte(ctype + "\n"))
		d.Write(payload)
		etag := `W/"` + hex.EncodeToString(d.Sum(nil)[:16]) + `"`
		h.Set("ETag", etag)
		h.Set("Cache-Control", "private, max-age=60, s-maxage=60")
		if etagMatch(r.Header.Get("If-None-Match"), etag) {
			notModified = true
		}
	}
	h.Set("Vary", "Accept, Authorization, Cookie, X-GitHub-OTP")
	h.Set("X-GitHub-Media-Type", "github.v3; format=json")
	h.Set("X-GitHub-Api-Version-Selected", "2022-11-28")

	s.mu.Lock()
	st := s.rateLocked(identity)
	if count && !notModified {
		st.used++
	}
	h.Set("X-RateLimit-Limit", strconv.Itoa(st.limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(0, st.limit-st.used)))
	h.Set("X-RateLimit-Used", strconv.Itoa(st.used))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(st.reset.Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
	h.Set("X-GitHub-Request-Id", fmt.Sprintf("FAKE:%d", len(s.calls)+1))
	if notModified {
		status = http.StatusNotModified
	}
	call.Status = status
	s.logLocked(*call)
	s.mu.Unlock()

	if notModified {
		h.Del("Content-Type")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", strconv.Itoa(len(payload)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(payload)
	}
}

// payload encodes a reply's body: raw, one page of a list (with its Link
// header), or JSON.
func (s *Server) payload(r *http.Request, h http.Header, rep reply) (payload []byte, ctype string) {
	ctype = "application/json; charset=utf-8"
	switch {
	case rep.raw != nil:
		payload, ctype = rep.raw, rep.ctype
	case rep.list != nil || rep.page != nil:
		page, perPage := pageParams(r)
		total := len(rep.list)
		if rep.page != nil {
			total = rep.total
		}
		last := max(1, (total+perPage-1)/perPage)
		lo := min((page-1)*perPage, total)
		hi := min(lo+perPage, total)
		items := []any{}
		if rep.page != nil {
			s.mu.Lock() // the items are rendered from the state
			for i := lo; i < hi; i++ {
				items = append(items, rep.page(i))
			}
			s.mu.Unlock()
		} else {
			items = rep.list[lo:hi]
		}
		payload, _ = appendJSON(getPayloadBuffer(), items)
		if l := linkHeader(r, page, perPage, last); l != "" {
			h.Set("Link", l)
		}
	case rep.body != nil:
		payload, _ = appendJSON(getPayloadBuffer(), rep.body)
	}
	return payload, ctype
}

func (s *Server) logLocked(c Call) {
	if len(s.calls) >= maxCallLog {
		s.calls = append([]Call(nil), s.calls[len(s.calls)/2:]...)
	}
	s.calls = append(s.calls, c)
}

func etagMatch(header, etag string) bool {
	if header == "" {
		return false
	}
	weak := func(t string) string { return strings.TrimPrefix(strings.TrimSpace(t), "W/") }
	for _, t := range strings.Split(header, ",") {
		if strings.TrimSpace(t) == "*" || weak(t) == weak(etag) {
			return true
		}
	}
	return false
}

func pageParams(r *http.Request) (page, perPage int) {
	page, perPage = 1, 30
	if v, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && v > 0 {
		page = v
	}
	if v, err := strconv.Atoi(r.URL.Query().Get("per_page")); err == nil && v > 0 {
		perPage = min(v, 100)
	}
	return page, perPage
}

// linkHeader builds GitHub's Link header: next and last while there are
// further pages, first and prev after the first.
func linkHeader(r *http.Request, page, perPage, last int) string {
	mk := func(p int, rel string) string {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(p))
		q.Set("per_page", strconv.Itoa(perPage))
		u := url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: q.Encode()}
		return "<" + u.String() + `>; rel="` + rel + `"`
	}
	var parts []string
	if page > 1 {
		parts = append(parts, mk(min(page-1, last), "prev"))
	}
	if page < last {
		parts = append(parts, mk(page+1, "next"), mk(last, "last"))
	}
	if page > 1 {
		parts = append(parts, mk(1, "first"))
	}
	return strings.Join(parts, ", ")
}

// authenticateLocked maps the Authorization header to a login. A JWT is
// accepted only on /app endpoints and acts as "app:<id>".
func (s *Server) authenticateLocked(r *http.Request, segs []string) (login, fail string) {
	h := r.Header.Get("Authorization")
	if h == "" {
		if isWrite(r.Method) {
			return "", "Requires authentication"
		}
		return "", ""
	}
	scheme, cred, ok := strings.Cut(h, " ")
	scheme = strings.ToLower(scheme)
	if scheme == "basic" && len(segs) > 0 && segs[0] == "applications" {
		return s.oauthClientLocked(r)
	}
	if !ok || (scheme != "token" && scheme != "bearer") || cred == "" {
		return "", "Bad credentials"
	}
	if strings.Count(cred, ".") == 2 {
		if len(segs) == 0 || segs[0] != "app" {
			return "", "A JSON web token could not be decoded"
		}
		now := s.now
		if s.jwtNow != nil {
			now = s.jwtNow
		}
		a, err := verifyJWT(cred, s.apps, now())
		if err != nil {
			return "", "A JSON web token could not be decoded: " + err.Error()
		}
		return fmt.Sprintf("app:%d", a.id), ""
	}
	t, ok := s.tokens[cred]
	if !ok || (!t.expires.IsZero() && !s.now().Before(t.expires)) {
		return "", "Bad credentials"
	}
	return t.login, ""
}
