package scenario

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/federation/dispatch"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/sim/trace"
)

// addNode opens a node's accounts: its free resources, its GPU cards, and
// its share of the capacity per resource and per GPU model.
func (st *state) addNode(n *corev1.Node) {
	st.free[n.Name] = dispatch.ResourcesOf(n.Status.Allocatable)
	if count := n.Status.Allocatable[api.ResourceGPUNumber]; count.Value() > 0 {
		mem := n.Status.Allocatable[api.ResourceGPUMemory]
		cards := make([]card, count.Value())
		for i := range cards {
			cards[i].memory = mem.Value() / count.Value()
		}
		st.cards[n.Name] = cards
	}
	for name, q := range n.Status.Allocatable {
		st.r.Capacity[string(name)] += float64(q.MilliValue()) / 1000
	}
	if model := n.Labels[trace.GPUModelLabel]; model != "" {
		st.models[n.Name] = model
		q := n.Status.Allocatable[trace.GPUMilli]
		st.r.ModelCapacity[model] += float64(q.Value())
	}
}

func (st *state) use(p *corev1.Pod, node string, sign float64) {
	st.useCards(p, node, int(sign))
	if f := st.free[node]; f != nil {
		if sign > 0 {
			f.Sub(dispatch.ResourcesOf(p.Spec.Containers[0].Resources.Requests))
		} else {
			f.Add(dispatch.ResourcesOf(p.Spec.Containers[0].Resources.Requests))
		}
		st.restrand(node)
	}
	for name, q := range p.Spec.Containers[0].Resources.Requests {
		st.allocated[string(name)] += sign * float64(q.MilliValue()) / 1000
		if name == trace.GPUMilli {
			if m := st.models[node]; m != "" {
				st.modelAlloc[m] += sign * float64(q.Value())
			}
		}
	}
}

// account integrates what was allocated until at.
func (st *state) account(at time.Duration) {
	if st.area == nil {
		st.area, st.modelArea = map[string]float64{}, map[string]float64{}
	}
	dt := (at - st.lastAt).Seconds()
	if dt <= 0 {
		return
	}
	for k, v := range st.allocated {
		st.area[k] += v * dt
	}
	for k, v := range st.modelAlloc {
		st.modelArea[k] += v * dt
	}
	st.strandedArea += st.stranded * dt
	st.lastAt = at
}

// strandAll counts the free GPUs no typical GPU task can use: those on
// nodes short of its CPU, memory or GPUs.
func (st *state) strandAll() {
	st.strandedOn, st.strandedMilli = map[string]int64{}, 0
	for node := range st.free {
		st.restrand(node)
	}
}

// restrand recounts one node's stranded GPUs after its free resources
// changed.
func (st *state) restrand(node string) {
	if st.gpu == "" || st.typical == nil {
		return
	}
	var g int64
	if f := st.free[node]; f != nil {
		if g = f[corev1.ResourceName(st.gpu)]; g <= 0 || st.typical.Fits(f) {
			g = 0
		}
	}
	st.strandedMilli += g - st.strandedOn[node]
	st.strandedOn[node] = g
	st.stranded = float64(st.strandedMilli) / 1000
}

// typicalGPUTask names the workload's GPU resource (the trace's milli-GPUs,
// else nvidia.com/gpu) and its median GPU pod: the median of each resource
// over the pods that request GPUs.
func typicalGPUTask(capacity map[string]float64, jobs []job, hjs []hyperJob) (string, dispatch.Resources) {
	gpu := ""
	for _, name := range []string{trace.GPUMilli, "nvidia.com/gpu"} {
		if capacity[name] > 0 {
			gpu = name
			break
		}
	}
	if gpu == "" {
		return "", nil
	}
	var reqs []corev1.ResourceList
	for _, j := range jobs {
		if _, ok := j.requests[corev1.ResourceName(gpu)]; ok {
			reqs = append(reqs, j.requests)
		}
	}
	for _, h := range hjs {
		if _, ok := h.pod[corev1.ResourceName(gpu)]; ok {
			reqs = append(reqs, h.pod)
		}
	}
	if len(reqs) == 0 {
		return gpu, nil
	}
	typical := dispatch.Resources{}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceName(gpu)} {
		v := make([]int64, 0, len(reqs))
		for _, rl := range reqs {
			q := rl[name]
			v = append(v, q.MilliValue())
		}
		slices.Sort(v)
		typical[name] = v[len(v)/2]
	}
	return gpu, typical
}
