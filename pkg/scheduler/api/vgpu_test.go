package api

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/caldera-sh/caldera/pkg/devices/vgpu"
)

func vgpuNode(register string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{vgpu.RegisterAnnotation: register}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			vgpu.ResourceNumber: resource.MustParse("20"), vgpu.ResourceMemory: resource.MustParse("32000"), vgpu.ResourceCores: resource.MustParse("200"),
		}},
	}
}

// vgpuPod is a pod whose containers ask for vGPUs as limits (each entry
// "number,memory,cores"; "" for a container that asks for none), bound
// and holding ids when ids is set.
func vgpuPod(name, ids string, containers ...[3]string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: apitypes.UID("uid-" + name)}}
	for _, c := range containers {
		lim := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		for i, r := range []corev1.ResourceName{vgpu.ResourceNumber, vgpu.ResourceMemory, vgpu.ResourceCores} {
			if c[i] != "" {
				lim[r] = resource.MustParse(c[i])
			}
		}
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Resources: corev1.ResourceRequirements{Limits: lim}})
	}
	if ids != "" {
		p.Spec.NodeName, p.Status.Phase = "n", corev1.PodRunning
		p.Annotations = map[string]string{vgpu.IDsAnnotation: ids}
	}
	return p
}

func TestNodeVGPUsFollowTheirTasks(t *testing.T) {
	const reg = "GPU-a,10,16000,NVIDIA-T4,true,hami-core:GPU-b,10,16000,NVIDIA-T4,true,hami-core:"
	n := NewNodeInfo(vgpuNode(reg))
	if len(n.VGPUs) != 2 || n.VGPUs[1].UUID != "GPU-b" || n.VGPUs[0].MemoryMiB != 16000 {
		t.Fatalf("cards %+v", n.VGPUs)
	}
	// The first container asks for none; the second for two shares.
	task := NewTaskInfo(vgpuPod("p", "GPU-a,NVIDIA,4000,30:GPU-b,NVIDIA,4000,30:", [3]string{}, [3]string{"2", "4000", "30"}), "j")
	if want := []vgpu.Request{{}, {Number: 2, MemoryMiB: 4000, Cores: 30}}; !cmp.Equal(want, task.VGPU) {
		t.Fatalf("requests %+v, want %+v", task.VGPU, want)
	}
	if task.VGPUDevices[0] != nil || len(task.VGPUDevices[1]) != 2 {
		t.Fatalf("devices %+v, want the second container's two", task.VGPUDevices)
	}
	n.AddTask(task)
	for _, c := range n.VGPUs {
		if c.UsedShares != 1 || c.UsedMemoryMiB != 4000 || c.UsedCores != 30 {
			t.Errorf("card %s holds %+v, want one share of 4000 MiB and 30%%", c.UUID, c)
		}
	}
	clone := n.Clone()
	n.RemoveTask(klog.Background(), task)
	if n.VGPUs[0].UsedShares != 0 || clone.VGPUs[0].UsedShares != 1 {
		t.Errorf("after the task left: node %+v, clone %+v", n.VGPUs[0], clone.VGPUs[0])
	}

	for name, node := range map[string]*corev1.Node{
		"no registration":       vgpuNode(""),
		"a registration unread": vgpuNode("GPU-a,ten,1,NVIDIA-T4,true,hami-core:"),
		"no vGPU resources": func() *corev1.Node {
			n := vgpuNode(reg)
			delete(n.Status.Allocatable, vgpu.ResourceCores)
			return n
		}(),
	} {
		if got := NewNodeInfo(node).VGPUs; got != nil {
			t.Errorf("%s: cards %+v, want none", name, got)
		}
	}
}

func TestVGPUBindAnnotations(t *testing.T) {
	task := NewTaskInfo(vgpuPod("p", "", [3]string{"1", "3000", "50"}, [3]string{}), "j")
	task.NodeName = "n1"
	task.VGPUDevices = [][]vgpu.Device{{{UUID: "GPU-a", Type: vgpu.DeviceType, MemoryMiB: 3000, Cores: 50}}, nil}
	now := time.Unix(1700000000, 0)
	got := task.BindAnnotations(now)
	secs := strconv.FormatInt(now.Unix(), 10)
	want := map[string]string{
		vgpu.NodeAnnotation: "n1", vgpu.TimeAnnotation: secs, vgpu.BindTimeAnnotation: secs,
		vgpu.IDsAnnotation: "GPU-a,NVIDIA,3000,50:", vgpu.DevicesToAllocateAnnotation: "GPU-a,NVIDIA,3000,50:",
		vgpu.BindPhaseAnnotation: vgpu.BindPhaseAllocating,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("annotations (-want,+got):\n%s", diff)
	}
	// Read back as the bound pod: the devices return to the container
	// that asked.
	bound := vgpuPod("p", got[vgpu.IDsAnnotation], [3]string{"1", "3000", "50"}, [3]string{})
	if d := NewTaskInfo(bound, "j").VGPUDevices; len(d) != 2 || len(d[0]) != 1 || d[0][0].UUID != "GPU-a" || d[1] != nil {
		t.Errorf("read back %+v", d)
	}
}

// TestNodeMIGCards: a MIG card carries its model's geometry, and a bound
// pod's instance holds its position on the card.
func TestNodeMIGCards(t *testing.T) {
	n := NewNodeInfo(vgpuNode("GPU-m,7,40960,NVIDIA-NVIDIA A100-SXM4-40GB,true,mig:GPU-t,7,16000,NVIDIA-Tesla T4,true,mig:"))
	if n.VGPUs[0].Geometry == nil || n.VGPUs[1].Geometry != nil {
		t.Fatalf("geometries: A100 %v, T4 %v; want the A100's only", n.VGPUs[0].Geometry, n.VGPUs[1].Geometry)
	}
	task := NewTaskInfo(vgpuPod("p", "GPU-m[group2-1],NVIDIA,10240,0:", [3]string{"1", "8000", ""}), "j")
	n.AddTask(task)
	if got := n.VGPUs[0].MIG; got != (vgpu.MIGUsage{Group: 1, Taken: 1 << 1}) || n.VGPUs[0].UsedMemoryMiB != 10240 {
		t.Errorf("card after the pod: %+v", n.VGPUs[0])
	}
	n.RemoveTask(klog.Background(), task)
	if n.VGPUs[0].MIG.Cut() {
		t.Errorf("card still cut after the pod left: %+v", n.VGPUs[0].MIG)
	}
}
