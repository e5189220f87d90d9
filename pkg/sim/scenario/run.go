package scenario

import (
	"context"
	"math"
	"time"

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
	su, err := s.profile(ctx)
	if err != nil {
		return nil, err
	}
	defer su.done()
	st, err := newState(ctx, s, su)
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
		if st.load != nil && at >= st.load.next {
			st.loadTick(at)
		}
		st.arrive(work, at)
		if st.federated {
			st.federate(at)
		}
		if err := st.cycle(ctx); err != nil {
			return nil, err
		}
		st.sample(at)
	}
	r := st.finish(s.Name)
	r.Wall = time.Since(wallStart)
	return r, nil
}

// state follows a run: the member clusters, the federation over them,
// each job's record, and what the pods hold on the nodes.
type state struct {
	// members are the clusters, by name and in the scenario's order;
	// federated says the global dispatcher releases jobs to them.
	federated bool
	members   map[string]*member
	order     []*member
	fed       federation
	jobs      jobBook
	// usage, stranded and cards follow what the pods hold: per resource
	// and GPU model, against the median GPU task, and on GPU cards.
	usage    usage
	stranded strandedGPUs
	cards    cardBook
	// lastAt is when usage and stranded GPUs were integrated to.
	lastAt time.Duration
	// samples are the result's Usage; unscheduled counts the trace's
	// tasks left out as never scheduled.
	samples     []Sample
	unscheduled int
	// devices publishes the DRA objects, nil when the run has none.
	devices *devices
	// load follows what pods really use, nil without loadAware.
	load *loadBook
}

// newState sets the run up: a simulated member cluster for each of the
// scenario's clusters (or its one cluster), and the federation over them.
func newState(ctx context.Context, s *Scenario, su *setup) (*state, error) {
	st := &state{federated: len(s.Clusters) > 0, members: map[string]*member{}, jobs: newJobBook(), fed: newFederation(s),
		usage: newUsage(), stranded: newStrandedGPUs(), cards: newCardBook()}
	if s.LoadAware != nil {
		st.load = newLoadBook(s.LoadAware, s.Seed)
	}
	if s.anyDRA() {
		d, err := newDevices(ctx, su)
		if err != nil {
			return nil, err
		}
		st.devices = d
	}
	clusters := s.Clusters
	if s.Cluster != nil {
		clusters = []Cluster{*s.Cluster}
	}
	opts := simOptions(su.prof, su.cfg)
	for _, cl := range clusters {
		if err := st.addMember(ctx, s, cl, opts); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// workload makes the scenario's jobs and HyperJobs, for the run to submit
// as they arrive, and takes the median GPU task from them to count the
// GPUs it could not use.
func (st *state) workload(s *Scenario) (*arrivals, error) {
	jobs, unscheduled, err := s.jobs(st.usage.capacity[trace.GPUMilli])
	if err != nil {
		return nil, err
	}
	st.unscheduled = unscheduled
	hjs := s.hyperJobs()
	st.stranded.countFor(typicalGPUTask(st.usage.capacity, jobs, hjs))
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
	if due, has := st.nextStartDeadline(); has && due < at {
		at, ok = due, true
	}
	// Usage is reported while anything else is to come.
	if st.load != nil && ok && st.load.next < at {
		at = st.load.next
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
	st.fed.waiting = append(st.fed.waiting, hjs...)
}

// federate runs the global layer at at: the HyperJob controller's start
// checks and plans, then the dispatcher's releases.
func (st *state) federate(at time.Duration) {
	st.checkStarts(at)
	st.plan()
	st.dispatch(at)
}

// cycle runs each member's scheduler on what is pending, once its DRA
// plugin reads the devices and claims as they are.
func (st *state) cycle(ctx context.Context) error {
	for _, m := range st.order {
		if err := m.cycle(ctx, st.devices); err != nil {
			return err
		}
	}
	return nil
}
