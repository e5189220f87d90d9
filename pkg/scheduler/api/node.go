package api

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/caldera-sh/caldera/pkg/devices/vgpu"
)

// NodeInfo is a node and the tasks placed on it.
//
// Its resource sums (Used, Idle, Releasing, Pipelined) are what gang and
// queue decisions read. A Mirror, when set, is kept in step with them: the
// pod-fit evaluator keeps kube-scheduler's view of the node in one, so
// that a pod's constraints mean exactly what they mean to kube-scheduler.
type NodeInfo struct {
	Name string
	Node *corev1.Node
	// Allocatable is what the node offers to pods.
	Allocatable *Resource
	// Used is the request of the tasks holding resources here.
	Used *Resource
	// Idle is Allocatable minus Used; negative when overcommitted.
	Idle *Resource
	// Releasing is the request of tasks being deleted here.
	Releasing *Resource
	// Pipelined is the request of tasks waiting for Releasing resources.
	Pipelined *Resource
	Tasks     map[TaskID]*TaskInfo
	// GPUs are the node's cards for GPU sharing (volcano.sh/gpu-number and
	// volcano.sh/gpu-memory), with what their tasks hold; nil on a node
	// that advertises none.
	GPUs []GPUDevice
	// VGPUs are the node's cards for virtual GPUs, as its vGPU device
	// plugin registers them (volcano.sh/node-vgpu-register), with the
	// shares their tasks hold; nil on a node that offers none.
	VGPUs []vgpu.CardState
	// migGeometries are the MIG geometries of card models the vGPU device
	// plugin is configured with; nil: the shipped ones.
	migGeometries []vgpu.Geometry
	// Mirror is a second record of the node and the pods holding resources
	// here, kept in step by the NodeInfo; nil when nobody keeps one. Set it
	// with SetMirror.
	Mirror NodeMirror
	// Fenced: the node is outside this scheduler's shard (NodeShard, hard
	// mode); nothing new is placed here, and its tasks still count.
	// Secondary: outside the shard in soft mode; tried only for a task no
	// node of the shard fits. Set them with SetFenced.
	Fenced, Secondary bool
	// Version changes whenever the node or its tasks do, so that results
	// computed for the node can be known to be stale.
	Version uint64
	// CacheVersion, in a snapshot's copy, is the Version the scheduler's
	// cache had for the node when the copy was made: a placement decided on
	// the copy is checked against the node as it is now when they differ
	// (another decision loop, or a pod event, changed the node since).
	CacheVersion uint64
	// future is Idle + Releasing - Pipelined, kept in step with them and
	// held in the struct itself, so that the scan of many nodes for room
	// reads one object per node.
	future Resource
}

// A NodeMirror is a record of a node and of the pods that hold resources
// on it, owned by someone outside this package (the pod-fit evaluator keeps
// kube-scheduler's NodeInfo in one). The NodeInfo that holds it tells it
// every change, so that both agree on which pods are on the node.
type NodeMirror interface {
	// SetNode replaces the node object.
	SetNode(node *corev1.Node)
	// AddTask records a task that now holds resources on the node.
	AddTask(t *TaskInfo)
	// RemoveTask forgets a task; it may never have been added.
	RemoveTask(logger klog.Logger, t *TaskInfo)
	// Clone returns an independent copy, for a copy of the NodeInfo.
	Clone() NodeMirror
}

// SetFenced fences the node off for new placements (fenced), makes it a
// last resort (secondary), or opens it (neither).
func (n *NodeInfo) SetFenced(fenced, secondary bool) {
	if n.Fenced != fenced || n.Secondary != secondary {
		n.Fenced, n.Secondary = fenced, secondary
		n.Version++
	}
}

// NewNodeInfo returns a node with no tasks.
func NewNodeInfo(node *corev1.Node) *NodeInfo {
	n := &NodeInfo{
		Name:      node.Name,
		Used:      &Resource{},
		Releasing: &Resource{},
		Pipelined: &Resource{},
		Tasks:     map[TaskID]*TaskInfo{},
	}
	n.SetNode(node)
	return n
}

// SetNode replaces the node object (allocatable, labels, taints).
func (n *NodeInfo) SetNode(node *corev1.Node) {
	n.Version++
	n.Node = node
	n.Allocatable = NewResource(node.Status.Allocatable)
	n.Idle = n.Allocatable.Clone().Sub(n.Used)
	n.refreshFuture()
	if n.Mirror != nil {
		n.Mirror.SetNode(node)
	}
	n.GPUs = gpuDevicesOf(node, n.Allocatable)
	n.VGPUs = vgpuCardsOf(node, n.Allocatable, n.migGeometries)
	if n.GPUs != nil || n.VGPUs != nil {
		for _, t := range n.Tasks {
			if t.Status.HoldsResources() {
				n.accountGPUs(t, 1)
				vgpu.Hold(n.VGPUs, t.VGPUDevices, 1)
			}
		}
	}
}

// SetMIGGeometries gives the node the MIG geometries of card models (nil:
// the shipped ones; shared, not changed) and lays out its MIG cards by
// them again.
func (n *NodeInfo) SetMIGGeometries(g []vgpu.Geometry) {
	n.migGeometries = g
	for _, c := range n.VGPUs {
		if c.Mode == vgpu.ModeMIG {
			n.SetNode(n.Node)
			return
		}
	}
}

// SetMirror makes m the node's mirror and tells it the node and the tasks
// holding resources here.
func (n *NodeInfo) SetMirror(m NodeMirror) {
	n.Mirror = m
	m.SetNode(n.Node)
	for _, t := range n.Tasks {
		if t.Status.HoldsResources() {
			m.AddTask(t)
		}
	}
}

func (n *NodeInfo) refreshFuture() {
	n.future = Resource{MilliCPU: n.Idle.MilliCPU, Memory: n.Idle.Memory, MilliPods: n.Idle.MilliPods, scalars: slices.Clone(n.Idle.scalars)}
	n.future.Add(n.Releasing).Sub(n.Pipelined)
}

// FutureIdle is what will be free once releasing tasks are gone and
// pipelined tasks have taken their share.
func (n *NodeInfo) FutureIdle() *Resource { return n.future.Clone() }

// FitsNow reports whether req fits the node's idle resources without
// taking room that pipelined tasks wait for: placing it now must leave the
// future idle resources non-negative too.
func (n *NodeInfo) FitsNow(req *Resource) bool {
	return req.LessEqual(n.Idle) && req.FitsIn(&n.future)
}

// AppendShortOf appends to dst the resources req asks for beyond what will
// be free once releasing tasks are gone and pipelined tasks have taken
// their share, sorted: why FitsFuture is false.
func (n *NodeInfo) AppendShortOf(dst []corev1.ResourceName, req *Resource) []corev1.ResourceName {
	return req.AppendInsufficient(dst, &n.future)
}

// FitsFuture reports whether req fits once releasing tasks are gone and
// pipelined tasks have taken their share.
func (n *NodeInfo) FitsFuture(req *Resource) bool { return req.FitsIn(&n.future) }

// Ready reports whether new pods may be placed here: the node reports Ready
// and is not cordoned.
func (n *NodeInfo) Ready() bool {
	if n.Node.Spec.Unschedulable {
		return false
	}
	for _, c := range n.Node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// AddTask places a task here in its current status.
func (n *NodeInfo) AddTask(t *TaskInfo) {
	n.Version++
	n.Tasks[t.UID] = t
	n.account(t, 1)
}

// RemoveTask removes a task placed here.
func (n *NodeInfo) RemoveTask(logger klog.Logger, t *TaskInfo) {
	cur, ok := n.Tasks[t.UID]
	if !ok {
		return
	}
	n.Version++
	delete(n.Tasks, t.UID)
	n.account(cur, -1)
	if n.Mirror != nil {
		n.Mirror.RemoveTask(logger, cur)
	}
}

func (n *NodeInfo) account(t *TaskInfo, sign int64) {
	switch t.Status {
	case Pipelined:
		addSigned(n.Pipelined, t.Resreq, sign)
		addSigned(&n.future, t.Resreq, -sign)
		return
	case Releasing:
		addSigned(n.Releasing, t.Resreq, sign)
		addSigned(&n.future, t.Resreq, sign)
	}
	if t.Status.HoldsResources() {
		if t.GPUIndex != nil {
			n.accountGPUs(t, sign)
		}
		if t.VGPUDevices != nil {
			vgpu.Hold(n.VGPUs, t.VGPUDevices, int(sign))
		}
		addSigned(n.Used, t.Resreq, sign)
		addSigned(n.Idle, t.Resreq, -sign)
		addSigned(&n.future, t.Resreq, -sign)
		if sign > 0 && n.Mirror != nil {
			n.Mirror.AddTask(t)
		}
	}
}

func addSigned(r, o *Resource, sign int64) {
	if sign > 0 {
		r.Add(o)
	} else {
		r.Sub(o)
	}
}

// Clone returns a deep copy for a snapshot; tasks are copied, pods shared.
func (n *NodeInfo) Clone() *NodeInfo { return n.CloneSharing(nil) }

// CloneSharing is Clone, except that a task for which copied returns a
// copy already made (the copy in a snapshot's job) takes that copy rather
// than a new one, so that the job and the node hold one object for it.
// copied returns nil for a task it has no copy of.
func (n *NodeInfo) CloneSharing(copied func(*TaskInfo) *TaskInfo) *NodeInfo {
	c := &NodeInfo{
		Name:         n.Name,
		Node:         n.Node,
		Allocatable:  n.Allocatable.Clone(),
		Used:         n.Used.Clone(),
		Idle:         n.Idle.Clone(),
		Releasing:    n.Releasing.Clone(),
		Pipelined:    n.Pipelined.Clone(),
		Tasks:        make(map[TaskID]*TaskInfo, len(n.Tasks)),
		GPUs:         slices.Clone(n.GPUs),
		VGPUs:        slices.Clone(n.VGPUs),
		Fenced:       n.Fenced,
		Secondary:    n.Secondary,
		Version:      n.Version,
		CacheVersion: n.CacheVersion,
		future:       *n.future.Clone(),
	}
	c.migGeometries = n.migGeometries
	if n.Mirror != nil {
		c.Mirror = n.Mirror.Clone()
	}
	for id, t := range n.Tasks {
		if copied != nil {
			if ct := copied(t); ct != nil {
				c.Tasks[id] = ct
				continue
			}
		}
		c.Tasks[id] = t.Clone()
	}
	return c
}

// Placement is a task placed on a node by a decision taken on a snapshot.
// Seen is the node's CacheVersion in that snapshot.
type Placement struct {
	Task *TaskInfo
	Node string
	Seen uint64
}

// DevicesFit reports whether the cards t holds on the node (GPU sharing,
// vGPU) are within the cards' capacity, t's holds counted: a check made
// after the task was added.
func (n *NodeInfo) DevicesFit(t *TaskInfo) bool {
	for _, i := range t.GPUIndex {
		if i < len(n.GPUs) && n.GPUs[i].Used > n.GPUs[i].Memory {
			return false
		}
	}
	for _, devs := range t.VGPUDevices {
		for _, d := range devs {
			for _, c := range n.VGPUs {
				if c.UUID == d.UUID && (c.UsedShares > c.Shares || c.UsedMemoryMiB > c.MemoryMiB || c.UsedCores > 100) {
					return false
				}
			}
		}
	}
	return true
}
