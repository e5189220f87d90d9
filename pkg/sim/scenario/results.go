package scenario

import (
	"slices"
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
	// CardMemoryHeld is the share of the virtual-GPU cards' (or DRA
	// devices') memory held at the end: on MIG cards, whole instances,
	// more than was asked.
	CardMemoryHeld float64
	// Load is the spread of the nodes' real use, with loadAware.
	Load *LoadSummary
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

// jobBook is every job submitted, by index in submission order: its
// record for the result and how many of its pods were placed and finished.
type jobBook struct {
	records []JobRecord
	jobs    []job
	byName  map[string]int
	// placed and done count each job's pods placed and finished.
	placed, done []int32
	// pending counts the jobs submitted and not started; running are the
	// jobs released and not finished, by index, in order.
	pending int
	running []int
}

func newJobBook() jobBook { return jobBook{byName: map[string]int{}} }

// add starts a job's record.
func (b *jobBook) add(j job) int {
	i := len(b.records)
	b.byName[j.name] = i
	b.records = append(b.records, JobRecord{Name: j.name, Queue: j.queue, Tasks: j.tasks, MinAvailable: j.min, Requests: j.requests,
		Submit: j.arrival, Released: -1, Start: -1, End: -1})
	b.placed, b.done = append(b.placed, 0), append(b.done, 0)
	b.jobs = append(b.jobs, j)
	b.pending++
	return i
}

// of is the index of a pod's job.
func (b *jobBook) of(p *corev1.Pod) (int, bool) {
	i, ok := b.byName[p.Annotations[schedulingv1beta1.KubeGroupNameAnnotation]]
	return i, ok
}

// release records job i given to cluster at at.
func (b *jobBook) release(i int, cluster string, at time.Duration) {
	rec := &b.records[i]
	rec.Cluster, rec.Released = cluster, at
	if k, found := slices.BinarySearch(b.running, i); !found {
		b.running = slices.Insert(b.running, k, i)
	}
}

// placedPod counts a pod of job i placed at at: the job starts when its
// gang has been.
func (b *jobBook) placedPod(i int, at time.Duration) {
	b.placed[i]++
	rec := &b.records[i]
	if rec.Start < 0 && b.placed[i] >= rec.MinAvailable {
		rec.Start = at
		b.pending--
	}
}

// finishedPod counts a pod of job i finished at at, and says whether it
// was the job's last.
func (b *jobBook) finishedPod(i int, at time.Duration) bool {
	b.done[i]++
	rec := &b.records[i]
	if b.done[i] != rec.Tasks {
		return false
	}
	rec.End = at
	b.stopRunning(i)
	return true
}

// evictedPod counts a pod of job i evicted, to be placed again, and
// returns the job's evictions so far.
func (b *jobBook) evictedPod(i int) int {
	rec := &b.records[i]
	rec.Evictions++
	b.placed[i]--
	return rec.Evictions
}

// rolledBack records job i deleted by a HyperJob's roll back.
func (b *jobBook) rolledBack(i int) {
	rec := &b.records[i]
	b.stopRunning(i)
	if rec.Start < 0 {
		b.pending--
	}
	rec.RolledBack = true
}

func (b *jobBook) stopRunning(i int) {
	if k, found := slices.BinarySearch(b.running, i); found {
		b.running = slices.Delete(b.running, k, k+1)
	}
}

// sample records what is allocated at at, once per time: a later sample
// at the same time replaces the earlier.
func (st *state) sample(at time.Duration) {
	s := Sample{At: at, Allocated: make(map[string]float64, len(st.usage.allocated)), Models: make(map[string]float64, len(st.usage.modelAlloc)),
		Pending: st.jobs.pending, StrandedGPU: st.stranded.current}
	for k, v := range st.usage.allocated {
		s.Allocated[k] = v
	}
	for k, v := range st.usage.modelAlloc {
		s.Models[k] = v
	}
	if n := len(st.samples); n > 0 && st.samples[n-1].At == at {
		st.samples[n-1] = s
		return
	}
	st.samples = append(st.samples, s)
}

// finish closes the run's accounts at the members' time and returns what
// it recorded, wall time aside.
func (st *state) finish(name string) *Result {
	r := &Result{Name: name, Jobs: st.jobs.records, Usage: st.samples,
		Capacity: st.usage.capacity, ModelCapacity: st.usage.modelCapacity,
		// Stranded GPUs are integrated to the last event, allocation to
		// the end.
		GPU: st.stranded.gpu, StrandedGPUSeconds: st.stranded.area, StrandedGPUAtEnd: st.stranded.current,
		Unscheduled: st.unscheduled, Unplanned: len(st.fed.waiting), RollBacks: st.fed.rollBacks,
		CardOvercommits: st.cards.overcommits, CardPlacements: st.cards.placements, CardMemoryHeld: st.cards.heldShare(),
	}
	if st.load != nil {
		r.Load = st.load.summary()
	}
	if d := st.devices; d != nil {
		// DRA devices are cards too.
		r.CardOvercommits += int(d.overcommits)
		r.CardPlacements += int(d.placements)
		r.CardMemoryHeld = d.heldShare()
	}
	r.End = st.order[0].c.Now().Sub(start)
	st.account(r.End)
	r.AllocatedSeconds, r.ModelAllocatedSeconds = st.usage.area, st.usage.modelArea
	for _, m := range st.order {
		cs := m.c.Stats()
		r.Stats.Cycles += cs.Cycles
		r.Stats.Binds += cs.Binds
		r.Stats.Evictions += cs.Evictions
		r.Stats.Completions += cs.Completions
	}
	return r
}
