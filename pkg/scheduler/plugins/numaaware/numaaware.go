// Package numaaware places Guaranteed pods only on nodes whose kubelet will
// admit them with CPUs aligned as their NUMA topology policy
// (volcano.sh/numa-topology-policy) asks, and prefers the nodes where
// their CPUs span the fewest NUMA nodes. What a node offers is its
// Numatopology report; the decision is pkg/topology/numa's.
//
// The plugin keeps, per node and per cycle, the CPUs the report shows free
// less those of the pods bound there that the report does not list yet
// (the CPUs the kubelet will have given them, worked out the same way) and
// those of the tasks the cycle places.
package numaaware

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/cpuset"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/internal/pluginargs"
	"github.com/caldera-sh/caldera/pkg/topology/numa"
)

// Name is the plugin's name in the configuration, Volcano's.
const Name = configv1alpha1.NUMAAwarePlugin

// Plugin is the numa-aware plugin.
type Plugin struct {
	weight float64
	// nodes is the cycle's state of each node that reports its CPUs.
	nodes map[string]*nodeState
}

// nodeState is what the cycle knows of one node's CPUs.
type nodeState struct {
	report *numa.Report
	// free is the CPUs no pod holds, as far as the cycle knows.
	free cpuset.CPUSet
	// held is the CPUs each task known to pin CPUs here holds.
	held map[api.TaskID]cpuset.CPUSet
}

var (
	_ framework.PredicatePlugin       = &Plugin{}
	_ framework.VictimPredicatePlugin = &Plugin{}
	_ framework.ReservePlugin         = &Plugin{}
	_ framework.NodeScorePlugin       = &Plugin{}
	_ framework.SessionPlugin         = &Plugin{}
)

// New builds the plugin from *NUMAAwareArgs (nil means the defaults).
func New(args any, _ *framework.Handle) (framework.Plugin, error) {
	a, err := pluginargs.Typed[configv1alpha1.NUMAAwareArgs](Name, args)
	if err != nil {
		return nil, err
	}
	return &Plugin{weight: float64(*a.Weight)}, nil
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }

// OnSessionOpen reads each reporting node's free CPUs and takes out those
// of the pods bound there that its report does not list yet.
func (p *Plugin) OnSessionOpen(ssn *framework.Session) {
	p.nodes = make(map[string]*nodeState, len(ssn.Snapshot.NUMA))
	for name, r := range ssn.Snapshot.NUMA {
		n := ssn.Snapshot.Nodes[name]
		if n == nil {
			continue
		}
		st := &nodeState{report: r, free: r.Free, held: map[api.TaskID]cpuset.CPUSet{}}
		var unreported []*api.TaskInfo
		for _, t := range n.Tasks {
			if !t.Status.HoldsResources() || t.Pod == nil {
				continue
			}
			if cpus, ok := r.Reported(string(t.Pod.UID), t.Namespace, t.Name); ok {
				st.held[t.UID] = cpus
			} else if guaranteed(t.Pod) {
				unreported = append(unreported, t)
			}
		}
		// The kubelet admitted them in the order they came; the oldest
		// first is the nearest guess.
		slices.SortFunc(unreported, func(a, b *api.TaskInfo) int {
			return cmp.Or(a.Pod.CreationTimestamp.Compare(b.Pod.CreationTimestamp.Time), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
		})
		for _, t := range unreported {
			// As the kubelet admits any Guaranteed pod: by the node's
			// policy. One it would refuse pins nothing.
			if a, reason := numa.Admit(r.WithFree(st.free), "", wholeCPUs(t.Pod)); reason == "" && !a.CPUs.IsEmpty() {
				st.hold(t.UID, a.CPUs)
			}
		}
		p.nodes[name] = st
	}
}

// OnSessionClose drops the cycle's state.
func (p *Plugin) OnSessionClose(*framework.Session) { p.nodes = nil }

func (st *nodeState) hold(task api.TaskID, cpus cpuset.CPUSet) {
	st.free = st.free.Difference(cpus)
	st.held[task] = cpus
}

// Predicate implements framework.PredicatePlugin.
func (p *Plugin) Predicate(t *api.TaskInfo, n *api.NodeInfo) *framework.Status {
	_, s := p.admit(t, n, nil)
	return s
}

// PredicateWithout implements framework.VictimPredicatePlugin: the CPUs
// the victims hold count as free.
func (p *Plugin) PredicateWithout(t *api.TaskInfo, n *api.NodeInfo, victims []*api.TaskInfo) *framework.Status {
	_, s := p.admit(t, n, victims)
	return s
}

// admit is the task's assignment on the node, with the victims' CPUs
// free, or why it gets none. A task the plugin has nothing to say about
// gets an empty assignment and a nil status.
func (p *Plugin) admit(t *api.TaskInfo, n *api.NodeInfo, victims []*api.TaskInfo) (numa.Assignment, *framework.Status) {
	if t.Pod == nil || !guaranteed(t.Pod) {
		return numa.Assignment{}, nil
	}
	policy := policyOf(t.Pod)
	st := p.nodes[n.Name]
	if st == nil {
		if policy == "" || policy == numa.None {
			return numa.Assignment{}, nil
		}
		return numa.Assignment{}, &framework.Status{Plugin: Name, Code: framework.UnschedulableAndUnresolvable,
			Reasons: []string{"reports no NUMA topology (Numatopology)"}}
	}
	if reason := st.report.Refuses(policy); reason != "" {
		return numa.Assignment{}, &framework.Status{Plugin: Name, Code: framework.UnschedulableAndUnresolvable, Reasons: []string{reason}}
	}
	free := st.free
	for _, v := range victims {
		free = free.Union(st.held[v.UID])
	}
	a, reason := numa.Admit(st.report.WithFree(free), policy, wholeCPUs(t.Pod))
	if reason != "" {
		return numa.Assignment{}, &framework.Status{Plugin: Name, Code: framework.Unschedulable, Reasons: []string{reason}}
	}
	return a, nil
}

// Reserve implements framework.ReservePlugin: the task's CPUs are taken
// on the node.
func (p *Plugin) Reserve(t *api.TaskInfo, n *api.NodeInfo) *framework.Status {
	a, s := p.admit(t, n, nil)
	if s != nil {
		return s
	}
	if st := p.nodes[n.Name]; st != nil && !a.CPUs.IsEmpty() {
		st.hold(t.UID, a.CPUs)
	}
	return nil
}

// Unreserve implements framework.ReservePlugin.
func (p *Plugin) Unreserve(t *api.TaskInfo, n *api.NodeInfo) {
	st := p.nodes[n.Name]
	if st == nil {
		return
	}
	if cpus, ok := st.held[t.UID]; ok {
		st.free = st.free.Union(cpus)
		delete(st.held, t.UID)
	}
}

// ScoreNodes implements framework.NodeScorePlugin: for a task with a
// policy, nodes where its CPUs span fewer NUMA nodes score higher.
func (p *Plugin) ScoreNodes(t *api.TaskInfo, nodes []*api.NodeInfo, scores []float64) {
	if p.weight == 0 || t.Pod == nil || !guaranteed(t.Pod) {
		return
	}
	if policy := policyOf(t.Pod); policy == "" || policy == numa.None {
		return
	}
	spans := make([]int, len(nodes))
	most := 0
	for i, n := range nodes {
		a, s := p.admit(t, n, nil)
		if s != nil || a.CPUs.IsEmpty() {
			spans[i] = -1
			continue
		}
		spans[i] = a.NUMANodes
		most = max(most, a.NUMANodes)
	}
	for i, n := range spans {
		if n >= 0 {
			scores[i] += p.weight * float64(numa.Score(n, most))
		}
	}
}

func policyOf(pod *corev1.Pod) numa.Policy {
	return numa.Policy(pod.Annotations[schedulingv1beta1.NumaPolicyKey])
}

// guaranteed says whether the pod's QoS class is Guaranteed: every
// container, init containers included, has CPU and memory limits, and
// requests equal to them.
func guaranteed(pod *corev1.Pod) bool {
	if len(pod.Spec.Containers) == 0 {
		return false
	}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				limit, ok := c.Resources.Limits[r]
				if !ok || limit.IsZero() {
					return false
				}
				if req, ok := c.Resources.Requests[r]; ok && req.Cmp(limit) != 0 {
					return false
				}
			}
		}
	}
	return true
}

// wholeCPUs is each container's CPU request in whole CPUs, 0 for one that
// asks for a fraction: the static CPU manager pins only whole CPUs.
func wholeCPUs(pod *corev1.Pod) []int64 {
	out := make([]int64, len(pod.Spec.Containers))
	for i, c := range pod.Spec.Containers {
		q, ok := c.Resources.Requests[corev1.ResourceCPU]
		if !ok {
			q = c.Resources.Limits[corev1.ResourceCPU]
		}
		if m := q.MilliValue(); m > 0 && m%1000 == 0 {
			out[i] = m / 1000
		}
	}
	return out
}
