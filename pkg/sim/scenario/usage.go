package scenario

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/sim/trace"
)

// usage is what the pods hold, per resource and per GPU model of the
// trace's nodes, the nodes' capacity of each, and what was held
// integrated over the run's time.
type usage struct {
	capacity, modelCapacity map[string]float64
	// models are the trace nodes' GPU models.
	models                map[string]string
	allocated, modelAlloc map[string]float64
	// area and modelArea integrate allocated and modelAlloc over time.
	area, modelArea map[string]float64
}

func newUsage() usage {
	return usage{capacity: map[string]float64{}, modelCapacity: map[string]float64{}, models: map[string]string{},
		allocated: map[string]float64{}, modelAlloc: map[string]float64{}, area: map[string]float64{}, modelArea: map[string]float64{}}
}

// addNode adds a node's allocatable resources to the capacity, and its
// milli-GPUs to its GPU model's.
func (u *usage) addNode(n *corev1.Node) {
	for name, q := range n.Status.Allocatable {
		u.capacity[string(name)] += float64(q.MilliValue()) / 1000
	}
	if model := n.Labels[trace.GPUModelLabel]; model != "" {
		u.models[n.Name] = model
		q := n.Status.Allocatable[trace.GPUMilli]
		u.modelCapacity[model] += float64(q.Value())
	}
}

// use adds a pod's requests on node (sign 1) or takes them away (-1).
func (u *usage) use(p *corev1.Pod, node string, sign float64) {
	for name, q := range podRequests(p) {
		u.allocated[string(name)] += sign * float64(q.MilliValue()) / 1000
		if name == trace.GPUMilli {
			if m := u.models[node]; m != "" {
				u.modelAlloc[m] += sign * float64(q.Value())
			}
		}
	}
}

// integrate adds what is allocated over dt seconds.
func (u *usage) integrate(dt float64) {
	for k, v := range u.allocated {
		u.area[k] += v * dt
	}
	for k, v := range u.modelAlloc {
		u.modelArea[k] += v * dt
	}
}

// use follows a pod that takes its requests on node (sign 1) or gives
// them back (-1): on the node's GPU cards, its free resources and the
// run's allocation.
func (st *state) use(p *corev1.Pod, node string, sign float64) {
	st.cards.use(p, node, int(sign))
	st.stranded.use(p, node, sign)
	st.usage.use(p, node, sign)
	if st.load != nil {
		st.useLoad(p, node, int64(sign))
	}
}

// account integrates what was allocated, and the stranded GPUs, until at.
func (st *state) account(at time.Duration) {
	dt := (at - st.lastAt).Seconds()
	if dt <= 0 {
		return
	}
	st.usage.integrate(dt)
	st.stranded.integrate(dt)
	st.lastAt = at
}
