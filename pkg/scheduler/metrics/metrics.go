// Package metrics declares the scheduler's Prometheus metrics. Names follow
// Volcano's where Volcano has the metric, so existing dashboards keep
// working. Labels are bounded: action names, results, queue names.
package metrics

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/caldera-sh/caldera/pkg/scheduler"
	"github.com/caldera-sh/caldera/pkg/scheduler/binder"
)

// Metrics are the scheduler's collectors.
type Metrics struct {
	e2eLatency        prometheus.Histogram
	actionLatency     *prometheus.HistogramVec
	attempts          *prometheus.CounterVec
	unschedulableJobs prometheus.Gauge
	bindLatency       prometheus.Histogram
	cycles            prometheus.Counter
}

// New declares the collectors; Register adds them to a registry.
func New() *Metrics {
	return &Metrics{
		e2eLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "volcano", Name: "e2e_scheduling_latency_milliseconds",
			Help:    "Duration of a scheduling cycle, from snapshot to the last decision, in milliseconds.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 15),
		}),
		actionLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "volcano", Name: "action_scheduling_latency_microseconds",
			Help:    "Duration of each action within a cycle, in microseconds.",
			Buckets: prometheus.ExponentialBuckets(5, 2, 20),
		}, []string{"action"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "volcano", Name: "schedule_attempts_total",
			Help: "Binds attempted, by result: scheduled, error, or aborted (dropped with a failed gang).",
		}, []string{"result"}),
		unschedulableJobs: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "volcano", Name: "unschedule_job_count",
			Help: "Jobs the last cycle could not place or admit.",
		}),
		bindLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "caldera", Subsystem: "scheduler", Name: "bind_duration_seconds",
			Help:    "Duration of one bind request, including volume preparation.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}),
		cycles: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "caldera", Subsystem: "scheduler", Name: "cycles_total",
			Help: "Scheduling cycles run.",
		}),
	}
}

// Register adds every collector to r.
func (m *Metrics) Register(r prometheus.Registerer) error {
	var errs []error
	for _, c := range []prometheus.Collector{m.e2eLatency, m.actionLatency, m.attempts, m.unschedulableJobs, m.bindLatency, m.cycles} {
		errs = append(errs, r.Register(c))
	}
	return errors.Join(errs...)
}

// ObserveCycle records a cycle.
func (m *Metrics) ObserveCycle(s scheduler.CycleStats) {
	m.cycles.Inc()
	m.e2eLatency.Observe(float64(s.Duration.Microseconds()) / 1000)
	for action, d := range s.ActionDurations {
		m.actionLatency.WithLabelValues(action).Observe(float64(d.Microseconds()))
	}
	m.unschedulableJobs.Set(float64(s.Unschedulable))
}

// ObserveBind records a bind.
func (m *Metrics) ObserveBind(r binder.Result) {
	switch {
	case r.Err == nil:
		m.attempts.WithLabelValues("scheduled").Inc()
	case errors.Is(r.Err, binder.ErrGangAborted):
		m.attempts.WithLabelValues("aborted").Inc()
	default:
		m.attempts.WithLabelValues("error").Inc()
	}
	m.bindLatency.Observe(r.Duration.Seconds())
}
