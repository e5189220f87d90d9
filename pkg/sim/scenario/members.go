package scenario

import (
	"context"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/devices/vgpu"
	"github.com/caldera-sh/caldera/pkg/federation/dispatch"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/config"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/podfit"
	"github.com/caldera-sh/caldera/pkg/scheduler/profile"
	"github.com/caldera-sh/caldera/pkg/sim"
	"github.com/caldera-sh/caldera/pkg/sim/trace"
)

// member is a simulated member cluster and what is placed on it.
type member struct {
	name string
	c    *sim.Cluster
	// allocatable is its nodes'; allocated the requests of its bound,
	// unfinished pods.
	allocatable, allocated dispatch.Resources
}

// simOptions are the member simulators' options, callbacks aside: the
// scheduler's actions and plugins, and its node search.
func simOptions(prof *profile.Profile, cfg *configv1alpha1.SchedulerConfiguration) sim.Options {
	// How many feasible nodes a search looks for, as the scheduler's
	// configuration says.
	nodesToFind := framework.NodesToFind(int(*cfg.NodeSampling.PercentageOfNodesToFind), int(*cfg.NodeSampling.MinNodesToFind))
	// Nodes carry kube-scheduler's view of them when its plugins run.
	var newMirror func() api.NodeMirror
	if _, needFit, _ := profile.PodFitOptions(cfg); needFit {
		newMirror = podfit.NewNodeMirror
	}
	return sim.Options{
		Actions: prof.Actions, Tiers: prof.Tiers, Start: start, EvictionGrace: 30 * time.Second,
		NodesToFind: nodesToFind, NewNodeMirror: newMirror,
		// As in the scheduler, the plugins that prepare binds do.
		PreBinder: prof.PreBinder(),
	}
}

// addMember adds a member cluster: a simulator with the scenario's nodes,
// queues and priority classes for cl, whose pod events the run follows.
func (st *state) addMember(ctx context.Context, s *Scenario, cl Cluster, opts sim.Options) error {
	m := &member{name: cl.Name, allocatable: dispatch.Resources{}, allocated: dispatch.Resources{}}
	opts.OnBound = func(p *corev1.Pod, node string, at time.Time) { st.bound(m, p, node, at) }
	opts.OnFinished = func(p *corev1.Pod, at time.Time) { st.finished(m, p, at) }
	opts.OnEvicted = func(c *sim.Cluster, p *corev1.Pod, ran time.Duration) { st.evicted(m, p, ran) }
	m.c = sim.New(opts)
	nodes, draCards, err := s.nodes(cl)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if cards := draCards[n.Name]; cards > 0 {
			if err := st.devices.addNode(n.Name, n.Labels[trace.GPUModelLabel], cards); err != nil {
				return err
			}
		}
		m.c.AddNode(n)
		m.allocatable.Add(dispatch.ResourcesOf(n.Status.Allocatable))
		st.stranded.addNode(n)
		st.cards.addNode(n)
		st.usage.addNode(n)
		if st.load != nil {
			st.load.addNode(m, n)
		}
	}
	s.addQueues(m.c)
	s.addPriorityClasses(m.c)
	st.order = append(st.order, m)
	st.members[m.name] = m
	return nil
}

// cycle runs the member's scheduler while some job waits. As the
// scheduler does, a cycle that binds may let another place more (a gang
// whose admission the first made): it cycles until one binds nothing, at
// most four times. Each cycle waits for the DRA plugin to read the
// devices and claims as they are (d nil: the run has none).
func (m *member) cycle(ctx context.Context, d *devices) error {
	for range 4 {
		if !m.c.PendingWork() {
			break
		}
		if d != nil {
			if err := d.sync(ctx); err != nil {
				return err
			}
		}
		if m.c.Cycle(ctx).Bound == 0 {
			break
		}
	}
	return nil
}

// submit gives a job to a member cluster at released: its PodGroup and
// its pods.
func (st *state) submit(m *member, j job, released time.Duration) {
	i, ok := st.jobs.byName[j.name]
	if !ok {
		i = st.jobs.add(j)
	}
	st.jobs.release(i, m.name, released)
	m.c.AddPodGroup(j.podGroup())
	for t := range j.tasks {
		p := j.pod(t)
		if j.dra {
			st.claim(p)
		}
		m.c.AddPod(p, max(j.runtime, time.Second))
	}
}

// bound follows a pod that m's scheduler bound to node at at.
func (st *state) bound(m *member, p *corev1.Pod, node string, at time.Time) {
	st.account(at.Sub(start))
	st.use(p, node, 1)
	if st.devices != nil {
		st.devices.bound(p)
	}
	i, ok := st.jobs.of(p)
	if !ok {
		return
	}
	if !st.federated {
		// With a dispatcher, a released job counts from its release.
		m.allocated.Add(dispatch.ResourcesOf(podRequests(p)))
	}
	st.jobs.placedPod(i, at.Sub(start))
}

// finished follows a pod of m that ran to its end at at; m forgets it, and
// its job's PodGroup with its last pod.
func (st *state) finished(m *member, p *corev1.Pod, at time.Time) {
	st.account(at.Sub(start))
	st.use(p, p.Spec.NodeName, -1)
	m.allocated.Sub(dispatch.ResourcesOf(podRequests(p)))
	m.c.Forget(p)
	if st.devices != nil {
		st.devices.release(p)
	}
	i, ok := st.jobs.of(p)
	if !ok {
		return
	}
	if st.jobs.finishedPod(i, at.Sub(start)) {
		m.c.ForgetPodGroup(namespace, st.jobs.records[i].Name)
	}
}

// evicted follows a pod that m's scheduler (or the descheduler) evicted,
// after it ran for ran. The job controller makes the pod again; it waits
// to be placed (and still counts on the member's account). With the
// load model, it runs for what its job's runtime had left, so that moving
// a pod moves its load.
func (st *state) evicted(m *member, p *corev1.Pod, ran time.Duration) {
	c := m.c
	st.account(c.Now().Sub(start))
	if p.Spec.NodeName != "" {
		st.use(p, p.Spec.NodeName, -1)
	}
	if st.devices != nil {
		st.devices.release(p)
	}
	i, ok := st.jobs.of(p)
	if !ok {
		return
	}
	q := recreated(p, st.jobs.evictedPod(i))
	if len(q.Spec.ResourceClaims) > 0 {
		st.claim(q)
	}
	runFor := time.Second
	if st.load != nil {
		runFor = max(st.jobs.jobs[i].runtime-ran, time.Second)
	}
	c.AddPod(q, runFor)
}

// claim gives a pod that asks for DRA devices its claim (and its UID,
// which the claim's owner reference needs, as the cluster would give it).
func (st *state) claim(p *corev1.Pod) {
	p.UID = types.UID(p.Namespace + "/" + p.Name)
	st.devices.claim(p)
}

// setup is the scheduler a run simulates: its actions and plugins, its
// configuration, and, when it runs kube-scheduler's plugins, their
// evaluator and the in-memory client its informers read (where the run
// publishes DRA objects).
type setup struct {
	prof    *profile.Profile
	cfg     *configv1alpha1.SchedulerConfiguration
	fit     *podfit.Evaluator
	cs      kubernetes.Interface
	factory informers.SharedInformerFactory
	// done releases the evaluator.
	done func()
}

// profile builds the scheduler's actions and plugins from its
// configuration.
func (s *Scenario) profile(ctx context.Context) (*setup, error) {
	text := s.Scheduler
	if text == "" {
		text = DefaultScheduler
	}
	cfg, err := config.Load([]byte(text), profile.NameRegistry())
	if err != nil {
		return nil, fmt.Errorf("scheduler: %w", err)
	}
	h := &framework.Handle{}
	su := &setup{cfg: cfg, done: func() {}}
	fitOpts, needFit, err := profile.PodFitOptions(cfg)
	if err != nil {
		return nil, fmt.Errorf("scheduler: %w", err)
	}
	if s.anyDRA() && !fitOpts.DynamicResources {
		return nil, fmt.Errorf("scheduler: the scenario asks for DRA devices (dra in its traces): the predicates plugin needs dynamicResourceAllocation: true")
	}
	if needFit {
		// kube-scheduler's plugins look volumes, workloads and devices up
		// in informers: of an in-memory client, empty but for the DRA
		// objects the run publishes.
		fctx, cancel := context.WithCancel(ctx)
		// The simple tracker: the field-managed one builds a REST mapper
		// for every write, which a run of thousands of claims cannot
		// afford.
		cs := fake.NewSimpleClientset()
		versioned(cs)
		factory := informers.NewSharedInformerFactory(cs, 0)
		// One goroutine scores: the simulation is one thread of work,
		// and fanning 50 nodes out to 16 goroutines costs more than it
		// saves.
		e, err := podfit.New(fctx, podfit.Options{InformerFactory: factory, ClientSet: cs, Profile: fitOpts, Parallelism: 1})
		if err != nil {
			cancel()
			return nil, fmt.Errorf("scheduler: %w", err)
		}
		factory.Start(fctx.Done())
		factory.WaitForCacheSync(fctx.Done())
		h.PodFit = e
		su.fit, su.cs, su.factory = e, cs, factory
		su.done = func() { _ = e.Close(); cancel() }
	}
	prof, err := profile.Build(cfg, h)
	if err != nil {
		su.done()
		return nil, fmt.Errorf("scheduler: %w", err)
	}
	su.prof = prof
	return su, nil
}

// anyDRA reports whether the scenario's nodes or tasks use DRA devices.
func (s *Scenario) anyDRA() bool {
	return s.anyNodeTrace(func(n *NodeTrace) bool { return n.DRA }) || (s.Workload.Trace != nil && s.Workload.Trace.DRA)
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

// addPriorityClasses creates the priority classes of the scenario's
// generators in a cluster.
func (s *Scenario) addPriorityClasses(c *sim.Cluster) {
	for _, g := range s.Workload.Generators {
		if g.Priority != 0 {
			c.AddPriorityClass(&schedv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: priorityClass(g.Priority)}, Value: g.Priority})
		}
	}
}

// nodes are a cluster's nodes, named <cluster>-<node> in a member, and
// how many GPU cards each node publishes as DRA devices.
func (s *Scenario) nodes(cl Cluster) ([]*corev1.Node, map[string]int64, error) {
	prefix := ""
	if cl.Name != "" {
		prefix = cl.Name + "-"
	}
	var out []*corev1.Node
	draCards := map[string]int64{}
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
			return nil, nil, fmt.Errorf("cluster.trace.nodes: %w", err)
		}
		defer f.Close()
		nodes, err := trace.ReadNodes(f)
		if err != nil {
			return nil, nil, fmt.Errorf("cluster.trace.nodes %s: %w", t.Nodes, err)
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
			var annotations map[string]string
			if t.VGPU && n.GPUs > 0 {
				// A card of 1000 "MiB", so that memory counts thousandths
				// of a card; or, for MIG, the model's card.
				shares, memory, cardType, mode := int64(vgpuSharesPerCard), int64(1000), "NVIDIA-"+n.Model, vgpu.ModeHAMiCore
				if t.MIG != "" {
					shares, memory = migCard(vgpu.GeometryOf(nil, t.MIG))
					cardType, mode = "NVIDIA-"+t.MIG, vgpu.ModeMIG
				}
				extra[vgpu.ResourceNumber] = n.GPUs * shares
				extra[vgpu.ResourceMemory] = n.GPUs * memory
				extra[vgpu.ResourceCores] = n.GPUs * 100
				cards := make([]vgpu.Card, n.GPUs)
				for i := range cards {
					cards[i] = vgpu.Card{UUID: fmt.Sprintf("GPU-%s-%d", n.Name, i), Shares: int(shares), MemoryMiB: memory,
						Type: cardType, Healthy: true, Mode: mode}
				}
				annotations = map[string]string{vgpu.RegisterAnnotation: vgpu.FormatRegistration(cards)}
			}
			if t.DRA && n.GPUs > 0 {
				draCards[n.Name] = n.GPUs
			}
			rl := quantities(n.CPUMilli, n.MemoryMiB, extra)
			out = append(out, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: labels, Annotations: annotations},
				Status: corev1.NodeStatus{Capacity: rl, Allocatable: rl, Conditions: ready}})
		}
	}
	return out, draCards, nil
}

// migCardMemory is the memory (MiB) of the MIG cards of the first
// cluster whose trace nodes have them, 0 when none does.
func (s *Scenario) migCardMemory() int64 {
	clusters := s.Clusters
	if s.Cluster != nil {
		clusters = []Cluster{*s.Cluster}
	}
	for _, cl := range clusters {
		if t := cl.Trace; t != nil && t.MIG != "" {
			if g := vgpu.GeometryOf(nil, t.MIG); g != nil {
				_, mem := migCard(g)
				return mem
			}
		}
	}
	return 0
}

// migCard is how many instances a MIG card of the geometry holds at most
// (its shares) and its memory: its largest instance's, the whole card's.
func migCard(g *vgpu.Geometry) (shares, memoryMiB int64) {
	for _, grp := range g.Groups {
		n := int64(0)
		for _, in := range grp.Instances {
			n += int64(in.Count)
			memoryMiB = max(memoryMiB, in.MemoryMiB)
		}
		shares = max(shares, n)
	}
	return shares, memoryMiB
}

// vgpuSharesPerCard is how many virtual GPUs a simulated card takes, the
// vGPU device plugin's default.
const vgpuSharesPerCard = 10
