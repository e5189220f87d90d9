// Package metrics declares the scheduler's Prometheus metrics. Names follow
// Volcano's where Volcano has the metric, so existing dashboards keep
// working. Labels are bounded: action names, results, queue names.
package metrics

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/caldera-sh/caldera/pkg/scheduler"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/binder"
	"github.com/caldera-sh/caldera/pkg/scheduler/fastlane"
)

// Metrics are the scheduler's collectors.
type Metrics struct {
	e2eLatency        prometheus.Histogram
	actionLatency     *prometheus.HistogramVec
	attempts          *prometheus.CounterVec
	unschedulableJobs prometheus.Gauge
	bindLatency       prometheus.Histogram
	cycles            prometheus.Counter
	pluginLatency     *prometheus.HistogramVec
	unschedulableTask prometheus.Gauge
	queueGauges       map[string]*prometheus.GaugeVec
	queueScalars      map[string]*prometheus.GaugeVec
	queueShare        *prometheus.GaugeVec
	pendingJobs       *prometheus.GaugeVec
	fastRounds        prometheus.Histogram
	fastConflicts     prometheus.Counter
}

// queueFigures are the queue figures exported, as Volcano names them.
var queueFigures = []string{"allocated", "deserved", "capacity"}

// New declares the collectors; Register adds them to a registry.
func New() *Metrics {
	m := &Metrics{
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
		pluginLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "volcano", Name: "plugin_scheduling_latency_microseconds",
			Help:    "Time each plugin takes to open and close a cycle, in microseconds.",
			Buckets: prometheus.ExponentialBuckets(5, 2, 20),
		}, []string{"plugin", "OnSession"}),
		unschedulableTask: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "volcano", Name: "unschedule_task_count",
			Help: "Pending tasks of the jobs the last cycle could not place or admit.",
		}),
		pendingJobs: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "caldera", Subsystem: "scheduler", Name: "pending_jobs",
			Help: "Jobs the last cycle could not place or admit, by queue and by the type of what blocks them first (the reason of their PodGroup's Unschedulable condition).",
		}, []string{"queue", "reason"}),
		queueShare: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "volcano", Name: "queue_share",
			Help: "Each queue's share of what it deserves, as the queue plugin computed it.",
		}, []string{"queue_name"}),
		fastRounds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "caldera", Subsystem: "scheduler", Name: "fast_lane_round_duration_seconds",
			Help:    "Duration of a fast-lane worker's placement round, from its snapshot to its last bind queued.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}),
		fastConflicts: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "caldera", Subsystem: "scheduler", Name: "fast_lane_conflicts_total",
			Help: "Fast-lane placements refused because another decision (a worker, or the scheduling cycle) took the node's room since the worker's snapshot; each is tried again at once.",
		}),
		queueGauges:  map[string]*prometheus.GaugeVec{},
		queueScalars: map[string]*prometheus.GaugeVec{},
	}
	for _, fig := range queueFigures {
		for _, unit := range []struct{ name, help string }{{"milli_cpu", "millicores"}, {"memory_bytes", "bytes of memory"}} {
			m.queueGauges[fig+"_"+unit.name] = prometheus.NewGaugeVec(prometheus.GaugeOpts{
				Namespace: "volcano", Name: "queue_" + fig + "_" + unit.name,
				Help: fmt.Sprintf("Each queue's %s %s, as the queue plugin computed it.", fig, unit.help),
			}, []string{"queue_name"})
		}
		m.queueScalars[fig] = prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "volcano", Name: "queue_" + fig + "_scalar_resources",
			Help: fmt.Sprintf("Each queue's %s amount of resources other than cpu and memory (milli-units).", fig),
		}, []string{"queue_name", "resource"})
	}
	return m
}

// Register adds every collector to r.
func (m *Metrics) Register(r prometheus.Registerer) error {
	var errs []error
	collectors := []prometheus.Collector{m.e2eLatency, m.actionLatency, m.attempts, m.unschedulableJobs, m.bindLatency, m.cycles,
		m.pluginLatency, m.unschedulableTask, m.queueShare, m.pendingJobs, m.fastRounds, m.fastConflicts}
	for _, g := range m.queueGauges {
		collectors = append(collectors, g)
	}
	for _, g := range m.queueScalars {
		collectors = append(collectors, g)
	}
	for _, c := range collectors {
		errs = append(errs, r.Register(c))
	}
	return errors.Join(errs...)
}

// ObserveFastLane records a fast-lane round.
func (m *Metrics) ObserveFastLane(r fastlane.Round) {
	m.fastRounds.Observe(r.Duration.Seconds())
	m.fastConflicts.Add(float64(r.Conflicts))
}

// ObserveCycle records a cycle.
func (m *Metrics) ObserveCycle(s scheduler.CycleStats) {
	m.cycles.Inc()
	m.e2eLatency.Observe(float64(s.Duration.Microseconds()) / 1000)
	for action, d := range s.ActionDurations {
		m.actionLatency.WithLabelValues(action).Observe(float64(d.Microseconds()))
	}
	m.unschedulableJobs.Set(float64(s.Unschedulable))
	m.unschedulableTask.Set(float64(s.UnschedulableTasks))
	for plugin, d := range s.PluginDurations {
		m.pluginLatency.WithLabelValues(plugin, "OnSession").Observe(float64(d.Microseconds()))
	}
	// Queues come and go: the series are rebuilt from this cycle's figures.
	m.pendingJobs.Reset()
	for k, n := range s.Pending {
		m.pendingJobs.WithLabelValues(k.Queue, k.Reason).Set(float64(n))
	}
	m.queueShare.Reset()
	for _, g := range m.queueGauges {
		g.Reset()
	}
	for _, g := range m.queueScalars {
		g.Reset()
	}
	for id, q := range s.Queues {
		name := string(id)
		m.queueShare.WithLabelValues(name).Set(q.Share)
		for i, r := range []*api.Resource{q.Allocated, q.Deserved, q.Capability} {
			if r == nil {
				continue
			}
			fig := queueFigures[i]
			m.queueGauges[fig+"_milli_cpu"].WithLabelValues(name).Set(float64(r.MilliCPU))
			m.queueGauges[fig+"_memory_bytes"].WithLabelValues(name).Set(float64(r.Memory))
			r.EachScalar(func(res corev1.ResourceName, milli int64) {
				m.queueScalars[fig].WithLabelValues(name, string(res)).Set(float64(milli))
			})
		}
	}
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
