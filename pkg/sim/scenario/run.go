package scenario

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/federation/dispatch"
	"github.com/caldera-sh/caldera/pkg/federation/hyperjob/lifecycle"
	"github.com/caldera-sh/caldera/pkg/federation/split"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/apis/config"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/apis/config/v1alpha1"
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

// job is a job to submit.
type job struct {
	name, queue string
	arrival     time.Duration
	runtime     time.Duration
	tasks, min  int32
	requests    corev1.ResourceList
	models      []string
	selector    map[string]string
	priority    string
	// gang, gangSize and clusters are a HyperJob child's: released with
	// its siblings, to the cluster its plan gave it.
	gang     string
	gangSize int
	clusters []string
}

// hyperJob is a HyperJob to split once the members have room.
type hyperJob struct {
	name, queue string
	arrival     time.Duration
	runtime     time.Duration
	// attempt counts the plans rolled back.
	attempt int
	in      *split.Input
	pod     corev1.ResourceList
}

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

// profile builds the scheduler's actions and plugins from its
// configuration; done releases them.
func (s *Scenario) profile(ctx context.Context) (*profile.Profile, *configv1alpha1.SchedulerConfiguration, func(), error) {
	text := s.Scheduler
	if text == "" {
		text = DefaultScheduler
	}
	cfg, err := config.Load([]byte(text), profile.NameRegistry())
	if err != nil {
		return nil, nil, nil, fmt.Errorf("scheduler: %w", err)
	}
	h := &framework.Handle{}
	done := func() {}
	if fitOpts, needFit, err := profile.PodFitOptions(cfg); err != nil {
		return nil, nil, nil, fmt.Errorf("scheduler: %w", err)
	} else if needFit {
		// kube-scheduler's plugins look volumes and workloads up in
		// informers: the simulated cluster has none of them.
		fctx, cancel := context.WithCancel(ctx)
		cs := fake.NewClientset()
		factory := informers.NewSharedInformerFactory(cs, 0)
		// One goroutine scores: the simulation is one thread of work,
		// and fanning 50 nodes out to 16 goroutines costs more than it
		// saves.
		e, err := podfit.New(fctx, podfit.Options{InformerFactory: factory, ClientSet: cs, Profile: fitOpts, Parallelism: 1})
		if err != nil {
			cancel()
			return nil, nil, nil, fmt.Errorf("scheduler: %w", err)
		}
		factory.Start(fctx.Done())
		factory.WaitForCacheSync(fctx.Done())
		h.PodFit = e
		done = func() { _ = e.Close(); cancel() }
	}
	prof, err := profile.Build(cfg, h)
	if err != nil {
		done()
		return nil, nil, nil, fmt.Errorf("scheduler: %w", err)
	}
	return prof, cfg, done, nil
}

// addQueues creates root, the scenario's queues and default in a cluster.
func (s *Scenario) addQueues(c *sim.Cluster) {
	c.AddQueue(&schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: schedulingv1beta1.RootQueue}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}})
	hasDefault := false
	for _, q := range s.Queues {
		hasDefault = hasDefault || q.Name == schedulingv1beta1.DefaultQueue
		weight := q.Weight
		if weight == 0 {
			weight = 1
		}
		c.AddQueue(&schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: q.Name}, Spec: schedulingv1beta1.QueueSpec{
			Parent: schedulingv1beta1.RootQueue, Weight: weight, Capability: q.Capability, Deserved: q.Deserved,
			Guarantee: schedulingv1beta1.Guarantee{Resource: q.Guarantee}, Priority: q.Priority,
		}, Status: schedulingv1beta1.QueueStatus{State: schedulingv1beta1.QueueStateOpen}})
	}
	if !hasDefault {
		c.AddQueue(&schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: schedulingv1beta1.DefaultQueue}, Spec: schedulingv1beta1.QueueSpec{
			Parent: schedulingv1beta1.RootQueue, Weight: 1}, Status: schedulingv1beta1.QueueStatus{State: schedulingv1beta1.QueueStateOpen}})
	}
}

// member is a simulated member cluster and what is placed on it.
type member struct {
	name string
	c    *sim.Cluster
	// allocatable is its nodes'; allocated the requests of its bound,
	// unfinished pods.
	allocatable, allocated dispatch.Resources
}

func priorityClass(v int32) string { return fmt.Sprintf("sim-priority-%d", v) }

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

// plannedHyperJob is a HyperJob split into children (their records'
// indices), in its attempt-th plan (0 for the first).
type plannedHyperJob struct {
	h        hyperJob
	children []int
	attempt  int
}

// card is a GPU card's memory and what its pods hold of it.
type card struct {
	memory, used int64
	pods         int
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

// hold records a job the global dispatcher holds until it releases it.
func (st *state) hold(j job) {
	st.held = append(st.held, st.record(j))
}

// submit gives a job to a member cluster at released.
func (st *state) submit(m *member, j job, released time.Duration) {
	i, ok := st.byName[j.name]
	if !ok {
		i = st.record(j)
	}
	rec := &st.r.Jobs[i]
	rec.Cluster, rec.Released = m.name, released
	if k, found := slices.BinarySearch(st.running, i); !found {
		st.running = slices.Insert(st.running, k, i)
	}
	c := m.c
	c.AddPodGroup(&schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: j.name},
		Spec:       schedulingv1beta1.PodGroupSpec{MinMember: j.min, Queue: j.queue, PriorityClassName: j.priority},
	})
	for t := range j.tasks {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("%s-%d", j.name, t),
				Annotations: map[string]string{schedulingv1beta1.KubeGroupNameAnnotation: j.name}},
			Spec: corev1.PodSpec{
				SchedulerName: "volcano", PriorityClassName: j.priority, NodeSelector: j.selector,
				Containers: []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{Requests: j.requests}}},
			},
			Status: corev1.PodStatus{Phase: corev1.PodPending},
		}
		if len(j.models) > 0 {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: trace.GPUModelLabel, Operator: corev1.NodeSelectorOpIn, Values: j.models,
				}}}},
			}}}
		}
		c.AddPod(p, max(j.runtime, time.Second))
	}
}

// dispatch runs caldera-global's decision over the members and the held
// jobs, and gives each released job to the cluster it was counted on.
func (st *state) dispatch(at time.Duration, queues []Queue, opts dispatch.Options) {
	if len(st.held) == 0 {
		return
	}
	snap := &dispatch.Snapshot{Now: start.Add(at)}
	for _, m := range st.order {
		snap.Clusters = append(snap.Clusters, dispatch.Cluster{Name: m.name, Ready: true, Allocatable: m.allocatable, Allocated: m.allocated})
	}
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
		snap.Queues = append(snap.Queues, dq)
	}
	if !hasDefault {
		snap.Queues = append(snap.Queues, dispatch.Queue{Name: schedulingv1beta1.DefaultQueue, Weight: 1})
	}
	binding := func(i int) *dispatch.Binding {
		j, rec := st.jobs[i], &st.r.Jobs[i]
		return &dispatch.Binding{ID: j.name, Queue: j.queue, Created: start.Add(j.arrival),
			Components: []dispatch.Component{{Name: "task", Replicas: j.tasks, Request: dispatch.ResourcesOf(j.requests)}},
			Released:   rec.Released >= 0, Cluster: rec.Cluster, Reported: rec.Released >= 0, Finished: rec.End >= 0,
			Gang: j.gang, GangSize: j.gangSize, Clusters: j.clusters}
	}
	for _, i := range st.running {
		snap.Bindings = append(snap.Bindings, binding(i))
	}
	for _, i := range st.held {
		snap.Bindings = append(snap.Bindings, binding(i))
	}
	dec := dispatch.Decide(snap, opts)
	released := map[string]string{}
	for _, rel := range dec.Releases {
		released[rel.ID] = rel.Cluster
	}
	kept := st.held[:0]
	for _, i := range st.held {
		j := st.jobs[i]
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
	st.held = kept
}

// plan splits the waiting HyperJobs over what the members have free (as
// the HyperJob controller does with Cluster summaries) and holds their
// children; a HyperJob that does not fit waits for the next change.
func (st *state) plan() {
	kept := st.waiting[:0]
	for _, h := range st.waiting {
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
			st.hold(job{name: name, queue: h.queue, arrival: h.arrival, runtime: h.runtime, tasks: c.Pods, min: c.Pods, requests: h.pod,
				gang: gang, gangSize: len(p.Children), clusters: []string{c.Cluster}})
			ph.children = append(ph.children, st.byName[name])
		}
		st.planned = append(st.planned, ph)
	}
	st.waiting = kept
}

// startDeadline is when the planned HyperJob's children must have started:
// the start timeout after the last was released; ok is false while one
// waits to be released.
func (st *state) startDeadline(ph plannedHyperJob, timeout time.Duration) (deadline time.Duration, ok bool) {
	for _, i := range ph.children {
		rel := st.r.Jobs[i].Released
		if rel < 0 {
			return 0, false
		}
		deadline = max(deadline, rel+timeout)
	}
	return deadline, true
}

// checkStarts applies the HyperJob controller's start decision
// (lifecycle.Start) to the planned HyperJobs at at: a plan whose children
// all started is done with; one whose children did not within the timeout
// of their release is rolled back, its children deleted, and the HyperJob
// waits to be planned again.
func (st *state) checkStarts(at, timeout time.Duration) {
	kept := st.planned[:0]
	for _, ph := range st.planned {
		deadline, released := st.startDeadline(ph, timeout)
		if !released {
			kept = append(kept, ph)
			continue
		}
		children := make([]lifecycle.Child, len(ph.children))
		for k, i := range ph.children {
			children[k] = lifecycle.Child{Name: st.r.Jobs[i].Name, Phase: batchv1alpha1.JobPending}
			if st.r.Jobs[i].Start >= 0 {
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
			st.r.RollBacks++
			h := ph.h
			h.attempt++
			st.waiting = append(st.waiting, h)
		default:
			kept = append(kept, ph)
		}
	}
	st.planned = kept
}

// nextStartDeadline is the earliest start deadline of the planned
// HyperJobs, for the run to wake up at.
func (st *state) nextStartDeadline(timeout time.Duration) (time.Duration, bool) {
	next, ok := time.Duration(math.MaxInt64), false
	for _, ph := range st.planned {
		if d, released := st.startDeadline(ph, timeout); released && d < next {
			next, ok = d, true
		}
	}
	return next, ok
}

// rollBack deletes a released child job from its member: its pods (those
// placed give their resources back), its PodGroup and what the dispatcher
// counted on the member for it.
func (st *state) rollBack(i int) {
	rec := &st.r.Jobs[i]
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
	m.allocated.Sub(dispatch.ResourcesOf(st.jobs[i].requests).Times(int64(rec.Tasks) - int64(st.done[i])))
	if k, found := slices.BinarySearch(st.running, i); found {
		st.running = slices.Delete(st.running, k, k+1)
	}
	if rec.Start < 0 {
		st.pending--
	}
	rec.RolledBack = true
}

// jobOf is the index of a pod's job.
func (st *state) jobOf(p *corev1.Pod) (int, bool) {
	i, ok := st.byName[p.Annotations[schedulingv1beta1.KubeGroupNameAnnotation]]
	return i, ok
}

// useCards follows a pod's hold on its node's cards.
func (st *state) useCards(p *corev1.Pod, node string, sign int) {
	cards := st.cards[node]
	idx, err := api.ParseGPUIndex(p.Annotations[api.GPUIndexAnnotation])
	if len(cards) == 0 || len(idx) == 0 || err != nil {
		return
	}
	if sign > 0 {
		st.r.CardPlacements++
	}
	share := p.Spec.Containers[0].Resources.Requests[api.ResourceGPUMemory]
	for _, i := range idx {
		if i >= len(cards) {
			st.r.CardOvercommits++
			continue
		}
		c := &cards[i]
		held := share.Value()
		if held == 0 {
			held = c.memory
		}
		if sign > 0 && (c.used+held > c.memory || (held == c.memory && c.pods > 0)) {
			st.r.CardOvercommits++
		}
		c.used += int64(sign) * held
		c.pods += sign
	}
}

func (st *state) use(p *corev1.Pod, node string, sign float64) {
	st.useCards(p, node, int(sign))
	if f := st.free[node]; f != nil {
		if sign > 0 {
			f.Sub(dispatch.ResourcesOf(p.Spec.Containers[0].Resources.Requests))
		} else {
			f.Add(dispatch.ResourcesOf(p.Spec.Containers[0].Resources.Requests))
		}
		st.restrand(node)
	}
	for name, q := range p.Spec.Containers[0].Resources.Requests {
		st.allocated[string(name)] += sign * float64(q.MilliValue()) / 1000
		if name == trace.GPUMilli {
			if m := st.models[node]; m != "" {
				st.modelAlloc[m] += sign * float64(q.Value())
			}
		}
	}
}

func (st *state) bound(m *member, p *corev1.Pod, node string, at time.Time) {
	st.account(at.Sub(start))
	st.use(p, node, 1)
	i, ok := st.jobOf(p)
	if !ok {
		return
	}
	if !st.federated {
		// With a dispatcher, a released job counts from its release.
		m.allocated.Add(dispatch.ResourcesOf(p.Spec.Containers[0].Resources.Requests))
	}
	st.placed[i]++
	rec := &st.r.Jobs[i]
	if rec.Start < 0 && st.placed[i] >= rec.MinAvailable {
		rec.Start = at.Sub(start)
		st.pending--
	}
}

func (st *state) finished(m *member, p *corev1.Pod, at time.Time) {
	st.account(at.Sub(start))
	st.use(p, p.Spec.NodeName, -1)
	m.allocated.Sub(dispatch.ResourcesOf(p.Spec.Containers[0].Resources.Requests))
	m.c.Forget(p)
	i, ok := st.jobOf(p)
	if !ok {
		return
	}
	st.done[i]++
	rec := &st.r.Jobs[i]
	if st.done[i] == rec.Tasks {
		rec.End = at.Sub(start)
		if k, found := slices.BinarySearch(st.running, i); found {
			st.running = slices.Delete(st.running, k, k+1)
		}
		m.c.ForgetPodGroup(namespace, rec.Name)
	}
}

func (st *state) evicted(m *member, p *corev1.Pod) {
	c := m.c
	st.account(c.Now().Sub(start))
	if p.Spec.NodeName != "" {
		st.use(p, p.Spec.NodeName, -1)
	}
	i, ok := st.jobOf(p)
	if !ok {
		return
	}
	rec := &st.r.Jobs[i]
	rec.Evictions++
	st.placed[i]--
	// The job controller makes the pod again; it waits to be placed (and
	// still counts on the member's account).
	q := p.DeepCopy()
	q.UID, q.ResourceVersion, q.Spec.NodeName, q.DeletionTimestamp, q.Status = "", "", "", nil, corev1.PodStatus{Phase: corev1.PodPending}
	q.Name = fmt.Sprintf("%s-r%d", p.Name, rec.Evictions)
	c.AddPod(q, time.Second)
}

// account integrates what was allocated until at.
func (st *state) account(at time.Duration) {
	if st.area == nil {
		st.area, st.modelArea = map[string]float64{}, map[string]float64{}
	}
	dt := (at - st.lastAt).Seconds()
	if dt <= 0 {
		return
	}
	for k, v := range st.allocated {
		st.area[k] += v * dt
	}
	for k, v := range st.modelAlloc {
		st.modelArea[k] += v * dt
	}
	st.strandedArea += st.stranded * dt
	st.lastAt = at
}

// strandAll counts the free GPUs no typical GPU task can use: those on
// nodes short of its CPU, memory or GPUs.
func (st *state) strandAll() {
	st.strandedOn, st.strandedMilli = map[string]int64{}, 0
	for node := range st.free {
		st.restrand(node)
	}
}

// restrand recounts one node's stranded GPUs after its free resources
// changed.
func (st *state) restrand(node string) {
	if st.gpu == "" || st.typical == nil {
		return
	}
	var g int64
	if f := st.free[node]; f != nil {
		if g = f[corev1.ResourceName(st.gpu)]; g <= 0 || st.typical.Fits(f) {
			g = 0
		}
	}
	st.strandedMilli += g - st.strandedOn[node]
	st.strandedOn[node] = g
	st.stranded = float64(st.strandedMilli) / 1000
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

// nodes are a cluster's nodes, named <cluster>-<node> in a member.
func (s *Scenario) nodes(cl Cluster) ([]*corev1.Node, error) {
	prefix := ""
	if cl.Name != "" {
		prefix = cl.Name + "-"
	}
	var out []*corev1.Node
	ready := []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	for _, g := range cl.NodeGroups {
		for i := range g.Count {
			name := fmt.Sprintf("%s%s-%d", prefix, g.Name, i)
			labels := map[string]string{corev1.LabelHostname: name}
			for k, v := range g.Labels {
				labels[k] = v
			}
			rl := g.Resources.DeepCopy()
			if _, ok := rl[corev1.ResourcePods]; !ok {
				rl[corev1.ResourcePods] = resource.MustParse("256")
			}
			out = append(out, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
				Status: corev1.NodeStatus{Capacity: rl, Allocatable: rl, Conditions: ready}})
		}
	}
	if t := cl.Trace; t != nil {
		f, err := os.Open(s.path(t.Nodes))
		if err != nil {
			return nil, fmt.Errorf("cluster.trace.nodes: %w", err)
		}
		defer f.Close()
		nodes, err := trace.ReadNodes(f)
		if err != nil {
			return nil, fmt.Errorf("cluster.trace.nodes %s: %w", t.Nodes, err)
		}
		if t.Limit > 0 && len(nodes) > t.Limit {
			nodes = nodes[:t.Limit]
		}
		for _, n := range nodes {
			n.Name = prefix + n.Name
			labels := map[string]string{corev1.LabelHostname: n.Name}
			extra := map[corev1.ResourceName]int64{}
			if n.GPUs > 0 {
				extra[trace.GPUMilli] = n.GPUs * 1000
				labels[trace.GPUModelLabel] = n.Model
				if t.GPUCards {
					extra[api.ResourceGPUNumber] = n.GPUs
					extra[api.ResourceGPUMemory] = n.GPUs * 1000
				}
			}
			rl := quantities(n.CPUMilli, n.MemoryMiB, extra)
			out = append(out, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: labels},
				Status: corev1.NodeStatus{Capacity: rl, Allocatable: rl, Conditions: ready}})
		}
	}
	return out, nil
}

// jobs are the scenario's jobs in arrival order, and how many trace tasks
// were left out as never scheduled; gpuCapacity is the cluster's GPUs, in
// the trace's milli-GPUs, for a sample.
func (s *Scenario) jobs(gpuCapacity float64) ([]job, int, error) {
	var out []job
	unscheduled := 0
	if t := s.Workload.Trace; t != nil {
		f, err := os.Open(s.path(t.Tasks))
		if err != nil {
			return nil, 0, fmt.Errorf("workload.trace.tasks: %w", err)
		}
		defer f.Close()
		tasks, err := trace.ReadTasks(f)
		if err != nil {
			return nil, 0, fmt.Errorf("workload.trace.tasks %s: %w", t.Tasks, err)
		}
		if t.Sample == nil {
			unscheduled = tasks.Unscheduled
		}
		list := tasks.Tasks
		if t.Limit > 0 && len(list) > t.Limit {
			list = list[:t.Limit]
		}
		queue := t.Queue
		if queue == "" {
			queue = schedulingv1beta1.DefaultQueue
		}
		scale := t.TimeScale
		if scale == 0 {
			scale = 1
		}
		var span time.Duration
		if n := len(list); n > 0 {
			span = list[n-1].Arrival + time.Second
		}
		var copies []trace.Task
		if t.Sample != nil {
			copies = s.sample(append(slices.Clone(list), tasks.Never...), t.Sample.GPULoad*gpuCapacity)
		} else {
			for c := range max(t.Repeat, 1) {
				for _, task := range list {
					if c > 0 {
						task.Name = fmt.Sprintf("%s-%d", task.Name, c)
						task.Arrival += time.Duration(c) * span
					}
					copies = append(copies, task)
				}
			}
		}
		for _, task := range copies {
			req := corev1.ResourceList{
				corev1.ResourceCPU:    *resource.NewMilliQuantity(task.CPUMilli, resource.DecimalSI),
				corev1.ResourceMemory: *resource.NewQuantity(task.MemoryMiB<<20, resource.BinarySI),
			}
			if task.GPUMilli > 0 {
				req[trace.GPUMilli] = *resource.NewQuantity(task.GPUMilli, resource.DecimalSI)
				if t.GPUCards {
					if task.GPUMilli < 1000 {
						req[api.ResourceGPUMemory] = *resource.NewQuantity(task.GPUMilli, resource.DecimalSI)
					} else {
						req[api.ResourceGPUNumber] = *resource.NewQuantity(task.GPUs, resource.DecimalSI)
					}
				}
			}
			arrival := time.Duration(float64(task.Arrival) / scale)
			if t.AllAtOnce || t.Sample != nil {
				arrival = 0
			}
			out = append(out, job{name: task.Name, queue: queue, arrival: arrival, runtime: task.Runtime, tasks: 1, min: 1, requests: req, models: task.Models})
		}
	}
	for gi, g := range s.Workload.Generators {
		rng := rand.New(rand.NewPCG(s.Seed, uint64(gi)))
		tasks := max(g.Tasks, 1)
		gang := g.MinAvailable
		if gang == 0 {
			gang = tasks
		}
		queue := g.Queue
		if queue == "" {
			queue = schedulingv1beta1.DefaultQueue
		}
		at := g.Start.Duration
		for i := range g.Count {
			if i > 0 && g.Interarrival.Duration > 0 {
				at += time.Duration(rng.ExpFloat64() * float64(g.Interarrival.Duration))
			}
			runtime := g.Runtime.Duration
			if !g.FixedRuntime {
				runtime = time.Duration(rng.ExpFloat64() * float64(g.Runtime.Duration))
			}
			j := job{name: fmt.Sprintf("%s-%05d", g.Name, i), queue: queue, arrival: at.Truncate(time.Millisecond), runtime: runtime.Truncate(time.Millisecond),
				tasks: tasks, min: gang, requests: g.Requests, selector: g.NodeSelector}
			if g.Priority != 0 {
				j.priority = priorityClass(g.Priority)
			}
			out = append(out, j)
		}
	}
	slices.SortStableFunc(out, func(a, b job) int { return byArrival(a.arrival, b.arrival, a.name, b.name) })
	return out, unscheduled, nil
}

// sample draws tasks from pool, with replacement, until their milli-GPUs
// come to gpuMilli, named s<draw>-<task> so that name order is draw order.
// An empty pool, or one without GPU tasks, draws nothing.
func (s *Scenario) sample(pool []trace.Task, gpuMilli float64) []trace.Task {
	if !slices.ContainsFunc(pool, func(t trace.Task) bool { return t.GPUMilli > 0 }) {
		return nil
	}
	rng := rand.New(rand.NewPCG(s.Seed, 0x5a3b1e))
	var out []trace.Task
	var sum float64
	for i := 0; sum < gpuMilli; i++ {
		t := pool[rng.IntN(len(pool))]
		t.Name = fmt.Sprintf("s%06d-%s", i, t.Name)
		sum += float64(t.GPUMilli)
		out = append(out, t)
	}
	return out
}

// hyperJobs are the scenario's HyperJobs in arrival order.
func (s *Scenario) hyperJobs() []hyperJob {
	var out []hyperJob
	for gi, g := range s.Workload.HyperJobs {
		rng := rand.New(rand.NewPCG(s.Seed, uint64(1000+gi)))
		queue := g.Queue
		if queue == "" {
			queue = schedulingv1beta1.DefaultQueue
		}
		acc := corev1.ResourceName(g.Accelerator)
		per := g.Pod[acc]
		at := g.Start.Duration
		for i := range g.Count {
			if i > 0 && g.Interarrival.Duration > 0 {
				at += time.Duration(rng.ExpFloat64() * float64(g.Interarrival.Duration))
			}
			name := fmt.Sprintf("%s-%05d", g.Name, i)
			rj := split.ReplicatedJob{Name: "train", Mode: split.Auto, Replicas: max(g.Replicas, 1), Accelerator: acc, Accelerators: g.Accelerators,
				Fixed: dispatch.Resources{}, Pod: dispatch.ResourcesOf(g.Pod), PodAccelerators: per.Value(), MinPods: 1}
			if g.Mode == "static" {
				rj.Mode = split.Static
			}
			out = append(out, hyperJob{name: name, queue: queue, arrival: at.Truncate(time.Millisecond), runtime: g.Runtime.Duration, pod: g.Pod,
				in: &split.Input{Name: name, ReplicatedJobs: []split.ReplicatedJob{rj}, MaxDomains: g.MaxDomains}})
		}
	}
	slices.SortStableFunc(out, func(a, b hyperJob) int { return byArrival(a.arrival, b.arrival, a.name, b.name) })
	return out
}

// byArrival orders by arrival, then name.
func byArrival(a, b time.Duration, aName, bName string) int {
	return cmp.Or(cmp.Compare(a, b), strings.Compare(aName, bName))
}

// typicalGPUTask names the workload's GPU resource (the trace's milli-GPUs,
// else nvidia.com/gpu) and its median GPU pod: the median of each resource
// over the pods that request GPUs.
func typicalGPUTask(capacity map[string]float64, jobs []job, hjs []hyperJob) (string, dispatch.Resources) {
	gpu := ""
	for _, name := range []string{trace.GPUMilli, "nvidia.com/gpu"} {
		if capacity[name] > 0 {
			gpu = name
			break
		}
	}
	if gpu == "" {
		return "", nil
	}
	var reqs []corev1.ResourceList
	for _, j := range jobs {
		if _, ok := j.requests[corev1.ResourceName(gpu)]; ok {
			reqs = append(reqs, j.requests)
		}
	}
	for _, h := range hjs {
		if _, ok := h.pod[corev1.ResourceName(gpu)]; ok {
			reqs = append(reqs, h.pod)
		}
	}
	if len(reqs) == 0 {
		return gpu, nil
	}
	typical := dispatch.Resources{}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceName(gpu)} {
		v := make([]int64, 0, len(reqs))
		for _, rl := range reqs {
			q := rl[name]
			v = append(v, q.MilliValue())
		}
		slices.Sort(v)
		typical[name] = v[len(v)/2]
	}
	return gpu, typical
}
