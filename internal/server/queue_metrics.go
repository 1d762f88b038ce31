package server

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/phasegate/phasegate/internal/redisx"
)

// statsCacheFor is how long a scrape reuses the durable queue's counts: a
// scrape asks Redis at most this often (Config.statsCacheFor, which tests
// shorten).
const statsCacheFor = 2 * time.Second

// tasksCollector reports the durable queue's tasks by state, read from
// Redis on scrape (cached for Config.statsCacheFor); nothing without a queue or
// when Redis does not answer.
type tasksCollector struct {
	s             *Server
	tasks, oldest *prometheus.Desc

	mu    sync.Mutex
	at    time.Time
	stats redisx.QueueStats
	ok    bool
}

func newTasksCollector(s *Server) *tasksCollector {
	return &tasksCollector{
		s: s,
		tasks: prometheus.NewDesc("phasegate_queue_tasks",
			"Durable queue: tasks by state (pending, active, scheduled, retry: waiting for a retry or a deferral, archived: out of retries), over every replica.",
			[]string{"queue", "state"}, nil),
		oldest: prometheus.NewDesc("phasegate_queue_tasks_oldest_pending_seconds",
			"Durable queue: age of the oldest pending task.", []string{"queue"}, nil),
	}
}

func (c *tasksCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.tasks; ch <- c.oldest }

func (c *tasksCollector) Collect(ch chan<- prometheus.Metric) {
	q := c.s.cfg.Tasks
	if q == nil {
		return
	}
	c.mu.Lock()
	if time.Since(c.at) >= c.s.cfg.statsCacheFor {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		st, err := q.Stats(ctx)
		cancel()
		c.at, c.stats, c.ok = time.Now(), st, err == nil
		if err != nil {
			c.s.log.Debug("metrics: the durable queue's counts cannot be read", "error", err)
		}
	}
	st, ok := c.stats, c.ok
	c.mu.Unlock()
	if !ok {
		return
	}
	name := q.Name()
	for _, v := range []struct {
		state string
		n     int
	}{{"pending", st.Pending}, {"active", st.Active}, {"scheduled", st.Scheduled}, {"retry", st.Retry}, {"archived", st.Archived}} {
		ch <- prometheus.MustNewConstMetric(c.tasks, prometheus.GaugeValue, float64(v.n), name, v.state)
	}
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, st.Latency.Seconds(), name)
}
