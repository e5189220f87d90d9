//go:build integration

package scheduler

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/pkg/devices/vgpu"
)

const vgpuConf = "../../../examples/scheduler/vgpu.conf"

// TestVGPUExample runs the documented example (docs/gpu-sharing.md):
// examples/batch/vgpu-inference.yaml under examples/scheduler/vgpu.conf on
// two nodes whose vGPU device plugin registered two 16,000 MiB cards
// each. Binpack puts the three 4,000 MiB, 30% replicas on one card, and
// each bind wrote the device plugin's annotations.
func TestVGPUExample(t *testing.T) {
	const ns = "vgpu-example"
	createNamespace(t, ns)
	createQueue(t, queue("default", 1, nil))
	var specs []controlplane.NodeSpec
	for i := range 2 {
		s := cpuNode(fmt.Sprintf("%s-%d", ns, i), "32")
		s.Capacity[vgpu.ResourceNumber] = resource.MustParse("20")
		s.Capacity[vgpu.ResourceMemory] = resource.MustParse("32000")
		s.Capacity[vgpu.ResourceCores] = resource.MustParse("200")
		s.Labels = map[string]string{"test": ns}
		specs = append(specs, s)
	}
	createNodes(t, specs)
	// The device plugin registers each node's cards.
	for _, s := range specs {
		var cards []vgpu.Card
		for c := range 2 {
			cards = append(cards, vgpu.Card{UUID: fmt.Sprintf("GPU-%s-%d", s.Name, c), Shares: 10, MemoryMiB: 16000, Type: "NVIDIA-Tesla T4", Healthy: true, Mode: vgpu.ModeHAMiCore})
		}
		var n corev1.Node
		if err := fw.Client.Get(t.Context(), client.ObjectKey{Name: s.Name}, &n); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(n.DeepCopy())
		if n.Annotations == nil {
			n.Annotations = map[string]string{}
		}
		n.Annotations[vgpu.RegisterAnnotation] = vgpu.FormatRegistration(cards)
		if err := fw.Client.Patch(t.Context(), &n, patch); err != nil {
			t.Fatal(err)
		}
	}
	runSchedulerFile(t, vgpuConf)
	createExampleJob(t, ns, "../../../examples/batch/vgpu-inference.yaml")
	pods := waitAllBound(t, ns, 3)
	cards := map[string]bool{}
	for _, p := range pods {
		a := p.Annotations
		devs, err := vgpu.DecodePod(a[vgpu.IDsAnnotation])
		if err != nil || len(devs) != 1 || len(devs[0]) != 1 {
			t.Errorf("%s: devices %q (%v), want one share", p.Name, a[vgpu.IDsAnnotation], err)
			continue
		}
		d := devs[0][0]
		if d.MemoryMiB != 4000 || d.Cores != 30 || !strings.HasPrefix(d.UUID, "GPU-"+p.Spec.NodeName+"-") {
			t.Errorf("%s on %s got %+v, want 4000 MiB and 30%% of a card of its node", p.Name, p.Spec.NodeName, d)
		}
		if a[vgpu.DevicesToAllocateAnnotation] != a[vgpu.IDsAnnotation] || a[vgpu.NodeAnnotation] != p.Spec.NodeName ||
			a[vgpu.BindPhaseAnnotation] != vgpu.BindPhaseAllocating || a[vgpu.TimeAnnotation] == "" || a[vgpu.BindTimeAnnotation] == "" {
			t.Errorf("%s: bind annotations %v", p.Name, a)
		}
		cards[d.UUID] = true
	}
	if len(cards) != 1 {
		t.Errorf("the replicas are on cards %v, want one card for all three (binpack)", cards)
	}
}
