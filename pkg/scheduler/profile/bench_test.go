package profile

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/config"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/podfit"
	"github.com/caldera-sh/caldera/pkg/scheduler/podfit/evaluatortest"
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
	prof, err := Build(cfg, &framework.Handle{PodFit: evaluatortest.NewEvaluator(b)})
	if err != nil {
		b.Fatal(err)
	}
	for _, nodes := range []int{5000, 10000} {
		b.Run(fmt.Sprintf("nodes=%d/gangs=200x50", nodes), func(b *testing.B) {
			objects := api.Objects{Queues: []*schedulingv1beta1.Queue{schedtesting.MakeQueue("default").Obj()}, NewNodeMirror: podfit.NewNodeMirror}
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

// BenchmarkPreemptReclaimCycle measures one cycle of preempt and reclaim
// with the full plugin set (kube-scheduler's filters included) on 5,000
// nodes of 32 CPUs running 50,000 pods: queue team-b (deserving half) has
// borrowed team-a's idle half and holds 70% of the cluster. team-a then
// submits 20 gangs of 10 four-CPU pods, which reclaim from team-b, and
// team-b submits 10 high-priority gangs of 5, which preempt its own
// low-priority pods. Each node has 2 CPUs free, so every pending pod needs
// a victim. The snapshot is rebuilt outside the timer.
func BenchmarkPreemptReclaimCycle(b *testing.B) {
	cfg, err := config.Load([]byte(`actions: "preempt, reclaim"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
  - name: cdp
- plugins:
  - name: drf
  - name: predicates
  - name: capacity
  - name: nodeorder
  - name: binpack
`), NameRegistry())
	if err != nil {
		b.Fatal(err)
	}
	prof, err := Build(cfg, &framework.Handle{PodFit: evaluatortest.NewEvaluator(b)})
	if err != nil {
		b.Fatal(err)
	}
	const nodes, perNode = 5000, 10
	half := fmt.Sprint(nodes * 32 / 2)
	objects := api.Objects{
		NewNodeMirror: podfit.NewNodeMirror,
		Queues: []*schedulingv1beta1.Queue{
			schedtesting.MakeQueue("team-a").Deserved(schedtesting.Resources("cpu", half)).Obj(),
			schedtesting.MakeQueue("team-b").Deserved(schedtesting.Resources("cpu", half)).Obj(),
		},
		PriorityOf: func(class string) int32 { return map[string]int32{"low": 10, "high": 1000}[class] },
	}
	for i := range nodes {
		objects.Nodes = append(objects.Nodes, st.MakeNode(fmt.Sprintf("n%05d", i)).Alloc("cpu", "32", "memory", "256Gi").Obj())
	}
	// 5,000 running jobs of 10 pods, one pod per node, minMember 1: 70% in
	// team-b, at low priority.
	for j := range nodes {
		name := fmt.Sprintf("run%05d", j)
		queue := "team-b"
		if j%10 < 3 {
			queue = "team-a"
		}
		objects.PodGroups = append(objects.PodGroups, schedtesting.MakePodGroup(name, "ns").Queue(queue).MinMember(1).
			PriorityClassName("low").Phase(schedulingv1beta1.PodGroupRunning).Obj())
		for k := range perNode {
			node := fmt.Sprintf("n%05d", (j+k*nodes/perNode)%nodes)
			objects.Pods = append(objects.Pods, st.MakePod("ns", fmt.Sprintf("%s-%d", name, k)).Group(name).
				Req("cpu", "3", "memory", "8Gi").Priority(10).Node(node).Phase(corev1.PodRunning).Obj())
		}
	}
	submit := func(prefix, queue, class string, prio int32, gangs, size int) {
		for g := range gangs {
			name := fmt.Sprintf("%s%02d", prefix, g)
			objects.PodGroups = append(objects.PodGroups, schedtesting.MakePodGroup(name, "ns").Queue(queue).MinMember(int32(size)).
				PriorityClassName(class).Phase(schedulingv1beta1.PodGroupInqueue).Obj())
			for k := range size {
				objects.Pods = append(objects.Pods, st.MakePod("ns", fmt.Sprintf("%s-%d", name, k)).Group(name).
					Req("cpu", "4", "memory", "8Gi").Priority(prio).Obj())
			}
		}
	}
	submit("reclaim", "team-a", "low", 10, 20, 10)
	submit("preempt", "team-b", "high", 1000, 10, 5)

	b.ReportAllocs()
	var evictions, pipelined int
	for b.Loop() {
		b.StopTimer()
		snap := api.Build(objects)
		d := &decisions{}
		b.StartTimer()
		ssn := framework.OpenSession(b.Context(), snap, prof.Tiers, framework.Options{
			Sink: d, Evictor: d, Nominator: d, NodesToFind: framework.NodesToFind(0, 100),
		})
		for _, a := range prof.Actions {
			a.Execute(ssn)
		}
		ssn.Close()
		b.StopTimer()
		evictions, pipelined = len(d.Evictions), len(d.Nominations)
		if pipelined != 20*10+10*5 {
			b.Fatalf("%d pods nominated, want every pending pod (%d); %d evictions", pipelined, 20*10+10*5, evictions)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(evictions), "evictions/cycle")
}
