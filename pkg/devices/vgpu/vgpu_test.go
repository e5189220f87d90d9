package vgpu

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const twoA100 = "GPU-aaaa,10,40960,NVIDIA-NVIDIA A100-SXM4-40GB,true,hami-core:GPU-bbbb,10,40960,NVIDIA-NVIDIA A100-SXM4-40GB,true,hami-core:"

func TestRegistration(t *testing.T) {
	cards, err := ParseRegistration(twoA100)
	if err != nil {
		t.Fatal(err)
	}
	want := []Card{
		{UUID: "GPU-aaaa", Shares: 10, MemoryMiB: 40960, Type: "NVIDIA-NVIDIA A100-SXM4-40GB", Healthy: true, Mode: ModeHAMiCore},
		{UUID: "GPU-bbbb", Shares: 10, MemoryMiB: 40960, Type: "NVIDIA-NVIDIA A100-SXM4-40GB", Healthy: true, Mode: ModeHAMiCore},
	}
	if diff := cmp.Diff(want, cards); diff != "" {
		t.Fatalf("cards (-want,+got):\n%s", diff)
	}
	if got := FormatRegistration(cards); got != twoA100 {
		t.Errorf("written back as %q", got)
	}
	if c, err := ParseRegistration("GPU-x,4,16384,NVIDIA-T4,false,turbo:"); err != nil || c[0].Mode != ModeHAMiCore || c[0].Healthy {
		t.Errorf("unknown mode and unhealthy card: %+v, %v", c, err)
	}
	for _, tc := range []struct{ in, want string }{
		{"GPU-x,10,100,NVIDIA-T4,true:", "card 0: 5 fields, want 6"},
		{"GPU-x,ten,100,NVIDIA-T4,true,hami-core:", `card 0 (GPU-x): count "ten" is not a number of shares`},
		{"GPU-x,10,-1,NVIDIA-T4,true,hami-core:", `memory "-1" is not a number of MiB`},
		{"GPU-x,10,100,NVIDIA-T4,yes,hami-core:", `health "yes" is not true or false`},
		{",10,100,NVIDIA-T4,true,hami-core:", "card 0: empty uuid"},
	} {
		if _, err := ParseRegistration(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseRegistration(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestPodDevices(t *testing.T) {
	const encoded = "GPU-aaaa,NVIDIA,3000,50:GPU-bbbb,NVIDIA,3000,50:;GPU-cccc,NVIDIA,1024,0:"
	devs, err := DecodePod(encoded)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]Device{
		{{UUID: "GPU-aaaa", Type: "NVIDIA", MemoryMiB: 3000, Cores: 50}, {UUID: "GPU-bbbb", Type: "NVIDIA", MemoryMiB: 3000, Cores: 50}},
		{{UUID: "GPU-cccc", Type: "NVIDIA", MemoryMiB: 1024}},
	}
	if diff := cmp.Diff(want, devs); diff != "" {
		t.Fatalf("devices (-want,+got):\n%s", diff)
	}
	if got := EncodePod(devs); got != encoded {
		t.Errorf("encoded as %q, want %q", got, encoded)
	}
	for _, bad := range []string{"GPU-a,NVIDIA,3000:", "GPU-a,NVIDIA,lots,0:", "GPU-a,NVIDIA,1,half:"} {
		if _, err := DecodePod(bad); err == nil {
			t.Errorf("DecodePod(%q) read", bad)
		}
	}
}

func TestNewRequest(t *testing.T) {
	for _, tc := range []struct {
		number, memory, percent, cores int64
		want                           Request
	}{
		{2, 3000, 0, 50, Request{Number: 2, MemoryMiB: 3000, Cores: 50}},
		{0, 3000, 0, 0, Request{Number: 1, MemoryMiB: 3000}},
		{1, 0, 0, 0, Request{Number: 1, MemoryPercent: 100}},
		{1, 0, 25, 0, Request{Number: 1, MemoryPercent: 25}},
	} {
		if got := NewRequest(tc.number, tc.memory, tc.percent, tc.cores); got != tc.want {
			t.Errorf("NewRequest(%d, %d, %d, %d) = %+v, want %+v", tc.number, tc.memory, tc.percent, tc.cores, got, tc.want)
		}
	}
}

// cards is a node of n 16,000 MiB cards of 4 shares each, card i holding
// used[i] shares of 4,000 MiB and 25% each.
func cards(n int, used ...int) []CardState {
	out := make([]CardState, n)
	for i := range out {
		out[i] = CardState{Card: Card{UUID: "GPU-" + string(rune('a'+i)), Shares: 4, MemoryMiB: 16000, Type: "NVIDIA-T4", Healthy: true, Mode: ModeHAMiCore}}
		if i < len(used) {
			out[i].UsedShares, out[i].UsedMemoryMiB, out[i].UsedCores = used[i], int64(used[i])*4000, used[i]*25
		}
	}
	return out
}

func uuids(devs [][]Device) [][]string {
	var out [][]string
	for _, c := range devs {
		var u []string
		for _, d := range c {
			u = append(u, d.UUID)
		}
		out = append(out, u)
	}
	return out
}

func TestAllocate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cards  []CardState
		reqs   []Request
		filter Filter
		policy string
		want   [][]string
		reason string
	}{
		{name: "binpack takes the fullest card", cards: cards(3, 1, 2, 0), reqs: []Request{{Number: 1, MemoryMiB: 4000}},
			policy: Binpack, want: [][]string{{"GPU-b"}}},
		{name: "spread takes the emptiest card", cards: cards(3, 1, 2, 0), reqs: []Request{{Number: 1, MemoryMiB: 4000}},
			policy: Spread, want: [][]string{{"GPU-c"}}},
		{name: "shares of one container go to different cards", cards: cards(2), reqs: []Request{{Number: 2, MemoryMiB: 1000}},
			policy: Binpack, want: [][]string{{"GPU-a", "GPU-b"}}},
		{name: "a later container sees the earlier one's share", cards: cards(2, 3), reqs: []Request{{Number: 1, MemoryMiB: 4000}, {Number: 1, MemoryMiB: 4000}},
			policy: Binpack, want: [][]string{{"GPU-a"}, {"GPU-b"}}},
		{name: "no more shares than the card takes", cards: cards(1, 4), reqs: []Request{{Number: 1, MemoryMiB: 1}},
			reason: "container 0: 0 of 1 vGPUs found a card with 1 MiB and 0% of its cores free"},
		{name: "cores add up to 100 at most", cards: cards(1, 3), reqs: []Request{{Number: 1, MemoryMiB: 1, Cores: 30}},
			reason: "and 30% of its cores free"},
		{name: "a 100% share needs an empty card", cards: cards(2, 1), reqs: []Request{{Number: 1, MemoryMiB: 1, Cores: 100}},
			policy: Binpack, want: [][]string{{"GPU-b"}}},
		{name: "a percentage of the card's memory", cards: cards(2, 2), reqs: []Request{{Number: 1, MemoryPercent: 75}},
			policy: Binpack, want: [][]string{{"GPU-b"}}},
		{name: "no memory asked is the whole card", cards: cards(2, 1), reqs: []Request{NewRequest(1, 0, 0, 0)},
			policy: Binpack, want: [][]string{{"GPU-b"}}},
		{name: "more shares than cards", cards: cards(2), reqs: []Request{{Number: 3, MemoryMiB: 1}},
			reason: "container 0 asks for 3 vGPUs, the node has 2 cards"},
		{name: "the pod's card types", cards: append(cards(1), CardState{Card: Card{UUID: "GPU-v", Shares: 4, MemoryMiB: 32000, Type: "NVIDIA-Tesla V100", Healthy: true, Mode: ModeHAMiCore}}),
			reqs: []Request{{Number: 1, MemoryMiB: 1}}, filter: Filter{UseTypes: []string{"v100"}}, want: [][]string{{"GPU-v"}}},
		{name: "a refused UUID wins over an allowed one", cards: cards(2), reqs: []Request{{Number: 1, MemoryMiB: 1}},
			filter: Filter{UseUUIDs: []string{"GPU-a", "GPU-b"}, NoUseUUIDs: []string{"GPU-a"}}, want: [][]string{{"GPU-b"}}},
		{name: "the pod's mode", cards: cards(1), reqs: []Request{{Number: 1, MemoryMiB: 1}}, filter: Filter{Mode: ModeMIG},
			reason: "0 of 1 vGPUs"},
		{name: "a MIG card of a model with no geometry is passed over", cards: func() []CardState { c := cards(2); c[0].Mode = ModeMIG; return c }(),
			reqs: []Request{{Number: 1, MemoryMiB: 1}}, want: [][]string{{"GPU-b"}}},
		{name: "unhealthy cards are not given", cards: func() []CardState { c := cards(2); c[0].Healthy = false; return c }(),
			reqs: []Request{{Number: 1, MemoryMiB: 1}}, want: [][]string{{"GPU-b"}}},
		{name: "containers asking for nothing get nothing", cards: cards(1), reqs: []Request{{}, {Number: 1, MemoryMiB: 1}},
			want: [][]string{nil, {"GPU-a"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := cards(0)
			before = append(before, tc.cards...)
			got, reason := Allocate(tc.cards, tc.reqs, tc.filter, tc.policy)
			if tc.reason != "" {
				if got != nil || !strings.Contains(reason, tc.reason) {
					t.Fatalf("Allocate = %v, %q; want refused with %q", uuids(got), reason, tc.reason)
				}
				return
			}
			if reason != "" {
				t.Fatalf("refused: %s", reason)
			}
			if diff := cmp.Diff(tc.want, uuids(got)); diff != "" {
				t.Errorf("devices (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.cards); diff != "" {
				t.Errorf("Allocate changed the cards (-before,+after):\n%s", diff)
			}
		})
	}
}

func TestHoldAndScore(t *testing.T) {
	c := cards(2, 2)
	devs := [][]Device{{{UUID: "GPU-a", MemoryMiB: 4000, Cores: 25}}}
	if got := Score(c, devs, Binpack); got != 75 {
		t.Errorf("binpack score %v, want 75 (12,000 of 16,000 MiB after)", got)
	}
	if got := Score(c, devs, Spread); got != 50 {
		t.Errorf("spread score %v, want 50 (2 of 4 shares taken before)", got)
	}
	Hold(c, devs, 1)
	if c[0].UsedShares != 3 || c[0].UsedMemoryMiB != 12000 || c[0].UsedCores != 75 {
		t.Errorf("after Hold: %+v", c[0])
	}
	Hold(c, devs, -1)
	if diff := cmp.Diff(cards(2, 2), c); diff != "" {
		t.Errorf("Hold then release changed the cards:\n%s", diff)
	}
}

// migCards is a node of n A100-40GB cards in MIG mode, uncut.
func migCards(n int) []CardState {
	out := make([]CardState, n)
	for i := range out {
		typ := "NVIDIA-NVIDIA A100-SXM4-40GB"
		out[i] = CardState{Card: Card{UUID: "GPU-m" + string(rune('0'+i)), Shares: 7, MemoryMiB: 40960, Type: typ, Healthy: true, Mode: ModeMIG},
			Geometry: GeometryOf(nil, typ)}
	}
	return out
}

// TestAllocateMIG: a share of a MIG card is an instance cut to its size;
// a cut card offers only its group's instances; the holds follow the
// instance ids.
func TestAllocateMIG(t *testing.T) {
	cards := migCards(2)
	devs, reason := Allocate(cards, []Request{{Number: 1, MemoryMiB: 3000}, {Number: 1, MemoryMiB: 8000}}, Filter{Mode: ModeMIG}, Binpack)
	if reason != "" {
		t.Fatal(reason)
	}
	want := [][]Device{
		{{UUID: "GPU-m0[group1-0]", Type: DeviceType, MemoryMiB: 5120}},
		// The first card is cut as group1 now (1g.5gb only): 8 GB goes to
		// the second, as a 2g.10gb of group2.
		{{UUID: "GPU-m1[group2-0]", Type: DeviceType, MemoryMiB: 10240}},
	}
	if diff := cmp.Diff(want, devs); diff != "" {
		t.Fatalf("devices (-want,+got):\n%s", diff)
	}
	Hold(cards, devs, 1)
	if cards[0].MIG != (MIGUsage{Group: 0, Taken: 1}) || cards[1].MIG != (MIGUsage{Group: 1, Taken: 1}) || cards[0].UsedMemoryMiB != 5120 {
		t.Errorf("after the hold: %+v / %+v", cards[0], cards[1])
	}
	// 20 GB fits neither cut card's group.
	if _, reason := Allocate(cards, []Request{{Number: 1, MemoryMiB: 20000}}, Filter{}, Binpack); reason == "" {
		t.Error("20 GB placed on cards cut as group1 and group2")
	}
	Hold(cards, devs, -1)
	if cards[0].MIG.Cut() || cards[1].MIG.Cut() || cards[1].UsedShares != 0 {
		t.Errorf("after the release: %+v / %+v", cards[0], cards[1])
	}
	if devs, reason := Allocate(cards, []Request{{Number: 1, MemoryMiB: 20000}}, Filter{}, Binpack); reason != "" || devs[0][0].UUID != "GPU-m0[group3-0]" {
		t.Errorf("20 GB on uncut cards: %v, %q; want a 3g.20gb", devs, reason)
	}
}
