package server

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/notify/webhook"
	"github.com/phasegate/phasegate/internal/probe"
	"github.com/phasegate/phasegate/internal/redisx"
)

// serveSettings are `phasegate serve`'s settings: every flag has an
// environment variable (issue 6's interface; operators script against it).
type serveSettings struct {
	cfg      Config
	redisURL string
	lockTTL  time.Duration
	// pages are the settings of serve's own pages; nil when they are off.
	pages *PagesOptions
	// probe: only ask a running serve's /readyz (--probe).
	probe bool
	// logLevel and logFormat (json or text) shape serve's log; keySource
	// names where the private key came from, for its error.
	logLevel             slog.Level
	logFormat, keySource string
}

// logLevels are --log-level's values.
var logLevels = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}

// DefaultLockTTL is how long an issue's Redis lock outlives a replica that
// died holding it; a live holder renews it.
const DefaultLockTTL = 30 * time.Second

// parseServe builds the server config from args and the environment. Flags
// win over variables. Secrets and the private key come from variables or
// files so that they are not visible in ps; none of them is ever printed.
func parseServe(args []string, getenv func(string) string, stdout, stderr io.Writer) (serveSettings, error) {
	var s serveSettings
	f, err := parseServeFlags(args, getenv, stdout)
	if err != nil {
		return s, err
	}
	if *f.probe {
		s.probe, s.cfg.Addr = true, *f.addr
		return s, nil
	}
	if s.cfg.Secrets, err = webhookSecrets(*f.secret, getenv); err != nil {
		return s, err
	}
	id, err := strconv.ParseInt(strings.TrimSpace(*f.appID), 10, 64)
	if err != nil || id <= 0 {
		return s, fmt.Errorf("--app-id / PHASEGATE_APP_ID must be the App's numeric id (got %q)", *f.appID)
	}
	s.cfg.AppID = id
	// The App's private key, PEM: read from the file, or the value of
	// PHASEGATE_PRIVATE_KEY (for platforms that hand secrets over as
	// variables, a Kubernetes secretKeyRef; never a flag: ps shows flags).
	pem, err := secretValue(*f.keyFile, "PHASEGATE_PRIVATE_KEY", "the private key", getenv)
	if err == nil && pem == "" {
		err = errors.New("no private key: set --private-key-file, PHASEGATE_PRIVATE_KEY_FILE or PHASEGATE_PRIVATE_KEY")
	}
	if s.cfg.PrivateKeyPEM = []byte(pem); err != nil {
		return s, err
	}
	s.keySource = cmp.Or(*f.keyFile, "PHASEGATE_PRIVATE_KEY")
	if err := f.settings(&s); err != nil {
		return s, err
	}
	if k := getenv("PHASEGATE_SIGNING_KEY"); k != "" {
		s.cfg.SigningKey = []byte(k)
	}
	if err := setNotifier(&s.cfg, getenv); err != nil {
		return s, err
	}
	if s.pages, err = parsePages(f, getenv); err != nil {
		return s, err
	}
	s.redisURL = *f.redisURL
	return s, nil
}

// serveFlags are the values of serve's flags: a flag given wins; else its
// variable (flagVar), when set; else the default.
type serveFlags struct {
	addr, secret, appID, keyFile, apiURL, redisURL, lockTTL, every *string
	metricsAddr, maxInflight, installEvery, installConcurrency     *string
	publish, budgetShare, logLevel, logFormat                      *string
	probe                                                          *bool
	// serve's own pages (pages.go).
	publicURL, oauthClientID, oauthSecretFile, sessionKeyFile, githubWebURL *string
}

// flagVar is the environment variable of the flag name: PHASEGATE_ and
// the name in capitals, '-' as '_' (--lock-ttl: PHASEGATE_LOCK_TTL).
func flagVar(name string) string {
	return "PHASEGATE_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// parseServeFlags parses args, filling each flag not given from its
// variable. -h prints the usage to stdout and returns flag.ErrHelp.
func parseServeFlags(args []string, getenv func(string) string, stdout io.Writer) (*serveFlags, error) {
	fset := flag.NewFlagSet("phasegate serve", flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	// Defaults are the documented ones, never the environment's values:
	// -h must not print a secret (a password in PHASEGATE_REDIS_URL).
	f := &serveFlags{
		addr:         fset.String("addr", DefaultAddr, "listen address ($PHASEGATE_ADDR)"),
		secret:       fset.String("webhook-secret", "", "webhook secret(s), comma-separated for rotation ($PHASEGATE_WEBHOOK_SECRET, or a file in $PHASEGATE_WEBHOOK_SECRET_FILE); prefer the variable or the file: a flag shows in ps"),
		appID:        fset.String("app-id", "", "GitHub App id ($PHASEGATE_APP_ID)"),
		keyFile:      fset.String("private-key-file", "", "the App's private key, PEM ($PHASEGATE_PRIVATE_KEY_FILE)"),
		apiURL:       fset.String("github-api-url", "", "GitHub API base URL, for GitHub Enterprise ($PHASEGATE_GITHUB_API_URL)"),
		redisURL:     fset.String("redis-url", "", "redis://… for several replicas: shared per-issue locks, delivery ids and installation reconcile limits, the pages' check results and sign-outs, and the durable job queue (pull_request, merge_group) every replica consumes ($PHASEGATE_REDIS_URL)"),
		lockTTL:      fset.String("lock-ttl", DefaultLockTTL.String(), "with --redis-url: how long an issue stays locked, and an installation's job slot taken, after the replica holding it died; live holders renew them ($PHASEGATE_LOCK_TTL)"),
		every:        fset.String("reconcile-every", "15m", "period of the reconcile loop, 0 to turn it off ($PHASEGATE_RECONCILE_EVERY)"),
		metricsAddr:  fset.String("metrics-addr", "", "serve /metrics on this address only, not on --addr ($PHASEGATE_METRICS_ADDR)"),
		maxInflight:  fset.String("max-inflight-bytes", "64MiB", "bytes of webhook bodies read at once before their signatures are checked, over all connections; beyond it 503 (bytes, or with KiB, MiB, GiB; at least 25MiB) ($PHASEGATE_MAX_INFLIGHT_BYTES)"),
		installEvery: fset.String("install-reconcile-interval", "5m", "installation deliveries start at most one reconcile per installation per this interval, at least 1s ($PHASEGATE_INSTALL_RECONCILE_INTERVAL)"),
		installConcurrency: fset.String("installation-concurrency", strconv.Itoa(DefaultInstallationConcurrency),
			"with --redis-url: durable jobs of one installation running at once over every replica, at least 1 ($PHASEGATE_INSTALLATION_CONCURRENCY)"),
		budgetShare: fset.String("reconcile-budget-share", strconv.FormatFloat(DefaultReconcileBudgetShare, 'g', -1, 64),
			"share of each installation's hourly rate limit the reconcile loop may spend, above 0 and at most 1; a pass cut short says what it skipped and the next takes it first ($PHASEGATE_RECONCILE_BUDGET_SHARE)"),
		publish:   fset.String("publish", "checks", "where phasegate/contracts, phasegate/decisions and the ledger anchors go: checks (the App's check runs), statuses, or both ($PHASEGATE_PUBLISH)"),
		logLevel:  fset.String("log-level", "info", "the least severe log records written: debug, info, warn or error ($PHASEGATE_LOG_LEVEL)"),
		logFormat: fset.String("log-format", "json", "the log's format on stderr: json (one object a line) or text (key=value) ($PHASEGATE_LOG_FORMAT)"),
	}
	f.probe = fset.Bool("probe", false, "ask the serve listening on --addr's port (on 127.0.0.1 when --addr names no host) for /readyz and exit 0 when it answers 200, else 1: a container health check, as the image has no curl ($PHASEGATE_PROBE)")
	pageFlags(fset, f)
	err := fset.Parse(args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, "Usage: phasegate serve [flags]\n\nRuns the GitHub App webhook server. Every flag has an environment variable. Flags:\n")
			fset.SetOutput(stdout)
			fset.PrintDefaults()
			fmt.Fprint(stdout, serveHelpFooter)
			return nil, err
		}
		return nil, err
	}
	if fset.NArg() > 0 {
		return nil, fmt.Errorf("serve takes no arguments (got %q)", fset.Arg(0))
	}
	// A flag given wins; else its variable, when set; else the default.
	set := map[string]bool{}
	fset.Visit(func(f *flag.Flag) { set[f.Name] = true })
	fset.VisitAll(func(f *flag.Flag) {
		if v := getenv(flagVar(f.Name)); !set[f.Name] && v != "" && f.Value.Set(v) != nil && err == nil {
			err = fmt.Errorf("%s must be true or false (got %q)", flagVar(f.Name), v) // --probe's: the only flag that is not a string
		}
	})
	return f, err
}

// webhookSecrets are the comma-separated webhook secrets of the flag or
// the variable, else of the file PHASEGATE_WEBHOOK_SECRET_FILE names; at
// least one is required.
func webhookSecrets(raw string, getenv func(string) string) ([][]byte, error) {
	if raw == "" {
		if p := getenv("PHASEGATE_WEBHOOK_SECRET_FILE"); p != "" {
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, fmt.Errorf("reading the webhook secret file: %w", err)
			}
			raw = strings.TrimSpace(string(data))
		}
	}
	var secrets [][]byte
	for _, part := range strings.Split(raw, ",") {
		if part = strings.TrimSpace(part); part != "" {
			secrets = append(secrets, []byte(part))
		}
	}
	if len(secrets) == 0 {
		return nil, errors.New("no webhook secret: set PHASEGATE_WEBHOOK_SECRET or PHASEGATE_WEBHOOK_SECRET_FILE (GitHub signs every delivery with it; serve refuses to run without one)")
	}
	return secrets, nil
}

// settings checks the durations, sizes and addresses of
// the flags and sets them in s. The first refused value is the error.
func (f *serveFlags) settings(s *serveSettings) error {
	var err error
	must := func(name, raw string, ok bool, want string) {
		if !ok && err == nil {
			err = fmt.Errorf("--%s / %s must be %s (got %q)", name, flagVar(name), want, raw)
		}
	}
	d, e := time.ParseDuration(*f.every)
	must("reconcile-every", *f.every, e == nil && d >= 0, "a duration such as 15m")
	ttl, e := time.ParseDuration(*f.lockTTL)
	must("lock-ttl", *f.lockTTL, e == nil && ttl >= time.Second, "a duration of at least 1s such as 30s")
	inflight, e := parseBytes(*f.maxInflight)
	must("max-inflight-bytes", *f.maxInflight, e == nil && inflight >= DefaultMaxBody, "a size of at least 25MiB (GitHub's largest delivery), such as 64MiB")
	ie, e := time.ParseDuration(*f.installEvery)
	must("install-reconcile-interval", *f.installEvery, e == nil && ie >= time.Second, "a duration of at least 1s such as 5m")
	must("publish", *f.publish, slices.Contains(decide.PublishModes, *f.publish), "checks, statuses or both")
	ic, e := strconv.Atoi(strings.TrimSpace(*f.installConcurrency))
	must("installation-concurrency", *f.installConcurrency, e == nil && ic >= 1, "a whole number of at least 1 such as 4")
	share, e := strconv.ParseFloat(strings.TrimSpace(*f.budgetShare), 64)
	must("reconcile-budget-share", *f.budgetShare, e == nil && share > 0 && share <= 1, "a fraction above 0 and at most 1 such as 0.2")
	level, ok := logLevels[*f.logLevel]
	must("log-level", *f.logLevel, ok, "debug, info, warn or error")
	must("log-format", *f.logFormat, *f.logFormat == "json" || *f.logFormat == "text", "json or text")
	if err == nil && *f.metricsAddr != "" && *f.metricsAddr == *f.addr {
		err = fmt.Errorf("--metrics-addr must differ from --addr (both %q)", *f.addr)
	}
	s.cfg.Addr, s.cfg.APIURL, s.cfg.ReconcileEvery, s.lockTTL = *f.addr, *f.apiURL, d, ttl
	s.cfg.MetricsAddr, s.cfg.MaxInflightBytes, s.cfg.InstallReconcileInterval = *f.metricsAddr, inflight, ie
	s.cfg.Publish = *f.publish
	s.cfg.InstallationConcurrency = ic
	s.cfg.ReconcileBudgetShare = share
	s.logLevel, s.logFormat = level, *f.logFormat
	return err
}

// setNotifier sets cfg.Notifier from PHASEGATE_NOTIFY_URL and its
// companions, when the URL is set.
func setNotifier(cfg *Config, getenv func(string) string) error {
	nopts, on, err := webhook.OptionsFromEnv(getenv)
	if err != nil {
		return fmt.Errorf("the notify URL (PHASEGATE_NOTIFY_URL, PHASEGATE_NOTIFY_SECRET, PHASEGATE_NOTIFY_ALLOW_PRIVATE): %w", err)
	}
	if on {
		sender, err := webhook.New(nopts)
		if err != nil {
			return fmt.Errorf("the notify URL (PHASEGATE_NOTIFY_URL): %w", err)
		}
		cfg.Notifier = sender
	}
	return nil
}

// Main is `phasegate serve`: it runs the GitHub App webhook server until
// SIGINT or SIGTERM, then drains the queue. It returns the exit code (0, or
// 2 when it could not start).
func Main(args []string, getenv func(string) string, stdout, stderr io.Writer, version string) int {
	s, err := parseServe(args, getenv, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil && s.probe {
		if err := probe.Ready(s.cfg.Addr); err != nil {
			fmt.Fprintf(stderr, "phasegate: --probe: %v\n", err)
			return 1
		}
		return 0
	}
	if err == nil {
		err = runServe(s, stderr, version)
	}
	if err != nil {
		fmt.Fprintf(stderr, "phasegate: %v\n", err)
		return 2
	}
	return 0
}

// runServe runs the server of s, logging to stderr in s's format, until
// SIGINT or SIGTERM.
func runServe(s serveSettings, stderr io.Writer, version string) error {
	// The key is parsed first, before any network call (Redis, GitHub),
	// by the parser GitHub's client uses: a bad one is named at once.
	if _, err := ghclient.NewAppTransport(s.cfg.AppID, s.cfg.PrivateKeyPEM, "", nil); err != nil {
		return fmt.Errorf("the App's private key (%s): %w", s.keySource, err)
	}
	logger := newLogger(stderr, s.logLevel, s.logFormat)
	s.cfg.Logger, s.cfg.Version = logger, version
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if s.redisURL != "" {
		redisx.LogTo(logger)
		store, err := redisx.Open(ctx, s.redisURL)
		if err != nil {
			return fmt.Errorf("connecting to Redis: %w", err)
		}
		defer store.Close()
		defer useRedis(&s, store, logger).Close()
	}
	if s.pages != nil {
		if err := WithPages(&s.cfg, *s.pages); err != nil {
			return err
		}
		logger.Info("serving the pages", "public_url", s.pages.PublicURL, "github_web_url", s.pages.GitHubWebURL)
	}
	srv, err := New(s.cfg)
	if err != nil {
		return err
	}
	return srv.Run(ctx)
}

// newLogger is serve's logger on w: records from level up, as JSON or, for
// format "text", as key=value lines.
func newLogger(w io.Writer, level slog.Level, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// useRedis shares the replicas' state in store: delivery ids, per-issue
// locks, the installation reconcile limit, the durable job queue, the
// installations' job slots, the units' results, the waiting deployment
// requests, and the pages' check results and sign-outs.
// Close the queue it returns after the server.
func useRedis(s *serveSettings, store *redisx.Store, logger *slog.Logger) *redisx.Queue {
	s.cfg.Seen = store.Seen("phasegate:seen:", 72*time.Hour)
	s.cfg.Locker = store.Locker("phasegate:lock:", s.lockTTL)
	s.cfg.InstallThrottle = store.Seen("phasegate:install-reconcile:", s.cfg.InstallReconcileInterval)
	s.cfg.Units = newSharedUnits(store, DefaultCacheUnits)
	if s.pages != nil {
		s.cfg.SharedResults = store.Blobs("phasegate:result:", 0)
		s.pages.SignedOut = newSharedSignOuts(store)
	}
	q := store.Queue(redisx.QueueOptions{
		Concurrency:     DefaultWorkers,
		TaskTimeout:     DefaultJobTimeout + time.Minute,
		ShutdownTimeout: DefaultShutdownTimeout,
		Logger:          logger,
	})
	s.cfg.Tasks = q
	s.cfg.InstallSlots = store.Semaphore("phasegate:installation-jobs:", s.lockTTL)
	s.cfg.Deployments = sharedDeployments{store.Table("phasegate:deployments", MaxWaitingDeployments)}
	logger.Info("using Redis for locks, delivery ids, the installation reconcile limit, the units' results, the waiting deployments, the pages' results and sign-outs and the durable job queue",
		"queue", q.Name(), "installation_concurrency", s.cfg.InstallationConcurrency)
	return q
}
