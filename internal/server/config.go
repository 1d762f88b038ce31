package server

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/pages"
)

// Defaults of Config.
const (
	DefaultAddr             = ":8080"
	DefaultMaxBody          = 25 << 20 // GitHub caps payloads at 25 MB
	DefaultQueueSize        = 1024
	DefaultWorkers          = 16
	DefaultShutdownTimeout  = 25 * time.Second
	DefaultJobTimeout       = 5 * time.Minute
	DefaultMinRateRemaining = 500
	// DefaultReconcileBudgetShare: the reconcile loop spends at most a
	// fifth of an installation's hourly rate limit.
	DefaultReconcileBudgetShare = 0.2
	DefaultRedeliverWindow      = time.Hour
	DefaultReadyRetry           = 5 * time.Second
	DefaultSeenTTL              = time.Hour
	DefaultSeenMax              = 200_000
	// DefaultCacheUnits bounds the units' results kept between jobs: a
	// 100,000-artifact repository is about 80,000 units.
	DefaultCacheUnits = 250_000
	// DefaultCacheTrees bounds the tree listings (one directory each)
	// kept between jobs.
	DefaultCacheTrees = 250_000
	// DefaultCacheBlobBytes bounds the files kept between jobs (whole,
	// by blob id, each at most an eighth of it).
	DefaultCacheBlobBytes = 64 << 20
	// DefaultMaxInflightBytes bounds the webhook bodies held at once
	// before their signatures are checked: two of GitHub's largest
	// deliveries, or thousands of ordinary ones.
	DefaultMaxInflightBytes = 64 << 20
	// DefaultInstallReconcileInterval: an installation or
	// installation_repositories delivery starts at most one reconcile per
	// installation per this interval.
	DefaultInstallReconcileInterval = 5 * time.Minute
	// installThrottleMax bounds the installations the in-memory limit
	// remembers.
	installThrottleMax = 100_000
)

// Config configures a Server. The CLI fills it from flags and environment
// variables; New checks it and applies the defaults.
type Config struct {
	// Addr is the listen address of Run (default ":8080").
	Addr string
	// Secrets are the webhook secrets: a delivery is accepted when its
	// X-Hub-Signature-256 verifies under any of them (several during a
	// rotation). At least one is required, and none may be empty.
	Secrets [][]byte
	// MetricsAddr, when set, is the listen address of /metrics, which is
	// then not served on Addr (keep the metrics off the address GitHub
	// reaches). Serve listens on it; MetricsAddr reports where.
	MetricsAddr string
	// MaxBody caps a delivery's body (default 25 MiB, GitHub's cap).
	MaxBody int64
	// MaxInflightBytes bounds the bytes of webhook bodies being read or
	// checked at once, over every connection (default 64 MiB; at least
	// MaxBody). A body is charged by the bytes received, in a buffer that
	// grows up to its Content-Length (MaxBody when it has none); a
	// delivery whose next bytes do not fit is answered 503.
	MaxInflightBytes int64
	// InstallReconcileInterval: installation and installation_repositories
	// deliveries start at most one reconcile per installation per this
	// interval (default 5m), so that a captured signed body re-sent with
	// fresh delivery ids cannot start reconciles at will. The periodic
	// reconcile loop covers what a refused one would have done.
	InstallReconcileInterval time.Duration
	// InstallThrottle records, per installation, when a reconcile was
	// started by a delivery: SeenBefore must remember a key for
	// InstallReconcileInterval (default an in-memory NewMemSeen of that
	// TTL; Redis shares it across replicas).
	InstallThrottle Seen
	// QueueSize bounds the deliveries accepted but not yet being handled
	// (default 1024); beyond it a delivery is answered 503.
	QueueSize int
	// Workers handle deliveries concurrently (default 16).
	Workers int
	// ReconcileEvery is the period of the reconcile loop; 0 turns it off.
	ReconcileEvery time.Duration
	// ShutdownTimeout bounds the drain of the queue on shutdown (default
	// 25s); work still running after it is cancelled.
	ShutdownTimeout time.Duration
	// JobTimeout bounds the handling of one delivery (default 5m).
	JobTimeout time.Duration

	// APIURL is the GitHub REST API root: empty for api.github.com, or a
	// GitHub Enterprise Server URL.
	APIURL string
	// AppID and PrivateKeyPEM authenticate the GitHub App. The key is never
	// logged (Config's String and LogValue leave it out).
	AppID         int64
	PrivateKeyPEM []byte
	// Identity is the App's login, "<slug>[bot]": only its comments count as
	// outcomes and resolutions, and a phasegate/decisions status set by
	// anyone else is reset. Empty: learnt from GET /app at start.
	Identity string
	// SigningKey is PHASEGATE_SIGNING_KEY (marker signatures); empty for
	// none.
	SigningKey []byte
	// ConfigPath is the repository config file on the default branch
	// (default .github/phasegate.yml).
	ConfigPath string

	// Seen remembers delivery IDs so that replays are dropped (default an
	// in-memory set: NewMemSeen(DefaultSeenTTL, DefaultSeenMax)). A shared
	// one (Redis) lets replicas drop each other's replays.
	Seen Seen
	// Locker serialises the handling of one issue (default an in-memory
	// decide.MemLocker; Redis across replicas).
	Locker decide.Locker
	// Notifier, when set, is told of every resolution (PHASEGATE_NOTIFY_URL).
	Notifier decide.Notifier
	// Tasks, when set, is the durable queue shared by every replica (Redis):
	// the jobs of durableKinds go through it instead of the in-memory queue
	// (see durable.go). Nil: every job goes through the in-memory queue.
	Tasks Tasks
	// InstallSlots bounds the durable jobs of one installation running at
	// once, over every replica (default an in-memory MemSlots; Redis shares
	// it). Used only with Tasks.
	InstallSlots Slots
	// InstallationConcurrency is how many durable jobs of one installation
	// run at once (default 4).
	InstallationConcurrency int
	// Units keeps the checked units' results between jobs, keyed by
	// their inputs' object ids (check.Cache; default an in-memory LRU of
	// DefaultCacheUnits units).
	Units check.Cache
	// Deployments keeps the deployment protection rule requests waiting
	// for an answer (default in memory: NewMemDeployments; Redis keeps
	// them over restarts and shares them between replicas).
	Deployments DeploymentStore
	// NewDecider builds the decision handler for one delivery or one
	// reconcile pass (default: a *decide.Handler, see DefaultDecider). It is
	// called often and must be cheap.
	NewDecider func(DeciderOptions) Decider

	// MinRateRemaining: the reconcile loop skips an installation with fewer
	// primary rate-limit requests left than this (default 500), and stops
	// a pass over one when it gets there.
	MinRateRemaining int
	// ReconcileBudgetShare is the share of each installation's hourly
	// primary rate limit the reconcile loop may spend (default
	// DefaultReconcileBudgetShare; at most 1): a pass stops when the
	// requests that cost rate limit in the last hour would go over it, and
	// the next takes first what it skipped.
	ReconcileBudgetShare float64
	// RedeliverWindow is how far back the reconcile loop looks for failed
	// deliveries to redeliver (default 1h).
	RedeliverWindow time.Duration
	// ReadyRetry is the wait between readiness probes (GET /app) until one
	// succeeds (default 5s).
	ReadyRetry time.Duration

	// Logger receives JSON logs (default slog.Default()).
	Logger *slog.Logger
	// Registry receives the metrics (default a new registry with the Go and
	// process collectors); /metrics serves it.
	Registry *prometheus.Registry
	// Version is phasegate's version, for the User-Agent and reports.
	Version string
	// TreeLimits bound what the App reads of one commit.
	TreeLimits ghclient.TreeLimits
	// Publish is where the gates are recorded: "checks" (the App's check
	// runs, the default), "statuses" or "both" (decide.PublishModes).
	Publish string
	// Transport is the base HTTP transport to GitHub, shared by every
	// installation (default a clone of http.DefaultTransport).
	Transport http.RoundTripper
	// GitHubOptions, if set, adjusts the options of every GitHub client
	// (retry policy, clock) before it is built.
	GitHubOptions func(*ghclient.Options)
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Pages, when set, builds serve's own pages (internal/web) over the
	// server's pages.Source; New mounts them on the mux next to the
	// webhook (every path but /webhook, POST /, /healthz, /readyz and
	// /metrics; GET / redirects to /inbox), with the options of its GitHub
	// clients (for revoking a person's token at sign-out). Nil: no pages.
	Pages func(src *pages.Source, api ghclient.Options) (http.Handler, error)

	// PublicURL, when set, is where serve's own pages are
	// (--public-url): the Details links of phasegate/contracts and
	// phasegate/decisions lead there (decide.Handler.PagesURL).
	PublicURL string
	// SharedResults, when set, keeps the check results the pages show
	// where every replica reads them (Redis: redisx.Blobs); the in-memory
	// store is always in front of it.
	SharedResults pages.SharedResults
	// pagesMay, when set, answers the pages' MayResolve (tests).
	pagesMay pages.MayResolver

	// bodyReadTimeout bounds the reading of one body (default
	// bodyReadTimeout; tests shorten it).
	bodyReadTimeout time.Duration
	// bodyMinRate and bodyGrace: a body must arrive at bodyMinRate bytes
	// a second after its first bodyGrace (defaults bodyMinRate and
	// bodyGrace; tests change them).
	bodyMinRate int64
	bodyGrace   time.Duration
	// statsCacheFor is how long a scrape reuses the durable queue's counts
	// (default statsCacheFor; tests that wait for a count shorten it).
	statsCacheFor time.Duration
}

// String describes the configuration without its secrets (LogValue's).
func (c Config) String() string { return "server.Config" + c.LogValue().String() }

// GoString is String: %#v must not print the secrets either.
func (c Config) GoString() string { return c.String() }

// LogValue logs the configuration without its secrets.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("addr", c.Addr), slog.String("metrics_addr", c.MetricsAddr), slog.Int64("app_id", c.AppID), slog.String("api_url", c.APIURL),
		slog.String("identity", c.Identity), slog.Int("secrets", len(c.Secrets)),
		slog.String("private_key", redacted(c.PrivateKeyPEM)), slog.String("signing_key", redacted(c.SigningKey)),
		slog.Int("queue_size", c.QueueSize), slog.Int("workers", c.Workers), slog.Duration("reconcile_every", c.ReconcileEvery),
	)
}

func redacted(b []byte) string {
	if len(b) == 0 {
		return "none"
	}
	return "set"
}

// withDefaults checks c: the webhook secrets (copied; none, or an empty
// one, is refused), the App's id and private key, and no negative
// duration, size or count. Then it sets every limit, timeout and
// dependency left zero (or, for the redeliver window, the ready retry and
// the body's limits, negative) to its default.
func (c Config) withDefaults() (Config, error) {
	if len(c.Secrets) == 0 {
		return c, errors.New("no webhook secret: refusing to accept unsigned deliveries")
	}
	secrets := make([][]byte, len(c.Secrets))
	for i, s := range c.Secrets {
		if len(s) == 0 {
			return c, fmt.Errorf("webhook secret %d of %d is empty", i+1, len(c.Secrets))
		}
		secrets[i] = append([]byte(nil), s...)
	}
	c.Secrets = secrets
	switch {
	case c.AppID <= 0:
		return c, fmt.Errorf("app id %d is not positive", c.AppID)
	case len(c.PrivateKeyPEM) == 0:
		return c, errors.New("no private key for the github app")
	case c.Publish != "" && !slices.Contains(decide.PublishModes, c.Publish):
		return c, fmt.Errorf("publish %q: want one of %s", c.Publish, strings.Join(decide.PublishModes, ", "))
	case c.ReconcileBudgetShare < 0 || c.ReconcileBudgetShare > 1:
		return c, fmt.Errorf("reconcile budget share %g: want a fraction between 0 and 1", c.ReconcileBudgetShare)
	case min(c.ReconcileEvery, c.ShutdownTimeout, c.JobTimeout, c.InstallReconcileInterval) < 0 ||
		min(c.MaxBody, c.MaxInflightBytes) < 0 || min(c.QueueSize, c.Workers, c.InstallationConcurrency) < 0:
		return c, errors.New("the reconcile period, the shutdown and job timeouts, max body, max in-flight bytes, queue size, workers, the installation reconcile interval and the installation concurrency must not be negative")
	}
	c.Addr = cmp.Or(c.Addr, DefaultAddr)
	c.MaxBody = cmp.Or(c.MaxBody, DefaultMaxBody)
	c.MaxInflightBytes = cmp.Or(c.MaxInflightBytes, max(DefaultMaxInflightBytes, c.MaxBody))
	if c.MaxInflightBytes < c.MaxBody {
		return c, fmt.Errorf("max in-flight bytes %d is below the max body %d: the largest delivery could never be read", c.MaxInflightBytes, c.MaxBody)
	}
	c.InstallReconcileInterval = cmp.Or(c.InstallReconcileInterval, DefaultInstallReconcileInterval)
	c.QueueSize = cmp.Or(c.QueueSize, DefaultQueueSize)
	c.Workers = cmp.Or(c.Workers, DefaultWorkers)
	c.ShutdownTimeout = cmp.Or(c.ShutdownTimeout, DefaultShutdownTimeout)
	c.JobTimeout = cmp.Or(c.JobTimeout, DefaultJobTimeout)
	c.MinRateRemaining = cmp.Or(c.MinRateRemaining, DefaultMinRateRemaining)
	c.ReconcileBudgetShare = cmp.Or(c.ReconcileBudgetShare, DefaultReconcileBudgetShare)
	c.RedeliverWindow = cmp.Or(max(c.RedeliverWindow, 0), DefaultRedeliverWindow)
	c.ReadyRetry = cmp.Or(max(c.ReadyRetry, 0), DefaultReadyRetry)
	c.bodyReadTimeout = cmp.Or(max(c.bodyReadTimeout, 0), bodyReadTimeout)
	c.bodyMinRate = cmp.Or(max(c.bodyMinRate, 0), bodyMinRate)
	c.bodyGrace = cmp.Or(max(c.bodyGrace, 0), bodyGrace)
	c.statsCacheFor = cmp.Or(max(c.statsCacheFor, 0), statsCacheFor)
	c.Logger = cmp.Or(c.Logger, slog.Default())
	c.Publish = cmp.Or(c.Publish, decide.PublishChecks)
	c.InstallationConcurrency = cmp.Or(c.InstallationConcurrency, DefaultInstallationConcurrency)
	c.InstallThrottle = cmp.Or[Seen](c.InstallThrottle, NewMemSeen(c.InstallReconcileInterval, installThrottleMax))
	c.Seen = cmp.Or[Seen](c.Seen, NewMemSeen(DefaultSeenTTL, DefaultSeenMax))
	c.Locker = cmp.Or[decide.Locker](c.Locker, decide.NewMemLocker())
	c.InstallSlots = cmp.Or[Slots](c.InstallSlots, NewMemSlots())
	c.Units = cmp.Or[check.Cache](c.Units, check.NewLRU(DefaultCacheUnits))
	c.Deployments = cmp.Or[DeploymentStore](c.Deployments, NewMemDeployments())
	if c.TreeLimits.Trees == nil {
		c.TreeLimits.Trees = ghclient.NewTreeCache(DefaultCacheTrees, DefaultCacheBlobBytes)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.NewDecider == nil {
		c.NewDecider = DefaultDecider
	}
	return c, nil
}
