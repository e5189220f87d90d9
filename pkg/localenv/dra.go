package localenv

import (
	"context"
	"fmt"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caldera-sh/caldera/pkg/controlplane"
)

// DRADriver is the Dynamic Resource Allocation driver the local
// environment plays: for each A100 node it publishes a ResourceSlice of the
// node's eight GPUs, so that pods with ResourceClaims have devices
// (examples/dra/gpu-deviceclass.yaml is its DeviceClass; docs/dra.md). The
// same cards are the nodes' nvidia.com/gpu: a simulated cluster offers
// both ways of asking for them.
const DRADriver = "gpu.example.com"

// draSlices returns the slices the driver publishes for the nodes.
func draSlices(nodes []controlplane.NodeSpec) []*resourcev1.ResourceSlice {
	var out []*resourcev1.ResourceSlice
	for _, n := range nodes {
		model := n.Labels[GPUProductLabel]
		if !strings.Contains(model, "A100") {
			continue
		}
		gpus := n.Capacity.Name("nvidia.com/gpu", "").Value()
		s := &resourcev1.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: n.Name + "-" + DRADriver},
			Spec: resourcev1.ResourceSliceSpec{
				Driver:   DRADriver,
				Pool:     resourcev1.ResourcePool{Name: n.Name, ResourceSliceCount: 1},
				NodeName: &n.Name,
			},
		}
		for i := range gpus {
			s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{
				Name:       fmt.Sprintf("gpu-%d", i),
				Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"model": {StringValue: &model}},
			})
		}
		out = append(out, s)
	}
	return out
}

// publishDRADevices creates the driver's slices.
func publishDRADevices(ctx context.Context, c client.Client, nodes []controlplane.NodeSpec) error {
	for _, s := range draSlices(nodes) {
		if err := c.Create(ctx, s); err != nil {
			return fmt.Errorf("ResourceSlice %s: %w", s.Name, err)
		}
	}
	return nil
}
