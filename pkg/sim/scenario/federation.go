package scenario

import (
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/federation/dispatch"
	"github.com/caldera-sh/caldera/pkg/hyperjob/lifecycle"
	"github.com/caldera-sh/caldera/pkg/hyperjob/split"
)

// federation is caldera-global's part of a run over several members: the
// jobs its dispatcher holds, and the HyperJobs its HyperJob controller
// has to plan or to see started.
type federation struct {
	// queues and opts are the dispatcher's; startTimeout is how long a
	// HyperJob's children have to start once released.
	queues       []Queue
	opts         dispatch.Options
	startTimeout time.Duration
	// held are the jobs (by index) the dispatcher has not released yet,
	// in arrival order.
	held []int
	// waiting are the HyperJobs not split yet.
	waiting []hyperJob
	// planned are the HyperJobs whose children are not all started yet.
	planned []plannedHyperJob
	// rollBacks counts the plans rolled back.
	rollBacks int
}

// plannedHyperJob is a HyperJob split into children (their records'
// indices), in its attempt-th plan (0 for the first).
type plannedHyperJob struct {
	h        hyperJob
	children []int
	attempt  int
}

// newFederation is the federation of the scenario's queues and settings.
func newFederation(s *Scenario) federation {
	// The simulator acts on the releases alone: hold messages go unformatted.
	f := federation{queues: s.Queues, opts: dispatch.Options{OmitMessages: true}, startTimeout: DefaultHyperJobStartTimeout}
	if s.Federation != nil {
		f.opts.StarvationWait = s.Federation.StarvationWait.Duration
		if t := s.Federation.HyperJobStartTimeout.Duration; t > 0 {
			f.startTimeout = t
		}
	}
	return f
}

// hold records a job the global dispatcher holds until it releases it.
func (st *state) hold(j job) int {
	i := st.jobs.add(j)
	st.fed.held = append(st.fed.held, i)
	return i
}

// dispatch runs caldera-global's decision over the members and the held
// jobs, and gives each released job to the cluster it was counted on.
func (st *state) dispatch(at time.Duration) {
	if len(st.fed.held) == 0 {
		return
	}
	dec := dispatch.Decide(st.dispatchSnapshot(at), st.fed.opts)
	released := map[string]string{}
	for _, rel := range dec.Releases {
		released[rel.ID] = rel.Cluster
	}
	kept := st.fed.held[:0]
	for _, i := range st.fed.held {
		j := st.jobs.jobs[i]
		cluster, ok := released[j.name]
		if !ok {
			kept = append(kept, i)
			continue
		}
		m := st.members[cluster]
		// What the member will allocate counts at once, as the
		// dispatcher's own account does until the member reports it.
		m.allocated.Add(dispatch.ResourcesOf(j.requests).Times(int64(j.tasks)))
		st.submit(m, j, at)
	}
	st.fed.held = kept
}

// dispatchSnapshot is what the dispatcher sees at at: the members, the
// queues (default among them) and the jobs running or held.
func (st *state) dispatchSnapshot(at time.Duration) *dispatch.Snapshot {
	snap := &dispatch.Snapshot{Now: start.Add(at), Queues: dispatchQueues(st.fed.queues)}
	for _, m := range st.order {
		snap.Clusters = append(snap.Clusters, dispatch.Cluster{Name: m.name, Ready: true, Allocatable: m.allocatable, Allocated: m.allocated})
	}
	binding := func(i int) *dispatch.Binding {
		j, rec := st.jobs.jobs[i], &st.jobs.records[i]
		return &dispatch.Binding{ID: j.name, Queue: j.queue, Created: start.Add(j.arrival),
			Components: []dispatch.Component{{Name: "task", Replicas: j.tasks, Request: dispatch.ResourcesOf(j.requests)}},
			Released:   rec.Released >= 0, Cluster: rec.Cluster, Reported: rec.Released >= 0, Finished: rec.End >= 0,
			Gang: j.gang, GangSize: j.gangSize, Clusters: j.clusters}
	}
	for _, i := range st.jobs.running {
		snap.Bindings = append(snap.Bindings, binding(i))
	}
	for _, i := range st.fed.held {
		snap.Bindings = append(snap.Bindings, binding(i))
	}
	return snap
}

// dispatchQueues are the scenario's queues as the dispatcher weighs them,
// with default when the scenario does not name it.
func dispatchQueues(queues []Queue) []dispatch.Queue {
	var out []dispatch.Queue
	hasDefault := false
	for _, q := range queues {
		hasDefault = hasDefault || q.Name == schedulingv1beta1.DefaultQueue
		dq := dispatch.Queue{Name: q.Name, Priority: q.Priority, Weight: max(q.Weight, 1)}
		if len(q.Capability) > 0 {
			dq.Capability = dispatch.ResourcesOf(q.Capability)
		}
		if len(q.Guarantee) > 0 {
			dq.Guarantee = dispatch.ResourcesOf(q.Guarantee)
		}
		out = append(out, dq)
	}
	if !hasDefault {
		out = append(out, dispatch.Queue{Name: schedulingv1beta1.DefaultQueue, Weight: 1})
	}
	return out
}

// plan splits the waiting HyperJobs over what the members have free (as
// the HyperJob controller does with Cluster summaries) and holds their
// children; a HyperJob that does not fit waits for the next change.
func (st *state) plan() {
	kept := st.fed.waiting[:0]
	for _, h := range st.fed.waiting {
		clusters := make([]split.Cluster, 0, len(st.order))
		for _, m := range st.order {
			clusters = append(clusters, split.Cluster{Name: m.name, Free: m.allocatable.Clone().Sub(m.allocated)})
		}
		p, err := split.Split(h.in, clusters)
		if err != nil {
			kept = append(kept, h)
			continue
		}
		ph := plannedHyperJob{h: h, attempt: h.attempt}
		gang := h.name
		for _, c := range p.Children {
			name := c.Name
			if h.attempt > 0 {
				// A new plan's children are new jobs.
				name = fmt.Sprintf("%s-a%d", c.Name, h.attempt)
				gang = fmt.Sprintf("%s-a%d", h.name, h.attempt)
			}
			i := st.hold(job{name: name, queue: h.queue, arrival: h.arrival, runtime: h.runtime, tasks: c.Pods, min: c.Pods, requests: h.pod,
				gang: gang, gangSize: len(p.Children), clusters: []string{c.Cluster}})
			ph.children = append(ph.children, i)
		}
		st.fed.planned = append(st.fed.planned, ph)
	}
	st.fed.waiting = kept
}

// startDeadline is when the planned HyperJob's children must have started:
// the start timeout after the last was released; ok is false while one
// waits to be released.
func (st *state) startDeadline(ph plannedHyperJob) (deadline time.Duration, ok bool) {
	for _, i := range ph.children {
		rel := st.jobs.records[i].Released
		if rel < 0 {
			return 0, false
		}
		deadline = max(deadline, rel+st.fed.startTimeout)
	}
	return deadline, true
}

// checkStarts applies the HyperJob controller's start decision
// (lifecycle.Start) to the planned HyperJobs at at: a plan whose children
// all started is done with; one whose children did not within the timeout
// of their release is rolled back, its children deleted, and the HyperJob
// waits to be planned again.
func (st *state) checkStarts(at time.Duration) {
	timeout := st.fed.startTimeout
	kept := st.fed.planned[:0]
	for _, ph := range st.fed.planned {
		deadline, released := st.startDeadline(ph)
		if !released {
			kept = append(kept, ph)
			continue
		}
		children := make([]lifecycle.Child, len(ph.children))
		for k, i := range ph.children {
			children[k] = lifecycle.Child{Name: st.jobs.records[i].Name, Phase: batchv1alpha1.JobPending}
			if st.jobs.records[i].Start >= 0 {
				children[k].Phase = batchv1alpha1.JobRunning
			}
		}
		d := lifecycle.Start(len(children), children, at-(deadline-timeout), timeout)
		switch {
		case d.Started:
		case d.RollBack:
			for _, i := range ph.children {
				st.rollBack(i)
			}
			st.fed.rollBacks++
			h := ph.h
			h.attempt++
			st.fed.waiting = append(st.fed.waiting, h)
		default:
			kept = append(kept, ph)
		}
	}
	st.fed.planned = kept
}

// nextStartDeadline is the earliest start deadline of the planned
// HyperJobs, for the run to wake up at.
func (st *state) nextStartDeadline() (time.Duration, bool) {
	next, ok := time.Duration(math.MaxInt64), false
	for _, ph := range st.fed.planned {
		if d, released := st.startDeadline(ph); released && d < next {
			next, ok = d, true
		}
	}
	return next, ok
}

// rollBack deletes a released child job from its member: its pods (those
// placed give their resources back), its PodGroup and what the dispatcher
// counted on the member for it.
func (st *state) rollBack(i int) {
	rec := &st.jobs.records[i]
	m := st.members[rec.Cluster]
	if m == nil {
		return
	}
	for _, p := range m.c.Pods() {
		if p.Annotations[schedulingv1beta1.KubeGroupNameAnnotation] != rec.Name {
			continue
		}
		if p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning {
			st.use(p, p.Spec.NodeName, -1)
		}
		m.c.DeletePod(p.Namespace, p.Name)
	}
	m.c.ForgetPodGroup(namespace, rec.Name)
	m.allocated.Sub(dispatch.ResourcesOf(st.jobs.jobs[i].requests).Times(int64(rec.Tasks) - int64(st.jobs.done[i])))
	st.jobs.rolledBack(i)
}
