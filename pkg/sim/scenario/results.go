package scenario

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/sim"
)

// Result is what a run did.
type Result struct {
	Name string
	// Jobs are in submission order.
	Jobs []JobRecord
	// Usage is what was allocated after each change, in time order.
	Usage []Sample
	// Capacity is the cluster's, per resource, and per GPU model of
	// trace nodes (GPUs in milli-GPUs).
	Capacity      map[string]float64
	ModelCapacity map[string]float64
	// AllocatedSeconds integrate what was allocated over the run's time,
	// per resource and per GPU model.
	AllocatedSeconds, ModelAllocatedSeconds map[string]float64
	// GPU is the resource counted as GPUs; StrandedGPUSeconds integrates
	// the free GPUs no median GPU task could use over the run, and
	// StrandedGPUAtEnd is that at the end.
	GPU                                  string
	StrandedGPUSeconds, StrandedGPUAtEnd float64
	Stats                                sim.Stats
	// Unscheduled counts the trace's tasks it never scheduled (left out);
	// Unplanned the HyperJobs that never fit the members; RollBacks the
	// plans of HyperJobs rolled back after the start timeout.
	Unscheduled, Unplanned, RollBacks int
	// CardOvercommits counts placements on GPU cards (volcano.sh/gpu-index)
	// that took more of a card than it had free, or a card whole that
	// others used: none, unless the scheduler erred.
	CardOvercommits int
	// CardPlacements counts placements on GPU cards.
	CardPlacements int
	// End is the simulated time the run ended at, from its start; Wall
	// how long it took.
	End  time.Duration
	Wall time.Duration
}

// JobRecord is one job's life.
type JobRecord struct {
	Name, Queue string
	Tasks       int32
	// MinAvailable is the gang: the pods placed together.
	MinAvailable int32
	// Requests of one pod.
	Requests corev1.ResourceList
	// Cluster is where it ran ("" when the dispatcher never released it,
	// or with one cluster).
	Cluster string
	// Submit, Released (by the global dispatcher; with one cluster, as
	// submitted), Start (its gang placed) and End (every pod done), from
	// the run's start; negative when it did not get there.
	Submit, Released, Start, End time.Duration
	Evictions                    int
	// RolledBack: a HyperJob's child deleted because it and its siblings
	// did not all start within the start timeout; the HyperJob was
	// planned again, with new children.
	RolledBack bool
}

// Sample is what was allocated at a time, per resource and per GPU model.
type Sample struct {
	At        time.Duration
	Allocated map[string]float64
	Models    map[string]float64
	// Pending is the number of jobs submitted and not started.
	Pending int
	// StrandedGPU is the free GPU capacity on nodes that cannot hold the
	// workload's median GPU task (short of its CPU, memory or GPUs).
	StrandedGPU float64
}

// record starts a job's record.
func (st *state) record(j job) int {
	i := len(st.r.Jobs)
	st.byName[j.name] = i
	st.r.Jobs = append(st.r.Jobs, JobRecord{Name: j.name, Queue: j.queue, Tasks: j.tasks, MinAvailable: j.min, Requests: j.requests,
		Submit: j.arrival, Released: -1, Start: -1, End: -1})
	st.placed, st.done = append(st.placed, 0), append(st.done, 0)
	st.jobs = append(st.jobs, j)
	st.pending++
	return i
}

// jobOf is the index of a pod's job.
func (st *state) jobOf(p *corev1.Pod) (int, bool) {
	i, ok := st.byName[p.Annotations[schedulingv1beta1.KubeGroupNameAnnotation]]
	return i, ok
}

func (st *state) sample(at time.Duration) {
	s := Sample{At: at, Allocated: make(map[string]float64, len(st.allocated)), Models: make(map[string]float64, len(st.modelAlloc)), Pending: st.pending,
		StrandedGPU: st.stranded}
	for k, v := range st.allocated {
		s.Allocated[k] = v
	}
	for k, v := range st.modelAlloc {
		s.Models[k] = v
	}
	if n := len(st.r.Usage); n > 0 && st.r.Usage[n-1].At == at {
		st.r.Usage[n-1] = s
		return
	}
	st.r.Usage = append(st.r.Usage, s)
}
