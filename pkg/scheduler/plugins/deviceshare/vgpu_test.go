package deviceshare

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/devices/vgpu"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/allocate"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/gang"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// vgpuNode registers cards of 16,000 MiB and 4 shares each, named
// <node>-<i>, of type typ.
func vgpuNode(name string, cards int, typ string) *corev1.Node {
	var cs []vgpu.Card
	for i := range cards {
		cs = append(cs, vgpu.Card{UUID: fmt.Sprintf("%s-%d", name, i), Shares: 4, MemoryMiB: 16000, Type: typ, Healthy: true, Mode: vgpu.ModeHAMiCore})
	}
	n := st.MakeNode(name).Alloc("cpu", "64", "memory", "256Gi",
		vgpu.ResourceNumber, fmt.Sprint(4*cards), vgpu.ResourceMemory, fmt.Sprint(16000*cards), vgpu.ResourceCores, fmt.Sprint(100*cards)).Obj()
	n.Annotations = map[string]string{vgpu.RegisterAnnotation: vgpu.FormatRegistration(cs)}
	return n
}

// vgpuPod asks for number shares of memory MiB and cores percent.
func vgpuPod(name string, number, memory, cores int) *st.PodWrapper {
	return st.MakePod("ns", name).Group(name).Req("cpu", "1").
		Limit(vgpu.ResourceNumber, fmt.Sprint(number), vgpu.ResourceMemory, fmt.Sprint(memory), vgpu.ResourceCores, fmt.Sprint(cores))
}

type vgpuRecorder struct{ binds map[string]map[string]string }

func (r *vgpuRecorder) Bind(t *api.TaskInfo, node string) {
	r.binds[t.Name] = t.BindAnnotations(time.Unix(1700000000, 0))
}

func placeVGPU(t *testing.T, policy string, o api.Objects) (map[string]map[string]string, *framework.Session) {
	t.Helper()
	g, err := gang.New(nil, &framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(&configv1alpha1.DeviceShareArgs{VGPU: new(true), SchedulePolicy: &policy}, &framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	o.Queues = append(o.Queues, schedtesting.MakeQueue("default").Obj())
	rec := &vgpuRecorder{binds: map[string]map[string]string{}}
	ssn := framework.OpenSession(t.Context(), api.Build(o), []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: g}, {Plugin: d}}}},
		framework.Options{Now: time.Unix(0, 0), Sink: rec})
	allocate.New().Execute(ssn)
	ssn.Close()
	return rec.binds, ssn
}

func TestVGPUPlacement(t *testing.T) {
	// n0's first card holds two shares of 4,000 MiB at 25% each.
	held := vgpuPod("held", 1, 4000, 25).Node("n0").Phase(corev1.PodRunning).
		Annotation(vgpu.IDsAnnotation, "n0-0,NVIDIA,8000,50:").Obj()
	for _, tc := range []struct {
		name   string
		policy string
		pods   []*corev1.Pod
		groups []*schedulingv1beta1.PodGroup
		// want is each pod's vgpu-ids-new; reason a part of the job's
		// wait when it is not placed.
		want   map[string]string
		reason string
	}{
		{name: "binpack shares the card in use", policy: "binpack",
			pods: []*corev1.Pod{vgpuPod("p", 1, 4000, 30).Obj()}, groups: []*schedulingv1beta1.PodGroup{inqueue("p", 1)},
			want: map[string]string{"p": "n0-0,NVIDIA,4000,30:"}},
		{name: "spread takes an empty card", policy: "spread",
			pods: []*corev1.Pod{vgpuPod("p", 1, 4000, 30).Obj()}, groups: []*schedulingv1beta1.PodGroup{inqueue("p", 1)},
			want: map[string]string{"p": "n0-1,NVIDIA,4000,30:"}},
		{name: "a share of the card's memory by percentage", policy: "binpack",
			pods: []*corev1.Pod{st.MakePod("ns", "p").Group("p").Req("cpu", "1").
				Limit(vgpu.ResourceNumber, "1", vgpu.ResourceMemoryPercentage, "50", vgpu.ResourceCores, "30").Obj()},
			groups: []*schedulingv1beta1.PodGroup{inqueue("p", 1)},
			want:   map[string]string{"p": "n0-0,NVIDIA,8000,30:"}},
		{name: "two shares go to two cards of one node", policy: "binpack",
			pods: []*corev1.Pod{vgpuPod("p", 2, 10000, 50).Obj()}, groups: []*schedulingv1beta1.PodGroup{inqueue("p", 1)},
			want: map[string]string{"p": "n1-0,NVIDIA,10000,50:n1-1,NVIDIA,10000,50:"}},
		{name: "more shares than a node has cards", policy: "binpack",
			pods: []*corev1.Pod{vgpuPod("p", 3, 1000, 10).Obj()}, groups: []*schedulingv1beta1.PodGroup{inqueue("p", 1)},
			reason: "2 nodes Insufficient vGPU: container 0 asks for 3 vGPUs, the node has 2 cards"},
		{name: "cores the cards lack", policy: "binpack",
			pods: []*corev1.Pod{
				vgpuPod("n1-hog", 2, 1000, 50).Node("n1").Phase(corev1.PodRunning).Annotation(vgpu.IDsAnnotation, "n1-0,NVIDIA,1000,50:n1-1,NVIDIA,1000,50:").Obj(),
				vgpuPod("p", 2, 1000, 60).Obj(),
			},
			groups: []*schedulingv1beta1.PodGroup{inqueue("n1-hog", 1), inqueue("p", 1)},
			reason: "found a card with 1000 MiB and 60% of its cores free"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := api.Objects{
				Nodes: []*corev1.Node{vgpuNode("n0", 2, "NVIDIA-Tesla T4"), vgpuNode("n1", 2, "NVIDIA-Tesla T4")},
				Pods:  append([]*corev1.Pod{held}, tc.pods...), PodGroups: append([]*schedulingv1beta1.PodGroup{inqueue("held", 1)}, tc.groups...),
			}
			binds, ssn := placeVGPU(t, tc.policy, o)
			if tc.reason != "" {
				u := ssn.Outcomes()[api.NewJobID("ns", "p")].Unschedulable()
				if len(binds) != 0 || u == nil || !strings.Contains(u.String(), tc.reason) {
					t.Fatalf("binds %v, reason %v; want none placed, %q", binds, u, tc.reason)
				}
				return
			}
			for pod, ids := range tc.want {
				a := binds[pod]
				if a[vgpu.IDsAnnotation] != ids || a[vgpu.DevicesToAllocateAnnotation] != ids || a[vgpu.BindPhaseAnnotation] != vgpu.BindPhaseAllocating || a[vgpu.NodeAnnotation] == "" {
					t.Errorf("%s bound with %v, want devices %q", pod, a, ids)
				}
			}
		})
	}
}

// TestVGPUVictims: a victim's shares count as free when preemption asks.
func TestVGPUVictims(t *testing.T) {
	o := api.Objects{
		Nodes: []*corev1.Node{vgpuNode("n0", 1, "NVIDIA-Tesla T4")},
		Pods: []*corev1.Pod{
			vgpuPod("whole", 1, 16000, 100).Node("n0").Phase(corev1.PodRunning).Annotation(vgpu.IDsAnnotation, "n0-0,NVIDIA,16000,100:").Obj(),
			vgpuPod("p", 1, 4000, 20).Obj(),
		},
		PodGroups: []*schedulingv1beta1.PodGroup{inqueue("whole", 1), inqueue("p", 1)},
		Queues:    []*schedulingv1beta1.Queue{schedtesting.MakeQueue("default").Obj()},
	}
	snap := api.Build(o)
	pl, err := New(&configv1alpha1.DeviceShareArgs{VGPU: new(true)}, &framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	p := pl.(*Plugin)
	var victim, task *api.TaskInfo
	for _, j := range snap.Jobs {
		for _, tk := range j.Tasks {
			switch tk.Name {
			case "whole":
				victim = tk
			case "p":
				task = tk
			}
		}
	}
	n := snap.Nodes["n0"]
	if s := p.Predicate(task, n); s == nil || s.Code != framework.Unschedulable {
		t.Errorf("Predicate on the full card: %v, want Unschedulable", s)
	}
	if s := p.PredicateWithout(task, n, []*api.TaskInfo{victim}); s != nil {
		t.Errorf("PredicateWithout the card's holder: %v, want a fit", s)
	}
	if n.VGPUs[0].UsedShares != 1 {
		t.Errorf("PredicateWithout changed the node's cards: %+v", n.VGPUs[0])
	}
}

// TestVGPUMIG: a pod asking for MIG gets an instance cut to its size, and
// the bind names it.
func TestVGPUMIG(t *testing.T) {
	n := vgpuNode("m0", 1, "NVIDIA-NVIDIA A100-SXM4-40GB")
	n.Annotations[vgpu.RegisterAnnotation] = vgpu.FormatRegistration([]vgpu.Card{
		{UUID: "GPU-m0", Shares: 7, MemoryMiB: 40960, Type: "NVIDIA-NVIDIA A100-SXM4-40GB", Healthy: true, Mode: vgpu.ModeMIG}})
	o := api.Objects{
		Nodes:     []*corev1.Node{n},
		Pods:      []*corev1.Pod{vgpuPod("p", 1, 8000, 0).Annotation(vgpu.ModeAnnotation, vgpu.ModeMIG).Obj()},
		PodGroups: []*schedulingv1beta1.PodGroup{inqueue("p", 1)},
	}
	binds, _ := placeVGPU(t, "binpack", o)
	if got := binds["p"][vgpu.IDsAnnotation]; got != "GPU-m0[group2-0],NVIDIA,10240,0:" {
		t.Errorf("devices %q, want a 2g.10gb instance of group2", got)
	}
}
