// Package server is phasegate's GitHub App webhook server (phasegate
// serve): the same decision handler as the action (internal/decide), for
// every installation of the App.
//
// A delivery is verified and answered within milliseconds; the work is
// queued for a pool of workers:
//
//	POST /webhook (or /)  405 unless POST; 413 over MaxBody; 400 without
//	                      X-GitHub-Event or X-GitHub-Delivery; 401 unless
//	                      X-Hub-Signature-256 verifies under one of the
//	                      secrets (the SHA-1 header is never accepted;
//	                      a missing or malformed header is refused before
//	                      the body is read); 503 when the body's next
//	                      bytes do not fit in MaxInflightBytes; 400 for a
//	                      body slower than 64 KiB/s after its first second,
//	                      a malformed payload, or one whose shape is not
//	                      the claimed event's; 200 "ignored" for what
//	                      phasegate does not act on; 200 "duplicate" for a
//	                      delivery ID or an issue_comment body (comment,
//	                      action, edit time) seen before; 503 when the queue is
//	                      full or the server is shutting down; 202
//	                      "accepted: coalesced …" for a durable job the
//	                      same in every input as one waiting to start,
//	                      202 "accepted: queued behind …" for one the same
//	                      as a running job (durable.go); else 202.
//	GET /healthz          200 while the process runs.
//	GET /readyz           200 once the App's key works and GitHub answered
//	                      GET /app; 503 before, and while shutting down.
//	GET /metrics          Prometheus metrics (phasegate_…, Go, process);
//	                      on Config.MetricsAddr instead, when it is set.
//
// Events: issue_comment created (commands) → Decider.HandleComment;
// issue_comment edited or deleted on a phasegate comment → an audit log
// line, phasegate_tamper_reports_total and Decider.ReconcileIssue;
// pull_request opened, synchronize or reopened → Decider.SyncPullRequest;
// installation created or unsuspended and installation_repositories added
// → Decider.ReconcileRepo for those repositories, at most once per
// installation per InstallReconcileInterval (else 200 "ignored"); removals
// are logged;
// status phasegate/decisions set by anyone but phasegate → an audit log
// line and Decider.SyncPullRequest for the open pull requests whose head it
// is (policy-bot does the same);
// deployment_protection_rule requested → the deployment's answer
// (deploy.go: approved, rejected, or a comment while it waits, answered
// again when a decision it waits on is resolved).
//
// With Redis (Config.Tasks), pull_request and merge_group jobs go through
// a durable queue that every replica consumes, with retries, one job per
// commit at a time and a per-installation limit (durable.go); the others,
// and every job without Redis, through the in-memory queue.
//
// Nothing is lost when a delivery is: the reconcile loop (ReconcileEvery)
// re-folds every pending issue of every installation, and asks GitHub to
// redeliver the App's recent failed deliveries.
//
// The App's identity ("<slug>[bot]") comes from Config.Identity or GET
// /app and is handed to the Decider; it overrides the identity a
// repository's .github/phasegate.yml names.
package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/pages"
)

// Server is the webhook server. Build it with New; serve with Run or Serve
// (once).
type Server struct {
	cfg       Config
	validator *check.Validator // the checker, built once
	// watermarks: each repository's last successful reconcile pass.
	watermarks *decide.Watermarks
	// memo: what each thread's last reconcile saw (decide.FoldMemo).
	memo *decide.FoldMemo
	// spend: what the reconcile passes spent per installation, for an hour.
	spend spendLog
	// cursor: per installation, the repository a pass cut short was in.
	cursor  sync.Map // int64 → string
	log     *slog.Logger
	queue   *queue
	budget  *bodyBudget
	metrics *metrics
	mux     *http.ServeMux
	// metricsMux serves /metrics on Config.MetricsAddr, when set (then mux
	// does not).
	metricsMux  *http.ServeMux
	metricsAddr atomic.Pointer[string]
	base        http.RoundTripper
	appGH       *ghclient.Client
	// probeGH is appGH's identity with one attempt a request, for probe.
	probeGH *ghclient.Client

	mu      sync.Mutex
	clients map[int64]*ghclient.Client // per installation

	ident    atomic.Pointer[string]
	ready    atomic.Bool
	readyCh  chan struct{}
	draining atomic.Bool
	started  atomic.Bool

	redelivered map[string]time.Time // GUIDs redelivered (the reconcile goroutine's)

	// onJobDone, if set, is called after each job with its outcome (tests).
	onJobDone func(j *job, outcome string)

	// What serve's pages read (internal/pages), and the installation of
	// each repository.
	pages    *pages.Source
	installs *installIndex
	// wakes: what each issue last woke the waiting deployments with.
	wakes wakeMemo
	// refound: the repositories whose waiting deployments this process
	// looked for through the API.
	refound sync.Map
}

// observe is the decision handler's fold observer: the pages' index, and
// the deployments waiting on the issue.
func (s *Server) observe(f decide.Folded) {
	s.pages.Observe(f)
	s.deployWake(f)
}

// New checks cfg, loads the App's private key and builds the server. It
// does no I/O: GitHub is first asked at Run.
func New(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("server config: %w", err)
	}
	s := &Server{
		cfg:         cfg,
		log:         cfg.Logger,
		queue:       newQueue(cfg.QueueSize),
		budget:      &bodyBudget{max: cfg.MaxInflightBytes},
		clients:     map[int64]*ghclient.Client{},
		readyCh:     make(chan struct{}),
		redelivered: map[string]time.Time{},
	}
	if cfg.Identity != "" {
		s.ident.Store(&cfg.Identity)
	}
	s.watermarks = &decide.Watermarks{}
	s.memo = decide.NewFoldMemo(0)
	s.pages = pages.New(pages.Config{Handler: s.pagesHandler, Client: s.repoClient, AppID: cfg.AppID,
		User:   func(token string) (*ghclient.Client, error) { return ghclient.NewUser(token, s.ghOptions(nil)) },
		WebURL: s.webURL(), Now: cfg.Now, Logger: s.log, SharedResults: cfg.SharedResults, Forget: s.memo.Forget, May: cfg.pagesMay,
		Deployments: cfg.Deployments.List})
	s.installs = &installIndex{repos: map[string]int64{}}
	if s.validator, err = check.NewValidator(); err != nil {
		return nil, fmt.Errorf("loading the schemas: %w", err)
	}
	reg := cmp.Or(cfg.Registry, newRegistry())
	if s.metrics, err = newMetrics(reg, s); err != nil {
		return nil, err
	}
	s.base = cfg.Transport
	if s.base == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 32
		s.base = t
	}
	atr, err := ghclient.NewAppTransport(cfg.AppID, cfg.PrivateKeyPEM, cfg.APIURL, s.base)
	if err != nil {
		return nil, fmt.Errorf("github app: %w", err)
	}
	o := s.ghOptions(atr)
	o.CacheIdentity = "app-" + strconv.FormatInt(cfg.AppID, 10)
	if s.appGH, err = ghclient.New(o); err != nil {
		return nil, fmt.Errorf("github app client: %w", err)
	}
	// The readiness probe tries again itself every ReadyRetry: one
	// attempt a try, so that an unreachable GitHub or a refused key is
	// logged at once, not after the client's backoff (24 s, issue 33).
	o.MaxAttempts = 1
	if s.probeGH, err = ghclient.New(o); err != nil {
		return nil, fmt.Errorf("github app client: %w", err)
	}

	s.mux = http.NewServeMux()
	s.mux.HandleFunc("/webhook", s.webhook)
	s.mux.HandleFunc("/{$}", s.webhook)
	s.mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { text(w, http.StatusOK, "ok") })
	s.mux.HandleFunc("/readyz", s.readyz)
	metricsHandler := promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelError), Registry: reg,
	})
	if cfg.MetricsAddr == "" {
		s.mux.Handle("/metrics", metricsHandler)
	} else {
		s.metricsMux = http.NewServeMux()
		s.metricsMux.Handle("/metrics", metricsHandler)
	}
	if cfg.Pages != nil {
		h, err := cfg.Pages(s.pages, s.ghOptions(nil))
		if err != nil {
			return nil, fmt.Errorf("serve's pages: %w", err)
		}
		// The webhook keeps POST / and /webhook; the pages take every
		// other path, and GET /.
		s.mux.Handle("GET /{$}", h)
		s.mux.Handle("/", h)
	}
	return s, nil
}

// Handler serves the webhook, /healthz, /readyz, and /metrics unless
// Config.MetricsAddr is set.
func (s *Server) Handler() http.Handler { return s.mux }

// MetricsAddr is the address /metrics listens on when Config.MetricsAddr
// is set, once Serve is listening there; "" otherwise.
func (s *Server) MetricsAddr() string {
	if p := s.metricsAddr.Load(); p != nil {
		return *p
	}
	return ""
}

// Ready reports whether the server is ready (see /readyz).
func (s *Server) Ready() bool { return s.ready.Load() && !s.draining.Load() }

// Identity is the App's login, once known.
func (s *Server) Identity() string {
	if p := s.ident.Load(); p != nil {
		return *p
	}
	return ""
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	switch {
	case s.draining.Load():
		text(w, http.StatusServiceUnavailable, "shutting down")
	case !s.ready.Load():
		text(w, http.StatusServiceUnavailable, "not ready: GitHub has not answered GET /app with the App's key yet")
	default:
		text(w, http.StatusOK, "ready")
	}
}

func text(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, msg+"\n")
}

// Run listens on Config.Addr and serves until ctx ends, then shuts down
// gracefully (see Serve).
func (s *Server) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", s.cfg.Addr, err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx ends. Then it stops accepting deliveries
// (503, and /readyz fails), lets the workers drain the queue for up to
// ShutdownTimeout, cancels what still runs, and closes the listener. It
// returns nil after a shutdown asked for by ctx.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if !s.started.CompareAndSwap(false, true) {
		ln.Close()
		return errors.New("server already started")
	}
	mln, err := s.listenMetrics(ln)
	if err != nil {
		return err
	}
	if err := s.startDurable(); err != nil {
		ln.Close()
		if mln != nil {
			mln.Close()
		}
		return err
	}
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()

	var bg sync.WaitGroup
	bg.Add(1)
	go func() { defer bg.Done(); s.probe(workCtx) }()
	if s.cfg.ReconcileEvery > 0 {
		bg.Add(1)
		go func() { defer bg.Done(); s.reconcileLoop(ctx) }()
	}
	var workers sync.WaitGroup
	for i := 0; i < s.cfg.Workers; i++ {
		workers.Add(1)
		go func() { defer workers.Done(); s.work(workCtx) }()
	}

	hs := s.httpServer(s.mux)
	served := make(chan error, 2)
	go func() { served <- hs.Serve(ln) }()
	var ms *http.Server
	if mln != nil {
		ms = s.httpServer(s.metricsMux)
		go func() { served <- ms.Serve(mln) }()
	}
	s.log.Info("serving", "addr", ln.Addr().String(), "metrics_addr", s.MetricsAddr(), "app_id", s.cfg.AppID, "workers", s.cfg.Workers,
		"queue", s.cfg.QueueSize, "reconcile_every", s.cfg.ReconcileEvery.String(),
		"max_inflight_bytes", s.cfg.MaxInflightBytes, "install_reconcile_interval", s.cfg.InstallReconcileInterval.String(),
		"durable_queue", s.cfg.Tasks != nil, "installation_concurrency", s.cfg.InstallationConcurrency)

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
		s.log.Error("the listener failed: shutting down", "error", serveErr)
	}

	s.drain(&workers, cancelWork)
	cancelWork()
	bg.Wait()

	shutdownHTTP(hs, ms)
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", serveErr)
	}
	s.log.Info("stopped")
	return nil
}

// listenMetrics listens on Config.MetricsAddr when /metrics is served
// apart (nil otherwise), and records the address it got. On failure it
// closes ln.
func (s *Server) listenMetrics(ln net.Listener) (net.Listener, error) {
	if s.metricsMux == nil {
		return nil, nil
	}
	mln, err := net.Listen("tcp", s.cfg.MetricsAddr)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("listening on %s for /metrics: %w", s.cfg.MetricsAddr, err)
	}
	addr := mln.Addr().String()
	s.metricsAddr.Store(&addr)
	return mln, nil
}

// httpServer is an HTTP server of h with the timeouts and header limit
// every listener of phasegate serve has, logging to the server's log.
func (s *Server) httpServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// drain stops accepting deliveries, then waits for the workers to drain
// the queue for up to ShutdownTimeout; past it, cancelWork cancels the
// work left (reconcile recovers it) and drain waits for the workers.
func (s *Server) drain(workers *sync.WaitGroup, cancelWork context.CancelFunc) {
	s.draining.Store(true)
	s.metrics.ready.Set(0)
	waiting, inflight, _ := s.queue.stats(s.cfg.Now())
	s.log.Info("shutting down: draining the queue", "queued", waiting, "running", inflight, "timeout", s.cfg.ShutdownTimeout.String())
	s.queue.close()
	drained := make(chan struct{})
	go func() {
		// The durable queue stops taking tasks, lets the running ones
		// finish for its own shutdown timeout, and puts the rest back.
		if s.cfg.Tasks != nil {
			s.cfg.Tasks.Shutdown()
		}
		workers.Wait()
		close(drained)
	}()
	timer := time.NewTimer(s.cfg.ShutdownTimeout)
	select {
	case <-drained:
		timer.Stop()
	case <-timer.C:
		waiting, inflight, _ := s.queue.stats(s.cfg.Now())
		s.log.Warn("shutdown timeout: cancelling the work left (reconcile recovers it)", "queued", waiting, "running", inflight)
		cancelWork()
		<-drained
	}
}

// shutdownHTTP shuts the webhook server hs and the metrics server ms (when
// not nil) down gracefully within 5 seconds, closing them past that.
func shutdownHTTP(hs, ms *http.Server) {
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, h := range []*http.Server{hs, ms} {
		if h != nil && h.Shutdown(shutCtx) != nil {
			h.Close()
		}
	}
}

// probe asks GitHub for the App (GET /app with its JWT) until it answers;
// then the server is ready and the identity known.
func (s *Server) probe(ctx context.Context) {
	for {
		app, err := s.probeGH.App(ctx)
		if err == nil {
			if id := s.Identity(); id == "" {
				login := app.BotLogin()
				s.ident.Store(&login)
			} else if !strings.EqualFold(id, app.BotLogin()) {
				s.log.Warn("the configured identity is not the App's", "identity", id, "app", app.BotLogin())
			}
			s.ready.Store(true)
			if !s.draining.Load() {
				s.metrics.ready.Set(1)
			}
			close(s.readyCh)
			s.log.Info("ready: GitHub answered", "app", app.Slug, "app_id", app.ID, "identity", s.Identity())
			return
		}
		s.log.Warn("not ready: GitHub did not answer GET /app with the App's key", "error", err, "retry_in", s.cfg.ReadyRetry.String())
		t := time.NewTimer(s.cfg.ReadyRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// waitReady blocks until the server is ready; false when ctx ends first.
func (s *Server) waitReady(ctx context.Context) bool {
	select {
	case <-s.readyCh:
		return true
	case <-ctx.Done():
		return false
	}
}

// work is one worker: it handles queued jobs until the queue is closed and
// drained. Once ctx ends, what is left is dropped (reconcile recovers it).
func (s *Server) work(ctx context.Context) {
	for j := range s.queue.ch {
		s.queue.popped(j)
		s.metrics.queueWait.Observe(s.cfg.Now().Sub(j.Enqueued).Seconds())
		if !s.waitReady(ctx) || ctx.Err() != nil {
			s.metrics.dropped.Inc()
			s.jobLogger(j).Warn("dropped at shutdown: not handled (reconcile recovers it)")
			s.queue.done()
			if s.onJobDone != nil {
				s.onJobDone(j, "dropped")
			}
			continue
		}
		s.handle(ctx, j)
		s.queue.done()
	}
}

func (s *Server) ghOptions(transport http.RoundTripper) ghclient.Options {
	o := ghclient.Options{Transport: transport, BaseURL: s.cfg.APIURL, Version: s.cfg.Version}
	if s.cfg.GitHubOptions != nil {
		s.cfg.GitHubOptions(&o)
	}
	o.Transport = transport
	user := o.OnCall
	o.OnCall = func(c ghclient.Call) {
		s.metrics.onCall(c)
		if user != nil {
			user(c)
		}
	}
	return o
}

// client returns the installation's client, building it on first use: its
// token, ETag cache and rate-limit state are the installation's.
func (s *Server) client(installation int64) (*ghclient.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.clients[installation]; ok {
		return c, nil
	}
	tr, err := ghclient.NewInstallationTransport(s.cfg.AppID, installation, s.cfg.PrivateKeyPEM, s.cfg.APIURL, s.base)
	if err != nil {
		return nil, fmt.Errorf("installation %d: %w", installation, err)
	}
	c, err := ghclient.New(s.ghOptions(tr))
	if err != nil {
		return nil, fmt.Errorf("installation %d: %w", installation, err)
	}
	s.clients[installation] = c
	return c, nil
}

// forget drops an installation's client (uninstalled or suspended).
func (s *Server) forget(installation int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.clients, installation)
}

func (s *Server) cachedClients() map[int64]*ghclient.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.clients)
}
