package podfit

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// benchCluster is the cluster of the brief's worst case: 5,000 nodes in 50
// zones, four running pods per node (one in ten with a required
// anti-affinity of its own), and a gang of 50 whose first 25 members are
// already placed, one per zone.
type benchCluster struct {
	nodes, zones, podsPerNode, placedGang int
}

var bench5k = benchCluster{nodes: 5000, zones: 50, podsPerNode: 4, placedGang: 25}

func (c benchCluster) build() []*api.NodeInfo {
	var nodes []*corev1.Node
	var pods []*corev1.Pod
	for i := range c.nodes {
		name := fmt.Sprintf("node-%04d", i)
		nodes = append(nodes, st.MakeNode(name).Zone(fmt.Sprintf("zone-%02d", i%c.zones)).
			Alloc("cpu", "64", "memory", "256Gi", gpu, "8").Obj())
		for j := range c.podsPerNode {
			p := st.MakePod(ns, fmt.Sprintf("%s-%d", name, j)).Label("app", fmt.Sprintf("svc-%d", (i+j)%20)).
				Req("cpu", "2", "memory", "4Gi").Node(name).Phase(corev1.PodRunning)
			if j == 0 && i%10 == 0 {
				p.PodAntiAffinity(hostKey, "app", "noisy")
			}
			pods = append(pods, p.Obj())
		}
	}
	for i := range c.placedGang {
		pods = append(pods, gangMember(i).Node(fmt.Sprintf("node-%04d", i)).Phase(corev1.PodRunning).Obj())
	}
	return nodeInfos(nodes, pods)
}

func gangMember(i int) *st.PodWrapper {
	return st.MakePod(ns, fmt.Sprintf("gang-%d", i)).Label("app", "gang").Req("cpu", "4", "memory", "8Gi", gpu, "1")
}

var benchPods = map[string]func(i int) *corev1.Pod{
	"plain-cpu": func(i int) *corev1.Pod {
		return st.MakePod(ns, fmt.Sprintf("cpu-%d", i)).Req("cpu", "4", "memory", "8Gi").Obj()
	},
	"plain": func(i int) *corev1.Pod {
		return st.MakePod(ns, fmt.Sprintf("plain-%d", i)).Req("cpu", "4", "memory", "8Gi", gpu, "1").Obj()
	},
	"anti-affinity+spread": func(i int) *corev1.Pod {
		return gangMember(i).PodAntiAffinity(hostKey, "app", "gang").Spread(1, zoneKey, corev1.DoNotSchedule, "app", "gang").Obj()
	},
}

// BenchmarkFilter measures one Filter call (one pod, one node), cycling
// over the 5,000 nodes; a gang of 50 on 5,000 nodes makes up to 250,000.
// "plain" asks for a GPU as well as cpu and memory; "plain-cpu" does not.
func BenchmarkFilter(b *testing.B) {
	for _, kind := range []string{"plain-cpu", "plain", "anti-affinity+spread"} {
		b.Run(kind, func(b *testing.B) {
			e, _ := newTestEvaluator(b)
			nodes := bench5k.build()
			e.SetNodes(nodes)
			s, status := e.PreFilter(b.Context(), benchPods[kind](bench5k.placedGang), nil)
			if status != nil {
				b.Fatal(status)
			}
			ctx := b.Context()
			fit := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if e.Filter(ctx, s, nodes[i%len(nodes)]) == nil {
					fit++
				}
			}
			if fit == 0 {
				b.Fatal("the pod fits no node")
			}
		})
	}
}

// BenchmarkPreFilter measures one PreFilter over the 5,000 nodes.
func BenchmarkPreFilter(b *testing.B) {
	for _, kind := range []string{"plain-cpu", "plain", "anti-affinity+spread"} {
		b.Run(kind, func(b *testing.B) {
			e, _ := newTestEvaluator(b)
			e.SetNodes(bench5k.build())
			pod := benchPods[kind](bench5k.placedGang)
			ctx := b.Context()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, status := e.PreFilter(ctx, pod, nil); status != nil {
					b.Fatal(status)
				}
			}
		})
	}
}

// BenchmarkGangCycle places the 25 remaining members of the gang one after
// another, as the allocate action does: PreFilter, Filter over every node,
// Score over the feasible ones, place on the best; then undoes the
// placements.
func BenchmarkGangCycle(b *testing.B) {
	e, _ := newTestEvaluator(b)
	nodes := bench5k.build()
	e.SetNodes(nodes)
	ctx := b.Context()
	logger := klog.FromContext(ctx)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		type placed struct {
			node *api.NodeInfo
			task *api.TaskInfo
		}
		var done []placed
		for i := bench5k.placedGang; i < 50; i++ {
			pod := benchPods["anti-affinity+spread"](i)
			s, status := e.PreFilter(ctx, pod, nil)
			if status != nil {
				b.Fatal(status)
			}
			var feasible []*api.NodeInfo
			for _, n := range nodes {
				if e.Filter(ctx, s, n) == nil {
					feasible = append(feasible, n)
				}
			}
			scores, err := e.Score(ctx, s, feasible)
			if err != nil {
				b.Fatal(err)
			}
			best := 0
			for j := range scores {
				if scores[j] > scores[best] {
					best = j
				}
			}
			done = append(done, placed{feasible[best], place(feasible[best], pod, api.Allocated)})
		}
		for _, p := range done {
			p.node.RemoveTask(logger, p.task)
		}
	}
}

// BenchmarkSignature measures signing one pod of a backlog of alike pods:
// every pending pod is signed once per cycle that looks at it.
func BenchmarkSignature(b *testing.B) {
	e, _ := newTestEvaluator(b)
	e.SetNodes(bench5k.build())
	pods := make([]*corev1.Pod, 1000)
	for i := range pods {
		pods[i] = benchPods["plain-cpu"](i)
	}
	ctx := b.Context()
	if sig, ok := e.Signature(ctx, pods[0]); !ok {
		b.Fatal("the pod is not signed")
	} else {
		b.Logf("signature: %s", sig)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, ok := e.Signature(ctx, pods[i%len(pods)]); !ok {
			b.Fatal("the pod is not signed")
		}
	}
}
