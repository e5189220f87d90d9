package api

import (
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/devices/vgpu"
)

// vgpuCardsOf lays out a node's virtual-GPU cards from its device
// plugin's registration, MIG cards by the geometries (nil: the shipped
// ones). A node offers vGPUs only when it advertises all three vGPU
// resources and registers its cards; a registration that does not read
// offers none.
func vgpuCardsOf(node *corev1.Node, alloc *Resource, geometries []vgpu.Geometry) []vgpu.CardState {
	for _, r := range []corev1.ResourceName{vgpu.ResourceNumber, vgpu.ResourceMemory, vgpu.ResourceCores} {
		if alloc.Get(r) <= 0 {
			return nil
		}
	}
	cards, err := vgpu.ParseRegistration(node.Annotations[vgpu.RegisterAnnotation])
	if err != nil || len(cards) == 0 {
		return nil
	}
	out := make([]vgpu.CardState, len(cards))
	for i, c := range cards {
		out[i].Card = c
		if c.Mode == vgpu.ModeMIG {
			out[i].Geometry = vgpu.GeometryOf(geometries, c.Type)
		}
	}
	return out
}

// vgpuRequestsOf is each container's request of virtual GPUs, read as the
// device plugin reads it (limits, then requests); nil when no container
// asks for any.
func vgpuRequestsOf(pod *corev1.Pod) []vgpu.Request {
	var out []vgpu.Request
	for i, c := range pod.Spec.Containers {
		get := func(name corev1.ResourceName) int64 {
			if q, ok := c.Resources.Limits[name]; ok {
				return q.Value()
			}
			q := c.Resources.Requests[name]
			return q.Value()
		}
		number, memory, percent := get(vgpu.ResourceNumber), get(vgpu.ResourceMemory), get(vgpu.ResourceMemoryPercentage)
		if number == 0 && memory == 0 && percent == 0 {
			continue
		}
		if out == nil {
			out = make([]vgpu.Request, len(pod.Spec.Containers))
		}
		out[i] = vgpu.NewRequest(number, memory, percent, get(vgpu.ResourceCores))
	}
	return out
}

// vgpuAnnotations are what a bind writes for a task that holds virtual
// GPUs, for the device plugin: the node, the devices per container (twice:
// the plugin consumes one copy as containers start), and the bind phase
// and time.
func (t *TaskInfo) vgpuAnnotations(now time.Time) map[string]string {
	ids := vgpu.EncodePod(slices.DeleteFunc(slices.Clone(t.VGPUDevices), func(d []vgpu.Device) bool { return len(d) == 0 }))
	secs := strconv.FormatInt(now.Unix(), 10)
	return map[string]string{
		vgpu.NodeAnnotation:              t.NodeName,
		vgpu.TimeAnnotation:              secs,
		vgpu.IDsAnnotation:               ids,
		vgpu.DevicesToAllocateAnnotation: ids,
		vgpu.BindPhaseAnnotation:         vgpu.BindPhaseAllocating,
		vgpu.BindTimeAnnotation:          secs,
	}
}

// vgpuDevicesOf reads the devices a bound pod holds, per container in the
// pod's order (the annotation lists only the containers that asked).
func vgpuDevicesOf(pod *corev1.Pod, reqs []vgpu.Request) [][]vgpu.Device {
	s := pod.Annotations[vgpu.IDsAnnotation]
	if s == "" {
		return nil
	}
	listed, err := vgpu.DecodePod(s)
	if err != nil {
		// Unreadable: the pod runs where the device plugin put it,
		// unaccounted, rather than blocking the node.
		return nil
	}
	out := make([][]vgpu.Device, len(reqs))
	k := 0
	for i, r := range reqs {
		if r.Number == 0 {
			continue
		}
		if k < len(listed) {
			out[i] = listed[k]
		}
		k++
	}
	return out
}
