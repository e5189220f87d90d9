// Package cache holds the scheduler's model of the cluster, fed by informer
// events, and hands each cycle a snapshot that copies only the nodes and
// jobs that changed since the previous one, so that a cycle costs in
// proportion to change rather than to cluster size.
//
// It also remembers placements handed to the binder ("assumed" tasks) until
// the API server confirms or refuses them, so that a cycle never places a
// task twice or on resources already promised.
package cache

import (
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/devices/vgpu"
	"github.com/caldera-sh/caldera/pkg/loadaware"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/topology"
	"github.com/caldera-sh/caldera/pkg/topology/numa"
)

// Options configure a cache.
type Options struct {
	// SchedulerNames are the schedulerName values of the pods this scheduler
	// places. Other pods only count against their nodes.
	SchedulerNames []string
	// Notify is called (without the cache's lock held) after a change that
	// may let pending work be placed.
	Notify func()
	Logger klog.Logger
	// NewNodeMirror, when set, gives every node a mirror as it is made
	// (see api.NodeMirror), kept in step by the cache's own copy and
	// copied into snapshots.
	NewNodeMirror func() api.NodeMirror
	// FastLane selects the pods the fast lane places (see fastLanePod);
	// its schedulerNames are served besides SchedulerNames.
	FastLane FastLaneSelector
}

// FastLaneSelector names the fast lane's pods: by schedulerName, or by the
// queue of a pod that forms a job of its own.
type FastLaneSelector struct {
	SchedulerNames []string
	Queues         []string
}

type nodeEntry struct {
	info *api.NodeInfo
	// placeholder: pods name this node but it is not (or no longer) known.
	placeholder bool
}

type jobEntry struct {
	info *api.JobInfo
	// lent: a snapshot shares info, so the cache changes a copy of it
	// (ownLocked) instead.
	lent bool
}

// Cache is the scheduler's model of the cluster. All methods are safe for
// concurrent use.
type Cache struct {
	mu             sync.Mutex
	logger         klog.Logger
	schedulerNames sets.Set[string]
	// fastNames and fastQueues select the fast lane's pods.
	fastNames, fastQueues sets.Set[string]
	notify                func()
	newMirror             func() api.NodeMirror
	// migGeometries are given to every node (SetMIGGeometries).
	migGeometries []vgpu.Geometry
	// placeable, when set, fences off the nodes it refuses, or with
	// softFence makes them a last resort (SetPlaceable).
	placeable func(node string) bool
	softFence bool
	// podVersion is the latest resourceVersion of the pod events
	// processed (PodsSeenSince).
	podVersion uint64

	nodes  map[string]*nodeEntry
	jobs   map[api.JobID]*jobEntry
	queues map[api.QueueID]*api.QueueInfo
	// taskJob remembers the job of every task, also of tasks whose job key
	// changed, so that updates find the old entry.
	taskJob map[types.UID]api.JobID
	// podNode remembers the node of pods that are not ours.
	podNode map[types.UID]string
	// priorities maps PriorityClass names to values; neverPreempt holds
	// the classes whose preemptionPolicy is Never.
	priorities   map[string]int32
	neverPreempt sets.Set[string]
	// assumed tasks have been sent to the binder and are not yet confirmed.
	assumed map[types.UID]string
	// nominated pending tasks wait for room being freed for them on a
	// node (preemption, reclaim); they hold that claim there.
	nominated map[types.UID]string
	// evicting tasks were handed to the evictor: they count as releasing
	// until their pod shows it, or until the eviction fails. evictRefused
	// holds when an eviction of a pod last failed.
	evicting     sets.Set[types.UID]
	evictRefused map[types.UID]time.Time
	// kept are the phases cycles decided for jobs that their PodGroups may
	// not show yet (KeepPhases).
	kept map[api.JobID]schedulingv1beta1.PodGroupPhase
	// hyperNodes are the network topology's HyperNodes; topology is the
	// tree built from them and the nodes, nil when either changed since.
	hyperNodes map[string]*topologyv1alpha1.HyperNode
	topology   *topology.Tree
	// numa is each node's CPU report by node name; numaSnap the map the
	// snapshots share, nil when numa changed since it was made.
	numa     map[string]*numa.Report
	numaSnap map[string]*numa.Report
	// usage is each node's measured use by node name; usageSnap the map
	// the snapshots share, nil when usage changed since it was made.
	usage     map[string]*loadaware.Usage
	usageSnap map[string]*loadaware.Usage

	// batch is the scheduling cycle's view; views are every view, the
	// fast lane's workers' among them (NewView).
	batch *view
	views []*view
	// statusDirty are jobs changed since their status was last synced.
	statusDirty sets.Set[api.JobID]
	// queuesDirty: a Queue changed (its status among others) since queue
	// statuses were last synced.
	queuesDirty bool
	// withWork are jobs that had work pending when last looked at;
	// recheck are jobs changed since. PendingWork looks at these only.
	withWork sets.Set[api.JobID]
	recheck  sets.Set[api.JobID]
	// fastWork and fastRecheck are the same for the fast lane's jobs
	// (FastWork).
	fastWork    sets.Set[api.JobID]
	fastRecheck sets.Set[api.JobID]
}

// New returns an empty cache.
func New(o Options) *Cache {
	names := sets.New(o.SchedulerNames...)
	if names.Len() == 0 {
		names.Insert("volcano")
	}
	logger := o.Logger
	if logger.GetSink() == nil {
		logger = klog.Background()
	}
	c := &Cache{
		logger:         logger,
		schedulerNames: names.Union(sets.New(o.FastLane.SchedulerNames...)),
		fastNames:      sets.New(o.FastLane.SchedulerNames...),
		fastQueues:     sets.New(o.FastLane.Queues...),
		notify:         o.Notify,
		newMirror:      o.NewNodeMirror,
		nodes:          map[string]*nodeEntry{},
		jobs:           map[api.JobID]*jobEntry{},
		queues:         map[api.QueueID]*api.QueueInfo{},
		taskJob:        map[types.UID]api.JobID{},
		podNode:        map[types.UID]string{},
		priorities:     map[string]int32{},
		neverPreempt:   sets.New[string](),
		assumed:        map[types.UID]string{},
		nominated:      map[types.UID]string{},
		evicting:       sets.New[types.UID](),
		evictRefused:   map[types.UID]time.Time{},
		kept:           map[api.JobID]schedulingv1beta1.PodGroupPhase{},
		hyperNodes:     map[string]*topologyv1alpha1.HyperNode{},
		numa:           map[string]*numa.Report{},
		usage:          map[string]*loadaware.Usage{},
		statusDirty:    sets.New[api.JobID](),
		withWork:       sets.New[api.JobID](),
		recheck:        sets.New[api.JobID](),
		fastRecheck:    sets.New[api.JobID](),
		fastWork:       sets.New[api.JobID](),
	}
	c.batch = c.addViewLocked(func(j *api.JobInfo) bool { return !j.FastLane })
	return c
}

func (c *Cache) signal() {
	if c.notify != nil {
		c.notify()
	}
}

func (c *Cache) touchNode(name string) {
	for _, v := range c.views {
		v.changedNodes.Insert(name)
	}
}

// ownLocked makes e's job the cache's own to change: a job lent to a
// snapshot is copied, its tasks too, and the copy takes its place in the
// cache and on the nodes that hold its tasks. The snapshot keeps the
// original, which nobody changes from then on. Every change to a job or to
// one of its tasks comes after this.
func (c *Cache) ownLocked(e *jobEntry) {
	if e == nil || !e.lent {
		return
	}
	old := e.info
	e.info = old.Clone()
	e.lent = false
	// Snapshots take the copy next time, even if nothing else changes.
	c.changeJobLocked(e.info.UID)
	for uid, t := range e.info.Tasks {
		if t.NodeName == "" {
			continue
		}
		if ne := c.nodes[t.NodeName]; ne != nil && ne.info.Tasks[uid] == old.Tasks[uid] {
			ne.info.Tasks[uid] = t
		}
	}
}

// jobToChangeLocked returns job id's entry, its job the cache's own to
// change (ownLocked); nil when the cache has no such job.
func (c *Cache) jobToChangeLocked(id api.JobID) *jobEntry {
	e := c.jobs[id]
	c.ownLocked(e)
	return e
}

func (c *Cache) touchJob(id api.JobID) {
	e := c.jobs[id]
	if e != nil && e.info.FastLane {
		c.fastRecheck.Insert(id)
	} else {
		c.recheck.Insert(id)
	}
	c.changeJobLocked(id)
	if e != nil {
		c.statusDirty.Insert(id)
	}
}

// changeJobLocked marks a job for copying afresh into every view's next
// snapshot.
func (c *Cache) changeJobLocked(id api.JobID) {
	for _, v := range c.views {
		v.changedJobs.Insert(id)
	}
}

// TakeStatusDirty returns the jobs that changed since the last call, whose
// status may need writing, and forgets them.
func (c *Cache) TakeStatusDirty() map[api.JobID]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[api.JobID]bool, c.statusDirty.Len())
	for id := range c.statusDirty {
		out[id] = true
	}
	c.statusDirty = emptied(c.statusDirty)
	return out
}

// emptied returns s without its members. A set that held many is replaced:
// a map keeps the table it grew to after a burst, however few it holds
// later.
func emptied[T comparable](s sets.Set[T]) sets.Set[T] {
	if len(s) > 1024 {
		return sets.New[T]()
	}
	clear(s)
	return s
}

// TakeQueuesDirty reports whether a Queue changed since the last call: its
// status as the API server shows it may differ from what the scheduler
// computes (a write the informer had not shown yet when the status was
// last compared), and must be compared again.
func (c *Cache) TakeQueuesDirty() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.queuesDirty
	c.queuesDirty = false
	return d
}

// fastLanePod reports whether the fast lane places a pod of this
// scheduler: it names no PodGroup; its schedulerName is the fast lane's,
// or its queue is and no workload owns it (a workload's pods get a
// PodGroup); and it needs nothing the fast lane does not prepare (volumes
// to bind, resource claims, shared or virtual GPUs), which stays with the
// scheduling cycle.
func (c *Cache) fastLanePod(pod *corev1.Pod, t *api.TaskInfo) bool {
	if pod.Annotations[schedulingv1beta1.KubeGroupNameAnnotation] != "" {
		return false
	}
	queue := pod.Annotations[schedulingv1beta1.QueueNameAnnotation]
	if queue == "" {
		queue = schedulingv1beta1.DefaultQueue
	}
	if !c.fastNames.Has(pod.Spec.SchedulerName) && !(c.fastQueues.Has(queue) && api.Standalone(pod)) {
		return false
	}
	if len(pod.Spec.ResourceClaims) > 0 || t.GPU.Any() || t.VGPU != nil {
		return false
	}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
			return false
		}
	}
	return true
}

// ours reports whether this scheduler places the pod.
func (c *Cache) ours(pod *corev1.Pod) bool {
	return c.schedulerNames.Has(pod.Spec.SchedulerName)
}

// topologyLocked returns the network topology tree, building it afresh
// after a HyperNode or a node's membership may have changed.
func (c *Cache) topologyLocked() *topology.Tree {
	if c.topology != nil {
		return c.topology
	}
	hns := make([]*topologyv1alpha1.HyperNode, 0, len(c.hyperNodes))
	for _, hn := range c.hyperNodes {
		hns = append(hns, hn)
	}
	nodes := make([]*corev1.Node, 0, len(c.nodes))
	for _, e := range c.nodes {
		if !e.placeholder {
			nodes = append(nodes, e.info.Node)
		}
	}
	c.topology = topology.Build(hns, nodes)
	for _, p := range c.topology.Problems {
		c.logger.V(2).Info("HyperNode problem", "hyperNode", p.HyperNode, "reason", p.Reason, "message", p.Message)
	}
	return c.topology
}

// PendingWork reports whether some job of the scheduling cycle waits: a
// pending task, or a PodGroup not yet admitted (its pods may only be
// created once it is). The fast lane's jobs are not counted (FastWork).
func (c *Cache) PendingWork() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pendingLocked(c.withWork, &c.recheck)
}

// FastWork reports whether a job of the fast lane waits.
func (c *Cache) FastWork() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pendingLocked(c.fastWork, &c.fastRecheck)
}

func (c *Cache) pendingLocked(withWork sets.Set[api.JobID], recheck *sets.Set[api.JobID]) bool {
	// Every change to a job touches it, so only the jobs changed since the
	// last call and those that had work then need looking at.
	for id := range *recheck {
		withWork.Insert(id)
	}
	*recheck = emptied(*recheck)
	for id := range withWork {
		if e := c.jobs[id]; e != nil && hasWork(e.info) {
			return true
		}
		withWork.Delete(id)
	}
	return false
}

// hasWork: the job has pods to place (or waiting for room being freed for
// them) or a PodGroup to admit.
func hasWork(j *api.JobInfo) bool {
	if !j.Schedulable() {
		return false
	}
	if j.CountIn(api.Pending, api.Pipelined) > 0 {
		return true
	}
	return !j.Shadow && (j.Phase == "" || j.Phase == schedulingv1beta1.PodGroupPending)
}

// Stats are counts for logs and metrics.
type Stats struct {
	Nodes, Jobs, Queues, Assumed int
}

// Stats returns the cache's counts.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Nodes: len(c.nodes), Jobs: len(c.jobs), Queues: len(c.queues), Assumed: len(c.assumed)}
}

// QueueNames lists the queues, sorted.
func (c *Cache) QueueNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.queues))
	for id := range c.queues {
		out = append(out, string(id))
	}
	slices.Sort(out)
	return out
}

// Job returns a copy of a job, for status writing.
func (c *Cache) Job(id api.JobID) *api.JobInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.jobs[id]; e != nil {
		return e.info.Clone()
	}
	return nil
}
