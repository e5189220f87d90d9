package scenario

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// card is a GPU card's memory and what its pods hold of it.
type card struct {
	memory, used int64
	pods         int
}

// useCards follows a pod's hold on its node's cards.
func (st *state) useCards(p *corev1.Pod, node string, sign int) {
	cards := st.cards[node]
	idx, err := api.ParseGPUIndex(p.Annotations[api.GPUIndexAnnotation])
	if len(cards) == 0 || len(idx) == 0 || err != nil {
		return
	}
	if sign > 0 {
		st.r.CardPlacements++
	}
	share := p.Spec.Containers[0].Resources.Requests[api.ResourceGPUMemory]
	for _, i := range idx {
		if i >= len(cards) {
			st.r.CardOvercommits++
			continue
		}
		c := &cards[i]
		held := share.Value()
		if held == 0 {
			held = c.memory
		}
		if sign > 0 && (c.used+held > c.memory || (held == c.memory && c.pods > 0)) {
			st.r.CardOvercommits++
		}
		c.used += int64(sign) * held
		c.pods += sign
	}
}
