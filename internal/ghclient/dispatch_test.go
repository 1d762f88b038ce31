package ghclient

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestRepositoryDispatch(t *testing.T) {
	type payload struct {
		Issue struct {
			Number int `json:"number"`
		} `json:"issue"`
		Repository string `json:"repository"`
	}
	p := payload{Repository: "acme/widgets"}
	p.Issue.Number = 42
	tests := []struct {
		name        string
		payload     any
		wantPayload string
	}{
		{name: "struct payload", payload: p, wantPayload: `{"issue":{"number":42},"repository":"acme/widgets"}`},
		{name: "map payload", payload: map[string]any{"a": 1}, wantPayload: `{"a":1}`},
		{name: "raw payload", payload: json.RawMessage(`{"b":true}`), wantPayload: `{"b":true}`},
		{name: "nil payload", payload: nil, wantPayload: `{}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Options{})
			if err := e.c.RepositoryDispatch(ctxT(t), owner, repo, "phasegate.resolved", tc.payload); err != nil {
				t.Fatal(err)
			}
			got := e.fake.Dispatches(owner, repo)
			if len(got) != 1 {
				t.Fatalf("%d dispatches, want 1", len(got))
			}
			if got[0].EventType != "phasegate.resolved" || string(got[0].ClientPayload) != tc.wantPayload || got[0].Sender != botLogin {
				t.Errorf("dispatch %+v, want phasegate.resolved %s by %s", got[0], tc.wantPayload, botLogin)
			}
		})
	}
}

func TestRepositoryDispatchRefusedLocally(t *testing.T) {
	eleven := map[string]int{}
	for i := 0; i < 11; i++ {
		eleven[fmt.Sprintf("k%d", i)] = i
	}
	tests := []struct {
		name      string
		eventType string
		payload   any
		want      string
	}{
		{name: "empty event type", eventType: "", want: "empty event type"},
		{name: "event type too long", eventType: strings.Repeat("e", 101), want: "101 characters"},
		{name: "not an object", eventType: "x", payload: []int{1}, want: "not a json object"},
		{name: "eleven keys", eventType: "x", payload: eleven, want: "11 top-level keys"},
		{name: "too large", eventType: "x", payload: map[string]string{"a": strings.Repeat("a", 64<<10)}, want: "bytes"},
		{name: "unencodable", eventType: "x", payload: map[string]any{"f": func() {}}, want: "encode payload"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Options{})
			err := e.c.RepositoryDispatch(ctxT(t), owner, repo, tc.eventType, tc.payload)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			if n := e.fake.CountCalls("", "/repos/"); n != 0 {
				t.Errorf("%d requests sent, want none", n)
			}
		})
	}
}

func TestRepositoryDispatchPermissionDenied(t *testing.T) {
	tests := []struct {
		name       string
		setup      func(e *env)
		wantDenied bool
	}{
		{name: "token with contents read", setup: func(e *env) {
			e.fake.SetTokenPermissions(botLogin, map[string]string{"contents": "read", "issues": "write"})
		}, wantDenied: true},
		{name: "writes denied", setup: func(e *env) { e.fake.DenyWrites(botLogin, true) }, wantDenied: true},
		{name: "unknown repository is not a permission problem", setup: func(e *env) {}, wantDenied: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Options{})
			tc.setup(e)
			r := repo
			if !tc.wantDenied {
				r = "missing"
			}
			err := e.c.RepositoryDispatch(ctxT(t), owner, r, "phasegate.resolved", map[string]int{"a": 1})
			if err == nil {
				t.Fatal("dispatch succeeded, want an error")
			}
			if got := IsPermissionDenied(err); got != tc.wantDenied {
				t.Errorf("IsPermissionDenied(%v) = %v, want %v", err, got, tc.wantDenied)
			}
			if n := len(e.fake.Dispatches(owner, repo)); n != 0 {
				t.Errorf("%d dispatches recorded, want none", n)
			}
		})
	}
}

// A 403 secondary rate limit is not a missing permission.
func TestRepositoryDispatchRateLimitIsNotPermissionDenied(t *testing.T) {
	e := newEnv(t, Options{MaxRateLimitWait: time.Second, MaxAttempts: 2})
	e.fake.SecondaryLimit(time.Hour, 403)
	err := e.c.RepositoryDispatch(ctxT(t), owner, repo, "phasegate.resolved", nil)
	if err == nil {
		t.Fatal("dispatch succeeded under a secondary rate limit")
	}
	if StatusCode(err) != 403 || IsPermissionDenied(err) {
		t.Errorf("status %d, IsPermissionDenied %v; want 403 and false (%v)", StatusCode(err), IsPermissionDenied(err), err)
	}
}

// A dispatch starts workflow runs: after an ambiguous failure (a 5xx, the
// request may have been applied) it is not blindly repeated.
func TestRepositoryDispatchNotRepeatedAfterAmbiguousFailure(t *testing.T) {
	e := newEnv(t, Options{})
	e.fake.FailNext(1, 502, "/dispatches")
	err := e.c.RepositoryDispatch(ctxT(t), owner, repo, "phasegate.resolved", nil)
	if StatusCode(err) != 502 {
		t.Fatalf("error %v, want the 502", err)
	}
	if got := statuses(e.fake, "POST", "/repos/"+owner+"/"+repo+"/dispatches"); len(got) != 1 {
		t.Errorf("dispatch attempts %v, want exactly one", got)
	}
}
