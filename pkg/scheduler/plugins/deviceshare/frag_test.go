package deviceshare

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

func TestFragmentationForOneShape(t *testing.T) {
	// Four cards of 1,000: one idle, one with 600 free, one with 200 free,
	// one unhealthy.
	node := NodeState{MilliCPU: 8000, Memory: 1 << 30, Cards: []Card{{1000, 1000}, {1000, 600}, {1000, 200}, {0, 0}}}
	cases := map[string]struct {
		shape Shape
		want  float64
	}{
		"a share of 500 cannot use the card with 200": {shape: Shape{MilliCPU: 1000, GPU: api.GPURequest{Memory: 500}}, want: 0.2},
		"a share of 700 can use only the idle card":   {shape: Shape{MilliCPU: 1000, GPU: api.GPURequest{Memory: 700}}, want: 0.8},
		"a whole card cannot use partial cards":       {shape: Shape{MilliCPU: 1000, GPU: api.GPURequest{Cards: 1}}, want: 0.8},
		"two whole cards do not fit: all is fragment": {shape: Shape{MilliCPU: 1000, GPU: api.GPURequest{Cards: 2}}, want: 1.8},
		"too much CPU: all is fragment":               {shape: Shape{MilliCPU: 9000, GPU: api.GPURequest{Memory: 100}}, want: 1.8},
		"a task without GPUs uses none of them":       {shape: Shape{MilliCPU: 1000}, want: 1.8},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := node.fragmentationFor(tc.shape); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("fragmentation = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNewWorkloadKeepsTheCommonShapes(t *testing.T) {
	a := Shape{MilliCPU: 1000, GPU: api.GPURequest{Memory: 500}}
	b := Shape{MilliCPU: 2000, GPU: api.GPURequest{Cards: 1}}
	rare := Shape{MilliCPU: 3000, GPU: api.GPURequest{Cards: 8}}
	got := NewWorkload(map[Shape]int{a: 60, b: 37, rare: 3})
	want := Workload{{Shape: a, Weight: 60.0 / 97}, {Shape: b, Weight: 37.0 / 97}}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(x, y float64) bool { return math.Abs(x-y) < 1e-9 })); diff != "" {
		t.Errorf("workload (-want,+got):\n%s", diff)
	}
	if NewWorkload(nil) != nil {
		t.Errorf("the workload of no tasks is not empty")
	}
}

func TestFGDKeepsRoomForTheCommonShare(t *testing.T) {
	// Most tasks take half a card (8,000 of 16,000). A 6,000 share on the
	// card with 10,000 free would leave 4,000 that none of them can use;
	// on the idle card it leaves 10,000, room for one more. Binpack takes
	// the fuller card; fgd the idle one.
	objects := func() api.Objects {
		pods := []*corev1.Pod{
			sharePod("held", "6000").Node("n0").Phase(corev1.PodRunning).Annotation(api.GPUIndexAnnotation, "0").Obj(),
			sharePod("first", "6000").Group("first").Created(at(0)).Obj(),
		}
		groups := []*schedulingv1beta1.PodGroup{inqueue("first", 1)}
		for _, name := range []string{"h0", "h1", "h2", "h3", "h4"} {
			pods = append(pods, sharePod(name, "8000").Group(name).Created(at(1)).Obj())
			groups = append(groups, inqueue(name, 1))
		}
		return api.Objects{Nodes: []*corev1.Node{gpuNode("n0", 2)}, Pods: pods, PodGroups: groups}
	}
	binpack, _ := place(t, args(configv1alpha1.DeviceSharePolicyBinpack), objects())
	fgd, _ := place(t, args(configv1alpha1.DeviceSharePolicyFGD), objects())
	if binpack["first"] != "n0/0" {
		t.Errorf("binpack placed the share on %s, want n0/0", binpack["first"])
	}
	if fgd["first"] != "n0/1" {
		t.Errorf("fgd placed the share on %s, want n0/1", fgd["first"])
	}
}

func TestFGDKeepsCPUTasksOffGPUNodes(t *testing.T) {
	// A CPU-only task would take the GPU node's last CPUs and leave its
	// cards to no task; fgd sends it to the node without cards. (Without
	// fgd the plugin scores only GPU tasks, and the first node wins.)
	objects := func() api.Objects {
		gpu := gpuNode("a-gpu", 2)
		gpu.Status.Allocatable[corev1.ResourceCPU] = resource.MustParse("4")
		cpu := st.MakeNode("b-cpu").Alloc("cpu", "64", "memory", "256Gi").Obj()
		return api.Objects{
			Nodes: []*corev1.Node{gpu, cpu},
			Pods: []*corev1.Pod{
				st.MakePod("ns", "cpu-task").Req("cpu", "4").Group("c").Created(at(0)).Obj(),
				sharePod("share", "8000").Group("s").Created(at(1)).Obj(),
			},
			PodGroups: []*schedulingv1beta1.PodGroup{inqueue("c", 1), inqueue("s", 1)},
		}
	}
	fgd, _ := place(t, args(configv1alpha1.DeviceSharePolicyFGD), objects())
	if diff := cmp.Diff(map[string]string{"cpu-task": "b-cpu/", "share": "a-gpu/0"}, fgd); diff != "" {
		t.Errorf("fgd placements (-want,+got):\n%s", diff)
	}
	binpack, _ := place(t, args(configv1alpha1.DeviceSharePolicyBinpack), objects())
	if binpack["cpu-task"] != "a-gpu/" {
		t.Errorf("binpack placed the CPU task on %q; the test expects the first node, to show fgd's choice is its own", binpack["cpu-task"])
	}
}
