package framework

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/api/apitest"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

type recorder struct {
	binds, evictions []string
}

func (r *recorder) Bind(t *api.TaskInfo, node string) { r.binds = append(r.binds, t.Name+"@"+node) }
func (r *recorder) Evict(t *api.TaskInfo, reason string) {
	r.evictions = append(r.evictions, t.Name+": "+reason)
}

// evictionSession is one 4-CPU node running a 3-CPU pod, with a pending
// 2-CPU pod that fits only once the running one is gone.
func evictionSession(t *testing.T, r *recorder) (ssn *Session, victim, preemptor *api.TaskInfo) {
	t.Helper()
	snap := api.Build(api.Objects{
		NewNodeMirror: apitest.NewMirror,
		Nodes:         []*corev1.Node{st.MakeNode("n").Alloc("cpu", "4").Obj()},
		Pods: []*corev1.Pod{
			st.MakePod("ns", "low").Req("cpu", "3").Node("n").Phase(corev1.PodRunning).Obj(),
			st.MakePod("ns", "high").Req("cpu", "2").Obj(),
		},
	})
	for _, j := range snap.Jobs {
		for _, task := range j.Tasks {
			switch task.Name {
			case "low":
				victim = task
			case "high":
				preemptor = task
			}
		}
	}
	opts := Options{Sink: r}
	if r != nil {
		opts.Evictor = r
	}
	return OpenSession(t.Context(), snap, nil, opts), victim, preemptor
}

// nodeState is what a node's accounts say, for comparisons.
func nodeState(n *api.NodeInfo) map[string]int64 {
	return map[string]int64{
		"idle": n.Idle.MilliCPU, "used": n.Used.MilliCPU, "releasing": n.Releasing.MilliCPU,
		"pipelined": n.Pipelined.MilliCPU, "futureIdle": n.FutureIdle().MilliCPU, "pods": int64(len(apitest.MirrorOf(n).Pods)),
	}
}

func TestEvictMakesRoomForAPipelinedTask(t *testing.T) {
	r := &recorder{}
	ssn, victim, preemptor := evictionSession(t, r)
	n := ssn.Snapshot.Nodes["n"]
	stmt := ssn.NewStatement()
	if err := stmt.Evict(victim, "ns/high", "preempted by ns/high"); err != nil {
		t.Fatal(err)
	}
	if victim.Status != api.Releasing {
		t.Errorf("victim is %s, want Releasing", victim.Status)
	}
	want := map[string]int64{"idle": 1000, "used": 3000, "releasing": 3000, "pipelined": 0, "futureIdle": 4000, "pods": 1}
	if diff := cmp.Diff(want, nodeState(n)); diff != "" {
		t.Errorf("node after the eviction (-want,+got):\n%s", diff)
	}
	node, future, _ := ssn.FindNode(preemptor)
	if node == nil || !future {
		t.Fatalf("FindNode = %v, future %t; want node n once the victim is gone", node, future)
	}
	if err := stmt.Pipeline(preemptor, node); err != nil {
		t.Fatal(err)
	}
	stmt.Commit()
	if diff := cmp.Diff([]string{"low: preempted by ns/high"}, r.evictions); diff != "" {
		t.Errorf("evictions (-want,+got):\n%s", diff)
	}
	if len(r.binds) != 0 {
		t.Errorf("binds %v: a pipelined task is bound only once the room is free", r.binds)
	}
}

func TestDiscardPutsAnEvictedTaskBack(t *testing.T) {
	r := &recorder{}
	ssn, victim, preemptor := evictionSession(t, r)
	n := ssn.Snapshot.Nodes["n"]
	job := ssn.Snapshot.Jobs[victim.Job]
	before, allocated := nodeState(n), job.Allocated.MilliCPU
	stmt := ssn.NewStatement()
	if err := stmt.Evict(victim, "ns/high", "preempted"); err != nil {
		t.Fatal(err)
	}
	if err := stmt.Pipeline(preemptor, n); err != nil {
		t.Fatal(err)
	}
	stmt.Discard()
	if victim.Status != api.Running || preemptor.Status != api.Pending {
		t.Errorf("victim %s, preemptor %s; want Running and Pending", victim.Status, preemptor.Status)
	}
	if diff := cmp.Diff(before, nodeState(n)); diff != "" {
		t.Errorf("node after discarding (-before,+after):\n%s", diff)
	}
	if job.Allocated.MilliCPU != allocated {
		t.Errorf("victim's job holds %dm, want %dm", job.Allocated.MilliCPU, allocated)
	}
	stmt.Commit()
	if len(r.evictions) != 0 {
		t.Errorf("a discarded eviction was sent: %v", r.evictions)
	}
}

// A job the cache lent the snapshot is copied before an eviction changes
// it: the cache's job and task stay as they were, the copy shows the
// eviction and its task takes the lent one's place on the node, and
// discarding restores the copy.
func TestEvictCopiesAJobTheCacheLent(t *testing.T) {
	r := &recorder{}
	ssn, victim, _ := evictionSession(t, r)
	n := ssn.Snapshot.Nodes["n"]
	lent := ssn.Snapshot.Jobs[victim.Job]
	ssn.Snapshot.SetLent(map[api.JobID]bool{victim.Job: true})
	allocated := lent.Allocated.MilliCPU

	stmt := ssn.NewStatement()
	if err := stmt.Evict(victim, "ns/high", "preempted"); err != nil {
		t.Fatal(err)
	}
	if victim.Status != api.Running || lent.Allocated.MilliCPU != allocated || lent.CountIn(api.Releasing) != 0 {
		t.Errorf("the lent job changed: task %s, allocated %dm, %d releasing", victim.Status, lent.Allocated.MilliCPU, lent.CountIn(api.Releasing))
	}
	own := ssn.Snapshot.Jobs[victim.Job]
	if own == lent || ssn.Snapshot.Lent(victim.Job) {
		t.Fatal("the snapshot still shares the job after the eviction")
	}
	if i := slices.Index(ssn.Snapshot.JobList(), own); i < 0 {
		t.Error("the job list does not hold the snapshot's copy")
	}
	if got := own.Tasks[victim.UID]; got == victim || got != n.Tasks[victim.UID] || got.Status != api.Releasing {
		t.Errorf("the copy's task is %s, the node's: %t, the lent one: %t; want Releasing, true, false", got.Status, got == n.Tasks[victim.UID], got == victim)
	}
	stmt.Discard()
	if got := own.Tasks[victim.UID].Status; got != api.Running || own.Allocated.MilliCPU != allocated {
		t.Errorf("after discarding, the copy's task is %s holding %dm; want Running and %dm", got, own.Allocated.MilliCPU, allocated)
	}
	if victim.Status != api.Running {
		t.Errorf("the lent job's task is %s, want Running", victim.Status)
	}
}

func TestEvictRefuses(t *testing.T) {
	ssn, victim, _ := evictionSession(t, nil)
	if err := ssn.NewStatement().Evict(victim, "ns/high", "x"); err == nil {
		t.Error("evicting without an evictor succeeded")
	}
	ssn, _, preemptor := evictionSession(t, &recorder{})
	if err := ssn.NewStatement().Evict(preemptor, "ns/high", "x"); err == nil {
		t.Error("evicting a pending task succeeded")
	}
}
