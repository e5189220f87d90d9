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
	"k8s.io/client-go/informers"
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
func (st *state) addMember(s *Scenario, cl Cluster, opts sim.Options) error {
	m := &member{name: cl.Name, allocatable: dispatch.Resources{}, allocated: dispatch.Resources{}}
	opts.OnBound = func(p *corev1.Pod, node string, at time.Time) { st.bound(m, p, node, at) }
	opts.OnFinished = func(p *corev1.Pod, at time.Time) { st.finished(m, p, at) }
	opts.OnEvicted = func(c *sim.Cluster, p *corev1.Pod, _ time.Duration) { st.evicted(m, p) }
	m.c = sim.New(opts)
	nodes, err := s.nodes(cl)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		m.c.AddNode(n)
		m.allocatable.Add(dispatch.ResourcesOf(n.Status.Allocatable))
		st.stranded.addNode(n)
		st.cards.addNode(n)
		st.usage.addNode(n)
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
// most four times.
func (m *member) cycle(ctx context.Context) {
	for range 4 {
		if !m.c.PendingWork() || m.c.Cycle(ctx).Bound == 0 {
			break
		}
	}
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
		m.c.AddPod(j.pod(t), max(j.runtime, time.Second))
	}
}

// bound follows a pod that m's scheduler bound to node at at.
func (st *state) bound(m *member, p *corev1.Pod, node string, at time.Time) {
	st.account(at.Sub(start))
	st.use(p, node, 1)
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
	i, ok := st.jobs.of(p)
	if !ok {
		return
	}
	if st.jobs.finishedPod(i, at.Sub(start)) {
		m.c.ForgetPodGroup(namespace, st.jobs.records[i].Name)
	}
}

// evicted follows a pod that m's scheduler evicted. The job controller
// makes the pod again; it waits to be placed (and still counts on the
// member's account).
func (st *state) evicted(m *member, p *corev1.Pod) {
	c := m.c
	st.account(c.Now().Sub(start))
	if p.Spec.NodeName != "" {
		st.use(p, p.Spec.NodeName, -1)
	}
	i, ok := st.jobs.of(p)
	if !ok {
		return
	}
	c.AddPod(recreated(p, st.jobs.evictedPod(i)), time.Second)
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

// addPriorityClasses creates the priority classes of the scenario's
// generators in a cluster.
func (s *Scenario) addPriorityClasses(c *sim.Cluster) {
	for _, g := range s.Workload.Generators {
		if g.Priority != 0 {
			c.AddPriorityClass(&schedv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: priorityClass(g.Priority)}, Value: g.Priority})
		}
	}
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
			var annotations map[string]string
			if t.VGPU && n.GPUs > 0 {
				extra[vgpu.ResourceNumber] = n.GPUs * vgpuSharesPerCard
				extra[vgpu.ResourceMemory] = n.GPUs * 1000
				extra[vgpu.ResourceCores] = n.GPUs * 100
				cards := make([]vgpu.Card, n.GPUs)
				for i := range cards {
					cards[i] = vgpu.Card{UUID: fmt.Sprintf("GPU-%s-%d", n.Name, i), Shares: vgpuSharesPerCard, MemoryMiB: 1000,
						Type: "NVIDIA-" + n.Model, Healthy: true, Mode: vgpu.ModeHAMiCore}
				}
				annotations = map[string]string{vgpu.RegisterAnnotation: vgpu.FormatRegistration(cards)}
			}
			rl := quantities(n.CPUMilli, n.MemoryMiB, extra)
			out = append(out, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: labels, Annotations: annotations},
				Status: corev1.NodeStatus{Capacity: rl, Allocatable: rl, Conditions: ready}})
		}
	}
	return out, nil
}

// vgpuSharesPerCard is how many virtual GPUs a simulated card takes, the
// vGPU device plugin's default.
const vgpuSharesPerCard = 10
