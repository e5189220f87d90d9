// Package resources is the resource arithmetic of the federation's
// decisions: amounts in milli-units by resource name, as the dispatcher,
// the HyperJob split and the member inventory compare, add and subtract
// them. It imports no client.
package resources

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/quantity"
)

// Amounts are amounts of resources in milli-units, by resource name.
type Amounts map[corev1.ResourceName]int64

// Of converts a resource list.
func Of(rl corev1.ResourceList) Amounts {
	out := Amounts{}
	for name, q := range rl {
		out[name] = q.MilliValue()
	}
	return out
}

// Clone copies r.
func (r Amounts) Clone() Amounts {
	out := make(Amounts, len(r))
	for k, v := range r {
		out[k] = v
	}
	return out
}

// Add adds o to r, in place, and returns r.
func (r Amounts) Add(o Amounts) Amounts {
	for k, v := range o {
		r[k] += v
	}
	return r
}

// Sub subtracts o from r, in place, and returns r.
func (r Amounts) Sub(o Amounts) Amounts {
	for k, v := range o {
		r[k] -= v
	}
	return r
}

// AddTimes adds n times o to r, in place, and returns r.
func (r Amounts) AddTimes(o Amounts, n int64) Amounts {
	for k, v := range o {
		r[k] += v * n
	}
	return r
}

// Times is r times n, a new value.
func (r Amounts) Times(n int64) Amounts {
	out := make(Amounts, len(r))
	for k, v := range r {
		out[k] = v * n
	}
	return out
}

// Fits reports whether every amount of r is at most room's.
func (r Amounts) Fits(room Amounts) bool {
	for k, v := range r {
		if v > 0 && v > room[k] {
			return false
		}
	}
	return true
}

// Over returns what r exceeds limit by, for the resources limit names.
func (r Amounts) Over(limit Amounts) Amounts {
	out := Amounts{}
	for k, l := range limit {
		if v := r[k]; v > l {
			out[k] = v - l
		}
	}
	return out
}

// Short returns what room lacks of r.
func (r Amounts) Short(room Amounts) Amounts {
	out := Amounts{}
	for k, v := range r {
		if v > 0 && v > room[k] {
			out[k] = v - room[k]
		}
	}
	return out
}

// Share is the largest of r's amounts over total's, 0 for resources total
// lacks.
func (r Amounts) Share(total Amounts) float64 {
	s := 0.0
	for k, v := range r {
		if t := total[k]; t > 0 {
			s = max(s, float64(v)/float64(t))
		}
	}
	return s
}

// String writes the non-zero amounts as quantities, sorted by name:
// "cpu 8, memory 16Gi, nvidia.com/gpu 2".
func (r Amounts) String() string {
	names := make([]corev1.ResourceName, 0, len(r))
	for k, v := range r {
		if v != 0 {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	parts := make([]string, 0, len(names))
	for _, k := range names {
		parts = append(parts, fmt.Sprintf("%s %s", k, quantity.Milli(k, r[k])))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}
