// Package proportion divides the cluster among queues by weight: each queue
// deserves a share of the cluster computed by water-filling (weights, capped
// by the queue's capability and by what its jobs request, raised to its
// guarantee); queues furthest below their share go first; a queue that has
// reached its share takes no new jobs while others wait, and no queue ever
// exceeds its capability.
package proportion

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/internal/share"
)

// Name is the plugin's name in the configuration.
const Name = "proportion"

type queueAttr struct {
	queue *api.QueueInfo
	// capability is what the queue may ever hold: its capability (for the
	// resources it caps) and at most the cluster less others' guarantees.
	capability *api.Resource
	guarantee  *api.Resource
	request    *api.Resource
	allocated  *api.Resource
	// inqueue is the minimum resources of admitted jobs not yet placed.
	inqueue  *api.Resource
	deserved *api.Resource
	share    float64
}

// Plugin is the proportion plugin.
type Plugin struct {
	total  *api.Resource
	queues map[api.QueueID]*queueAttr
	// jobs are the snapshot's.
	jobs map[api.JobID]*api.JobInfo
}

var (
	_ framework.SessionPlugin        = &Plugin{}
	_ framework.QueueOrderPlugin     = &Plugin{}
	_ framework.OverusedPlugin       = &Plugin{}
	_ framework.AllocatablePlugin    = &Plugin{}
	_ framework.JobEnqueueablePlugin = &Plugin{}
	_ framework.JobEnqueuedPlugin    = &Plugin{}
	_ framework.EventHandlerPlugin   = &Plugin{}
	_ framework.PreemptivePlugin     = &Plugin{}
	_ framework.ReclaimablePlugin    = &Plugin{}
)

// New builds the plugin; it takes no arguments.
var New = framework.NoArgs(Name, func() framework.Plugin { return &Plugin{} })

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }

// OnSessionOpen computes every queue's allocation, request and deserved share.
func (p *Plugin) OnSessionOpen(ssn *framework.Session) {
	p.total = ssn.Snapshot.TotalAllocatable()
	p.queues = map[api.QueueID]*queueAttr{}
	totalGuarantee := &api.Resource{}
	for id, q := range ssn.Snapshot.Queues {
		a := &queueAttr{
			queue:     q,
			guarantee: &api.Resource{},
			request:   &api.Resource{},
			allocated: &api.Resource{},
			inqueue:   &api.Resource{},
			deserved:  &api.Resource{},
		}
		if q.Guarantee != nil {
			a.guarantee = q.Guarantee.Clone()
		}
		totalGuarantee.Add(a.guarantee)
		p.queues[id] = a
	}
	for _, a := range p.queues {
		a.capability = p.total.Clone().Sub(totalGuarantee).Add(a.guarantee)
		if c := a.queue.Capability; c != nil {
			for _, name := range c.Names() {
				if a.queue.Caps(name) && c.Get(name) < a.capability.Get(name) {
					a.capability.Set(name, c.Get(name))
				}
			}
		}
	}
	p.jobs = ssn.Snapshot.Jobs
	totals := ssn.Snapshot.Totals()
	for id, a := range p.queues {
		t := totals.Queue(id)
		a.allocated.Add(t.Allocated)
		a.request.Add(t.Request)
		a.inqueue.Add(t.InqueueMin)
	}
	p.divide()
	for _, a := range p.queues {
		a.share = a.allocated.Share(a.deserved)
	}
}

// divide water-fills the cluster over the queues by weight.
func (p *Plugin) divide() {
	remaining := p.total.Clone()
	attrs := make([]*queueAttr, 0, len(p.queues))
	for _, a := range p.queues {
		attrs = append(attrs, a)
	}
	slices.SortFunc(attrs, func(a, b *queueAttr) int {
		switch {
		case a.queue.Name < b.queue.Name:
			return -1
		case a.queue.Name > b.queue.Name:
			return 1
		}
		return 0
	})
	met := map[api.QueueID]bool{}
	for {
		var totalWeight int64
		for _, a := range attrs {
			if !met[a.queue.UID] {
				totalWeight += int64(a.queue.Weight)
			}
		}
		if totalWeight == 0 {
			return
		}
		increased := &api.Resource{}
		for _, a := range attrs {
			if met[a.queue.UID] {
				continue
			}
			old := a.deserved.Clone()
			a.deserved.Add(remaining.Clone().Multiply(float64(a.queue.Weight) / float64(totalWeight)))
			a.deserved.SetMin(a.capability)
			a.deserved.SetMin(a.request)
			a.deserved.SetMax(a.guarantee)
			if a.request.LessEqual(a.deserved) || a.deserved.Equal(a.capability) {
				met[a.queue.UID] = true
			}
			increased.Add(a.deserved.Clone().Sub(old))
		}
		remaining.Sub(increased)
		if increased.Share(p.total) == 0 || remaining.Share(p.total) == 0 {
			return
		}
	}
}

// OnSessionClose reports every queue's share and drops the cycle's state.
func (p *Plugin) OnSessionClose(ssn *framework.Session) {
	for id, a := range p.queues {
		ssn.ReportQueue(id, framework.QueueReport{Deserved: a.deserved, Allocated: a.allocated, Capability: a.capability, Share: a.share})
	}
	p.queues, p.jobs, p.total = nil, nil, nil
}

// QueueOrder puts the queue with the smaller share of what it deserves first.
func (p *Plugin) QueueOrder(l, r *api.QueueInfo) int {
	la, ra := p.queues[l.UID], p.queues[r.UID]
	if la == nil || ra == nil {
		return 0
	}
	switch {
	case la.share < ra.share:
		return -1
	case la.share > ra.share:
		return 1
	}
	return 0
}

// Overused: the queue holds at least what it deserves in every resource.
func (p *Plugin) Overused(q *api.QueueInfo) bool {
	a := p.queues[q.UID]
	return a != nil && a.deserved.LessEqual(a.allocated)
}

// Allocatable: the task keeps the queue within its capability in every
// resource the task requests.
func (p *Plugin) Allocatable(q *api.QueueInfo, t *api.TaskInfo) (bool, *framework.Reason) {
	a := p.queues[q.UID]
	if a == nil {
		return true, nil
	}
	if none := p.noNodeHas(t.Resreq); len(none) > 0 {
		return false, framework.Reasonf("NoNodeHasResource", "no node has %s, which task %s asks for", strings.Join(none, ", "), t.Name)
	}
	future := a.allocated.Clone().Add(t.Resreq)
	if over := exceeded(future, a.capability, t.Resreq); len(over) > 0 {
		return false, framework.Reasonf("QueueCapabilityExceeded",
			"queue %s would hold %s with task %s, above what it may hold (%s) in %v",
			q.Name, withoutPods(future), t.Name, withoutPods(a.capability), over)
	}
	return true, nil
}

// Preemptive lets a queue reclaim for a task while the task keeps it within
// its deserved share of every resource the task asks for that the queue
// deserves.
func (p *Plugin) Preemptive(q *api.QueueInfo, t *api.TaskInfo) bool {
	a := p.queues[q.UID]
	if a == nil {
		return false
	}
	deserves := false
	for _, name := range t.Resreq.Names() {
		v, d := t.Resreq.Get(name), a.deserved.Get(name)
		if name == corev1.ResourcePods || v <= 0 || d <= 0 {
			continue
		}
		deserves = true
		if a.allocated.Get(name)+v > d {
			return false
		}
	}
	return deserves
}

// Reclaimable keeps the candidates of other reclaimable queues that hold
// more than they deserve of a resource the candidate frees and the
// reclaimer asks for, and that keep their guarantee without it. Candidates
// are taken in order; those kept count as gone for the next.
func (p *Plugin) Reclaimable(reclaimer *api.TaskInfo, candidates []*api.TaskInfo) []*api.TaskInfo {
	own := p.queueOf(reclaimer.Job)
	held := map[api.QueueID]*api.Resource{}
	var out []*api.TaskInfo
	for _, c := range candidates {
		id := p.queueOf(c.Job)
		a := p.queues[id]
		if a == nil || id == own || !a.queue.Reclaimable {
			continue
		}
		h := held[id]
		if h == nil {
			h = a.allocated.Clone()
		}
		if !share.AboveDeserved(h, a.deserved, c.Resreq, reclaimer.Resreq) || share.IntoGuarantee(h, a.guarantee, c.Resreq) {
			continue
		}
		if r := p.queues[own]; r != nil && !share.StillFairer(r.allocated, r.deserved, h, a.deserved, c.Resreq, reclaimer.Resreq) {
			continue
		}
		held[id] = h.Sub(c.Resreq)
		out = append(out, c)
	}
	return out
}

// JobEnqueueable admits a job when its minimum resources fit in the queue's
// capability beside what the queue holds and has admitted.
func (p *Plugin) JobEnqueueable(job *api.JobInfo) (framework.Vote, *framework.Reason) {
	a := p.queues[job.Queue]
	if a == nil || job.MinResources == nil {
		return framework.Permit, nil
	}
	if none := p.noNodeHas(job.MinResources); len(none) > 0 {
		return framework.Reject, framework.Reasonf("NoNodeHasResource",
			"no node has %s, which the job's minimum (%s) asks for", strings.Join(none, ", "), withoutPods(job.MinResources))
	}
	future := a.allocated.Clone().Add(a.inqueue).Add(job.MinResources)
	if over := exceeded(future, a.capability, job.MinResources); len(over) > 0 {
		return framework.Reject, framework.Reasonf("QueueCapabilityExceeded",
			"queue %s cannot admit the job: its minimum (%s) with the queue's allocated (%s) and admitted (%s) resources exceeds what the queue may hold (%s) in %v",
			job.Queue, withoutPods(job.MinResources), withoutPods(a.allocated), withoutPods(a.inqueue), withoutPods(a.capability), over)
	}
	return framework.Permit, nil
}

// noNodeHas lists the resources req asks for that no node has: a queue's
// capability in them is zero, but the queue is not what keeps the work
// waiting.
func (p *Plugin) noNodeHas(req *api.Resource) []string {
	var out []string
	for _, name := range req.Names() {
		if name != corev1.ResourcePods && req.Get(name) > 0 && p.total.Get(name) <= 0 {
			out = append(out, string(name))
		}
	}
	slices.Sort(out)
	return out
}

// JobEnqueued counts an admitted job's minimum against its queue.
func (p *Plugin) JobEnqueued(job *api.JobInfo) {
	if a := p.queues[job.Queue]; a != nil && job.MinResources != nil {
		a.inqueue.Add(job.MinResources)
	}
}

// OnAllocate follows a placement.
func (p *Plugin) OnAllocate(t *api.TaskInfo) { p.account(t, true) }

// OnDeallocate follows an undone placement.
func (p *Plugin) OnDeallocate(t *api.TaskInfo) { p.account(t, false) }

func (p *Plugin) account(t *api.TaskInfo, add bool) {
	a := p.queues[p.queueOf(t.Job)]
	if a == nil {
		return
	}
	if add {
		a.allocated.Add(t.Resreq)
	} else {
		a.allocated.Sub(t.Resreq)
	}
	a.share = a.allocated.Share(a.deserved)
}

// queueOf is the queue of a job of the snapshot, "" for another.
func (p *Plugin) queueOf(id api.JobID) api.QueueID {
	if j := p.jobs[id]; j != nil {
		return j.Queue
	}
	return ""
}

// exceeded lists the resources dims requests where r is above limit.
func exceeded(r, limit, dims *api.Resource) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, name := range dims.Names() {
		if name == corev1.ResourcePods || dims.Get(name) <= 0 {
			continue
		}
		if r.Get(name) > limit.Get(name) {
			out = append(out, name)
		}
	}
	return out
}

func withoutPods(r *api.Resource) string {
	c := r.Clone()
	c.MilliPods = 0
	return c.String()
}
