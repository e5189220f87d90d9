package deviceshare

import (
	"cmp"
	"math"
	"slices"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// Fragmentation, as Weng et al. define it for GPU-sharing clusters (USENIX
// ATC 2023, "Beware of Fragmentation"): GPU resources on a node are
// fragmented for a task shape when the task cannot use them, because the
// node cannot hold the task at all (short of CPU, memory or cards), in which
// case all the node's free GPU counts, or because the free memory of a card
// is smaller than the task's share of a card (or than a whole card for tasks
// taking whole cards). A node's fragmentation for a workload is the sum over
// the workload's task shapes of each shape's share of the workload times the
// node's fragmentation for that shape. It is counted in cards: a card's free
// memory as a fraction of the card's memory.

// Shape is a task's request as fragmentation sees it.
type Shape struct {
	MilliCPU int64
	Memory   int64
	GPU      api.GPURequest
}

// WeightedShape is a shape and its share of the workload.
type WeightedShape struct {
	Shape
	Weight float64
}

// Workload is the typical tasks of a cluster: the most common shapes, by
// count, that together make up Coverage of the tasks, with weights that sum
// to 1.
type Workload []WeightedShape

// Coverage is the share of tasks the shapes of a workload cover, as in the
// paper: the rare shapes are left out.
const Coverage = 0.95

// NewWorkload builds the workload from a count of tasks per shape.
func NewWorkload(counts map[Shape]int) Workload {
	total := 0
	shapes := make([]WeightedShape, 0, len(counts))
	for s, n := range counts {
		total += n
		shapes = append(shapes, WeightedShape{Shape: s, Weight: float64(n)})
	}
	if total == 0 {
		return nil
	}
	// Most common first; ties in a fixed order, so that runs repeat.
	slices.SortFunc(shapes, func(a, b WeightedShape) int {
		if c := cmp.Compare(b.Weight, a.Weight); c != 0 {
			return c
		}
		return compareShapes(a.Shape, b.Shape)
	})
	var kept, covered float64
	n := 0
	for _, s := range shapes {
		n++
		covered += s.Weight
		if covered >= Coverage*float64(total) {
			break
		}
	}
	shapes = shapes[:n]
	for _, s := range shapes {
		kept += s.Weight
	}
	for i := range shapes {
		shapes[i].Weight /= kept
	}
	return shapes
}

func compareShapes(a, b Shape) int {
	return cmp.Or(cmp.Compare(a.GPU.Cards, b.GPU.Cards), cmp.Compare(a.GPU.Memory, b.GPU.Memory),
		cmp.Compare(a.MilliCPU, b.MilliCPU), cmp.Compare(a.Memory, b.Memory))
}

// NodeState is what fragmentation reads of a node: its free CPU and memory,
// and each card's memory and free memory, in the node's card order (an
// unhealthy card has no memory and counts for nothing).
type NodeState struct {
	MilliCPU int64
	Memory   int64
	Cards    []Card
}

// Card is one card: its memory and what is free of it.
type Card struct{ Memory, Free int64 }

// StateOf reads a node's state.
func StateOf(n *api.NodeInfo) NodeState {
	var s NodeState
	s.Read(n)
	return s
}

// Read reads a node's state into s, reusing its cards.
func (s *NodeState) Read(n *api.NodeInfo) {
	s.MilliCPU, s.Memory, s.Cards = n.Idle.MilliCPU, n.Idle.Memory, s.Cards[:0]
	for _, d := range n.GPUs {
		s.Cards = append(s.Cards, Card{Memory: d.Memory, Free: d.Free()})
	}
}

// Fragmentation is the node's fragmentation for the workload, in cards.
func (s NodeState) Fragmentation(w Workload) float64 {
	var f float64
	for _, m := range w {
		f += m.Weight * s.fragmentationFor(m.Shape)
	}
	return f
}

func (s NodeState) fragmentationFor(m Shape) float64 {
	var all, small float64
	idle := 0
	fitsShare := false
	for _, c := range s.Cards {
		if c.Memory == 0 {
			continue
		}
		free := float64(c.Free) / float64(c.Memory)
		all += free
		switch {
		case m.GPU.Cards > 0:
			if c.Free == c.Memory {
				idle++
			} else {
				small += free
			}
		case m.GPU.Memory > 0:
			if c.Free >= m.GPU.Memory {
				fitsShare = true
			} else {
				small += free
			}
		}
	}
	fits := m.MilliCPU <= s.MilliCPU && m.Memory <= s.Memory
	switch {
	case m.GPU.Cards > 0:
		fits = fits && idle >= m.GPU.Cards
	case m.GPU.Memory > 0:
		fits = fits && fitsShare
	default:
		// A task without GPUs uses none of them.
		fits = false
	}
	if !fits {
		return all
	}
	return small
}

// Place returns the state after a task of shape t takes the given cards.
func (s NodeState) Place(t Shape, cards []int) NodeState {
	out := NodeState{MilliCPU: s.MilliCPU, Memory: s.Memory, Cards: slices.Clone(s.Cards)}
	out.place(t, cards, 1)
	return out
}

// FragmentationAfter is the fragmentation once a task of shape t takes the
// given cards; s is changed on the way and put back.
func (s *NodeState) FragmentationAfter(w Workload, t Shape, cards []int) float64 {
	s.place(t, cards, 1)
	f := s.Fragmentation(w)
	s.place(t, cards, -1)
	return f
}

// place takes (sign 1) or gives back (sign -1) a task's resources.
func (s *NodeState) place(t Shape, cards []int, sign int64) {
	s.MilliCPU -= sign * t.MilliCPU
	s.Memory -= sign * t.Memory
	for _, i := range cards {
		if t.GPU.Cards > 0 {
			s.Cards[i].Free -= sign * s.Cards[i].Memory
		} else {
			s.Cards[i].Free -= sign * t.GPU.Memory
		}
	}
}

// sigmoid maps a change of fragmentation, in cards, into (0, 1).
func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
