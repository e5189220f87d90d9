package cache

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// place is a placement decided on snap: the node's copy there says what
// the decision saw.
func place(snap *api.Snapshot, pod *corev1.Pod, node string) api.Placement {
	t := snap.Jobs[api.JobIDOfPod(pod)].Tasks[pod.UID]
	return api.Placement{Task: t, Node: node, Seen: snap.Nodes[node].CacheVersion}
}

func TestTwoViewsCannotTakeTheLastSlotTwice(t *testing.T) {
	c := newCache()
	c.UpdateNode(st.MakeNode("a").Alloc("cpu", "2").Obj())
	c.UpdatePod(st.MakePod("ns", "running").Req("cpu", "1").Node("a").Phase(corev1.PodRunning).Obj())
	p, q := st.MakePod("ns", "p").Req("cpu", "1").Obj(), st.MakePod("ns", "q").Req("cpu", "1").Obj()
	c.UpdatePod(p)
	c.UpdatePod(q)
	fast := c.NewView()
	defer fast.Close()
	// Both decide on the same state: one cpu left on a.
	batchSnap, fastSnap := c.Snapshot(), fast.Snapshot()
	if err := c.AssumeGroup([]api.Placement{place(fastSnap, q, "a")}); err != nil {
		t.Fatalf("first placement refused: %v", err)
	}
	err := c.AssumeGroup([]api.Placement{place(batchSnap, p, "a")})
	var conflict *Conflict
	if !errors.As(err, &conflict) || conflict.Node != "a" || conflict.Pod != "ns/p" {
		t.Fatalf("second placement on the last slot: err = %v, want a Conflict for ns/p on a", err)
	}
	snap := c.Snapshot()
	if got := snap.Nodes["a"].Idle.MilliCPU; got != 0 {
		t.Errorf("idle cpu on a = %dm, want 0", got)
	}
	if got := snap.Jobs[api.JobIDOfPod(p)].Tasks[p.UID]; got.Status != api.Pending || got.NodeName != "" {
		t.Errorf("refused pod is %s on %q, want Pending nowhere", got.Status, got.NodeName)
	}
	// The same task placed twice (two workers) is refused the second time.
	if err := c.AssumeGroup([]api.Placement{place(fastSnap, q, "a")}); err == nil {
		t.Error("a pod already assumed was assumed again")
	}
}

func TestAChangedNodeWithRoomIsAccepted(t *testing.T) {
	c := newCache()
	c.UpdateNode(st.MakeNode("a").Alloc("cpu", "4").Obj())
	p, q := st.MakePod("ns", "p").Req("cpu", "1").Obj(), st.MakePod("ns", "q").Req("cpu", "1").Obj()
	c.UpdatePod(p)
	c.UpdatePod(q)
	fast := c.NewView()
	defer fast.Close()
	batchSnap, fastSnap := c.Snapshot(), fast.Snapshot()
	for _, pl := range []api.Placement{place(fastSnap, q, "a"), place(batchSnap, p, "a")} {
		if err := c.AssumeGroup([]api.Placement{pl}); err != nil {
			t.Fatalf("placement of %s refused with room left: %v", pl.Task.Name, err)
		}
	}
	if got := c.Snapshot().Nodes["a"].Idle.MilliCPU; got != 2000 {
		t.Errorf("idle cpu on a = %dm, want 2000m", got)
	}
}

func TestARefusedGroupLeavesNothingAssumed(t *testing.T) {
	c := newCache()
	c.UpdateNode(st.MakeNode("a").Alloc("cpu", "2").Obj())
	c.UpdateNode(st.MakeNode("b").Alloc("cpu", "1").Obj())
	g0, g1 := st.MakePod("ns", "g-0").Req("cpu", "1").Obj(), st.MakePod("ns", "g-1").Req("cpu", "1").Obj()
	c.UpdatePod(g0)
	c.UpdatePod(g1)
	snap := c.Snapshot()
	group := []api.Placement{place(snap, g0, "a"), place(snap, g1, "b")}
	// A pod of another scheduler takes b after the snapshot.
	foreign := st.MakePod("ns", "other").Req("cpu", "1").Node("b").Phase(corev1.PodRunning).Obj()
	foreign.Spec.SchedulerName = "default-scheduler"
	c.UpdatePod(foreign)
	if err := c.AssumeGroup(group); err == nil {
		t.Fatal("a group with a member that no longer fits was assumed")
	}
	after := c.Snapshot()
	if got := after.Nodes["a"].Idle.MilliCPU; got != 2000 {
		t.Errorf("idle cpu on a = %dm after the refusal, want 2000m (the first member undone)", got)
	}
	if got := c.AssumedOn("a"); len(got) != 0 {
		t.Errorf("assumed on a after the refusal: %v", got)
	}
	for _, pod := range []*corev1.Pod{g0, g1} {
		if got := after.Jobs[api.JobIDOfPod(pod)].Tasks[pod.UID].Status; got != api.Pending {
			t.Errorf("%s is %s after the refusal, want Pending", pod.Name, got)
		}
	}
}

func TestARefusedNominatedTaskKeepsItsClaim(t *testing.T) {
	c := newCache()
	c.UpdateNode(st.MakeNode("a").Alloc("cpu", "2").Obj())
	c.UpdateNode(st.MakeNode("b").Alloc("cpu", "1").Obj())
	p := st.MakePod("ns", "p").Req("cpu", "1").Obj()
	c.UpdatePod(p)
	if !c.Nominate(c.Snapshot().Jobs[api.JobIDOfPod(p)].Tasks[p.UID], "a") {
		t.Fatal("nomination not recorded")
	}
	snap := c.Snapshot()
	pl := place(snap, p, "b")
	foreign := st.MakePod("ns", "other").Req("cpu", "1").Node("b").Phase(corev1.PodRunning).Obj()
	foreign.Spec.SchedulerName = "default-scheduler"
	c.UpdatePod(foreign)
	if err := c.AssumeGroup([]api.Placement{pl}); err == nil {
		t.Fatal("placement on a node without room was assumed")
	}
	after := c.Snapshot()
	if got := after.Jobs[api.JobIDOfPod(p)].Tasks[p.UID]; got.Status != api.Pipelined || got.NodeName != "a" {
		t.Errorf("refused nominated pod is %s on %q, want Pipelined on a", got.Status, got.NodeName)
	}
	if got := after.Nodes["a"].Pipelined.MilliCPU; got != 1000 {
		t.Errorf("claim on a = %dm, want 1000m", got)
	}
}

// TestAssumedTaskKeepsWhatTheCycleDerived: what a cycle's evaluator kept
// with its copy of a task (FitMemo) comes with the task the cache assumes,
// so that the cache's node does not derive it from the pod again.
func TestAssumedTaskKeepsWhatTheCycleDerived(t *testing.T) {
	c := newCache()
	c.UpdateNode(st.MakeNode("a").Alloc("cpu", "2").Obj())
	p := st.MakePod("ns", "p").Req("cpu", "1").Obj()
	c.UpdatePod(p)
	pl := place(c.Snapshot(), p, "a")
	pl.Task.SetFitMemo("derived in the cycle")
	if err := c.AssumeGroup([]api.Placement{pl}); err != nil {
		t.Fatal(err)
	}
	if got := c.taskLocked(p.UID).FitMemo(); got != "derived in the cycle" {
		t.Errorf("assumed task's memo = %v, want the cycle's", got)
	}
}
