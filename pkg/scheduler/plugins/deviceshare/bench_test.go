package deviceshare

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/allocate"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/gang"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// BenchmarkScoreNodes scores one GPU share over 1,000 nodes of eight cards,
// half of them partly used, with a workload of 40 shapes for fgd.
func BenchmarkScoreNodes(b *testing.B) {
	for _, policy := range []string{configv1alpha1.DeviceSharePolicyBinpack, configv1alpha1.DeviceSharePolicyFGD} {
		b.Run(policy, func(b *testing.B) {
			var nodes []*corev1.Node
			var pods []*corev1.Pod
			for i := range 1000 {
				name := fmt.Sprintf("n%04d", i)
				nodes = append(nodes, gpuNode(name, 8))
				if i%2 == 0 {
					pods = append(pods, sharePod(fmt.Sprintf("r%04d", i), fmt.Sprint(1000*(i%16))).Node(name).Phase(corev1.PodRunning).Annotation(api.GPUIndexAnnotation, fmt.Sprint(i%8)).Obj())
				}
			}
			for i := range 40 {
				pods = append(pods, sharePod(fmt.Sprintf("w%02d", i), fmt.Sprint(500+400*i)).Group(fmt.Sprintf("w%02d", i)).Obj())
			}
			snap := api.Build(api.Objects{Nodes: nodes, Pods: pods})
			p, err := New(args(policy), &framework.Handle{})
			if err != nil {
				b.Fatal(err)
			}
			ssn := framework.OpenSession(b.Context(), snap, []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: p}}}}, framework.Options{Now: time.Unix(0, 0)})
			defer ssn.Close()
			infos := make([]*api.NodeInfo, 0, len(snap.Nodes))
			for _, n := range snap.Nodes {
				infos = append(infos, n)
			}
			task := api.NewTaskInfo(st.MakePod("ns", "t").Req("cpu", "1", string(api.ResourceGPUMemory), "6000").Obj(), "j")
			scores := make([]float64, len(infos))
			b.ReportAllocs()
			for b.Loop() {
				p.(*Plugin).ScoreNodes(task, infos, scores)
			}
		})
	}
}

// BenchmarkPlaceVGPU places 10,000 single-pod jobs on 1,000 nodes of 8
// cards in one allocate cycle: pods asking for one virtual GPU (2,000 MiB
// and 10% of a card, through deviceshare's vgpu kind) against the same
// number asking for a plain GPU count (nvidia.com/gpu, 16 per node, which
// only the pooled resources decide). The target is vgpu at 70% or more of
// plain's pods per second.
func BenchmarkPlaceVGPU(b *testing.B) {
	const nodes, pods = 1000, 10000
	for _, kind := range []string{"plain", "vgpu"} {
		b.Run(kind, func(b *testing.B) {
			o := api.Objects{}
			for i := range nodes {
				if kind == "vgpu" {
					o.Nodes = append(o.Nodes, vgpuNode(fmt.Sprintf("n%04d", i), 8, "NVIDIA-Tesla T4"))
				} else {
					o.Nodes = append(o.Nodes, st.MakeNode(fmt.Sprintf("n%04d", i)).Alloc("cpu", "64", "memory", "256Gi", "nvidia.com/gpu", "16").Obj())
				}
			}
			for i := range pods {
				name := fmt.Sprintf("p%05d", i)
				if kind == "vgpu" {
					o.Pods = append(o.Pods, vgpuPod(name, 1, 2000, 10).Obj())
				} else {
					o.Pods = append(o.Pods, st.MakePod("ns", name).Group(name).Req("cpu", "1").Limit("nvidia.com/gpu", "1").Obj())
				}
				o.PodGroups = append(o.PodGroups, inqueue(name, 1))
			}
			o.Queues = []*schedulingv1beta1.Queue{schedtesting.MakeQueue("default").Obj()}
			g, err := gang.New(nil, &framework.Handle{})
			if err != nil {
				b.Fatal(err)
			}
			d, err := New(&configv1alpha1.DeviceShareArgs{VGPU: new(true)}, &framework.Handle{})
			if err != nil {
				b.Fatal(err)
			}
			tiers := []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: g}, {Plugin: d}}}}
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				snap := api.Build(o)
				rec := &vgpuRecorder{binds: map[string]map[string]string{}}
				b.StartTimer()
				ssn := framework.OpenSession(b.Context(), snap, tiers, framework.Options{Now: time.Unix(0, 0), Sink: rec})
				allocate.New().Execute(ssn)
				ssn.Close()
				if len(rec.binds) != pods {
					b.Fatalf("%d of %d pods placed", len(rec.binds), pods)
				}
			}
			b.ReportMetric(float64(pods*b.N)/b.Elapsed().Seconds(), "pods/s")
		})
	}
}
