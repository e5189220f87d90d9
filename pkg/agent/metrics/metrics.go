// Package metrics declares caldera-agent's metrics.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the agent's metrics on its node.
type Metrics struct {
	// NodeUsage is the node's smoothed usage: resource "cpu" in cores,
	// "memory" in bytes.
	NodeUsage *prometheus.GaugeVec
	// Oversubscribed is what the node lends to offline pods, as published:
	// resource "cpu" in cores, "memory" in bytes.
	Oversubscribed *prometheus.GaugeVec
	// Evictions counts offline pods evicted, by the resource under
	// pressure.
	Evictions *prometheus.CounterVec
	// CgroupWriteErrors counts failed writes of cgroup files, by file.
	CgroupWriteErrors *prometheus.CounterVec
	// ConfigErrors counts colocation configurations refused.
	ConfigErrors prometheus.Counter
	// UsageReportErrors counts failed writes of the node's NodeUsage.
	UsageReportErrors prometheus.Counter
}

// New declares the metrics and registers them on reg.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		NodeUsage: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "caldera_agent", Name: "node_usage",
			Help: "Smoothed usage of the node: cpu in cores, memory in bytes.",
		}, []string{"resource"}),
		Oversubscribed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "caldera_agent", Name: "oversubscribed",
			Help: "Resources the node lends to offline pods (kubernetes.io/batch-*): cpu in cores, memory in bytes.",
		}, []string{"resource"}),
		Evictions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "caldera_agent", Name: "evictions_total",
			Help: "Offline pods evicted, by the resource under pressure.",
		}, []string{"resource"}),
		CgroupWriteErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "caldera_agent", Name: "cgroup_write_errors_total",
			Help: "Failed writes of cgroup interface files, by file.",
		}, []string{"file"}),
		ConfigErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "caldera_agent", Name: "config_errors_total",
			Help: "Colocation configurations refused as invalid.",
		}),
		UsageReportErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "caldera_agent", Name: "usage_report_errors_total",
			Help: "Failed writes of the node's NodeUsage (metrics.caldera.sh).",
		}),
	}
	reg.MustRegister(m.NodeUsage, m.Oversubscribed, m.Evictions, m.CgroupWriteErrors, m.ConfigErrors, m.UsageReportErrors)
	return m
}
