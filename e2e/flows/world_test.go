package flows

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/server"
)

// The installation the world holds: the App, its OAuth client, one
// organisation with two repositories.
const (
	appID        = 4242
	appSlug      = "phasegate"
	appBot       = "phasegate[bot]"
	installation = 77
	org          = "acme"
	shop         = "shop"  // alice may resolve its decisions (write access)
	api          = "api"   // alice may read it, not resolve (read access)
	vault        = "vault" // private, and alice has no access: she does not see it
	clientID     = "Iv23liE2EPAGES"
	clientSecret = "e2e-client-secret-never-shown"
	// person is who signs in: the fake's browser consents as them.
	person = "alice"
)

var webhookSecret = []byte("e2e webhook secret")

// epoch is when the world's clock starts: in the past of any run, so that
// the OAuth tokens (whose expiry x/oauth2 computes on the real clock) are
// valid on the pages' clock. The world's clock stands still unless a test
// moves it: the pages show the same times on every run.
var epoch = time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC)

// guard bounds every wait on the server (the browser's waits have the
// tab's timeout).
const guard = 30 * time.Second

var appKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

// world is a fake GitHub and a started `phasegate serve` with its pages,
// whose public URL is its own loopback address.
type world struct {
	t      *testing.T
	fake   *ghfake.Server
	clock  *ghfake.ManualClock
	srv    *server.Server
	reg    *prometheus.Registry
	public string // the pages' (and the webhook's) origin
	logs   *syncBuffer
	// handled counts the jobs the test saw finish (waitJobs).
	handled  int
	delivery atomic.Int64
	commits  atomic.Int64
	// issues of the seeded pull requests, by name (see seed).
	shopCards, shopSearch, apiLimits, vaultKeys int
	// heads of the seeded pull requests.
	cardsHead, searchHead string
	cardsPR, searchPR     int
}

// newWorld builds and starts the world, seeded (seed) unless bare.
func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, clock: ghfake.NewManualClock(epoch), logs: &syncBuffer{}, reg: prometheus.NewRegistry()}
	f := ghfake.New()
	t.Cleanup(f.Close)
	f.SetClock(w.clock.Now)
	f.SetJWTClock(time.Now) // ghinstallation signs the App's JWTs on the real clock
	f.AddApp(appID, appSlug, &appKey().PublicKey)
	f.AddInstallation(appID, installation)
	f.AddRepo(org, shop, "main")
	f.AddRepo(org, api, "main")
	f.AddRepo(org, vault, "main")
	f.SetRepoPrivate(org, vault, true)
	f.SetPermission(org, shop, person, "write")
	f.SetPermission(org, api, person, "read")
	f.SetUserName(person, "Alice Liddell")
	w.fake = f

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w.public = "http://" + ln.Addr().String()
	f.SetOAuthApp(appID, clientID, clientSecret, w.public+"/oauth/callback")
	f.SetOAuthUser(person)
	w.start(ln)
	w.seed()
	return w
}

// start builds the server as serve does, with its pages, and serves on ln
// until the test ends.
func (w *world) start(ln net.Listener) {
	t := w.t
	cfg := server.Config{
		Secrets:       [][]byte{webhookSecret},
		AppID:         appID,
		PrivateKeyPEM: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(appKey())}),
		APIURL:        w.fake.URL(),
		Workers:       2,
		QueueSize:     64,
		ReadyRetry:    5 * time.Millisecond,
		Logger:        slog.New(slog.NewJSONHandler(w.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Registry:      w.reg,
		Now:           w.clock.Now,
		GitHubOptions: func(o *ghclient.Options) {
			o.BackoffBase, o.BackoffMax, o.MaxAttempts = time.Millisecond, 2*time.Millisecond, 3
		},
	}
	err := server.WithPages(&cfg, server.PagesOptions{
		PublicURL: w.public, ClientID: clientID, ClientSecret: clientSecret,
		SessionKeys: [][]byte{[]byte(strings.Repeat("e2e session key ", 3))}, GitHubWebURL: w.fake.WebURL(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if w.srv, err = server.New(cfg); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- w.srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(guard):
			t.Error("serve did not stop")
		}
		if strings.Contains(w.logs.String(), clientSecret) {
			t.Error("the OAuth client secret reached the logs")
		}
	})
	w.until("the server is ready", w.srv.Ready)
}

// Outcomes the agents' pull requests carry.
const (
	cardsOutcome = `phase: requirements
feature: feature-%03d
produced:
  - artifact: PREQ
    location: issue body
findings:
  - type: out-of-scope-item
    title: "Cards saved by the bank's own wallet"
    reasoning: "Asked for in the interviews; not in this feature's user stories"
    proposed_category: out-of-scope
pending_decisions:
  - id: D-001
    type: approval
    question: "Approve the requirements of saved cards for technical planning?"
    options: [approve, request-changes, reject]
    recommended: approve
    blocking: true
  - id: D-002
    type: capture-out-of-scope
    question: "Capture 'Cards saved by the bank's own wallet' as a separate issue?"
    options: [capture, discard]
    recommended: capture
    blocking: false
`
	searchOutcome = `phase: technical-plan
feature: feature-%03d
produced:
  - artifact: TPLAN
    location: docs/plans/search-typos.md
findings:
  - type: risk
    title: "The index grows by a third with trigrams"
    reasoning: "Measured on last month's catalogue"
pending_decisions:
  - id: D-001
    type: approval
    question: "Approve the plan: trigram index, tolerance of one typo per word?"
    options: [approve, request-changes, reject]
    blocking: true
`
	limitsOutcome = `phase: requirements
feature: feature-%03d
produced:
  - artifact: PREQ
    location: issue body
findings: []
pending_decisions:
  - id: D-001
    type: approval
    question: "Approve the rate-limit headers the API will send?"
    options: [approve, reject]
    blocking: true
`
)

// seed is the organisation after a morning of agents' work: four pull
// requests (one in a repository alice cannot see), each adding a Phase Outcome for its feature issue, checked by
// serve (the check jobs post the outcomes as the App). The clock then
// moves on, so the inbox says how long each has waited.
func (w *world) seed() {
	f := w.fake
	w.shopCards = f.AddIssue(org, shop, "Saved cards at checkout", "", "carol")
	w.shopSearch = f.AddIssue(org, shop, "Search tolerates typos", "", "carol")
	w.apiLimits = f.AddIssue(org, api, "Rate-limit headers", "", "dave")
	w.vaultKeys = f.AddIssue(org, vault, "Rotate the signing keys", "", "erin")
	w.cardsPR, w.cardsHead = w.pullRequest(shop, "cards", w.shopCards, "requirements", cardsOutcome)
	w.clock.Advance(10 * time.Minute)
	w.deploy(shop, 4242, "production", w.cardsHead, "cards")
	w.clock.Advance(40 * time.Minute)
	w.pullRequest(api, "limits", w.apiLimits, "requirements", limitsOutcome)
	w.pullRequest(vault, "keys", w.vaultKeys, "requirements", limitsOutcome)
	w.clock.Advance(35 * time.Minute)
	w.searchPR, w.searchHead = w.pullRequest(shop, "search", w.shopSearch, "technical-plan", searchOutcome)
	w.clock.Advance(2*time.Hour + 10*time.Minute)
}

// pullRequest opens an agent's pull request on repo adding the outcome
// (a format with the feature's number) for issue, and delivers it to
// serve; it returns the pull request's number and head.
func (w *world) pullRequest(repo, branch string, issue int, phase, format string) (int, string) {
	f := w.fake
	n := w.commits.Add(1)
	base, head := fmt.Sprintf("ba5e%036x", n), fmt.Sprintf("feed%036x", n)
	path := fmt.Sprintf("outcomes/feature-%03d-%s.outcome.yaml", issue, phase)
	f.SetTreeFiles(org, repo, base, map[string]string{"README.md": "# " + repo + "\n"})
	f.SetTreeFiles(org, repo, head, map[string]string{"README.md": "# " + repo + "\n", path: fmt.Sprintf(format, issue)})
	pr := f.AddPullRequest(org, repo, ghfake.PullRequest{Title: "feature-" + branch, HeadSHA: head, BaseSHA: base,
		HeadRef: branch, BaseRef: "main", Author: "agent-bot"})
	f.SetPullRequestFiles(org, repo, pr, []ghfake.File{{Filename: path, Status: "added"}})
	w.deliver("pull_request", pullRequestEvent(repo, pr, head, base, branch))
	w.waitJobs(1)
	return pr, head
}

// deploy has a workflow run ask serve for its deployment of head to env
// (the environment lists the App), and waits for serve's answer: a
// decision of the head's outcome is pending, so the request waits.
func (w *world) deploy(repo string, run int64, env, head, ref string) {
	body, err := w.fake.DeploymentRequestPayload(ghfake.DeploymentRequest{Owner: org, Repo: repo, RunID: run, Environment: env,
		SHA: head, Ref: ref, InstallationID: installation})
	if err != nil {
		w.t.Fatal(err)
	}
	w.deliver("deployment_protection_rule", body)
	w.waitJobs(1)
}

// comment is a person's comment typed on GitHub, delivered to serve as
// GitHub would.
func (w *world) comment(repo string, issue int, login, body string) {
	id := w.fake.AddComment(org, repo, issue, login, body)
	w.deliverComment(repo, issue, id, login, body)
}

// deliverComment delivers the issue_comment event of a comment (one the
// fake holds) and waits for serve to handle it.
func (w *world) deliverComment(repo string, issue int, id int64, login, body string) {
	w.deliver("issue_comment", commentEvent(repo, issue, id, login, body))
	w.waitJobs(1)
}

// resolveComment is the /resolve comment login posted on the issue, from
// a page (through the App) when via, as GitHub holds it; it fails the test
// when there is none.
func (w *world) resolveComment(repo string, issue int, login, decision string) ghfake.Comment {
	w.t.Helper()
	for _, c := range w.fake.Comments(org, repo, issue) {
		if c.User == login && strings.HasPrefix(c.Body, "/resolve "+decision+" ") {
			return c
		}
	}
	w.t.Fatalf("no /resolve %s comment by %s on %s/%s#%d; comments: %+v", decision, login, org, repo, issue, w.fake.Comments(org, repo, issue))
	return ghfake.Comment{}
}

// decisionsCheck is the conclusion of the newest phasegate/decisions check
// run on sha ("" when there is none).
func (w *world) decisionsCheck(repo, sha string) string {
	var got string
	for _, r := range w.fake.CheckRuns(org, repo, sha) {
		if r.Name == decide.ContextDecisions {
			got = r.Conclusion
		}
	}
	return got
}

// deliver POSTs a webhook delivery to serve, signed as GitHub signs it.
func (w *world) deliver(event string, body []byte) {
	w.t.Helper()
	req, err := http.NewRequest(http.MethodPost, w.public+"/webhook", bytes.NewReader(body))
	if err != nil {
		w.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("e2e-%d", w.delivery.Add(1)))
	req.Header.Set("X-Hub-Signature-256", ghfake.SignWebhook(webhookSecret, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		w.t.Fatalf("delivering %s: %d %s", event, resp.StatusCode, answer)
	}
}

// waitJobs waits until serve has handled n more jobs, each without error
// (phasegate_handler_duration_seconds counts them by outcome).
func (w *world) waitJobs(n int) {
	w.t.Helper()
	want := w.handled + n
	var done map[string]uint64
	w.until(fmt.Sprintf("%d jobs handled", want), func() bool {
		done = w.jobs()
		var total uint64
		for _, c := range done {
			total += c
		}
		return total >= uint64(want)
	})
	if len(done) != 1 || done["ok"] == 0 {
		w.t.Fatalf("jobs by outcome %v, want every one ok; logs:\n%s", done, w.logs.String())
	}
	w.handled = want
}

// jobs are the jobs serve handled, by outcome.
func (w *world) jobs() map[string]uint64 {
	out := map[string]uint64{}
	mfs, err := w.reg.Gather()
	if err != nil {
		w.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "phasegate_handler_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" {
					out[l.GetValue()] += m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return out
}

// until polls cond (a state the server changes) until it holds, or fails
// the test after guard.
func (w *world) until(what string, cond func() bool) {
	w.t.Helper()
	deadline := time.Now().Add(guard)
	for pause := time.Millisecond; !cond(); pause = min(2*pause, 20*time.Millisecond) {
		if time.Now().After(deadline) {
			w.t.Fatalf("never: %s; logs:\n%s", what, w.logs.String())
		}
		time.Sleep(pause)
	}
}

// url is a page of the world's serve.
func (w *world) url(path string, args ...any) string { return w.public + fmt.Sprintf(path, args...) }

func user(login string) map[string]any {
	typ := "User"
	if strings.HasSuffix(login, "[bot]") {
		typ = "Bot"
	}
	return map[string]any{"login": login, "type": typ}
}

func repository(name string) map[string]any {
	return map[string]any{"id": 1, "name": name, "full_name": org + "/" + name, "owner": user(org),
		"html_url": "https://github.com/" + org + "/" + name}
}

// pullRequestEvent is the pull_request "opened" payload GitHub sends.
func pullRequestEvent(repo string, number int, head, base, ref string) []byte {
	return mustJSON(map[string]any{
		"action": "opened", "number": number,
		"installation": map[string]any{"id": installation}, "repository": repository(repo), "sender": user("agent-bot"),
		"pull_request": map[string]any{"number": number, "state": "open", "user": user("agent-bot"),
			"head": map[string]any{"sha": head, "ref": ref, "repo": map[string]any{"full_name": org + "/" + repo}},
			"base": map[string]any{"sha": base, "ref": "main"}},
	})
}

// commentEvent is the issue_comment "created" payload GitHub sends.
func commentEvent(repo string, issue int, id int64, login, body string) []byte {
	return mustJSON(map[string]any{
		"action": "created", "installation": map[string]any{"id": installation},
		"repository": repository(repo), "sender": user(login),
		"issue": map[string]any{"number": issue, "title": "Feature"},
		"comment": map[string]any{"id": id, "body": body, "user": user(login),
			"html_url": fmt.Sprintf("https://github.com/%s/%s/issues/%d#issuecomment-%d", org, repo, issue, id)},
	})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// syncBuffer is the server's log, safe for its goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
