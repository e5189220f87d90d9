package resourcestrategyfit

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// BenchmarkScoreNodes scores one GPU task over 5,000 nodes with three
// resource strategies, a prefix entry and retention.
func BenchmarkScoreNodes(b *testing.B) {
	var nodes []*corev1.Node
	for i := range 5000 {
		n := st.MakeNode(fmt.Sprintf("n%d", i))
		if i%2 == 0 {
			n.Alloc("cpu", "64", "memory", "256Gi", "nvidia.com/gpu", "8")
		} else {
			n.Alloc("cpu", "64", "memory", "256Gi")
		}
		nodes = append(nodes, n.Obj())
	}
	list := api.Build(api.Objects{Nodes: nodes}).NodeList
	p, err := New(&configv1alpha1.ResourceStrategyFitArgs{
		Resources: map[string]configv1alpha1.ResourceStrategy{
			"cpu":          rs(configv1alpha1.LeastAllocated, 1),
			"memory":       rs(configv1alpha1.LeastAllocated, 1),
			"nvidia.com/*": rs(configv1alpha1.MostAllocated, 3),
		},
		SRA: &configv1alpha1.ScarceResourceAvoidance{
			Policy: configv1alpha1.SRARetention, Resources: map[corev1.ResourceName]int32{"nvidia.com/gpu": 1, "nvidia.com/a100": 2},
		},
	}, &framework.Handle{})
	if err != nil {
		b.Fatal(err)
	}
	pl := p.(*Plugin)
	pl.OnSessionOpen(nil)
	task := api.NewTaskInfo(st.MakePod("ns", "w").Req("cpu", "4", "memory", "16Gi", "nvidia.com/gpu", "1").Obj(), "ns/j")
	scores := make([]float64, len(list))
	b.ReportAllocs()
	for b.Loop() {
		pl.ScoreNodes(task, list, scores)
	}
}
