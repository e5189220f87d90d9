//go:build integration

package controlplane

import (
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/integration/framework"
)

var fw *framework.Framework

func TestMain(m *testing.M) {
	os.Exit(framework.Main(m, framework.Options{
		Nodes: []controlplane.NodeSpec{
			{Name: "cpu-0", Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")}},
			{Name: "gpu-0", Tainted: true, Labels: map[string]string{"nvidia.com/gpu.product": "A100"}, Capacity: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("256Gi"), "nvidia.com/gpu": resource.MustParse("8"),
			}},
		},
	}, &fw))
}
