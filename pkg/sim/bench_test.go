package sim

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	tt "github.com/caldera-sh/caldera/apis/topology/v1alpha1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/config"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/podfit"
	"github.com/caldera-sh/caldera/pkg/scheduler/podfit/evaluatortest"
	"github.com/caldera-sh/caldera/pkg/scheduler/profile"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

const topologyBenchConfig = `actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
  - name: network-topology-aware
`

// BenchmarkTopologyGangStream places a stream of hard-topology gangs, one
// per cycle, on 5,000 nodes in a 3-tier tree (5 cores × 5 spines × 10
// leaves × 20 nodes of 8 GPUs): gangs of 64 and 128 one-GPU pods must fit a
// leaf, gangs of 256 a spine. It reports each size's placement latency
// (the cycle that places the gang) at p50 and p99, through the
// scheduler's cache and cycles with the full plugin set.
func BenchmarkTopologyGangStream(b *testing.B) {
	gangStream(b, 60, func(g int) (int, *schedulingv1beta1.PodGroup, []*corev1.Pod) {
		size := []int{64, 128, 256}[g%3]
		tier := int32(1)
		if size == 256 {
			tier = 2
		}
		name := fmt.Sprintf("g%02d", g)
		pg := schedtesting.MakePodGroup(name, "ns").MinMember(int32(size)).Phase(schedulingv1beta1.PodGroupInqueue).Obj()
		pg.Spec.NetworkTopology = &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.HardNetworkTopologyMode, HighestTierAllowed: &tier}
		var pods []*corev1.Pod
		for i := range size {
			pods = append(pods, st.MakePod("ns", fmt.Sprintf("%s-%03d", name, i)).Group(name).Req("cpu", "4", "memory", "16Gi", "nvidia.com/gpu", "1").Obj())
		}
		return size, pg, pods
	})
}

// BenchmarkSubGroupGangStream is BenchmarkTopologyGangStream for 256-pod
// gangs within a spine made of eight sub-groups of 32 pods, each within a
// leaf (a Job's partitions), all eight needed.
func BenchmarkSubGroupGangStream(b *testing.B) {
	gangStream(b, 20, func(g int) (int, *schedulingv1beta1.PodGroup, []*corev1.Pod) {
		const size, part = 256, 32
		name := fmt.Sprintf("g%02d", g)
		pg := schedtesting.MakePodGroup(name, "ns").MinMember(size).Phase(schedulingv1beta1.PodGroupInqueue).Obj()
		spine, leaf, subSize, minSub := int32(2), int32(1), int32(part), int32(size/part)
		pg.Spec.NetworkTopology = &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.HardNetworkTopologyMode, HighestTierAllowed: &spine}
		pg.Spec.SubGroupPolicy = []schedulingv1beta1.SubGroupPolicySpec{{
			Name:            "worker",
			NetworkTopology: &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.HardNetworkTopologyMode, HighestTierAllowed: &leaf},
			SubGroupSize:    &subSize, MinSubGroups: &minSub, MatchLabelKeys: []string{"volcano.sh/partition-id"},
		}}
		var pods []*corev1.Pod
		for i := range size {
			pods = append(pods, st.MakePod("ns", fmt.Sprintf("%s-%03d", name, i)).Group(name).
				Label("volcano.sh/partition-id", fmt.Sprint(i/part)).Req("cpu", "4", "memory", "16Gi", "nvidia.com/gpu", "1").Obj())
		}
		return size, pg, pods
	})
}

// gangStream adds gangs one per cycle to a fresh cluster of threeTiers and
// reports each gang size's placement latency (the cycle that places it) at
// p50 and p99.
func gangStream(b *testing.B, gangs int, gang func(g int) (int, *schedulingv1beta1.PodGroup, []*corev1.Pod)) {
	cfg, err := config.Load([]byte(topologyBenchConfig), profile.NameRegistry())
	if err != nil {
		b.Fatal(err)
	}
	prof, err := profile.Build(cfg, &framework.Handle{PodFit: evaluatortest.NewEvaluator(b)})
	if err != nil {
		b.Fatal(err)
	}
	var latencies map[int][]time.Duration
	b.StopTimer()
	for range b.N {
		c := New(Options{Actions: prof.Actions, Tiers: prof.Tiers, NewNodeMirror: podfit.NewNodeMirror, Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
			NodesToFind: framework.NodesToFind(0, 100)})
		nodes, hns := threeTiers()
		for _, n := range nodes {
			c.AddNode(n)
		}
		for _, hn := range hns {
			c.AddHyperNode(hn)
		}
		c.AddQueue(schedtesting.MakeQueue("default").Obj())
		c.Cycle(b.Context())
		latencies = map[int][]time.Duration{}
		for g := range gangs {
			size, pg, pods := gang(g)
			c.AddPodGroup(pg)
			for _, p := range pods {
				c.AddPod(p, 0)
			}
			before := c.Stats().Binds
			b.StartTimer()
			start := time.Now()
			c.Cycle(b.Context())
			took := time.Since(start)
			b.StopTimer()
			if got := c.Stats().Binds - before; got != size {
				b.Fatalf("gang %s: bound %d of %d pods", pg.Name, got, size)
			}
			latencies[size] = append(latencies[size], took)
		}
	}
	for _, size := range slices.Sorted(maps.Keys(latencies)) {
		l := latencies[size]
		slices.Sort(l)
		b.ReportMetric(float64(l[len(l)/2].Microseconds())/1000, fmt.Sprintf("p50-ms/gang-%d", size))
		b.ReportMetric(float64(l[len(l)*99/100].Microseconds())/1000, fmt.Sprintf("p99-ms/gang-%d", size))
	}
}

// threeTiers is 5,000 nodes of 64 CPUs and 8 GPUs under 250 leaves of 20,
// 25 spines of 10 leaves and 5 cores of 5 spines.
func threeTiers() ([]*corev1.Node, []*topologyv1alpha1.HyperNode) {
	var nodes []*corev1.Node
	var hns []*topologyv1alpha1.HyperNode
	for c := range 5 {
		core := tt.MakeHyperNode(fmt.Sprintf("core-%d", c), 3).TierName("core")
		for s := range 5 {
			spineName := fmt.Sprintf("spine-%d-%d", c, s)
			spine := tt.MakeHyperNode(spineName, 2).TierName("spine")
			for l := range 10 {
				leafName := fmt.Sprintf("leaf-%d-%d-%d", c, s, l)
				leaf := tt.MakeHyperNode(leafName, 1).TierName("leaf")
				for n := range 20 {
					name := fmt.Sprintf("n-%d-%d-%d-%02d", c, s, l, n)
					nodes = append(nodes, st.MakeNode(name).Alloc("cpu", "64", "memory", "512Gi", "nvidia.com/gpu", "8").Obj())
					leaf.ExactNode(name)
				}
				hns = append(hns, leaf.Obj())
				spine.ExactHyperNode(leafName)
			}
			hns = append(hns, spine.Obj())
			core.ExactHyperNode(spineName)
		}
		hns = append(hns, core.Obj())
	}
	return nodes, hns
}
