package capacity

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/allocate"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/enqueue"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/drf"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/gang"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/priority"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

var res = schedtesting.Resources

// perQueue counts binds per queue, in bind order.
type perQueue struct {
	snap  *api.Snapshot
	count map[api.QueueID]int
	order []api.QueueID
}

func (r *perQueue) Bind(t *api.TaskInfo, _ string) {
	q := r.snap.Jobs[t.Job].Queue
	r.count[q]++
	r.order = append(r.order, q)
}

func tierPlugin(t testing.TB, f framework.PluginFactory) framework.TierPlugin {
	t.Helper()
	p, err := f(nil, &framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	return framework.TierPlugin{Plugin: p}
}

// setup returns a capacity plugin and tiers holding it beside the plugins
// a Volcano configuration enables with it.
func setup(t testing.TB) (*Plugin, []framework.Tier) {
	t.Helper()
	p := tierPlugin(t, hierarchical)
	return p.Plugin.(*Plugin), []framework.Tier{
		{Plugins: []framework.TierPlugin{tierPlugin(t, priority.New), tierPlugin(t, gang.New)}},
		{Plugins: []framework.TierPlugin{tierPlugin(t, drf.New), p}},
	}
}

// hierarchical builds the plugin with enableHierarchy, as most tests need.
func hierarchical(_ any, h *framework.Handle) (framework.Plugin, error) {
	hh := framework.Handle{Hierarchy: true}
	if h != nil {
		hh = *h
		hh.Hierarchy = true
	}
	return New(nil, &hh)
}

// pods returns n pending pods without a PodGroup in queue, each its own
// job, named <queue>-<i>.
func pods(queue string, n int, req ...string) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range n {
		out = append(out, st.MakePod("ns", fmt.Sprintf("%s-%03d", queue, i)).Req(req...).
			Annotation(schedulingv1beta1.QueueNameAnnotation, queue).Obj())
	}
	return out
}

// running returns n pods of queue running on node, named <queue>-run-<i>.
func running(queue, node string, n int, req ...string) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range n {
		out = append(out, st.MakePod("ns", fmt.Sprintf("%s-run-%03d", queue, i)).Req(req...).
			Annotation(schedulingv1beta1.QueueNameAnnotation, queue).Node(node).Phase(corev1.PodRunning).Obj())
	}
	return out
}

// gangJob returns a PodGroup admitted to queue and its n pending pods.
func gangJob(name, queue string, n int, req ...string) (*schedulingv1beta1.PodGroup, []*corev1.Pod) {
	pg := schedtesting.MakePodGroup(name, "ns").Queue(queue).MinMember(int32(n)).Phase(schedulingv1beta1.PodGroupInqueue).Obj()
	var out []*corev1.Pod
	for i := range n {
		out = append(out, st.MakePod("ns", fmt.Sprintf("%s-%02d", name, i)).Group(name).Req(req...).Obj())
	}
	return pg, out
}

func nodes(n int, alloc ...string) []*corev1.Node {
	var out []*corev1.Node
	for i := range n {
		out = append(out, st.MakeNode(fmt.Sprintf("n%d", i)).Alloc(alloc...).Obj())
	}
	return out
}

// shadowJob is the job ID of a pod without a PodGroup built by pods or
// running.
func shadowJob(pod string) api.JobID {
	return api.NewJobID("ns", api.ShadowPodGroupPrefix+"ns-"+pod)
}

// cycle runs the actions on the objects and returns what each queue got, in
// bind order, and the session's outcomes.
func cycle(t *testing.T, o api.Objects, actions ...framework.Action) (*perQueue, map[api.JobID]*framework.JobOutcome) {
	t.Helper()
	snap := api.Build(o)
	rec := &perQueue{snap: snap, count: map[api.QueueID]int{}}
	_, tiers := setup(t)
	ssn := framework.OpenSession(t.Context(), snap, tiers, framework.Options{Sink: rec})
	for _, a := range actions {
		a.Execute(ssn)
	}
	ssn.Close()
	return rec, ssn.Outcomes()
}

func reasonOf(outcomes map[api.JobID]*framework.JobOutcome, job api.JobID) string {
	if o := outcomes[job]; o != nil && o.Unschedulable() != nil {
		return o.Unschedulable().String()
	}
	return ""
}

func TestCapabilityNeverExceeded(t *testing.T) {
	gpuNodes := nodes(4, "cpu", "10", "memory", "64Gi", "nvidia.com/gpu", "4")
	discarded, discardedPods := gangJob("big", "ml", 10, "cpu", "1")
	cases := map[string]struct {
		nodes     []*corev1.Node
		queues    []*schedulingv1beta1.Queue
		podGroups []*schedulingv1beta1.PodGroup
		pods      []*corev1.Pod
		want      map[api.QueueID]int
		// reasons are the expected reasons of some of the jobs left pending.
		reasons map[api.JobID]string
	}{
		"a queue's cpu capability caps it": {
			queues: []*schedulingv1beta1.Queue{schedtesting.MakeQueue("a").Capability(res("cpu", "6")).Obj()},
			pods:   pods("a", 10, "cpu", "1"),
			want:   map[api.QueueID]int{"a": 6},
			reasons: map[api.JobID]string{
				shadowJob("a-006"): "QueueCapabilityExceeded: 0 of 1 tasks placeable, 1 needed together (minAvailable); queue a would hold cpu 7 with task a-006, above what it may hold (cpu 6) in [cpu]",
			},
		},
		"a memory capability caps memory only": {
			queues: []*schedulingv1beta1.Queue{schedtesting.MakeQueue("a").Capability(res("memory", "8Gi")).Obj()},
			pods:   pods("a", 10, "cpu", "1", "memory", "2Gi"),
			want:   map[api.QueueID]int{"a": 4},
			reasons: map[api.JobID]string{
				shadowJob("a-004"): "QueueCapabilityExceeded: 0 of 1 tasks placeable, 1 needed together (minAvailable); queue a would hold cpu 5, memory 10Gi with task a-004, above what it may hold (cpu 40, memory 8Gi) in [memory]",
			},
		},
		"an ancestor's capability caps its children together": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("eng").Capability(res("cpu", "8")).Obj(),
				schedtesting.MakeQueue("ml").Parent("eng").Deserved(res("cpu", "4")).Obj(),
				schedtesting.MakeQueue("web").Parent("eng").Deserved(res("cpu", "4")).Obj(),
			},
			pods: append(pods("ml", 10, "cpu", "1"), pods("web", 10, "cpu", "1")...),
			want: map[api.QueueID]int{"ml": 4, "web": 4},
			reasons: map[api.JobID]string{
				shadowJob("web-004"): "QueueCapabilityExceeded: 0 of 1 tasks placeable, 1 needed together (minAvailable); queue eng would hold cpu 9 with task web-004 of queue web, above what it may hold (cpu 8) in [cpu]",
			},
		},
		"a child's own capability within its parent's": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("eng").Capability(res("cpu", "8")).Obj(),
				schedtesting.MakeQueue("ml").Parent("eng").Capability(res("cpu", "3")).Obj(),
				schedtesting.MakeQueue("web").Parent("eng").Obj(),
			},
			pods: append(pods("ml", 10, "cpu", "1"), pods("web", 10, "cpu", "1")...),
			want: map[api.QueueID]int{"ml": 3, "web": 5},
		},
		"a resource the child does not cap is capped by its ancestor": {
			nodes: gpuNodes,
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("eng").Capability(res("nvidia.com/gpu", "3")).Obj(),
				schedtesting.MakeQueue("ml").Parent("eng").Capability(res("cpu", "20")).Obj(),
			},
			pods: pods("ml", 10, "cpu", "1", "nvidia.com/gpu", "1"),
			want: map[api.QueueID]int{"ml": 3},
			reasons: map[api.JobID]string{
				shadowJob("ml-003"): "QueueCapabilityExceeded: 0 of 1 tasks placeable, 1 needed together (minAvailable); queue eng would hold cpu 4, nvidia.com/gpu 4 with task ml-003 of queue ml, above what it may hold (cpu 40, nvidia.com/gpu 3) in [nvidia.com/gpu]",
			},
		},
		"a discarded gang gives back what it took": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("eng").Capability(res("cpu", "8")).Obj(),
				schedtesting.MakeQueue("ml").Parent("eng").Obj(),
				schedtesting.MakeQueue("web").Parent("eng").Obj(),
			},
			podGroups: []*schedulingv1beta1.PodGroup{discarded},
			pods:      append(discardedPods, pods("web", 10, "cpu", "1")...),
			want:      map[api.QueueID]int{"web": 8},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.nodes == nil {
				tc.nodes = nodes(4, "cpu", "10", "memory", "64Gi")
			}
			rec, outcomes := cycle(t, api.Objects{Nodes: tc.nodes, Queues: tc.queues, PodGroups: tc.podGroups, Pods: tc.pods}, allocate.New())
			if diff := cmp.Diff(tc.want, rec.count); diff != "" {
				t.Errorf("placed per queue (-want,+got):\n%s", diff)
			}
			for job, want := range tc.reasons {
				if diff := cmp.Diff(want, reasonOf(outcomes, job)); diff != "" {
					t.Errorf("reason of %s (-want,+got):\n%s", job, diff)
				}
			}
		})
	}
}

// TestBorrowingAndOveruse follows a queue that borrows its idle sibling's
// share and then, once the sibling has work, waits while the sibling goes
// first, even with room left under its capability.
func TestBorrowingAndOveruse(t *testing.T) {
	queues := []*schedulingv1beta1.Queue{
		schedtesting.MakeQueue("org").Obj(),
		schedtesting.MakeQueue("a").Parent("org").Deserved(res("cpu", "4")).Capability(res("cpu", "10")).Obj(),
		schedtesting.MakeQueue("b").Parent("org").Deserved(res("cpu", "6")).Obj(),
	}
	cluster := nodes(1, "cpu", "12", "memory", "64Gi")

	// The sibling is idle: a borrows beyond its deserved 4, up to its
	// capability.
	rec, _ := cycle(t, api.Objects{Nodes: cluster, Queues: queues, Pods: pods("a", 12, "cpu", "1")}, allocate.New())
	if diff := cmp.Diff(map[api.QueueID]int{"a": 10}, rec.count); diff != "" {
		t.Fatalf("placed while b is idle (-want,+got):\n%s", diff)
	}

	// Later: a runs 6 and has 4 more pending; b has a gang of 8 that the 6
	// free cpus cannot hold yet.
	bigGang, bigGangPods := gangJob("bjob", "b", 8, "cpu", "1")
	o := api.Objects{
		Nodes:     cluster,
		Queues:    queues,
		PodGroups: []*schedulingv1beta1.PodGroup{bigGang},
		Pods:      slices.Concat(running("a", "n0", 6, "cpu", "1"), pods("a", 4, "cpu", "1"), bigGangPods),
	}
	snap := api.Build(o)
	p, tiers := setup(t)
	rec = &perQueue{snap: snap, count: map[api.QueueID]int{}}
	ssn := framework.OpenSession(t.Context(), snap, tiers, framework.Options{Sink: rec})
	type state struct {
		OverusedA, OverusedB bool
		BFirst               bool
	}
	got := state{
		OverusedA: p.Overused(snap.Queues["a"]),
		OverusedB: p.Overused(snap.Queues["b"]),
		BFirst:    ssn.QueueLess(snap.Queues["b"], snap.Queues["a"]),
	}
	if diff := cmp.Diff(state{OverusedA: true, BFirst: true}, got); diff != "" {
		t.Errorf("before allocating (-want,+got):\n%s", diff)
	}
	allocate.New().Execute(ssn)
	ssn.Close()
	// a does not take the free cpus b waits for.
	if diff := cmp.Diff(map[api.QueueID]int{}, rec.count); diff != "" {
		t.Errorf("placed per queue (-want,+got):\n%s", diff)
	}
	types := map[api.JobID]string{}
	for _, id := range []api.JobID{"ns/bjob", shadowJob("a-000")} {
		if o := ssn.Outcomes()[id]; o != nil && o.Unschedulable() != nil {
			types[id] = o.Unschedulable().Type
		}
	}
	wantTypes := map[api.JobID]string{"ns/bjob": "NotEnoughResources", shadowJob("a-000"): "QueueOverused"}
	if diff := cmp.Diff(wantTypes, types); diff != "" {
		t.Errorf("reasons (-want,+got):\n%s", diff)
	}
}

func TestOverused(t *testing.T) {
	cluster := nodes(2, "cpu", "10", "memory", "64Gi")
	pendingGroup := schedtesting.MakePodGroup("later", "ns").Queue("b").MinMember(1).Phase(schedulingv1beta1.PodGroupPending).Obj()
	pendingGroupPod := st.MakePod("ns", "later-0").Group("later").Req("cpu", "1").Obj()
	cases := map[string]struct {
		queues    []*schedulingv1beta1.Queue
		podGroups []*schedulingv1beta1.PodGroup
		pods      []*corev1.Pod
		want      []api.QueueID
	}{
		"a borrower with an idle sibling is not overused": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("a").Deserved(res("cpu", "4")).Obj(),
				schedtesting.MakeQueue("b").Deserved(res("cpu", "4")).Obj(),
			},
			pods: running("a", "n0", 8, "cpu", "1"),
		},
		"a borrower is overused while a sibling below its deserved waits": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("a").Deserved(res("cpu", "4")).Obj(),
				schedtesting.MakeQueue("b").Deserved(res("cpu", "4")).Obj(),
			},
			pods: slices.Concat(running("a", "n0", 8, "cpu", "1"), pods("b", 1, "cpu", "1")),
			want: []api.QueueID{"a"},
		},
		"a queue below its deserved amount of one resource it deserves is not overused": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("a").Deserved(res("cpu", "4", "memory", "8Gi")).Obj(),
				schedtesting.MakeQueue("b").Deserved(res("cpu", "4")).Obj(),
			},
			pods: slices.Concat(running("a", "n0", 8, "cpu", "1", "memory", "512Mi"), pods("b", 1, "cpu", "1")),
		},
		"a waiting sibling that holds its deserved amount overuses nobody": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("a").Deserved(res("cpu", "4")).Obj(),
				schedtesting.MakeQueue("b").Deserved(res("cpu", "4")).Obj(),
			},
			pods: slices.Concat(running("a", "n0", 8, "cpu", "1"), running("b", "n1", 4, "cpu", "1"), pods("b", 1, "cpu", "1")),
		},
		"pending jobs not yet admitted do not wait": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("a").Deserved(res("cpu", "4")).Obj(),
				schedtesting.MakeQueue("b").Deserved(res("cpu", "4")).Obj(),
			},
			podGroups: []*schedulingv1beta1.PodGroup{pendingGroup},
			pods:      append(running("a", "n0", 8, "cpu", "1"), pendingGroupPod),
		},
		"a queue is overused through an ancestor that borrows from its waiting sibling": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("A").Deserved(res("cpu", "5")).Obj(),
				schedtesting.MakeQueue("a1").Parent("A").Deserved(res("cpu", "3")).Obj(),
				schedtesting.MakeQueue("a2").Parent("A").Deserved(res("cpu", "2")).Obj(),
				schedtesting.MakeQueue("B").Deserved(res("cpu", "5")).Obj(),
				schedtesting.MakeQueue("b1").Parent("B").Deserved(res("cpu", "5")).Obj(),
			},
			// a1 is within its deserved 3 but A holds 8 of its 5, and B waits.
			pods: slices.Concat(running("a1", "n0", 2, "cpu", "1"), running("a2", "n0", 6, "cpu", "1"), pods("b1", 1, "cpu", "1")),
			want: []api.QueueID{"A", "a1", "a2"},
		},
		"a cousin's wait does not overuse a queue whose ancestor is within its deserved": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("A").Deserved(res("cpu", "10")).Obj(),
				schedtesting.MakeQueue("a1").Parent("A").Deserved(res("cpu", "3")).Obj(),
				schedtesting.MakeQueue("B").Deserved(res("cpu", "5")).Obj(),
				schedtesting.MakeQueue("b1").Parent("B").Deserved(res("cpu", "5")).Obj(),
			},
			pods: slices.Concat(running("a1", "n0", 6, "cpu", "1"), pods("b1", 1, "cpu", "1")),
		},
		"a best-effort queue is overused while a sibling below its deserved waits": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("a").Deserved(res("cpu", "4")).Obj(),
				schedtesting.MakeQueue("scavenger").Obj(),
			},
			pods: pods("a", 1, "cpu", "1"),
			want: []api.QueueID{"scavenger"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := api.Build(api.Objects{Nodes: cluster, Queues: tc.queues, PodGroups: tc.podGroups, Pods: tc.pods})
			p, tiers := setup(t)
			ssn := framework.OpenSession(t.Context(), snap, tiers, framework.Options{})
			defer ssn.Close()
			var got []api.QueueID
			for _, q := range tc.queues {
				if p.Overused(snap.Queues[api.QueueID(q.Name)]) {
					got = append(got, api.QueueID(q.Name))
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("overused queues (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestGuaranteeReserved(t *testing.T) {
	cluster := nodes(1, "cpu", "10", "memory", "64Gi")
	guaranteed := schedtesting.MakeQueue("g").Guarantee(res("cpu", "4")).Deserved(res("cpu", "4")).Obj()
	cases := map[string]struct {
		queues []*schedulingv1beta1.Queue
		// others are the queues that compete with g.
		others []string
		want   map[api.QueueID]int
		reason string
	}{
		"a queue whose capability is the whole cluster leaves the guarantee": {
			queues: []*schedulingv1beta1.Queue{guaranteed, schedtesting.MakeQueue("x").Capability(res("cpu", "10")).Obj()},
			others: []string{"x"},
			want:   map[api.QueueID]int{"x": 6},
			reason: "QueueCapabilityExceeded: 0 of 1 tasks placeable, 1 needed together (minAvailable); queue x would hold cpu 7 with task x-006, above what it may hold (cpu 6) in [cpu]",
		},
		"queues without capability together leave the guarantee": {
			queues: []*schedulingv1beta1.Queue{
				guaranteed,
				schedtesting.MakeQueue("x").Deserved(res("cpu", "3")).Obj(),
				schedtesting.MakeQueue("y").Deserved(res("cpu", "3")).Obj(),
			},
			others: []string{"x", "y"},
			want:   map[api.QueueID]int{"x": 3, "y": 3},
			reason: "QueueGuaranteeReserved: 0 of 1 tasks placeable, 1 needed together (minAvailable); task x-003 of queue x would leave less than the unused guarantees of other queues (cpu 4) free in the cluster, which would hold cpu 7 of cpu 10 in [cpu]",
		},
		"siblings under a parent leave a cousin's guarantee": {
			queues: []*schedulingv1beta1.Queue{
				guaranteed,
				schedtesting.MakeQueue("org").Obj(),
				schedtesting.MakeQueue("x").Parent("org").Deserved(res("cpu", "3")).Obj(),
				schedtesting.MakeQueue("y").Parent("org").Deserved(res("cpu", "3")).Obj(),
			},
			others: []string{"x", "y"},
			want:   map[api.QueueID]int{"x": 3, "y": 3},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var waiting []*corev1.Pod
			for _, q := range tc.others {
				waiting = append(waiting, pods(q, 10, "cpu", "1")...)
			}
			rec, outcomes := cycle(t, api.Objects{Nodes: cluster, Queues: tc.queues, Pods: waiting}, allocate.New())
			if diff := cmp.Diff(tc.want, rec.count); diff != "" {
				t.Errorf("placed while g is idle (-want,+got):\n%s", diff)
			}
			if tc.reason != "" {
				if diff := cmp.Diff(tc.reason, reasonOf(outcomes, shadowJob(tc.others[0]+"-"+fmt.Sprintf("%03d", tc.want[api.QueueID(tc.others[0])])))); diff != "" {
					t.Errorf("reason of the first job left waiting (-want,+got):\n%s", diff)
				}
			}

			// Next cycle: the others run what they got, g asks for its
			// guarantee and gets it.
			var objects []*corev1.Pod
			for _, q := range tc.others {
				objects = append(objects, running(q, "n0", tc.want[api.QueueID(q)], "cpu", "1")...)
				objects = append(objects, pods(q, 4, "cpu", "1")...)
			}
			objects = append(objects, pods("g", 4, "cpu", "1")...)
			rec, _ = cycle(t, api.Objects{Nodes: cluster, Queues: tc.queues, Pods: objects}, allocate.New())
			if diff := cmp.Diff(map[api.QueueID]int{"g": 4}, rec.count); diff != "" {
				t.Errorf("placed once g has work (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestEnqueueAdmission(t *testing.T) {
	pg := func(name, queue string, min ...string) *schedulingv1beta1.PodGroup {
		return schedtesting.MakePodGroup(name, "ns").MinMember(1).Queue(queue).MinResources(res(min...)).Obj()
	}
	cases := map[string]struct {
		queues    []*schedulingv1beta1.Queue
		podGroups []*schedulingv1beta1.PodGroup
		pods      []*corev1.Pod
		// want maps each job to its reason, "" when admitted.
		want map[string]string
	}{
		"the queue's capability": {
			queues:    []*schedulingv1beta1.Queue{schedtesting.MakeQueue("a").Capability(res("cpu", "10")).Obj()},
			podGroups: []*schedulingv1beta1.PodGroup{pg("first", "a", "cpu", "6"), pg("second", "a", "cpu", "6")},
			want: map[string]string{
				"first":  "",
				"second": "QueueCapabilityExceeded: queue a cannot admit the job: its minimum (cpu 6) with the queue's allocated (none) and admitted (cpu 6) resources exceeds what the queue may hold (cpu 10) in [cpu]",
			},
		},
		"what the queue holds counts": {
			queues:    []*schedulingv1beta1.Queue{schedtesting.MakeQueue("a").Capability(res("cpu", "10", "memory", "20Gi")).Obj()},
			podGroups: []*schedulingv1beta1.PodGroup{pg("first", "a", "cpu", "2", "memory", "9Gi")},
			pods:      running("a", "n0", 3, "cpu", "1", "memory", "4Gi"),
			want: map[string]string{
				"first": "QueueCapabilityExceeded: queue a cannot admit the job: its minimum (cpu 2, memory 9Gi) with the queue's allocated (cpu 3, memory 12Gi) and admitted (none) resources exceeds what the queue may hold (cpu 10, memory 20Gi) in [memory]",
			},
		},
		"an ancestor's capability": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("eng").Capability(res("cpu", "10")).Obj(),
				schedtesting.MakeQueue("ml").Parent("eng").Obj(),
				schedtesting.MakeQueue("web").Parent("eng").Obj(),
			},
			podGroups: []*schedulingv1beta1.PodGroup{pg("train", "ml", "cpu", "6"), pg("serve", "web", "cpu", "6")},
			want: map[string]string{
				"train": "",
				"serve": "QueueCapabilityExceeded: queue web cannot admit the job: its minimum (cpu 6) with the allocated (none) and admitted (cpu 6) resources of its ancestor eng exceeds what eng may hold (cpu 10) in [cpu]",
			},
		},
		"other queues' guarantees": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("a").Obj(),
				schedtesting.MakeQueue("g").Guarantee(res("cpu", "30")).Deserved(res("cpu", "30")).Obj(),
			},
			podGroups: []*schedulingv1beta1.PodGroup{pg("big", "a", "cpu", "12"), pg("reserved", "g", "cpu", "30")},
			want: map[string]string{
				"big":      "QueueCapabilityExceeded: queue a cannot admit the job: its minimum (cpu 12) with the queue's allocated (none) and admitted (none) resources exceeds what the queue may hold (cpu 10) in [cpu]",
				"reserved": "",
			},
		},
		"a queue with child queues": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("eng").Obj(),
				schedtesting.MakeQueue("ml").Parent("eng").Obj(),
				schedtesting.MakeQueue("web").Parent("eng").Obj(),
			},
			podGroups: []*schedulingv1beta1.PodGroup{pg("misplaced", "eng", "cpu", "1")},
			want: map[string]string{
				"misplaced": "QueueNotLeaf: queue eng has child queues (ml, web); jobs may only be submitted to leaf queues",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, outcomes := cycle(t, api.Objects{Nodes: nodes(4, "cpu", "10", "memory", "64Gi"), Queues: tc.queues, PodGroups: tc.podGroups, Pods: tc.pods}, enqueue.New())
			got := map[string]string{}
			for _, g := range tc.podGroups {
				id := api.NewJobID(g.Namespace, g.Name)
				got[g.Name] = reasonOf(outcomes, id)
				if o := outcomes[id]; (o != nil && o.Enqueued) != (got[g.Name] == "") {
					t.Errorf("job %s: enqueued %v with reason %q", g.Name, o != nil && o.Enqueued, got[g.Name])
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("admission (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestQueueOrder(t *testing.T) {
	cases := map[string]struct {
		queues []*schedulingv1beta1.Queue
		pods   []*corev1.Pod
		// want is the order of the leaf queues with pods.
		want []api.QueueID
	}{
		"the smaller share of deserved goes first": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("a").Deserved(res("cpu", "4")).Obj(),
				schedtesting.MakeQueue("b").Deserved(res("cpu", "4")).Obj(),
				schedtesting.MakeQueue("c").Deserved(res("cpu", "8")).Obj(),
			},
			// a 3/4, b 1/4, c 4/8.
			pods: slices.Concat(running("a", "n0", 3, "cpu", "1"), running("b", "n0", 1, "cpu", "1"), running("c", "n0", 4, "cpu", "1")),
			want: []api.QueueID{"b", "c", "a"},
		},
		"the largest share over resources counts": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("a").Deserved(res("cpu", "4", "memory", "4Gi")).Obj(),
				schedtesting.MakeQueue("b").Deserved(res("cpu", "4", "memory", "4Gi")).Obj(),
			},
			// a: cpu 1/4, memory 3/4; b: cpu 2/4, memory 2/4.
			pods: slices.Concat(running("a", "n0", 1, "cpu", "1", "memory", "3Gi"), running("b", "n0", 2, "cpu", "1", "memory", "1Gi")),
			want: []api.QueueID{"b", "a"},
		},
		"queues that deserve only GPUs compare by GPUs": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("a").Deserved(res("nvidia.com/gpu", "8")).Obj(),
				schedtesting.MakeQueue("b").Deserved(res("nvidia.com/gpu", "8")).Obj(),
			},
			// a: 6 of 8 GPUs; b: 2 of 8 GPUs, but much more CPU, which
			// neither queue deserves and which therefore does not count.
			pods: slices.Concat(running("a", "n0", 3, "cpu", "1", "nvidia.com/gpu", "2"), running("b", "n0", 1, "cpu", "30", "nvidia.com/gpu", "2")),
			want: []api.QueueID{"b", "a"},
		},
		"siblings are compared, not the leaves": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("A").Deserved(res("cpu", "10")).Obj(),
				schedtesting.MakeQueue("a1").Parent("A").Deserved(res("cpu", "2")).Obj(),
				schedtesting.MakeQueue("B").Deserved(res("cpu", "4")).Obj(),
				schedtesting.MakeQueue("b1").Parent("B").Deserved(res("cpu", "4")).Obj(),
			},
			// a1 holds 2/2 but A only 2/10; b1 and B hold 3/4.
			pods: slices.Concat(running("a1", "n0", 2, "cpu", "1"), running("b1", "n0", 3, "cpu", "1")),
			want: []api.QueueID{"a1", "b1"},
		},
		"higher priority goes first": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("a").Deserved(res("cpu", "4")).Obj(),
				schedtesting.MakeQueue("b").Deserved(res("cpu", "4")).Priority(10).Obj(),
			},
			pods: slices.Concat(running("a", "n0", 1, "cpu", "1"), running("b", "n0", 3, "cpu", "1")),
			want: []api.QueueID{"b", "a"},
		},
		"at equal share a queue with deserved resources goes before a best-effort one": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("a-best-effort").Obj(),
				schedtesting.MakeQueue("b").Deserved(res("cpu", "2")).Obj(),
			},
			pods: slices.Concat(pods("a-best-effort", 1, "cpu", "1"), running("b", "n0", 2, "cpu", "1")),
			want: []api.QueueID{"b", "a-best-effort"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := api.Build(api.Objects{Nodes: nodes(1, "cpu", "64", "memory", "256Gi", "nvidia.com/gpu", "16"), Queues: tc.queues, Pods: tc.pods})
			_, tiers := setup(t)
			ssn := framework.OpenSession(t.Context(), snap, tiers, framework.Options{})
			defer ssn.Close()
			var got []*api.QueueInfo
			for _, id := range tc.want {
				got = append(got, snap.Queues[id])
			}
			slices.Reverse(got)
			slices.SortStableFunc(got, func(l, r *api.QueueInfo) int {
				switch {
				case ssn.QueueLess(l, r):
					return -1
				case ssn.QueueLess(r, l):
					return 1
				}
				return 0
			})
			var order []api.QueueID
			for _, q := range got {
				order = append(order, q.UID)
			}
			if diff := cmp.Diff(tc.want, order); diff != "" {
				t.Errorf("queue order (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestInvalidTree(t *testing.T) {
	type logLine struct {
		Message string
		KV      []any
	}
	const msg = "Invalid queue hierarchy, treating the queue as a child of root"
	cases := map[string]struct {
		queues []*schedulingv1beta1.Queue
		// wantParents are the parents the plugin used.
		wantParents map[api.QueueID]api.QueueID
		wantLog     []logLine
	}{
		"an unknown parent": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("a").Parent("ghost").Obj(),
				schedtesting.MakeQueue("b").Obj(),
			},
			wantParents: map[api.QueueID]api.QueueID{"a": "root", "b": "root"},
			wantLog:     []logLine{{msg, []any{"queue", "a", "parent", "ghost", "reason", "ParentNotFound"}}},
		},
		"a cycle": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("a").Parent("c").Obj(),
				schedtesting.MakeQueue("b").Parent("a").Obj(),
				schedtesting.MakeQueue("c").Parent("b").Obj(),
			},
			wantParents: map[api.QueueID]api.QueueID{"a": "root", "b": "a", "c": "b"},
			wantLog:     []logLine{{msg, []any{"queue", "a", "parent", "c", "reason", "Cycle", "cycle", []string{"a", "c", "b"}}}},
		},
		"a queue that is its own parent": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("a").Parent("a").Obj(),
				schedtesting.MakeQueue("b").Parent("a").Obj(),
			},
			wantParents: map[api.QueueID]api.QueueID{"a": "root", "b": "a"},
			wantLog:     []logLine{{msg, []any{"queue", "a", "parent", "a", "reason", "Cycle", "cycle", []string{"a"}}}},
		},
		"root's own parent is ignored": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("root").Parent("a").Obj(),
				schedtesting.MakeQueue("a").Obj(),
			},
			wantParents: map[api.QueueID]api.QueueID{"a": "root"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var jobs []*corev1.Pod
			for _, q := range tc.queues {
				jobs = append(jobs, pods(q.Name, 2, "cpu", "1")...)
			}
			snap := api.Build(api.Objects{Nodes: nodes(1, "cpu", "16", "memory", "64Gi"), Queues: tc.queues, Pods: jobs})
			logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
			ctx := klog.NewContext(t.Context(), logger)
			p, tiers := setup(t)
			rec := &perQueue{snap: snap, count: map[api.QueueID]int{}}
			ssn := framework.OpenSession(ctx, snap, tiers, framework.Options{Sink: rec})
			gotParents := map[api.QueueID]api.QueueID{}
			for id, a := range p.queues {
				if a.parent != nil {
					gotParents[id] = a.parent.id
				}
			}
			enqueue.New().Execute(ssn)
			allocate.New().Execute(ssn)
			ssn.Close()

			if diff := cmp.Diff(tc.wantParents, gotParents); diff != "" {
				t.Errorf("parents (-want,+got):\n%s", diff)
			}
			var gotLog []logLine
			for _, e := range logger.GetSink().(ktesting.Underlier).GetBuffer().Data() {
				gotLog = append(gotLog, logLine{e.Message, e.ParameterKVList})
			}
			if diff := cmp.Diff(tc.wantLog, gotLog); diff != "" {
				t.Errorf("log (-want,+got):\n%s", diff)
			}
			// Jobs of leaf queues still run.
			for id := range tc.wantParents {
				if isLeaf(tc.wantParents, id) && rec.count[id] != 2 {
					t.Errorf("leaf queue %s placed %d pods, want 2", id, rec.count[id])
				}
			}
		})
	}
}

// isLeaf reports whether no queue has id for parent.
func isLeaf(parents map[api.QueueID]api.QueueID, id api.QueueID) bool {
	for _, parent := range parents {
		if parent == id {
			return false
		}
	}
	return true
}

func TestReclaimable(t *testing.T) {
	cluster := nodes(2, "cpu", "16", "memory", "64Gi", "nvidia.com/gpu", "8")
	flat := func(victim *schedulingv1beta1.Queue) []*schedulingv1beta1.Queue {
		return []*schedulingv1beta1.Queue{victim, schedtesting.MakeQueue("r").Deserved(res("cpu", "8")).Obj()}
	}
	cases := map[string]struct {
		queues []*schedulingv1beta1.Queue
		// victims run on n0; the reclaimer is r-000 unless reclaimer says.
		victims   []*corev1.Pod
		reclaimer string
		want      []string
	}{
		"tasks of a queue above its deserved amount": {
			queues:  flat(schedtesting.MakeQueue("v").Deserved(res("cpu", "4")).Obj()),
			victims: running("v", "n0", 6, "cpu", "1"),
			// Taking two brings v down to its deserved 4.
			want: []string{"v-run-000", "v-run-001"},
		},
		"none of a queue within its deserved amount": {
			queues:  flat(schedtesting.MakeQueue("v").Deserved(res("cpu", "8")).Obj()),
			victims: running("v", "n0", 6, "cpu", "1"),
		},
		"none of a queue that is not reclaimable": {
			queues:  flat(schedtesting.MakeQueue("v").Deserved(res("cpu", "4")).Reclaimable(false).Obj()),
			victims: running("v", "n0", 6, "cpu", "1"),
		},
		"never a queue's guarantee": {
			queues: flat(schedtesting.MakeQueue("v").Deserved(res("cpu", "5")).Guarantee(res("cpu", "5")).Obj()),
			// v holds 6: the 2-cpu task would take it to 4, below its
			// guarantee; the 1-cpu one may go.
			victims: slices.Concat(running("v", "n0", 1, "cpu", "2"), []*corev1.Pod{
				st.MakePod("ns", "v-small").Req("cpu", "1").Annotation(schedulingv1beta1.QueueNameAnnotation, "v").Node("n0").Phase(corev1.PodRunning).Obj(),
				st.MakePod("ns", "v-small-2").Req("cpu", "3").Annotation(schedulingv1beta1.QueueNameAnnotation, "v").Node("n0").Phase(corev1.PodRunning).Obj(),
			}),
			want: []string{"v-small"},
		},
		"only for a resource the reclaimer needs": {
			queues: []*schedulingv1beta1.Queue{
				// v is above its deserved cpu but within its deserved GPUs.
				schedtesting.MakeQueue("v").Deserved(res("cpu", "2", "nvidia.com/gpu", "4")).Obj(),
				schedtesting.MakeQueue("r").Deserved(res("cpu", "8", "nvidia.com/gpu", "4")).Obj(),
				schedtesting.MakeQueue("r-gpu").Deserved(res("cpu", "8", "nvidia.com/gpu", "4")).Obj(),
			},
			victims:   running("v", "n0", 4, "cpu", "1", "nvidia.com/gpu", "1"),
			reclaimer: "r-gpu",
			// r-gpu's task asks for a GPU only (and pod slots): v holds no
			// more GPUs than it deserves.
		},
		"an ancestor within its deserved amount shields its children": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("A").Deserved(res("cpu", "8")).Obj(),
				schedtesting.MakeQueue("v").Parent("A").Deserved(res("cpu", "2")).Obj(),
				schedtesting.MakeQueue("sibling").Parent("A").Deserved(res("cpu", "6")).Obj(),
				schedtesting.MakeQueue("r").Deserved(res("cpu", "8")).Obj(),
			},
			victims: running("v", "n0", 4, "cpu", "1"),
		},
		"within the ancestor a sibling may take back": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("A").Deserved(res("cpu", "8")).Obj(),
				schedtesting.MakeQueue("v").Parent("A").Deserved(res("cpu", "2")).Obj(),
				schedtesting.MakeQueue("sibling").Parent("A").Deserved(res("cpu", "6")).Obj(),
				schedtesting.MakeQueue("r").Deserved(res("cpu", "8")).Obj(),
			},
			victims:   running("v", "n0", 4, "cpu", "1"),
			reclaimer: "sibling",
			want:      []string{"v-run-000", "v-run-001"},
		},
		"an ancestor that is not reclaimable shields its children from outside only": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("A").Deserved(res("cpu", "2")).Reclaimable(false).Obj(),
				schedtesting.MakeQueue("v").Parent("A").Deserved(res("cpu", "1")).Obj(),
				schedtesting.MakeQueue("sibling").Parent("A").Deserved(res("cpu", "1")).Obj(),
				schedtesting.MakeQueue("r").Deserved(res("cpu", "8")).Obj(),
			},
			victims: running("v", "n0", 4, "cpu", "1"),
		},
		"a sibling under an ancestor that is not reclaimable may take back": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("A").Deserved(res("cpu", "2")).Reclaimable(false).Obj(),
				schedtesting.MakeQueue("v").Parent("A").Deserved(res("cpu", "1")).Obj(),
				schedtesting.MakeQueue("sibling").Parent("A").Deserved(res("cpu", "1")).Obj(),
			},
			victims:   running("v", "n0", 4, "cpu", "1"),
			reclaimer: "sibling",
			want:      []string{"v-run-000", "v-run-001", "v-run-002"},
		},
		"not the reclaimer's own queue": {
			queues:  flat(schedtesting.MakeQueue("v").Deserved(res("cpu", "4")).Obj()),
			victims: running("r", "n0", 10, "cpu", "1"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			reclaimer := tc.reclaimer
			if reclaimer == "" {
				reclaimer = "r"
			}
			req := []string{"cpu", "1"}
			if reclaimer == "r-gpu" {
				req = []string{"nvidia.com/gpu", "1"}
			}
			snap := api.Build(api.Objects{Nodes: cluster, Queues: tc.queues, Pods: append(slices.Clone(tc.victims), pods(reclaimer, 1, req...)...)})
			p, tiers := setup(t)
			ssn := framework.OpenSession(t.Context(), snap, tiers, framework.Options{})
			defer ssn.Close()
			var candidates []*api.TaskInfo
			for _, pod := range tc.victims {
				job := snap.Jobs[shadowJob(pod.Name)]
				for _, task := range job.Tasks {
					candidates = append(candidates, task)
				}
			}
			slices.SortFunc(candidates, func(a, b *api.TaskInfo) int { return strings.Compare(a.Name, b.Name) })
			var task *api.TaskInfo
			for _, t := range snap.Jobs[shadowJob(reclaimer+"-000")].Tasks {
				task = t
			}
			var got []string
			for _, v := range p.Reclaimable(task, candidates) {
				got = append(got, v.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("reclaimable (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestWithoutHierarchyParentsAreIgnored: without enableHierarchy, as in
// Volcano, every queue stands alone under root: a parent's capability does
// not bound its children and a parent may hold jobs.
func TestWithoutHierarchyParentsAreIgnored(t *testing.T) {
	flat, err := New(nil, &framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	queues := []*schedulingv1beta1.Queue{
		schedtesting.MakeQueue("dept").Capability(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}).Obj(),
		schedtesting.MakeQueue("team").Parent("dept").Obj(),
	}
	snap := api.Build(api.Objects{Nodes: nodes(1, "cpu", "10", "memory", "64Gi"), Queues: queues,
		Pods: append(pods("team", 4, "cpu", "1"), pods("dept", 1, "cpu", "1")...)})
	tiers := []framework.Tier{{Plugins: []framework.TierPlugin{tierPlugin(t, gang.New), {Plugin: flat}}}}
	var bound int
	ssn := framework.OpenSession(t.Context(), snap, tiers, framework.Options{Sink: sinkFunc(func(*api.TaskInfo, string) { bound++ })})
	allocate.New().Execute(ssn)
	ssn.Close()
	if bound != 5 {
		t.Errorf("bound %d pods, want 5: team is not bounded by dept's capability, and dept may hold its own job", bound)
	}
}

type sinkFunc func(*api.TaskInfo, string)

func (f sinkFunc) Bind(t *api.TaskInfo, node string) { f(t, node) }
