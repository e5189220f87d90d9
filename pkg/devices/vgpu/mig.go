package vgpu

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A card in MIG mode is cut into instances by one of the geometries its
// model allows. A geometry (a group) is a set of instance sizes with how
// many of each fit together; a card uses one group at a time, and a share
// takes a whole instance. The device configuration lists, per model, its
// groups in order (Volcano's knownMigGeometries).

// Instance is one instance size of a group and how many of it the group
// holds.
type Instance struct {
	// Name is NVIDIA's profile name, such as 1g.5gb.
	Name      string
	MemoryMiB int64
	Count     int
}

// Group is one geometry: the instances a card cut this way holds.
type Group struct {
	Name      string
	Instances []Instance
}

// slots is how many instances the group holds in all.
func (g Group) slots() int {
	n := 0
	for _, in := range g.Instances {
		n += in.Count
	}
	return n
}

// Geometry is the groups a card model allows, in the configuration's
// order.
type Geometry struct {
	// Models are parts of the card types it applies to.
	Models []string
	Groups []Group
}

// GeometryFor returns the first geometry one of whose models is part of
// the card's type.
func GeometryFor(geometries []Geometry, cardType string) (Geometry, bool) {
	if i := geometryIndex(geometries, cardType); i >= 0 {
		return geometries[i], true
	}
	return Geometry{}, false
}

// geometryIndex is the index of the first geometry for the card type, -1
// when none is.
func geometryIndex(geometries []Geometry, cardType string) int {
	return slices.IndexFunc(geometries, func(g Geometry) bool {
		return slices.ContainsFunc(g.Models, func(m string) bool { return strings.Contains(cardType, m) })
	})
}

// DefaultGeometries are the geometries Volcano's vGPU device
// configuration ships, for the A30 and the A100 of 40 and 80 GB: each
// model's groups from the smallest instances to one instance of the whole
// card.
func DefaultGeometries() []Geometry {
	return []Geometry{
		{Models: []string{"A30"}, Groups: []Group{
			{Name: "group1", Instances: []Instance{{"1g.6gb", 6144, 4}}},
			{Name: "group2", Instances: []Instance{{"2g.12gb", 12288, 2}}},
			{Name: "group3", Instances: []Instance{{"4g.24gb", 24576, 1}}},
		}},
		{Models: []string{"A100-SXM4-40GB", "A100-40GB-PCIe", "A100-PCIE-40GB"}, Groups: []Group{
			{Name: "group1", Instances: []Instance{{"1g.5gb", 5120, 7}}},
			{Name: "group2", Instances: []Instance{{"2g.10gb", 10240, 3}, {"1g.5gb", 5120, 1}}},
			{Name: "group3", Instances: []Instance{{"3g.20gb", 20480, 2}}},
			{Name: "group4", Instances: []Instance{{"7g.40gb", 40960, 1}}},
		}},
		{Models: []string{"A100-SXM4-80GB", "A100-80GB-PCIe", "A100-PCIE-80GB"}, Groups: []Group{
			{Name: "group1", Instances: []Instance{{"1g.10gb", 9728, 7}}},
			{Name: "group2", Instances: []Instance{{"2g.20gb", 19968, 3}, {"1g.10gb", 9728, 1}}},
			{Name: "group3", Instances: []Instance{{"3g.40gb", 40192, 2}}},
			{Name: "group4", Instances: []Instance{{"7g.80gb", 80896, 1}}},
		}},
	}
}

var defaultGeometries = DefaultGeometries()

// GeometryOf is the geometry of a card type among the configured ones
// (nil: the shipped ones), nil for a model without one. Shared: it must not
// be changed.
func GeometryOf(geometries []Geometry, cardType string) *Geometry {
	if geometries == nil {
		geometries = defaultGeometries
	}
	if i := geometryIndex(geometries, cardType); i >= 0 {
		return &geometries[i]
	}
	return nil
}

// MIGUsage is how a card is cut and which instances are taken: Taken has
// bit p set for each position p taken (a group's instances numbered in the
// configuration's order, each size's count in turn), and Group is the
// index of the group in use while any is. The zero value is an uncut
// card. It is a value: copies do not share.
type MIGUsage struct {
	Group int
	Taken uint64
}

// maxPositions bounds a group's instances (NVIDIA's cards have at most 7).
const maxPositions = 64

// Cut says whether any instance of the card is taken.
func (u MIGUsage) Cut() bool { return u.Taken != 0 }

func (u MIGUsage) taken(pos int) bool { return u.Taken&(1<<uint(pos)) != 0 }

// MIGChoice is an instance chosen for a share.
type MIGChoice struct {
	Group    int
	Position int
	Instance Instance
}

// PickInstance chooses the instance for a share of memMiB on a card of
// geometry g used as u: the smallest instance that holds the share (best
// fit), among every group while the card is uncut, else within the group
// in use; of equal sizes, the earlier group and the first free position.
func PickInstance(g Geometry, u MIGUsage, memMiB int64) (MIGChoice, bool) {
	var best MIGChoice
	found := false
	for gi, grp := range g.Groups {
		if u.Cut() && gi != u.Group {
			continue
		}
		start := 0
		for _, in := range grp.Instances {
			if in.MemoryMiB >= memMiB {
				for k := range in.Count {
					pos := start + k
					if pos >= maxPositions || u.taken(pos) {
						continue
					}
					c := MIGChoice{Group: gi, Position: pos, Instance: in}
					if !found || cmp.Compare(in.MemoryMiB, best.Instance.MemoryMiB) < 0 {
						best, found = c, true
					}
					break
				}
			}
			start += in.Count
		}
	}
	return best, found
}

// Take records the choice on the usage (Release undoes it).
func (u *MIGUsage) Take(c MIGChoice) {
	u.Group = c.Group
	u.Taken |= 1 << uint(c.Position)
}

// Release frees a position; a card with none taken is uncut again.
func (u *MIGUsage) Release(position int) {
	u.Taken &^= 1 << uint(position)
	if u.Taken == 0 {
		u.Group = 0
	}
}

// MIGDeviceID names an instance as the pod's devices do:
// uuid[group-position].
func MIGDeviceID(uuid string, g Geometry, c MIGChoice) string {
	return fmt.Sprintf("%s[%s-%d]", uuid, g.Groups[c.Group].Name, c.Position)
}

var migID = regexp.MustCompile(`^(.+)\[([^\[\]-]+)-([0-9]+)\]$`)

// ParseMIGDeviceID reads what MIGDeviceID writes: the card's uuid, the
// group's name and the position. ok is false for a whole-card device id.
func ParseMIGDeviceID(id string) (uuid, group string, position int, ok bool) {
	m := migID.FindStringSubmatch(id)
	if m == nil {
		return "", "", 0, false
	}
	p, err := strconv.Atoi(m[3])
	if err != nil {
		return "", "", 0, false
	}
	return m[1], m[2], p, true
}

// UsageOf rebuilds a card's usage from the instances its pods hold (their
// device ids' groups and positions). An instance of a group the geometry
// does not have, or of a second group, or past the group's instances, is
// an error naming it.
func UsageOf(g Geometry, held []string) (MIGUsage, error) {
	var u MIGUsage
	for _, id := range held {
		gi, pos, err := g.instanceOf(id)
		if err != nil {
			return u, err
		}
		if u.Cut() && u.Group != gi {
			return u, fmt.Errorf("device %q: the card is cut as %s already", id, g.Groups[u.Group].Name)
		}
		u.Take(MIGChoice{Group: gi, Position: pos})
	}
	return u, nil
}

// instanceOf reads an instance's device id against the geometry: the
// index of its group and its position, or why the id names no instance of
// it.
func (g Geometry) instanceOf(id string) (group, position int, err error) {
	_, name, pos, ok := ParseMIGDeviceID(id)
	if !ok {
		return 0, 0, fmt.Errorf("device %q names no MIG instance", id)
	}
	gi := slices.IndexFunc(g.Groups, func(x Group) bool { return x.Name == name })
	switch {
	case gi < 0:
		return 0, 0, fmt.Errorf("device %q: the card's geometry has no group %q", id, name)
	case pos >= g.Groups[gi].slots() || pos >= maxPositions:
		return 0, 0, fmt.Errorf("device %q: %s holds %d instances", id, name, g.Groups[gi].slots())
	}
	return gi, pos, nil
}
