package api

import (
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

// Totals are sums over a snapshot's nodes and jobs that queue and fairness
// plugins need at the start of every cycle. The cache keeps them up to
// date as nodes and jobs change, so that opening a session costs what
// changed rather than a visit to every job; a snapshot built by hand sums
// them on first use. They describe the snapshot as the cycle began, not
// the placements made since.
type Totals struct {
	// Allocatable and Used are the sums of every node's.
	Allocatable, Used *Resource
	// Queues sums the jobs of each queue named by a job, whether or not
	// the queue exists.
	Queues map[QueueID]*QueueTotals
	// Namespaces is the allocation of each namespace's jobs.
	Namespaces map[string]*Resource
}

// QueueTotals are the sums over one queue's jobs.
type QueueTotals struct {
	// Allocated and Request sum the jobs' Allocated and TotalRequest.
	Allocated, Request *Resource
	// InqueueMin sums the MinResources of admitted jobs (phase Inqueue),
	// InqueueNeeded what those jobs do not hold yet of them.
	InqueueMin, InqueueNeeded *Resource
	// Phases counts the jobs with a PodGroup by the phase it should show
	// (JobPhase).
	Phases PhaseCounts
}

// PhaseCounts counts PodGroups by phase.
type PhaseCounts struct {
	Pending, Inqueue, Running, Unknown, Completed int32
}

// add adds n to the count of phase p.
func (c *PhaseCounts) add(p schedulingv1beta1.PodGroupPhase, n int32) {
	switch p {
	case schedulingv1beta1.PodGroupPending:
		c.Pending += n
	case schedulingv1beta1.PodGroupInqueue:
		c.Inqueue += n
	case schedulingv1beta1.PodGroupRunning:
		c.Running += n
	case schedulingv1beta1.PodGroupUnknown:
		c.Unknown += n
	case schedulingv1beta1.PodGroupCompleted:
		c.Completed += n
	}
}

// NewTotals returns empty totals.
func NewTotals() *Totals {
	return &Totals{Allocatable: &Resource{}, Used: &Resource{}, Queues: map[QueueID]*QueueTotals{}, Namespaces: map[string]*Resource{}}
}

func newQueueTotals() *QueueTotals {
	return &QueueTotals{Allocated: &Resource{}, Request: &Resource{}, InqueueMin: &Resource{}, InqueueNeeded: &Resource{}}
}

// Queue returns the queue's sums; empty ones for a queue no job names.
// The result must not be changed.
func (t *Totals) Queue(id QueueID) *QueueTotals {
	if q := t.Queues[id]; q != nil {
		return q
	}
	return emptyQueueTotals
}

var emptyQueueTotals = newQueueTotals()

// Namespace returns the namespace's allocation; it must not be changed.
func (t *Totals) Namespace(ns string) *Resource {
	if r := t.Namespaces[ns]; r != nil {
		return r
	}
	return &Resource{}
}

// JobShare is what one job adds to the totals.
type JobShare struct {
	Queue     QueueID
	Namespace string
	Allocated, Request,
	// InqueueMin and InqueueNeeded are nil unless the job is Inqueue with
	// a minimum.
	InqueueMin, InqueueNeeded *Resource
	// Phase is the phase the job's PodGroup should show (JobPhase); ""
	// for a pod without a PodGroup.
	Phase schedulingv1beta1.PodGroupPhase
}

// ShareOf returns what j adds to the totals, as it is now.
func ShareOf(j *JobInfo) *JobShare {
	s := &JobShare{Queue: j.Queue, Namespace: j.Namespace, Allocated: j.Allocated.Clone(), Request: j.TotalRequest.Clone()}
	if !j.IsShadow() {
		s.Phase = JobPhase(j)
	}
	if j.Phase == schedulingv1beta1.PodGroupInqueue && j.MinResources != nil {
		s.InqueueMin = j.MinResources.Clone()
		s.InqueueNeeded = j.MinResources.Clone().Sub(j.Allocated).ClampNegatives()
	}
	return s
}

// AddJob adds (sign 1) or removes (sign -1) a job's share.
func (t *Totals) AddJob(s *JobShare, sign int64) {
	q := t.Queues[s.Queue]
	if q == nil {
		q = newQueueTotals()
		t.Queues[s.Queue] = q
	}
	ns := t.Namespaces[s.Namespace]
	if ns == nil {
		ns = &Resource{}
		t.Namespaces[s.Namespace] = ns
	}
	addSigned(q.Allocated, s.Allocated, sign)
	addSigned(q.Request, s.Request, sign)
	addSigned(ns, s.Allocated, sign)
	if s.InqueueMin != nil {
		addSigned(q.InqueueMin, s.InqueueMin, sign)
		addSigned(q.InqueueNeeded, s.InqueueNeeded, sign)
	}
	q.Phases.add(s.Phase, int32(sign))
}

// AddNode adds (sign 1) or removes (sign -1) a node's allocatable and used
// resources.
func (t *Totals) AddNode(allocatable, used *Resource, sign int64) {
	addSigned(t.Allocatable, allocatable, sign)
	addSigned(t.Used, used, sign)
}

// Clone returns a deep copy.
func (t *Totals) Clone() *Totals {
	c := &Totals{
		Allocatable: t.Allocatable.Clone(), Used: t.Used.Clone(),
		Queues:     make(map[QueueID]*QueueTotals, len(t.Queues)),
		Namespaces: make(map[string]*Resource, len(t.Namespaces)),
	}
	for id, q := range t.Queues {
		c.Queues[id] = &QueueTotals{Allocated: q.Allocated.Clone(), Request: q.Request.Clone(), InqueueMin: q.InqueueMin.Clone(), InqueueNeeded: q.InqueueNeeded.Clone(), Phases: q.Phases}
	}
	for ns, r := range t.Namespaces {
		c.Namespaces[ns] = r.Clone()
	}
	return c
}

// ComputeTotals sums the totals of nodes and jobs afresh.
func ComputeTotals(nodes []*NodeInfo, jobs map[JobID]*JobInfo) *Totals {
	t := NewTotals()
	for _, n := range nodes {
		t.AddNode(n.Allocatable, n.Used, 1)
	}
	for _, j := range jobs {
		t.AddJob(ShareOf(j), 1)
	}
	return t
}
