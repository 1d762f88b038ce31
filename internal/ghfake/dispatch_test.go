package ghfake

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestDispatchEndpoint(t *testing.T) {
	elevenKeys := map[string]int{}
	for i := 0; i < 11; i++ {
		elevenKeys[fmt.Sprintf("k%d", i)] = i
	}
	eleven, _ := json.Marshal(map[string]any{"event_type": "x", "client_payload": elevenKeys})
	big, _ := json.Marshal(map[string]any{"event_type": "x", "client_payload": map[string]string{"a": strings.Repeat("a", MaxDispatchPayloadBytes)}})
	tests := []struct {
		name        string
		path        string
		token       string
		perms       map[string]string
		body        string
		wantStatus  int
		wantPayload string // "" when nothing is recorded
	}{
		{name: "accepted", body: `{"event_type":"phasegate.resolved","client_payload":{"issue":{"number":42}}}`, wantStatus: 204, wantPayload: `{"issue":{"number":42}}`},
		{name: "no payload is an empty object", body: `{"event_type":"ping"}`, wantStatus: 204, wantPayload: `{}`},
		{name: "contents write granted", perms: map[string]string{"contents": "write"}, body: `{"event_type":"ping"}`, wantStatus: 204, wantPayload: `{}`},
		{name: "contents read is refused", perms: map[string]string{"contents": "read", "issues": "write"}, body: `{"event_type":"ping"}`, wantStatus: 403},
		{name: "no contents permission is refused", perms: map[string]string{"issues": "write"}, body: `{"event_type":"ping"}`, wantStatus: 403},
		{name: "anonymous", token: "-", body: `{"event_type":"ping"}`, wantStatus: 401},
		{name: "unknown repository", path: "/repos/acme/nope/dispatches", body: `{"event_type":"ping"}`, wantStatus: 404},
		{name: "no event type", body: `{"client_payload":{}}`, wantStatus: 422},
		{name: "event type too long", body: `{"event_type":"` + strings.Repeat("e", 101) + `"}`, wantStatus: 422},
		{name: "payload not an object", body: `{"event_type":"x","client_payload":[1]}`, wantStatus: 422},
		{name: "eleven top-level keys", body: string(eleven), wantStatus: 422},
		{name: "payload too large", body: string(big), wantStatus: 422},
		{name: "not json", body: `{`, wantStatus: 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServer(t)
			s.SetTokenPermissions("bot", tc.perms)
			path, token := tc.path, tc.token
			if path == "" {
				path = "/repos/acme/widgets/dispatches"
			}
			switch token {
			case "":
				token = tok
			case "-":
				token = ""
			}
			a := do(t, s, "POST", path, token, tc.body)
			if a.status != tc.wantStatus {
				t.Fatalf("status %d, want %d (%s)", a.status, tc.wantStatus, a.body)
			}
			got := s.Dispatches("acme", "widgets")
			if tc.wantPayload == "" {
				if len(got) != 0 {
					t.Fatalf("recorded %d dispatches, want none", len(got))
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("recorded %d dispatches, want 1", len(got))
			}
			if string(got[0].ClientPayload) != tc.wantPayload || got[0].Sender != "bot" {
				t.Errorf("recorded %+v, want payload %s by bot", got[0], tc.wantPayload)
			}
		})
	}
}

func TestDispatchDeniedWrites(t *testing.T) {
	s := newTestServer(t)
	s.DenyWrites("bot", true)
	if a := do(t, s, "POST", "/repos/acme/widgets/dispatches", tok, `{"event_type":"ping"}`); a.status != 403 {
		t.Fatalf("status %d, want 403", a.status)
	}
	if n := len(s.Dispatches("acme", "widgets")); n != 0 {
		t.Fatalf("recorded %d dispatches, want none", n)
	}
}
