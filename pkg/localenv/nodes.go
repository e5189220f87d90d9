package localenv

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/caldera-sh/caldera/pkg/agent/config"
	"github.com/caldera-sh/caldera/pkg/controlplane"
)

// Labels of the simulated two-tier network: every node sits under one leaf
// switch, every leaf under one spine.
const (
	LeafLabel  = "network.caldera.sh/leaf"
	SpineLabel = "network.caldera.sh/spine"
	// GPUProductLabel names the accelerator model, as NVIDIA's GPU feature
	// discovery labels nodes.
	GPUProductLabel = "nvidia.com/gpu.product"
	// GPUNumberResource and GPUMemoryResource are the resources Volcano's
	// GPU-sharing device plugin reports.
	GPUNumberResource corev1.ResourceName = "volcano.sh/gpu-number"
	GPUMemoryResource corev1.ResourceName = "volcano.sh/gpu-memory"
)

// DefaultNodes is a small but realistic cluster: 8 GPU nodes with 8 GPUs each
// (two models) under two leaves of one spine, and 4 CPU nodes under a third
// leaf of a second spine. Every node has local ephemeral storage; the H100
// nodes also report their cards as Volcano's GPU-sharing device plugin
// does (volcano.sh/gpu-number, and volcano.sh/gpu-memory in MiB), so that
// pods sharing cards by memory have somewhere to run.
func DefaultNodes() []controlplane.NodeSpec {
	var nodes []controlplane.NodeSpec
	for i := range 8 {
		model, leaf := "NVIDIA-A100-SXM4-80GB", "leaf-0"
		if i >= 4 {
			model, leaf = "NVIDIA-H100-80GB-HBM3", "leaf-1"
		}
		capacity := corev1.ResourceList{
			corev1.ResourceCPU:              resource.MustParse("96"),
			corev1.ResourceMemory:           resource.MustParse("1Ti"),
			corev1.ResourceEphemeralStorage: resource.MustParse("3500Gi"),
			"nvidia.com/gpu":                resource.MustParse("8"),
		}
		if i >= 4 {
			capacity[GPUNumberResource] = resource.MustParse("8")
			capacity[GPUMemoryResource] = *resource.NewQuantity(8*81920, resource.DecimalSI)
		}
		nodes = append(nodes, controlplane.NodeSpec{
			Name:     fmt.Sprintf("gpu-%d", i),
			Labels:   map[string]string{GPUProductLabel: model, LeafLabel: leaf, SpineLabel: "spine-0"},
			Capacity: capacity,
		})
	}
	for i := range 4 {
		nodes = append(nodes, controlplane.NodeSpec{
			Name: fmt.Sprintf("cpu-%d", i),
			// The CPU nodes colocate online and offline work under
			// caldera-agent.
			Labels: map[string]string{LeafLabel: "leaf-2", SpineLabel: "spine-1", config.ColocationLabel: "true"},
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU:              resource.MustParse("64"),
				corev1.ResourceMemory:           resource.MustParse("256Gi"),
				corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
			},
		})
	}
	return nodes
}
