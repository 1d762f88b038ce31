// Package serve measures the webhook acknowledgement path of phasegate serve
// over loopback: a real server.Server on 127.0.0.1:0, backed by an in-process
// ghfake (so the App's readiness probe and installation tokens work), and a Go
// load generator sending signed ~20 KB issue_comment deliveries with unique
// X-GitHub-Delivery ids. The decider does nothing: the measurement is the
// acknowledgement (verify, parse, deduplicate, enqueue), which is what the
// budget of issue 6 is about (≥ 2,000 deliveries/s with p99 < 10 ms).
package serve

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/phasegate/phasegate/internal/checkjob"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/server"
)

// The fixture: one App installed on one repository.
const (
	AppID        = 4242
	AppSlug      = "phasegate"
	Installation = 77
	Owner        = "acme"
	Repo         = "shop"
)

// Secret is the webhook secret of the server Start builds.
var Secret = []byte("It's a Secret to Everybody")

// Options adjust Start. The zero value is the server's defaults (16 workers,
// a queue of 1024, the in-memory replay set).
type Options struct {
	Workers   int
	QueueSize int
	// Logger defaults to warnings and errors to io.Discard.
	Logger *slog.Logger
}

// Env is a running server and its fake GitHub.
type Env struct {
	// URL is the webhook endpoint, http://127.0.0.1:PORT/webhook.
	URL    string
	Server *server.Server
	Fake   *ghfake.Server

	cancel context.CancelFunc
	served chan error
}

// NopDecider handles every delivery by doing nothing.
type NopDecider struct{}

func (NopDecider) HandleComment(context.Context, decide.GitHub, decide.Event) (decide.Result, error) {
	return decide.Result{}, nil
}

func (NopDecider) ReconcileIssue(context.Context, decide.GitHub, string, string, int) (decide.Result, error) {
	return decide.Result{}, nil
}

func (NopDecider) ReconcileRepo(context.Context, decide.GitHub, string, string) (decide.Result, error) {
	return decide.Result{}, nil
}

func (NopDecider) SyncPullRequest(context.Context, decide.GitHub, string, string, int) error {
	return nil
}

func (NopDecider) SyncCommit(context.Context, decide.GitHub, string, string, string, decide.CommitOptions) (ghclient.Status, error) {
	return ghclient.Status{}, nil
}

func (NopDecider) CheckCommit(context.Context, checkjob.GitHub, checkjob.Request) (checkjob.Summary, error) {
	return checkjob.Summary{}, nil
}

// RecordDeletion does nothing.
func (NopDecider) RecordDeletion(context.Context, decide.GitHub, decide.Deletion) (decide.Result, error) {
	return decide.Result{}, nil
}

// DeploymentDecisions reads nothing: no outcome is carried.
func (NopDecider) DeploymentDecisions(_ context.Context, _ decide.GitHub, _, _, sha string) (decide.DeploymentRead, error) {
	return decide.DeploymentRead{State: ledger.DeployState{SHA: sha, Read: sha}}, nil
}

// Start builds the fake GitHub and the server, serves on a loopback listener
// and waits (at most 30 s) until the server is ready. Close stops both.
func Start(o Options) (*Env, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	f := ghfake.New() // real clock: the App's JWTs are signed with time.Now
	f.AddApp(AppID, AppSlug, &key.PublicKey)
	f.AddInstallation(AppID, Installation)
	f.AddRepo(Owner, Repo, "main")
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	srv, err := server.New(server.Config{
		Secrets:       [][]byte{Secret},
		AppID:         AppID,
		PrivateKeyPEM: keyPEM,
		APIURL:        f.URL(),
		Workers:       o.Workers,
		QueueSize:     o.QueueSize,
		ReadyRetry:    10 * time.Millisecond,
		Logger:        log,
		NewDecider:    func(server.DeciderOptions) server.Decider { return NopDecider{} },
	})
	if err != nil {
		f.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &Env{URL: "http://" + ln.Addr().String() + "/webhook", Server: srv, Fake: f, cancel: cancel, served: make(chan error, 1)}
	go func() { e.served <- srv.Serve(ctx, ln) }()
	deadline := time.Now().Add(30 * time.Second)
	for !srv.Ready() {
		if time.Now().After(deadline) {
			e.Close()
			return nil, errors.New("the server never became ready")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return e, nil
}

// Close shuts the server down (draining its queue) and closes the fake.
func (e *Env) Close() error {
	e.cancel()
	var err error
	select {
	case err = <-e.served:
	case <-time.After(time.Minute):
		err = errors.New("the server did not return within a minute")
	}
	e.Fake.Close()
	return err
}

// Payload is a realistic issue_comment "created" delivery of about size
// bytes: a human's comment on an issue holding a /resolve command line and
// prose around it.
func Payload(issue int, commentID int64, size int) []byte {
	user := func(login string) map[string]any {
		return map[string]any{"login": login, "id": 1001, "type": "User", "site_admin": false,
			"html_url": "https://github.com/" + login, "avatar_url": "https://avatars.githubusercontent.com/u/1001?v=4"}
	}
	repoURL := "https://github.com/" + Owner + "/" + Repo
	p := map[string]any{
		"action":       "created",
		"installation": map[string]any{"id": Installation, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNzc="},
		"repository": map[string]any{"id": 1, "name": Repo, "full_name": Owner + "/" + Repo, "private": true,
			"owner": user(Owner), "html_url": repoURL, "default_branch": "main"},
		"sender": user("alice"),
		"issue": map[string]any{"number": issue, "title": "Decision record for the checkout redesign", "state": "open",
			"html_url": fmt.Sprintf("%s/issues/%d", repoURL, issue), "user": user("bob"),
			"labels": []any{map[string]any{"name": "phasegate/pending"}}, "comments": 12},
		"comment": map[string]any{"id": commentID, "user": user("alice"), "author_association": "MEMBER",
			"html_url":   fmt.Sprintf("%s/issues/%d#issuecomment-%d", repoURL, issue, commentID),
			"created_at": "2026-11-20T10:00:00Z", "updated_at": "2026-11-20T10:00:00Z", "body": ""},
	}
	head := "Looks complete to me; the gate report matches the acceptance criteria.\n\n/resolve D-001 approve\n\n"
	prose := "The outcome report quotes the discussion at length, with the numbers from the staging run and the reviewers' notes. "
	base, _ := json.Marshal(p)
	var b strings.Builder
	b.WriteString(head)
	for b.Len()+len(base) < size {
		b.WriteString(prose)
	}
	p["comment"].(map[string]any)["body"] = b.String()
	out, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	return out
}
