package ghfaketest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/phasegate/phasegate/internal/ghfake"
)

// TestDeploymentRequestMatchesDescription: the deployment_protection_rule
// event the fake delivers is GitHub's (the schema of its description),
// signed with the hook's secret, and recorded as a delivery.
func TestDeploymentRequestMatchesDescription(t *testing.T) {
	t.Parallel()
	v := load(t)
	s := ghfake.New()
	t.Cleanup(s.Close)
	s.AddRepo("acme", "widgets", "main")
	pr := s.AddPullRequest("acme", "widgets", ghfake.PullRequest{Author: "dev", HeadSHA: strings.Repeat("a", 40), HeadRef: "feature", BaseRef: "main", BaseSHA: strings.Repeat("b", 40)})
	secret := []byte("hook secret")
	var (
		mu   sync.Mutex
		got  []byte
		head http.Header
	)
	s.SetHookTarget(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got, head = b, r.Header.Clone()
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}), secret)
	tests := []struct {
		name     string
		req      ghfake.DeploymentRequest
		callback string
	}{
		{name: "push, no pull request", req: ghfake.DeploymentRequest{RunID: 7, Environment: "production", SHA: strings.Repeat("c", 40), Ref: "refs/heads/main", Sender: "dev", InstallationID: 3},
			callback: s.URL() + "repos/acme/widgets/actions/runs/7/deployment_protection_rule"},
		{name: "pull request", req: ghfake.DeploymentRequest{RunID: 8, Environment: "staging", SHA: strings.Repeat("a", 40), Ref: "refs/heads/feature", Event: "pull_request", PullRequests: []int{pr}, Sender: "dev", InstallationID: 3},
			callback: s.URL() + "repos/acme/widgets/actions/runs/8/deployment_protection_rule"},
		{name: "callback elsewhere, no sender", req: ghfake.DeploymentRequest{RunID: 9, Environment: "production", SHA: strings.Repeat("c", 40), Ref: "refs/heads/main", InstallationID: 3, CallbackURL: "https://attacker.example/hook"},
			callback: "https://attacker.example/hook"},
	}
	for _, tc := range tests {
		tc.req.Owner, tc.req.Repo = "acme", "widgets"
		code, err := s.RequestDeployment(tc.req)
		if err != nil || code != http.StatusAccepted {
			t.Fatalf("%s: RequestDeployment = %d, %v; want 202", tc.name, code, err)
		}
		mu.Lock()
		body, h := got, head
		mu.Unlock()
		if err := v.CheckWebhook("webhook-deployment-protection-rule-requested", body); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if h.Get("X-GitHub-Event") != "deployment_protection_rule" || h.Get("X-Hub-Signature-256") != ghfake.SignWebhook(secret, body) {
			t.Errorf("%s: headers %v: want the event and the body's signature", tc.name, h)
		}
		var ev struct {
			Action, Environment, SHA, Ref, Event string
			Callback                             string                 `json:"deployment_callback_url"`
			Pulls                                []struct{ Number int } `json:"pull_requests"`
		}
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Action != "requested" || ev.Environment != tc.req.Environment || ev.SHA != tc.req.SHA || ev.Callback != tc.callback || len(ev.Pulls) != len(tc.req.PullRequests) {
			t.Errorf("%s: payload %+v, want %+v with callback %s", tc.name, ev, tc.req, tc.callback)
		}
	}
	ds := s.HookDeliveries()
	if len(ds) != len(tests) || ds[0].Event != "deployment_protection_rule" || ds[0].StatusCode != http.StatusAccepted || !bytes.Contains(ds[0].Payload, []byte(`"requested"`)) {
		t.Errorf("deliveries %+v, want %d recorded deployment_protection_rule deliveries answered 202", ds, len(tests))
	}
}

// TestCheckWebhookRefuses: the schema check is not vacuous.
func TestCheckWebhookRefuses(t *testing.T) {
	t.Parallel()
	v := load(t)
	tests := []struct{ name, schema, body string }{
		{name: "unknown schema", schema: "webhook-nothing", body: `{}`},
		{name: "not json", schema: "webhook-deployment-protection-rule-requested", body: `{`},
		{name: "another action", schema: "webhook-deployment-protection-rule-requested", body: `{"action":"approved"}`},
		{name: "environment not a string", schema: "webhook-deployment-protection-rule-requested", body: `{"action":"requested","environment":7}`},
		{name: "installation without id", schema: "webhook-deployment-protection-rule-requested", body: `{"action":"requested","installation":{"node_id":"x"}}`},
	}
	for _, tc := range tests {
		if err := v.CheckWebhook(tc.schema, []byte(tc.body)); err == nil {
			t.Errorf("%s: accepted %s", tc.name, tc.body)
		}
	}
}
