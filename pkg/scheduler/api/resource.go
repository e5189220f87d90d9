package api

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Resource is an amount of every resource kind: CPU in millicores, memory in
// bytes, and every other resource (pods, ephemeral-storage, GPUs, ...) in
// milli-units, so that fractional shares stay exact.
//
// The zero value is an empty amount. Methods with a pointer receiver change
// the receiver and return it, for chaining.
type Resource struct {
	MilliCPU int64
	Memory   int64
	// Scalars holds every other resource, in milli-units. Absent means 0.
	Scalars map[corev1.ResourceName]int64
}

// NewResource converts a resource list.
func NewResource(rl corev1.ResourceList) *Resource {
	r := &Resource{}
	for name, q := range rl {
		r.set(name, q)
	}
	return r
}

func (r *Resource) set(name corev1.ResourceName, q resource.Quantity) {
	switch name {
	case corev1.ResourceCPU:
		r.MilliCPU = q.MilliValue()
	case corev1.ResourceMemory:
		r.Memory = q.Value()
	default:
		r.SetScalar(name, q.MilliValue())
	}
}

// Get returns the amount of one resource in the units Resource stores it.
func (r *Resource) Get(name corev1.ResourceName) int64 {
	switch name {
	case corev1.ResourceCPU:
		return r.MilliCPU
	case corev1.ResourceMemory:
		return r.Memory
	default:
		return r.Scalars[name]
	}
}

// SetScalar sets a scalar resource in milli-units.
func (r *Resource) SetScalar(name corev1.ResourceName, milli int64) {
	if r.Scalars == nil {
		r.Scalars = map[corev1.ResourceName]int64{}
	}
	r.Scalars[name] = milli
}

// Clone returns a deep copy.
func (r *Resource) Clone() *Resource {
	c := &Resource{MilliCPU: r.MilliCPU, Memory: r.Memory}
	if len(r.Scalars) > 0 {
		c.Scalars = maps.Clone(r.Scalars)
	}
	return c
}

// Add adds o to r.
func (r *Resource) Add(o *Resource) *Resource {
	r.MilliCPU += o.MilliCPU
	r.Memory += o.Memory
	for name, v := range o.Scalars {
		if r.Scalars == nil {
			r.Scalars = make(map[corev1.ResourceName]int64, len(o.Scalars))
		}
		r.Scalars[name] += v
	}
	return r
}

// Sub subtracts o from r; amounts may go negative (an overcommitted node).
func (r *Resource) Sub(o *Resource) *Resource {
	r.MilliCPU -= o.MilliCPU
	r.Memory -= o.Memory
	for name, v := range o.Scalars {
		if r.Scalars == nil {
			r.Scalars = make(map[corev1.ResourceName]int64, len(o.Scalars))
		}
		r.Scalars[name] -= v
	}
	return r
}

// Multiply scales every amount by f, rounding down.
func (r *Resource) Multiply(f float64) *Resource {
	r.MilliCPU = int64(float64(r.MilliCPU) * f)
	r.Memory = int64(float64(r.Memory) * f)
	for name, v := range r.Scalars {
		r.Scalars[name] = int64(float64(v) * f)
	}
	return r
}

// SetMax raises each amount of r to the amount in o where o is larger.
func (r *Resource) SetMax(o *Resource) *Resource {
	r.MilliCPU = max(r.MilliCPU, o.MilliCPU)
	r.Memory = max(r.Memory, o.Memory)
	for name, v := range o.Scalars {
		if v > r.Scalars[name] {
			r.SetScalar(name, v)
		}
	}
	return r
}

// SetMin lowers each amount of r to the amount in o where o is smaller;
// a resource o lacks counts as 0 in o.
func (r *Resource) SetMin(o *Resource) *Resource {
	r.MilliCPU = min(r.MilliCPU, o.MilliCPU)
	r.Memory = min(r.Memory, o.Memory)
	for name, v := range r.Scalars {
		r.Scalars[name] = min(v, o.Scalars[name])
	}
	return r
}

// IsEmpty reports whether every amount is zero or less.
func (r *Resource) IsEmpty() bool {
	if r.MilliCPU > 0 || r.Memory > 0 {
		return false
	}
	for _, v := range r.Scalars {
		if v > 0 {
			return false
		}
	}
	return true
}

// LessEqual reports whether every amount of r is at most the same amount of
// o. A resource absent from o counts as 0 there.
func (r *Resource) LessEqual(o *Resource) bool {
	if r.MilliCPU > o.MilliCPU || r.Memory > o.Memory {
		return false
	}
	for name, v := range r.Scalars {
		if v > 0 && v > o.Scalars[name] {
			return false
		}
	}
	return true
}

// LessEqualIn is LessEqual restricted to the resources r requests (> 0):
// a resource o does not list is treated as unlimited. Queue limits use it,
// since a capability that names only GPUs does not cap CPU.
func (r *Resource) LessEqualIn(o *Resource, limited func(corev1.ResourceName) bool) bool {
	if r.MilliCPU > 0 && limited(corev1.ResourceCPU) && r.MilliCPU > o.MilliCPU {
		return false
	}
	if r.Memory > 0 && limited(corev1.ResourceMemory) && r.Memory > o.Memory {
		return false
	}
	for name, v := range r.Scalars {
		if v > 0 && limited(name) && v > o.Scalars[name] {
			return false
		}
	}
	return true
}

// Insufficient lists the resources where r exceeds o, sorted.
func (r *Resource) Insufficient(o *Resource) []corev1.ResourceName {
	var out []corev1.ResourceName
	if r.MilliCPU > o.MilliCPU {
		out = append(out, corev1.ResourceCPU)
	}
	if r.Memory > o.Memory {
		out = append(out, corev1.ResourceMemory)
	}
	for name, v := range r.Scalars {
		if v > 0 && v > o.Scalars[name] {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Names lists the resources with a non-zero amount, sorted.
func (r *Resource) Names() []corev1.ResourceName {
	var out []corev1.ResourceName
	if r.MilliCPU != 0 {
		out = append(out, corev1.ResourceCPU)
	}
	if r.Memory != 0 {
		out = append(out, corev1.ResourceMemory)
	}
	for name, v := range r.Scalars {
		if v != 0 {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Equal reports whether both hold the same amounts (absent equals 0).
func (r *Resource) Equal(o *Resource) bool {
	if r.MilliCPU != o.MilliCPU || r.Memory != o.Memory {
		return false
	}
	for name, v := range r.Scalars {
		if v != o.Scalars[name] {
			return false
		}
	}
	for name, v := range o.Scalars {
		if v != r.Scalars[name] {
			return false
		}
	}
	return true
}

// String renders the amounts in Kubernetes quantity notation, sorted by
// name: "cpu 4, memory 8Gi, nvidia.com/gpu 2".
func (r *Resource) String() string {
	var parts []string
	for _, name := range r.Names() {
		parts = append(parts, fmt.Sprintf("%s %s", name, r.Quantity(name).String()))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Quantity returns one amount as a Kubernetes quantity.
func (r *Resource) Quantity(name corev1.ResourceName) *resource.Quantity {
	switch name {
	case corev1.ResourceCPU:
		return resource.NewMilliQuantity(r.MilliCPU, resource.DecimalSI)
	case corev1.ResourceMemory:
		return resource.NewQuantity(r.Memory, resource.BinarySI)
	default:
		v := r.Scalars[name]
		if v%1000 == 0 {
			return resource.NewQuantity(v/1000, resource.DecimalSI)
		}
		return resource.NewMilliQuantity(v, resource.DecimalSI)
	}
}

// ResourceList converts back to a Kubernetes resource list, omitting zeros.
func (r *Resource) ResourceList() corev1.ResourceList {
	rl := corev1.ResourceList{}
	for _, name := range r.Names() {
		rl[name] = *r.Quantity(name)
	}
	return rl
}

// Share is the dominant share of r in total: the largest fraction r holds of
// any resource total offers (pod slots excluded, they are bookkeeping). A
// resource total lacks counts as fully used when r asks for it.
func (r *Resource) Share(total *Resource) float64 {
	share := 0.0
	ratio := func(v, t int64) {
		if v <= 0 {
			return
		}
		s := 1.0
		if t > 0 {
			s = float64(v) / float64(t)
		}
		share = max(share, s)
	}
	ratio(r.MilliCPU, total.MilliCPU)
	ratio(r.Memory, total.Memory)
	for name, v := range r.Scalars {
		if name != corev1.ResourcePods {
			ratio(v, total.Scalars[name])
		}
	}
	return share
}

// ClampNegatives raises every negative amount to zero.
func (r *Resource) ClampNegatives() *Resource {
	r.MilliCPU = max(r.MilliCPU, 0)
	r.Memory = max(r.Memory, 0)
	for name, v := range r.Scalars {
		if v < 0 {
			r.Scalars[name] = 0
		}
	}
	return r
}
