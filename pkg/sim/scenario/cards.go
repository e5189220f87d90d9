package scenario

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/devices/vgpu"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// cardBook is each node's GPU cards (volcano.sh/gpu-number) with what
// their pods hold, to check the scheduler's placements on them.
type cardBook struct {
	cards map[string][]card
	// vgpus are each node's virtual-GPU cards (volcano.sh/node-vgpu-register)
	// with the shares their pods hold.
	vgpus map[string][]vgpu.CardState
	// placements counts placements on cards; overcommits those that took
	// more of a card than it had free, or a card whole that others used.
	placements, overcommits int
}

// card is a GPU card's memory and what its pods hold of it.
type card struct {
	memory, used int64
	pods         int
}

func newCardBook() cardBook {
	return cardBook{cards: map[string][]card{}, vgpus: map[string][]vgpu.CardState{}}
}

// addNode gives a node with GPU cards its cards, sharing its GPU memory
// evenly.
func (b *cardBook) addNode(n *corev1.Node) {
	if count := n.Status.Allocatable[api.ResourceGPUNumber]; count.Value() > 0 {
		mem := n.Status.Allocatable[api.ResourceGPUMemory]
		cards := make([]card, count.Value())
		for i := range cards {
			cards[i].memory = mem.Value() / count.Value()
		}
		b.cards[n.Name] = cards
	}
	if reg := n.Annotations[vgpu.RegisterAnnotation]; reg != "" {
		cards, _ := vgpu.ParseRegistration(reg)
		states := make([]vgpu.CardState, len(cards))
		for i, c := range cards {
			states[i].Card = c
			if c.Mode == vgpu.ModeMIG {
				states[i].Geometry = vgpu.GeometryOf(nil, c.Type)
			}
		}
		b.vgpus[n.Name] = states
	}
}

// useVGPU follows a pod's hold on its node's virtual-GPU cards; a share
// that takes more memory or cores than its card has free, or a share
// past the card's count, is an overcommit, and so is a MIG instance that
// is taken, of a group other than the card's, or smaller than asked.
func (b *cardBook) useVGPU(p *corev1.Pod, node string, sign int) {
	cards := b.vgpus[node]
	devs, err := vgpu.DecodePod(p.Annotations[vgpu.IDsAnnotation])
	if len(cards) == 0 || len(devs) == 0 || err != nil {
		return
	}
	if sign > 0 {
		b.placements++
		for _, c := range devs {
			for _, d := range c {
				// A MIG instance's id names its card.
				uuid := d.UUID
				if card, _, _, ok := vgpu.ParseMIGDeviceID(d.UUID); ok {
					uuid = card
				}
				i := slices.IndexFunc(cards, func(s vgpu.CardState) bool { return s.UUID == uuid })
				if i < 0 {
					b.overcommits++
					continue
				}
				s := cards[i]
				if s.UsedShares+1 > s.Shares || s.UsedMemoryMiB+d.MemoryMiB > s.MemoryMiB || s.UsedCores+d.Cores > 100 ||
					(s.Geometry != nil && !instanceFree(s, d, podRequests(p))) {
					b.overcommits++
				}
			}
		}
	}
	vgpu.Hold(cards, devs, sign)
}

// instanceFree reports whether a MIG instance is one the card can give a
// share asking for req: an instance of its geometry, of the group the card
// is cut by (if it is), not taken, and at least as large as asked.
func instanceFree(c vgpu.CardState, d vgpu.Device, req corev1.ResourceList) bool {
	u, err := vgpu.UsageOf(*c.Geometry, []string{d.UUID})
	if err != nil || (c.MIG.Cut() && u.Group != c.MIG.Group) || c.MIG.Taken&u.Taken != 0 {
		return false
	}
	asked := c.MemoryMiB
	if mem, ok := req[vgpu.ResourceMemory]; ok {
		asked = mem.Value()
	}
	return d.MemoryMiB >= asked
}

// heldShare is the share of the virtual-GPU cards' memory their shares
// hold (for MIG cards, whole instances), 0 with none.
func (b *cardBook) heldShare() float64 {
	var held, all int64
	for _, cards := range b.vgpus {
		for _, c := range cards {
			held += c.UsedMemoryMiB
			all += c.MemoryMiB
		}
	}
	if all == 0 {
		return 0
	}
	return float64(held) / float64(all)
}

// use follows a pod's hold on its node's cards: taken (sign 1) or given
// back (-1).
func (b *cardBook) use(p *corev1.Pod, node string, sign int) {
	if p.Annotations[vgpu.IDsAnnotation] != "" {
		b.useVGPU(p, node, sign)
		return
	}
	cards := b.cards[node]
	idx, err := api.ParseGPUIndex(p.Annotations[api.GPUIndexAnnotation])
	if len(cards) == 0 || len(idx) == 0 || err != nil {
		return
	}
	if sign > 0 {
		b.placements++
	}
	share := podRequests(p)[api.ResourceGPUMemory]
	for _, i := range idx {
		if i >= len(cards) {
			b.overcommits++
			continue
		}
		c := &cards[i]
		held := share.Value()
		if held == 0 {
			held = c.memory
		}
		if sign > 0 && (c.used+held > c.memory || (held == c.memory && c.pods > 0)) {
			b.overcommits++
		}
		c.used += int64(sign) * held
		c.pods += sign
	}
}
