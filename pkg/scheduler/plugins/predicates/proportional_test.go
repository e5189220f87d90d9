package predicates

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/podfit/evaluatortest"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// TestProportional: with 4 CPUs and 8Gi kept per idle GPU, a CPU-only pod
// may not take a GPU node's CPUs from its idle GPUs, a GPU pod may, and
// evicting a pod that frees enough lets the CPU pod in.
func TestProportional(t *testing.T) {
	snap := api.Build(api.Objects{
		Nodes: []*corev1.Node{
			st.MakeNode("gpu").Alloc("cpu", "16", "memory", "64Gi", "nvidia.com/gpu", "2", "pods", "110").Obj(),
			st.MakeNode("cpu").Alloc("cpu", "16", "memory", "64Gi", "pods", "110").Obj(),
		},
		Pods: []*corev1.Pod{st.MakePod("ns", "busy").Req("cpu", "6").Node("gpu").Phase(corev1.PodRunning).Obj()},
	})
	four := resource.MustParse("4")
	eight := resource.MustParse("8Gi")
	p, err := New(&configv1alpha1.PredicatesArgs{Proportional: &configv1alpha1.ProportionalPredicate{
		Resources: map[corev1.ResourceName]configv1alpha1.ResourceReservation{"nvidia.com/gpu": {CPU: &four, Memory: &eight}},
	}}, &framework.Handle{PodFit: evaluatortest.NewEvaluator(t)})
	if err != nil {
		t.Fatal(err)
	}
	pl := p.(*Plugin)
	ssn := framework.OpenSession(t.Context(), snap, []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: pl}}}}, framework.Options{})
	defer ssn.Close()

	task := func(name string, req ...string) *api.TaskInfo {
		return api.NewTaskInfo(st.MakePod("ns", name).Req(req...).Obj(), "ns/j")
	}
	cpuTask := task("c", "cpu", "4")
	// 10 idle CPUs, 4 asked, 8 kept for the 2 idle GPUs.
	if s := pl.Predicate(cpuTask, snap.Nodes["gpu"]); s == nil || !strings.Contains(s.Reasons[0], "too little cpu for their idle nvidia.com/gpu (4 cpu per unit, predicate proportional)") {
		t.Errorf("CPU pod on the GPU node: %v, want a proportional rejection", s)
	}
	if s := pl.Predicate(cpuTask, snap.Nodes["cpu"]); s != nil {
		t.Errorf("CPU pod on the CPU node: %v", s)
	}
	if s := pl.Predicate(task("g", "cpu", "4", "nvidia.com/gpu", "1"), snap.Nodes["gpu"]); s != nil {
		t.Errorf("GPU pod on the GPU node: %v", s)
	}
	var busy *api.TaskInfo
	for _, tk := range snap.Nodes["gpu"].Tasks {
		busy = tk
	}
	if s := pl.PredicateWithout(cpuTask, snap.Nodes["gpu"], []*api.TaskInfo{busy}); s != nil {
		t.Errorf("CPU pod on the GPU node with the busy pod evicted: %v", s)
	}
}
