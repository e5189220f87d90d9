package api

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

func gpuPod(name string, req corev1.ResourceName, qty, cards string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: apitypes.UID("uid-" + name)},
		Spec: corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{req: resource.MustParse(qty)},
		}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if cards != "" {
		p.Annotations = map[string]string{GPUIndexAnnotation: cards}
	}
	return p
}

func TestNodeCardsFollowTheirTasks(t *testing.T) {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n"},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			ResourceGPUNumber: resource.MustParse("4"), ResourceGPUMemory: resource.MustParse("64000"),
		}},
	}
	n := NewNodeInfo(node)
	share := NewTaskInfo(gpuPod("share", ResourceGPUMemory, "6000", "1"), "j")
	whole := NewTaskInfo(gpuPod("whole", ResourceGPUNumber, "2", "2,3"), "j")
	unannotated := NewTaskInfo(gpuPod("none", ResourceGPUMemory, "1000", ""), "j")
	n.AddTask(share)
	n.AddTask(whole)
	n.AddTask(unannotated)
	want := []GPUDevice{{Memory: 16000}, {Memory: 16000, Used: 6000, Tasks: 1}, {Memory: 16000, Used: 16000, Tasks: 1}, {Memory: 16000, Used: 16000, Tasks: 1}}
	if diff := cmp.Diff(want, n.GPUs); diff != "" {
		t.Fatalf("cards (-want,+got):\n%s", diff)
	}
	c := n.Clone()

	// Card 0 turns unhealthy: the layout is rebuilt, the holds kept.
	sick := node.DeepCopy()
	sick.Annotations = map[string]string{GPUUnhealthyAnnotation: "0"}
	n.SetNode(sick)
	want[0].Memory = 0
	if diff := cmp.Diff(want, n.GPUs); diff != "" {
		t.Fatalf("cards after card 0 fell ill (-want,+got):\n%s", diff)
	}
	n.RemoveTask(klog.Background(), whole)
	want[2], want[3] = GPUDevice{Memory: 16000}, GPUDevice{Memory: 16000}
	if diff := cmp.Diff(want, n.GPUs); diff != "" {
		t.Fatalf("cards after the whole-card task left (-want,+got):\n%s", diff)
	}
	if c.GPUs[0].Memory != 16000 || c.GPUs[2].Tasks != 1 {
		t.Errorf("the clone changed with the node: %+v", c.GPUs)
	}
}

func TestParseGPUIndex(t *testing.T) {
	got, err := ParseGPUIndex("0, 3")
	if err != nil || !cmp.Equal(got, []int{0, 3}) || FormatGPUIndex(got) != "0,3" {
		t.Errorf("ParseGPUIndex(\"0, 3\") = %v, %v", got, err)
	}
	if _, err := ParseGPUIndex("0,x"); err == nil {
		t.Errorf("ParseGPUIndex(\"0,x\") = nil error")
	}
}
