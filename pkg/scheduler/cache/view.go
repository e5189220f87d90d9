package cache

import (
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// A view is one consumer's series of snapshots: the scheduling cycle has
// one, and each fast-lane worker its own, so that each decides on a
// snapshot nobody else changes. It keeps the previous snapshot, the nodes
// and jobs changed (or touched by its consumer) since, and what the next
// snapshot patches: the sorted job list and the list of jobs that wait,
// each node's index in the sorted node list, the totals and what each node
// and job added to them.
type view struct {
	// works says which waiting jobs the view's consumer acts on.
	works func(*api.JobInfo) bool

	snap         *api.Snapshot
	changedNodes sets.Set[string]
	changedJobs  sets.Set[api.JobID]
	jobList      []*api.JobInfo
	workList     []*api.JobInfo
	nodeIndex    map[string]int
	totals       *api.Totals
	nodeShares   map[string]nodeShare
	jobShares    map[api.JobID]*api.JobShare
	// lent are the jobs the snapshot shares with the cache (copyJob).
	lent map[api.JobID]bool
}

func (c *Cache) addViewLocked(works func(*api.JobInfo) bool) *view {
	v := &view{
		works:        works,
		changedNodes: sets.New[string](),
		changedJobs:  sets.New[api.JobID](),
		nodeIndex:    map[string]int{},
		nodeShares:   map[string]nodeShare{},
		jobShares:    map[api.JobID]*api.JobShare{},
	}
	c.views = append(c.views, v)
	return v
}

// View is a series of snapshots of its own, for a decision loop running
// beside the scheduling cycle (a fast-lane worker). Its snapshots list as
// waiting only the fast lane's jobs. A View is used by one goroutine.
type View struct {
	c *Cache
	v *view
}

// NewView adds a view; Close removes it. Each view holds a copy of every
// node and job.
func (c *Cache) NewView() *View {
	c.mu.Lock()
	defer c.mu.Unlock()
	return &View{c: c, v: c.addViewLocked(func(j *api.JobInfo) bool { return j.FastLane })}
}

// Close stops keeping the view.
func (v *View) Close() {
	v.c.mu.Lock()
	defer v.c.mu.Unlock()
	v.c.views = slices.DeleteFunc(v.c.views, func(x *view) bool { return x == v.v })
}

// Snapshot returns the view's next snapshot (see Cache.Snapshot).
func (v *View) Snapshot() *api.Snapshot {
	v.c.mu.Lock()
	defer v.c.mu.Unlock()
	return v.c.snapshotLocked(v.v)
}

// Invalidate marks nodes and jobs a decision changed in the view's
// snapshot (see Cache.Invalidate).
func (v *View) Invalidate(nodes map[string]bool, jobs map[api.JobID]bool) {
	v.c.mu.Lock()
	defer v.c.mu.Unlock()
	v.v.invalidate(nodes, jobs)
}

// Snapshot returns the state for a cycle. Objects that did not change since
// the previous snapshot (and that the previous cycle did not touch) are
// shared with it; the rest are copied. The snapshot's maps and lists, and
// the totals, are the previous snapshot's patched where something changed,
// so that a snapshot costs in proportion to change; a snapshot is
// therefore valid only until the next one is taken. The fast lane's jobs
// are in the snapshot (they hold resources and count in their queues) but
// not among the jobs that wait.
func (c *Cache) Snapshot() *api.Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snapshotLocked(c.batch)
}

// Refresh brings the scheduling cycle's snapshot up to date with the cache
// when it lags, as taking a snapshot does, and reports whether it did. Until
// it is patched, a snapshot holds what it was taken from, which the cache
// may since have replaced: older versions of pods and nodes, the jobs it
// lent. A scheduler with nothing to place takes no snapshot, so without
// this a burst of changes seen while idle (binds confirmed, pods starting)
// keeps a second version of every changed pod alive until the next cycle.
// Like Snapshot, it ends the validity of the snapshot before; call it where
// a cycle would start.
func (c *Cache) Refresh() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := c.batch
	if v.snap == nil || (v.changedJobs.Len() == 0 && v.changedNodes.Len() == 0) {
		return false
	}
	c.snapshotLocked(v)
	return true
}

// Invalidate marks nodes and jobs a cycle changed in its snapshot, so that
// the next snapshot copies them afresh from the cache.
func (c *Cache) Invalidate(nodes map[string]bool, jobs map[api.JobID]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.batch.invalidate(nodes, jobs)
}

func (v *view) invalidate(nodes map[string]bool, jobs map[api.JobID]bool) {
	for n := range nodes {
		v.changedNodes.Insert(n)
	}
	for j := range jobs {
		v.changedJobs.Insert(j)
	}
}

func (c *Cache) snapshotLocked(v *view) *api.Snapshot {
	if v.snap == nil {
		c.fullSnapshotLocked(v)
	} else {
		c.patchSnapshotLocked(v)
	}
	v.changedNodes = emptied(v.changedNodes)
	v.changedJobs = emptied(v.changedJobs)
	return v.snap
}

func (v *view) waits(j *api.JobInfo) bool { return j.Waits() && v.works(j) }

// fullSnapshotLocked copies every node and job.
func (c *Cache) fullSnapshotLocked(v *view) {
	snap := &api.Snapshot{
		Nodes: make(map[string]*api.NodeInfo, len(c.nodes)),
		Jobs:  make(map[api.JobID]*api.JobInfo, len(c.jobs)),
	}
	v.totals = api.NewTotals()
	clear(v.nodeShares)
	clear(v.jobShares)
	v.lent = map[api.JobID]bool{}
	for id, e := range c.jobs {
		if e.info.Schedulable() {
			snap.Jobs[id] = v.copyJob(id, e)
		}
	}
	copied := c.copiedTask(v, snap)
	for name, e := range c.nodes {
		if !e.placeholder {
			snap.Nodes[name] = v.copyNode(name, e, copied)
		}
	}
	snap.SortNodes()
	v.indexNodes(snap.NodeList)
	v.jobList = make([]*api.JobInfo, 0, len(snap.Jobs))
	for _, j := range snap.Jobs {
		v.jobList = append(v.jobList, j)
	}
	slices.SortFunc(v.jobList, byJobID)
	v.workList = nil
	for _, j := range v.jobList {
		if v.waits(j) {
			v.workList = append(v.workList, j)
		}
	}
	c.finishSnapshotLocked(v, snap)
}

// patchSnapshotLocked builds on the previous snapshot: only the nodes and
// jobs changed since are copied, and the lists and totals patched.
func (c *Cache) patchSnapshotLocked(v *view) {
	prev := v.snap
	// The maps are the previous snapshot's, changed in place: a snapshot
	// is valid until the next is taken.
	snap := &api.Snapshot{Nodes: prev.Nodes, Jobs: prev.Jobs}
	jobs, work := v.jobList, v.workList
	var addJobs, addWork []*api.JobInfo
	var dropJobs, dropWork []int
	for id := range v.changedJobs {
		if sh := v.jobShares[id]; sh != nil {
			v.totals.AddJob(sh, -1)
			delete(v.jobShares, id)
		}
		var j *api.JobInfo
		if e := c.jobs[id]; e != nil && e.info.Schedulable() {
			j = v.copyJob(id, e)
			snap.Jobs[id] = j
		} else {
			delete(snap.Jobs, id)
			delete(v.lent, id)
		}
		addJobs, dropJobs = patchList(jobs, id, j, addJobs, dropJobs)
		if j != nil && !v.waits(j) {
			j = nil
		}
		addWork, dropWork = patchList(work, id, j, addWork, dropWork)
	}
	v.jobList = mergeJobs(jobs, dropJobs, addJobs)
	v.workList = mergeJobs(work, dropWork, addWork)
	copied := c.copiedTask(v, snap)
	nodeSetChanged := false
	for name := range v.changedNodes {
		if sh, ok := v.nodeShares[name]; ok {
			v.totals.AddNode(sh.allocatable, sh.used, -1)
			delete(v.nodeShares, name)
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
		snap.Nodes[name] = v.copyNode(name, e, copied)
		nodeSetChanged = nodeSetChanged || !had
	}
	if nodeSetChanged {
		snap.SortNodes()
		v.indexNodes(snap.NodeList)
	} else {
		snap.NodeList = prev.NodeList
		for name := range v.changedNodes {
			if n := snap.Nodes[name]; n != nil {
				snap.NodeList[v.nodeIndex[name]] = n
			}
		}
	}

	// A job copied afresh gives its copies of tasks to the nodes not
	// copied afresh that hold them.
	for id := range v.changedJobs {
		j := snap.Jobs[id]
		if j == nil {
			continue
		}
		for uid, t := range j.Tasks {
			if t.NodeName == "" || v.changedNodes.Has(t.NodeName) {
				continue
			}
			if n := snap.Nodes[t.NodeName]; n != nil {
				if cur := n.Tasks[uid]; cur != nil && cur != t && cur.Copies(t) {
					n.Tasks[uid] = t
				}
			}
		}
	}
	c.finishSnapshotLocked(v, snap)
}

// finishSnapshotLocked adds what every snapshot has besides nodes and jobs,
// and keeps it as the base of the view's next.
func (c *Cache) finishSnapshotLocked(v *view, snap *api.Snapshot) {
	snap.Queues = make(map[api.QueueID]*api.QueueInfo, len(c.queues))
	for id, q := range c.queues {
		snap.Queues[id] = q.Clone()
	}
	snap.Topology = c.topologyLocked()
	if c.numaSnap == nil {
		c.numaSnap = maps.Clone(c.numa)
	}
	snap.NUMA = c.numaSnap
	if c.usageSnap == nil {
		c.usageSnap = maps.Clone(c.usage)
	}
	snap.Usage = c.usageSnap
	snap.SetLists(v.jobList, v.workList)
	snap.SetLent(v.lent)
	snap.SetTotals(v.totals.Clone())
	v.snap = snap
}

type nodeShare struct{ allocatable, used *api.Resource }

// copyNode copies a node for a snapshot and adds it to the totals. The
// copy remembers the node's version in the cache, against which a
// placement on it is checked (AssumeGroup).
func (v *view) copyNode(name string, e *nodeEntry, copied func(*api.TaskInfo) *api.TaskInfo) *api.NodeInfo {
	n := e.info.CloneSharing(copied)
	n.CacheVersion = e.info.Version
	sh := nodeShare{allocatable: n.Allocatable.Clone(), used: n.Used.Clone()}
	v.nodeShares[name] = sh
	v.totals.AddNode(sh.allocatable, sh.used, 1)
	return n
}

// copiedTask returns what copyNode asks of the snapshot: the snapshot's
// job's object for a node's task, when the cache's job holds that very
// task: the task itself when the job is lent, else the job's copy of it if
// that has not changed since it was made.
func (c *Cache) copiedTask(v *view, snap *api.Snapshot) func(*api.TaskInfo) *api.TaskInfo {
	return func(t *api.TaskInfo) *api.TaskInfo {
		e, j := c.jobs[t.Job], snap.Jobs[t.Job]
		if e == nil || j == nil || e.info.Tasks[t.UID] != t {
			return nil
		}
		if v.lent[t.Job] {
			// The lent job is the cache's own (ownLocked marks a job it
			// copies changed, and jobs are patched before nodes); the
			// check keeps a node from ever taking another's task.
			if j == e.info {
				return t
			}
			return nil
		}
		if ct := j.Tasks[t.UID]; ct != nil && t.Copies(ct) {
			return ct
		}
		return nil
	}
}

// copyJob copies a job for a snapshot and adds it to the totals. A job
// with nothing to place in the view is lent rather than copied: the
// snapshot shares the cache's, which the cache copies before it changes it
// (ownLocked), and the cycle before it changes it (Snapshot.Own).
func (v *view) copyJob(id api.JobID, e *jobEntry) *api.JobInfo {
	var j *api.JobInfo
	if v.waits(e.info) {
		j = e.info.Clone()
		delete(v.lent, id)
	} else {
		j = e.info
		e.lent = true
		v.lent[id] = true
	}
	sh := api.ShareOf(j)
	v.jobShares[id] = sh
	v.totals.AddJob(sh, 1)
	return j
}

func (v *view) indexNodes(list []*api.NodeInfo) {
	clear(v.nodeIndex)
	for i, n := range list {
		v.nodeIndex[n.Name] = i
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
