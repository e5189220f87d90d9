package podfit

import (
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	k8sframework "k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// nodeMirror is kube-scheduler's NodeInfo of a node, kept in step with the
// scheduler's NodeInfo as its mirror: the plugins read it. serial tells
// mirrors apart without holding them: every mirror made, copies included,
// has one of its own.
type nodeMirror struct {
	info   *k8sframework.NodeInfo
	serial uint64
}

// mirrorSerials numbers the mirrors made.
var mirrorSerials atomic.Uint64

func newMirror(info *k8sframework.NodeInfo) *nodeMirror {
	return &nodeMirror{info: info, serial: mirrorSerials.Add(1)}
}

var _ api.NodeMirror = &nodeMirror{}

// NewNodeMirror returns an empty mirror for api.NodeInfo.SetMirror. Give
// every node one where nodes are made (cache.Options.NewNodeMirror,
// api.Objects.NewNodeMirror), so that copies of a node copy it rather than
// rebuild it: a node the evaluator sees without one gets one then, at the
// cost of recording its pods anew.
func NewNodeMirror() api.NodeMirror { return newMirror(k8sframework.NewNodeInfo()) }

func (m *nodeMirror) SetNode(node *corev1.Node) { m.info.SetNode(node) }

func (m *nodeMirror) AddTask(t *api.TaskInfo) { m.info.AddPodInfo(podInfoOf(t)) }

func (m *nodeMirror) RemoveTask(logger klog.Logger, t *api.TaskInfo) {
	// A pod that was never added is not an error here.
	_ = m.info.RemovePod(logger, t.Pod)
}

func (m *nodeMirror) Clone() api.NodeMirror {
	return newMirror(m.info.SnapshotConcrete())
}

// podInfoOf returns kube-scheduler's view of the task's pod, made once per
// pod object and kept with the task. Its resources are worked out before it
// is kept, so that copies of the task in other goroutines only read them.
func podInfoOf(t *api.TaskInfo) *k8sframework.PodInfo {
	pi, ok := t.FitMemo().(*k8sframework.PodInfo)
	if ok && pi.Pod == t.Pod {
		return pi
	}
	if ok && api.SameFitInputs(pi.Pod, t.Pod) {
		// An earlier version of the pod (the cache carries the memo from
		// version to version): its affinity terms and resources hold for
		// this one, which the PodInfo now refers to.
		next := *pi
		next.Pod = t.Pod
		t.SetFitMemo(&next)
		return &next
	}
	if last, ok := podInfos.Get(t.Pod); ok {
		// Another pod alike, the common case in a gang or a backlog of
		// one kind: its affinity terms and resources are this one's,
		// without the pass over the containers kube's PodRequests makes
		// (most of what placing a pod allocated).
		next := *last
		next.Pod = t.Pod
		t.SetFitMemo(&next)
		return &next
	}
	// An affinity term that does not parse leaves the PodInfo without it,
	// as kube-scheduler's own NodeInfo.AddPod does.
	pi, _ = k8sframework.NewPodInfo(t.Pod)
	pi.CalculateResource()
	t.SetFitMemo(pi)
	kept := *pi
	kept.Pod = nil
	podInfos.Put(t.Pod, &kept)
	return pi
}

// podInfos keeps the PodInfo podInfoOf made last, complete (its resources
// worked out) and without its pod, for the next pod alike.
var podInfos api.AlikeMemo[*k8sframework.PodInfo]

// nodeInfoOf returns kube-scheduler's NodeInfo of the node, giving the node
// a mirror first when it has none. A node has one mirror: the evaluator's.
func nodeInfoOf(node *api.NodeInfo) *k8sframework.NodeInfo { return mirrorOf(node).info }

func mirrorOf(node *api.NodeInfo) *nodeMirror {
	m, ok := node.Mirror.(*nodeMirror)
	if !ok {
		m = newMirror(k8sframework.NewNodeInfo())
		node.SetMirror(m)
	}
	return m
}
