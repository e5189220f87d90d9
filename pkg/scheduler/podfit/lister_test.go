package podfit

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	st "github.com/caldera-sh/caldera/pkg/scheduler/podfit/testing"
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
	nodes[1].K8s.AddPod(st.MakePod(ns, "anti").PodAntiAffinity(zoneKey, "app", "x").PVC("data").Node("b").Obj())
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
	objs := []runtime.Object{
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
