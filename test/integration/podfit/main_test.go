//go:build integration

package podfit

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
	os.Exit(framework.Main(m, framework.Options{Nodes: clusterNodes()}, &fw))
}

const (
	zoneKey = corev1.LabelTopologyZone
	gpu     = "nvidia.com/gpu"
)

// clusterNodes: three zones, two tainted gpu nodes, a tainted spot node,
// and a small node that the test cordons.
func clusterNodes() []controlplane.NodeSpec {
	rl := func(cpu, mem, gpus string) corev1.ResourceList {
		l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
		if gpus != "" {
			l[gpu] = resource.MustParse(gpus)
		}
		return l
	}
	dedicated := []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	return []controlplane.NodeSpec{
		{Name: "n0", Labels: map[string]string{zoneKey: "a", "disk": "ssd"}, Capacity: rl("4", "8Gi", "")},
		{Name: "n1", Labels: map[string]string{zoneKey: "a"}, Capacity: rl("4", "8Gi", "")},
		{Name: "n2", Labels: map[string]string{zoneKey: "a"}, Capacity: rl("8", "16Gi", "2"), Taints: dedicated},
		{Name: "n3", Labels: map[string]string{zoneKey: "b", "disk": "ssd"}, Capacity: rl("4", "8Gi", "")},
		{Name: "n4", Labels: map[string]string{zoneKey: "b"}, Capacity: rl("2", "4Gi", "")},
		{Name: "n5", Labels: map[string]string{zoneKey: "b"}, Capacity: rl("8", "16Gi", "4"), Taints: dedicated},
		{Name: "n6", Labels: map[string]string{zoneKey: "c"}, Capacity: rl("4", "8Gi", "")},
		{Name: "n7", Labels: map[string]string{zoneKey: "c"}, Capacity: rl("2", "4Gi", ""),
			Taints: []corev1.Taint{{Key: "spot", Value: "true", Effect: corev1.TaintEffectNoExecute}}},
	}
}
