package podfit

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

func TestScore(t *testing.T) {
	node := func(name string) *st.NodeWrapper {
		return st.MakeNode(name).Zone("z").Alloc("cpu", "10", "memory", "10Gi")
	}
	cases := map[string]struct {
		nodes []*corev1.Node
		pods  []*corev1.Pod
		pod   *corev1.Pod
		// want is the nodes from best to worst, with their scores.
		want []nodeScore
	}{
		// kube-scheduler 1.37 scores the change in balance the pod makes:
		// 50 + (50 + after - before)/2, where a node's balance is
		// 100 x (1 - |cpu% - memory%|/2). Both nodes end at 60% and 40%
		// (so LeastAllocated ties at 50), but the pod evens out "lopsided"
		// (80 -> 90: 80) and unbalances "even" (100 -> 90: 70).
		// TaintToleration adds 300 (3 x 100, nothing to tolerate).
		"the node the pod balances ranks higher": {
			nodes: []*corev1.Node{node("even").Obj(), node("lopsided").Obj()},
			pods: []*corev1.Pod{
				st.MakePod(ns, "x").Req("cpu", "3", "memory", "3Gi").Node("even").Phase(corev1.PodRunning).Obj(),
				st.MakePod(ns, "y").Req("cpu", "5", "memory", "1Gi").Node("lopsided").Phase(corev1.PodRunning).Obj(),
			},
			pod:  st.MakePod(ns, "p").Req("cpu", "1", "memory", "3Gi").Obj(),
			want: []nodeScore{{"lopsided", 430}, {"even", 420}},
		},
		// LeastAllocated: 90 when idle, 30 next to x; balance unchanged: 75.
		"emptier node ranks higher": {
			nodes: []*corev1.Node{node("busy").Obj(), node("idle").Obj()},
			pods: []*corev1.Pod{
				st.MakePod(ns, "x").Req("cpu", "6", "memory", "6Gi").Node("busy").Phase(corev1.PodRunning).Obj(),
			},
			pod:  st.MakePod(ns, "p").Req("cpu", "1", "memory", "1Gi").Obj(),
			want: []nodeScore{{"idle", 465}, {"busy", 405}},
		},
		"preferred node affinity": {
			nodes: []*corev1.Node{node("plain").Obj(), node("fast").Label("disk", "ssd").Obj()},
			pod:   st.MakePod(ns, "p").PreferredNodeAffinityIn(10, "disk", "ssd").Obj(),
			// NodeAffinity normalises to 100 on the preferred node, weight 2;
			// LeastAllocated counts the pod as 100m cpu and 200Mi: 98.
			want: []nodeScore{{"fast", 598}, {"plain", 398}},
		},
		"preferred anti-affinity": {
			nodes: []*corev1.Node{node("crowded").Obj(), node("free").Obj()},
			pods: []*corev1.Pod{
				st.MakePod(ns, "x").Label("app", "a").Node("crowded").Phase(corev1.PodRunning).Obj(),
			},
			pod: st.MakePod(ns, "p").PreferredPodAntiAffinity(10, hostKey, "app", "a").Obj(),
			// InterPodAffinity normalises to 100 and 0, weight 2.
			want: []nodeScore{{"free", 598}, {"crowded", 397}},
		},
		"image already present": {
			nodes: []*corev1.Node{node("cold").Obj(), node("warm").Image("registry/big:1", 900<<20).Obj()},
			pod:   st.MakePod(ns, "p").Image("registry/big:1").Obj(),
		},
	}
	// Scores are the same whether the framework scores nodes on its
	// goroutines or the evaluator scores them one by one.
	for name, tc := range cases {
		for _, parallelism := range []int{0, 1} {
			t.Run(fmt.Sprintf("%s/parallelism=%d", name, parallelism), func(t *testing.T) {
				e, _ := newTestEvaluatorWith(t, Options{Parallelism: parallelism})
				nodes := nodeInfos(tc.nodes, tc.pods)
				e.SetNodes(nodes)
				s, status := e.PreFilter(t.Context(), tc.pod, nil)
				if status != nil {
					t.Fatalf("PreFilter: %v", status)
				}
				scores, err := e.Score(t.Context(), s, nodes)
				if err != nil {
					t.Fatal(err)
				}
				got := rank(nodes, scores)
				if tc.want == nil {
					// Only the order is asserted.
					if got[0].Node != "warm" || got[0].Score <= got[1].Score {
						t.Errorf("ranking = %v, want warm strictly first", got)
					}
					return
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("ranking (-want,+got):\n%s", diff)
				}
			})
		}
	}
}

type nodeScore struct {
	Node  string
	Score int64
}

func rank(nodes []*api.NodeInfo, scores []int64) []nodeScore {
	out := make([]nodeScore, len(nodes))
	for i, n := range nodes {
		out[i] = nodeScore{n.Name, scores[i]}
	}
	slices.SortStableFunc(out, func(a, b nodeScore) int { return int(b.Score - a.Score) })
	return out
}
