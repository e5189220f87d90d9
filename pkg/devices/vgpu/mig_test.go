package vgpu

import (
	"strings"
	"testing"
)

func a100() Geometry {
	g, ok := GeometryFor(DefaultGeometries(), "NVIDIA-NVIDIA A100-SXM4-40GB")
	if !ok {
		panic("no A100-40GB geometry")
	}
	return g
}

func uncut() MIGUsage { return MIGUsage{} }

func TestGeometryFor(t *testing.T) {
	if g, ok := GeometryFor(DefaultGeometries(), "NVIDIA-NVIDIA A100-SXM4-80GB"); !ok || g.Groups[3].Instances[0].Name != "7g.80gb" {
		t.Errorf("A100-80GB: %+v, %v", g, ok)
	}
	if _, ok := GeometryFor(DefaultGeometries(), "NVIDIA-Tesla T4"); ok {
		t.Error("a T4 has a MIG geometry")
	}
}

func TestPickInstance(t *testing.T) {
	g := a100()
	for _, tc := range []struct {
		name    string
		usage   func() MIGUsage
		mem     int64
		want    string
		wantPos int
		none    bool
	}{
		{name: "a small share takes the smallest instance on an uncut card", usage: uncut, mem: 3000, want: "group1/1g.5gb", wantPos: 0},
		{name: "8 GB needs a 2g.10gb: the first group that has one", usage: uncut, mem: 8000, want: "group2/2g.10gb", wantPos: 0},
		{name: "15 GB takes a 3g.20gb", usage: uncut, mem: 15000, want: "group3/3g.20gb", wantPos: 0},
		{name: "the whole card", usage: uncut, mem: 40000, want: "group4/7g.40gb", wantPos: 0},
		{name: "more than the card", usage: uncut, mem: 50000, none: true},
		{name: "a cut card offers only its group's instances", usage: func() MIGUsage {
			var u MIGUsage
			u.Take(MIGChoice{Group: 1, Position: 0})
			return u
		}, mem: 3000, want: "group2/1g.5gb", wantPos: 3},
		{name: "the next free position of a size", usage: func() MIGUsage {
			var u MIGUsage
			u.Take(MIGChoice{Group: 1, Position: 0})
			u.Take(MIGChoice{Group: 1, Position: 1})
			return u
		}, mem: 8000, want: "group2/2g.10gb", wantPos: 2},
		{name: "a cut card with no instance left of the size", usage: func() MIGUsage {
			var u MIGUsage
			for p := range 3 {
				u.Take(MIGChoice{Group: 1, Position: p})
			}
			return u
		}, mem: 8000, none: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := PickInstance(g, tc.usage(), tc.mem)
			if tc.none {
				if ok {
					t.Fatalf("picked %+v, want none", c)
				}
				return
			}
			if !ok {
				t.Fatal("none picked")
			}
			if got := g.Groups[c.Group].Name + "/" + c.Instance.Name; got != tc.want || c.Position != tc.wantPos {
				t.Errorf("picked %s at %d, want %s at %d", got, c.Position, tc.want, tc.wantPos)
			}
		})
	}
}

func TestMIGDeviceIDAndUsage(t *testing.T) {
	g := a100()
	id := MIGDeviceID("GPU-0fc3", g, MIGChoice{Group: 1, Position: 3})
	if id != "GPU-0fc3[group2-3]" {
		t.Fatalf("id %q", id)
	}
	if uuid, group, pos, ok := ParseMIGDeviceID(id); !ok || uuid != "GPU-0fc3" || group != "group2" || pos != 3 {
		t.Errorf("parsed %q, %q, %d, %v", uuid, group, pos, ok)
	}
	if _, _, _, ok := ParseMIGDeviceID("GPU-0fc3"); ok {
		t.Error("a whole-card id parsed as an instance")
	}
	u, err := UsageOf(g, []string{"GPU-0fc3[group2-0]", "GPU-0fc3[group2-3]"})
	if err != nil || u.Group != 1 || u.Taken != 1<<0|1<<3 {
		t.Errorf("usage %+v, %v", u, err)
	}
	u.Release(0)
	u.Release(3)
	if u.Cut() {
		t.Errorf("a card with nothing taken is still cut: %+v", u)
	}
	for _, tc := range []struct {
		held []string
		want string
	}{
		{[]string{"GPU-0fc3[group9-0]"}, `no group "group9"`},
		{[]string{"GPU-0fc3[group1-0]", "GPU-0fc3[group3-0]"}, "cut as group1 already"},
		{[]string{"GPU-0fc3[group3-2]"}, "group3 holds 2 instances"},
		{[]string{"GPU-0fc3"}, "names no MIG instance"},
	} {
		if _, err := UsageOf(g, tc.held); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("UsageOf(%v) = %v, want %q", tc.held, err, tc.want)
		}
	}
}
