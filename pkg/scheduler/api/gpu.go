package api

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

// GPU sharing, as Volcano's device plugin for NVIDIA GPUs advertises it: a
// node offers volcano.sh/gpu-number cards and volcano.sh/gpu-memory of
// memory over all of them (each card has the total divided by the count); a
// pod asks either for a share of one card's memory or for whole cards, and
// the scheduler writes the cards it chose into the pod's
// volcano.sh/gpu-index annotation, which the device plugin reads.
const (
	ResourceGPUMemory          = schedulingv1beta1.GPUMemoryResource
	ResourceGPUNumber          = schedulingv1beta1.GPUNumberResource
	GPUIndexAnnotation         = schedulingv1beta1.GPUIndexAnnotation
	GPUPredicateTimeAnnotation = schedulingv1beta1.GPUPredicateTimeAnnotation
	GPUUnhealthyAnnotation     = schedulingv1beta1.GPUUnhealthyAnnotation
)

// GPURequest is what a task asks of a node's cards: a share of one card's
// memory, or whole cards. Volcano's API lets a pod ask for one or the
// other; a pod asking for both can never be placed (Conflict says why).
type GPURequest struct {
	// Memory is the share of one card.
	Memory int64
	// Cards is the count of whole cards.
	Cards int
}

// Any reports whether the task asks for cards at all.
func (r GPURequest) Any() bool { return r.Memory > 0 || r.Cards > 0 }

// Conflict explains a request that no card can meet, or "".
func (r GPURequest) Conflict() string {
	if r.Memory > 0 && r.Cards > 0 {
		return fmt.Sprintf("the pod asks for both %s and %s: a pod shares one card or takes whole cards, not both", ResourceGPUMemory, ResourceGPUNumber)
	}
	return ""
}

func gpuRequestOf(req *Resource) GPURequest {
	return GPURequest{
		Memory: req.Get(ResourceGPUMemory) / 1000,
		Cards:  int(req.Get(ResourceGPUNumber) / 1000),
	}
}

// GPUDevice is one card of a node.
type GPUDevice struct {
	// Memory is the card's memory; 0 for a card that is unhealthy.
	Memory int64
	// Used is the memory the card's tasks hold: their shares, or all of it
	// for a task that took the card whole.
	Used int64
	// Tasks counts the tasks on the card.
	Tasks int
}

// Free is the memory left on the card.
func (d GPUDevice) Free() int64 { return d.Memory - d.Used }

// Idle reports whether the card is healthy and nobody uses it: a task asking
// for whole cards may take it.
func (d GPUDevice) Idle() bool { return d.Memory > 0 && d.Tasks == 0 }

// gpuDevicesOf lays out a node's cards from what it advertises.
func gpuDevicesOf(node *corev1.Node, alloc *Resource) []GPUDevice {
	count := alloc.Get(ResourceGPUNumber) / 1000
	if count <= 0 {
		return nil
	}
	per := alloc.Get(ResourceGPUMemory) / 1000 / count
	devs := make([]GPUDevice, count)
	unhealthy, _ := ParseGPUIndex(node.Annotations[GPUUnhealthyAnnotation])
	for i := range devs {
		devs[i].Memory = per
	}
	for _, i := range unhealthy {
		if i < len(devs) {
			devs[i].Memory = 0
		}
	}
	return devs
}

// ParseGPUIndex reads a card list such as "0,3". An empty string is no
// cards.
func ParseGPUIndex(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	out := make([]int, 0, len(parts))
	for _, p := range parts {
		i, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || i < 0 {
			return nil, fmt.Errorf("card index %q is not a non-negative integer", p)
		}
		out = append(out, i)
	}
	return out, nil
}

// FormatGPUIndex writes a card list as ParseGPUIndex reads it.
func FormatGPUIndex(cards []int) string {
	var b strings.Builder
	for i, c := range cards {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(c))
	}
	return b.String()
}

// BindAnnotations are the annotations a task's bind writes on its pod: the
// cards it was given, and when (now), for the device plugin, or the
// virtual GPUs it was given, for the vGPU device plugin. Nil for a task
// that holds neither.
func (t *TaskInfo) BindAnnotations(now time.Time) map[string]string {
	if t.VGPUDevices != nil {
		return t.vgpuAnnotations(now)
	}
	if t.GPUIndex == nil {
		return nil
	}
	return map[string]string{
		GPUIndexAnnotation:         FormatGPUIndex(t.GPUIndex),
		GPUPredicateTimeAnnotation: strconv.FormatInt(now.UnixNano(), 10),
	}
}

// accountGPUs adds (sign 1) or removes (sign -1) a task's hold on the
// node's cards.
func (n *NodeInfo) accountGPUs(t *TaskInfo, sign int64) { HoldGPUs(n.GPUs, t, sign) }

// HoldGPUs adds (sign 1) or removes (sign -1) a task's hold on cards: its
// share of each of its cards, or all of a card it took whole. Cards the
// list does not have (the node's layout changed) are skipped.
func HoldGPUs(cards []GPUDevice, t *TaskInfo, sign int64) {
	for _, i := range t.GPUIndex {
		if i >= len(cards) {
			continue
		}
		d := &cards[i]
		use := t.GPU.Memory
		if t.GPU.Cards > 0 || use == 0 {
			// A whole card, or a card given without a memory share.
			use = d.Memory
		}
		d.Used += sign * use
		d.Tasks += int(sign)
	}
}
