package perf

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/pkg/devices/vgpu"
)

// DeviceKind is how the nodes offer their accelerators and the pods ask
// for them.
type DeviceKind string

const (
	// DeviceGPU is a GPU count: nvidia.com/gpu on the node and in the pod's
	// limits, which only the pooled resources decide.
	DeviceGPU DeviceKind = "gpu"
	// DeviceVGPU is Volcano's virtual GPUs: the node registers its cards
	// (volcano.sh/node-vgpu-register, 10 shares of 16,000 MiB each) and a
	// pod asks for shares of 2,000 MiB and 10% of a card each, which
	// deviceshare's vgpu kind places on a card.
	DeviceVGPU DeviceKind = "vgpu"
	// DeviceDRA is Dynamic Resource Allocation: a ResourceSlice per node
	// with its devices, and a ResourceClaim per pod made as from a
	// template, which kube-scheduler's DynamicResources plugin allocates.
	DeviceDRA DeviceKind = "dra"
)

// Devices are the accelerators every node offers.
type Devices struct {
	Kind DeviceKind `json:"kind"`
	// PerNode is how many devices (cards) each node has.
	PerNode int32 `json:"perNode"`
}

// perfDriver names the DRA driver of the benchmark's devices and the
// DeviceClass that selects them.
const perfDriver = "gpu.perf.caldera.sh"

// The vGPU shapes: each card's shares and memory, and what one share asks.
const (
	vgpuSharesPerCard  = 10
	vgpuCardMemoryMiB  = 16000
	vgpuShareMemoryMiB = 2000
	vgpuShareCores     = 10
)

func (d *Devices) validate(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch d.Kind {
	case DeviceGPU, DeviceVGPU, DeviceDRA:
	default:
		errs = append(errs, field.NotSupported(p.Child("kind"), d.Kind, []DeviceKind{DeviceGPU, DeviceVGPU, DeviceDRA}))
	}
	if d.PerNode < 1 {
		errs = append(errs, field.Invalid(p.Child("perNode"), d.PerNode, "must be at least 1"))
	}
	return errs
}

// node adds the devices to a node's spec: the GPU count, or the vGPU
// resources and registration. DRA devices are published apart, in
// ResourceSlices.
func (d *Devices) node(spec *controlplane.NodeSpec) {
	switch d.Kind {
	case DeviceGPU:
		spec.Capacity[gpuResource] = *resource.NewQuantity(int64(d.PerNode), resource.DecimalSI)
	case DeviceVGPU:
		n := int64(d.PerNode)
		spec.Capacity[vgpu.ResourceNumber] = *resource.NewQuantity(n*vgpuSharesPerCard, resource.DecimalSI)
		spec.Capacity[vgpu.ResourceMemory] = *resource.NewQuantity(n*vgpuCardMemoryMiB, resource.DecimalSI)
		spec.Capacity[vgpu.ResourceCores] = *resource.NewQuantity(n*100, resource.DecimalSI)
		cards := make([]vgpu.Card, d.PerNode)
		for i := range cards {
			cards[i] = vgpu.Card{UUID: fmt.Sprintf("GPU-%s-%d", spec.Name, i), Shares: vgpuSharesPerCard, MemoryMiB: vgpuCardMemoryMiB,
				Type: "NVIDIA-A100", Healthy: true, Mode: vgpu.ModeHAMiCore}
		}
		spec.Annotations = map[string]string{vgpu.RegisterAnnotation: vgpu.FormatRegistration(cards)}
	}
}

// gpuResource is the plain GPU count.
const gpuResource corev1.ResourceName = "nvidia.com/gpu"

// limits are what a pod asking for n devices puts in its container's
// requests and limits (none for DRA: its claim asks).
func (d *Devices) limits(n int32) corev1.ResourceList {
	q := func(v int64) resource.Quantity { return *resource.NewQuantity(v, resource.DecimalSI) }
	switch d.Kind {
	case DeviceGPU:
		return corev1.ResourceList{gpuResource: q(int64(n))}
	case DeviceVGPU:
		return corev1.ResourceList{vgpu.ResourceNumber: q(int64(n)), vgpu.ResourceMemory: q(vgpuShareMemoryMiB), vgpu.ResourceCores: q(vgpuShareCores)}
	}
	return nil
}

// publishDevices creates the DeviceClass and a ResourceSlice per node, as
// a DRA driver publishes them, creationWorkers at a time.
func publishDevices(ctx context.Context, env *Environment, nodes []string, perNode int32) error {
	class := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: perfDriver},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
			Expression: `device.driver == "` + perfDriver + `"`}}}}}
	if _, err := env.Clientset.ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating DeviceClass %s: %w", perfDriver, err)
	}
	return forEach(ctx, nodes, creationWorkers, func(ctx context.Context, node string) error {
		s := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: node + "-" + perfDriver},
			Spec: resourcev1.ResourceSliceSpec{Driver: perfDriver, NodeName: &node,
				Pool: resourcev1.ResourcePool{Name: node, ResourceSliceCount: 1}}}
		for i := range perNode {
			s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{Name: fmt.Sprintf("gpu-%d", i)})
		}
		if _, err := env.Clientset.ResourceV1().ResourceSlices().Create(ctx, s, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating the ResourceSlice of %s: %w", node, err)
		}
		return nil
	})
}

// claimName is the claim of a pod: its one "gpu" claim.
func claimName(pod string) string { return pod + "-gpu" }

// withClaim makes the pod ask for its devices with a claim from its "gpu"
// template.
func withClaim(p *corev1.Pod) {
	template := "gpu"
	p.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: &template}}
}

// createClaim creates the pod's claim of n devices as the resource claim
// controller makes it from the template (owned by the pod) and names it in
// the pod's status. kube-controller-manager does not run here.
func createClaim(ctx context.Context, env *Environment, p *corev1.Pod, n int32) error {
	name := claimName(p.Name)
	controller := true
	c := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: name,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID, Controller: &controller}}},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu",
			Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: perfDriver, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: int64(n)}}}}},
	}
	if _, err := env.Clientset.ResourceV1().ResourceClaims(p.Namespace).Create(ctx, c, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating claim %s: %w", name, err)
	}
	p.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: &name}}
	if _, err := env.Clientset.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("naming claim %s in pod %s's status: %w", name, p.Name, err)
	}
	return nil
}

// deleteClaims deletes the namespace's claims, so that the next scheduler
// finds every device free.
func deleteClaims(ctx context.Context, env *Environment, ns string) error {
	err := env.Clientset.ResourceV1().ResourceClaims(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the claims of %s: %w", ns, err)
	}
	return nil
}

// checkDevices returns the run's device problems: a node given more
// devices than it has, and, for DRA, a bound pod whose claim is not
// allocated on its node (to it) or a claim allocated to a pod not bound.
func checkDevices(ctx context.Context, env *Environment, w *Workload, ns string, jobs []*job, rec *bindRecorder) []string {
	d := w.Devices
	var problems []string
	used := map[string]int64{}
	switch d.Kind {
	case DeviceGPU, DeviceVGPU:
		// Cards: deviceshare writes each pod's devices; a GPU count, the
		// pooled resources.
		for _, j := range jobs {
			for _, p := range j.pods {
				if node := rec.nodeOf(p); node != "" {
					used[node] += int64(j.group.Devices)
				}
			}
		}
		limit := int64(d.PerNode)
		if d.Kind == DeviceVGPU {
			limit *= vgpuSharesPerCard
		}
		for _, node := range slices.Sorted(maps.Keys(used)) {
			if used[node] > limit {
				problems = append(problems, fmt.Sprintf("node %s: %d devices given, %d offered", node, used[node], limit))
			}
		}
	case DeviceDRA:
		claims, err := env.Clientset.ResourceV1().ResourceClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return []string{fmt.Sprintf("listing the claims: %v", err)}
		}
		byName := map[string]*resourcev1.ResourceClaim{}
		for i := range claims.Items {
			byName[claims.Items[i].Name] = &claims.Items[i]
		}
		taken := map[string]string{}
		for _, j := range jobs {
			for _, p := range j.pods {
				node, c := rec.nodeOf(p), byName[claimName(p)]
				allocated := c != nil && c.Status.Allocation != nil
				switch {
				case node == "" && allocated && len(c.Status.ReservedFor) > 0:
					problems = append(problems, fmt.Sprintf("claim %s reserved, its pod %s not bound", c.Name, p))
				case node == "":
				case !allocated:
					problems = append(problems, fmt.Sprintf("pod %s bound to %s with its claim not allocated", p, node))
				case len(c.Status.Allocation.Devices.Results) != int(j.group.Devices):
					problems = append(problems, fmt.Sprintf("claim %s has %d devices, asked %d", c.Name, len(c.Status.Allocation.Devices.Results), j.group.Devices))
				default:
					for _, r := range c.Status.Allocation.Devices.Results {
						dev := r.Pool + "/" + r.Device
						if r.Pool != node {
							problems = append(problems, fmt.Sprintf("pod %s on %s holds device %s of another node", p, node, dev))
						}
						if other, ok := taken[dev]; ok {
							problems = append(problems, fmt.Sprintf("device %s given to %s and %s", dev, other, p))
						}
						taken[dev] = p
					}
				}
			}
		}
	}
	if len(problems) > 10 {
		problems = append(problems[:10], fmt.Sprintf("and %d more device problems", len(problems)-10))
	}
	return problems
}

// calderaDeviceTiers are caldera-scheduler's default tiers with devices
// enabled, for every kind of a device workload alike: deviceshare's vgpu
// kind, and the predicates plugin's DRA.
func calderaDeviceTiers() string {
	return strings.TrimLeft(`
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
    args: {dynamicResourceAllocation: true}
  - name: proportion
  - name: nodeorder
  - name: deviceshare
    args: {vgpu: true, schedulePolicy: binpack}
`, "\n")
}
