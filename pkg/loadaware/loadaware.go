// Package loadaware holds what the scheduler, the descheduler and the
// simulator know of a node's real use, and the arithmetic they share on
// it: whether a measurement is fresh, and a node's usage as a share of its
// allocatable.
package loadaware

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metricsv1alpha1 "github.com/caldera-sh/caldera/apis/metrics/v1alpha1"
)

// Usage is a node's measured use: its averages over Window, ending At.
// Never changed once made: readers share it.
type Usage struct {
	At     time.Time
	Window time.Duration
	// CPU in milli-CPUs, Memory in bytes.
	CPU, Memory int64
}

// FromNodeUsage reads a NodeUsage; an object without a timestamp, or with
// a negative window or usage, is refused.
func FromNodeUsage(nu *metricsv1alpha1.NodeUsage) (*Usage, error) {
	if nu.Timestamp.IsZero() {
		return nil, fmt.Errorf("NodeUsage %s has no timestamp", nu.Name)
	}
	if nu.Window.Duration < 0 {
		return nil, fmt.Errorf("NodeUsage %s: window %s is negative", nu.Name, nu.Window.Duration)
	}
	cpu, mem := nu.Usage[corev1.ResourceCPU], nu.Usage[corev1.ResourceMemory]
	u := &Usage{At: nu.Timestamp.Time, Window: nu.Window.Duration, CPU: cpu.MilliValue(), Memory: mem.Value()}
	if u.CPU < 0 || u.Memory < 0 {
		return nil, fmt.Errorf("NodeUsage %s: usage %v is negative", nu.Name, nu.Usage)
	}
	return u, nil
}

// Fresh reports whether u is known and at most staleAfter old at now.
func (u *Usage) Fresh(now time.Time, staleAfter time.Duration) bool {
	return u != nil && now.Sub(u.At) <= staleAfter
}

// Since is when the window began: a pod that started later is not, or
// only in part, in the averages.
func (u *Usage) Since() time.Time { return u.At.Add(-u.Window) }

// Holds reports whether the averages hold a pod that started at start
// (nil: not started): only a pod that ran since the window began is in
// them whole.
func (u *Usage) Holds(start *metav1.Time) bool {
	return start != nil && !start.After(u.Since())
}

// Percent is used as a percentage of total; 0 when total is not positive.
func Percent(used, total float64) float64 {
	if total <= 0 {
		return 0
	}
	return 100 * used / total
}
