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
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/topology"
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
}

type nodeEntry struct {
	info *api.NodeInfo
	gen  uint64
	// placeholder: pods name this node but it is not (or no longer) known.
	placeholder bool
}

type jobEntry struct {
	info *api.JobInfo
	gen  uint64
}

// Cache is the scheduler's model of the cluster. All methods are safe for
// concurrent use.
type Cache struct {
	mu             sync.Mutex
	logger         klog.Logger
	schedulerNames sets.Set[string]
	notify         func()

	gen    uint64
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
	// enqueued jobs were admitted by a cycle; their PodGroup may not show
	// it yet.
	enqueued sets.Set[api.JobID]
	// hyperNodes are the network topology's HyperNodes; topology is the
	// tree built from them and the nodes, nil when either changed since.
	hyperNodes map[string]*topologyv1alpha1.HyperNode
	topology   *topology.Tree

	// The previous snapshot and the generations it copied.
	snap      *api.Snapshot
	snapNodes map[string]uint64
	snapJobs  map[api.JobID]uint64
	dirtyNode sets.Set[string]
	dirtyJob  sets.Set[api.JobID]
	// statusDirty are jobs changed since their status was last synced.
	statusDirty sets.Set[api.JobID]
	// withWork are jobs that had work pending when last looked at;
	// recheck are jobs changed since. PendingWork looks at these only.
	withWork sets.Set[api.JobID]
	recheck  sets.Set[api.JobID]
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
	return &Cache{
		logger:         logger,
		schedulerNames: names,
		notify:         o.Notify,
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
		enqueued:       sets.New[api.JobID](),
		hyperNodes:     map[string]*topologyv1alpha1.HyperNode{},
		snapNodes:      map[string]uint64{},
		snapJobs:       map[api.JobID]uint64{},
		dirtyNode:      sets.New[string](),
		dirtyJob:       sets.New[api.JobID](),
		statusDirty:    sets.New[api.JobID](),
		withWork:       sets.New[api.JobID](),
		recheck:        sets.New[api.JobID](),
	}
}

func (c *Cache) signal() {
	if c.notify != nil {
		c.notify()
	}
}

func (c *Cache) next() uint64 {
	c.gen++
	return c.gen
}

func (c *Cache) touchNode(name string) {
	if e := c.nodes[name]; e != nil {
		e.gen = c.next()
	}
}

func (c *Cache) touchJob(id api.JobID) {
	c.recheck.Insert(id)
	if e := c.jobs[id]; e != nil {
		e.gen = c.next()
		c.statusDirty.Insert(id)
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
	c.statusDirty.Clear()
	return out
}

// ours reports whether this scheduler places the pod.
func (c *Cache) ours(pod *corev1.Pod) bool {
	return c.schedulerNames.Has(pod.Spec.SchedulerName)
}

// Snapshot returns the state for a cycle. Objects that did not change since
// the previous snapshot (and that the previous cycle did not touch) are
// shared with it; the rest are copied.
func (c *Cache) Snapshot() *api.Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev := c.snap
	snap := &api.Snapshot{
		Nodes:  make(map[string]*api.NodeInfo, len(c.nodes)),
		Jobs:   make(map[api.JobID]*api.JobInfo, len(c.jobs)),
		Queues: make(map[api.QueueID]*api.QueueInfo, len(c.queues)),
	}
	nodesChanged := prev == nil
	for name, e := range c.nodes {
		if e.placeholder {
			continue
		}
		if prev != nil && c.snapNodes[name] == e.gen && !c.dirtyNode.Has(name) {
			if n := prev.Nodes[name]; n != nil {
				snap.Nodes[name] = n
				continue
			}
		}
		snap.Nodes[name] = e.info.Clone()
		c.snapNodes[name] = e.gen
		nodesChanged = true
	}
	for name := range c.snapNodes {
		if e, ok := c.nodes[name]; !ok || e.placeholder {
			delete(c.snapNodes, name)
			nodesChanged = true
		}
	}
	for id, e := range c.jobs {
		if !e.info.Schedulable() {
			continue
		}
		if prev != nil && c.snapJobs[id] == e.gen && !c.dirtyJob.Has(id) {
			if j := prev.Jobs[id]; j != nil {
				snap.Jobs[id] = j
				continue
			}
		}
		snap.Jobs[id] = e.info.Clone()
		c.snapJobs[id] = e.gen
	}
	for id := range c.snapJobs {
		if _, ok := c.jobs[id]; !ok {
			delete(c.snapJobs, id)
		}
	}
	for id, q := range c.queues {
		snap.Queues[id] = q.Clone()
	}
	snap.Topology = c.topologyLocked()
	if nodesChanged || prev == nil {
		snap.SortNodes()
	} else {
		// Same node set, possibly new copies: rebuild the sorted list from
		// the new map in the previous order.
		snap.NodeList = make([]*api.NodeInfo, len(prev.NodeList))
		for i, n := range prev.NodeList {
			snap.NodeList[i] = snap.Nodes[n.Name]
		}
	}
	c.dirtyNode.Clear()
	c.dirtyJob.Clear()
	c.snap = snap
	return snap
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

// Invalidate marks nodes and jobs a cycle changed in its snapshot, so that
// the next snapshot copies them afresh from the cache.
func (c *Cache) Invalidate(nodes map[string]bool, jobs map[api.JobID]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for n := range nodes {
		c.dirtyNode.Insert(n)
	}
	for j := range jobs {
		c.dirtyJob.Insert(j)
	}
}

// PendingWork reports whether some job waits: a pending task, or a
// PodGroup not yet admitted (its pods may only be created once it is).
func (c *Cache) PendingWork() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Every change to a job touches it, so only the jobs changed since the
	// last call and those that had work then need looking at.
	for id := range c.recheck {
		c.withWork.Insert(id)
	}
	c.recheck.Clear()
	for id := range c.withWork {
		if e := c.jobs[id]; e != nil && hasWork(e.info) {
			return true
		}
		c.withWork.Delete(id)
	}
	return false
}

// hasWork: the job has pods to place (or waiting for room being freed for
// them) or a PodGroup to admit.
func hasWork(j *api.JobInfo) bool {
	if !j.Schedulable() {
		return false
	}
	if len(j.ByStatus[api.Pending]) > 0 || len(j.ByStatus[api.Pipelined]) > 0 {
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
