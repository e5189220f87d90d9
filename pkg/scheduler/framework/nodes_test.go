package framework

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

func TestNodesToFind(t *testing.T) {
	cases := map[string]struct {
		percentage, min, total, want int
	}{
		"small cluster: every node":     {0, 100, 80, 80},
		"adaptive at 1000 nodes: 42%":   {0, 100, 1000, 420},
		"adaptive at 5000 nodes: 10%":   {0, 100, 5000, 500},
		"adaptive floor at 10000: 5%":   {0, 100, 10000, 500},
		"fixed share":                   {20, 100, 1000, 200},
		"fixed share below the minimum": {5, 100, 1000, 100},
		"every node":                    {100, 100, 5000, 5000},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := NodesToFind(tc.percentage, tc.min)(tc.total); got != tc.want {
				t.Errorf("NodesToFind(%d, %d)(%d) = %d, want %d", tc.percentage, tc.min, tc.total, got, tc.want)
			}
		})
	}
}

func TestCandidatesStopEarlyAndRotate(t *testing.T) {
	var nodes []*corev1.Node
	for i := range 300 {
		nodes = append(nodes, st.MakeNode(fmt.Sprintf("n%03d", i)).Alloc("cpu", "4").Obj())
	}
	snap := api.Build(api.Objects{Nodes: nodes, Pods: []*corev1.Pod{st.MakePod("ns", "p").Req("cpu", "1").Obj()}})
	var task *api.TaskInfo
	for _, j := range snap.Jobs {
		for _, tk := range j.Tasks {
			task = tk
		}
	}
	ssn := OpenSession(t.Context(), snap, nil, Options{NodesToFind: func(int) int { return 100 }, StartNode: 250})
	fits, _, _ := ssn.Candidates(task)
	if len(fits) != 100 || fits[0].Name != "n250" || fits[99].Name != "n049" {
		t.Fatalf("first search: %d fits from %s to %s, want 100 from n250 to n049", len(fits), fits[0].Name, fits[len(fits)-1].Name)
	}
	fits, _, _ = ssn.Candidates(task)
	if fits[0].Name != "n050" {
		t.Errorf("second search starts at %s, want n050", fits[0].Name)
	}
	if got := ssn.NextStartNode(); got != 150 {
		t.Errorf("next start = %d, want 150", got)
	}
}
