//go:build integration

package scheduler

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/test/poll"
)

// evictConfig runs preemption and reclaim over hierarchical capacity
// queues.
var evictConfig = strings.Replace(capacityConfig,
	"actions: [enqueue, allocate, backfill]", "actions: [enqueue, allocate, preempt, reclaim, backfill]", 1)

// scenarioPod is a 2-CPU pod of a scenario.
type scenarioPod struct {
	name, queue, class string
}

// evictionScenario fills 4-CPU nodes with running pods, oldest first, then
// submits pending pods and checks exactly which pods were evicted, which
// pending pods got bound and which stay pending.
type evictionScenario struct {
	ns      string
	nodes   int
	queues  []*schedulingv1beta1.Queue
	running []scenarioPod
	pending []scenarioPod
	// wantEvicted are the running pods evicted; wantBound the pending pods
	// bound in the end (the rest must still be pending then).
	wantEvicted []string
	wantBound   []string
}

func (s evictionScenario) run(t *testing.T) {
	t.Helper()
	if !strings.Contains(evictConfig, "reclaim") || !strings.Contains(evictConfig, "enableHierarchy") {
		t.Fatal("the configuration does not run reclaim over hierarchical queues")
	}
	createNamespace(t, s.ns)
	labelledNodes(t, s.ns, s.nodes, "4")
	for _, q := range s.queues {
		createQueue(t, q)
	}
	explained := fw.StartSchedulerExplained(t, evictConfig)
	create := func(p scenarioPod) {
		t.Helper()
		spec := podSpec(s.ns, "2")
		spec.PriorityClassName = p.class
		createPod(t, s.ns, p.name, map[string]string{schedulingv1beta1.QueueNameAnnotation: p.queue}, spec)
	}
	pods := func() map[string]corev1.Pod {
		out := map[string]corev1.Pod{}
		for _, p := range listPods(t, s.ns) {
			out[p.Name] = p
		}
		return out
	}
	for _, p := range s.running {
		create(p)
		poll.Eventually(t, t.Context(), 30*time.Second, p.name+" running", func() (bool, string) {
			got := pods()[p.name]
			return got.Status.Phase == corev1.PodRunning, fmt.Sprintf("phase %s, node %q", got.Status.Phase, got.Spec.NodeName)
		})
	}
	// Victims are chosen youngest first, by start time (in seconds): the
	// running pods started a minute apart, in the order listed.
	started := time.Now().Add(-time.Hour)
	for i, p := range s.running {
		setStartTime(t, s.ns, p.name, started.Add(time.Duration(i)*time.Minute))
	}
	for _, p := range s.pending {
		create(p)
	}
	state := func() (evicted, bound []string) {
		got := pods()
		for _, p := range s.running {
			if q, ok := got[p.name]; !ok || q.DeletionTimestamp != nil {
				evicted = append(evicted, p.name)
			}
		}
		for _, p := range s.pending {
			if got[p.name].Spec.NodeName != "" {
				bound = append(bound, p.name)
			}
		}
		slices.Sort(evicted)
		slices.Sort(bound)
		return evicted, bound
	}
	poll.Eventually(t, t.Context(), 60*time.Second, "the expected pods bound", func() (bool, string) {
		evicted, bound := state()
		return len(bound) >= len(s.wantBound), fmt.Sprintf("evicted %v, bound %v", evicted, bound)
	})
	// Settled: a cycle after this point changes nothing. It judges the
	// pods left pending and a probe that fits no node (so that there is
	// work, and so cycles, when no pod is left pending).
	since := time.Now()
	probe := podSpec(s.ns+"-nowhere", "2")
	createPod(t, s.ns, "probe", map[string]string{schedulingv1beta1.QueueNameAnnotation: s.pending[0].queue}, probe)
	var waiting []string
	for _, p := range pods() {
		if p.Spec.NodeName == "" && p.DeletionTimestamp == nil {
			waiting = append(waiting, podJob(p))
		}
	}
	explained.JudgedSince(t, 30*time.Second, since, waiting...)
	evicted, bound := state()
	if diff := cmp.Diff(s.wantEvicted, evicted); diff != "" {
		t.Errorf("evicted pods (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(s.wantBound, bound); diff != "" {
		t.Errorf("bound pending pods (-want,+got):\n%s", diff)
	}
}

func cpuQueue(name, parent string, deserved, guarantee string, reclaimable bool) *schedulingv1beta1.Queue {
	q := &schedulingv1beta1.Queue{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       schedulingv1beta1.QueueSpec{Weight: 1, Parent: parent, Reclaimable: &reclaimable},
	}
	if deserved != "" {
		q.Spec.Deserved = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(deserved)}
	}
	if guarantee != "" {
		q.Spec.Guarantee.Resource = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(guarantee)}
	}
	return q
}

// TestReclaimBetweenSiblings: while rs-a is idle, rs-b borrows its share
// and fills both nodes; when rs-a asks for one pod, rs-b's youngest pod is
// evicted for it, and only that one.
func TestReclaimBetweenSiblings(t *testing.T) {
	evictionScenario{
		ns:    "reclaim-siblings",
		nodes: 2,
		queues: []*schedulingv1beta1.Queue{
			cpuQueue("rs-a", "", "4", "", true),
			cpuQueue("rs-b", "", "4", "", true),
		},
		running:     []scenarioPod{{"b-0", "rs-b", ""}, {"b-1", "rs-b", ""}, {"b-2", "rs-b", ""}, {"b-3", "rs-b", ""}},
		pending:     []scenarioPod{{"a-0", "rs-a", ""}},
		wantEvicted: []string{"b-3"},
		wantBound:   []string{"a-0"},
	}.run(t)
}

// TestReclaimThroughThreeLevels: under root, department r3-a (deserving 8
// CPUs) has teams r3-a1 and r3-a2 (4 each); department r3-b (8) has team
// r3-b1 (8). r3-a2 runs its 4; r3-b1 borrowed r3-a1's idle 4 and runs 12.
// When r3-a1 asks for two pods, they come from its cousin r3-b1, which is
// above its deserved share at both levels, youngest first; r3-a2, at its
// share, keeps everything.
func TestReclaimThroughThreeLevels(t *testing.T) {
	evictionScenario{
		ns:    "reclaim-levels",
		nodes: 4,
		queues: []*schedulingv1beta1.Queue{
			cpuQueue("r3-a", "", "8", "", true),
			cpuQueue("r3-a1", "r3-a", "4", "", true),
			cpuQueue("r3-a2", "r3-a", "4", "", true),
			cpuQueue("r3-b", "", "8", "", true),
			cpuQueue("r3-b1", "r3-b", "8", "", true),
		},
		running: []scenarioPod{
			{"a2-0", "r3-a2", ""}, {"a2-1", "r3-a2", ""},
			{"b1-0", "r3-b1", ""}, {"b1-1", "r3-b1", ""}, {"b1-2", "r3-b1", ""},
			{"b1-3", "r3-b1", ""}, {"b1-4", "r3-b1", ""}, {"b1-5", "r3-b1", ""},
		},
		pending:     []scenarioPod{{"a1-0", "r3-a1", ""}, {"a1-1", "r3-a1", ""}},
		wantEvicted: []string{"b1-4", "b1-5"},
		wantBound:   []string{"a1-0", "a1-1"},
	}.run(t)
}

// TestReclaimKeepsGuarantee: rg-b is guaranteed 6 of the 8 CPUs and runs
// 8; rg-a and rg-c, deserving 2 each, both ask for a pod. One pod of rg-b
// goes back; then rg-b is at its guarantee and keeps the rest, so one of
// the two reclaimers waits.
func TestReclaimKeepsGuarantee(t *testing.T) {
	s := evictionScenario{
		ns:    "reclaim-guarantee",
		nodes: 2,
		queues: []*schedulingv1beta1.Queue{
			cpuQueue("rg-a", "", "2", "", true),
			cpuQueue("rg-c", "", "2", "", true),
			cpuQueue("rg-b", "", "", "6", true),
		},
		running:     []scenarioPod{{"b-0", "rg-b", ""}, {"b-1", "rg-b", ""}, {"b-2", "rg-b", ""}, {"b-3", "rg-b", ""}},
		pending:     []scenarioPod{{"a-0", "rg-a", ""}, {"c-0", "rg-c", ""}},
		wantEvicted: []string{"b-3"},
	}
	// Which of the two queues comes first is the queue order's choice
	// (equal shares: by name); exactly one is served.
	s.wantBound = []string{"a-0"}
	s.run(t)
}

// TestReclaimableFalse: a queue that is not reclaimable keeps what it
// borrowed; the reclaimer waits.
func TestReclaimableFalse(t *testing.T) {
	evictionScenario{
		ns:    "reclaim-false",
		nodes: 2,
		queues: []*schedulingv1beta1.Queue{
			cpuQueue("rf-a", "", "4", "", true),
			cpuQueue("rf-b", "", "4", "", false),
		},
		running: []scenarioPod{{"b-0", "rf-b", ""}, {"b-1", "rf-b", ""}, {"b-2", "rf-b", ""}, {"b-3", "rf-b", ""}},
		pending: []scenarioPod{{"a-0", "rf-a", ""}},
	}.run(t)
}

// TestPreemptionPolicyNever: a pod of a PriorityClass with
// preemptionPolicy Never waits for room instead of evicting lower-priority
// pods of its queue.
func TestPreemptionPolicyNever(t *testing.T) {
	never := corev1.PreemptNever
	for name, pc := range map[string]*schedv1.PriorityClass{
		"never-low":  {ObjectMeta: metav1.ObjectMeta{Name: "never-low"}, Value: 10},
		"never-high": {ObjectMeta: metav1.ObjectMeta{Name: "never-high"}, Value: 1000, PreemptionPolicy: &never},
	} {
		if err := fw.Client.Create(t.Context(), pc); client.IgnoreAlreadyExists(err) != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	evictionScenario{
		ns:      "preempt-never",
		nodes:   1,
		queues:  []*schedulingv1beta1.Queue{cpuQueue("pn", "", "", "", true)},
		running: []scenarioPod{{"low-0", "pn", "never-low"}, {"low-1", "pn", "never-low"}},
		pending: []scenarioPod{{"high", "pn", "never-high"}},
	}.run(t)
}

// setStartTime sets when a running pod started, as its kubelet reports it:
// victims are chosen by start time, and kwok starts pods within the same
// second.
func setStartTime(t *testing.T, ns, name string, at time.Time) {
	t.Helper()
	var p corev1.Pod
	if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &p); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(p.DeepCopy())
	p.Status.StartTime = &metav1.Time{Time: at}
	if err := fw.Client.Status().Patch(t.Context(), &p, patch); err != nil {
		t.Fatalf("setting the start time of %s: %v", name, err)
	}
}
