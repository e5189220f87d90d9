package controller

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/caldera-sh/caldera/pkg/federation/dispatch"
)

// Metrics are the dispatcher's collectors. Labels are bounded: queue names
// and the dispatcher's hold rules.
type Metrics struct {
	decisions *prometheus.CounterVec
	duration  prometheus.Histogram
	held      *prometheus.GaugeVec
	released  *prometheus.CounterVec
	clusters  *prometheus.GaugeVec
}

// NewMetrics declares the collectors and registers them with r.
func NewMetrics(r prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "caldera", Subsystem: "global", Name: "decisions_total",
			Help: "Dispatch decisions made, by result: ok, or error (a release, mark or resize that failed; the next change decides again).",
		}, []string{"result"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "caldera", Subsystem: "global", Name: "decision_duration_seconds",
			Help:    "Duration of one decision: the snapshot, the decision and its releases.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}),
		held: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "caldera", Subsystem: "global", Name: "held_bindings",
			Help: "Bindings of queued work held after the last decision, by queue and by the rule that holds them (QueueCapability, NoClusterFits, GangShortfall, DataNotResolved, ...).",
		}, []string{"queue", "reason"}),
		released: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "caldera", Subsystem: "global", Name: "released_bindings_total",
			Help: "Bindings released (placed in a member), by queue.",
		}, []string{"queue"}),
		clusters: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "caldera", Subsystem: "global", Name: "member_clusters",
			Help: "Member clusters in the last decision, by readiness: ready or not_ready.",
		}, []string{"state"}),
	}
	// caldera-global may run more than once in a process (embedded, or in
	// tests): a second run shares the first one's collectors.
	register := func(c prometheus.Collector) (prometheus.Collector, error) {
		err := r.Register(c)
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			return are.ExistingCollector, nil
		}
		return c, err
	}
	var err error
	var c prometheus.Collector
	if c, err = register(m.decisions); err == nil {
		m.decisions = c.(*prometheus.CounterVec)
	}
	if c, err = register(m.duration); err == nil {
		m.duration = c.(prometheus.Histogram)
	}
	if c, err = register(m.held); err == nil {
		m.held = c.(*prometheus.GaugeVec)
	}
	if c, err = register(m.released); err == nil {
		m.released = c.(*prometheus.CounterVec)
	}
	if c, err = register(m.clusters); err == nil {
		m.clusters = c.(*prometheus.GaugeVec)
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// observe records a decision.
func (m *Metrics) observe(s *dispatch.Snapshot, dec *dispatch.Decision, took time.Duration, err error) {
	if m == nil {
		return
	}
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.decisions.WithLabelValues(result).Inc()
	m.duration.Observe(took.Seconds())
	if s == nil || dec == nil {
		return
	}
	queueOf := make(map[string]string, len(s.Bindings))
	for _, b := range s.Bindings {
		queueOf[b.ID] = b.Queue
	}
	m.held.Reset()
	counts := map[[2]string]int{}
	for id, h := range dec.Holds {
		counts[[2]string{queueOf[id], string(h.Rule)}]++
	}
	for k, n := range counts {
		m.held.WithLabelValues(k[0], k[1]).Set(float64(n))
	}
	// The decision's releases are those made, also when others failed.
	for _, r := range dec.Releases {
		m.released.WithLabelValues(queueOf[r.ID]).Inc()
	}
	ready := 0
	for _, c := range s.Clusters {
		if c.Ready {
			ready++
		}
	}
	m.clusters.WithLabelValues("ready").Set(float64(ready))
	m.clusters.WithLabelValues("not_ready").Set(float64(len(s.Clusters) - ready))
}
