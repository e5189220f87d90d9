package capacity

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// queueAttr is a queue of the tree with its limits and what its subtree
// holds, admitted and waits for.
type queueAttr struct {
	id api.QueueID
	// info is nil only for a root queue the snapshot lacks.
	info     *api.QueueInfo
	parent   *queueAttr
	children []*queueAttr
	// path runs from the top-level ancestor (a child of root) down to the
	// queue itself; it is empty for root.
	path []*queueAttr

	// effective is the most the subtree may hold: the queue's capability
	// where it names a resource, within the parent's effective amount less
	// what the siblings' subtrees reserve. Root's is the cluster total.
	effective *api.Resource
	guarantee *api.Resource
	// reserved is what the subtree keeps from the rest of the cluster: the
	// queue's guarantee, or its children's reservations if they add up to
	// more.
	reserved *api.Resource
	// deserved is max(spec.deserved, guarantee), at most effective.
	deserved *api.Resource
	// bestEffort: the queue sets neither deserved nor guarantee.
	bestEffort bool

	// allocated is what the subtree's tasks hold, placements of this cycle
	// included.
	allocated *api.Resource
	// inqueue is what admitted jobs of the subtree still need of their
	// minimum resources beyond what they hold.
	inqueue *api.Resource
	// pending is the request of the subtree's pending tasks of admitted
	// jobs (best-effort tasks excluded: allocate does not place them).
	pending *api.Resource
	// unusedChildren is the children's reservations not yet used.
	unusedChildren *api.Resource
	share          float64
}

func newQueueAttr(id api.QueueID, info *api.QueueInfo) *queueAttr {
	return &queueAttr{
		id:             id,
		info:           info,
		guarantee:      &api.Resource{},
		reserved:       &api.Resource{},
		deserved:       &api.Resource{},
		allocated:      &api.Resource{},
		inqueue:        &api.Resource{},
		pending:        &api.Resource{},
		unusedChildren: &api.Resource{},
	}
}

func (a *queueAttr) name() string { return string(a.id) }

func (a *queueAttr) priority() int32 {
	if a.info == nil {
		return 0
	}
	return a.info.Priority
}

// unused is the part of the reservation the subtree does not hold.
func (a *queueAttr) unused() *api.Resource {
	return a.reserved.Clone().Sub(a.allocated).ClampNegatives()
}

func (a *queueAttr) updateShare() {
	if a.bestEffort {
		a.share = 1
		return
	}
	a.share = shareOfDeserved(a.allocated, a.deserved)
}

// shareOfDeserved is the largest fraction of its deserved amount a queue
// holds, over the resources it deserves: a queue that deserves only GPUs is
// compared by GPUs, whatever CPU its pods also use.
func shareOfDeserved(allocated, deserved *api.Resource) float64 {
	share := 0.0
	for _, name := range deserved.Names() {
		if d := deserved.Get(name); name != corev1.ResourcePods && d > 0 {
			share = max(share, float64(allocated.Get(name))/float64(d))
		}
	}
	return share
}

// saturated: the subtree holds at least its deserved amount of every
// resource it deserves. A best-effort queue deserves nothing, so it always
// is.
func (a *queueAttr) saturated() bool {
	for _, name := range a.deserved.Names() {
		if name != corev1.ResourcePods && a.allocated.Get(name) < a.deserved.Get(name) {
			return false
		}
	}
	return true
}

// starving: the subtree is below its deserved amount of a resource its
// admitted pending tasks ask for.
func (a *queueAttr) starving() bool {
	for _, name := range a.deserved.Names() {
		if name != corev1.ResourcePods && a.pending.Get(name) > 0 && a.allocated.Get(name) < a.deserved.Get(name) {
			return true
		}
	}
	return false
}

// Reasons the tree was repaired, as logged.
const (
	repairParentNotFound = "ParentNotFound"
	repairCycle          = "Cycle"
)

// buildTree links the snapshot's queues under root (made up if the snapshot
// lacks it) and computes their limits. A queue whose parent does not exist,
// and one queue of every cycle, hang under root instead.
func (p *Plugin) buildTree(ssn *framework.Session) {
	snap := ssn.Snapshot
	rootID := api.QueueID(schedulingv1beta1.RootQueue)
	p.queues = make(map[api.QueueID]*queueAttr, len(snap.Queues)+1)
	for id, q := range snap.Queues {
		p.queues[id] = newQueueAttr(id, q)
	}
	p.root = p.queues[rootID]
	if p.root == nil {
		p.root = newQueueAttr(rootID, nil)
		p.queues[rootID] = p.root
	}
	ids := make([]api.QueueID, 0, len(p.queues))
	for id := range p.queues {
		ids = append(ids, id)
	}
	slices.Sort(ids)

	for _, id := range ids {
		a := p.queues[id]
		if a == p.root {
			continue
		}
		parentID := a.info.Parent
		if parentID == "" || !p.hierarchy {
			parentID = rootID
		}
		a.parent = p.queues[parentID]
		if a.parent == nil {
			logRepair(ssn.Logger, a, parentID, repairParentNotFound, nil)
			a.parent = p.root
		}
	}
	p.breakCycles(ssn.Logger, ids)
	for _, id := range ids {
		if a := p.queues[id]; a.parent != nil {
			a.parent.children = append(a.parent.children, a)
		}
	}
	p.reserve(p.root)
	p.root.effective = p.total.Clone()
	p.limit(p.root)
}

// breakCycles walks up from every queue; a walk that comes back to a queue
// it passed found a cycle, which is broken by hanging the cycle's queue with
// the smallest name under root.
func (p *Plugin) breakCycles(logger klog.Logger, ids []api.QueueID) {
	const onWalk, reachesRoot = 1, 2
	state := map[*queueAttr]int8{p.root: reachesRoot}
	for _, id := range ids {
		var walk []*queueAttr
		for a := p.queues[id]; state[a] != reachesRoot; a = a.parent {
			if state[a] == onWalk {
				cycle := walk[slices.Index(walk, a):]
				first := slices.MinFunc(cycle, func(x, y *queueAttr) int { return strings.Compare(x.name(), y.name()) })
				names := make([]string, len(cycle))
				for i, q := range cycle {
					names[i] = q.name()
				}
				logRepair(logger, first, first.parent.id, repairCycle, names)
				first.parent = p.root
				break
			}
			state[a] = onWalk
			walk = append(walk, a)
		}
		for _, a := range walk {
			state[a] = reachesRoot
		}
	}
}

func logRepair(logger klog.Logger, a *queueAttr, parent api.QueueID, reason string, cycle []string) {
	kv := []any{"queue", a.name(), "parent", string(parent), "reason", reason}
	if cycle != nil {
		kv = append(kv, "cycle", cycle)
	}
	logger.Info("Invalid queue hierarchy, treating the queue as a child of root", kv...)
}

// reserve computes reservations bottom-up.
func (p *Plugin) reserve(a *queueAttr) {
	if a.info != nil && a.info.Guarantee != nil {
		a.guarantee = a.info.Guarantee.Clone()
	}
	children := &api.Resource{}
	for _, c := range a.children {
		p.reserve(c)
		children.Add(c.reserved)
	}
	a.reserved = a.guarantee.Clone().SetMax(children)
}

// limit computes effective amounts, deserved amounts and paths top-down;
// a.effective is set.
func (p *Plugin) limit(a *queueAttr) {
	reservedByChildren := &api.Resource{}
	for _, c := range a.children {
		reservedByChildren.Add(c.reserved)
	}
	for _, c := range a.children {
		c.path = append(slices.Clip(a.path), c)
		// What the siblings reserve is not c's to take; c may always
		// reach its own reservation.
		c.effective = a.effective.Clone().Sub(reservedByChildren).Add(c.reserved).SetMax(c.reserved).ClampNegatives()
		if c.info.Capability != nil && c.info.Queue != nil {
			for name := range c.info.Queue.Spec.Capability {
				if !c.info.Caps(name) {
					continue
				}
				if v := c.info.Capability.Get(name); v < c.effective.Get(name) {
					set(c.effective, name, v)
				}
			}
		}
		if c.info.Deserved != nil {
			c.deserved = c.info.Deserved.Clone()
		}
		c.deserved.SetMax(c.guarantee)
		c.bestEffort = len(c.deserved.Names()) == 0
		for _, name := range c.deserved.Names() {
			if v := c.effective.Get(name); c.deserved.Get(name) > v {
				set(c.deserved, name, v)
			}
		}
		p.limit(c)
	}
}

// account adds what the snapshot's jobs hold, have been admitted for and
// wait for to their queues, then sums the subtrees.
func (p *Plugin) account(snap *api.Snapshot) {
	p.jobs = make(map[api.JobID]*jobState, len(snap.Jobs))
	p.snapJobs = snap.Jobs
	states := make([]jobState, 0, len(snap.Jobs))
	for _, job := range snap.Jobs {
		a := p.queues[job.Queue]
		if a == nil {
			continue
		}
		states = append(states, jobState{queue: a})
		js := &states[len(states)-1]
		p.jobs[job.UID] = js
		a.allocated.Add(job.Allocated)
		if framework.Admitted(job) {
			js.admitted = true
			addPending(a.pending, job)
		}
		if job.Phase == schedulingv1beta1.PodGroupInqueue && job.MinResources != nil {
			js.inqueue = stillNeeded(job)
			a.inqueue.Add(js.inqueue)
		}
	}
	p.sum(p.root)
}

func (p *Plugin) sum(a *queueAttr) {
	for _, c := range a.children {
		p.sum(c)
		a.allocated.Add(c.allocated)
		a.inqueue.Add(c.inqueue)
		a.pending.Add(c.pending)
		a.unusedChildren.Add(c.unused())
	}
	a.updateShare()
}

// addPending adds the request of a job's pending tasks that allocate places
// to r.
func addPending(r *api.Resource, job *api.JobInfo) {
	for t := range job.TasksIn(api.Pending) {
		if !t.BestEffort {
			r.Add(t.Resreq)
		}
	}
}

// stillNeeded is what an admitted job's minimum asks for beyond what the job
// holds, so that its placed tasks do not count twice.
func stillNeeded(job *api.JobInfo) *api.Resource {
	return job.MinResources.Clone().Sub(job.Allocated).ClampNegatives()
}

// addAllocated changes what a queue and its ancestors hold.
func addAllocated(a *queueAttr, r *api.Resource, sign int) {
	for x := a; x != nil; x = x.parent {
		var before *api.Resource
		tracked := x.parent != nil && !x.reserved.IsEmpty()
		if tracked {
			before = x.unused()
		}
		if sign > 0 {
			x.allocated.Add(r)
		} else {
			x.allocated.Sub(r)
		}
		if tracked {
			x.parent.unusedChildren.Add(x.unused()).Sub(before)
		}
		x.updateShare()
	}
}

// addTo changes one subtree sum of a queue and its ancestors.
func addTo(a *queueAttr, field func(*queueAttr) *api.Resource, r *api.Resource, sign int) {
	for x := a; x != nil; x = x.parent {
		if sign > 0 {
			field(x).Add(r)
		} else {
			field(x).Sub(r)
		}
	}
}

func pendingOf(a *queueAttr) *api.Resource { return a.pending }
func inqueueOf(a *queueAttr) *api.Resource { return a.inqueue }
