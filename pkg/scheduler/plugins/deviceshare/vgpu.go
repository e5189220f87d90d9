package deviceshare

import (
	"slices"
	"strconv"
	"strings"

	"github.com/caldera-sh/caldera/pkg/devices/vgpu"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// The plugin's virtual-GPU kind (vgpu): a pod's containers ask for shares
// of cards that the node's vGPU device plugin registers; pkg/devices/vgpu
// chooses the cards, and the bind writes them for the device plugin.

// vgpuFit is the devices the task's containers would get on cards, or a
// status saying why they get none. nil devices and status: the task asks
// for no vGPU (or the kind is off).
func (p *Plugin) vgpuFit(t *api.TaskInfo, cards []vgpu.CardState) ([][]vgpu.Device, *framework.Status) {
	if !p.vgpu || t.VGPU == nil {
		return nil, nil
	}
	if len(cards) == 0 {
		return nil, &framework.Status{Plugin: Name, Code: framework.UnschedulableAndUnresolvable,
			Reasons: []string{"node has no vGPU cards (" + vgpu.RegisterAnnotation + ")"}}
	}
	var annotations map[string]string
	if t.Pod != nil {
		annotations = t.Pod.Annotations
	}
	devs, reason := vgpu.Allocate(cards, t.VGPU, vgpu.NewFilter(annotations), p.policy)
	if reason != "" {
		return nil, framework.NewStatus(Name, "Insufficient vGPU: "+reason)
	}
	return devs, nil
}

// vgpuWithout is the node's cards with the victims' shares freed.
func vgpuWithout(n *api.NodeInfo, victims []*api.TaskInfo) []vgpu.CardState {
	cards := slices.Clone(n.VGPUs)
	for _, v := range victims {
		vgpu.Hold(cards, v.VGPUDevices, -1)
	}
	return cards
}

// vgpuSignature is what, besides its summed request, makes two tasks'
// vGPU verdicts alike: each container's request and the pod's card
// filters.
func vgpuSignature(t *api.TaskInfo) string {
	if t.VGPU == nil {
		return ""
	}
	var b strings.Builder
	for _, r := range t.VGPU {
		b.WriteString(strconv.Itoa(r.Number))
		b.WriteByte(',')
		b.WriteString(strconv.FormatInt(r.MemoryMiB, 10))
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(r.MemoryPercent))
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(r.Cores))
		b.WriteByte(';')
	}
	if t.Pod != nil {
		for _, k := range []string{vgpu.ModeAnnotation, vgpu.UseTypeAnnotation, vgpu.NoUseTypeAnno, vgpu.UseUUIDAnnotation, vgpu.NoUseUUIDAnno} {
			b.WriteByte(0)
			b.WriteString(t.Pod.Annotations[k])
		}
	}
	return b.String()
}
