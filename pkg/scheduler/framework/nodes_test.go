package framework

import (
	"fmt"
	"strings"
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

// TestCandidatesKeepToTheShard: fenced nodes (outside a hard shard) are
// never candidates and say why; secondary nodes (outside a soft shard) are
// candidates only when no node of the shard fits.
func TestCandidatesKeepToTheShard(t *testing.T) {
	var nodes []*corev1.Node
	for i := range 6 {
		nodes = append(nodes, st.MakeNode(fmt.Sprintf("n%d", i)).Alloc("cpu", "4").Obj())
	}
	small := st.MakePod("ns", "small").Req("cpu", "1").Obj()
	// Only n4 and n5 have room for big: n0 to n3 run a 2-CPU pod each.
	big := st.MakePod("ns", "big").Req("cpu", "3").Obj()
	pods := []*corev1.Pod{small, big}
	for i := range 4 {
		pods = append(pods, st.MakePod("ns", fmt.Sprintf("run%d", i)).Req("cpu", "2").Node(fmt.Sprintf("n%d", i)).Phase(corev1.PodRunning).Obj())
	}
	names := func(ns []*api.NodeInfo) []string {
		var out []string
		for _, n := range ns {
			out = append(out, n.Name)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		// fence marks n2..n5 outside the shard.
		hard, soft        bool
		wantSmall         []string
		wantBig           []string
		wantBigRejections string
	}{
		{name: "no shard", wantSmall: []string{"n0", "n1", "n2", "n3", "n4", "n5"}, wantBig: []string{"n4", "n5"}},
		{name: "hard: only the shard's nodes", hard: true, wantSmall: []string{"n0", "n1"},
			wantBigRejections: "0/6 nodes are available: 4 nodes outside this scheduler's NodeShard, 2 nodes Insufficient cpu"},
		{name: "soft: the shard first, the others when none of it fits", soft: true,
			wantSmall: []string{"n0", "n1"}, wantBig: []string{"n4", "n5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := api.Build(api.Objects{Nodes: nodes, Pods: pods})
			for _, n := range snap.NodeList {
				if n.Name >= "n2" {
					n.SetFenced(tc.hard, tc.soft)
				}
			}
			ssn := OpenSession(t.Context(), snap, nil, Options{})
			for _, c := range []struct {
				pod        *corev1.Pod
				want       []string
				rejections string
			}{{small, tc.wantSmall, ""}, {big, tc.wantBig, tc.wantBigRejections}} {
				task := snap.Jobs[api.JobIDOfPod(c.pod)].Tasks[c.pod.UID]
				fits, _, errs := ssn.Candidates(task)
				if got := names(fits); fmt.Sprint(got) != fmt.Sprint(c.want) {
					t.Errorf("%s: candidates %v, want %v", c.pod.Name, got, c.want)
				}
				if c.rejections != "" && !strings.Contains(errs.String(), c.rejections) {
					t.Errorf("%s: rejections %q, want them to say %q", c.pod.Name, errs.String(), c.rejections)
				}
			}
		})
	}
}
