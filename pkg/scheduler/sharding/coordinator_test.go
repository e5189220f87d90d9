package sharding

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	shardv1alpha1 "github.com/caldera-sh/caldera/apis/shard/v1alpha1"
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

// TestNodesTakenWaitForTheWitness: a node the instance takes from another
// is placed on only once the witness says the cache holds its pods; the
// nodes the instance's status listed at start are its own and are not
// checked. The status follows the decision.
func TestNodesTakenWaitForTheWitness(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := shardv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	own := &shardv1alpha1.NodeShard{ObjectMeta: metav1.ObjectMeta{Name: "a", Generation: 2},
		Spec:   shardv1alpha1.NodeShardSpec{NodesDesired: []string{"n1", "n2"}},
		Status: shardv1alpha1.NodeShardStatus{NodesInUse: []string{"n1"}, ObservedGeneration: 1}}
	// b released n2 (its last write).
	other := &shardv1alpha1.NodeShard{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: shardv1alpha1.NodeShardSpec{NodesDesired: []string{"n3"}},
		Status: shardv1alpha1.NodeShardStatus{NodesInUse: []string{"n3"}}}
	cl := fake.NewClientBuilder().WithScheme(scheme).WithObjects(own, other).WithStatusSubresource(own, other).Build()
	f, w := &fence{}, &witness{ok: map[string]bool{}}
	c := New(Options{Name: "a", Client: cl, Fence: f, Witness: w})
	sync := func() {
		t.Helper()
		if err := c.Sync(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	status := func() shardv1alpha1.NodeShardStatus {
		t.Helper()
		var s shardv1alpha1.NodeShard
		if err := cl.Get(t.Context(), client.ObjectKey{Name: "a"}, &s); err != nil {
			t.Fatal(err)
		}
		return s.Status
	}
	placeable := func(want ...string) {
		t.Helper()
		var got []string
		for _, n := range []string{"n1", "n2", "n3"} {
			if f.placeable(n) {
				got = append(got, n)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("placeable %v, want %v", got, want)
		}
	}

	// First sync: n1 was the instance's own; n2 is listed in use.
	sync()
	placeable("n1")
	if st := status(); !slices.Equal(st.NodesInUse, []string{"n1", "n2"}) || st.ObservedGeneration != 2 || st.InUse != 2 {
		t.Fatalf("status %+v, want n1 and n2 in use for generation 2", st)
	}
	if len(w.asked) != 0 {
		t.Errorf("the witness was asked about %v before the instance saw its status", w.asked)
	}
	// The instance sees its write: n2 is its to take, once the witness
	// confirms it.
	c.Changed()
	sync()
	placeable("n1")
	if !slices.Equal(w.asked, []string{"n2"}) || w.since == "" || w.since == "0" {
		t.Errorf("witness asked %v since %q, want n2 since b's resourceVersion", w.asked, w.since)
	}
	w.ok["n2"] = true
	sync() // an unconfirmed node keeps the coordinator checking
	placeable("n1", "n2")
	// Confirmed once, n2 is not asked about again.
	c.Changed()
	sync()
	if !slices.Equal(w.asked, []string{"n2", "n2"}) {
		t.Errorf("witness asked %v, want n2 twice (refused, then confirmed)", w.asked)
	}
}
