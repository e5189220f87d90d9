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
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/devices/vgpu"
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
}

type nodeEntry struct {
	info *api.NodeInfo
	// placeholder: pods name this node but it is not (or no longer) known.
	placeholder bool
}

type jobEntry struct {
	info *api.JobInfo
}

// Cache is the scheduler's model of the cluster. All methods are safe for
// concurrent use.
type Cache struct {
	mu             sync.Mutex
	logger         klog.Logger
	schedulerNames sets.Set[string]
	notify         func()
	newMirror      func() api.NodeMirror
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
	// enqueued jobs were admitted by a cycle; their PodGroup may not show
	// it yet.
	enqueued sets.Set[api.JobID]
	// hyperNodes are the network topology's HyperNodes; topology is the
	// tree built from them and the nodes, nil when either changed since.
	hyperNodes map[string]*topologyv1alpha1.HyperNode
	topology   *topology.Tree
	// numa is each node's CPU report by node name; numaSnap the map the
	// snapshots share, nil when numa changed since it was made.
	numa     map[string]*numa.Report
	numaSnap map[string]*numa.Report

	// The previous snapshot, the nodes and jobs changed (or touched by a
	// cycle) since, and what the next snapshot patches: the sorted job
	// list and waiting jobs, each node's index in the sorted node list,
	// the totals and what each node and job added to them.
	snap         *api.Snapshot
	changedNodes sets.Set[string]
	changedJobs  sets.Set[api.JobID]
	jobList      []*api.JobInfo
	workList     []*api.JobInfo
	nodeIndex    map[string]int
	totals       *api.Totals
	nodeShares   map[string]nodeShare
	jobShares    map[api.JobID]*api.JobShare
	// statusDirty are jobs changed since their status was last synced.
	statusDirty sets.Set[api.JobID]
	// queuesDirty: a Queue changed (its status among others) since queue
	// statuses were last synced.
	queuesDirty bool
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
		enqueued:       sets.New[api.JobID](),
		hyperNodes:     map[string]*topologyv1alpha1.HyperNode{},
		numa:           map[string]*numa.Report{},
		changedNodes:   sets.New[string](),
		changedJobs:    sets.New[api.JobID](),
		nodeIndex:      map[string]int{},
		nodeShares:     map[string]nodeShare{},
		jobShares:      map[api.JobID]*api.JobShare{},
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

func (c *Cache) touchNode(name string) {
	c.changedNodes.Insert(name)
}

func (c *Cache) touchJob(id api.JobID) {
	c.recheck.Insert(id)
	c.changedJobs.Insert(id)
	if c.jobs[id] != nil {
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

// ours reports whether this scheduler places the pod.
func (c *Cache) ours(pod *corev1.Pod) bool {
	return c.schedulerNames.Has(pod.Spec.SchedulerName)
}

// Snapshot returns the state for a cycle. Objects that did not change since
// the previous snapshot (and that the previous cycle did not touch) are
// shared with it; the rest are copied. The snapshot's maps and lists, and
// the totals, are the previous snapshot's patched where something changed,
// so that a snapshot costs in proportion to change; a snapshot is
// therefore valid only until the next one is taken.
func (c *Cache) Snapshot() *api.Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap == nil {
		c.fullSnapshotLocked()
	} else {
		c.patchSnapshotLocked()
	}
	c.changedNodes.Clear()
	c.changedJobs.Clear()
	return c.snap
}

// fullSnapshotLocked copies every node and job.
func (c *Cache) fullSnapshotLocked() {
	snap := &api.Snapshot{
		Nodes: make(map[string]*api.NodeInfo, len(c.nodes)),
		Jobs:  make(map[api.JobID]*api.JobInfo, len(c.jobs)),
	}
	c.totals = api.NewTotals()
	clear(c.nodeShares)
	clear(c.jobShares)
	for name, e := range c.nodes {
		if !e.placeholder {
			snap.Nodes[name] = c.copyNodeLocked(name, e)
		}
	}
	for id, e := range c.jobs {
		if e.info.Schedulable() {
			snap.Jobs[id] = c.copyJobLocked(id, e)
		}
	}
	snap.SortNodes()
	c.indexNodes(snap.NodeList)
	c.jobList = make([]*api.JobInfo, 0, len(snap.Jobs))
	for _, j := range snap.Jobs {
		c.jobList = append(c.jobList, j)
	}
	slices.SortFunc(c.jobList, byJobID)
	c.workList = nil
	for _, j := range c.jobList {
		if j.Waits() {
			c.workList = append(c.workList, j)
		}
	}
	c.finishSnapshotLocked(snap)
}

// patchSnapshotLocked builds on the previous snapshot: only the nodes and
// jobs changed since are copied, and the lists and totals patched.
func (c *Cache) patchSnapshotLocked() {
	prev := c.snap
	// The maps are the previous snapshot's, changed in place: a snapshot
	// is valid until the next is taken.
	snap := &api.Snapshot{Nodes: prev.Nodes, Jobs: prev.Jobs}
	nodeSetChanged := false
	for name := range c.changedNodes {
		if sh, ok := c.nodeShares[name]; ok {
			c.totals.AddNode(sh.allocatable, sh.used, -1)
			delete(c.nodeShares, name)
		}
		_, had := snap.Nodes[name]
		e := c.nodes[name]
		if e == nil || e.placeholder {
			if had {
				delete(snap.Nodes, name)
				nodeSetChanged = true
			}
			continue
		}
		snap.Nodes[name] = c.copyNodeLocked(name, e)
		nodeSetChanged = nodeSetChanged || !had
	}
	if nodeSetChanged {
		snap.SortNodes()
		c.indexNodes(snap.NodeList)
	} else {
		snap.NodeList = prev.NodeList
		for name := range c.changedNodes {
			if n := snap.Nodes[name]; n != nil {
				snap.NodeList[c.nodeIndex[name]] = n
			}
		}
	}

	jobs, work := c.jobList, c.workList
	var addJobs, addWork []*api.JobInfo
	var dropJobs, dropWork []int
	for id := range c.changedJobs {
		if sh := c.jobShares[id]; sh != nil {
			c.totals.AddJob(sh, -1)
			delete(c.jobShares, id)
		}
		var j *api.JobInfo
		if e := c.jobs[id]; e != nil && e.info.Schedulable() {
			j = c.copyJobLocked(id, e)
			snap.Jobs[id] = j
		} else {
			delete(snap.Jobs, id)
		}
		addJobs, dropJobs = patchList(jobs, id, j, addJobs, dropJobs)
		if j != nil && !j.Waits() {
			j = nil
		}
		addWork, dropWork = patchList(work, id, j, addWork, dropWork)
	}
	c.jobList = mergeJobs(jobs, dropJobs, addJobs)
	c.workList = mergeJobs(work, dropWork, addWork)
	c.finishSnapshotLocked(snap)
}

// finishSnapshotLocked adds what every snapshot has besides nodes and jobs,
// and keeps it as the base of the next.
func (c *Cache) finishSnapshotLocked(snap *api.Snapshot) {
	snap.Queues = make(map[api.QueueID]*api.QueueInfo, len(c.queues))
	for id, q := range c.queues {
		snap.Queues[id] = q.Clone()
	}
	snap.Topology = c.topologyLocked()
	if c.numaSnap == nil {
		c.numaSnap = maps.Clone(c.numa)
	}
	snap.NUMA = c.numaSnap
	snap.SetLists(c.jobList, c.workList)
	snap.SetTotals(c.totals.Clone())
	c.snap = snap
}

type nodeShare struct{ allocatable, used *api.Resource }

// copyNodeLocked copies a node for a snapshot and adds it to the totals.
func (c *Cache) copyNodeLocked(name string, e *nodeEntry) *api.NodeInfo {
	n := e.info.Clone()
	sh := nodeShare{allocatable: n.Allocatable.Clone(), used: n.Used.Clone()}
	c.nodeShares[name] = sh
	c.totals.AddNode(sh.allocatable, sh.used, 1)
	return n
}

// copyJobLocked copies a job for a snapshot and adds it to the totals.
func (c *Cache) copyJobLocked(id api.JobID, e *jobEntry) *api.JobInfo {
	j := e.info.Clone()
	sh := api.ShareOf(j)
	c.jobShares[id] = sh
	c.totals.AddJob(sh, 1)
	return j
}

func (c *Cache) indexNodes(list []*api.NodeInfo) {
	clear(c.nodeIndex)
	for i, n := range list {
		c.nodeIndex[n.Name] = i
	}
}

func byJobID(a, b *api.JobInfo) int { return strings.Compare(string(a.UID), string(b.UID)) }

// patchList notes what becomes of job id in list, sorted by ID: replaced
// by j in place, dropped (its index added to drop) when j is nil, or added
// (to add) when it is not in the list yet.
func patchList(list []*api.JobInfo, id api.JobID, j *api.JobInfo, add []*api.JobInfo, drop []int) ([]*api.JobInfo, []int) {
	i, found := slices.BinarySearchFunc(list, id, func(x *api.JobInfo, id api.JobID) int {
		return strings.Compare(string(x.UID), string(id))
	})
	switch {
	case found && j != nil:
		list[i] = j
	case found:
		drop = append(drop, i)
	case j != nil:
		add = append(add, j)
	}
	return add, drop
}

// mergeJobs removes the entries at drop from list, sorted by ID, and
// inserts add into it, in place. A cycle adds few jobs: each goes where a
// binary search puts it.
func mergeJobs(list []*api.JobInfo, drop []int, add []*api.JobInfo) []*api.JobInfo {
	if len(drop) > 0 {
		slices.Sort(drop)
		kept := list[:0]
		d := 0
		for i, j := range list {
			if d < len(drop) && drop[d] == i {
				d++
				continue
			}
			kept = append(kept, j)
		}
		clear(list[len(kept):])
		list = kept
	}
	if len(add) == 0 {
		return list
	}
	slices.SortFunc(add, byJobID)
	if len(add) > 64 {
		out := make([]*api.JobInfo, 0, len(list)+len(add))
		i, k := 0, 0
		for i < len(list) && k < len(add) {
			if byJobID(list[i], add[k]) < 0 {
				out = append(out, list[i])
				i++
			} else {
				out = append(out, add[k])
				k++
			}
		}
		out = append(out, list[i:]...)
		return append(out, add[k:]...)
	}
	from := 0
	for _, j := range add {
		i, _ := slices.BinarySearchFunc(list[from:], j, byJobID)
		list = slices.Insert(list, from+i, j)
		from += i + 1
	}
	return list
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
		c.changedNodes.Insert(n)
	}
	for j := range jobs {
		c.changedJobs.Insert(j)
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
