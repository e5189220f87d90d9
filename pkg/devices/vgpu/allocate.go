package vgpu

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Request is what one container asks for.
type Request struct {
	// Number is how many shares, each on a different card.
	Number int
	// MemoryMiB is each share's memory; when 0, MemoryPercent of the
	// card's memory is (100 when the container asked for neither).
	MemoryMiB     int64
	MemoryPercent int
	// Cores is each share's compute, in percent of a card.
	Cores int
}

// NewRequest is a container's request from its quantities (limits first,
// then requests, as the device plugin reads them): number 0 and memory
// given means one share; neither memory nor a percentage means the whole
// card's memory.
func NewRequest(number, memoryMiB, memoryPercent, cores int64) Request {
	r := Request{Number: int(number), MemoryMiB: memoryMiB, MemoryPercent: int(memoryPercent), Cores: int(cores)}
	if r.Number == 0 && (r.MemoryMiB > 0 || r.MemoryPercent > 0) {
		r.Number = 1
	}
	if r.MemoryMiB == 0 && r.MemoryPercent == 0 {
		r.MemoryPercent = 100
	}
	return r
}

// memoryOn is the memory a share of r takes on card c.
func (r Request) memoryOn(c Card) int64 {
	if r.MemoryMiB > 0 {
		return r.MemoryMiB
	}
	return c.MemoryMiB * int64(r.MemoryPercent) / 100
}

// CardState is a card and what its shares take of it.
type CardState struct {
	Card
	UsedShares    int
	UsedMemoryMiB int64
	UsedCores     int
	// Geometry is a MIG card's instance sizes (nil for a card not in MIG
	// mode, and for a MIG card of a model without one, which is passed
	// over); MIG the instances its shares hold.
	Geometry *Geometry
	MIG      MIGUsage
}

// Filter narrows the cards a pod may get, from its annotations.
type Filter struct {
	// Mode, when set, is the only card mode allowed.
	Mode string
	// UseTypes and NoUseTypes are parts of a card's type, in any case,
	// one of which it must (must not) contain.
	UseTypes, NoUseTypes []string
	// UseUUIDs and NoUseUUIDs list the cards allowed (refused); a card in
	// both is refused.
	UseUUIDs, NoUseUUIDs []string
}

// NewFilter reads a pod's annotations.
func NewFilter(annotations map[string]string) Filter {
	list := func(key string) []string {
		v := annotations[key]
		if v == "" {
			return nil
		}
		var out []string
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return Filter{Mode: annotations[ModeAnnotation],
		UseTypes: list(UseTypeAnnotation), NoUseTypes: list(NoUseTypeAnno),
		UseUUIDs: list(UseUUIDAnnotation), NoUseUUIDs: list(NoUseUUIDAnno)}
}

func (f Filter) allows(c Card) bool {
	if f.Mode != "" && f.Mode != c.Mode {
		return false
	}
	contains := func(parts []string) bool {
		return slices.ContainsFunc(parts, func(p string) bool { return containsFold(c.Type, p) })
	}
	if len(f.UseTypes) > 0 && !contains(f.UseTypes) || contains(f.NoUseTypes) {
		return false
	}
	if slices.Contains(f.NoUseUUIDs, c.UUID) {
		return false
	}
	return len(f.UseUUIDs) == 0 || slices.Contains(f.UseUUIDs, c.UUID)
}

// Policies order the cards a share is tried on.
const (
	// Binpack tries the cards with the most memory in use first.
	Binpack = "binpack"
	// Spread tries the cards with the fewest shares first.
	Spread = "spread"
)

// ahead orders two cards as the policy tries them: negative when a comes
// before b, 0 when the policy does not tell them apart.
func ahead(policy string, a, b *CardState) int {
	switch policy {
	case Binpack:
		return cmp.Compare(b.UsedMemoryMiB, a.UsedMemoryMiB)
	case Spread:
		return cmp.Compare(a.UsedShares, b.UsedShares)
	}
	return 0
}

// fits says why a share of r does not fit card c ("" when it does).
func fits(c *CardState, r Request, f Filter) string {
	switch {
	case !c.Healthy:
		return "unhealthy"
	case !containsFold(c.Type, DeviceType):
		return "not an NVIDIA card"
	case !f.allows(c.Card):
		return "not allowed to the pod"
	case c.Mode == ModeMIG && c.Geometry == nil:
		return "a MIG card of a model with no known geometry"
	case c.UsedShares >= c.Shares:
		return "no share left"
	case c.Mode != ModeMIG && c.MemoryMiB-c.UsedMemoryMiB < r.memoryOn(c.Card):
		return "too little memory"
	case c.UsedCores+r.Cores > 100:
		return "too few cores"
	case r.Cores == 100 && c.UsedShares > 0:
		return "shared (a 100% share needs the card to itself)"
	case r.Cores == 0 && c.UsedCores >= 100:
		return "all its cores taken"
	}
	return ""
}

// Allocate chooses devices for each container's request, in order, on
// cards (the node's, with what they hold), trying cards in the policy's
// order; a container's shares go to different cards, and a container sees
// what the pod's earlier containers took. It returns the devices per
// container, or why the node cannot hold the pod. cards is not changed.
func Allocate(cards []CardState, reqs []Request, f Filter, policy string) ([][]Device, string) {
	if devs, ok := allocateOne(cards, reqs, f, policy); ok {
		return devs, ""
	}
	work := slices.Clone(cards)
	out := make([][]Device, len(reqs))
	for ci, r := range reqs {
		if r.Number == 0 {
			continue
		}
		if r.Number > len(work) {
			return nil, fmt.Sprintf("container %d asks for %d vGPUs, the node has %d cards", ci, r.Number, len(work))
		}
		order := make([]int, len(work))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			return cmp.Or(ahead(policy, &work[a], &work[b]), cmp.Compare(a, b))
		})
		var devs []Device
		for _, i := range order {
			if len(devs) == r.Number {
				break
			}
			c := &work[i]
			if fits(c, r, f) != "" {
				continue
			}
			id, mem := c.UUID, r.memoryOn(c.Card)
			if c.Mode == ModeMIG {
				// A share of a MIG card is a whole instance.
				choice, ok := PickInstance(*c.Geometry, c.MIG, mem)
				if !ok {
					continue
				}
				c.MIG.Take(choice)
				id, mem = MIGDeviceID(c.UUID, *c.Geometry, choice), choice.Instance.MemoryMiB
			}
			c.UsedShares++
			c.UsedMemoryMiB += mem
			c.UsedCores += r.Cores
			devs = append(devs, Device{UUID: id, Type: DeviceType, MemoryMiB: mem, Cores: r.Cores})
		}
		if len(devs) < r.Number {
			need := fmt.Sprintf("%d%% of its memory", r.MemoryPercent)
			if r.MemoryMiB > 0 {
				need = fmt.Sprintf("%d MiB", r.MemoryMiB)
			}
			return nil, fmt.Sprintf("container %d: %d of %d vGPUs found a card with %s and %d%% of its cores free", ci, len(devs), r.Number, need, r.Cores)
		}
		out[ci] = devs
	}
	return out, ""
}

// Hold adds (sign 1) or removes (sign -1) devices' shares on the cards.
// Devices on cards not in the list are ignored.
func Hold(cards []CardState, devices [][]Device, sign int) {
	for _, devs := range devices {
		for _, d := range devs {
			i := cardOf(cards, d.UUID)
			if i < 0 {
				continue
			}
			if c := &cards[i]; c.Geometry != nil {
				if gi, pos, err := c.Geometry.instanceOf(d.UUID); err == nil {
					if sign > 0 {
						c.MIG.Take(MIGChoice{Group: gi, Position: pos})
					} else {
						c.MIG.Release(pos)
					}
				}
			}
			cards[i].UsedShares += sign
			cards[i].UsedMemoryMiB += int64(sign) * d.MemoryMiB
			cards[i].UsedCores += sign * d.Cores
		}
	}
}

// Score rates a node for devices chosen on it (cards as they were before):
// binpack favours the cards fullest afterwards, spread the emptiest
// before; 0 to 100, the mean over the devices.
func Score(cards []CardState, devices [][]Device, policy string) float64 {
	if d, ok := onlyDevice(devices); ok {
		i := cardOf(cards, d.UUID)
		if i < 0 || cards[i].MemoryMiB == 0 || cards[i].Shares == 0 {
			return 0
		}
		c := &cards[i]
		switch policy {
		case Binpack:
			return 100 * float64(c.UsedMemoryMiB+d.MemoryMiB) / float64(c.MemoryMiB)
		case Spread:
			return 100 * (1 - float64(c.UsedShares)/float64(c.Shares))
		}
		return 0
	}
	var sum float64
	n := 0
	after := slices.Clone(cards)
	Hold(after, devices, 1)
	for _, devs := range devices {
		for _, d := range devs {
			i := cardOf(cards, d.UUID)
			if i < 0 || cards[i].MemoryMiB == 0 || cards[i].Shares == 0 {
				continue
			}
			n++
			switch policy {
			case Binpack:
				sum += 100 * float64(after[i].UsedMemoryMiB) / float64(cards[i].MemoryMiB)
			case Spread:
				sum += 100 * (1 - float64(cards[i].UsedShares)/float64(cards[i].Shares))
			}
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// cardOf is the index of the card a device is on (a MIG instance's id
// names its card), -1 when none of cards.
func cardOf(cards []CardState, id string) int {
	if uuid, _, _, ok := ParseMIGDeviceID(id); ok {
		id = uuid
	}
	return slices.IndexFunc(cards, func(c CardState) bool { return c.UUID == id })
}

// allocateOne is Allocate for the common case of one container asking for
// one share of a card that is not cut into MIG instances, without copying
// the cards: the best card by the policy. ok is false when the request is
// not that case, or no card fits (Allocate then says why).
func allocateOne(cards []CardState, reqs []Request, f Filter, policy string) ([][]Device, bool) {
	ci := -1
	for i, r := range reqs {
		switch {
		case r.Number == 0:
		case r.Number == 1 && ci < 0:
			ci = i
		default:
			return nil, false
		}
	}
	if ci < 0 {
		return nil, false
	}
	r := reqs[ci]
	best := -1
	for i := range cards {
		c := &cards[i]
		if c.Mode == ModeMIG || fits(c, r, f) != "" {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		if ahead(policy, c, &cards[best]) < 0 {
			best = i
		}
	}
	if best < 0 {
		return nil, false
	}
	c := &cards[best]
	out := make([][]Device, len(reqs))
	out[ci] = []Device{{UUID: c.UUID, Type: DeviceType, MemoryMiB: r.memoryOn(c.Card), Cores: r.Cores}}
	return out, true
}

// onlyDevice is the one device of devices, if there is exactly one.
func onlyDevice(devices [][]Device) (Device, bool) {
	var only Device
	n := 0
	for _, devs := range devices {
		for _, d := range devs {
			only = d
			n++
		}
	}
	return only, n == 1
}

// containsFold says whether sub is in s, in any case, without allocating.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}
