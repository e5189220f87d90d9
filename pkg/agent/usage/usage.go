// Package usage averages a node's readings over a sliding window: what
// the node and each of its pods used, for the NodeUsage report. Each
// reading covers the time since the one before it (CPU is a rate over that
// span, memory is read at its end), and the averages weigh readings by
// their spans, so a late or missed reading does not skew them.
package usage

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Amounts are CPU in milli-CPUs and memory in bytes.
type Amounts struct {
	CPU    int64
	Memory int64
}

// Pod is one pod's reading.
type Pod struct {
	UID             types.UID
	Namespace, Name string
	Use             Amounts
}

// Reading is one reading of the node, covering Span up to At.
type Reading struct {
	At   time.Time
	Span time.Duration
	Node Amounts
	// Pods are the pods read at At, those with a CPU rate (read before).
	Pods []Pod
}

// Window keeps the readings of the last Length.
type Window struct {
	Length   time.Duration
	readings []Reading
}

// Add records a reading and forgets those that ended before the window
// that ends with it. A reading with no span, or not after the last one, is
// ignored.
func (w *Window) Add(r Reading) {
	if r.Span <= 0 || (len(w.readings) > 0 && !r.At.After(w.readings[len(w.readings)-1].At)) {
		return
	}
	w.readings = append(w.readings, r)
	from := r.At.Add(-w.Length)
	i := 0
	for i < len(w.readings) && !w.readings[i].At.After(from) {
		i++
	}
	// Keep a reading that still covers part of the window only whole: its
	// span is trimmed in Report.
	w.readings = slices.Delete(w.readings, 0, i)
}

// Covered is how much time the kept readings cover.
func (w *Window) Covered() time.Duration {
	if len(w.readings) == 0 {
		return 0
	}
	last := w.readings[len(w.readings)-1].At
	var d time.Duration
	for _, r := range w.readings {
		d += w.span(r, last)
	}
	return d
}

// span is the part of r's span inside the window ending at last.
func (w *Window) span(r Reading, last time.Time) time.Duration {
	from := last.Add(-w.Length)
	start := r.At.Add(-r.Span)
	if start.Before(from) {
		start = from
	}
	return r.At.Sub(start)
}

// Report is the window's averages.
type Report struct {
	// At is when the window ended (the last reading), Window what the
	// readings cover.
	At     time.Time
	Window time.Duration
	Node   Amounts
	// Pods are the pods of the last reading, each averaged over the
	// readings it is in, sorted by namespace and name.
	Pods []Pod
}

// Report averages the window; ok is false when it holds no reading.
func (w *Window) Report() (Report, bool) {
	if len(w.readings) == 0 {
		return Report{}, false
	}
	last := w.readings[len(w.readings)-1]
	type sum struct {
		cpu, mem float64
		span     time.Duration
	}
	var node sum
	pods := make(map[types.UID]*sum, len(last.Pods))
	for _, p := range last.Pods {
		pods[p.UID] = &sum{}
	}
	for _, r := range w.readings {
		s := w.span(r, last.At)
		f := s.Seconds()
		node.cpu += f * float64(r.Node.CPU)
		node.mem += f * float64(r.Node.Memory)
		node.span += s
		for _, p := range r.Pods {
			if ps := pods[p.UID]; ps != nil {
				ps.cpu += f * float64(p.Use.CPU)
				ps.mem += f * float64(p.Use.Memory)
				ps.span += s
			}
		}
	}
	avg := func(s *sum) Amounts {
		if s.span <= 0 {
			return Amounts{}
		}
		f := s.span.Seconds()
		return Amounts{CPU: int64(s.cpu/f + 0.5), Memory: int64(s.mem/f + 0.5)}
	}
	rep := Report{At: last.At, Window: node.span, Node: avg(&node), Pods: make([]Pod, 0, len(last.Pods))}
	for _, p := range last.Pods {
		rep.Pods = append(rep.Pods, Pod{UID: p.UID, Namespace: p.Namespace, Name: p.Name, Use: avg(pods[p.UID])})
	}
	slices.SortFunc(rep.Pods, func(a, b Pod) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	return rep, true
}
