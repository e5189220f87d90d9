package scenario

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// cardBook is each node's GPU cards (volcano.sh/gpu-number) with what
// their pods hold, to check the scheduler's placements on them.
type cardBook struct {
	cards map[string][]card
	// placements counts placements on cards; overcommits those that took
	// more of a card than it had free, or a card whole that others used.
	placements, overcommits int
}

// card is a GPU card's memory and what its pods hold of it.
type card struct {
	memory, used int64
	pods         int
}

func newCardBook() cardBook { return cardBook{cards: map[string][]card{}} }

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
}

// use follows a pod's hold on its node's cards: taken (sign 1) or given
// back (-1).
func (b *cardBook) use(p *corev1.Pod, node string, sign int) {
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
