package scenario

import (
	"context"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/caldera-sh/caldera/pkg/federation/dispatch"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/podfit"
	"github.com/caldera-sh/caldera/pkg/scheduler/profile"
	"github.com/caldera-sh/caldera/pkg/sim"
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
	// As in the scheduler, the plugins that prepare binds do.
	preBinder := prof.PreBinder()
	defer done()
	// How many feasible nodes a search looks for, as the scheduler's
	// configuration says.
	nodesToFind := framework.NodesToFind(int(*cfg.NodeSampling.PercentageOfNodesToFind), int(*cfg.NodeSampling.MinNodesToFind))
	// Nodes carry kube-scheduler's view of them when its plugins run.
	var newMirror func() api.NodeMirror
	if _, needFit, _ := profile.PodFitOptions(cfg); needFit {
		newMirror = podfit.NewNodeMirror
	}

	r := &Result{Name: s.Name, Capacity: map[string]float64{}, ModelCapacity: map[string]float64{}}
	st := &state{r: r, byName: map[string]int{}, models: map[string]string{}, allocated: map[string]float64{}, modelAlloc: map[string]float64{},
		members: map[string]*member{}, free: map[string]dispatch.Resources{}, cards: map[string][]card{}}
	clusters := s.Clusters
	if s.Cluster != nil {
		clusters = []Cluster{*s.Cluster}
	}
	for _, cl := range clusters {
		m := &member{name: cl.Name, allocatable: dispatch.Resources{}, allocated: dispatch.Resources{}}
		m.c = sim.New(sim.Options{
			Actions: prof.Actions, Tiers: prof.Tiers, Start: start, EvictionGrace: 30 * time.Second,
			NodesToFind: nodesToFind, PreBinder: preBinder, NewNodeMirror: newMirror,
			OnBound:    func(p *corev1.Pod, node string, at time.Time) { st.bound(m, p, node, at) },
			OnFinished: func(p *corev1.Pod, at time.Time) { st.finished(m, p, at) },
			OnEvicted:  func(c *sim.Cluster, p *corev1.Pod, _ time.Duration) { st.evicted(m, p) },
		})
		nodes, err := s.nodes(cl)
		if err != nil {
			return nil, err
		}
		for _, n := range nodes {
			m.c.AddNode(n)
			m.allocatable.Add(dispatch.ResourcesOf(n.Status.Allocatable))
			st.free[n.Name] = dispatch.ResourcesOf(n.Status.Allocatable)
			if count := n.Status.Allocatable[api.ResourceGPUNumber]; count.Value() > 0 {
				mem := n.Status.Allocatable[api.ResourceGPUMemory]
				cards := make([]card, count.Value())
				for i := range cards {
					cards[i].memory = mem.Value() / count.Value()
				}
				st.cards[n.Name] = cards
			}
			for name, q := range n.Status.Allocatable {
				r.Capacity[string(name)] += float64(q.MilliValue()) / 1000
			}
			if model := n.Labels[trace.GPUModelLabel]; model != "" {
				st.models[n.Name] = model
				q := n.Status.Allocatable[trace.GPUMilli]
				r.ModelCapacity[model] += float64(q.Value())
			}
		}
		s.addQueues(m.c)
		for _, g := range s.Workload.Generators {
			if g.Priority != 0 {
				m.c.AddPriorityClass(&schedv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: priorityClass(g.Priority)}, Value: g.Priority})
			}
		}
		st.order = append(st.order, m)
		st.members[m.name] = m
	}
	jobs, unscheduled, err := s.jobs(r.Capacity[trace.GPUMilli])
	if err != nil {
		return nil, err
	}
	r.Unscheduled = unscheduled
	federated := len(s.Clusters) > 0
	st.federated = federated
	hjs := s.hyperJobs()
	st.gpu, st.typical = typicalGPUTask(r.Capacity, jobs, hjs)
	st.strandAll()
	// The simulator acts on the releases alone: hold messages go unformatted.
	opts := dispatch.Options{OmitMessages: true}
	startTimeout := DefaultHyperJobStartTimeout
	if s.Federation != nil {
		opts.StarvationWait = s.Federation.StarvationWait.Duration
		if t := s.Federation.HyperJobStartTimeout.Duration; t > 0 {
			startTimeout = t
		}
	}

	until := time.Duration(math.MaxInt64)
	if s.Until != nil {
		until = s.Until.Duration
	}
	next, nextHJ := 0, 0
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		at, ok := time.Duration(math.MaxInt64), false
		if next < len(jobs) {
			at, ok = jobs[next].arrival, true
		}
		if nextHJ < len(hjs) && hjs[nextHJ].arrival < at {
			at, ok = hjs[nextHJ].arrival, true
		}
		for _, m := range st.order {
			if due, has := m.c.Next(); has && due.Sub(start) < at {
				at, ok = due.Sub(start), true
			}
		}
		if due, has := st.nextStartDeadline(startTimeout); has && due < at {
			at, ok = due, true
		}
		if !ok || at > until {
			break
		}
		st.account(at)
		for _, m := range st.order {
			m.c.Advance(start.Add(at).Sub(m.c.Now()))
		}
		for next < len(jobs) && jobs[next].arrival <= at {
			if federated {
				st.hold(jobs[next])
			} else {
				st.submit(st.order[0], jobs[next], jobs[next].arrival)
			}
			next++
		}
		for nextHJ < len(hjs) && hjs[nextHJ].arrival <= at {
			st.waiting = append(st.waiting, hjs[nextHJ])
			nextHJ++
		}
		if federated {
			st.checkStarts(at, startTimeout)
			st.plan()
			st.dispatch(at, s.Queues, opts)
		}
		for _, m := range st.order {
			// As the scheduler does, a cycle runs only while some job
			// waits; one that binds may let another place more (a gang
			// whose admission the first made): cycle until one binds
			// nothing.
			for range 4 {
				if !m.c.PendingWork() || m.c.Cycle(ctx).Bound == 0 {
					break
				}
			}
		}
		st.sample(at)
	}
	r.Unplanned = len(st.waiting)
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
	r.Wall = time.Since(wallStart)
	return r, nil
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
