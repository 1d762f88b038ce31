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

type changeEvent struct {
	Repo  string `json:"repo"`
	Issue int    `json:"issue,omitempty"`
	SHA   string `json:"sha,omitempty"`
}

// events streams, as server-sent events, each Change of the Source in a
// repository the person can see; comment lines keep it open; it ends with
// the session (its expiry or its sign-out). Without a session it is 401 (an EventSource cannot follow a
// sign-in), beyond the limits 429 (the page then polls).
func (p *Pages) events(w http.ResponseWriter, r *http.Request) {
	s, err := p.session(r)
	if err != nil {
		p.cfg.Logger.Error("web: checking a session", "err", err)
		http.Error(w, "the session could not be checked", http.StatusServiceUnavailable)
		return
	}
	if s == nil {
		http.Error(w, "sign in first", http.StatusUnauthorized)
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
	// The server's read and write timeouts are for requests, not streams:
	// no read deadline (its expiry would end the request's context), and a
	// write deadline renewed before each write.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	w.WriteHeader(http.StatusOK)
	if p.write(w, rc, []byte("retry: 5000\n\n")) != nil {
		return
	}
	p.stream(w, r, rc, s, changes)
}

// write writes one event or comment and flushes it, within a deadline.
func (p *Pages) write(w http.ResponseWriter, rc *http.ResponseController, b []byte) error {
	_ = rc.SetWriteDeadline(time.Now().Add(p.cfg.Heartbeat + 30*time.Second))
	if _, err := w.Write(b); err != nil {
		return err
	}
	return rc.Flush()
}

// stream writes the visible changes and the heartbeats until the client
// goes, the Source closes, or the session ends.
func (p *Pages) stream(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, s *session, changes <-chan Change) {
	api := p.oauth.User(s.token())
	beat := time.NewTicker(p.cfg.Heartbeat)
	defer beat.Stop()
	end := time.NewTimer(time.Unix(s.Expires, 0).Sub(p.cfg.Now()))
	defer end.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-end.C:
			return
		case <-beat.C:
			// A session signed out of (or whose sign-outs cannot be
			// read) ends its streams at the next heartbeat.
			if revoked, err := p.cfg.Revocations.Revoked(r.Context(), s.SID); err != nil || revoked {
				return
			}
			if p.write(w, rc, []byte(": ping\n\n")) != nil {
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
			if p.write(w, rc, append(append([]byte("event: change\ndata: "), data...), '\n', '\n')) != nil {
				return
			}
		}
	}
}
