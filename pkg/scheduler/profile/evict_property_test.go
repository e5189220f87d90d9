package profile

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/config"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/podfit/evaluatortest"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// evictConfig is the full member-cluster configuration with preemption and
// reclaim over hierarchical capacity queues.
const evictConfig = `actions: "enqueue, allocate, preempt, reclaim, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
  - name: cdp
- plugins:
  - name: drf
  - name: predicates
  - name: capacity
    enableHierarchy: true
  - name: nodeorder
  - name: binpack
`

// decisions are what a cycle handed to its sinks.
type decisions struct {
	Binds, Nominations []string
	Evictions          []string
}

func (d *decisions) Bind(t *api.TaskInfo, node string) {
	d.Binds = append(d.Binds, t.Namespace+"/"+t.Name+"@"+node)
}
func (d *decisions) Evict(t *api.TaskInfo, _ string) {
	d.Evictions = append(d.Evictions, t.Namespace+"/"+t.Name)
}
func (d *decisions) Nominate(t *api.TaskInfo, node string) {
	d.Nominations = append(d.Nominations, t.Namespace+"/"+t.Name+"@"+node)
}
func (d *decisions) Unnominate(*api.TaskInfo) {}

// world is a random cluster and its workload, as API objects.
type world struct {
	objects api.Objects
	classes map[string]int32
	queues  map[string]*schedulingv1beta1.Queue
	jobs    int
	now     time.Time
}

var priorityClasses = map[string]int32{"low": 10, "mid": 50, "high": 100}

func cores(n int) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(int64(n), resource.DecimalSI)}
}

// randomWorld builds 2-6 nodes and a two-level queue tree whose teams
// deserve (some are guaranteed, capped, or not reclaimable) about what the
// cluster has.
func randomWorld(r *rand.Rand) *world {
	w := &world{classes: priorityClasses, queues: map[string]*schedulingv1beta1.Queue{}, now: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	total := 0
	for i := range 2 + r.IntN(5) {
		cpu := 4 << r.IntN(2)
		total += cpu
		w.objects.Nodes = append(w.objects.Nodes, st.MakeNode(fmt.Sprintf("n%d", i)).Alloc("cpu", fmt.Sprint(cpu), "memory", "64Gi").Obj())
	}
	w.add(schedtesting.MakeQueue("root").Obj())
	depts := 2
	teams := 0
	for d := range depts {
		dept := fmt.Sprintf("d%d", d)
		n := 1 + r.IntN(2)
		share := total / depts
		dq := schedtesting.MakeQueue(dept).Deserved(cores(share)).Obj()
		w.add(dq)
		for t := range n {
			tq := schedtesting.MakeQueue(fmt.Sprintf("%s-t%d", dept, t)).Parent(dept).Deserved(cores(max(1, share/n))).Obj()
			if r.IntN(3) == 0 {
				tq.Spec.Guarantee.Resource = cores(max(1, share/n/2))
			}
			if r.IntN(5) == 0 {
				tq.Spec.Capability = cores(share/n + share/(2*n) + 1)
			}
			if r.IntN(6) == 0 {
				no := false
				tq.Spec.Reclaimable = &no
			}
			w.add(tq)
			teams++
		}
	}
	return w
}

func (w *world) add(q *schedulingv1beta1.Queue) {
	w.queues[q.Name] = q
	w.objects.Queues = append(w.objects.Queues, q)
}

func (w *world) leaves() []string {
	var out []string
	for name, q := range w.queues {
		if q.Spec.Parent != "" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// submit adds a gang of 1-3 minimum members (up to two more pods) of 1-4
// CPUs each in a random team, at a random priority.
func (w *world) submit(r *rand.Rand) {
	name := fmt.Sprintf("j%02d", w.jobs)
	w.jobs++
	leaves := w.leaves()
	queue := leaves[r.IntN(len(leaves))]
	classes := []string{"low", "mid", "high"}
	class := classes[r.IntN(len(classes))]
	min := 1 + r.IntN(3)
	pods := min + r.IntN(3)
	cpu := 1 + r.IntN(4)
	w.objects.PodGroups = append(w.objects.PodGroups, schedtesting.MakePodGroup(name, "ns").Queue(queue).MinMember(int32(min)).
		PriorityClassName(class).Phase(schedulingv1beta1.PodGroupInqueue).Obj())
	created := metav1.NewTime(w.now.Add(time.Duration(w.jobs) * time.Minute))
	for i := range pods {
		p := st.MakePod("ns", fmt.Sprintf("%s-%d", name, i)).Group(name).Req("cpu", fmt.Sprint(cpu), "memory", "1Gi").
			Priority(w.classes[class]).Created(created).Obj()
		p.Spec.PriorityClassName = class
		w.objects.Pods = append(w.objects.Pods, p)
	}
}

// snapshot builds a snapshot from a deep copy of the objects.
func (w *world) snapshot() *api.Snapshot {
	o := api.Objects{PriorityOf: func(c string) int32 { return w.classes[c] }}
	for _, n := range w.objects.Nodes {
		o.Nodes = append(o.Nodes, n.DeepCopy())
	}
	for _, p := range w.objects.Pods {
		o.Pods = append(o.Pods, p.DeepCopy())
	}
	for _, pg := range w.objects.PodGroups {
		o.PodGroups = append(o.PodGroups, pg.DeepCopy())
	}
	for _, q := range w.objects.Queues {
		o.Queues = append(o.Queues, q.DeepCopy())
	}
	return api.Build(o)
}

// cycle runs one cycle of the profile over a fresh snapshot.
func (w *world) cycle(t *testing.T, prof *Profile) (*api.Snapshot, *framework.Session, *decisions) {
	t.Helper()
	snap := w.snapshot()
	d := &decisions{}
	ssn := framework.OpenSession(t.Context(), snap, prof.Tiers, framework.Options{Now: w.now, Sink: d, Evictor: d, Nominator: d})
	for _, a := range prof.Actions {
		a.Execute(ssn)
	}
	ssn.Close()
	return snap, ssn, d
}

// apply makes a cycle's binds real: the pods run on their nodes.
func (w *world) apply(d *decisions) {
	nodeOf := map[string]string{}
	for _, b := range d.Binds {
		pod, node, _ := strings.Cut(b, "@")
		nodeOf[pod] = node
	}
	for _, p := range w.objects.Pods {
		if node, ok := nodeOf[p.Namespace+"/"+p.Name]; ok {
			p.Spec.NodeName = node
			p.Status.Phase = corev1.PodRunning
		}
	}
}

// TestPreemptAndReclaimProperties runs thousands of random clusters: a
// first wave of jobs is placed without evictions, then a second wave
// arrives and one cycle runs with preempt and reclaim. After it, no gang
// is partly bound, every eviction serves a job that then has its gang, no
// queue holds more than its capability, no queue was reclaimed below its
// guarantee, and the same snapshot gives the same decisions.
func TestPreemptAndReclaimProperties(t *testing.T) {
	cfg, err := config.Load([]byte(evictConfig), NameRegistry())
	if err != nil {
		t.Fatal(err)
	}
	evaluator := evaluatortest.NewEvaluator(t)
	prof, err := Build(cfg, &framework.Handle{PodFit: evaluator})
	if err != nil {
		t.Fatal(err)
	}
	calm := &Profile{Tiers: prof.Tiers}
	for _, a := range prof.Actions {
		if n := a.Name(); n != "preempt" && n != "reclaim" {
			calm.Actions = append(calm.Actions, a)
		}
	}
	cases := 2000
	if testing.Short() {
		cases = 200
	}
	var withEvictions, withReclaim int
	for seed := range cases {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		w := randomWorld(r)
		for range 3 + r.IntN(6) {
			w.submit(r)
		}
		for range 3 {
			_, _, d := w.cycle(t, calm)
			w.apply(d)
		}
		for range 2 + r.IntN(5) {
			w.submit(r)
		}
		snap, ssn, d := w.cycle(t, prof)
		if problems := check(w, snap, ssn, d); len(problems) > 0 {
			t.Fatalf("seed %d: %s\ndecisions: %+v", seed, strings.Join(problems, "\n"), d)
		}
		_, _, again := w.cycle(t, prof)
		if diff := cmp.Diff(d, again); diff != "" {
			t.Fatalf("seed %d: the same snapshot gave other decisions (-first,+second):\n%s", seed, diff)
		}
		if len(d.Evictions) > 0 {
			withEvictions++
			for _, e := range ssn.Evictions() {
				if snap.Jobs[e.By].Queue != snap.Jobs[e.Task.Job].Queue {
					withReclaim++
					break
				}
			}
		}
	}
	t.Logf("%d cases, %d with evictions, %d with reclaim across queues", cases, withEvictions, withReclaim)
	// The properties must have been put to the test.
	if withEvictions < cases/20 || withReclaim < cases/50 {
		t.Errorf("only %d of %d cases evicted (%d across queues): the generator no longer exercises preemption", withEvictions, cases, withReclaim)
	}
}

// check returns every property the cycle's decisions break.
func check(w *world, snap *api.Snapshot, ssn *framework.Session, d *decisions) []string {
	var problems []string
	evicted := map[string]bool{}
	for _, e := range d.Evictions {
		evicted[e] = true
	}
	placed := map[string]bool{}
	for _, b := range append(slices.Clone(d.Binds), d.Nominations...) {
		pod, _, _ := strings.Cut(b, "@")
		placed[pod] = true
	}
	// What each job and queue holds once the decisions take effect.
	jobPlaced := map[api.JobID]int32{}
	boundNow := map[api.JobID]bool{}
	held := map[string]int64{}
	for _, j := range snap.Jobs {
		for _, tk := range j.Tasks {
			key := tk.Namespace + "/" + tk.Name
			running := tk.Pod.Spec.NodeName != "" && !evicted[key]
			if !running && !placed[key] {
				continue
			}
			jobPlaced[j.UID]++
			if placed[key] && slices.ContainsFunc(d.Binds, func(b string) bool { return strings.HasPrefix(b, key+"@") }) {
				boundNow[j.UID] = true
			}
			for q := string(j.Queue); q != ""; q = w.queues[q].Spec.Parent {
				held[q] += tk.Resreq.MilliCPU
			}
		}
	}
	for id := range boundNow {
		if j := snap.Jobs[id]; jobPlaced[id] < j.MinAvailable {
			problems = append(problems, fmt.Sprintf("job %s is bound partly: %d placed, minAvailable %d", id, jobPlaced[id], j.MinAvailable))
		}
	}
	for _, e := range ssn.Evictions() {
		if j := snap.Jobs[e.By]; jobPlaced[e.By] < j.MinAvailable {
			problems = append(problems, fmt.Sprintf("%s/%s was evicted for job %s, which has %d of its %d", e.Task.Namespace, e.Task.Name, e.By, jobPlaced[e.By], j.MinAvailable))
		}
	}
	for name, q := range w.queues {
		if c, ok := q.Spec.Capability[corev1.ResourceCPU]; ok && held[name] > c.MilliValue() {
			problems = append(problems, fmt.Sprintf("queue %s holds %dm CPU, above its capability %s", name, held[name], c.String()))
		}
	}
	// Reclaim never takes a queue below its guarantee: every queue that
	// lost a task to a job outside its subtree keeps its guarantee.
	for _, e := range ssn.Evictions() {
		by := ancestry(w, string(snap.Jobs[e.By].Queue))
		for q := string(snap.Jobs[e.Task.Job].Queue); q != ""; q = w.queues[q].Spec.Parent {
			if by[q] {
				break
			}
			if g, ok := w.queues[q].Spec.Guarantee.Resource[corev1.ResourceCPU]; ok && held[q] < g.MilliValue() {
				problems = append(problems, fmt.Sprintf("queue %s was reclaimed from down to %dm CPU, below its guarantee %s", q, held[q], g.String()))
			}
			if r := w.queues[q].Spec.Reclaimable; r != nil && !*r {
				problems = append(problems, fmt.Sprintf("queue %s is not reclaimable, yet %s/%s was evicted for %s", q, e.Task.Namespace, e.Task.Name, e.By))
			}
		}
	}
	return problems
}

// ancestry is the queue and its ancestors.
func ancestry(w *world, queue string) map[string]bool {
	out := map[string]bool{}
	for q := queue; q != ""; q = w.queues[q].Spec.Parent {
		out[q] = true
	}
	return out
}
