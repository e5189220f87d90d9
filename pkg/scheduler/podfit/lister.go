package podfit

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	fwk "k8s.io/kube-scheduler/framework"
	k8sframework "k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// lister is the plugins' view of the cluster: kube-scheduler's SharedLister
// over the NodeInfos of the cycle's snapshot. It holds the nodes' kube-scheduler NodeInfos
// pointers themselves, not copies, so that the plugins see every tentative
// placement the scheduler makes after SetNodes; the derived lists (nodes
// with affinity pods, PVCs in use) are therefore computed on each call.
type lister struct {
	// prev is the node list last set, a copy.
	prev   []*api.NodeInfo
	nodes  []*k8sframework.NodeInfo
	list   []fwk.NodeInfo
	byName map[string]*k8sframework.NodeInfo
	// index is each node's place in the list; layout moves on whenever the
	// list is rebuilt (other nodes, or another order).
	index  map[string]int
	layout uint64
	// affinitySet: a node held a pod with inter-pod affinity terms when
	// the list was set; affinityPlaced: such a pod was placed since
	// (notePlaced). Together they bound anyWithAffinity from above
	// without a pass over the nodes.
	affinitySet, affinityPlaced bool
}

var (
	_ fwk.SharedLister      = &lister{}
	_ fwk.NodeInfoLister    = &lister{}
	_ fwk.StorageInfoLister = &lister{}
)

// set replaces the node list. When the list holds the same nodes in the
// same order as the last one, only the entries whose NodeInfo changed are
// replaced, and their indices returned with same true; otherwise the lists
// are rebuilt.
func (l *lister) set(nodes []*api.NodeInfo) (changed []int, same bool) {
	defer func() {
		l.affinitySet, l.affinityPlaced = l.anyWithAffinity(), false
	}()
	if len(nodes) == len(l.prev) {
		same = true
		for i, n := range nodes {
			if p := l.prev[i]; p != n {
				if p.Name != n.Name {
					same = false
					break
				}
				changed = append(changed, i)
			}
		}
		if same {
			for _, i := range changed {
				n := nodes[i]
				info := nodeInfoOf(n)
				l.prev[i], l.nodes[i], l.list[i] = n, info, info
				l.byName[n.Name] = info
			}
			return changed, true
		}
	}
	l.prev = slices.Clone(nodes)
	l.nodes = make([]*k8sframework.NodeInfo, len(nodes))
	l.list = make([]fwk.NodeInfo, len(nodes))
	if l.byName == nil {
		l.byName = make(map[string]*k8sframework.NodeInfo, len(nodes))
	}
	clear(l.byName)
	l.index = make(map[string]int, len(nodes))
	l.layout++
	for i, n := range nodes {
		info := nodeInfoOf(n)
		l.nodes[i] = info
		l.list[i] = info
		l.byName[n.Name] = info
		l.index[n.Name] = i
	}
	return nil, false
}

func (l *lister) NodeInfos() fwk.NodeInfoLister       { return l }
func (l *lister) StorageInfos() fwk.StorageInfoLister { return l }

// List returns every node of the cycle; callers must not change the slice.
func (l *lister) List() ([]fwk.NodeInfo, error) { return l.list, nil }

func (l *lister) HavePodsWithAffinityList() ([]fwk.NodeInfo, error) {
	return l.filter(func(n *k8sframework.NodeInfo) bool { return len(n.PodsWithAffinity) > 0 }), nil
}

func (l *lister) HavePodsWithRequiredAntiAffinityList() ([]fwk.NodeInfo, error) {
	return l.filter(func(n *k8sframework.NodeInfo) bool { return len(n.PodsWithRequiredAntiAffinity) > 0 }), nil
}

func (l *lister) HavePodsWithRequiredNonHostScopedAntiAffinityList() ([]fwk.NodeInfo, error) {
	return l.filter(func(n *k8sframework.NodeInfo) bool { return len(n.PodsWithRequiredNonHostScopedAntiAffinity) > 0 }), nil
}

// anyWithAffinity reports whether a pod with inter-pod affinity or
// anti-affinity terms is placed on any node.
func (l *lister) anyWithAffinity() bool {
	for _, n := range l.nodes {
		if len(n.PodsWithAffinity) > 0 {
			return true
		}
	}
	return false
}

// mayHaveAffinity is anyWithAffinity or more: false only when no placed
// pod has inter-pod affinity terms.
func (l *lister) mayHaveAffinity() bool { return l.affinitySet || l.affinityPlaced }

// notePlaced is told of a pod placed on one of the nodes after set.
func (l *lister) notePlaced(pod *corev1.Pod) {
	if a := pod.Spec.Affinity; a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil) {
		l.affinityPlaced = true
	}
}

// filter scans the nodes; it runs once per PreFilter or PreScore of a pod,
// which already costs a pass over the nodes, and keeps the lists exact
// without hooks into every placement.
func (l *lister) filter(keep func(*k8sframework.NodeInfo) bool) []fwk.NodeInfo {
	var out []fwk.NodeInfo
	for _, n := range l.nodes {
		if keep(n) {
			out = append(out, n)
		}
	}
	return out
}

func (l *lister) Get(nodeName string) (fwk.NodeInfo, error) {
	if n, ok := l.byName[nodeName]; ok && n.Node() != nil {
		return n, nil
	}
	return nil, fmt.Errorf("nodeinfo not found for node name %q", nodeName)
}

// IsPVCUsedByPods reports whether a pod on any node uses the claim
// ("namespace/name"). Only pods with ReadWriteOncePod claims ask.
func (l *lister) IsPVCUsedByPods(key string) bool {
	for _, n := range l.nodes {
		if n.PVCRefCounts[key] > 0 {
			return true
		}
	}
	return false
}

// Kubernetes' workload API (PodGroup, CompositePodGroup) is not used by the
// plugins podfit runs; Caldera's own PodGroups are handled by its gang
// plugin. The listers answer "not found".

func (l *lister) PodGroupStates() fwk.PodGroupStateLister { return noPodGroupStates{} }
func (l *lister) PodGroups() fwk.PodGroupLister           { return noPodGroups{} }
func (l *lister) CompositePodGroupStates() fwk.CompositePodGroupStateLister {
	return noCompositePodGroupStates{}
}
func (l *lister) CompositePodGroups() fwk.CompositePodGroupLister { return noCompositePodGroups{} }

type noPodGroupStates struct{}

func (noPodGroupStates) Get(namespace, name string) (fwk.PodGroupState, error) {
	return nil, fmt.Errorf("pod group state %s/%s not found: podfit keeps no pod groups", namespace, name)
}

type noPodGroups struct{}

func (noPodGroups) Get(namespace, name string) (*schedulingv1beta1.PodGroup, error) {
	return nil, fmt.Errorf("pod group %s/%s not found: podfit keeps no pod groups", namespace, name)
}

type noCompositePodGroupStates struct{}

func (noCompositePodGroupStates) Get(namespace, name string) (fwk.CompositePodGroupState, error) {
	return nil, fmt.Errorf("composite pod group state %s/%s not found: podfit keeps no pod groups", namespace, name)
}

type noCompositePodGroups struct{}

func (noCompositePodGroups) Get(namespace, name string) (*schedulingv1alpha3.CompositePodGroup, error) {
	return nil, fmt.Errorf("composite pod group %s/%s not found: podfit keeps no pod groups", namespace, name)
}

// imageIndex gives each node kube-scheduler's image states (image size and
// on how many nodes it is present), which ImageLocality scores by and which
// api.NodeInfo does not keep. It is rebuilt only when a node object changes.
type imageIndex struct {
	nodes  map[string]*corev1.Node
	states map[string]map[string]*fwk.ImageStateSummary
	// epoch moves on when a rebuild finds other nodes or a node holding
	// other images: ImageLocality's scores may then have changed on nodes
	// whose generation did not move (image states are given to the nodes
	// here, apart from their changes).
	epoch uint64
}

// apply gives the nodes their image states. With same, the nodes are the
// last ones but for those at the changed indices: only these are looked
// at, unless one's node object changed.
func (x *imageIndex) apply(nodes []*api.NodeInfo, changed []int, same bool) {
	if same {
		for _, i := range changed {
			if n := nodes[i]; x.nodes[n.Name] != n.Node {
				same = false
				break
			}
		}
	}
	if same {
		for _, i := range changed {
			nodeInfoOf(nodes[i]).ImageStates = x.states[nodes[i].Name]
		}
		return
	}
	if x.stale(nodes) {
		x.rebuild(nodes)
	}
	for _, n := range nodes {
		nodeInfoOf(n).ImageStates = x.states[n.Name]
	}
}

func (x *imageIndex) stale(nodes []*api.NodeInfo) bool {
	if len(nodes) != len(x.nodes) {
		return true
	}
	for _, n := range nodes {
		if x.nodes[n.Name] != n.Node {
			return true
		}
	}
	return false
}

func (x *imageIndex) rebuild(nodes []*api.NodeInfo) {
	moved := len(nodes) != len(x.nodes)
	for _, n := range nodes {
		if old, ok := x.nodes[n.Name]; !ok || old != n.Node && !equality.Semantic.DeepEqual(old.Status.Images, n.Node.Status.Images) {
			moved = true
			break
		}
	}
	if moved {
		x.epoch++
	}
	x.nodes = make(map[string]*corev1.Node, len(nodes))
	x.states = make(map[string]map[string]*fwk.ImageStateSummary, len(nodes))
	present := map[string]int{}
	for _, n := range nodes {
		x.nodes[n.Name] = n.Node
		seen := map[string]bool{}
		for _, img := range n.Node.Status.Images {
			for _, name := range img.Names {
				if !seen[name] {
					seen[name] = true
					present[name]++
				}
			}
		}
	}
	for _, n := range nodes {
		if len(n.Node.Status.Images) == 0 {
			continue
		}
		states := make(map[string]*fwk.ImageStateSummary)
		for _, img := range n.Node.Status.Images {
			for _, name := range img.Names {
				states[name] = &fwk.ImageStateSummary{Size: img.SizeBytes, NumNodes: present[name]}
			}
		}
		x.states[n.Name] = states
	}
}
