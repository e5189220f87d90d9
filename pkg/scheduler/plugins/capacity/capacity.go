// Package capacity shares the cluster among hierarchical queues by their
// per-resource deserved amounts, as Volcano's capacity plugin with
// hierarchical queues does: a queue never holds more than its capability,
// nor more than its parent may (a resource it does not cap is bounded by
// its parent, ultimately by the cluster); guarantees are reserved for their
// queues; a queue may borrow what others leave idle beyond its deserved
// amount, but waits once it holds its deserved amount while a sibling
// below its own waits too. Queues furthest below their deserved amount go
// first, compared with their siblings. Jobs run in leaf queues only.
//
// docs/queues.md describes the rules for users.
package capacity

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/internal/share"
)

// Name is the plugin's name in the configuration.
const Name = "capacity"

// Reason types this plugin gives.
const (
	// ReasonQueueNotLeaf: the job's queue has child queues.
	ReasonQueueNotLeaf = "QueueNotLeaf"
	// ReasonCapabilityExceeded: the queue, or an ancestor, would hold more
	// than it may.
	ReasonCapabilityExceeded = "QueueCapabilityExceeded"
	// ReasonGuaranteeReserved: placing the task would take resources
	// reserved for other queues' guarantees.
	ReasonGuaranteeReserved = "QueueGuaranteeReserved"
)

// Plugin is the capacity plugin. Its state lives from OnSessionOpen to
// OnSessionClose.
type Plugin struct {
	// hierarchy: queues hang under their spec.parent; otherwise every
	// queue is a child of root (Volcano's capacity without enableHierarchy).
	hierarchy bool

	total  *api.Resource
	root   *queueAttr
	queues map[api.QueueID]*queueAttr
	jobs   map[api.JobID]*jobState
	// snapJobs are the snapshot's jobs, looked up afresh where the cycle
	// changes them (a job changes through Snapshot.Own, which may put a
	// copy in its place).
	snapJobs map[api.JobID]*api.JobInfo
}

// jobState is what the plugin accounts for a job.
type jobState struct {
	queue *queueAttr
	// admitted: the job's pending tasks count as its queue's demand.
	admitted bool
	// inqueue is what the job's minimum still needs, nil when the job is
	// not admitted with a minimum.
	inqueue *api.Resource
}

var (
	_ framework.SessionPlugin        = &Plugin{}
	_ framework.QueueOrderPlugin     = &Plugin{}
	_ framework.OverusedPlugin       = &Plugin{}
	_ framework.AllocatablePlugin    = &Plugin{}
	_ framework.JobEnqueueablePlugin = &Plugin{}
	_ framework.JobEnqueuedPlugin    = &Plugin{}
	_ framework.EventHandlerPlugin   = &Plugin{}
	_ framework.ReclaimablePlugin    = &Plugin{}
	_ framework.PreemptivePlugin     = &Plugin{}
	_ framework.VictimDistancePlugin = &Plugin{}
)

// New builds the plugin; it takes no arguments. With the handle's
// Hierarchy (the enableHierarchy switch) queues hang under their
// spec.parent; without it every queue is a child of root and parents are
// ignored.
func New(args any, h *framework.Handle) (framework.Plugin, error) {
	if args != nil {
		return nil, fmt.Errorf("plugin %s takes no arguments, got %T", Name, args)
	}
	return &Plugin{hierarchy: h != nil && h.Hierarchy}, nil
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }

// OnSessionOpen builds the queue tree and accounts the snapshot's jobs.
func (p *Plugin) OnSessionOpen(ssn *framework.Session) {
	p.total = ssn.Snapshot.TotalAllocatable()
	p.buildTree(ssn)
	p.account(ssn.Snapshot)
}

// OnSessionClose reports every queue's share and drops the cycle's state.
func (p *Plugin) OnSessionClose(ssn *framework.Session) {
	for id, a := range p.queues {
		if a.info != nil {
			ssn.ReportQueue(id, framework.QueueReport{Deserved: a.deserved, Allocated: a.allocated, Capability: a.effective, Share: a.share})
		}
	}
	p.total, p.root, p.queues, p.jobs, p.snapJobs = nil, nil, nil, nil, nil
}

// QueueOrder compares the two queues where their paths from root part: the
// sibling with the higher priority goes first, then the one with the
// smaller share of its deserved amount, then one that deserves something
// before a best-effort one.
func (p *Plugin) QueueOrder(l, r *api.QueueInfo) int {
	la, ra := p.queues[l.UID], p.queues[r.UID]
	if la == nil || ra == nil {
		return 0
	}
	for i := 0; i < len(la.path) && i < len(ra.path); i++ {
		if la.path[i] != ra.path[i] {
			la, ra = la.path[i], ra.path[i]
			break
		}
	}
	switch {
	case la.priority() != ra.priority():
		if la.priority() > ra.priority() {
			return -1
		}
		return 1
	case la.share < ra.share:
		return -1
	case la.share > ra.share:
		return 1
	case la.bestEffort != ra.bestEffort:
		if ra.bestEffort {
			return -1
		}
		return 1
	}
	return 0
}

// Overused: the queue, or one of its ancestors, holds at least its deserved
// amount of every resource it deserves while one of its siblings is below
// its deserved amount of a resource its admitted pending tasks ask for.
func (p *Plugin) Overused(q *api.QueueInfo) bool {
	a := p.queues[q.UID]
	if a == nil {
		return false
	}
	for _, x := range a.path {
		if !x.saturated() {
			continue
		}
		for _, s := range x.parent.children {
			if s != x && s.starving() {
				return true
			}
		}
	}
	return false
}

// Allocatable: the queue is a leaf, the task keeps it and every ancestor
// within what they may hold in every resource the task asks for (where that
// is just the cluster's total, the nodes decide), and it leaves room for the
// unused guarantees of other queues.
func (p *Plugin) Allocatable(q *api.QueueInfo, t *api.TaskInfo) (bool, *framework.Reason) {
	a := p.queues[q.UID]
	if a == nil {
		return true, nil
	}
	if len(a.children) > 0 {
		return false, notLeaf(a)
	}
	// Top-down, so that the reason names the queue whose bound binds: a
	// queue's effective amount may be inherited from its ancestors.
	for _, x := range a.path {
		over := exceeded(x.allocated, t.Resreq, x.effective, p.total, false)
		if len(over) == 0 {
			continue
		}
		names := shown(t.Resreq, over)
		future := x.allocated.Clone().Add(t.Resreq)
		if x == a {
			return false, framework.Reasonf(ReasonCapabilityExceeded,
				"queue %s would hold %s with task %s, above what it may hold (%s) in %v",
				a.name(), amounts(future, names), t.Name, amounts(x.effective, names), over)
		}
		return false, framework.Reasonf(ReasonCapabilityExceeded,
			"queue %s would hold %s with task %s of queue %s, above what it may hold (%s) in %v",
			x.name(), amounts(future, names), t.Name, a.name(), amounts(x.effective, names), over)
	}
	for _, x := range a.path {
		if r := p.guaranteesLeft(a, x, t); r != nil {
			return false, r
		}
	}
	return true, nil
}

// guaranteesLeft checks, within x's parent, that x taking the task beyond
// its own reservation leaves the parent room for the unused reservations of
// x's siblings.
func (p *Plugin) guaranteesLeft(a, x *queueAttr, t *api.TaskInfo) *framework.Reason {
	parent := x.parent
	others := parent.unusedChildren.Clone().Sub(x.unused())
	var over []corev1.ResourceName
	for _, name := range t.Resreq.Names() {
		v := t.Resreq.Get(name)
		if v <= 0 || others.Get(name) <= 0 || x.allocated.Get(name)+v <= x.reserved.Get(name) {
			continue
		}
		if parent.allocated.Get(name)+v+others.Get(name) > parent.effective.Get(name) {
			over = append(over, name)
		}
	}
	if len(over) == 0 {
		return nil
	}
	where := "queue " + parent.name()
	if parent == p.root {
		where = "the cluster"
	}
	return framework.Reasonf(ReasonGuaranteeReserved,
		"task %s of queue %s would leave less than the unused guarantees of other queues (%s) free in %s, which would hold %s of %s in %v",
		t.Name, a.name(), amounts(others, over), where, amounts(parent.allocated.Clone().Add(t.Resreq), over), amounts(parent.effective, over), over)
}

// JobEnqueueable admits a job to a leaf queue when its minimum resources,
// with what the queue and each ancestor hold and have admitted, stay within
// what they may hold.
func (p *Plugin) JobEnqueueable(job *api.JobInfo) (framework.Vote, *framework.Reason) {
	a := p.queues[job.Queue]
	if a == nil {
		return framework.Permit, nil
	}
	if len(a.children) > 0 {
		return framework.Reject, notLeaf(a)
	}
	if job.MinResources == nil {
		return framework.Permit, nil
	}
	for _, x := range a.path {
		used := x.allocated.Clone().Add(x.inqueue)
		over := exceeded(used, job.MinResources, x.effective, p.total, true)
		if len(over) == 0 {
			continue
		}
		names := shown(job.MinResources, over)
		if x == a {
			return framework.Reject, framework.Reasonf(ReasonCapabilityExceeded,
				"queue %s cannot admit the job: its minimum (%s) with the queue's allocated (%s) and admitted (%s) resources exceeds what the queue may hold (%s) in %v",
				a.name(), amounts(job.MinResources, names), amounts(x.allocated, names), amounts(x.inqueue, names), amounts(x.effective, names), over)
		}
		return framework.Reject, framework.Reasonf(ReasonCapabilityExceeded,
			"queue %s cannot admit the job: its minimum (%s) with the allocated (%s) and admitted (%s) resources of its ancestor %s exceeds what %s may hold (%s) in %v",
			a.name(), amounts(job.MinResources, names), amounts(x.allocated, names), amounts(x.inqueue, names), x.name(), x.name(), amounts(x.effective, names), over)
	}
	return framework.Permit, nil
}

// JobEnqueued counts an admitted job's minimum and pending tasks against its
// queue and the queue's ancestors.
func (p *Plugin) JobEnqueued(job *api.JobInfo) {
	js := p.jobs[job.UID]
	if js == nil {
		return
	}
	if !js.admitted {
		js.admitted = true
		pending := &api.Resource{}
		addPending(pending, job)
		addTo(js.queue, pendingOf, pending, +1)
	}
	if js.inqueue == nil && job.MinResources != nil {
		js.inqueue = stillNeeded(job)
		addTo(js.queue, inqueueOf, js.inqueue, +1)
	}
}

// OnAllocate follows a placement.
func (p *Plugin) OnAllocate(t *api.TaskInfo) { p.follow(t, +1) }

// OnDeallocate follows an undone placement.
func (p *Plugin) OnDeallocate(t *api.TaskInfo) { p.follow(t, -1) }

func (p *Plugin) follow(t *api.TaskInfo, sign int) {
	js := p.jobs[t.Job]
	if js == nil {
		return
	}
	addAllocated(js.queue, t.Resreq, sign)
	if js.admitted && !t.BestEffort {
		addTo(js.queue, pendingOf, t.Resreq, -sign)
	}
	if js.inqueue != nil {
		// The job holds more (or less) of its minimum itself now.
		still := stillNeeded(p.snapJobs[t.Job])
		addTo(js.queue, inqueueOf, still.Clone().Sub(js.inqueue), +1)
		js.inqueue = still
	}
}

// Reclaimable keeps the candidates the reclaimer's queue may take back: a
// candidate's queue, and each of its ancestors below the queue it shares
// with the reclaimer, must be reclaimable, hold more than it deserves of a
// resource both tasks use, and keep its guarantee without the candidate.
// Candidates are taken in order; those kept count as gone for the next.
func (p *Plugin) Reclaimable(reclaimer *api.TaskInfo, candidates []*api.TaskInfo) []*api.TaskInfo {
	rs := p.jobs[reclaimer.Job]
	if rs == nil {
		return nil
	}
	remaining := map[*queueAttr]*api.Resource{}
	held := func(x *queueAttr) *api.Resource {
		if r, ok := remaining[x]; ok {
			return r
		}
		return x.allocated
	}
	var out []*api.TaskInfo
	for _, c := range candidates {
		vs := p.jobs[c.Job]
		if vs == nil {
			continue
		}
		levels := belowCommonAncestor(vs.queue, rs.queue)
		if len(levels) == 0 {
			continue
		}
		ok := true
		for _, x := range levels {
			if !x.info.Reclaimable || !share.AboveDeserved(held(x), x.deserved, c.Resreq, reclaimer.Resreq) || share.IntoGuarantee(held(x), x.guarantee, c.Resreq) {
				ok = false
				break
			}
		}
		// The two sibling subtrees that compete under the common ancestor:
		// the victim's stays better served than the reclaimer's.
		if r := siblingOf(rs.queue, levels[0]); ok && r != nil &&
			!share.StillFairer(r.allocated, r.deserved, held(levels[0]), levels[0].deserved, c.Resreq, reclaimer.Resreq) {
			ok = false
		}
		if !ok {
			continue
		}
		for _, x := range levels {
			remaining[x] = held(x).Clone().Sub(c.Resreq)
		}
		out = append(out, c)
	}
	return out
}

// Preemptive lets a queue reclaim for a task while the task keeps the queue,
// and each ancestor, within its deserved amount of every resource the task
// asks for that the level deserves. A queue that deserves none of them
// (best-effort) never reclaims.
func (p *Plugin) Preemptive(q *api.QueueInfo, t *api.TaskInfo) bool {
	a := p.queues[q.UID]
	if a == nil || len(a.children) > 0 {
		return false
	}
	deserves := false
	for _, x := range a.path {
		for _, name := range t.Resreq.Names() {
			v, d := t.Resreq.Get(name), x.deserved.Get(name)
			if name == corev1.ResourcePods || v <= 0 || d <= 0 {
				continue
			}
			if x == a {
				deserves = true
			}
			if x.allocated.Get(name)+v > d {
				return false
			}
		}
	}
	return deserves
}

// VictimDistance is how many levels up from the reclaimer's queue the
// victim's queue branches off: 1 for a sibling, 2 for a cousin.
func (p *Plugin) VictimDistance(reclaimer, victim *api.TaskInfo) int {
	rs, vs := p.jobs[reclaimer.Job], p.jobs[victim.Job]
	if rs == nil || vs == nil {
		return 0
	}
	common := len(rs.queue.path) - len(belowCommonAncestor(rs.queue, vs.queue))
	return len(rs.queue.path) - common
}

// siblingOf returns the reclaimer's queue or ancestor that is a sibling of
// x (a queue below the common ancestor on the victim's side); nil when the
// reclaimer's queue is that common ancestor.
func siblingOf(r, x *queueAttr) *queueAttr {
	for _, a := range r.path {
		if a.parent == x.parent {
			return a
		}
	}
	return nil
}

// belowCommonAncestor returns v and its ancestors that are not ancestors of
// r, top-down; nil when v is r or one of r's ancestors.
func belowCommonAncestor(v, r *queueAttr) []*queueAttr {
	i := 0
	for i < len(v.path) && i < len(r.path) && v.path[i] == r.path[i] {
		i++
	}
	return v.path[i:]
}

func notLeaf(a *queueAttr) *framework.Reason {
	names := make([]string, 0, len(a.children))
	for _, c := range a.children {
		names = append(names, c.name())
	}
	return framework.Reasonf(ReasonQueueNotLeaf,
		"queue %s has child queues (%s); jobs may only be submitted to leaf queues",
		a.name(), strings.Join(names, ", "))
}

// Hierarchical reports whether queues hang under their parents.
func (p *Plugin) Hierarchical() bool { return p.hierarchy }
