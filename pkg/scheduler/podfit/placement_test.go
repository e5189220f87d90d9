package podfit

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// The scheduler places a gang's pods one after another in a cycle, on the
// same NodeInfos; each placement must change what the next pod may do.
func TestPlacementsChangeTheNextPod(t *testing.T) {
	twoZones := func() []*corev1.Node {
		return []*corev1.Node{
			st.MakeNode("a1").Zone("a").Alloc("cpu", "8", "memory", "8Gi").Obj(),
			st.MakeNode("a2").Zone("a").Alloc("cpu", "8", "memory", "8Gi").Obj(),
			st.MakeNode("b1").Zone("b").Alloc("cpu", "8", "memory", "8Gi").Obj(),
		}
	}
	member := func(i int) *st.PodWrapper {
		return st.MakePod(ns, fmt.Sprintf("gang-%d", i)).Label("app", "gang").Req("cpu", "1")
	}
	cases := map[string]struct {
		pod func(i int) *corev1.Pod
		// place is where pod i goes before pod i+1 is evaluated.
		place []string
		// want is the feasible set of each pod.
		want [][]string
	}{
		"anti-affinity by host: one per node": {
			pod:   func(i int) *corev1.Pod { return member(i).PodAntiAffinity(hostKey, "app", "gang").Obj() },
			place: []string{"a1", "b1", "a2"},
			want:  [][]string{{"a1", "a2", "b1"}, {"a2", "b1"}, {"a2"}, nil},
		},
		"spread by zone with skew 1": {
			pod: func(i int) *corev1.Pod {
				return member(i).Spread(1, zoneKey, corev1.DoNotSchedule, "app", "gang").Obj()
			},
			place: []string{"a1", "b1", "b1"},
			want:  [][]string{{"a1", "a2", "b1"}, {"b1"}, {"a1", "a2", "b1"}, {"a1", "a2"}},
		},
		"resources run out": {
			pod:   func(i int) *corev1.Pod { return st.MakePod(ns, fmt.Sprintf("big-%d", i)).Req("cpu", "5").Obj() },
			place: []string{"a1", "a2", "b1"},
			want:  [][]string{{"a1", "a2", "b1"}, {"a2", "b1"}, {"b1"}, nil},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e, _ := newTestEvaluator(t)
			nodes := nodeInfos(twoZones(), nil)
			e.SetNodes(nodes)
			var got [][]string
			for i := range tc.want {
				pod := tc.pod(i)
				fit, _ := e.Feasible(t.Context(), pod)
				got = append(got, fit)
				if i < len(tc.place) {
					place(nodeByName(nodes, tc.place[i]), pod, api.Allocated)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("feasible nodes of each pod (-want,+got):\n%s", diff)
			}
		})
	}
}

// Removing a placement (a discarded gang) frees what it took.
func TestRemovedPlacementIsForgotten(t *testing.T) {
	e, _ := newTestEvaluator(t)
	nodes := nodeInfos([]*corev1.Node{
		st.MakeNode("a").Alloc("cpu", "4").Obj(),
		st.MakeNode("b").Alloc("cpu", "4").Obj(),
	}, nil)
	e.SetNodes(nodes)
	pod := func(name string) *corev1.Pod {
		return st.MakePod(ns, name).Label("app", "g").PodAntiAffinity(hostKey, "app", "g").Obj()
	}
	first := place(nodes[0], pod("first"), api.Allocated)
	if got, _ := e.Feasible(t.Context(), pod("second")); !cmp.Equal(got, []string{"b"}) {
		t.Fatalf("with first on a: feasible = %v, want [b]", got)
	}
	nodes[0].RemoveTask(klog.FromContext(t.Context()), first)
	if got, _ := e.Feasible(t.Context(), pod("second")); !cmp.Equal(got, []string{"a", "b"}) {
		t.Errorf("after removing first: feasible = %v, want [a b]", got)
	}
}
