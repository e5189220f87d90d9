package profile

import (
	"fmt"
	"testing"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/apis/config"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

type countingSink struct{ n int }

func (c *countingSink) Bind(*api.TaskInfo, string) { c.n++ }

// BenchmarkCycleWithPodFit measures one scheduling cycle (enqueue and
// allocate) with the default plugins, kube-scheduler's filters and scores
// included, and kube-scheduler's node sampling: 200 gangs of 50 pods (1
// CPU each) on clusters of 32-CPU nodes. The snapshot is rebuilt outside
// the timer.
func BenchmarkCycleWithPodFit(b *testing.B) {
	cfg, err := config.Load([]byte(`actions: "enqueue, allocate"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
`), NameRegistry())
	if err != nil {
		b.Fatal(err)
	}
	prof, err := Build(cfg, &framework.Handle{PodFit: newEvaluator(b)})
	if err != nil {
		b.Fatal(err)
	}
	for _, nodes := range []int{5000, 10000} {
		b.Run(fmt.Sprintf("nodes=%d/gangs=200x50", nodes), func(b *testing.B) {
			objects := api.Objects{Queues: []*schedulingv1beta1.Queue{schedtesting.MakeQueue("default").Obj()}}
			for i := range nodes {
				objects.Nodes = append(objects.Nodes, st.MakeNode(fmt.Sprintf("n%05d", i)).Alloc("cpu", "32", "memory", "256Gi").Obj())
			}
			for g := range 200 {
				name := fmt.Sprintf("g%03d", g)
				objects.PodGroups = append(objects.PodGroups,
					schedtesting.MakePodGroup(name, "ns").MinMember(50).Obj())
				for i := range 50 {
					p := st.MakePod("ns", fmt.Sprintf("%s-%02d", name, i)).Group(name).Req("cpu", "1", "memory", "1Gi").Obj()
					p.Labels = map[string]string{"job": name}
					objects.Pods = append(objects.Pods, p)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				snap := api.Build(objects)
				sink := &countingSink{}
				b.StartTimer()
				ssn := framework.OpenSession(b.Context(), snap, prof.Tiers, framework.Options{
					Sink: sink, NodesToFind: framework.NodesToFind(0, 100),
				})
				for _, a := range prof.Actions {
					a.Execute(ssn)
				}
				ssn.Close()
				b.StopTimer()
				if sink.n != 200*50 {
					b.Fatalf("bound %d pods, want %d", sink.n, 200*50)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(200*50)*float64(b.N)/b.Elapsed().Seconds(), "pods/s")
		})
	}
}
