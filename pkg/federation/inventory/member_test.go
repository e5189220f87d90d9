package inventory

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
)

const gpu = corev1.ResourceName("nvidia.com/gpu")

func node(name, model string, gpus string, ready bool) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"zone": "z1"}}}
	if model != "" {
		n.Labels["nvidia.com/gpu.product"] = model
	}
	status := corev1.ConditionTrue
	if !ready {
		status = corev1.ConditionFalse
	}
	n.Status.Allocatable = corev1.ResourceList{gpu: resource.MustParse(gpus), corev1.ResourceCPU: resource.MustParse("32")}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}, {Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}}
	return n
}

func pod(uid, nodeName, gpus string, phase corev1.PodPhase) *corev1.Pod {
	rl := corev1.ResourceList{gpu: resource.MustParse(gpus)}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: uid, UID: types.UID(uid)},
		Spec:   corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: rl, Limits: rl}}}},
		Status: corev1.PodStatus{Phase: phase}}
}

// pools prints the member's pools as "labels alloc/used" of GPUs.
func pools(t *testing.T, m *member) string {
	t.Helper()
	ps, ok := m.nodePools()
	if !ok {
		return "unknown: " + m.unreachable()
	}
	out := ""
	for _, p := range ps {
		out += fmt.Sprintf("[%s %d/%d]", poolKey(p.Labels), p.Allocatable[gpu]/1000, p.Allocated[gpu]/1000)
	}
	return out
}

// TestMemberPools: nodes are grouped by the pool labels only, a NotReady
// node counts nowhere, a bound pod counts in its node's pool until it
// finishes or moves, and an unbound one in no pool.
func TestMemberPools(t *testing.T) {
	m := newMember("member cluster x", DefaultPoolLabels, func() {})
	trim := slim(m.poolLabels)
	see := func(obj any, gone bool) {
		t.Helper()
		o, err := trim(obj)
		if err != nil {
			t.Fatal(err)
		}
		m.observe(o, gone)
	}
	if got := pools(t, m); got != "unknown: the nodes and pods of member cluster x are not listed yet" {
		t.Errorf("before listing: %s", got)
	}
	m.synced = true
	see(node("h-0", "H100", "8", true), false)
	see(node("h-1", "H100", "8", true), false)
	see(node("a-0", "A100", "4", true), false)
	see(node("a-1", "A100", "4", false), false)
	see(node("cpu-0", "", "0", true), false)
	see(pod("p1", "h-0", "3", corev1.PodRunning), false)
	see(pod("p2", "a-0", "1", corev1.PodRunning), false)
	see(pod("p3", "", "2", corev1.PodPending), false)
	if got, want := pools(t, m), "[ 0/0][nvidia.com/gpu.product=A100 4/1][nvidia.com/gpu.product=H100 16/3]"; got != want {
		t.Errorf("pools %s, want %s", got, want)
	}
	// p2 finishes, p3 is bound to h-1, a-1 becomes Ready, h-0 is deleted
	// (a tombstone).
	see(pod("p2", "a-0", "1", corev1.PodSucceeded), false)
	see(pod("p3", "h-1", "2", corev1.PodRunning), false)
	see(node("a-1", "A100", "4", true), false)
	see(toolscache.DeletedFinalStateUnknown{Key: "h-0", Obj: node("h-0", "H100", "8", true)}, true)
	if got, want := pools(t, m), "[ 0/0][nvidia.com/gpu.product=A100 8/0][nvidia.com/gpu.product=H100 8/2]"; got != want {
		t.Errorf("after changes: pools %s, want %s", got, want)
	}
	// The summary still counts p1, bound to the deleted node, as allocated.
	if s := m.summary(); s.Allocated.Name(gpu, resource.DecimalSI).String() != "5" || len(s.Allocating) != 0 {
		t.Errorf("summary %v", s)
	}
}
