package cache

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// TestEvictionsAndNominationsInFlight: what a cycle decided and the API
// server does not show yet holds in the next snapshots: victims being
// evicted release their room, the preemptor claims it, until the pods show
// the change or the decision is undone; a nomination on a pod survives a
// restart.
func TestEvictionsAndNominationsInFlight(t *testing.T) {
	c := newCache()
	c.UpdateNode(st.MakeNode("a").Alloc("cpu", "4").Obj())
	victim := st.MakePod("ns", "victim").Req("cpu", "4").Node("a").Phase(corev1.PodRunning).Obj()
	pre := st.MakePod("ns", "pre").Req("cpu", "4").Obj()
	c.UpdatePod(victim)
	c.UpdatePod(pre)
	task := func(snap *api.Snapshot, name string) *api.TaskInfo {
		t.Helper()
		for _, j := range snap.Jobs {
			for _, tk := range j.Tasks {
				if tk.Name == name {
					return tk
				}
			}
		}
		t.Fatalf("task %s not in the snapshot", name)
		return nil
	}
	snap := c.Snapshot()
	c.AssumeEvicted(task(snap, "victim"))
	// A status update of the victim that predates its deletion changes
	// nothing.
	c.UpdatePod(victim.DeepCopy())
	if !c.Nominate(task(snap, "pre"), "a") {
		t.Fatal("Nominate reported no change for a new nomination")
	}
	if c.Nominate(task(snap, "pre"), "a") {
		t.Error("Nominate reported a change for the same nomination")
	}
	c.UpdatePod(pre.DeepCopy())
	snap = c.Snapshot()
	if got := task(snap, "victim").Status; got != api.Releasing {
		t.Errorf("victim is %s, want Releasing while its eviction is in flight", got)
	}
	if got := task(snap, "pre"); got.Status != api.Pipelined || got.NodeName != "a" {
		t.Errorf("pre is %s on %q, want Pipelined on a", got.Status, got.NodeName)
	}
	if n := snap.Nodes["a"]; n.Releasing.MilliCPU != 4000 || n.Pipelined.MilliCPU != 4000 {
		t.Errorf("node a releasing %dm, pipelined %dm; want 4000m each", n.Releasing.MilliCPU, n.Pipelined.MilliCPU)
	}
	if !c.PendingWork() {
		t.Error("no pending work while a nominated task waits")
	}

	retry := time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)
	c.ForgetEviction(task(snap, "victim").UID, retry)
	c.Unnominate(task(snap, "pre").UID)
	snap = c.Snapshot()
	if got := task(snap, "victim"); got.Status != api.Running || !got.NoEvictUntil.Equal(retry) {
		t.Errorf("victim is %s, not evicted before %v; want Running until %v", got.Status, got.NoEvictUntil, retry)
	}
	if got := task(snap, "pre"); got.Status != api.Pending || got.NodeName != "" {
		t.Errorf("pre is %s on %q, want Pending nowhere", got.Status, got.NodeName)
	}
	if n := snap.Nodes["a"]; n.Pipelined.MilliCPU != 0 || n.Releasing.MilliCPU != 0 {
		t.Errorf("node a releasing %dm, pipelined %dm; want none", n.Releasing.MilliCPU, n.Pipelined.MilliCPU)
	}

	// A restarted scheduler reads the nomination from the pod, and binding
	// the task there ends it.
	restarted := newCache()
	restarted.UpdateNode(st.MakeNode("a").Alloc("cpu", "4").Obj())
	shown := pre.DeepCopy()
	shown.Status.NominatedNodeName = "a"
	restarted.UpdatePod(shown)
	snap = restarted.Snapshot()
	got := task(snap, "pre")
	if got.Status != api.Pipelined || got.NodeName != "a" {
		t.Fatalf("after a restart pre is %s on %q, want Pipelined on a", got.Status, got.NodeName)
	}
	restarted.Assume(got, "a")
	snap = restarted.Snapshot()
	if got := task(snap, "pre"); got.Status != api.Binding {
		t.Errorf("assumed pre is %s, want Binding", got.Status)
	}
	if n := snap.Nodes["a"]; n.Pipelined.MilliCPU != 0 || n.Used.MilliCPU != 4000 {
		t.Errorf("node a pipelined %dm, used %dm; want 0 and 4000m", n.Pipelined.MilliCPU, n.Used.MilliCPU)
	}
}
