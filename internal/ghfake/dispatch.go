package ghfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// GitHub's limits on POST /repos/{owner}/{repo}/dispatches.
const (
	// MaxDispatchEventType is the longest event_type, in characters.
	MaxDispatchEventType = 100
	// MaxDispatchProperties is the most top-level keys client_payload may have.
	MaxDispatchProperties = 10
	// MaxDispatchPayloadBytes bounds the size of client_payload.
	MaxDispatchPayloadBytes = 64 << 10
)

// Dispatch is a repository_dispatch event the fake accepted.
type Dispatch struct {
	Owner     string
	Repo      string
	EventType string
	// ClientPayload is the payload as sent ("{}" when none was).
	ClientPayload json.RawMessage
	// Sender is the login that sent it.
	Sender string
	At     time.Time
}

// Dispatches returns the repository_dispatch events a repository received,
// oldest first.
func (s *Server) Dispatches(owner, name string) []Dispatch {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.repos[key(owner, name)]
	if !ok {
		return nil
	}
	out := make([]Dispatch, len(r.dispatches))
	for i, d := range r.dispatches {
		d.ClientPayload = append(json.RawMessage(nil), d.ClientPayload...)
		out[i] = d
	}
	return out
}

// SetTokenPermissions sets the permissions of login's tokens, as GitHub
// grants them to a GITHUB_TOKEN (the workflow's `permissions:`) or to an
// App's installation token: resource → "read" or "write", for example
// {"contents": "read", "issues": "write"}. nil restores the default: every
// permission granted. Only the endpoints that check it say so; today
// POST /repos/{o}/{r}/dispatches, which needs contents: write and answers
// 403 "Resource not accessible by integration" without it, POST
// /repos/{o}/{r}/actions/runs/{id}/deployment_protection_rule, which needs
// deployments: write and answers the same 403, and the team
// endpoints, which need members: read (organisation members; a workflow's
// GITHUB_TOKEN never has it) and answer 404 without it. An installation
// token minted for login reports these permissions.
func (s *Server) SetTokenPermissions(login string, perms map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if perms == nil {
		delete(s.perms, strings.ToLower(login))
		return
	}
	cp := make(map[string]string, len(perms))
	for k, v := range perms {
		cp[k] = v
	}
	s.perms[strings.ToLower(login)] = cp
}

// grantedLocked reports whether login's tokens have resource at level
// ("read" or "write"); with no permissions set, everything is granted.
func (s *Server) grantedLocked(login, resource, level string) bool {
	perms, ok := s.perms[strings.ToLower(login)]
	if !ok {
		return true
	}
	have := perms[resource]
	return have == "write" || (level == "read" && have == "read")
}

// createDispatch handles POST /repos/{owner}/{repo}/dispatches: 204 No
// Content; 422 for a missing or too long event_type, or a client_payload
// that is not an object, has more than 10 top-level keys or is 64 KiB or
// more; 403 when the token lacks contents: write.
func (s *Server) createDispatch(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	if !s.grantedLocked(q.login, "contents", "write") {
		return errReply(403, "Resource not accessible by integration")
	}
	var in struct {
		EventType     *string         `json:"event_type"`
		ClientPayload json.RawMessage `json:"client_payload"`
	}
	if err := q.decode(&in); err != nil {
		return errReply(400, "Problems parsing JSON")
	}
	if in.EventType == nil || *in.EventType == "" {
		return errReply(422, "Invalid request.\n\n\"event_type\" wasn't supplied.")
	}
	if utf8.RuneCountInString(*in.EventType) > MaxDispatchEventType {
		return errReply(422, fmt.Sprintf("Invalid request.\n\nevent_type is too long (maximum is %d characters).", MaxDispatchEventType))
	}
	payload := bytes.TrimSpace(in.ClientPayload)
	if len(payload) == 0 || bytes.Equal(payload, []byte("null")) {
		payload = []byte("{}")
	}
	var props map[string]json.RawMessage
	if err := json.Unmarshal(payload, &props); err != nil {
		return errReply(422, "Invalid request.\n\nFor 'properties/client_payload', "+string(payload[:min(len(payload), 40)])+" is not an object.")
	}
	if len(props) > MaxDispatchProperties {
		return errReply(422, fmt.Sprintf("Invalid request.\n\nNo more than %d properties are allowed; %d were supplied.", MaxDispatchProperties, len(props)))
	}
	if len(payload) >= MaxDispatchPayloadBytes {
		return errReply(422, "Invalid request.\n\nThe client_payload is too large.")
	}
	rp.dispatches = append(rp.dispatches, Dispatch{Owner: rp.owner, Repo: rp.name, EventType: *in.EventType,
		ClientPayload: append(json.RawMessage(nil), payload...), Sender: q.login, At: s.now().UTC()})
	return reply{status: 204}
}
