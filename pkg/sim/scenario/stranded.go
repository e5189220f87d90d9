package scenario

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/federation/dispatch"
	"github.com/caldera-sh/caldera/pkg/sim/trace"
)

// strandedGPUs counts the free GPUs that the workload's median GPU task
// cannot use, those on nodes short of its CPU, memory or GPUs, node by
// node as their free resources change.
type strandedGPUs struct {
	// free is each node's free resources.
	free map[string]dispatch.Resources
	// gpu names the GPU resource, typical is the median GPU task's
	// request.
	gpu     string
	typical dispatch.Resources
	// byNode is each node's stranded GPUs (milli) and milli their sum;
	// current is that in GPUs, and area integrates it over time.
	byNode        map[string]int64
	milli         int64
	current, area float64
}

func newStrandedGPUs() strandedGPUs { return strandedGPUs{free: map[string]dispatch.Resources{}} }

// addNode opens a node's free resources.
func (g *strandedGPUs) addNode(n *corev1.Node) {
	g.free[n.Name] = dispatch.ResourcesOf(n.Status.Allocatable)
}

// countFor starts counting the free GPUs of resource gpu that typical
// cannot use, on every node.
func (g *strandedGPUs) countFor(gpu string, typical dispatch.Resources) {
	g.gpu, g.typical = gpu, typical
	g.byNode, g.milli = map[string]int64{}, 0
	for node := range g.free {
		g.recount(node)
	}
}

// use takes a pod's requests from node's free resources (sign 1) or gives
// them back (-1).
func (g *strandedGPUs) use(p *corev1.Pod, node string, sign float64) {
	f := g.free[node]
	if f == nil {
		return
	}
	if sign > 0 {
		f.Sub(dispatch.ResourcesOf(podRequests(p)))
	} else {
		f.Add(dispatch.ResourcesOf(podRequests(p)))
	}
	g.recount(node)
}

// recount recounts one node's stranded GPUs after its free resources
// changed.
func (g *strandedGPUs) recount(node string) {
	if g.gpu == "" || g.typical == nil {
		return
	}
	var n int64
	if f := g.free[node]; f != nil {
		if n = f[corev1.ResourceName(g.gpu)]; n <= 0 || g.typical.Fits(f) {
			n = 0
		}
	}
	g.milli += n - g.byNode[node]
	g.byNode[node] = n
	g.current = float64(g.milli) / 1000
}

// integrate adds the stranded GPUs over dt seconds.
func (g *strandedGPUs) integrate(dt float64) {
	g.area += g.current * dt
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
