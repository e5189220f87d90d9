package cache

import (
	"maps"
	"runtime"
	"testing"
	"weak"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	tt "github.com/caldera-sh/caldera/apis/topology/v1alpha1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

func newCache() *Cache {
	c := New(Options{})
	c.UpdateQueue(schedtesting.MakeQueue("default").Obj())
	return c
}

func TestSnapshotCopiesOnlyWhatChanged(t *testing.T) {
	c := newCache()
	for _, n := range []string{"a", "b", "c"} {
		c.UpdateNode(st.MakeNode(n).Alloc("cpu", "4").Obj())
	}
	// A snapshot is valid until the next: keep what each held.
	nodes := func(s *api.Snapshot) map[string]*api.NodeInfo { return maps.Clone(s.Nodes) }
	first := nodes(c.Snapshot())
	second := nodes(c.Snapshot())
	for _, n := range []string{"a", "b", "c"} {
		if first[n] != second[n] {
			t.Errorf("unchanged node %s was copied again", n)
		}
	}
	c.UpdatePod(st.MakePod("ns", "p").Req("cpu", "1").Node("b").Phase(corev1.PodRunning).Obj())
	third := nodes(c.Snapshot())
	if third["a"] != second["a"] || third["c"] != second["c"] {
		t.Errorf("nodes without change were copied")
	}
	if third["b"] == second["b"] {
		t.Fatalf("node b changed but was shared")
	}
	if got := third["b"].Idle.MilliCPU; got != 3000 {
		t.Errorf("idle cpu on b = %dm, want 3000m", got)
	}
	c.Invalidate(map[string]bool{"a": true}, nil)
	snap := c.Snapshot()
	if snap.Nodes["a"] == third["a"] {
		t.Errorf("invalidated node a was shared")
	}
	if snap.NodeList[0] != snap.Nodes["a"] {
		t.Errorf("node list does not hold the new copy of a")
	}
}

func TestNodeHeartbeatIsNotAChange(t *testing.T) {
	signals := 0
	c := New(Options{Notify: func() { signals++ }})
	n := st.MakeNode("a").Alloc("cpu", "4").Obj()
	c.UpdateNode(n)
	before := signals
	beat := n.DeepCopy()
	beat.Status.Conditions[0].Message = "kubelet is posting ready status"
	c.UpdateNode(beat)
	if signals != before {
		t.Errorf("a heartbeat signalled a change")
	}
	cordoned := n.DeepCopy()
	cordoned.Spec.Unschedulable = true
	c.UpdateNode(cordoned)
	if signals != before+1 {
		t.Errorf("cordoning did not signal a change")
	}
}

func TestAssumedTaskHoldsItsNodeUntilConfirmedOrForgotten(t *testing.T) {
	c := newCache()
	c.UpdateNode(st.MakeNode("a").Alloc("cpu", "4").Obj())
	pod := st.MakePod("ns", "p").Req("cpu", "1").Obj()
	c.UpdatePod(pod)
	job := api.JobIDOfPod(pod)
	task := c.Snapshot().Jobs[job].Tasks[pod.UID]

	c.Assume(task, "a")
	idle := func() int64 { return c.Snapshot().Nodes["a"].Idle.MilliCPU }
	if got := idle(); got != 3000 {
		t.Fatalf("idle after assume = %dm, want 3000m", got)
	}
	// A stale update (no node yet) must not release the assumed resources.
	c.UpdatePod(pod.DeepCopy())
	if got := idle(); got != 3000 {
		t.Errorf("idle after a stale update = %dm, want 3000m", got)
	}
	if got := c.Snapshot().Jobs[job].Tasks[pod.UID].Status; got != api.Binding {
		t.Errorf("status after a stale update = %s, want Binding", got)
	}
	c.Forget(pod.UID)
	if got := idle(); got != 4000 {
		t.Errorf("idle after forget = %dm, want 4000m", got)
	}
	if got := c.Snapshot().Jobs[job].Tasks[pod.UID].Status; got != api.Pending {
		t.Errorf("status after forget = %s, want Pending", got)
	}

	c.Assume(c.Snapshot().Jobs[job].Tasks[pod.UID], "a")
	bound := pod.DeepCopy()
	bound.Spec.NodeName = "a"
	c.UpdatePod(bound)
	if got := c.AssumedOn("a"); len(got) != 0 {
		t.Errorf("assumed after the bound pod arrived: %v", got)
	}
	if got := idle(); got != 3000 {
		t.Errorf("idle after confirmation = %dm, want 3000m", got)
	}
	c.Forget(pod.UID)
	if got := idle(); got != 3000 {
		t.Errorf("forgetting a confirmed pod released it: idle %dm", got)
	}
}

func TestConfirmMovesAnAssumedTaskToTheNodeItIsBoundTo(t *testing.T) {
	c := newCache()
	c.UpdateNode(st.MakeNode("a").Alloc("cpu", "4").Obj())
	c.UpdateNode(st.MakeNode("b").Alloc("cpu", "4").Obj())
	pod := st.MakePod("ns", "p").Req("cpu", "1").Obj()
	c.UpdatePod(pod)
	job := api.JobIDOfPod(pod)
	c.Assume(c.Snapshot().Jobs[job].Tasks[pod.UID], "a")

	// An earlier bind, whose answer was lost, put the pod on b.
	c.Confirm(pod.UID, "b")
	snap := c.Snapshot()
	if a, b := snap.Nodes["a"].Idle.MilliCPU, snap.Nodes["b"].Idle.MilliCPU; a != 4000 || b != 3000 {
		t.Errorf("idle a=%dm b=%dm, want 4000m and 3000m", a, b)
	}
	if got := snap.Jobs[job].Tasks[pod.UID]; got.NodeName != "b" || got.Status != api.Binding {
		t.Errorf("task on %q %s, want on b, Binding", got.NodeName, got.Status)
	}
	// A stale update does not release it; the bound pod settles it.
	c.UpdatePod(pod.DeepCopy())
	if got := c.Snapshot().Nodes["b"].Idle.MilliCPU; got != 3000 {
		t.Errorf("idle on b after a stale update = %dm, want 3000m", got)
	}
	bound := pod.DeepCopy()
	bound.Spec.NodeName = "b"
	c.UpdatePod(bound)
	if got := c.AssumedOn("b"); len(got) != 0 {
		t.Errorf("assumed after the bound pod arrived: %v", got)
	}
	if got := c.Snapshot().Nodes["b"].Idle.MilliCPU; got != 3000 {
		t.Errorf("idle on b = %dm, want 3000m", got)
	}
}

func TestForeignPodsUseNodesButAreNotScheduled(t *testing.T) {
	c := newCache()
	c.UpdateNode(st.MakeNode("a").Alloc("cpu", "4").Obj())
	foreign := st.MakePod("ns", "other").Req("cpu", "2").Obj()
	foreign.Spec.SchedulerName = "default-scheduler"
	c.UpdatePod(foreign)
	if got := len(c.Snapshot().Jobs); got != 0 {
		t.Errorf("a pending pod of another scheduler became a job")
	}
	bound := foreign.DeepCopy()
	bound.Spec.NodeName = "a"
	bound.Status.Phase = corev1.PodRunning
	c.UpdatePod(bound)
	if got := c.Snapshot().Nodes["a"].Idle.MilliCPU; got != 2000 {
		t.Errorf("idle = %dm, want 2000m", got)
	}
	done := bound.DeepCopy()
	done.Status.Phase = corev1.PodSucceeded
	c.UpdatePod(done)
	if got := c.Snapshot().Nodes["a"].Idle.MilliCPU; got != 4000 {
		t.Errorf("idle after the pod succeeded = %dm, want 4000m", got)
	}
}

func TestPodBeforeItsNode(t *testing.T) {
	c := newCache()
	c.UpdatePod(st.MakePod("ns", "p").Req("cpu", "1").Node("late").Phase(corev1.PodRunning).Obj())
	if _, ok := c.Snapshot().Nodes["late"]; ok {
		t.Fatalf("an unknown node is in the snapshot")
	}
	c.UpdateNode(st.MakeNode("late").Alloc("cpu", "4").Obj())
	n, ok := c.Snapshot().Nodes["late"]
	if !ok {
		t.Fatalf("node missing after it arrived")
	}
	if got := n.Idle.MilliCPU; got != 3000 {
		t.Errorf("idle = %dm, want 3000m (the early pod counts)", got)
	}
}

func TestPodsWaitForTheirPodGroup(t *testing.T) {
	c := newCache()
	c.UpdatePod(st.MakePod("ns", "p").Group("pg").Req("cpu", "1").Obj())
	if got := len(c.Snapshot().Jobs); got != 0 {
		t.Fatalf("a job without its PodGroup is in the snapshot")
	}
	c.UpdatePodGroup(schedtesting.MakePodGroup("pg", "ns").MinMember(1).Obj())
	j := c.Snapshot().Jobs["ns/pg"]
	if j == nil || len(j.Tasks) != 1 {
		t.Fatalf("job after its PodGroup arrived = %+v", j)
	}
}

func TestEnqueuedPhaseSurvivesStaleUpdates(t *testing.T) {
	c := newCache()
	pg := schedtesting.MakePodGroup("pg", "ns").MinMember(1).Obj()
	c.UpdatePodGroup(pg)
	c.MarkEnqueued("ns/pg")
	c.UpdatePodGroup(pg.DeepCopy())
	if got := c.Snapshot().Jobs["ns/pg"].Phase; got != schedulingv1beta1.PodGroupInqueue {
		t.Errorf("phase after a stale update = %q, want Inqueue", got)
	}
	running := pg.DeepCopy()
	running.Status.Phase = schedulingv1beta1.PodGroupRunning
	c.UpdatePodGroup(running)
	if got := c.Snapshot().Jobs["ns/pg"].Phase; got != schedulingv1beta1.PodGroupRunning {
		t.Errorf("phase = %q, want Running", got)
	}
}

func TestKeptPhases(t *testing.T) {
	const id = "ns/pg"
	phase := func(c *Cache) schedulingv1beta1.PodGroupPhase { return c.Snapshot().Jobs[id].Phase }
	shown := func(c *Cache, p schedulingv1beta1.PodGroupPhase) {
		pg := schedtesting.MakePodGroup("pg", "ns").MinMember(1).Obj()
		pg.Status.Phase = p
		c.UpdatePodGroup(pg)
	}
	keep := func(c *Cache, p schedulingv1beta1.PodGroupPhase) {
		c.KeepPhases(map[api.JobID]schedulingv1beta1.PodGroupPhase{id: p})
	}

	t.Run("a held Running outlives the PodGroup's older phases until it shows", func(t *testing.T) {
		c := newCache()
		shown(c, schedulingv1beta1.PodGroupInqueue)
		keep(c, schedulingv1beta1.PodGroupRunning)
		shown(c, schedulingv1beta1.PodGroupInqueue)
		if got := phase(c); got != schedulingv1beta1.PodGroupRunning {
			t.Fatalf("phase while Running is held = %q, want Running", got)
		}
		shown(c, schedulingv1beta1.PodGroupRunning)
		shown(c, schedulingv1beta1.PodGroupUnknown)
		if got := phase(c); got != schedulingv1beta1.PodGroupUnknown {
			t.Errorf("phase after the PodGroup showed Running, then Unknown = %q, want Unknown", got)
		}
	})
	t.Run("an Unknown decided while Running was held is kept", func(t *testing.T) {
		c := newCache()
		shown(c, schedulingv1beta1.PodGroupPending)
		keep(c, schedulingv1beta1.PodGroupRunning)
		keep(c, schedulingv1beta1.PodGroupUnknown)
		shown(c, schedulingv1beta1.PodGroupPending)
		if got := phase(c); got != schedulingv1beta1.PodGroupUnknown {
			t.Errorf("phase = %q, want Unknown", got)
		}
	})
	t.Run("a phase decided that is not kept lets go of the kept one", func(t *testing.T) {
		c := newCache()
		shown(c, schedulingv1beta1.PodGroupInqueue)
		keep(c, schedulingv1beta1.PodGroupRunning)
		keep(c, schedulingv1beta1.PodGroupPending)
		if got := phase(c); got != schedulingv1beta1.PodGroupInqueue {
			t.Errorf("phase = %q, want the PodGroup's Inqueue", got)
		}
		shown(c, schedulingv1beta1.PodGroupInqueue)
		if got := phase(c); got != schedulingv1beta1.PodGroupInqueue {
			t.Errorf("phase after an update = %q, want Inqueue", got)
		}
	})
	t.Run("a PodGroup made again under the name keeps nothing of the first", func(t *testing.T) {
		c := newCache()
		shown(c, schedulingv1beta1.PodGroupInqueue)
		keep(c, schedulingv1beta1.PodGroupRunning)
		again := schedtesting.MakePodGroup("pg", "ns").MinMember(1).Obj()
		again.UID = "second"
		again.Status.Phase = schedulingv1beta1.PodGroupPending
		c.UpdatePodGroup(again) // its deletion unseen
		if got := phase(c); got != schedulingv1beta1.PodGroupPending {
			t.Errorf("phase of the new PodGroup = %q, want its own Pending", got)
		}
	})
	t.Run("a phase the PodGroup already shows is not kept", func(t *testing.T) {
		c := newCache()
		shown(c, schedulingv1beta1.PodGroupRunning)
		keep(c, schedulingv1beta1.PodGroupInqueue)
		if got := phase(c); got != schedulingv1beta1.PodGroupRunning {
			t.Errorf("phase = %q, want Running", got)
		}
	})
}

func TestPodsOfAWorkloadWaitForTheirPodGroup(t *testing.T) {
	c := newCache()
	pod := st.MakePod("ns", "web-abc").Req("cpu", "1").Obj()
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "rs-uid", Controller: ptr.To(true)}}
	c.UpdatePod(pod)
	if got := len(c.Snapshot().Jobs); got != 0 {
		t.Fatalf("a workload's pod without its PodGroup became a job of its own")
	}
	grouped := pod.DeepCopy()
	grouped.Annotations = map[string]string{"scheduling.k8s.io/group-name": "podgroup-rs-uid"}
	c.UpdatePod(grouped)
	c.UpdatePodGroup(schedtesting.MakePodGroup("podgroup-rs-uid", "ns").MinMember(1).Obj())
	j := c.Snapshot().Jobs["ns/podgroup-rs-uid"]
	if j == nil || len(j.Tasks) != 1 {
		t.Fatalf("job after grouping = %+v", j)
	}
	if got := len(c.Snapshot().Jobs); got != 1 {
		t.Errorf("%d jobs, want 1: the waiting job must not linger", got)
	}
}

// TestPendingWorkFollowsJobs: PendingWork looks only at jobs changed since
// it last looked and those that had work then; it must still see every
// job's work start and end.
func TestPendingWorkFollowsJobs(t *testing.T) {
	c := newCache()
	c.UpdateNode(st.MakeNode("n").Alloc("cpu", "4").Obj())
	steps := []struct {
		name string
		do   func()
		want bool
	}{
		{"an empty cluster", func() {}, false},
		{"a pending pod", func() { c.UpdatePod(st.MakePod("ns", "p").Req("cpu", "1").Obj()) }, true},
		{"asked again", func() {}, true},
		{"the pod bound", func() { c.UpdatePod(st.MakePod("ns", "p").Req("cpu", "1").Node("n").Phase(corev1.PodRunning).Obj()) }, false},
		{"a PodGroup not yet admitted", func() { c.UpdatePodGroup(schedtesting.MakePodGroup("g", "ns").MinMember(1).Obj()) }, true},
		{"the PodGroup admitted, without pods", func() {
			c.UpdatePodGroup(schedtesting.MakePodGroup("g", "ns").MinMember(1).Phase(schedulingv1beta1.PodGroupInqueue).Obj())
		}, false},
		{"a pending pod of the PodGroup", func() { c.UpdatePod(st.MakePod("ns", "g-0").Group("g").Req("cpu", "1").Obj()) }, true},
		{"that pod deleted", func() { c.DeletePod(st.MakePod("ns", "g-0").Group("g").Req("cpu", "1").Obj()) }, false},
		{"a second pending pod", func() { c.UpdatePod(st.MakePod("ns", "q").Req("cpu", "1").Obj()) }, true},
		{"the PodGroup deleted while the other pod waits", func() {
			c.DeletePodGroup(schedtesting.MakePodGroup("g", "ns").MinMember(1).Obj())
		}, true},
		{"the waiting pod deleted", func() { c.DeletePod(st.MakePod("ns", "q").Req("cpu", "1").Obj()) }, false},
	}
	for _, s := range steps {
		s.do()
		if got := c.PendingWork(); got != s.want {
			t.Fatalf("after %s: PendingWork() = %t, want %t", s.name, got, s.want)
		}
	}
}

// TestTopologyFollowsHyperNodesAndNodeLabels: the snapshot's topology is
// built once and shared while nothing it depends on changes, and afresh
// after a HyperNode changes or a node's labels do.
func TestTopologyFollowsHyperNodesAndNodeLabels(t *testing.T) {
	c := newCache()
	n := st.MakeNode("a").Label("rack", "r1").Obj()
	c.UpdateNode(n)
	c.UpdateNode(st.MakeNode("b").Label("rack", "r2").Obj())
	c.UpdateHyperNode(tt.MakeHyperNode("r1", 1).LabelNodes(&metav1.LabelSelector{MatchLabels: map[string]string{"rack": "r1"}}).Obj())
	first := c.Snapshot().Topology
	if got := first.ByName["r1"].Nodes; len(got) != 1 || got[0] != "a" {
		t.Fatalf("r1 holds %v, want [a]", got)
	}
	heartbeat := n.DeepCopy()
	heartbeat.Status.Conditions[0].Message = "still ready"
	c.UpdateNode(heartbeat)
	if again := c.Snapshot().Topology; again != first {
		t.Errorf("the topology was rebuilt though no label or HyperNode changed")
	}
	moved := n.DeepCopy()
	moved.Labels["rack"] = "r2"
	c.UpdateNode(moved)
	if got := c.Snapshot().Topology.ByName["r1"].Nodes; len(got) != 0 {
		t.Errorf("after relabelling, r1 holds %v, want nothing", got)
	}
	c.UpdateHyperNode(tt.MakeHyperNode("r1", 1).LabelNodes(&metav1.LabelSelector{MatchLabels: map[string]string{"rack": "r2"}}).Obj())
	if got := c.Snapshot().Topology.ByName["r1"].Nodes; len(got) != 2 {
		t.Errorf("after the HyperNode changed, r1 holds %v, want a and b", got)
	}
	c.DeleteHyperNode(tt.MakeHyperNode("r1", 1).Obj())
	if !c.Snapshot().Topology.Empty() {
		t.Errorf("the topology still has HyperNodes after the last was deleted")
	}
}

func TestGoneDropsAPodTheInformerStillShows(t *testing.T) {
	c := newCache()
	pod := st.MakePod("ns", "p").Req("cpu", "1").Obj()
	c.UpdatePod(pod)
	job := api.JobIDOfPod(pod)
	if c.Snapshot().Jobs[job].Tasks[pod.UID] == nil {
		t.Fatal("the pod is not in the cache")
	}
	c.Gone(pod.UID)
	if j := c.Snapshot().Jobs[job]; j != nil && j.Tasks[pod.UID] != nil {
		t.Errorf("the pod is still offered after Gone")
	}
	// The informer's delete, arriving later, finds nothing to do.
	c.DeletePod(pod)
}

// TestSetPlaceableFencesNodes: the nodes a shard leaves out are fenced
// off (hard) or made a last resort (soft) in the next snapshot, nodes that
// come later and nodes pods name before they are known included; nil
// opens them again.
func TestSetPlaceableFencesNodes(t *testing.T) {
	c := newCache()
	c.UpdateNode(st.MakeNode("in").Alloc("cpu", "4").Obj())
	c.UpdateNode(st.MakeNode("out").Alloc("cpu", "4").Obj())
	c.Snapshot()
	inShard := func(n string) bool { return n == "in" }
	type state struct{ fenced, secondary bool }
	check := func(what string, want map[string]state) {
		t.Helper()
		snap := c.Snapshot()
		for name, w := range want {
			n := snap.Nodes[name]
			if n == nil {
				t.Fatalf("%s: node %s is not in the snapshot", what, name)
			}
			if got := (state{n.Fenced, n.Secondary}); got != w {
				t.Errorf("%s: node %s is %+v, want %+v", what, name, got, w)
			}
		}
	}
	c.SetPlaceable(inShard, false)
	c.UpdateNode(st.MakeNode("later").Alloc("cpu", "4").Obj())
	c.UpdatePod(st.MakePod("ns", "p").Req("cpu", "1").Node("unknown").Phase(corev1.PodRunning).Obj())
	c.UpdateNode(st.MakeNode("unknown").Alloc("cpu", "4").Obj())
	check("hard", map[string]state{"in": {}, "out": {fenced: true}, "later": {fenced: true}, "unknown": {fenced: true}})
	c.SetPlaceable(inShard, true)
	check("soft", map[string]state{"in": {}, "out": {secondary: true}, "later": {secondary: true}})
	c.SetPlaceable(nil, false)
	check("none", map[string]state{"in": {}, "out": {}, "later": {}})
}

// TestPodsSeen: the cache knows which pods it holds on a node, and the
// latest pod resourceVersion it processed, deletions included.
func TestPodsSeen(t *testing.T) {
	c := newCache()
	c.UpdateNode(st.MakeNode("n").Alloc("cpu", "4").Obj())
	p := st.MakePod("ns", "p").Req("cpu", "1").Node("n").Phase(corev1.PodRunning).Obj()
	p.ResourceVersion = "41"
	c.UpdatePod(p)
	if !c.HoldsPods("n", []types.UID{p.UID}) || c.HoldsPods("n", []types.UID{p.UID, "other"}) || c.HoldsPods("m", []types.UID{p.UID}) {
		t.Error("HoldsPods does not say which pods the node holds")
	}
	if !c.PodsSeenSince("41") || c.PodsSeenSince("42") || c.PodsSeenSince("not a version") {
		t.Error("PodsSeenSince does not follow the pod events")
	}
	gone := p.DeepCopy()
	gone.ResourceVersion = "50"
	c.DeletePod(gone)
	if !c.PodsSeenSince("50") || c.HoldsPods("n", []types.UID{p.UID}) {
		t.Error("a deletion is not seen")
	}
}

func TestRefreshLetsGoOfReplacedPods(t *testing.T) {
	c := newCache()
	c.UpdateNode(st.MakeNode("a").Alloc("cpu", "4").Obj())
	pod := st.MakePod("ns", "p").Req("cpu", "1").Node("a").Phase(corev1.PodPending).Obj()
	c.UpdatePod(pod)
	if c.Refresh() {
		t.Errorf("Refresh patched before any snapshot was taken")
	}
	c.Snapshot()
	if c.Refresh() {
		t.Errorf("Refresh patched a snapshot that does not lag")
	}

	running := pod.DeepCopy()
	running.Status.Phase = corev1.PodRunning
	old := weak.Make(pod)
	pod = nil
	c.UpdatePod(running)
	runtime.GC()
	if old.Value() == nil {
		t.Fatalf("the replaced pod was freed before Refresh: the snapshot did not hold it, so this test shows nothing")
	}
	if !c.Refresh() {
		t.Fatalf("Refresh did not patch a snapshot that lags")
	}
	runtime.GC()
	if old.Value() != nil {
		t.Errorf("the snapshot still holds the replaced pod after Refresh")
	}
	job := api.JobIDOfPod(running)
	if got := c.Snapshot().Jobs[job].Tasks[running.UID]; got.Pod != running || got.Status != api.Running {
		t.Errorf("task after Refresh: %s, pod %p; want Running, pod %p", got.Status, got.Pod, running)
	}
}

// TestNewVersionOfAPodKeepsWhatWasDerived: binding and starting a pod
// change nothing it asks for, and its task keeps the requests and the fit
// memo worked out for the pending pod; a resize makes them afresh.
func TestNewVersionOfAPodKeepsWhatWasDerived(t *testing.T) {
	c := newCache()
	c.UpdateNode(st.MakeNode("n1").Alloc("cpu", "4").Obj())
	pending := st.MakePod("ns", "p").Req("cpu", "1").Obj()
	c.UpdatePod(pending)
	first := c.taskLocked(pending.UID)
	first.SetFitMemo("derived from the pending pod")

	bound := pending.DeepCopy()
	bound.Spec.NodeName = "n1"
	c.UpdatePod(bound)
	running := bound.DeepCopy()
	running.Status.Phase = corev1.PodRunning
	c.UpdatePod(running)
	got := c.taskLocked(pending.UID)
	if got.Pod != running || got.Status != api.Running || got.NodeName != "n1" {
		t.Fatalf("task holds %v on %q, want the running pod on n1", got.Status, got.NodeName)
	}
	if got.Resreq != first.Resreq || got.FitMemo() != first.FitMemo() {
		t.Errorf("the running pod's task made its requests or memo afresh: %v, %v", got.Resreq, got.FitMemo())
	}

	resized := running.DeepCopy()
	resized.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
	c.UpdatePod(resized)
	got = c.taskLocked(pending.UID)
	if got.Resreq == first.Resreq || got.Resreq.MilliCPU != 2000 || got.FitMemo() != nil {
		t.Errorf("a resized pod's task kept the old requests (%v) or memo (%v)", got.Resreq, got.FitMemo())
	}
}
