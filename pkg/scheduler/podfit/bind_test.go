package podfit

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

const selectedNodeAnnotation = "volume.kubernetes.io/selected-node"

func delayedClaim() []runtime.Object {
	return []runtime.Object{
		st.MakeStorageClass("late", "example.com/late").WaitForFirstConsumer().Obj(),
		st.MakePVC(ns, "data").StorageClass("late").Obj(),
	}
}

// Reserving a pod assumes its delayed claim provisioned on the node, so a
// second pod of the same claim is held to that node until Unreserve.
func TestReserveHoldsDelayedClaimToTheNode(t *testing.T) {
	e, _ := newTestEvaluator(t, delayedClaim()...)
	e.SetNodes(nodeInfos(filterCluster()))
	ctx := t.Context()
	user := func(name string) *corev1.Pod { return st.MakePod(ns, name).PVC("data").Obj() }

	first, status := e.PreFilter(ctx, user("first"), nil)
	if status != nil {
		t.Fatal(status)
	}
	if status := e.Filter(ctx, first, nodeByName(e.nodes, "n4")); status != nil {
		t.Fatalf("Filter on n4: %v", status)
	}
	var got [][]string
	fit, _ := e.Feasible(ctx, user("second"))
	got = append(got, fit)
	if status := e.Reserve(ctx, first, "n4"); status != nil {
		t.Fatalf("Reserve: %v", status)
	}
	fit, _ = e.Feasible(ctx, user("second"))
	got = append(got, fit)
	e.Unreserve(ctx, first)
	fit, _ = e.Feasible(ctx, user("second"))
	got = append(got, fit)

	want := [][]string{{"n1", "n4"}, {"n4"}, {"n1", "n4"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("second user's feasible nodes before Reserve, after Reserve, after Unreserve (-want,+got):\n%s", diff)
	}
}

// PreBind asks for the delayed claim to be provisioned on the reserved node
// (the selected-node annotation an external provisioner acts on).
func TestPreBindSelectsTheNodeForProvisioning(t *testing.T) {
	e, cs := newTestEvaluator(t, delayedClaim()...)
	e.SetNodes(nodeInfos(filterCluster()))
	ctx := t.Context()
	s, status := e.PreFilter(ctx, st.MakePod(ns, "p").PVC("data").Obj(), nil)
	if status != nil {
		t.Fatal(status)
	}
	if status := e.PreBind(ctx, s, "n4"); status == nil || status.Code != framework.Error {
		t.Errorf("PreBind before Reserve = %v, want an error", status)
	}
	if status := e.Filter(ctx, s, nodeByName(e.nodes, "n4")); status != nil {
		t.Fatalf("Filter on n4: %v", status)
	}
	if status := e.Reserve(ctx, s, "n4"); status != nil {
		t.Fatalf("Reserve: %v", status)
	}
	// Nothing provisions here and the pod does not exist, so PreBind ends
	// in an error once it checks; the request is what is under test.
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if status := e.PreBind(pctx, s, "n4"); status == nil {
		t.Errorf("PreBind succeeded without a provisioner")
	}
	pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := pvc.Annotations[selectedNodeAnnotation]; got != "n4" {
		t.Errorf("claim annotation %s = %q, want n4", selectedNodeAnnotation, got)
	}
}

// A pod without claims has nothing to do before binding.
func TestPreBindWithoutClaims(t *testing.T) {
	e, _ := newTestEvaluator(t)
	e.SetNodes(nodeInfos(filterCluster()))
	ctx := t.Context()
	s, status := e.PreFilter(ctx, st.MakePod(ns, "p").Obj(), nil)
	if status != nil {
		t.Fatal(status)
	}
	if status := e.Reserve(ctx, s, "n1"); status != nil {
		t.Fatalf("Reserve: %v", status)
	}
	if status := e.PreBind(ctx, s, "n1"); status != nil {
		t.Errorf("PreBind = %v, want success", status)
	}
}

// Preemption asks whether the pod would fit once victims are gone; the
// pod's state follows pods removed and added without a new PreFilter.
func TestAddAndRemovePodUpdateTheState(t *testing.T) {
	e, _ := newTestEvaluator(t)
	victim := st.MakePod(ns, "victim").Label("app", "x").Node("a").Phase(corev1.PodRunning).Obj()
	nodes := nodeInfos([]*corev1.Node{st.MakeNode("a").Obj(), st.MakeNode("b").Obj()}, []*corev1.Pod{victim})
	e.SetNodes(nodes)
	ctx := t.Context()
	s, status := e.PreFilter(ctx, st.MakePod(ns, "p").PodAntiAffinity(hostKey, "app", "x").Obj(), nil)
	if status != nil {
		t.Fatal(status)
	}
	fits := func() []bool {
		return []bool{e.Filter(ctx, s, nodes[0]) == nil, e.Filter(ctx, s, nodes[1]) == nil}
	}
	var got [][]bool
	got = append(got, fits())
	if status := e.RemovePod(ctx, s, victim, nodes[0]); status != nil {
		t.Fatal(status)
	}
	got = append(got, fits())
	if status := e.AddPod(ctx, s, st.MakePod(ns, "other").Label("app", "x").Node("b").Obj(), nodes[1]); status != nil {
		t.Fatal(status)
	}
	got = append(got, fits())
	want := [][]bool{{false, true}, {true, true}, {true, false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fits [a b]: as is, without victim, with other on b (-want,+got):\n%s", diff)
	}
}
