package sharding

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	shardv1alpha1 "github.com/caldera-sh/caldera/apis/shard/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/sharding/core"
)

type fence struct{ placeable func(string) bool }

func (f *fence) SetPlaceable(p func(string) bool, _ bool) { f.placeable = p }

// witness confirms the nodes in ok, and records what it was asked.
type witness struct {
	ok    map[string]bool
	asked []string
	since string
}

func (w *witness) CacheHolds(_ context.Context, node, since string) (bool, error) {
	w.asked = append(w.asked, node)
	w.since = since
	return w.ok[node], nil
}

type coordinatorTest struct {
	t      *testing.T
	cl     client.Client
	clk    *clocktesting.FakeClock
	fence  *fence
	w      *witness
	c      *Coordinator
	failed bool // status writes fail
}

// newCoordinatorTest runs instance "a" (desiring n1 to n3) beside instance
// "b", whose status lists n3 in use.
func newCoordinatorTest(t *testing.T) *coordinatorTest {
	scheme := runtime.NewScheme()
	if err := shardv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	own := &shardv1alpha1.NodeShard{ObjectMeta: metav1.ObjectMeta{Name: "a", Generation: 2},
		Spec:   shardv1alpha1.NodeShardSpec{NodesDesired: []string{"n1", "n2", "n3"}},
		Status: shardv1alpha1.NodeShardStatus{NodesInUse: []string{"n1"}, ObservedGeneration: 1}}
	other := &shardv1alpha1.NodeShard{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: shardv1alpha1.NodeShardSpec{NodesDesired: []string{"n3"}},
		Status: shardv1alpha1.NodeShardStatus{NodesInUse: []string{"n3"}}}
	ct := &coordinatorTest{t: t, clk: clocktesting.NewFakeClock(time.Unix(1700000000, 0)), fence: &fence{}, w: &witness{ok: map[string]bool{}}}
	ct.cl = fake.NewClientBuilder().WithScheme(scheme).WithObjects(own, other).WithStatusSubresource(own, other).
		WithInterceptorFuncs(interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if ct.failed {
				return errors.New("the API server is unreachable")
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		}}).Build()
	ct.c = New(Options{Name: "a", Client: ct.cl, Fence: ct.fence, Witness: ct.w, Clock: ct.clk})
	return ct
}

func (ct *coordinatorTest) sync() (ready bool) {
	ct.t.Helper()
	ready, err := ct.c.Sync(ct.t.Context())
	if err != nil && !ct.failed {
		ct.t.Fatal(err)
	}
	return ready
}

func (ct *coordinatorTest) status() shardv1alpha1.NodeShardStatus {
	ct.t.Helper()
	var s shardv1alpha1.NodeShard
	if err := ct.cl.Get(ct.t.Context(), client.ObjectKey{Name: "a"}, &s); err != nil {
		ct.t.Fatal(err)
	}
	return s.Status
}

func (ct *coordinatorTest) placeable(want ...string) {
	ct.t.Helper()
	var got []string
	for _, n := range []string{"n1", "n2", "n3"} {
		if ct.fence.placeable(n) {
			got = append(got, n)
		}
	}
	if !slices.Equal(got, want) {
		ct.t.Errorf("placeable %v, want %v", got, want)
	}
}

// TestNodesTakenWaitForTheWitness: the instance places nothing before it
// has written its status and seen the write; then each node only once the
// witness says the cache holds its pods. The status follows the decision.
func TestNodesTakenWaitForTheWitness(t *testing.T) {
	ct := newCoordinatorTest(t)
	if ct.sync() {
		t.Error("ready before the instance has seen its status write")
	}
	ct.placeable()
	if st := ct.status(); !slices.Equal(st.NodesInUse, []string{"n1", "n2"}) || !slices.Equal(st.NodesToAdd, []string{"n3"}) || st.ObservedGeneration != 2 || st.InUse != 2 {
		t.Fatalf("status %+v, want n1 and n2 in use, n3 to add, for generation 2", st)
	}
	if len(ct.w.asked) != 0 {
		t.Errorf("the witness was asked about %v before the instance saw its status", ct.w.asked)
	}
	// The instance sees its write; the witness confirms n1 only.
	ct.w.ok["n1"] = true
	ct.c.Changed()
	if ct.sync() {
		t.Error("ready at start with a node the witness has yet to confirm")
	}
	ct.placeable("n1")
	if !slices.Equal(ct.w.asked, []string{"n1", "n2"}) || ct.w.since == "" || ct.w.since == "0" {
		t.Errorf("witness asked %v since %q, want n1 and n2 since b's resourceVersion", ct.w.asked, ct.w.since)
	}
	// An unconfirmed node keeps the coordinator checking.
	ct.w.ok["n2"] = true
	if !ct.sync() {
		t.Error("not ready once every node is confirmed")
	}
	ct.placeable("n1", "n2")
	// Confirmed once, nodes are not asked about again.
	ct.c.Changed()
	ct.sync()
	if !slices.Equal(ct.w.asked, []string{"n1", "n2", "n2"}) {
		t.Errorf("witness asked %v, want n1, n2, then n2 again", ct.w.asked)
	}
}

// TestLiveness: the instance renews its status every heartbeat period;
// one that cannot write stops placing after the renew deadline; the nodes
// of an instance whose status is not renewed are taken after StaleAfter.
func TestLiveness(t *testing.T) {
	ct := newCoordinatorTest(t)
	ct.w.ok = map[string]bool{"n1": true, "n2": true, "n3": true}
	ct.sync()
	ct.c.Changed()
	ct.sync()
	ct.placeable("n1", "n2")
	first := ct.status().LastUpdateTime

	// A heartbeat renews the status though nothing changed.
	ct.clk.Step(core.HeartbeatPeriod)
	ct.sync()
	if got := ct.status().LastUpdateTime; got == nil || !got.After(first.Time) {
		t.Errorf("lastUpdateTime %v after a heartbeat period, want later than %v", got, first)
	}

	// Writes fail: the instance places on past the heartbeat, and stops
	// at the renew deadline.
	ct.failed = true
	ct.clk.Step(core.RenewDeadline - time.Second)
	ct.sync()
	ct.placeable("n1", "n2")
	ct.clk.Step(2 * time.Second)
	if ct.sync() {
		t.Error("ready past the renew deadline")
	}
	ct.placeable()
	// Writing again, it places again once it sees the write.
	ct.failed = false
	ct.sync()
	ct.c.Changed()
	ct.sync()
	ct.placeable("n1", "n2")

	// b never renews its status: after StaleAfter, n3 is free, and the
	// instance takes it.
	for elapsed := time.Duration(0); elapsed <= core.StaleAfter; elapsed += core.HeartbeatPeriod {
		ct.clk.Step(core.HeartbeatPeriod)
		ct.sync()
		ct.c.Changed()
		ct.sync()
	}
	ct.placeable("n1", "n2", "n3")
	if st := ct.status(); !slices.Equal(st.NodesInUse, []string{"n1", "n2", "n3"}) || len(st.NodesToAdd) != 0 {
		t.Errorf("status %+v, want every node in use", st)
	}
}
