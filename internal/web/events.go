package web

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"
)

// streamLimit bounds the open /events streams, overall and per person.
type streamLimit struct {
	max, perPerson int
	mu             sync.Mutex
	total          int
	open           map[int64]int
}

func (l *streamLimit) acquire(id int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total >= l.max || l.open[id] >= l.perPerson {
		return false
	}
	l.total++
	l.open[id]++
	return true
}

func (l *streamLimit) release(id int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.open[id]--; l.open[id] <= 0 {
		delete(l.open, id)
	}
}

// changeEvent is the data of one "change" event.
type changeEvent struct {
	Repo  string `json:"repo"`
	Issue int    `json:"issue,omitempty"`
	SHA   string `json:"sha,omitempty"`
}

// events streams, as server-sent events, each Change of the Source in a
// repository the person can see; comment lines keep it open; it ends with
// the session. Without a session it is 401 (an EventSource cannot follow a
// sign-in), beyond the limits 429 (the page then polls).
func (p *Pages) events(w http.ResponseWriter, r *http.Request) {
	s := p.session(r)
	if s == nil {
		http.Error(w, "sign in first", http.StatusUnauthorized)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	if !p.streams.acquire(s.ID) {
		w.Header().Set("Retry-After", "30")
		http.Error(w, "too many open streams", http.StatusTooManyRequests)
		return
	}
	defer p.streams.release(s.ID)
	changes, cancel := p.src.Subscribe()
	defer cancel()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("retry: 5000\n\n"))
	flusher.Flush()
	p.stream(w, r, flusher, s, changes)
}

// stream writes the visible changes and the heartbeats until the client
// goes, the Source closes, or the session ends.
func (p *Pages) stream(w http.ResponseWriter, r *http.Request, flusher http.Flusher, s *session, changes <-chan Change) {
	api := p.oauth.User(s.token())
	beat := time.NewTicker(p.cfg.Heartbeat)
	defer beat.Stop()
	end := time.NewTimer(time.Unix(s.Expires, 0).Sub(p.now()))
	defer end.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-end.C:
			return
		case <-beat.C:
			if _, err := w.Write([]byte(": ping\n\n")); err != nil {
				return
			}
		case c, ok := <-changes:
			if !ok {
				return
			}
			repos, err := p.repos.get(r.Context(), s.ID, api)
			if err != nil || !sees(repos, c.Owner, c.Repo) {
				continue
			}
			data, _ := json.Marshal(changeEvent{Repo: c.Owner + "/" + c.Repo, Issue: c.Issue, SHA: c.SHA})
			if _, err := w.Write(append(append([]byte("event: change\ndata: "), data...), '\n', '\n')); err != nil {
				return
			}
		}
		flusher.Flush()
	}
}
