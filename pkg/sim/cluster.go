// Package sim runs the scheduler over a simulated member cluster on a
// simulated clock. It is the scheduler itself minus the API server: the
// same cache, cycles, actions and plugins, with binds, evictions,
// nominations and PodGroup status applied to in-memory objects and fed
// back to the cache as the informers would. Pods run for the time they are
// given and then succeed; evicted pods go after a grace period. Everything
// is deterministic for the same inputs.
package sim

import (
	"container/heap"
	"context"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	metricsv1alpha1 "github.com/caldera-sh/caldera/apis/metrics/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	schedbinder "github.com/caldera-sh/caldera/pkg/scheduler/binder"
	"github.com/caldera-sh/caldera/pkg/scheduler/cache"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/writeback"
)

// Options configure a simulated cluster.
type Options struct {
	Actions []framework.Action
	Tiers   []framework.Tier
	// Start is the simulated time the cluster starts at.
	Start time.Time
	// EvictionGrace is how long an evicted pod takes to go.
	EvictionGrace time.Duration
	// OnEvicted, if set, is told of each evicted pod once it is gone, with
	// how long it had run; a job controller would create it again.
	OnEvicted func(c *Cluster, pod *corev1.Pod, ran time.Duration)
	// NodesToFind bounds node searches as the scheduler's nodeSampling
	// does; nil searches every node.
	NodesToFind func(nodes int) int
	// OnBound, if set, is told of each bind; OnFinished of each pod that
	// ran its time and succeeded.
	OnBound    func(pod *corev1.Pod, node string, at time.Time)
	OnFinished func(pod *corev1.Pod, at time.Time)
	// PreBinder, if set, prepares each bind as the scheduler's binder has
	// it do (the predicates plugin binds volumes and drops what it
	// reserved for the pod); a bind it refuses does not happen.
	PreBinder schedbinder.PreBinder
	// NewNodeMirror, if set, gives each node a mirror (the pod-fit
	// evaluator's, when the scheduler runs kube-scheduler's plugins).
	NewNodeMirror func() api.NodeMirror
}

// Stats count what happened in a simulation.
type Stats struct {
	Cycles, Binds, Evictions, Completions int
}

// Cluster is a simulated member cluster with the scheduler running on it.
type Cluster struct {
	opts   Options
	clock  *clocktesting.FakeClock
	cache  *cache.Cache
	sched  *scheduler.Scheduler
	pods   map[types.UID]*corev1.Pod
	groups map[api.JobID]*schedulingv1beta1.PodGroup
	// runFor is how long each pod runs once bound; 0 runs until evicted.
	runFor  map[types.UID]time.Duration
	classes map[string]*schedv1.PriorityClass
	events  events
	seq     uint64
	stats   Stats
}

// New returns an empty cluster.
func New(o Options) *Cluster {
	c := &Cluster{
		opts:    o,
		clock:   clocktesting.NewFakeClock(o.Start),
		cache:   cache.New(cache.Options{NewNodeMirror: o.NewNodeMirror}),
		pods:    map[types.UID]*corev1.Pod{},
		groups:  map[api.JobID]*schedulingv1beta1.PodGroup{},
		runFor:  map[types.UID]time.Duration{},
		classes: map[string]*schedv1.PriorityClass{},
	}
	c.sched = scheduler.New(c.cache, scheduler.Options{
		Actions:     o.Actions,
		Tiers:       o.Tiers,
		Binder:      binder{c},
		Evictor:     evictor{c},
		Nominations: nominations{c},
		Status:      statusSink{c},
		Clock:       c.clock,
		NodesToFind: o.NodesToFind,
	})
	return c
}

// Now is the simulated time.
func (c *Cluster) Now() time.Time { return c.clock.Now() }

// Stats returns the counts so far.
func (c *Cluster) Stats() Stats { return c.stats }

// Scheduler is the scheduler running on the cluster (for its
// explanations).
func (c *Cluster) Scheduler() *scheduler.Scheduler { return c.sched }

// AddNode adds a node.
func (c *Cluster) AddNode(n *corev1.Node) { c.cache.UpdateNode(n.DeepCopy()) }

// AddHyperNode adds or updates a HyperNode of the network topology.
func (c *Cluster) AddHyperNode(hn *topologyv1alpha1.HyperNode) {
	c.cache.UpdateHyperNode(hn.DeepCopy())
}

// AddQueue adds or updates a queue.
func (c *Cluster) AddQueue(q *schedulingv1beta1.Queue) { c.cache.UpdateQueue(q.DeepCopy()) }

// AddPriorityClass adds a PriorityClass.
func (c *Cluster) AddPriorityClass(pc *schedv1.PriorityClass) {
	c.classes[pc.Name] = pc.DeepCopy()
	c.cache.UpdatePriorityClass(pc.DeepCopy())
}

// AddPodGroup adds a PodGroup.
func (c *Cluster) AddPodGroup(pg *schedulingv1beta1.PodGroup) {
	pg = pg.DeepCopy()
	if pg.CreationTimestamp.IsZero() {
		pg.CreationTimestamp = metav1.NewTime(c.Now())
	}
	c.groups[api.NewJobID(pg.Namespace, pg.Name)] = pg
	c.cache.UpdatePodGroup(pg.DeepCopy())
}

// AddPod submits a pending pod that runs for runFor once bound (0: until
// evicted). Its UID, creation time and priority are filled in when unset
// (priority from its PriorityClass, as admission would).
func (c *Cluster) AddPod(p *corev1.Pod, runFor time.Duration) {
	p = p.DeepCopy()
	if p.UID == "" {
		p.UID = types.UID(p.Namespace + "/" + p.Name)
	}
	if p.CreationTimestamp.IsZero() {
		p.CreationTimestamp = metav1.NewTime(c.Now())
	}
	if pc := c.classes[p.Spec.PriorityClassName]; pc != nil && p.Spec.Priority == nil {
		v := pc.Value
		p.Spec.Priority = &v
		p.Spec.PreemptionPolicy = pc.PreemptionPolicy
	}
	c.pods[p.UID] = p
	c.runFor[p.UID] = runFor
	c.cache.UpdatePod(p.DeepCopy())
}

// Pods returns every pod, in name order.
func (c *Cluster) Pods() []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(c.pods))
	for _, p := range c.pods {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *corev1.Pod) int {
		switch {
		case a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name:
			return -1
		case a.Namespace+"/"+a.Name > b.Namespace+"/"+b.Name:
			return 1
		}
		return 0
	})
	return out
}

// Cycle runs one scheduling cycle now; its binds, evictions and status
// take effect at once.
func (c *Cluster) Cycle(ctx context.Context) scheduler.CycleStats {
	c.stats.Cycles++
	return c.sched.RunCycle(ctx)
}

// PendingWork reports whether some job waits to be admitted or placed:
// the scheduler runs a cycle only then.
func (c *Cluster) PendingWork() bool { return c.cache.PendingWork() }

// Advance moves the clock forward by d, applying the pod completions and
// deletions due on the way, in time order.
func (c *Cluster) Advance(d time.Duration) {
	until := c.Now().Add(d)
	for c.events.Len() > 0 && !c.events[0].at.After(until) {
		e := heap.Pop(&c.events).(*event)
		c.clock.SetTime(e.at)
		e.do()
	}
	c.clock.SetTime(until)
}

// Next is when the next pod completion or deletion is due; ok is false
// when none is.
func (c *Cluster) Next() (at time.Time, ok bool) {
	if c.events.Len() == 0 {
		return time.Time{}, false
	}
	return c.events[0].at, true
}

// RunFor runs cycles every period for d, advancing the clock between them.
// before, if set, is called before each cycle (to submit work).
func (c *Cluster) RunFor(ctx context.Context, d, period time.Duration, before func(now time.Time)) {
	end := c.Now().Add(d)
	for c.Now().Before(end) {
		if before != nil {
			before(c.Now())
		}
		c.Cycle(ctx)
		c.Advance(period)
	}
}

func (c *Cluster) at(t time.Time, do func()) {
	c.seq++
	heap.Push(&c.events, &event{at: t, seq: c.seq, do: do})
}

// update stores a changed pod and tells the cache, as a watch event would.
func (c *Cluster) update(p *corev1.Pod) { c.cache.UpdatePod(p.DeepCopy()) }

type binder struct{ c *Cluster }

func (b binder) Bind(t *api.TaskInfo, node string) {
	c := b.c
	p := c.pods[t.UID]
	if p == nil || p.Spec.NodeName != "" {
		return
	}
	if pb := c.opts.PreBinder; pb != nil {
		if err := pb.PreBind(context.Background(), t, node); err != nil {
			return
		}
	}
	now := metav1.NewTime(c.Now())
	p.Spec.NodeName = node
	// As the API server copies a binding's annotations onto the pod.
	if a := t.BindAnnotations(c.Now()); a != nil {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		maps.Copy(p.Annotations, a)
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.StartTime = &now
	c.stats.Binds++
	c.update(p)
	if c.opts.OnBound != nil {
		c.opts.OnBound(p, node, c.Now())
	}
	if d := c.runFor[p.UID]; d > 0 {
		uid := p.UID
		c.at(c.Now().Add(d), func() { c.finish(uid) })
	}
}

func (c *Cluster) finish(uid types.UID) {
	p := c.pods[uid]
	if p == nil || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		return
	}
	p.Status.Phase = corev1.PodSucceeded
	c.stats.Completions++
	c.update(p)
	if c.opts.OnFinished != nil {
		c.opts.OnFinished(p, c.Now())
	}
}

type evictor struct{ c *Cluster }

func (e evictor) Evict(t *api.TaskInfo, _ string) { e.c.Evict(t.UID) }

// Evict evicts a pod, as the Eviction API would: it goes after the
// eviction grace period. A pod gone or already going is left as it is.
func (c *Cluster) Evict(uid types.UID) {
	p := c.pods[uid]
	if p == nil || p.DeletionTimestamp != nil {
		return
	}
	now := metav1.NewTime(c.Now())
	p.DeletionTimestamp = &now
	c.stats.Evictions++
	c.update(p)
	c.at(c.Now().Add(c.opts.EvictionGrace), func() { c.remove(uid) })
}

// SetNodeUsage tells the scheduler a node's measured use, as the
// NodeUsage informer would.
func (c *Cluster) SetNodeUsage(nu *metricsv1alpha1.NodeUsage) { c.cache.UpdateNodeUsage(nu.DeepCopy()) }

func (c *Cluster) remove(uid types.UID) {
	p := c.pods[uid]
	if p == nil {
		return
	}
	delete(c.pods, uid)
	delete(c.runFor, uid)
	c.cache.DeletePod(p.DeepCopy())
	if c.opts.OnEvicted != nil {
		var ran time.Duration
		if p.Status.StartTime != nil {
			ran = p.DeletionTimestamp.Sub(p.Status.StartTime.Time)
		}
		c.opts.OnEvicted(c, p, ran)
	}
}

// Forget deletes a finished pod, as garbage collection of a done job
// would, so that it no longer weighs on the cache.
func (c *Cluster) Forget(p *corev1.Pod) {
	if cur := c.pods[p.UID]; cur != nil && (cur.Status.Phase == corev1.PodSucceeded || cur.Status.Phase == corev1.PodFailed) {
		delete(c.pods, p.UID)
		delete(c.runFor, p.UID)
		c.cache.DeletePod(cur.DeepCopy())
	}
}

// DeletePod deletes a pod at once, whatever its phase, as a user's delete
// of a pod without a grace period would.
func (c *Cluster) DeletePod(namespace, name string) {
	for uid, p := range c.pods {
		if p.Namespace == namespace && p.Name == name {
			delete(c.pods, uid)
			delete(c.runFor, uid)
			c.cache.DeletePod(p.DeepCopy())
			return
		}
	}
}

// ForgetPodGroup deletes a PodGroup whose pods are all gone.
func (c *Cluster) ForgetPodGroup(namespace, name string) {
	id := api.NewJobID(namespace, name)
	if pg := c.groups[id]; pg != nil {
		delete(c.groups, id)
		c.cache.DeletePodGroup(pg.DeepCopy())
	}
}

type nominations struct{ c *Cluster }

func (n nominations) WriteNomination(t *api.TaskInfo, node string) {
	if p := n.c.pods[t.UID]; p != nil {
		p.Status.NominatedNodeName = node
		n.c.update(p)
	}
}

// statusSink writes PodGroup status as the scheduler's status writer does.
type statusSink struct{ c *Cluster }

func (s statusSink) Apply(snap *api.Snapshot, outcomes map[api.JobID]*framework.JobOutcome, touched map[api.JobID]bool, now metav1.Time) {
	ids := make([]api.JobID, 0, len(outcomes)+len(touched))
	for id := range outcomes {
		ids = append(ids, id)
	}
	for id := range touched {
		if _, ok := outcomes[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		pg, job := s.c.groups[id], snap.Jobs[id]
		if pg == nil || job == nil {
			continue
		}
		desired := writeback.DesiredPodGroupStatus(job, outcomes[id], now)
		if equality.Semantic.DeepEqual(desired, pg.Status) {
			continue
		}
		pg.Status = desired
		s.c.cache.UpdatePodGroup(pg.DeepCopy())
	}
}

// event is something due at a time; seq keeps events of the same time in
// the order they were made.
type event struct {
	at  time.Time
	seq uint64
	do  func()
}

type events []*event

func (e events) Len() int { return len(e) }
func (e events) Less(i, j int) bool {
	if !e[i].at.Equal(e[j].at) {
		return e[i].at.Before(e[j].at)
	}
	return e[i].seq < e[j].seq
}
func (e events) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *events) Push(x any)   { *e = append(*e, x.(*event)) }
func (e *events) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}
