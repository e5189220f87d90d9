package api_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/api/apitest"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// mirrored lists the names of the pods a node's mirror holds, sorted.
func mirrored(n *api.NodeInfo) []string {
	var names []string
	for _, p := range apitest.MirrorOf(n).Pods {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}

// TestMirrorFollowsTasks: a node's mirror holds exactly the pods holding
// resources on it (not pipelined ones, which wait for room), follows
// removals and node updates, is copied with the node, and is filled with
// the node's tasks when set late.
func TestMirrorFollowsTasks(t *testing.T) {
	node := st.MakeNode("n").Alloc("cpu", "8").Obj()
	n := api.NewNodeInfo(node)
	n.SetMirror(apitest.NewMirror())
	task := func(name string, status api.TaskStatus) *api.TaskInfo {
		tk := api.NewTaskInfo(st.MakePod("ns", name).Req("cpu", "1").Node("n").Phase(corev1.PodRunning).Obj(), "ns/j")
		tk.Status = status
		return tk
	}
	running, pipelined, releasing := task("running", api.Running), task("pipelined", api.Pipelined), task("releasing", api.Releasing)
	for _, tk := range []*api.TaskInfo{running, pipelined, releasing} {
		n.AddTask(tk)
	}
	if diff := cmp.Diff([]string{"releasing", "running"}, mirrored(n)); diff != "" {
		t.Errorf("mirror after placing (-want +got):\n%s", diff)
	}

	clone := n.Clone()
	n.RemoveTask(klog.Background(), running)
	if diff := cmp.Diff([]string{"releasing"}, mirrored(n)); diff != "" {
		t.Errorf("mirror after removing running (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"releasing", "running"}, mirrored(clone)); diff != "" {
		t.Errorf("clone's mirror changed with the original's (-want +got):\n%s", diff)
	}

	cordoned := node.DeepCopy()
	cordoned.Spec.Unschedulable = true
	n.SetNode(cordoned)
	if got := apitest.MirrorOf(n).Node; got != cordoned {
		t.Errorf("mirror's node = %v, want the updated node", got)
	}

	late := api.NewNodeInfo(node)
	late.AddTask(task("bound", api.Bound))
	late.AddTask(task("waiting", api.Pipelined))
	late.SetMirror(apitest.NewMirror())
	if diff := cmp.Diff([]string{"bound"}, mirrored(late)); diff != "" {
		t.Errorf("mirror set after placing (-want +got):\n%s", diff)
	}
	if got := apitest.MirrorOf(late).Node; got != node {
		t.Errorf("late mirror's node = %v, want %v", got, node)
	}

	built := api.Build(api.Objects{
		Nodes:         []*corev1.Node{node},
		Pods:          []*corev1.Pod{st.MakePod("ns", "p").Req("cpu", "1").Node("n").Phase(corev1.PodRunning).Obj()},
		NewNodeMirror: apitest.NewMirror,
	})
	if diff := cmp.Diff([]string{"p"}, mirrored(built.Nodes["n"])); diff != "" {
		t.Errorf("built node's mirror (-want +got):\n%s", diff)
	}
}
