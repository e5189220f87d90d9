//go:build integration

package scheduler

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/pkg/devices/vgpu"
	"github.com/caldera-sh/caldera/test/poll"
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

	// A share asked as a percentage of the card's memory: no node
	// advertises volcano.sh/vgpu-memory-percentage (the kubelet admits
	// the pod without it), and the scheduler sizes the share from the
	// card it picks.
	spec := podSpec(ns, "1")
	spec.Containers[0].Resources.Limits = corev1.ResourceList{
		vgpu.ResourceNumber:           resource.MustParse("1"),
		vgpu.ResourceMemoryPercentage: resource.MustParse("25"),
		vgpu.ResourceCores:            resource.MustParse("10"),
	}
	createPod(t, ns, "by-percentage", nil, spec)
	for _, p := range waitAllBound(t, ns, 4) {
		if p.Name != "by-percentage" {
			continue
		}
		devs, err := vgpu.DecodePod(p.Annotations[vgpu.IDsAnnotation])
		if err != nil || len(devs) != 1 || len(devs[0]) != 1 || devs[0][0].MemoryMiB != 4000 || devs[0][0].Cores != 10 {
			t.Errorf("%s got devices %q (%v), want one share of 4000 MiB (25%% of 16,000) and 10%%", p.Name, p.Annotations[vgpu.IDsAnnotation], err)
		}
	}
}

// TestDeviceConfigGeometries: a MIG card of a model the shipped geometries
// do not know (an H100 80GB) is passed over, and the pod waits;
// once the vGPU device plugin's ConfigMap lists the model's geometries
// (examples/gpu/vgpu-device-config.yaml), the pod gets the smallest
// instance that holds it. A ConfigMap that does not read is refused on the
// ConfigMap, and the geometries in force stay.
func TestDeviceConfigGeometries(t *testing.T) {
	const ns = "vgpu-mig"
	ctx := t.Context()
	createNamespace(t, ns)
	createQueue(t, queue("default", 1, nil))
	s := cpuNode(ns+"-0", "32")
	s.Capacity[vgpu.ResourceNumber] = resource.MustParse("7")
	s.Capacity[vgpu.ResourceMemory] = resource.MustParse("81920")
	s.Capacity[vgpu.ResourceCores] = resource.MustParse("100")
	s.Labels = map[string]string{"test": ns}
	createNodes(t, []controlplane.NodeSpec{s})
	card := vgpu.Card{UUID: "GPU-" + s.Name + "-0", Shares: 7, MemoryMiB: 81920, Type: "NVIDIA-NVIDIA H100 80GB HBM3", Healthy: true, Mode: vgpu.ModeMIG}
	var n corev1.Node
	if err := fw.Client.Get(ctx, client.ObjectKey{Name: s.Name}, &n); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(n.DeepCopy())
	n.Annotations = map[string]string{vgpu.RegisterAnnotation: vgpu.FormatRegistration([]vgpu.Card{card})}
	if err := fw.Client.Patch(ctx, &n, patch); err != nil {
		t.Fatal(err)
	}
	// A configuration that does not read, there from the start.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "volcano-vgpu-device-config"},
		Data: map[string]string{vgpu.DeviceConfigKey: "nvidia:\n  knownMigGeometries:\n  - models: [H100]\n    allowedGeometries:\n    - group: g\n      geometries: [{name: 1g.10gb, memory: 0, count: 7}]\n"}}
	if err := fw.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fw.Client.Delete(context.Background(), cm) })
	runSchedulerFile(t, vgpuConf)
	poll.Eventually(t, ctx, 60*time.Second, "the bad configuration reported on the ConfigMap", func() (bool, string) {
		var list eventsv1.EventList
		if err := fw.Client.List(ctx, &list, client.InNamespace("kube-system")); err != nil {
			return false, err.Error()
		}
		for _, e := range list.Items {
			if e.Regarding.Name == cm.Name && e.Reason == "InvalidDeviceConfig" &&
				strings.Contains(e.Note, "nvidia.knownMigGeometries[0].allowedGeometries[0].geometries[0].memory") {
				return true, e.Note
			}
		}
		return false, fmt.Sprintf("%d events", len(list.Items))
	})
	_, pg := createExampleJob(t, ns, "../../../examples/batch/mig-inference.yaml")
	waitUnschedulable(t, pg, "the job told the H100 offers no vGPU", "Insufficient vGPU")
	// The example configuration, as a user applies it.
	if _, stderr, err := fw.Kubectl(ctx, "apply", "-f", "../../../examples/gpu/vgpu-device-config.yaml"); err != nil {
		t.Fatalf("applying the device configuration: %v\n%s", err, stderr)
	}
	pods := waitAllBound(t, ns, 1)
	devs, err := vgpu.DecodePod(pods[0].Annotations[vgpu.IDsAnnotation])
	if err != nil || len(devs) != 1 || len(devs[0]) != 1 {
		t.Fatalf("devices %q (%v), want one instance", pods[0].Annotations[vgpu.IDsAnnotation], err)
	}
	if d := devs[0][0]; d.UUID != card.UUID+"[group1-0]" || d.MemoryMiB != 10240 {
		t.Errorf("device %+v, want %s[group1-0], a 1g.10gb of 10240 MiB", d, card.UUID)
	}
}
