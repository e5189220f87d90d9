package deviceshare

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
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
