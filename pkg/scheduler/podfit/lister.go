package podfit

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	fwk "k8s.io/kube-scheduler/framework"
	k8sframework "k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// lister is the plugins' view of the cluster: kube-scheduler's SharedLister
// over the NodeInfos of the cycle's snapshot. It holds the nodes'
// kube-scheduler NodeInfos themselves, not copies, so that the plugins see
// every tentative placement the scheduler makes after SetNodes; the derived
// lists (nodes with affinity pods, PVCs in use) are therefore computed on
// each call. Between cycles it holds none of them (release): a cycle's
// nodes hold the pods as they were then, which the cluster has since
// replaced.
type lister struct {
	// names and serials are the node list last set: each node's name and
	// its mirror's serial, which a copy of the node does not share.
	names   []string
	serials []uint64
	nodes   []*k8sframework.NodeInfo
	list    []fwk.NodeInfo
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
// same order as the last one, it returns same true and the indices of the
// nodes replaced since (by copies); otherwise the lists are rebuilt.
func (l *lister) set(nodes []*api.NodeInfo) (changed []int, same bool) {
	defer func() {
		l.affinitySet, l.affinityPlaced = l.anyWithAffinity(), false
	}()
	if len(nodes) == len(l.names) {
		same = true
		for i, n := range nodes {
			if l.names[i] != n.Name {
				same = false
				break
			}
		}
		if same {
			l.nodes, l.list = l.nodes[:len(nodes)], l.list[:len(nodes)]
			for i, n := range nodes {
				m := mirrorOf(n)
				l.nodes[i], l.list[i] = m.info, m.info
				if m.serial != l.serials[i] {
					l.serials[i] = m.serial
					changed = append(changed, i)
				}
			}
			return changed, true
		}
	}
	l.names = make([]string, len(nodes))
	l.serials = make([]uint64, len(nodes))
	l.nodes = make([]*k8sframework.NodeInfo, len(nodes))
	l.list = make([]fwk.NodeInfo, len(nodes))
	l.index = make(map[string]int, len(nodes))
	l.layout++
	for i, n := range nodes {
		m := mirrorOf(n)
		l.names[i], l.serials[i] = n.Name, m.serial
		l.nodes[i] = m.info
		l.list[i] = m.info
		l.index[n.Name] = i
	}
	return nil, false
}

// release lets go of the nodes until the next set: the lists are emptied,
// keeping their room.
func (l *lister) release() {
	clear(l.nodes)
	clear(l.list)
	l.nodes, l.list = l.nodes[:0], l.list[:0]
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
// and keeps the lists exact without hooks into every placement. Every
// list it makes holds only nodes with a pod with inter-pod affinity or
// anti-affinity terms, so none is scanned for while no such pod is placed
// (mayHaveAffinity), the common case: a pass over 5,000 nodes for each pod
// signed was 1.5% of the scheduler's CPU with 20,000 one-pod PodGroups.
func (l *lister) filter(keep func(*k8sframework.NodeInfo) bool) []fwk.NodeInfo {
	if !l.mayHaveAffinity() {
		return nil
	}
	var out []fwk.NodeInfo
	for _, n := range l.nodes {
		if keep(n) {
			out = append(out, n)
		}
	}
	return out
}

func (l *lister) Get(nodeName string) (fwk.NodeInfo, error) {
	if i, ok := l.index[nodeName]; ok && i < len(l.nodes) {
		if n := l.nodes[i]; n.Node() != nil {
			return n, nil
		}
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
// api.NodeInfo does not keep. It is rebuilt only when a node's images
// change. It keeps each node's image list, not the node object, so that
// node objects the cache has replaced are not kept alive here.
type imageIndex struct {
	images map[string][]corev1.ContainerImage
	states map[string]map[string]*fwk.ImageStateSummary
	// epoch moves on when a rebuild finds other nodes or a node holding
	// other images: ImageLocality's scores may then have changed on nodes
	// whose generation did not move (image states are given to the nodes
	// here, apart from their changes).
	epoch uint64
}

// apply gives the nodes their image states. With same, the nodes are the
// last ones but for those at the changed indices: only these are looked
// at, unless one's images changed.
func (x *imageIndex) apply(nodes []*api.NodeInfo, changed []int, same bool) {
	if same {
		for _, i := range changed {
			if !x.holds(nodes[i]) {
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

// holds reports whether the index was built with the node's images as they
// are. A node object replaced with equal images is not a change; the index
// then keeps the new list, so that the next look at it is a comparison of
// slices rather than of their contents.
func (x *imageIndex) holds(n *api.NodeInfo) bool {
	kept, ok := x.images[n.Name]
	if !ok {
		return false
	}
	cur := n.Node.Status.Images
	if len(kept) == len(cur) && (len(cur) == 0 || &kept[0] == &cur[0]) {
		return true
	}
	if !equality.Semantic.DeepEqual(kept, cur) {
		return false
	}
	x.images[n.Name] = cur
	return true
}

func (x *imageIndex) stale(nodes []*api.NodeInfo) bool {
	if len(nodes) != len(x.images) {
		return true
	}
	for _, n := range nodes {
		if !x.holds(n) {
			return true
		}
	}
	return false
}

// rebuild recomputes the states; it runs only when stale, that is when the
// nodes or their images moved, so the epoch moves on too.
func (x *imageIndex) rebuild(nodes []*api.NodeInfo) {
	x.epoch++
	x.images = make(map[string][]corev1.ContainerImage, len(nodes))
	x.states = make(map[string]map[string]*fwk.ImageStateSummary, len(nodes))
	present := map[string]int{}
	for _, n := range nodes {
		x.images[n.Name] = n.Node.Status.Images
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
