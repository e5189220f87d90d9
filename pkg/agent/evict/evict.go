// Package evict decides when and which offline pods a node evicts to
// protect its online pods.
//
// A node is under pressure from the moment its CPU or memory usage
// reaches the high watermark until both are below their low watermarks;
// meanwhile it admits no new offline pods (the agent taints it). While
// usage is at or above a high watermark, one offline pod is evicted at a
// time, at most one per minimum interval: the lowest priority first, then
// the most recently started. Online pods are never chosen.
package evict

import (
	"cmp"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/agent/config"
)

// Usage is a node's usage in percent of its allocatable.
type Usage struct {
	CPU, Memory float64
}

// Pressure is a node's pressure state, kept between readings.
type Pressure struct {
	// Active: the node is under pressure (tainted).
	Active bool
}

// Update takes a reading. over says whether a resource is at or above
// its high watermark now, and names the first that is ("cpu", "memory").
func (p *Pressure) Update(u Usage, cfg config.Node) (over bool, resource string) {
	switch {
	case u.CPU >= float64(cfg.CPUHighWatermark):
		over, resource = true, "cpu"
	case u.Memory >= float64(cfg.MemoryHighWatermark):
		over, resource = true, "memory"
	}
	switch {
	case over:
		p.Active = true
	case u.CPU < float64(cfg.CPULowWatermark) && u.Memory < float64(cfg.MemoryLowWatermark):
		p.Active = false
	}
	return over, resource
}

// Candidate is an offline pod that may be evicted.
type Candidate struct {
	Pod      *corev1.Pod
	Priority int32
	// Started is when the pod started (its creation before that).
	Started time.Time
}

// CandidateOf describes a pod.
func CandidateOf(pod *corev1.Pod) Candidate {
	c := Candidate{Pod: pod, Started: pod.CreationTimestamp.Time}
	if pod.Spec.Priority != nil {
		c.Priority = *pod.Spec.Priority
	}
	if pod.Status.StartTime != nil {
		c.Started = pod.Status.StartTime.Time
	}
	return c
}

// Order sorts candidates in eviction order: lowest priority, then most
// recently started, then by namespace and name.
func Order(cands []Candidate) {
	slices.SortFunc(cands, func(a, b Candidate) int {
		return cmp.Or(
			cmp.Compare(a.Priority, b.Priority),
			b.Started.Compare(a.Started),
			cmp.Compare(a.Pod.Namespace, b.Pod.Namespace),
			cmp.Compare(a.Pod.Name, b.Pod.Name),
		)
	})
}

// Limiter spaces evictions on a node.
type Limiter struct {
	last time.Time
}

// Allow reports whether an eviction may happen at now, interval after the
// last one allowed, and records it when so.
func (l *Limiter) Allow(now time.Time, interval time.Duration) bool {
	if !l.last.IsZero() && now.Sub(l.last) < interval {
		return false
	}
	l.last = now
	return true
}
