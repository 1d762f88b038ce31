package server

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghfake"
)

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	key := pemOf(appKey(t))
	valid := func() Config {
		return Config{Secrets: [][]byte{testSecret}, AppID: appID, PrivateKeyPEM: key}
	}
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantErr string
	}{
		{name: "no secret", mutate: func(c *Config) { c.Secrets = nil }, wantErr: "no webhook secret"},
		{name: "an empty secret among good ones", mutate: func(c *Config) { c.Secrets = [][]byte{testSecret, {}} }, wantErr: "secret 2 of 2 is empty"},
		{name: "no app id", mutate: func(c *Config) { c.AppID = 0 }, wantErr: "app id"},
		{name: "no private key", mutate: func(c *Config) { c.PrivateKeyPEM = nil }, wantErr: "no private key"},
		{name: "a private key that does not parse", mutate: func(c *Config) {
			c.PrivateKeyPEM = []byte("-----BEGIN RSA PRIVATE KEY-----\nbm9wZQ==\n-----END RSA PRIVATE KEY-----\n")
		}, wantErr: "private key"},
		{name: "a bad api url", mutate: func(c *Config) { c.APIURL = "ftp://example.com" }, wantErr: "github api url"},
		{name: "a negative period", mutate: func(c *Config) { c.ReconcileEvery = -1 }, wantErr: "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid()
			tt.mutate(&c)
			_, err := New(c)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "PRIVATE KEY") {
				t.Fatal("the error carries the key")
			}
		})
	}
	t.Run("the config never prints its secrets", func(t *testing.T) {
		c := valid()
		c.SigningKey = []byte("signing-key-value")
		var logged strings.Builder
		slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "config", c)
		for _, out := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), logged.String()} {
			if strings.Contains(out, "PRIVATE KEY") || strings.Contains(out, string(testSecret)) || strings.Contains(out, "signing-key-value") {
				t.Fatalf("secrets printed: %s", out)
			}
		}
	})
}

func TestWebhookAnswers(t *testing.T) {
	t.Parallel()
	command := commentEvent("created", 5, 99, "alice", "alice", "Looks good.\n/resolve D-001 approve")
	oldSecret, newSecret := []byte("old secret"), []byte("new secret")
	sha1Sig := func(body []byte) string {
		m := hmac.New(sha1.New, testSecret)
		m.Write(body)
		return "sha1=" + hex.EncodeToString(m.Sum(nil))
	}
	form := []byte("payload=" + url.QueryEscape(string(command)))
	tests := []struct {
		name     string
		secrets  [][]byte // server secrets; default testSecret
		identity string   // Config.Identity
		d        delivery
		want     int
		wantBody string // a substring
	}{
		{name: "signed command", d: delivery{event: "issue_comment", body: command}, want: 202, wantBody: "accepted"},
		{name: "signed command at /", d: delivery{path: "/", event: "issue_comment", body: command}, want: 202},
		{name: "bad signature", d: delivery{event: "issue_comment", body: command, headers: map[string]string{"X-Hub-Signature-256": ghfake.SignWebhook(testSecret, []byte("other body"))}}, want: 401, wantBody: "does not verify"},
		{name: "body altered after signing", d: delivery{event: "issue_comment", body: command, headers: map[string]string{"X-Hub-Signature-256": ghfake.SignWebhook(testSecret, append([]byte(nil), command[:len(command)-1]...))}}, want: 401},
		{name: "missing signature", d: delivery{event: "issue_comment", body: command, headers: map[string]string{"X-Hub-Signature-256": ""}}, want: 401, wantBody: "missing X-Hub-Signature-256"},
		{name: "SHA-1 signature only", d: delivery{event: "issue_comment", body: command, headers: map[string]string{"X-Hub-Signature-256": "", "X-Hub-Signature": sha1Sig(command)}}, want: 401, wantBody: "SHA-1"},
		{name: "SHA-1 signature in the SHA-256 header", d: delivery{event: "issue_comment", body: command, headers: map[string]string{"X-Hub-Signature-256": sha1Sig(command)}}, want: 401},
		{name: "signature without its prefix", d: delivery{event: "issue_comment", body: command, headers: map[string]string{"X-Hub-Signature-256": strings.TrimPrefix(ghfake.SignWebhook(testSecret, command), "sha256=")}}, want: 401},
		{name: "wrong secret", d: delivery{event: "issue_comment", body: command, secret: []byte("guess")}, want: 401},
		{name: "rotation: the old secret", secrets: [][]byte{oldSecret, newSecret}, d: delivery{event: "issue_comment", body: command, secret: oldSecret}, want: 202},
		{name: "rotation: the new secret", secrets: [][]byte{oldSecret, newSecret}, d: delivery{event: "issue_comment", body: command, secret: newSecret}, want: 202},
		{name: "rotation: a retired secret", secrets: [][]byte{newSecret}, d: delivery{event: "issue_comment", body: command, secret: oldSecret}, want: 401},
		{name: "GET", d: delivery{method: http.MethodGet, event: "issue_comment"}, want: 405},
		{name: "PUT", d: delivery{method: http.MethodPut, event: "issue_comment", body: command}, want: 405},
		{name: "missing event header", d: delivery{body: command, headers: map[string]string{"X-GitHub-Event": ""}}, want: 400, wantBody: "X-GitHub-Event"},
		{name: "missing delivery header", d: delivery{event: "issue_comment", body: command, headers: map[string]string{"X-GitHub-Delivery": ""}}, want: 400, wantBody: "X-GitHub-Delivery"},
		{name: "a delivery header with spaces", d: delivery{event: "issue_comment", id: "a b", body: command}, want: 400},
		{name: "malformed JSON", d: delivery{event: "issue_comment", body: []byte(`{"action":"created",`)}, want: 400, wantBody: "malformed"},
		{name: "JSON that is no object", d: delivery{event: "issue_comment", body: []byte(`[1,2]`)}, want: 400},
		{name: "a command nested past 10,000", d: delivery{event: "issue_comment", body: append([]byte(`{"x":`+strings.Repeat("[", 10000)+strings.Repeat("]", 10000)+`,`), command[1:]...)}, want: 400, wantBody: "malformed"},
		{name: "malformed JSON of an unknown event", d: delivery{event: "star", body: []byte(`{nope`)}, want: 400},
		{name: "comment without its comment", d: delivery{event: "issue_comment", body: []byte(`{"action":"created","installation":{"id":77},"repository":{"name":"shop","owner":{"login":"acme"}}}`)}, want: 400},
		{name: "unsigned malformed JSON is 401, not 400", d: delivery{event: "issue_comment", body: []byte(`{`), secret: []byte("x")}, want: 401},
		{name: "unknown event", d: delivery{event: "star", body: []byte(`{"action":"created"}`)}, want: 200, wantBody: "ignored"},
		{name: "ping", d: delivery{event: "ping", body: []byte(`{"zen":"Design for failure.","hook_id":1}`)}, want: 200, wantBody: "pong"},
		{name: "a comment without a command", d: delivery{event: "issue_comment", body: commentEvent("created", 5, 99, "alice", "alice", "LGTM")}, want: 200, wantBody: "no command"},
		{name: "a command in a code block", d: delivery{event: "issue_comment", body: commentEvent("created", 5, 99, "alice", "alice", "```\n/resolve D-001 approve\n```")}, want: 200, wantBody: "no command"},
		{name: "phasegate's own comment", identity: appBot, d: delivery{event: "issue_comment", body: commentEvent("created", 5, 99, appBot, appBot, "/phasegate help")}, want: 200, wantBody: "own comment"},
		{name: "someone's comment edited", d: delivery{event: "issue_comment", body: commentEvent("edited", 5, 99, "alice", "alice", "/resolve D-001 approve")}, want: 200, wantBody: "not phasegate's"},
		{name: "phasegate's comment edited", identity: appBot, d: delivery{event: "issue_comment", body: commentEvent("edited", 5, 99, appBot, "mallory", "edited")}, want: 202},
		{name: "a bot's comment deleted before the identity is known", d: delivery{event: "issue_comment", body: commentEvent("deleted", 5, 99, "other[bot]", "mallory", "x")}, want: 202},
		{name: "pull request closed", d: delivery{event: "pull_request", body: pullRequestEvent("closed", 7, headSHA)}, want: 200, wantBody: "ignored"},
		{name: "pull request synchronize", d: delivery{event: "pull_request", body: pullRequestEvent("synchronize", 7, headSHA)}, want: 202},
		{name: "merge group checks requested", d: delivery{event: "merge_group", body: mergeGroupEvent("checks_requested", headSHA, addedSHA)}, want: 202},
		{name: "merge group destroyed", d: delivery{event: "merge_group", body: mergeGroupEvent("destroyed", headSHA, addedSHA)}, want: 200, wantBody: "ignored"},
		{name: "merge group without a sha", d: delivery{event: "merge_group", body: mergeGroupEvent("checks_requested", "main; rm -rf", addedSHA)}, want: 400},
		{name: "another context's status", d: delivery{event: "status", body: statusEvent("ci/build", "mallory", "abc", "success")}, want: 200, wantBody: "not phasegate's"},
		{name: "phasegate's own status", identity: appBot, d: delivery{event: "status", body: statusEvent(decide.ContextDecisions, appBot, "abc", "success")}, want: 200, wantBody: "own status"},
		{name: "someone else's phasegate/decisions", identity: appBot, d: delivery{event: "status", body: statusEvent(decide.ContextDecisions, "mallory", "abc", "success")}, want: 202},
		{name: "installation created", d: delivery{event: "installation", body: installationEvent("installation", "created", "acme/shop")}, want: 202},
		{name: "installation new_permissions_accepted", d: delivery{event: "installation", body: installationEvent("installation", "new_permissions_accepted")}, want: 200},
		{name: "repositories added", d: delivery{event: "installation_repositories", body: installationEvent("installation_repositories", "added", "acme/web")}, want: 202},
		{name: "no installation (a repository webhook)", d: delivery{event: "issue_comment", body: []byte(`{"action":"created","repository":{"name":"shop","owner":{"login":"acme"}},"issue":{"number":5},"comment":{"id":9,"body":"/decisions"}}`)}, want: 200, wantBody: "no installation"},
		{name: "form-encoded payload", d: delivery{event: "issue_comment", body: form, headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, want: 202},
		{name: "form without a payload", d: delivery{event: "issue_comment", body: []byte("a=b"), headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, want: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(c *Config) {
				if tt.secrets != nil {
					c.Secrets = tt.secrets
				}
				c.Identity = tt.identity
			})
			code, body := h.send(tt.d)
			if code != tt.want || !strings.Contains(body, tt.wantBody) {
				t.Fatalf("answer %d %q, want %d %q", code, body, tt.want, tt.wantBody)
			}
			if code == http.StatusMethodNotAllowed {
				return
			}
			queued, _, _ := h.srv.queue.stats(h.srv.cfg.Now())
			if (code == http.StatusAccepted) != (queued == 1) {
				t.Fatalf("answer %d with %d queued: only a 202 queues", code, queued)
			}
		})
	}
}

func TestOversizeBody(t *testing.T) {
	t.Parallel()
	big := commentEvent("created", 5, 99, "alice", "alice", "/decisions\n"+strings.Repeat("x", 4096))
	tests := []struct {
		name    string
		chunked bool // no Content-Length: the cap applies while reading
	}{
		{name: "with Content-Length"},
		{name: "without Content-Length", chunked: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(c *Config) { c.MaxBody = 1024 })
			d := delivery{event: "issue_comment", body: big}
			if tt.chunked {
				d.headers = map[string]string{"Content-Length": ""}
			}
			code, body := h.send(d)
			if code != http.StatusRequestEntityTooLarge {
				t.Fatalf("answer %d %q, want 413", code, body)
			}
			small := commentEvent("created", 5, 99, "alice", "alice", "/decisions")
			if code, body := h.send(delivery{event: "issue_comment", body: small}); code != http.StatusAccepted {
				t.Fatalf("a small delivery: %d %q", code, body)
			}
		})
	}
}

func TestReplays(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start()
	h.waitReady()
	body := commentEvent("created", 5, 99, "alice", "alice", "/resolve D-001 approve")
	const id = "72d3162e-cc78-11e3-81ab-4c9367dc0958"
	if code, _ := h.send(delivery{event: "issue_comment", id: id, body: body}); code != http.StatusAccepted {
		t.Fatalf("first delivery: %d", code)
	}
	// Replays, some concurrent: all answered 200 duplicate.
	var wg sync.WaitGroup
	codes := make(chan string, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, body := h.send(delivery{event: "issue_comment", id: id, body: body})
			codes <- fmt.Sprint(code, " ", body)
		}()
	}
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != "200 duplicate" {
			t.Fatalf("replay answered %s", c)
		}
	}
	h.waitJobs(1)
	if err := h.stop(); err != nil {
		t.Fatal(err)
	}
	if got := summary(h.decider.Calls()); len(got) != 1 || got[0] != "HandleComment acme/shop#5" {
		t.Fatalf("calls %v, want one HandleComment", got)
	}
}

func TestConcurrentFirstDeliveries(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	body := commentEvent("created", 5, 99, "alice", "alice", "/decisions")
	var wg sync.WaitGroup
	var mu sync.Mutex
	count := map[int]int{}
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, _ := h.send(delivery{event: "issue_comment", id: "same-id", body: body})
			mu.Lock()
			count[code]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if count[http.StatusAccepted] != 1 || count[http.StatusOK] != 31 {
		t.Fatalf("answers %v, want one 202 and 31 duplicates", count)
	}
}
