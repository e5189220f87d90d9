package allocate

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

type countingSink struct{ n int }

func (c *countingSink) Bind(*api.TaskInfo, string) { c.n++ }

// BenchmarkAllocateCycle measures one allocate cycle that places gangs of
// 50 pods (1 cpu each) on clusters of 32-cpu nodes, with the gang and
// priority plugins; the snapshot is rebuilt outside the timer.
func BenchmarkAllocateCycle(b *testing.B) {
	for _, bc := range []struct{ nodes, gangs int }{{5000, 200}, {10000, 200}} {
		b.Run(fmt.Sprintf("nodes=%d/gangs=%dx50", bc.nodes, bc.gangs), func(b *testing.B) {
			objects := api.Objects{Queues: []*schedulingv1beta1.Queue{schedtesting.MakeQueue("default").Obj()}}
			for i := range bc.nodes {
				objects.Nodes = append(objects.Nodes, st.MakeNode(fmt.Sprintf("n%05d", i)).Alloc("cpu", "32", "memory", "256Gi").Obj())
			}
			for g := range bc.gangs {
				name := fmt.Sprintf("g%03d", g)
				objects.PodGroups = append(objects.PodGroups,
					schedtesting.MakePodGroup(name, "ns").MinMember(50).Phase(schedulingv1beta1.PodGroupInqueue).Obj())
				for i := range 50 {
					objects.Pods = append(objects.Pods, st.MakePod("ns", fmt.Sprintf("%s-%02d", name, i)).Group(name).Req("cpu", "1", "memory", "1Gi").Obj())
				}
			}
			tiers := benchTiers(b)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				snap := api.Build(objects)
				sink := &countingSink{}
				b.StartTimer()
				ssn := framework.OpenSession(b.Context(), snap, tiers, framework.Options{Sink: sink})
				New().Execute(ssn)
				ssn.Close()
				b.StopTimer()
				if sink.n != bc.gangs*50 {
					b.Fatalf("bound %d pods, want %d", sink.n, bc.gangs*50)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(bc.gangs*50)*float64(b.N)/b.Elapsed().Seconds(), "pods/s")
		})
	}
}

func benchTiers(b *testing.B) []framework.Tier {
	b.Helper()
	t := &testing.T{}
	return tiers(t)
}

var _ = corev1.ResourceCPU
