package daemon

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/internal/tuner"
)

// metrics are quasimd's Prometheus metrics; docs/operators/metrics.md lists them.
type metrics struct {
	reg      *prometheus.Registry
	lookups  *prometheus.CounterVec
	cycles   *prometheus.CounterVec
	trials   *prometheus.CounterVec
	evalTime *prometheus.HistogramVec
	// errorRevocations counts certificates revoked because a runtime
	// reported an error above their certified bound.
	errorRevocations *prometheus.CounterVec
}

// newMetrics makes the metrics; the job collector reads sched at scrape
// time, so sched may be filled in after.
func newMetrics(sched *scheduler) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		lookups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quasim_config_lookups_total",
			Help: "Config lookups answered, by match: exact (a tuned job), nearest (the nearest tuned problem) or default. exact/(all) is the kernel cache hit rate.",
		}, []string{"kernel", "match"}),
		cycles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quasim_cycles_total",
			Help: "Tuning cycles ended, by how: done, failed, interrupted.",
		}, []string{"kernel", "state"}),
		trials: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quasim_trials_total",
			Help: "Configs measured by tuning cycles, by trial status (ok, invalid, compile, runtime, timeout, wrong_result, constraints).",
		}, []string{"kernel", "status"}),
		evalTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "quasim_evaluation_duration_seconds",
			Help:    "Wall time of one measurement of one config, seconds.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10), // 0.5 ms .. 131 s
		}, []string{"kernel"}),
		errorRevocations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quasim_error_revocations_total",
			Help: "Certificates revoked because a runtime observed an error above their certified bound (POST /v1/observations error).",
		}, []string{"kernel"}),
	}
	m.reg.MustRegister(m.lookups, m.cycles, m.trials, m.evalTime, m.errorRevocations, &jobCollector{sched: sched},
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

// measured is the tuner's Measured hook.
func (m *metrics) measured(job tuner.Job, tr evaluate.Trial, took time.Duration) {
	m.trials.WithLabelValues(job.Key.Kernel, string(tr.Status)).Inc()
	m.evalTime.WithLabelValues(job.Key.Kernel).Observe(took.Seconds())
}

// lookupCounter counts the lookups of kernel answered by match; a cached
// answer keeps it, so a lookup it answers resolves no labels.
func (m *metrics) lookupCounter(kernel string, match api.Match) prometheus.Counter {
	return m.lookups.WithLabelValues(kernel, string(match))
}

func (m *metrics) cycleEnded(kernel, state string) {
	m.cycles.WithLabelValues(kernel, state).Inc()
}

func (m *metrics) errorRevoked(kernel string) {
	m.errorRevocations.WithLabelValues(kernel).Inc()
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// jobCollector reports, at scrape time, how long ago each job was last
// tuned (its served config promoted) and whether it is stale.
type jobCollector struct {
	sched *scheduler
}

var (
	descSinceTuned = prometheus.NewDesc("quasim_job_seconds_since_tuned",
		"Seconds since the job's served config was promoted; absent for a job with nothing served yet.",
		[]string{"kernel", "problem", "device"}, nil)
	descStale = prometheus.NewDesc("quasim_job_stale",
		"1 when runtimes found the job's served config drifting and a re-tune is queued, else 0.",
		[]string{"kernel", "problem", "device"}, nil)
)

func (c *jobCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descSinceTuned
	ch <- descStale
}

func (c *jobCollector) Collect(ch chan<- prometheus.Metric) {
	ks, _ := c.sched.snapshot()
	now := c.sched.clock()
	for _, k := range ks {
		for _, j := range k.jobs {
			e, err := c.sched.index.entry(c.sched.st, j) // the lookups' copy: no read per job and scrape
			if err != nil || !e.HasServed {
				continue
			}
			sv := e.Served
			labels := []string{j.key.Kernel, j.key.Problem, j.key.Device}
			ch <- prometheus.MustNewConstMetric(descSinceTuned, prometheus.GaugeValue, now.Sub(sv.PromotedAt).Seconds(), labels...)
			stale := 0.0
			if sv.Stale != "" {
				stale = 1
			}
			ch <- prometheus.MustNewConstMetric(descStale, prometheus.GaugeValue, stale, labels...)
		}
	}
}
