package ghfake

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"weak"
)

// The endpoints a GitHub App calls as itself or about its installations:
//
//	GET  /app                                      the App (JWT)
//	GET  /app/installations                        its installations (JWT)
//	GET  /installation/repositories                what an installation can access (installation token)
//	GET  /app/hook/deliveries                      the webhook's deliveries, newest first (JWT)
//	POST /app/hook/deliveries/{id}/attempts        redeliver one (JWT); 202
//
// A redelivery is recorded as a new delivery with the same GUID and
// redelivery true. When a hook target is set (SetHookTarget), the fake
// also sends it: a POST with GitHub's headers (X-GitHub-Event,
// X-GitHub-Delivery, X-Hub-Signature-256) to the target handler, in the
// background; WaitHookDeliveries waits for those.
//
// Their state lives beside the Server (keyed weakly by it, so that a
// closed fake is collected) and is guarded by its own mutex, taken after
// s.mu when both are held.

func init() {
	routes = append(routes,
		r("GET", "app", (*Server).getApp),
		r("GET", "app/installations", (*Server).listInstallations),
		r("GET", "installation/repositories", (*Server).installationRepos),
		r("GET", "app/hook/deliveries", (*Server).listHookDeliveries),
		r("POST", "app/hook/deliveries/:id/attempts", (*Server).redeliverHook),
	)
}

// HookDelivery is a delivery of an App's webhook, as the fake stores it.
type HookDelivery struct {
	ID             int64 // 0 in AddHookDelivery: assigned
	GUID           string
	DeliveredAt    time.Time // zero in AddHookDelivery: the fake's clock
	Redelivery     bool
	Status         string // "OK" or e.g. "Invalid HTTP Response: 503"; derived from StatusCode when empty
	StatusCode     int
	Event          string
	Action         string
	InstallationID int64
	RepositoryID   int64
	// Payload is the JSON body; a redelivery sends it again.
	Payload []byte
}

type hookState struct {
	mu          sync.Mutex
	deliveries  []*HookDelivery
	target      http.Handler
	secret      []byte
	inflight    sync.WaitGroup
	instRepos   map[int64][]string // installation → "owner/name"; absent: every repository
	instAccount map[int64]string
}

var hookStates sync.Map // weak.Pointer[Server] → *hookState

func (s *Server) hooks() *hookState {
	k := weak.Make(s)
	if v, ok := hookStates.Load(k); ok {
		return v.(*hookState)
	}
	v, loaded := hookStates.LoadOrStore(k, &hookState{instRepos: map[int64][]string{}, instAccount: map[int64]string{}})
	if !loaded {
		runtime.AddCleanup(s, func(k weak.Pointer[Server]) { hookStates.Delete(k) }, k)
	}
	return v.(*hookState)
}

// SetInstallationRepos sets the account an installation is installed on
// and the repositories ("owner/name") it can access. Without it, an
// installation's account is "installation-<id>" and it accesses every
// repository of the fake.
func (s *Server) SetInstallationRepos(installationID int64, account string, repos ...string) {
	h := s.hooks()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.instAccount[installationID] = account
	h.instRepos[installationID] = append([]string(nil), repos...)
}

// SetHookTarget makes redeliveries POST their payload, signed with secret
// (X-Hub-Signature-256), to target. Nil stops sending.
func (s *Server) SetHookTarget(target http.Handler, secret []byte) {
	h := s.hooks()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.target, h.secret = target, append([]byte(nil), secret...)
}

// AddHookDelivery records a delivery of the App's webhook and returns its
// id.
func (s *Server) AddHookDelivery(d HookDelivery) int64 {
	s.mu.Lock()
	if d.ID == 0 {
		d.ID = s.nextID()
	}
	if d.DeliveredAt.IsZero() {
		d.DeliveredAt = s.now().UTC()
	}
	s.mu.Unlock()
	if d.Status == "" {
		d.Status = hookStatus(d.StatusCode)
	}
	d.Payload = append([]byte(nil), d.Payload...)
	h := s.hooks()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.deliveries = append(h.deliveries, &d)
	return d.ID
}

// HookDeliveries returns the recorded deliveries, in the order recorded.
func (s *Server) HookDeliveries() []HookDelivery {
	h := s.hooks()
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]HookDelivery, 0, len(h.deliveries))
	for _, d := range h.deliveries {
		c := *d
		c.Payload = append([]byte(nil), d.Payload...)
		out = append(out, c)
	}
	return out
}

// WaitHookDeliveries waits until every redelivery sent to the hook target
// was answered.
func (s *Server) WaitHookDeliveries() { s.hooks().inflight.Wait() }

func hookStatus(code int) string {
	switch {
	case code == 0:
		return "pending"
	case code >= 200 && code < 300:
		return "OK"
	default:
		return "Invalid HTTP Response: " + strconv.Itoa(code)
	}
}

// appOf returns the App a request authenticated as with its JWT.
func (s *Server) appOf(q *req) (*app, bool) {
	if !strings.HasPrefix(q.login, "app:") {
		return nil, false
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(q.login, "app:"), 10, 64)
	if err != nil {
		return nil, false
	}
	a, ok := s.apps[id]
	return a, ok
}

func jwtRequired() reply {
	return errReply(http.StatusUnauthorized, "A JSON web token could not be decoded")
}

func (s *Server) getApp(q *req) reply {
	a, ok := s.appOf(q)
	if !ok {
		return jwtRequired()
	}
	return reply{status: 200, body: map[string]any{
		"id": a.id, "slug": a.slug, "node_id": fmt.Sprintf("A_%d", a.id), "name": a.slug,
		"owner": s.simpleUserJSON(q, a.slug+"-owner"), "description": "", "external_url": "https://example.com",
		"html_url": s.webURL + "/apps/" + a.slug, "created_at": ts(time.Unix(0, 0)), "updated_at": ts(time.Unix(0, 0)),
		"permissions": map[string]any{"issues": "write", "pull_requests": "write", "statuses": "write", "contents": "read", "metadata": "read", "members": "read"},
		"events":      []any{"issue_comment", "pull_request", "status"},
	}}
}

func (s *Server) listInstallations(q *req) reply {
	a, ok := s.appOf(q)
	if !ok {
		return jwtRequired()
	}
	var ids []int64
	for inst, appID := range s.inst {
		if appID == a.id {
			ids = append(ids, inst)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	list := []any{}
	for _, id := range ids {
		list = append(list, s.installationJSON(q, id))
	}
	return reply{status: 200, list: list}
}

// installationJSON is installation id as GitHub describes it.
func (s *Server) installationJSON(q *req, id int64) map[string]any {
	h := s.hooks()
	h.mu.Lock()
	account, ok := h.instAccount[id]
	_, selected := h.instRepos[id]
	h.mu.Unlock()
	if !ok {
		account = fmt.Sprintf("installation-%d", id)
	}
	sel := "all"
	if selected {
		sel = "selected"
	}
	a := s.apps[s.inst[id]]
	appID, slug := int64(0), ""
	if a != nil {
		appID, slug = a.id, a.slug
	}
	return map[string]any{
		"id": id, "app_id": appID, "app_slug": slug, "account": s.simpleUserJSON(q, account), "target_type": "Organization",
		"repository_selection": sel, "suspended_at": nil, "suspended_by": nil, "target_id": 1, "single_file_name": nil,
		"access_tokens_url": q.apiBase + "/app/installations/" + strconv.FormatInt(id, 10) + "/access_tokens",
		"repositories_url":  q.apiBase + "/installation/repositories",
		"html_url":          s.webURL + "/organizations/" + account + "/settings/installations/" + strconv.FormatInt(id, 10),
		"events":            []any{"issue_comment", "pull_request", "status"},
		"permissions":       map[string]any{"issues": "write", "pull_requests": "write", "statuses": "write", "contents": "read", "metadata": "read"},
		"created_at":        ts(time.Unix(0, 0)), "updated_at": ts(time.Unix(0, 0)),
	}
}

// installationOf returns the installation an installation token was minted
// for (the fake's tokens are "ghs_fake<installation>_<n>").
func (s *Server) installationOf(q *req) (int64, bool) {
	_, cred, _ := strings.Cut(q.r.Header.Get("Authorization"), " ")
	t, ok := s.tokens[cred]
	if !ok || !strings.HasPrefix(cred, "ghs_fake") || t.login != q.login {
		return 0, false
	}
	id, _, _ := strings.Cut(strings.TrimPrefix(cred, "ghs_fake"), "_")
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return 0, false
	}
	_, installed := s.inst[n]
	return n, installed
}

// installationRepos answers {"total_count", "repositories"}, paginated by
// page and per_page (GitHub also sends a Link header; the fake's object
// answers carry none, so clients must also honour total_count).
func (s *Server) installationRepos(q *req) reply {
	inst, ok := s.installationOf(q)
	if !ok {
		return errReply(http.StatusForbidden, "You must authenticate with an installation access token in order to list repositories for an installation.")
	}
	h := s.hooks()
	h.mu.Lock()
	names, selected := h.instRepos[inst]
	names = append([]string(nil), names...)
	h.mu.Unlock()
	var repos []*repo
	if selected {
		for _, n := range names {
			if rp, ok := s.repos[strings.ToLower(n)]; ok {
				repos = append(repos, rp)
			}
		}
	} else {
		for _, rp := range s.repos {
			repos = append(repos, rp)
		}
	}
	sort.Slice(repos, func(i, j int) bool { return key(repos[i].owner, repos[i].name) < key(repos[j].owner, repos[j].name) })
	page, perPage := pageParams(q.r)
	lo := min((page-1)*perPage, len(repos))
	hi := min(lo+perPage, len(repos))
	items := []any{}
	for _, rp := range repos[lo:hi] {
		items = append(items, s.repoJSON(q, rp))
	}
	return reply{status: 200, body: map[string]any{"total_count": len(repos), "repository_selection": map[bool]string{true: "selected", false: "all"}[selected], "repositories": items}}
}

func hookJSON(d *HookDelivery) map[string]any {
	return map[string]any{
		"id": d.ID, "guid": d.GUID, "delivered_at": ts(d.DeliveredAt), "redelivery": d.Redelivery, "duration": 0.01,
		"status": d.Status, "status_code": d.StatusCode, "event": d.Event, "action": d.Action,
		"installation_id": d.InstallationID, "repository_id": d.RepositoryID,
	}
}

func (s *Server) listHookDeliveries(q *req) reply {
	if _, ok := s.appOf(q); !ok {
		return jwtRequired()
	}
	h := s.hooks()
	h.mu.Lock()
	defer h.mu.Unlock()
	sorted := append([]*HookDelivery(nil), h.deliveries...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if !sorted[i].DeliveredAt.Equal(sorted[j].DeliveredAt) {
			return sorted[i].DeliveredAt.After(sorted[j].DeliveredAt)
		}
		return sorted[i].ID > sorted[j].ID
	})
	list := []any{}
	for _, d := range sorted {
		list = append(list, hookJSON(d))
	}
	return reply{status: 200, list: list}
}

func (s *Server) redeliverHook(q *req) reply {
	if _, ok := s.appOf(q); !ok {
		return jwtRequired()
	}
	id, err := strconv.ParseInt(q.params["id"], 10, 64)
	if err != nil {
		return notFound()
	}
	h := s.hooks()
	h.mu.Lock()
	defer h.mu.Unlock()
	var orig *HookDelivery
	for _, d := range h.deliveries {
		if d.ID == id {
			orig = d
		}
	}
	if orig == nil {
		return notFound()
	}
	rd := &HookDelivery{ID: s.nextID(), GUID: orig.GUID, DeliveredAt: s.now().UTC(), Redelivery: true,
		Status: hookStatus(0), Event: orig.Event, Action: orig.Action, InstallationID: orig.InstallationID,
		RepositoryID: orig.RepositoryID, Payload: orig.Payload}
	h.deliveries = append(h.deliveries, rd)
	if h.target != nil && orig.Payload != nil {
		h.inflight.Add(1)
		go h.send(rd, h.target, h.secret)
	}
	return reply{status: http.StatusAccepted, body: map[string]any{}}
}

// send delivers rd to target as GitHub would, and records the answer.
func (h *hookState) send(rd *HookDelivery, target http.Handler, secret []byte) {
	defer h.inflight.Done()
	req := httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(rd.Payload))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "GitHub-Hookshot/fake")
	req.Header.Set("X-GitHub-Event", rd.Event)
	req.Header.Set("X-GitHub-Delivery", rd.GUID)
	req.Header.Set("X-GitHub-Hook-Installation-Target-Type", "integration")
	req.Header.Set("X-Hub-Signature-256", SignWebhook(secret, rd.Payload))
	rec := httptest.NewRecorder()
	target.ServeHTTP(rec, req)
	h.mu.Lock()
	defer h.mu.Unlock()
	rd.StatusCode = rec.Code
	rd.Status = hookStatus(rec.Code)
}
