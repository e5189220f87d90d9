package podfit

import (
	"runtime"
	"slices"
	"testing"
	"weak"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	k8sframework "k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

func nodeNames(list []fwk.NodeInfo) []string {
	var out []string
	for _, n := range list {
		out = append(out, n.Node().Name)
	}
	return out
}

func TestListerSeesPlacementsAfterSet(t *testing.T) {
	nodes := nodeInfos([]*corev1.Node{
		st.MakeNode("a").Obj(), st.MakeNode("b").Obj(), st.MakeNode("c").Obj(),
	}, []*corev1.Pod{
		st.MakePod(ns, "affine").PodAffinity(hostKey, "app", "x").Node("a").Phase(corev1.PodRunning).Obj(),
	})
	l := &lister{}
	l.set(nodes)

	// Placed after set, directly on kube-scheduler's NodeInfo.
	nodeInfoOf(nodes[1]).AddPod(st.MakePod(ns, "anti").PodAntiAffinity(zoneKey, "app", "x").PVC("data").Node("b").Obj())
	place(nodes[2], st.MakePod(ns, "claimant").PVC("other").Obj(), api.Allocated)

	affinity, _ := l.HavePodsWithAffinityList()
	anti, _ := l.HavePodsWithRequiredAntiAffinityList()
	got := map[string][]string{
		"all":                         nodeNames(l.list),
		"with affinity":               nodeNames(affinity),
		"with required anti-affinity": nodeNames(anti),
	}
	want := map[string][]string{
		"all":                         {"a", "b", "c"},
		"with affinity":               {"a", "b"},
		"with required anti-affinity": {"b"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("node lists (-want,+got):\n%s", diff)
	}
	for key, want := range map[string]bool{"ns/data": true, "ns/other": true, "ns/none": false} {
		if got := l.IsPVCUsedByPods(key); got != want {
			t.Errorf("IsPVCUsedByPods(%s) = %v, want %v", key, got, want)
		}
	}
	if _, err := l.Get("missing"); err == nil {
		t.Errorf("Get(missing) found a node")
	}
	if n, err := l.Get("b"); err != nil || n.Node().Name != "b" {
		t.Errorf("Get(b) = %v, %v", n, err)
	}
}

// A ReadWriteOncePod claim in use by a placed pod keeps every other pod
// that uses it away; VolumeRestrictions asks the lister.
func TestReadWriteOncePodClaimInUse(t *testing.T) {
	objs := []k8sruntime.Object{
		st.MakeStorageClass("fast", "example.com/fast").Obj(),
		st.MakePVC(ns, "solo").StorageClass("fast").AccessMode(corev1.ReadWriteOncePod).Bound("pv-solo").Obj(),
		st.MakePV("pv-solo").StorageClass("fast").AccessMode(corev1.ReadWriteOncePod).BoundTo(ns, "solo").Obj(),
	}
	e, _ := newTestEvaluator(t, objs...)
	nodes := nodeInfos([]*corev1.Node{st.MakeNode("a").Obj(), st.MakeNode("b").Obj()}, nil)
	e.SetNodes(nodes)
	pod := func(name string) *corev1.Pod { return st.MakePod(ns, name).PVC("solo").Obj() }

	place(nodes[0], pod("first"), api.Allocated)
	fit, why := e.Feasible(t.Context(), pod("second"))
	if len(fit) > 0 {
		t.Errorf("a second user of the claim fits %v, want no node", fit)
	}
	if got, want := why["b"].Message(), "VolumeRestrictions: node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"; got != want {
		t.Errorf("why not b = %q, want %q", got, want)
	}
}

// TestListerPatchesChangedNodes sets a list, then the same nodes with one
// copied afresh (as the next snapshot copies a changed node), then a list
// with another node: each time the lister and the image states follow.
func TestListerPatchesChangedNodes(t *testing.T) {
	withImage := func(name string) *corev1.Node {
		n := st.MakeNode(name).Obj()
		n.Status.Images = []corev1.ContainerImage{{Names: []string{"trainer:1"}, SizeBytes: 1 << 30}}
		return n
	}
	nodes := nodeInfos([]*corev1.Node{withImage("a"), st.MakeNode("b").Obj(), withImage("c")}, nil)
	l, x := &lister{}, &imageIndex{}
	apply := func(nodes []*api.NodeInfo) ([]int, bool) {
		changed, same := l.set(nodes)
		x.apply(nodes, changed, same)
		return changed, same
	}
	check := func(when string, nodes []*api.NodeInfo) {
		t.Helper()
		for i, n := range nodes {
			if l.list[i] != nodeInfoOf(n) || l.nodes[i] != nodeInfoOf(n) {
				t.Errorf("%s: list entry %d is not %s's NodeInfo", when, i, n.Name)
			}
			if got, err := l.Get(n.Name); err != nil || got != nodeInfoOf(n) {
				t.Errorf("%s: Get(%s) is not its NodeInfo", when, n.Name)
			}
			want := 0
			if len(n.Node.Status.Images) > 0 {
				want = 1
			}
			if got := len(nodeInfoOf(n).ImageStates); got != want {
				t.Errorf("%s: %s has %d image states, want %d", when, n.Name, got, want)
			}
		}
		if len(l.list) != len(nodes) {
			t.Errorf("%s: %d listed, want %d", when, len(l.list), len(nodes))
		}
	}
	apply(nodes)
	check("first", nodes)

	next := []*api.NodeInfo{nodes[0].Clone(), nodes[1], nodes[2]}
	nodeInfoOf(next[0]).ImageStates = nil
	if changed, same := apply(next); !same || len(changed) != 1 || changed[0] != 0 {
		t.Fatalf("one node copied afresh: changed %v, same %v; want [0], true", changed, same)
	}
	check("one copied afresh", next)

	withImageB := nodeInfos([]*corev1.Node{withImage("b")}, nil)[0]
	third := []*api.NodeInfo{next[0], withImageB, next[2]}
	apply(third)
	check("a node object changed", third)
	if got := nodeInfoOf(third[0]).ImageStates["trainer:1"].NumNodes; got != 3 {
		t.Errorf("image on %d nodes after b pulled it, want 3", got)
	}

	fourth := []*api.NodeInfo{third[0], third[2]}
	apply(fourth)
	check("a node gone", fourth)
}

// TestReleaseLetsGoOfTheCyclesNodes: between cycles the evaluator holds
// none of the last cycle's nodes, their kube-scheduler NodeInfos, node
// objects or pods (which the cluster replaces as pods bind and start), and
// the next cycle over the same nodes still finds what changed.
func TestReleaseLetsGoOfTheCyclesNodes(t *testing.T) {
	e, _ := newTestEvaluator(t)
	node := st.MakeNode("a").Alloc("cpu", "4").Obj()
	node.Status.Images = []corev1.ContainerImage{{Names: []string{"trainer:1"}, SizeBytes: 1 << 30}}
	pod := st.MakePod("ns", "p").Req("cpu", "1").Node("a").Obj()
	nodes := nodeInfos([]*corev1.Node{node, st.MakeNode("b").Alloc("cpu", "4").Obj()}, []*corev1.Pod{pod})
	held := map[string]func() bool{
		"node object":             alive(node),
		"pod":                     alive(pod),
		"node":                    alive(nodes[0]),
		"kube-scheduler NodeInfo": alive(nodeInfoOf(nodes[0])),
	}
	e.SetNodes(nodes)
	b := nodes[1]
	node, pod, nodes = nil, nil, nil
	runtime.GC()
	for what, h := range held {
		if !h() {
			t.Fatalf("the %s was freed while the cycle was open: nothing held it, so this test shows nothing", what)
		}
	}
	e.Release()
	runtime.GC()
	for what, h := range held {
		if h() {
			t.Errorf("the %s is still held after Release", what)
		}
	}

	// The next cycle: a as a new copy, b as it was.
	next := nodeInfos([]*corev1.Node{st.MakeNode("a").Alloc("cpu", "4").Obj()}, nil)
	next = append(next, b)
	changed, same := e.lister.set(next)
	if !same || !slices.Equal(changed, []int{0}) {
		t.Errorf("after Release, the same nodes with a copied afresh: changed %v, same %v; want [0], true", changed, same)
	}
	if got, err := e.lister.Get("b"); err != nil || got != nodeInfoOf(b) {
		t.Errorf("Get(b) after the next set = %v, %v; want b's NodeInfo", got, err)
	}
}

// alive reports, when called, whether the object p points to is still
// reachable, without keeping it so.
func alive[T any](p *T) func() bool {
	w := weak.Make(p)
	return func() bool { return w.Value() != nil }
}

// TestAffinityListsSkippedWithoutAffinityPods: while no node holds a pod
// with inter-pod affinity terms, the lists of such nodes are empty without
// a pass over the nodes; once one is placed (and noted), they list it.
func TestAffinityListsSkippedWithoutAffinityPods(t *testing.T) {
	nodes := nodeInfos([]*corev1.Node{st.MakeNode("a").Obj(), st.MakeNode("b").Obj()},
		[]*corev1.Pod{st.MakePod(ns, "plain").Node("a").Phase(corev1.PodRunning).Obj()})
	l := &lister{}
	l.set(nodes)
	scanned := 0
	l.filter(func(*k8sframework.NodeInfo) bool { scanned++; return true })
	if scanned != 0 {
		t.Errorf("%d nodes scanned with no pod with affinity terms placed, want 0", scanned)
	}

	anti := st.MakePod(ns, "anti").PodAntiAffinity(zoneKey, "app", "x").Node("b").Obj()
	nodeInfoOf(nodes[1]).AddPod(anti)
	l.notePlaced(anti)
	got, _ := l.HavePodsWithRequiredAntiAffinityList()
	if diff := cmp.Diff([]string{"b"}, nodeNames(got)); diff != "" {
		t.Errorf("nodes with required anti-affinity pods after one was placed (-want,+got):\n%s", diff)
	}
}
