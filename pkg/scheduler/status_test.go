package scheduler

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/cache"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

type countingSink struct{ applied int }

func (s *countingSink) Apply(*api.Snapshot, map[api.JobID]*framework.JobOutcome, map[api.JobID]bool, metav1.Time) {
	s.applied++
}

// A Queue that changes (say its status, shown late after a watch was cut)
// has its status compared again, with nothing else to do: a write the
// informer had not shown when the status was last compared would otherwise
// stay on the Queue.
func TestQueueChangeSyncsQueueStatus(t *testing.T) {
	c := cache.New(cache.Options{})
	sink := &countingSink{}
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	s := New(c, Options{Status: sink, Clock: clk})
	c.UpdateQueue(schedtesting.MakeQueue("q").Obj())
	s.syncStatus(t.Context())
	if sink.applied != 1 {
		t.Fatalf("after a Queue change: %d status syncs, want 1", sink.applied)
	}
	s.syncStatus(t.Context())
	if sink.applied != 1 {
		t.Errorf("with nothing changed: %d status syncs, want still 1", sink.applied)
	}
	c.UpdateQueue(schedtesting.MakeQueue("q").Obj())
	s.syncStatus(t.Context())
	if sink.applied != 2 {
		t.Errorf("after the Queue changed again: %d status syncs, want 2", sink.applied)
	}
}

// An idle scheduler compares queue statuses every queueResync even when no
// Queue changed, so that one another writer changed is put right.
func TestIdleSchedulerResyncsQueueStatus(t *testing.T) {
	c := cache.New(cache.Options{})
	sink := &countingSink{}
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	s := New(c, Options{Status: sink, Clock: clk})
	s.syncStatus(t.Context())
	if sink.applied != 1 {
		t.Fatalf("first sync: %d status syncs, want 1", sink.applied)
	}
	clk.Step(queueResync - time.Second)
	s.syncStatus(t.Context())
	if sink.applied != 1 {
		t.Errorf("%s later with nothing changed: %d status syncs, want still 1", queueResync-time.Second, sink.applied)
	}
	clk.Step(time.Second)
	s.syncStatus(t.Context())
	if sink.applied != 2 {
		t.Errorf("%s later: %d status syncs, want 2", queueResync, sink.applied)
	}
}

// An idle scheduler brings its snapshot up to date when it looks for status
// to write, even when no job's status changed (here a node changed), so
// that the snapshot does not keep what the cache replaced alive until the
// next cycle (cache.Refresh).
func TestIdleSchedulerRefreshesItsSnapshot(t *testing.T) {
	c := cache.New(cache.Options{})
	c.UpdateQueue(schedtesting.MakeQueue("default").Obj())
	node := st.MakeNode("a").Alloc("cpu", "4").Obj()
	c.UpdateNode(node)
	s := New(c, Options{Status: &countingSink{}, Clock: testingclock.NewFakeClock(time.Unix(1000, 0))})
	s.RunCycle(t.Context())
	s.syncStatus(t.Context())

	labelled := node.DeepCopy()
	labelled.Labels = map[string]string{"zone": "z1"}
	c.UpdateNode(labelled)
	s.syncStatus(t.Context())
	if c.Refresh() {
		t.Errorf("the snapshot still lagged the cache after an idle status sync")
	}
}

// recordingSink keeps the jobs of each status sync, and the running count
// each saw of job "ns/pg".
type recordingSink struct{ running []int32 }

func (s *recordingSink) Apply(snap *api.Snapshot, _ map[api.JobID]*framework.JobOutcome, touched map[api.JobID]bool, _ metav1.Time) {
	if touched["ns/pg"] {
		s.running = append(s.running, snap.Jobs["ns/pg"].CountIn(api.Running))
	}
}

// midCycle is an action that changes the cluster while the cycle runs.
type midCycle struct{ f func() }

func (a midCycle) Name() string               { return "mid-cycle" }
func (a midCycle) Execute(*framework.Session) { a.f() }

// A job that changes during a cycle (its pod starts) has its status synced
// again afterwards, on a view that shows the change: the cycle's own view
// predates it.
func TestJobChangedDuringACycleIsSyncedAfter(t *testing.T) {
	c := cache.New(cache.Options{})
	c.UpdateQueue(schedtesting.MakeQueue("default").Obj())
	c.UpdateNode(st.MakeNode("n1").Alloc("cpu", "4").Obj())
	c.UpdatePodGroup(schedtesting.MakePodGroup("pg", "ns").MinMember(1).Obj())
	bound := st.MakePod("ns", "p").Group("pg").Req("cpu", "1").Node("n1").Obj()
	c.UpdatePod(bound)
	sink := &recordingSink{}
	started := bound.DeepCopy()
	started.Status.Phase = corev1.PodRunning
	s := New(c, Options{Status: sink, Clock: testingclock.NewFakeClock(time.Unix(1000, 0)),
		Actions: []framework.Action{midCycle{func() { c.UpdatePod(started) }}}})
	s.RunCycle(t.Context())
	s.syncStatus(t.Context())
	if n := len(sink.running); n == 0 || sink.running[n-1] != 1 {
		t.Errorf("running counts seen by the status syncs of ns/pg: %v; the last must show the pod started", sink.running)
	}
}
