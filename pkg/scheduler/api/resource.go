package api

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/caldera-sh/caldera/pkg/quantity"
)

// Resource is an amount of every resource kind: CPU in millicores, memory in
// bytes, and every other resource (pods, ephemeral-storage, GPUs, ...) in
// milli-units, so that fractional shares stay exact.
//
// CPU, memory and pod slots, which every pod has, are fields; the others sit
// in a short slice sorted by name, so that comparisons on the scheduler's hot
// paths walk a few entries instead of iterating a map.
//
// The zero value is an empty amount. Methods with a pointer receiver change
// the receiver and return it, for chaining.
type Resource struct {
	MilliCPU int64
	Memory   int64
	// MilliPods counts pod slots in milli-units (1000 per pod).
	MilliPods int64
	scalars   []scalar
}

type scalar struct {
	name  corev1.ResourceName
	milli int64
}

// NewResource converts a resource list.
func NewResource(rl corev1.ResourceList) *Resource {
	r := &Resource{}
	for name, q := range rl {
		switch name {
		case corev1.ResourceCPU:
			r.MilliCPU = q.MilliValue()
		case corev1.ResourceMemory:
			r.Memory = q.Value()
		default:
			r.SetScalar(name, q.MilliValue())
		}
	}
	return r
}

// Get returns the amount of one resource in the units Resource stores it.
func (r *Resource) Get(name corev1.ResourceName) int64 {
	switch name {
	case corev1.ResourceCPU:
		return r.MilliCPU
	case corev1.ResourceMemory:
		return r.Memory
	case corev1.ResourcePods:
		return r.MilliPods
	}
	if i, ok := r.find(name); ok {
		return r.scalars[i].milli
	}
	return 0
}

func (r *Resource) find(name corev1.ResourceName) (int, bool) {
	for i := range r.scalars {
		switch {
		case r.scalars[i].name == name:
			return i, true
		case r.scalars[i].name > name:
			return i, false
		}
	}
	return len(r.scalars), false
}

// SetScalar sets a resource other than CPU and memory, in milli-units.
func (r *Resource) SetScalar(name corev1.ResourceName, milli int64) {
	switch name {
	case corev1.ResourceCPU:
		r.MilliCPU = milli
		return
	case corev1.ResourceMemory:
		r.Memory = milli / 1000
		return
	case corev1.ResourcePods:
		r.MilliPods = milli
		return
	}
	i, ok := r.find(name)
	if ok {
		r.scalars[i].milli = milli
		return
	}
	r.scalars = slices.Insert(r.scalars, i, scalar{name: name, milli: milli})
}

// Set sets one resource in the units Resource stores it.
func (r *Resource) Set(name corev1.ResourceName, v int64) {
	switch name {
	case corev1.ResourceCPU:
		r.MilliCPU = v
	case corev1.ResourceMemory:
		r.Memory = v
	default:
		r.SetScalar(name, v)
	}
}

// EachScalar calls f for every resource other than CPU, memory and pods,
// in name order.
func (r *Resource) EachScalar(f func(name corev1.ResourceName, milli int64)) {
	for _, s := range r.scalars {
		f(s.name, s.milli)
	}
}

// Clone returns a deep copy.
func (r *Resource) Clone() *Resource {
	c := *r
	c.scalars = slices.Clone(r.scalars)
	return &c
}

// combine applies f to each amount of r and the same amount of o.
func (r *Resource) combine(o *Resource, f func(a, b int64) int64) *Resource {
	r.MilliCPU = f(r.MilliCPU, o.MilliCPU)
	r.Memory = f(r.Memory, o.Memory)
	r.MilliPods = f(r.MilliPods, o.MilliPods)
	for _, s := range o.scalars {
		i, ok := r.find(s.name)
		if !ok {
			r.scalars = slices.Insert(r.scalars, i, scalar{name: s.name})
		}
		r.scalars[i].milli = f(r.scalars[i].milli, s.milli)
	}
	return r
}

// Add adds o to r.
func (r *Resource) Add(o *Resource) *Resource {
	return r.combine(o, func(a, b int64) int64 { return a + b })
}

// Sub subtracts o from r; amounts may go negative (an overcommitted node).
func (r *Resource) Sub(o *Resource) *Resource {
	return r.combine(o, func(a, b int64) int64 { return a - b })
}

// SetMax raises each amount of r to the amount in o where o is larger.
func (r *Resource) SetMax(o *Resource) *Resource {
	return r.combine(o, func(a, b int64) int64 { return max(a, b) })
}

// SetMin lowers each amount of r to the amount in o where o is smaller;
// a resource o lacks counts as 0 in o.
func (r *Resource) SetMin(o *Resource) *Resource {
	r.MilliCPU = min(r.MilliCPU, o.MilliCPU)
	r.Memory = min(r.Memory, o.Memory)
	r.MilliPods = min(r.MilliPods, o.MilliPods)
	for i := range r.scalars {
		r.scalars[i].milli = min(r.scalars[i].milli, o.Get(r.scalars[i].name))
	}
	return r
}

// Multiply scales every amount by f, rounding down.
func (r *Resource) Multiply(f float64) *Resource {
	r.MilliCPU = int64(float64(r.MilliCPU) * f)
	r.Memory = int64(float64(r.Memory) * f)
	r.MilliPods = int64(float64(r.MilliPods) * f)
	for i := range r.scalars {
		r.scalars[i].milli = int64(float64(r.scalars[i].milli) * f)
	}
	return r
}

// ClampNegatives raises every negative amount to zero.
func (r *Resource) ClampNegatives() *Resource {
	r.MilliCPU = max(r.MilliCPU, 0)
	r.Memory = max(r.Memory, 0)
	r.MilliPods = max(r.MilliPods, 0)
	for i := range r.scalars {
		r.scalars[i].milli = max(r.scalars[i].milli, 0)
	}
	return r
}

// IsEmpty reports whether every amount is zero or less.
func (r *Resource) IsEmpty() bool {
	if r.MilliCPU > 0 || r.Memory > 0 || r.MilliPods > 0 {
		return false
	}
	for _, s := range r.scalars {
		if s.milli > 0 {
			return false
		}
	}
	return true
}

// LessEqual reports whether every amount of r is at most the same amount of
// o. A resource absent from o counts as 0 there.
func (r *Resource) LessEqual(o *Resource) bool {
	if r.MilliCPU > o.MilliCPU || r.Memory > o.Memory || r.MilliPods > o.MilliPods {
		return false
	}
	return r.scalarsFitIn(o)
}

// scalarsFitIn reports whether each resource other than CPU, memory and
// pods that r asks for (> 0) is at most o's, walking both sorted lists
// once.
func (r *Resource) scalarsFitIn(o *Resource) bool {
	j := 0
	for _, s := range r.scalars {
		if s.milli <= 0 {
			continue
		}
		for j < len(o.scalars) && o.scalars[j].name < s.name {
			j++
		}
		if j == len(o.scalars) || o.scalars[j].name != s.name || s.milli > o.scalars[j].milli {
			return false
		}
	}
	return true
}

// LessEqualWith reports whether r fits in o plus extra minus less, in every
// resource r asks for: the check of a task against a node's future idle
// resources, without building the sum.
func (r *Resource) LessEqualWith(o, extra, less *Resource) bool {
	fits := func(v, a, b, c int64) bool { return v <= 0 || v <= a+b-c }
	if !fits(r.MilliCPU, o.MilliCPU, extra.MilliCPU, less.MilliCPU) ||
		!fits(r.Memory, o.Memory, extra.Memory, less.Memory) ||
		!fits(r.MilliPods, o.MilliPods, extra.MilliPods, less.MilliPods) {
		return false
	}
	for _, s := range r.scalars {
		if !fits(s.milli, o.Get(s.name), extra.Get(s.name), less.Get(s.name)) {
			return false
		}
	}
	return true
}

// FitsIn reports whether every amount r asks for (> 0) is at most the same
// amount of o; what r does not ask for is not compared. It is
// LessEqualWith(o, 0, 0), walking both sorted lists once.
func (r *Resource) FitsIn(o *Resource) bool {
	if (r.MilliCPU > 0 && r.MilliCPU > o.MilliCPU) || (r.Memory > 0 && r.Memory > o.Memory) || (r.MilliPods > 0 && r.MilliPods > o.MilliPods) {
		return false
	}
	return r.scalarsFitIn(o)
}

// LessEqualIn is LessEqual restricted to the resources r requests (> 0) and
// limited reports as limited: other resources are treated as unlimited.
// Queue limits use it, since a capability that names only GPUs does not cap
// CPU.
func (r *Resource) LessEqualIn(o *Resource, limited func(corev1.ResourceName) bool) bool {
	if r.MilliCPU > 0 && limited(corev1.ResourceCPU) && r.MilliCPU > o.MilliCPU {
		return false
	}
	if r.Memory > 0 && limited(corev1.ResourceMemory) && r.Memory > o.Memory {
		return false
	}
	if r.MilliPods > 0 && limited(corev1.ResourcePods) && r.MilliPods > o.MilliPods {
		return false
	}
	for _, s := range r.scalars {
		if s.milli > 0 && limited(s.name) && s.milli > o.Get(s.name) {
			return false
		}
	}
	return true
}

// Insufficient lists the resources where r exceeds o, sorted.
func (r *Resource) Insufficient(o *Resource) []corev1.ResourceName {
	return r.AppendInsufficient(nil, o)
}

// AppendInsufficient appends Insufficient's list to out.
func (r *Resource) AppendInsufficient(out []corev1.ResourceName, o *Resource) []corev1.ResourceName {
	start := len(out)
	if r.MilliCPU > 0 && r.MilliCPU > o.MilliCPU {
		out = append(out, corev1.ResourceCPU)
	}
	if r.Memory > 0 && r.Memory > o.Memory {
		out = append(out, corev1.ResourceMemory)
	}
	if r.MilliPods > 0 && r.MilliPods > o.MilliPods {
		out = append(out, corev1.ResourcePods)
	}
	for _, s := range r.scalars {
		if s.milli > 0 && s.milli > o.Get(s.name) {
			out = append(out, s.name)
		}
	}
	slices.Sort(out[start:])
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
	if r.MilliPods != 0 {
		out = append(out, corev1.ResourcePods)
	}
	for _, s := range r.scalars {
		if s.milli != 0 {
			out = append(out, s.name)
		}
	}
	slices.Sort(out)
	return out
}

// Equal reports whether both hold the same amounts (absent equals 0).
func (r *Resource) Equal(o *Resource) bool {
	if r.MilliCPU != o.MilliCPU || r.Memory != o.Memory || r.MilliPods != o.MilliPods {
		return false
	}
	for _, s := range r.scalars {
		if s.milli != o.Get(s.name) {
			return false
		}
	}
	for _, s := range o.scalars {
		if s.milli != r.Get(s.name) {
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

// Quantity returns one amount as a Kubernetes quantity; amounts of bytes
// (memory, ephemeral-storage, ...) in binary SI where exact.
func (r *Resource) Quantity(name corev1.ResourceName) *resource.Quantity {
	switch name {
	case corev1.ResourceCPU:
		return resource.NewMilliQuantity(r.MilliCPU, resource.DecimalSI)
	case corev1.ResourceMemory:
		return quantity.Bytes(r.Memory)
	default:
		return quantity.Milli(name, r.Get(name))
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
	for _, s := range r.scalars {
		ratio(s.milli, total.Get(s.name))
	}
	return share
}
