package cache

import (
	"maps"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	metricsv1alpha1 "github.com/caldera-sh/caldera/apis/metrics/v1alpha1"
	nodeinfov1alpha1 "github.com/caldera-sh/caldera/apis/nodeinfo/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/devices/vgpu"
	"github.com/caldera-sh/caldera/pkg/loadaware"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/topology/numa"
)

// UpdatePod records a pod as it now is (added or updated).
func (c *Cache) UpdatePod(pod *corev1.Pod) {
	c.mu.Lock()
	c.notePodVersionLocked(pod.ResourceVersion)
	changed := c.updatePodLocked(pod)
	c.mu.Unlock()
	if changed {
		c.signal()
	}
}

// DeletePod forgets a pod.
func (c *Cache) DeletePod(pod *corev1.Pod) {
	c.mu.Lock()
	c.notePodVersionLocked(pod.ResourceVersion)
	c.mu.Unlock()
	c.Gone(pod.UID)
}

// notePodVersionLocked records the latest resourceVersion of the pod
// events processed: watch events come in resourceVersion order, so every
// pod change before it is in the cache.
func (c *Cache) notePodVersionLocked(rv string) {
	if v, err := strconv.ParseUint(rv, 10, 64); err == nil && v > c.podVersion {
		c.podVersion = v
	}
}

// PodsSeenSince reports whether the cache has processed a pod event at
// resourceVersion rv or later, and so holds every pod change made before
// rv (resourceVersions of one etcd, as the API server serves them).
func (c *Cache) PodsSeenSince(rv string) bool {
	v, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.podVersion >= v
}

// Gone forgets the pod of that UID: deleted, as its informer shows, or
// found gone by a bind before the informer shows it (the informer's delete
// then finds nothing to do).
func (c *Cache) Gone(uid types.UID) {
	c.mu.Lock()
	c.removePodLocked(uid)
	delete(c.assumed, uid)
	delete(c.nominated, uid)
	c.evicting.Delete(uid)
	delete(c.evictRefused, uid)
	c.mu.Unlock()
	c.signal()
}

func terminated(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

func (c *Cache) updatePodLocked(pod *corev1.Pod) bool {
	if !c.ours(pod) {
		return c.updateForeignPodLocked(pod)
	}
	id := api.JobIDOfPod(pod)
	if node, ok := c.assumed[pod.UID]; ok {
		if pod.Spec.NodeName == "" && pod.DeletionTimestamp == nil && !terminated(pod) {
			// The bind is in flight; this update predates it. Keep the
			// placement and the pod object we assumed with.
			return false
		}
		if pod.Spec.NodeName != "" && pod.Spec.NodeName != node {
			c.logger.Info("Pod bound elsewhere than assumed", "pod", klog.KObj(pod), "assumed", node, "node", pod.Spec.NodeName)
		}
		delete(c.assumed, pod.UID)
	}
	old := c.taskLocked(pod.UID)
	t := api.NewTaskInfoAfter(pod, id, old)
	c.applyIntentsLocked(pod, t)
	relevant := old == nil || old.NodeName != t.NodeName || old.Status != t.Status || old.Job != id
	c.removePodLocked(pod.UID)
	e := c.jobToChangeLocked(id)
	if e == nil {
		var j *api.JobInfo
		if fast := c.fastLanePod(pod, t); fast || api.Standalone(pod) {
			// A fast-lane pod forms a job of its own even when a
			// workload owns it: no PodGroup is made for it.
			j = api.NewShadowJob(pod)
			j.FastLane = fast
		} else {
			// The PodGroup has not arrived (yet), or the PodGroup controller
			// has yet to make one for the pod's workload; the job waits.
			j = api.NewJobInfo(id)
			j.Namespace = pod.Namespace
		}
		e = &jobEntry{info: j}
		c.jobs[id] = e
	}
	e.info.AddTask(t)
	c.setJobPriorityLocked(e.info)
	c.taskJob[pod.UID] = id
	c.touchJob(id)
	if t.NodeName != "" && !terminated(pod) {
		n := c.nodeLocked(t.NodeName)
		n.info.AddTask(t)
		c.touchNode(t.NodeName)
	}
	return relevant
}

// applyIntentsLocked gives a task built from its pod what the scheduler
// decided and the pod does not show yet: an eviction in flight makes a
// running task releasing; a nomination puts a pending task on its node as
// pipelined (the pod's status.nominatedNodeName carries it across
// restarts).
func (c *Cache) applyIntentsLocked(pod *corev1.Pod, t *api.TaskInfo) {
	if c.evicting.Has(pod.UID) {
		switch {
		case pod.DeletionTimestamp != nil || terminated(pod):
			c.evicting.Delete(pod.UID)
		case t.Status == api.Running || t.Status == api.Bound:
			t.Status = api.Releasing
		}
	}
	if until, ok := c.evictRefused[pod.UID]; ok {
		t.NoEvictUntil = until
	}
	if t.Status != api.Pending {
		delete(c.nominated, pod.UID)
		return
	}
	node, ok := c.nominated[pod.UID]
	if !ok && pod.Status.NominatedNodeName != "" {
		node = pod.Status.NominatedNodeName
		c.nominated[pod.UID] = node
	}
	if node == "" {
		return
	}
	if e := c.nodes[node]; e == nil || e.placeholder {
		// The node is gone: the claim is void.
		delete(c.nominated, pod.UID)
		return
	}
	t.Status = api.Pipelined
	t.NodeName = node
}

func (c *Cache) updateForeignPodLocked(pod *corev1.Pod) bool {
	oldNode, had := c.podNode[pod.UID]
	if had {
		if oldNode == pod.Spec.NodeName && !terminated(pod) && pod.DeletionTimestamp == nil {
			if e := c.nodes[oldNode]; e != nil {
				if t := e.info.Tasks[pod.UID]; t != nil && equality.Semantic.DeepEqual(t.Pod.Spec.Containers, pod.Spec.Containers) {
					return false
				}
			}
		}
		c.removeFromNodeLocked(oldNode, pod.UID)
		delete(c.podNode, pod.UID)
	}
	if pod.Spec.NodeName == "" || terminated(pod) {
		return had
	}
	t := api.NewTaskInfo(pod, "")
	n := c.nodeLocked(pod.Spec.NodeName)
	n.info.AddTask(t)
	c.touchNode(pod.Spec.NodeName)
	c.podNode[pod.UID] = pod.Spec.NodeName
	return true
}

// taskLocked returns the cached task of one of our pods.
func (c *Cache) taskLocked(uid types.UID) *api.TaskInfo {
	id, ok := c.taskJob[uid]
	if !ok {
		return nil
	}
	if e := c.jobs[id]; e != nil {
		return e.info.Tasks[uid]
	}
	return nil
}

func (c *Cache) removePodLocked(uid types.UID) {
	if node, ok := c.podNode[uid]; ok {
		c.removeFromNodeLocked(node, uid)
		delete(c.podNode, uid)
		return
	}
	id, ok := c.taskJob[uid]
	if !ok {
		return
	}
	delete(c.taskJob, uid)
	e := c.jobToChangeLocked(id)
	if e == nil {
		return
	}
	t := e.info.Tasks[uid]
	if t == nil {
		return
	}
	if t.NodeName != "" {
		c.removeFromNodeLocked(t.NodeName, uid)
	}
	e.info.RemoveTask(t)
	c.touchJob(id)
	if len(e.info.Tasks) == 0 && e.info.PodGroup == nil {
		delete(c.jobs, id)
		delete(c.kept, id)
	}
}

func (c *Cache) removeFromNodeLocked(node string, uid types.UID) {
	e := c.nodes[node]
	if e == nil {
		return
	}
	if t := e.info.Tasks[uid]; t != nil {
		e.info.RemoveTask(c.logger, t)
		c.touchNode(node)
	}
	if e.placeholder && len(e.info.Tasks) == 0 {
		delete(c.nodes, node)
	}
}

// newNodeInfo returns a node with no tasks, with its mirror when the cache
// gives nodes one.
func (c *Cache) newNodeInfo(node *corev1.Node) *api.NodeInfo {
	n := api.NewNodeInfo(node)
	if c.migGeometries != nil {
		n.SetMIGGeometries(c.migGeometries)
	}
	if c.newMirror != nil {
		n.SetMirror(c.newMirror())
	}
	if node.Name != "" {
		c.fenceLocked(n)
	}
	return n
}

// fenceLocked fences the node off, or not, as SetPlaceable says.
func (c *Cache) fenceLocked(n *api.NodeInfo) {
	out := c.placeable != nil && !c.placeable(n.Name)
	n.SetFenced(out && !c.softFence, out && c.softFence)
}

// HoldsPods reports whether the cache has seen every one of the pods bound
// to node.
func (c *Cache) HoldsPods(node string, uids []types.UID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.nodes[node]
	for _, uid := range uids {
		if e == nil || e.info.Tasks[uid] == nil {
			return false
		}
	}
	return true
}

// SetPlaceable fences off the nodes, present and to come, where new
// placements may not go (outside the scheduler's shard), or with soft
// makes them a last resort; nil opens every node.
func (c *Cache) SetPlaceable(placeable func(node string) bool, soft bool) {
	c.mu.Lock()
	c.placeable, c.softFence = placeable, soft
	changed := false
	for name, e := range c.nodes {
		v := e.info.Version
		c.fenceLocked(e.info)
		if e.info.Version != v {
			c.touchNode(name)
			changed = true
		}
	}
	c.mu.Unlock()
	if changed {
		c.signal()
	}
}

// SetMIGGeometries gives every node, and the nodes to come, the MIG
// geometries of card models the vGPU device plugin is configured with
// (vgpu.ParseDeviceConfig); nil: the shipped ones.
func (c *Cache) SetMIGGeometries(g []vgpu.Geometry) {
	c.mu.Lock()
	c.migGeometries = g
	for name, e := range c.nodes {
		v := e.info.Version
		e.info.SetMIGGeometries(g)
		if e.info.Version != v {
			c.touchNode(name)
		}
	}
	c.mu.Unlock()
	c.signal()
}

// nodeLocked returns the node's entry, creating a placeholder for a node
// that pods name before it is known.
func (c *Cache) nodeLocked(name string) *nodeEntry {
	e := c.nodes[name]
	if e == nil {
		e = &nodeEntry{info: c.newNodeInfo(&corev1.Node{}), placeholder: true}
		e.info.Name = name
		c.fenceLocked(e.info)
		c.nodes[name] = e
	}
	return e
}

// UpdateNode records a node as it now is.
func (c *Cache) UpdateNode(node *corev1.Node) {
	c.mu.Lock()
	e := c.nodes[node.Name]
	relevant := e == nil || e.placeholder || nodeChanged(e.info.Node, node)
	if e == nil || e.placeholder || !maps.Equal(e.info.Node.Labels, node.Labels) {
		// Membership in HyperNodes follows names and labels.
		c.topology = nil
	}
	if e == nil {
		e = &nodeEntry{info: c.newNodeInfo(node)}
		c.nodes[node.Name] = e
	} else {
		e.info.SetNode(node)
		e.placeholder = false
	}
	if relevant {
		c.touchNode(node.Name)
	}
	c.mu.Unlock()
	if relevant {
		c.signal()
	}
}

// nodeChanged reports a change that can alter placement: allocatable,
// labels, taints, cordon, readiness. Heartbeats alone are not.
func nodeChanged(old, cur *corev1.Node) bool {
	return !equality.Semantic.DeepEqual(old.Status.Allocatable, cur.Status.Allocatable) ||
		!maps.Equal(old.Labels, cur.Labels) ||
		!equality.Semantic.DeepEqual(old.Spec.Taints, cur.Spec.Taints) ||
		old.Spec.Unschedulable != cur.Spec.Unschedulable ||
		readyStatus(old) != readyStatus(cur)
}

func readyStatus(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

// DeleteNode forgets a node; it stays as a placeholder while pods name it.
func (c *Cache) DeleteNode(node *corev1.Node) {
	c.mu.Lock()
	c.topology = nil
	if e := c.nodes[node.Name]; e != nil {
		if len(e.info.Tasks) == 0 {
			delete(c.nodes, node.Name)
			c.touchNode(node.Name)
		} else {
			e.placeholder = true
			c.touchNode(node.Name)
		}
	}
	c.mu.Unlock()
	c.signal()
}

// UpdatePodGroup records a PodGroup as it now is.
func (c *Cache) UpdatePodGroup(pg *schedulingv1beta1.PodGroup) {
	id := api.NewJobID(pg.Namespace, pg.Name)
	c.mu.Lock()
	e := c.jobToChangeLocked(id)
	if e == nil {
		e = &jobEntry{info: api.NewJobInfo(id)}
		c.jobs[id] = e
	}
	relevant := e.info.PodGroup == nil || !equality.Semantic.DeepEqual(e.info.PodGroup.Spec, pg.Spec) || e.info.PodGroup.Status.Phase != pg.Status.Phase
	if e.info.PodGroup != nil && e.info.PodGroup.UID != pg.UID {
		// Deleted and made again under its name (its deletion unseen, in a
		// relist): what was decided for the first is not for this one.
		delete(c.kept, id)
	}
	e.info.SetPodGroup(pg)
	e.info.Shadow = false
	if k, ok := c.kept[id]; ok {
		if phaseRank(pg.Status.Phase) < phaseRank(k) {
			e.info.Phase = k
		} else {
			delete(c.kept, id)
		}
	}
	c.setJobPriorityLocked(e.info)
	c.touchJob(id)
	c.mu.Unlock()
	if relevant {
		c.signal()
	}
}

// DeletePodGroup forgets a PodGroup; its pods wait for it to return.
func (c *Cache) DeletePodGroup(pg *schedulingv1beta1.PodGroup) {
	id := api.NewJobID(pg.Namespace, pg.Name)
	c.mu.Lock()
	if e := c.jobToChangeLocked(id); e != nil {
		e.info.PodGroup = nil
		if len(e.info.Tasks) == 0 {
			delete(c.jobs, id)
			c.changeJobLocked(id)
		} else {
			c.touchJob(id)
		}
	}
	delete(c.kept, id)
	c.mu.Unlock()
}

// UpdateQueue records a Queue as it now is.
func (c *Cache) UpdateQueue(q *schedulingv1beta1.Queue) {
	c.mu.Lock()
	c.queues[api.QueueID(q.Name)] = api.NewQueueInfo(q)
	c.queuesDirty = true
	c.mu.Unlock()
	c.signal()
}

// DeleteQueue forgets a Queue.
func (c *Cache) DeleteQueue(q *schedulingv1beta1.Queue) {
	c.mu.Lock()
	delete(c.queues, api.QueueID(q.Name))
	c.mu.Unlock()
}

// UpdateHyperNode records a HyperNode as it now is.
func (c *Cache) UpdateHyperNode(hn *topologyv1alpha1.HyperNode) {
	c.mu.Lock()
	old := c.hyperNodes[hn.Name]
	changed := old == nil || !equality.Semantic.DeepEqual(old.Spec, hn.Spec)
	c.hyperNodes[hn.Name] = hn
	if changed {
		c.topology = nil
	}
	c.mu.Unlock()
	if changed {
		c.signal()
	}
}

// DeleteHyperNode forgets a HyperNode.
func (c *Cache) DeleteHyperNode(hn *topologyv1alpha1.HyperNode) {
	c.mu.Lock()
	delete(c.hyperNodes, hn.Name)
	c.topology = nil
	c.mu.Unlock()
	c.signal()
}

// UpdateNumatopology records a node's report of its CPUs. A report that
// does not read is logged and dropped: the node counts as reporting none.
func (c *Cache) UpdateNumatopology(nt *nodeinfov1alpha1.Numatopology) {
	r, err := numa.FromNumatopology(nt)
	if err != nil {
		c.logger.Info("Numatopology ignored", "node", nt.Name, "err", err)
	}
	c.mu.Lock()
	if r == nil {
		delete(c.numa, nt.Name)
	} else {
		c.numa[nt.Name] = r
	}
	c.numaSnap = nil
	c.mu.Unlock()
	c.signal()
}

// DeleteNumatopology forgets a node's report of its CPUs.
func (c *Cache) DeleteNumatopology(nt *nodeinfov1alpha1.Numatopology) {
	c.mu.Lock()
	delete(c.numa, nt.Name)
	c.numaSnap = nil
	c.mu.Unlock()
	c.signal()
}

// UpdateNodeUsage records a node's measured use. A NodeUsage that does not
// read is logged and dropped: the node counts as measuring nothing.
func (c *Cache) UpdateNodeUsage(nu *metricsv1alpha1.NodeUsage) {
	u, err := loadaware.FromNodeUsage(nu)
	if err != nil {
		c.logger.Info("NodeUsage ignored", "node", nu.Name, "err", err)
	}
	c.SetNodeUsage(nu.Name, u)
}

// SetNodeUsage records a node's measured use, from whichever source; nil
// forgets it. A new measurement changes no placement by itself: the next
// cycle reads it; no cycle is started for it.
func (c *Cache) SetNodeUsage(node string, u *loadaware.Usage) {
	c.mu.Lock()
	if u == nil {
		delete(c.usage, node)
	} else {
		c.usage[node] = u
	}
	c.usageSnap = nil
	c.mu.Unlock()
}

// DeleteNodeUsage forgets a node's measured use.
func (c *Cache) DeleteNodeUsage(nu *metricsv1alpha1.NodeUsage) {
	c.mu.Lock()
	delete(c.usage, nu.Name)
	c.usageSnap = nil
	c.mu.Unlock()
}

// UpdatePriorityClass records a PriorityClass and re-prioritises the jobs
// that use it.
func (c *Cache) UpdatePriorityClass(pc *schedv1.PriorityClass) {
	c.mu.Lock()
	c.priorities[pc.Name] = pc.Value
	if pc.PreemptionPolicy != nil && *pc.PreemptionPolicy == corev1.PreemptNever {
		c.neverPreempt.Insert(pc.Name)
	} else {
		c.neverPreempt.Delete(pc.Name)
	}
	c.reprioritiseLocked(pc.Name)
	c.mu.Unlock()
}

// DeletePriorityClass forgets a PriorityClass.
func (c *Cache) DeletePriorityClass(pc *schedv1.PriorityClass) {
	c.mu.Lock()
	delete(c.priorities, pc.Name)
	c.neverPreempt.Delete(pc.Name)
	c.reprioritiseLocked(pc.Name)
	c.mu.Unlock()
}

func (c *Cache) reprioritiseLocked(class string) {
	for id, e := range c.jobs {
		if pg := e.info.PodGroup; pg != nil && pg.Spec.PriorityClassName == class {
			c.ownLocked(e)
			c.setJobPriorityLocked(e.info)
			c.touchJob(id)
		}
	}
}

// setJobPriorityLocked sets a job's priority and preemption policy: its
// PodGroup's PriorityClass, or else the highest priority among its pods
// and the policy their own classes gave them (admission resolved both).
func (c *Cache) setJobPriorityLocked(j *api.JobInfo) {
	if pg := j.PodGroup; pg != nil && pg.Spec.PriorityClassName != "" {
		j.Priority = c.priorities[pg.Spec.PriorityClassName]
		j.PreemptNever = c.neverPreempt.Has(pg.Spec.PriorityClassName)
		return
	}
	api.SetPriorityFromTasks(j)
}

// Assume records that a task was handed to the binder for node: it holds
// the node's resources from now on, whatever the informers say, until
// Forget or the pod's bound state arrives.
func (c *Cache) Assume(task *api.TaskInfo, node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := c.taskJob[task.UID]
	e := c.jobToChangeLocked(id)
	if e == nil {
		return
	}
	t := e.info.Tasks[task.UID]
	if t == nil || (t.NodeName != "" && t.Status != api.Pipelined) {
		return
	}
	if t.Status == api.Pipelined {
		// A nominated task is bound at last: its claim becomes the bind.
		c.removeFromNodeLocked(t.NodeName, t.UID)
		delete(c.nominated, t.UID)
	}
	e.info.RemoveTask(t)
	assumed := t.Clone()
	assumed.Status = api.Binding
	assumed.NodeName = node
	assumed.GPUIndex = task.GPUIndex
	e.info.AddTask(assumed)
	n := c.nodeLocked(node)
	n.info.AddTask(assumed)
	c.assumed[task.UID] = node
	c.touchJob(id)
	c.touchNode(node)
}

// Forget undoes Assume after a failed bind: the task is pending again.
func (c *Cache) Forget(uid types.UID) {
	c.mu.Lock()
	node, ok := c.assumed[uid]
	if ok {
		delete(c.assumed, uid)
		c.removeFromNodeLocked(node, uid)
		if id, ok := c.taskJob[uid]; ok {
			if e := c.jobToChangeLocked(id); e != nil {
				if t := e.info.Tasks[uid]; t != nil {
					e.info.SetTaskStatus(t, api.Pending)
					t.NodeName = ""
					t.GPUIndex = nil
					c.touchJob(id)
				}
			}
		}
	}
	c.mu.Unlock()
	if ok {
		c.signal()
	}
}

// Confirm moves an assumed task to the node its pod is bound to, when a bind
// whose answer was lost turns out to have been applied on another node (an
// earlier attempt's): the room it takes is counted where it is taken.
func (c *Cache) Confirm(uid types.UID, node string) {
	c.mu.Lock()
	was, ok := c.assumed[uid]
	if !ok || was == node {
		c.mu.Unlock()
		return
	}
	id, ok := c.taskJob[uid]
	e := c.jobToChangeLocked(id)
	if !ok || e == nil || e.info.Tasks[uid] == nil {
		c.mu.Unlock()
		return
	}
	t := e.info.Tasks[uid]
	c.removeFromNodeLocked(was, uid)
	e.info.RemoveTask(t)
	moved := t.Clone()
	moved.NodeName = node
	// The cards were chosen on the other node.
	moved.GPUIndex = nil
	e.info.AddTask(moved)
	c.nodeLocked(node).info.AddTask(moved)
	c.assumed[uid] = node
	c.touchJob(id)
	c.touchNode(was)
	c.touchNode(node)
	c.mu.Unlock()
	c.signal()
}

// Nominate records that a pending task waits for room being freed for it
// on node: from now on it holds a claim there, as a pipelined task. It
// reports whether this changed the task's nomination.
func (c *Cache) Nominate(task *api.TaskInfo, node string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.taskLocked(task.UID)
	if t == nil || c.nominated[task.UID] == node {
		return false
	}
	if t.Status != api.Pending && t.Status != api.Pipelined {
		return false
	}
	if e := c.nodes[node]; e == nil || e.placeholder {
		return false
	}
	c.nominated[task.UID] = node
	c.resetTaskLocked(t, func(t *api.TaskInfo) {
		t.Status = api.Pipelined
		t.NodeName = node
	})
	return true
}

// Unnominate drops a task's nomination: it is pending again and claims
// nothing. It reports whether the task had one.
func (c *Cache) Unnominate(uid types.UID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.nominated[uid]; !ok {
		return false
	}
	delete(c.nominated, uid)
	if t := c.taskLocked(uid); t != nil && t.Status == api.Pipelined {
		c.resetTaskLocked(t, func(t *api.TaskInfo) {
			t.Status = api.Pending
			t.NodeName = ""
		})
	}
	return true
}

// AssumeEvicted records that a task was handed to the evictor: it counts
// as releasing from now on, until its pod shows the deletion or
// ForgetEviction undoes it.
func (c *Cache) AssumeEvicted(task *api.TaskInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.taskLocked(task.UID)
	if t == nil || (t.Status != api.Running && t.Status != api.Bound) {
		return
	}
	c.evicting.Insert(task.UID)
	c.resetTaskLocked(t, func(t *api.TaskInfo) { t.Status = api.Releasing })
}

// ForgetEviction undoes AssumeEvicted after a failed eviction: the task
// runs on as its pod says, and is not chosen as a victim again before
// retryAt.
func (c *Cache) ForgetEviction(uid types.UID, retryAt time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evicting.Delete(uid)
	c.evictRefused[uid] = retryAt
	t := c.taskLocked(uid)
	if t == nil {
		return
	}
	pod := t.Pod
	c.resetTaskLocked(t, func(t *api.TaskInfo) {
		t.Status = api.StatusOfPod(pod)
		t.NoEvictUntil = retryAt
	})
}

// RecordEviction remembers that a task of victim was evicted for by at a
// time, so that victim does not take the room back from by at once.
// Records older than keep are dropped.
func (c *Cache) RecordEviction(victim, by api.JobID, at time.Time, keep time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.jobToChangeLocked(victim)
	if e == nil {
		return
	}
	if e.info.EvictedBy == nil {
		e.info.EvictedBy = map[api.JobID]time.Time{}
	}
	for id, t := range e.info.EvictedBy {
		if at.Sub(t) >= keep {
			delete(e.info.EvictedBy, id)
		}
	}
	e.info.EvictedBy[by] = at
	c.touchJob(victim)
}

// resetTaskLocked changes one of our tasks in place, keeping its job's and
// nodes' accounts in step.
func (c *Cache) resetTaskLocked(t *api.TaskInfo, change func(*api.TaskInfo)) {
	id := t.Job
	e := c.jobToChangeLocked(id)
	if e == nil {
		return
	}
	if t.NodeName != "" {
		c.removeFromNodeLocked(t.NodeName, t.UID)
	}
	e.info.RemoveTask(t)
	nt := t.Clone()
	change(nt)
	e.info.AddTask(nt)
	if nt.NodeName != "" && nt.Status != api.Succeeded && nt.Status != api.Failed {
		n := c.nodeLocked(nt.NodeName)
		n.info.AddTask(nt)
		c.touchNode(nt.NodeName)
	}
	c.touchJob(id)
}

// MarkEnqueued records that a cycle admitted a job: KeepPhases with
// Inqueue.
func (c *Cache) MarkEnqueued(id api.JobID) {
	c.KeepPhases(map[api.JobID]schedulingv1beta1.PodGroupPhase{id: schedulingv1beta1.PodGroupInqueue})
}

// KeepPhases records the phase a cycle decided for each job, so that the
// next cycles start from it while its PodGroup does not show it yet: the
// write may be on its way, or held (a placed gang's Running waits for its
// pods to start). Inqueue, Running and Unknown are kept, each until the
// PodGroup shows it or a later phase; those are what the next phase is
// decided from (an admitted job may be placed, a Running gang that loses
// pods is Unknown). Any other phase decided lets go of what was kept.
func (c *Cache) KeepPhases(phases map[api.JobID]schedulingv1beta1.PodGroupPhase) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, p := range phases {
		e := c.jobToChangeLocked(id)
		if e == nil || e.info.PodGroup == nil {
			continue
		}
		shown := e.info.PodGroup.Status.Phase
		switch {
		case p != schedulingv1beta1.PodGroupInqueue && p != schedulingv1beta1.PodGroupRunning && p != schedulingv1beta1.PodGroupUnknown,
			phaseRank(shown) >= phaseRank(p):
			if _, ok := c.kept[id]; !ok {
				continue
			}
			delete(c.kept, id)
			if e.info.Phase != shown {
				e.info.Phase = shown
				c.changeJobLocked(id)
			}
		default:
			c.kept[id] = p
			if e.info.Phase == p {
				continue
			}
			e.info.Phase = p
			if p == schedulingv1beta1.PodGroupInqueue {
				// An admitted job is tried again for placement.
				c.touchJob(id)
			} else {
				c.changeJobLocked(id)
			}
		}
	}
}

// phaseRank orders PodGroup phases as a job passes through them.
func phaseRank(p schedulingv1beta1.PodGroupPhase) int {
	switch p {
	case schedulingv1beta1.PodGroupInqueue:
		return 1
	case schedulingv1beta1.PodGroupRunning:
		return 2
	case schedulingv1beta1.PodGroupUnknown:
		return 3
	case schedulingv1beta1.PodGroupCompleted:
		return 4
	}
	return 0
}

// AssumedOn lists the tasks assumed on a node, for tests and debugging.
func (c *Cache) AssumedOn(node string) []types.UID {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []types.UID
	for uid, n := range c.assumed {
		if n == node {
			out = append(out, uid)
		}
	}
	slices.Sort(out)
	return out
}
