package server

import (
	"cmp"
	"fmt"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/phasegate/phasegate/internal/ghclient"
)

// metrics are the server's Prometheus metrics (all named phasegate_…).
type metrics struct {
	deliveries     *prometheus.CounterVec
	ack            prometheus.Histogram
	handler        *prometheus.HistogramVec
	queueWait      prometheus.Histogram
	apiCalls       *prometheus.CounterVec
	tamper         *prometheus.CounterVec
	deployments    *prometheus.CounterVec
	statusResets   prometheus.Counter
	panics         prometheus.Counter
	dropped        prometheus.Counter
	reconcileRuns  *prometheus.CounterVec
	reconcileSkips prometheus.Counter
	passSkips      *prometheus.CounterVec
	cutShort       *prometheus.CounterVec
	threads        *prometheus.CounterVec
	redeliveries   *prometheus.CounterVec
	ready          prometheus.Gauge
	// The durable queue's (phasegate_queue_job_…, phasegate_queue_enqueued_total);
	// they stay empty without Redis.
	jobEnqueued, jobFailures, jobRetries *prometheus.CounterVec
	jobWait, jobRun                      *prometheus.HistogramVec
}

// newMetrics creates the server's metrics and registers them in reg, with
// the gauges read from s at scrape time.
func newMetrics(reg *prometheus.Registry, s *Server) (*metrics, error) {
	m := defineMetrics()
	cs := []prometheus.Collector{
		m.deliveries, m.ack, m.handler, m.queueWait, m.apiCalls, m.tamper, m.deployments, m.statusResets, m.panics, m.dropped,
		m.reconcileRuns, m.reconcileSkips, m.passSkips, m.cutShort, m.threads, m.redeliveries, m.ready,
		m.jobEnqueued, m.jobWait, m.jobRun, m.jobFailures, m.jobRetries, newTasksCollector(s),
	}
	for _, c := range append(cs, scrapeGauges(s)...) {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering metrics: %w", err)
		}
	}
	return m, nil
}

// defineMetrics is the table of the metrics the server updates, none
// registered yet.
func defineMetrics() *metrics {
	return &metrics{
		jobEnqueued: counterVec("phasegate_queue_enqueued_total", "Jobs offered to the durable queue, by kind and result (enqueued, coalesced: a job of the same kind, repository and commit was waiting or running; error).", "kind", "result"),
		jobWait: prometheus.NewHistogramVec(histogram("phasegate_queue_job_wait_seconds",
			"Durable jobs: time from the delivery's enqueue to the start of the attempt that ran (retries and deferrals included), by kind.", 0.005, 18), []string{"kind"}),
		jobRun: prometheus.NewHistogramVec(histogram("phasegate_queue_job_run_seconds",
			"Durable jobs: time from the start of an attempt to its end, by kind and outcome (ok, error, rate_limited, panic).", 0.005, 16), []string{"kind", "outcome"}),
		jobFailures: counterVec("phasegate_queue_job_failures_total", "Durable job attempts that failed, by kind and final (true: out of retries or not retryable, the job is archived).", "kind", "final"),
		jobRetries:  counterVec("phasegate_queue_job_retries_total", "Durable jobs scheduled to run again, by kind and reason (error: backoff, counted as a failure; rate_limited, installation_busy, store_unavailable: deferred, not a failure).", "kind", "reason"),
		deliveries:  counterVec("phasegate_webhook_deliveries_total", "Webhook deliveries by event and result (accepted, coalesced, ignored, duplicate, throttled, unauthorized, bad_request, too_large, method_not_allowed, queue_full, over_budget, unavailable).", "event", "result"),
		ack:         prometheus.NewHistogram(histogram("phasegate_webhook_ack_seconds", "Time from receiving a delivery's headers to answering it.", 0.0001, 14)),
		handler: prometheus.NewHistogramVec(histogram("phasegate_handler_duration_seconds",
			"Time spent handling a queued delivery, by event and outcome (ok, error, panic).", 0.005, 14), []string{"event", "outcome"}),
		queueWait:      prometheus.NewHistogram(histogram("phasegate_queue_wait_seconds", "Time a delivery waited in the queue for a worker.", 0.001, 16)),
		apiCalls:       counterVec("phasegate_github_api_calls_total", "GitHub API requests (every attempt) by client operation and HTTP status (\"error\" when no answer arrived).", "op", "status"),
		tamper:         counterVec("phasegate_tamper_reports_total", "phasegate comments edited or deleted by someone, by action.", "action"),
		deployments:    counterVec("phasegate_deployments_answered_total", "Deployment protection rule requests answered, by state.", "state"),
		statusResets:   counter("phasegate_status_overwrites_total", "phasegate/decisions statuses set by someone other than phasegate (and reset)."),
		panics:         counter("phasegate_handler_panics_total", "Panics recovered while handling a delivery."),
		dropped:        counter("phasegate_queue_dropped_total", "Queued deliveries dropped at shutdown (the reconcile loop recovers them)."),
		reconcileRuns:  counterVec("phasegate_reconcile_runs_total", "Reconcile passes by result (ok, error).", "result"),
		passSkips:      counterVec("phasegate_reconcile_skipped_passes_total", "Reconcile passes not run, by reason (other_replica: another replica ran this period's pass; store_unavailable: Redis could not be asked).", "reason"),
		cutShort:       counterVec("phasegate_reconcile_cut_short_total", "Repository passes of the reconcile loop stopped before every changed thread was read, by reason (budget: the installation's --reconcile-budget-share of its hourly rate limit is spent; rate_limit: little primary rate limit left; secondary_limit: a secondary rate limit holds requests back, or could not be waited out). The next pass takes what was skipped first.", "reason"),
		threads:        counterVec("phasegate_reconcile_threads_total", "Threads the reconcile loop looked at, by result (unchanged: its listings showed the thread as last folded, not read; reread: read and folded again; deferred: left for the next pass by a pass cut short).", "result"),
		reconcileSkips: counter("phasegate_reconcile_skipped_installations_total", "Installations a reconcile pass skipped because little of their rate limit was left."),
		redeliveries:   counterVec("phasegate_redeliveries_total", "Failed webhook deliveries asked to be redelivered, by result (ok, error).", "result"),
		ready: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "phasegate_ready",
			Help: "1 once the App's key works and GitHub answered, 0 before and while shutting down.",
		}),
	}
}

func counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
}

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

// histogram is a histogram's options: n buckets doubling from start.
func histogram(name, help string, start float64, n int) prometheus.HistogramOpts {
	return prometheus.HistogramOpts{Name: name, Help: help, Buckets: prometheus.ExponentialBuckets(start, 2, n)}
}

// scrapeGauges are the metrics read from s when scraped: the queue, the
// in-flight body budget and the GitHub rate limits left.
func scrapeGauges(s *Server) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "phasegate_queue_depth", Help: "Deliveries queued and not yet taken by a worker."}, func() float64 {
			n, _, _ := s.queue.stats(s.cfg.Now())
			return float64(n)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "phasegate_queue_inflight", Help: "Deliveries being handled."}, func() float64 {
			_, n, _ := s.queue.stats(s.cfg.Now())
			return float64(n)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "phasegate_queue_oldest_age_seconds", Help: "Age of the oldest queued delivery (0 when none)."}, func() float64 {
			_, _, age := s.queue.stats(s.cfg.Now())
			return age.Seconds()
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "phasegate_webhook_inflight_body_bytes", Help: "Bytes of webhook bodies reserved in the in-flight budget (being read or checked)."}, func() float64 {
			return float64(s.budget.inUse())
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "phasegate_webhook_inflight_body_bytes_limit", Help: "The in-flight body budget: beyond it a delivery is answered 503 unread."}, func() float64 {
			return float64(s.cfg.MaxInflightBytes)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "phasegate_queue_capacity", Help: "Size of the queue."}, func() float64 { return float64(s.cfg.QueueSize) }),
		&rateCollector{s: s, desc: prometheus.NewDesc("phasegate_github_rate_limit_remaining",
			"Primary rate-limit requests left, per installation (\"app\" for the App's own JWT client), as GitHub last reported.",
			[]string{"installation"}, nil)},
	}
}

// newRegistry is the default registry: the server's metrics plus the Go
// runtime and process collectors (goroutines, memory, file descriptors).
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// onCall counts a GitHub API attempt (ghclient's OnCall hook).
func (m *metrics) onCall(c ghclient.Call) {
	op := cmp.Or(c.Op, "other")
	status := "error"
	if c.Status > 0 {
		status = strconv.Itoa(c.Status)
	}
	m.apiCalls.WithLabelValues(op, status).Inc()
}

// rateCollector reports each cached client's last known rate limit.
type rateCollector struct {
	s    *Server
	desc *prometheus.Desc
}

func (c *rateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *rateCollector) Collect(ch chan<- prometheus.Metric) {
	emit := func(label string, gh *ghclient.Client) {
		if r, ok := gh.RateLimit(); ok {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(r.Remaining), label)
		}
	}
	if app := c.s.appGH; app != nil {
		if _, ok := app.RateLimit(); !ok {
			app = c.s.probeGH // the App's rate limit as the readiness probe last saw it
		}
		emit("app", app)
	}
	for id, gh := range c.s.cachedClients() {
		emit(strconv.FormatInt(id, 10), gh)
	}
}
