package binpack

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

func TestBinpackPrefersFullerNodes(t *testing.T) {
	snap := api.Build(api.Objects{
		Nodes: []*corev1.Node{
			st.MakeNode("empty").Alloc("cpu", "8", "memory", "32Gi", "nvidia.com/gpu", "8").Obj(),
			st.MakeNode("half").Alloc("cpu", "8", "memory", "32Gi", "nvidia.com/gpu", "8").Obj(),
			st.MakeNode("full").Alloc("cpu", "8", "memory", "32Gi", "nvidia.com/gpu", "8").Obj(),
		},
		Pods: []*corev1.Pod{
			st.MakePod("ns", "a").Req("cpu", "4", "memory", "16Gi", "nvidia.com/gpu", "4").Node("half").Phase(corev1.PodRunning).Obj(),
			st.MakePod("ns", "b").Req("cpu", "8", "memory", "32Gi", "nvidia.com/gpu", "8").Node("full").Phase(corev1.PodRunning).Obj(),
			st.MakePod("ns", "new").Req("cpu", "2", "memory", "8Gi", "nvidia.com/gpu", "2").Obj(),
		},
	})
	var task *api.TaskInfo
	for _, j := range snap.Jobs {
		for tk := range j.TasksIn(api.Pending) {
			task = tk
		}
	}
	gpuHeavy := int32(5)
	p, err := New(&configv1alpha1.BinpackArgs{Resources: map[corev1.ResourceName]int32{"nvidia.com/gpu": gpuHeavy}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	scores := make([]float64, len(snap.NodeList))
	p.(*Plugin).ScoreNodes(task, snap.NodeList, scores)
	byName := map[string]float64{}
	for i, n := range snap.NodeList {
		byName[n.Name] = scores[i]
	}
	if byName["full"] != 0 {
		t.Errorf("a node the task does not fit scores %v, want 0", byName["full"])
	}
	if !(byName["half"] > byName["empty"]) {
		t.Errorf("half-full node scores %v, not above the empty node's %v", byName["half"], byName["empty"])
	}
	// cpu, memory and gpu all reach 6/8 on "half": the weighted mean is 75.
	if got := byName["half"]; got != 75 {
		t.Errorf("half-full node scores %v, want 75", got)
	}
}

func TestBinpackRejectsBadArguments(t *testing.T) {
	negative := int32(-1)
	if _, err := New(&configv1alpha1.BinpackArgs{CPU: &negative}, nil); err == nil {
		t.Errorf("a negative weight was accepted")
	}
	if _, err := New(&configv1alpha1.OvercommitArgs{}, nil); err == nil {
		t.Errorf("arguments of another plugin were accepted")
	}
}
