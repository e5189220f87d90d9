// Package oversub works out what a node can lend to offline pods: the CPU
// and memory its online pods requested and do not use. It is published on
// the node as kubernetes.io/batch-cpu (milli-CPUs) and
// kubernetes.io/batch-memory (bytes).
//
// For each resource:
//
//	unused = online requests - online usage
//	room   = allocatable - (node usage - offline usage) - safetyMargin × allocatable
//	batch  = ratio × max(0, min(unused, room))
//
// Usage is smoothed so that it rises at once and falls slowly: a burst of
// online load withdraws the loan in one step, and a lull lends it back
// gradually. Offline usage does not count against the room: offline pods
// run on the loan itself.
package oversub

import (
	"math"

	"github.com/caldera-sh/caldera/pkg/agent/config"
)

// Amounts are CPU in milli-CPUs and memory in bytes.
type Amounts struct {
	CPU    int64
	Memory int64
}

// Sample is one reading of a node.
type Sample struct {
	Allocatable   Amounts
	OnlineRequest Amounts
	OnlineUsage   Amounts
	NodeUsage     Amounts
	OfflineUsage  Amounts
}

// Compute is what the node lends under its configuration; a resource not
// oversubscribed lends nothing.
func Compute(s Sample, cfg config.Node) Amounts {
	if !cfg.OverSubscription {
		return Amounts{}
	}
	one := func(alloc, req, online, node, offline int64) int64 {
		unused := req - online
		room := float64(alloc-(node-offline)) - cfg.SafetyMargin*float64(alloc)
		lend := math.Min(float64(unused), room)
		if lend <= 0 {
			return 0
		}
		return int64(cfg.Ratio * lend)
	}
	var out Amounts
	if cfg.OverCPU {
		out.CPU = one(s.Allocatable.CPU, s.OnlineRequest.CPU, s.OnlineUsage.CPU, s.NodeUsage.CPU, s.OfflineUsage.CPU)
	}
	if cfg.OverMemory {
		out.Memory = one(s.Allocatable.Memory, s.OnlineRequest.Memory, s.OnlineUsage.Memory, s.NodeUsage.Memory, s.OfflineUsage.Memory)
	}
	return out
}

// Worth reports whether next differs enough from what the node shows
// (cur) to update it: a resource appears or goes, or moves by more than a
// tenth.
func Worth(cur, next Amounts) bool {
	differs := func(a, b int64) bool {
		if (a == 0) != (b == 0) {
			return true
		}
		if a == 0 {
			return false
		}
		return math.Abs(float64(b-a)) > 0.1*float64(a)
	}
	return differs(cur.CPU, next.CPU) || differs(cur.Memory, next.Memory)
}

// Smoother follows a series of readings: it takes a higher reading at
// once and moves toward a lower one by Alpha of the gap per reading.
type Smoother struct {
	Alpha float64
	value float64
	seen  bool
}

// Add takes a reading and returns the smoothed value.
func (s *Smoother) Add(x float64) float64 {
	if !s.seen || x >= s.value {
		s.value, s.seen = x, true
		return x
	}
	s.value += s.Alpha * (x - s.value)
	return s.value
}
