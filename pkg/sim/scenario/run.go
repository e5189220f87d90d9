package scenario

import (
	"context"
	"math"
	"time"

	"github.com/caldera-sh/caldera/pkg/federation/dispatch"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/apis/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/profile"
	"github.com/caldera-sh/caldera/pkg/sim/trace"
)

// DefaultScheduler is the scheduler configuration of a scenario that sets
// none: Volcano's default tiers with binpack.
const DefaultScheduler = `actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
`

// namespace holds the simulated jobs.
const namespace = "sim"

// start is the simulated clock's origin.
var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// GCPercent is the garbage collector's target that calderactl sim runs
// with unless GOGC is set: a run keeps little (its cluster's pods and
// jobs, and the records) but allocates much per cycle, and collecting at
// four times the live heap rather than twice saves about a seventh of the
// wall time for a few hundred MiB more.
const GCPercent = 400

// Run runs the scenario to its end.
func Run(ctx context.Context, s *Scenario) (*Result, error) {
	wallStart := time.Now()
	prof, cfg, done, err := s.profile(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	st, err := newState(s, prof, cfg)
	if err != nil {
		return nil, err
	}
	work, err := st.workload(s)
	if err != nil {
		return nil, err
	}
	until := time.Duration(math.MaxInt64)
	if s.Until != nil {
		until = s.Until.Duration
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		at, ok := st.nextEvent(work)
		if !ok || at > until {
			break
		}
		st.advance(at)
		st.arrive(work, at)
		if st.federated {
			st.federate(at)
		}
		st.cycle(ctx)
		st.sample(at)
	}
	r := st.finish()
	r.Wall = time.Since(wallStart)
	return r, nil
}

// newState sets the run up: a simulated member cluster for each of the
// scenario's clusters (or its one cluster), and the federation's options.
func newState(s *Scenario, prof *profile.Profile, cfg *configv1alpha1.SchedulerConfiguration) (*state, error) {
	r := &Result{Name: s.Name, Capacity: map[string]float64{}, ModelCapacity: map[string]float64{}}
	st := &state{r: r, byName: map[string]int{}, models: map[string]string{}, allocated: map[string]float64{}, modelAlloc: map[string]float64{},
		members: map[string]*member{}, free: map[string]dispatch.Resources{}, cards: map[string][]card{}}
	clusters := s.Clusters
	if s.Cluster != nil {
		clusters = []Cluster{*s.Cluster}
	}
	opts := simOptions(prof, cfg)
	for _, cl := range clusters {
		if err := st.addMember(s, cl, opts); err != nil {
			return nil, err
		}
	}
	st.federated = len(s.Clusters) > 0
	st.queues = s.Queues
	// The simulator acts on the releases alone: hold messages go unformatted.
	st.dispatchOpts = dispatch.Options{OmitMessages: true}
	st.startTimeout = DefaultHyperJobStartTimeout
	if s.Federation != nil {
		st.dispatchOpts.StarvationWait = s.Federation.StarvationWait.Duration
		if t := s.Federation.HyperJobStartTimeout.Duration; t > 0 {
			st.startTimeout = t
		}
	}
	return st, nil
}

// workload makes the scenario's jobs and HyperJobs, for the run to submit
// as they arrive, and takes the median GPU task from them to count the
// GPUs it could not use.
func (st *state) workload(s *Scenario) (*arrivals, error) {
	jobs, unscheduled, err := s.jobs(st.r.Capacity[trace.GPUMilli])
	if err != nil {
		return nil, err
	}
	st.r.Unscheduled = unscheduled
	hjs := s.hyperJobs()
	st.gpu, st.typical = typicalGPUTask(st.r.Capacity, jobs, hjs)
	st.strandAll()
	return &arrivals{jobs: jobs, hyperJobs: hjs}, nil
}

// nextEvent is when the run next has something to do: a job or HyperJob
// arrives, a member's pod event falls due, or a planned HyperJob's start
// deadline passes; ok is false when nothing is left.
func (st *state) nextEvent(work *arrivals) (at time.Duration, ok bool) {
	at, ok = work.next()
	for _, m := range st.order {
		if due, has := m.c.Next(); has && due.Sub(start) < at {
			at, ok = due.Sub(start), true
		}
	}
	if due, has := st.nextStartDeadline(st.startTimeout); has && due < at {
		at, ok = due, true
	}
	return at, ok
}

// advance moves the members' clocks to at; their pods that end or are
// evicted by then report as they go.
func (st *state) advance(at time.Duration) {
	st.account(at)
	for _, m := range st.order {
		m.c.Advance(start.Add(at).Sub(m.c.Now()))
	}
}

// arrive submits the jobs that arrive by at: held for the global
// dispatcher when there is one, else straight to the one member; the
// HyperJobs wait to be planned.
func (st *state) arrive(work *arrivals, at time.Duration) {
	jobs, hjs := work.due(at)
	for _, j := range jobs {
		if st.federated {
			st.hold(j)
		} else {
			st.submit(st.order[0], j, j.arrival)
		}
	}
	st.waiting = append(st.waiting, hjs...)
}

// federate runs the global layer at at: the HyperJob controller's start
// checks and plans, then the dispatcher's releases.
func (st *state) federate(at time.Duration) {
	st.checkStarts(at, st.startTimeout)
	st.plan()
	st.dispatch(at, st.queues, st.dispatchOpts)
}

// cycle runs each member's scheduler on what is pending.
func (st *state) cycle(ctx context.Context) {
	for _, m := range st.order {
		m.cycle(ctx)
	}
}

// finish closes the run's accounts at the members' time and returns its
// result, wall time aside.
func (st *state) finish() *Result {
	r := st.r
	r.Unplanned = len(st.waiting)
	// Stranded GPUs are integrated to the last event, allocation to the
	// end.
	r.StrandedGPUSeconds, r.StrandedGPUAtEnd, r.GPU = st.strandedArea, st.stranded, st.gpu
	r.End = st.order[0].c.Now().Sub(start)
	st.account(r.End)
	r.AllocatedSeconds, r.ModelAllocatedSeconds = st.area, st.modelArea
	for _, m := range st.order {
		cs := m.c.Stats()
		r.Stats.Cycles += cs.Cycles
		r.Stats.Binds += cs.Binds
		r.Stats.Evictions += cs.Evictions
		r.Stats.Completions += cs.Completions
	}
	return r
}

// state follows the run.
type state struct {
	r      *Result
	byName map[string]int
	// placed and done count each job's pods placed and finished.
	placed, done []int32
	// jobs are the jobs submitted, by index; held those the dispatcher
	// has not released yet, in arrival order.
	jobs []job
	held []int
	// waiting are the HyperJobs not split yet.
	waiting []hyperJob
	// planned are the HyperJobs whose children are not all started yet.
	planned []plannedHyperJob
	// members are the clusters, in the scenario's order; federated says
	// the global dispatcher releases jobs to them.
	federated bool
	members   map[string]*member
	order     []*member
	// queues, dispatchOpts and startTimeout are the federation's: the
	// dispatcher's queues and options, and how long a HyperJob's children
	// have to start.
	queues       []Queue
	dispatchOpts dispatch.Options
	startTimeout time.Duration
	// models are the trace nodes' GPU models.
	models     map[string]string
	allocated  map[string]float64
	modelAlloc map[string]float64
	pending    int
	lastAt     time.Duration
	// area integrates allocated over time, per resource and model.
	area, modelArea map[string]float64
	// free is each node's free resources; gpu names the GPU resource,
	// typical is the median GPU task's request, and stranded the free GPUs
	// on nodes that cannot hold it, integrated over time in strandedArea.
	free         map[string]dispatch.Resources
	gpu          string
	typical      dispatch.Resources
	stranded     float64
	strandedArea float64
	// running are the jobs released and not finished, by index.
	running []int
	// strandedOn is each node's stranded GPUs (milli), strandedMilli
	// their sum, kept as nodes' free resources change.
	strandedOn    map[string]int64
	strandedMilli int64
	// cards is each node's GPU cards (volcano.sh/gpu-number) with what
	// their pods hold, to check the placements on them.
	cards map[string][]card
}
