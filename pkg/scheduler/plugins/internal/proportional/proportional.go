// Package proportional keeps CPU and memory free on nodes in proportion to
// their idle units of scarce resources (GPUs, say), so that tasks that do
// not ask for those resources cannot take the CPU and memory the idle
// units need and strand them. The predicates plugin (predicate
// proportional) and the resource-strategy-fit plugin (sra proportional)
// both filter nodes with it.
package proportional

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
)

// Reserve holds, per scarce resource, what is kept free per idle unit.
type Reserve struct {
	// label names the configuration in reasons: "sra proportional".
	label string
	list  []reservation
}

type reservation struct {
	name      corev1.ResourceName
	milliCPU  int64
	memory    int64
	cpuText   string
	memoryTxt string
}

// New builds a Reserve from the configured reservations; label names the
// configuration in reasons. It is nil without reservations.
func New(label string, resources map[corev1.ResourceName]configv1alpha1.ResourceReservation) *Reserve {
	if len(resources) == 0 {
		return nil
	}
	r := &Reserve{label: label}
	for _, name := range slices.Sorted(maps.Keys(resources)) {
		res := resources[name]
		r.list = append(r.list, reservation{
			name: name, milliCPU: res.CPU.MilliValue(), memory: res.Memory.Value(),
			cpuText: res.CPU.String(), memoryTxt: res.Memory.String(),
		})
	}
	return r
}

// Check returns why placing t on n would keep too little CPU or memory
// for n's idle scarce units, with freed added to n's idle resources (the
// requests of victims); "" when it would not. A task that asks for one of
// the scarce resources passes: it is what they are for.
func (r *Reserve) Check(t *api.TaskInfo, n *api.NodeInfo, freed *api.Resource) string {
	if r == nil {
		return ""
	}
	for _, res := range r.list {
		if t.Resreq.Get(res.name) > 0 {
			return ""
		}
	}
	idle := func(name corev1.ResourceName) int64 {
		v := n.Idle.Get(name)
		if freed != nil {
			v += freed.Get(name)
		}
		return v
	}
	cpuLeft := idle(corev1.ResourceCPU) - t.Resreq.MilliCPU
	memLeft := idle(corev1.ResourceMemory) - t.Resreq.Memory
	for _, res := range r.list {
		// Get counts scalar resources in milli-units.
		units := idle(res.name) / 1000
		if units <= 0 {
			continue
		}
		if cpuLeft < units*res.milliCPU {
			return fmt.Sprintf("would keep too little cpu for their idle %s (%s cpu per unit, %s)", res.name, res.cpuText, r.label)
		}
		if memLeft < units*res.memory {
			return fmt.Sprintf("would keep too little memory for their idle %s (%s per unit, %s)", res.name, res.memoryTxt, r.label)
		}
	}
	return ""
}

// Freed is the sum of the victims' requests, nil without victims.
func Freed(victims []*api.TaskInfo) *api.Resource {
	if len(victims) == 0 {
		return nil
	}
	freed := &api.Resource{}
	for _, v := range victims {
		freed.Add(v.Resreq)
	}
	return freed
}
