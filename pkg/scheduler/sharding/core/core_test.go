package core

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestDecide(t *testing.T) {
	busy := func(nodes ...string) func(string) bool {
		return func(n string) bool { return slices.Contains(nodes, n) }
	}
	for _, tc := range []struct {
		name string
		in   Input
		want Decision
		// placeable and not are nodes Placeable must accept and refuse.
		placeable, not []string
	}{
		{name: "no NodeShard: every node the others do not use",
			in:        Input{Others: []Shard{{Name: "b", InUse: []string{"n3", "n2"}, Desired: []string{"n9"}}}},
			want:      Decision{All: true, Excluded: []string{"n2", "n3"}},
			placeable: []string{"n1", "n9"}, not: []string{"n2", "n3"}},
		{name: "a new shard lists its free nodes in use, placing nothing yet",
			in:   Input{Settled: true, Own: &Shard{Name: "a", Desired: []string{"n2", "n1"}}},
			want: Decision{InUse: []string{"n1", "n2"}},
			not:  []string{"n1", "n2", "n3"}},
		{name: "once it sees its status, it places there",
			in:        Input{Settled: true, Own: &Shard{Name: "a", Desired: []string{"n2", "n1"}, InUse: []string{"n1", "n2"}}},
			want:      Decision{Place: []string{"n1", "n2"}, InUse: []string{"n1", "n2"}},
			placeable: []string{"n1", "n2"}, not: []string{"n3"}},
		{name: "a node another instance uses waits",
			in: Input{Settled: true, Own: &Shard{Name: "a", Desired: []string{"n1", "n2"}, InUse: []string{"n1"}},
				Others: []Shard{{Name: "b", Desired: []string{"n3"}, InUse: []string{"n2", "n3"}}}},
			want:      Decision{Place: []string{"n1"}, InUse: []string{"n1"}, ToAdd: []string{"n2"}},
			placeable: []string{"n1"}, not: []string{"n2", "n3"}},
		{name: "another instance's nodes to add are not taken",
			in: Input{Settled: true, Own: &Shard{Name: "a", Desired: []string{"n1"}, InUse: []string{"n1"}},
				Others: []Shard{{Name: "b", Desired: []string{"n1"}}}},
			want: Decision{Place: []string{"n1"}, InUse: []string{"n1"}}},
		{name: "a released node with no bind in flight goes at once",
			in:   Input{Settled: true, Own: &Shard{Name: "a", Desired: []string{"n1"}, InUse: []string{"n1", "n2"}}, Busy: busy("n1")},
			want: Decision{Place: []string{"n1"}, InUse: []string{"n1"}},
			not:  []string{"n2"}},
		{name: "a released node with binds in flight stays in use, placing nothing",
			in:   Input{Settled: true, Own: &Shard{Name: "a", Desired: []string{"n1"}, InUse: []string{"n1", "n2"}}, Busy: busy("n2")},
			want: Decision{Place: []string{"n1"}, InUse: []string{"n1", "n2"}, ToRemove: []string{"n2"}},
			not:  []string{"n2"}},
		{name: "both took a node at once: it is given up",
			in: Input{Settled: true, Own: &Shard{Name: "a", Desired: []string{"n1"}, InUse: []string{"n1"}},
				Others: []Shard{{Name: "b", Desired: []string{"n1"}, InUse: []string{"n1"}}}},
			want: Decision{ToAdd: []string{"n1"}},
			not:  []string{"n1"}},
		{name: "both took a node at once, with binds in flight: held, placing nothing",
			in: Input{Settled: true, Own: &Shard{Name: "a", Desired: []string{"n1"}, InUse: []string{"n1"}},
				Others: []Shard{{Name: "b", Desired: []string{"n1"}, InUse: []string{"n1"}}}, Busy: busy("n1")},
			want: Decision{InUse: []string{"n1"}, ToAdd: []string{"n1"}, ToRemove: []string{"n1"}},
			not:  []string{"n1"}},
		{name: "unsettled: a node newly listed in use waits for the write to be seen",
			in: Input{Own: &Shard{Name: "a", Desired: []string{"n1", "n2"}, InUse: []string{"n1", "n2"}},
				Placed: []string{"n1"}},
			want:      Decision{Place: []string{"n1"}, InUse: []string{"n1", "n2"}},
			placeable: []string{"n1"}, not: []string{"n2"}},
		{name: "unsettled: a node given up stays out though the status read still lists it",
			in: Input{Own: &Shard{Name: "a", Desired: []string{"n1", "n2"}, InUse: []string{"n1", "n2"}},
				Placed: []string{"n1"}},
			want: Decision{Place: []string{"n1"}, InUse: []string{"n1", "n2"}},
			not:  []string{"n2"}},
		{name: "unsettled: a node taken meanwhile leaves at once",
			in: Input{Own: &Shard{Name: "a", Desired: []string{"n1", "n2"}, InUse: []string{"n1", "n2"}},
				Others: []Shard{{Name: "b", InUse: []string{"n1"}}}, Placed: []string{"n1", "n2"}},
			want:      Decision{Place: []string{"n2"}, InUse: []string{"n2"}, ToAdd: []string{"n1"}},
			placeable: []string{"n2"}, not: []string{"n1"}},
		{name: "a stale instance's nodes are free",
			in: Input{Settled: true, Own: &Shard{Name: "a", Desired: []string{"n1", "n2"}, InUse: []string{"n1", "n2"}},
				Others: []Shard{{Name: "b", InUse: []string{"n2"}, Stale: true}, {Name: "c", InUse: []string{"n3"}, Stale: true}}},
			want:      Decision{Place: []string{"n1", "n2"}, InUse: []string{"n1", "n2"}},
			placeable: []string{"n1", "n2"}},
		{name: "no NodeShard: a stale instance's nodes are not excluded",
			in:        Input{Others: []Shard{{Name: "b", InUse: []string{"n2"}, Stale: true}, {Name: "c", InUse: []string{"n3"}}}},
			want:      Decision{All: true, Excluded: []string{"n3"}},
			placeable: []string{"n2"}, not: []string{"n3"}},
		{name: "lapsed: places nothing, still claims its nodes",
			in:   Input{Settled: true, Lapsed: true, Own: &Shard{Name: "a", Desired: []string{"n1"}, InUse: []string{"n1"}}},
			want: Decision{InUse: []string{"n1"}},
			not:  []string{"n1"}},
		{name: "an empty shard places nothing",
			in:   Input{Settled: true, Own: &Shard{Name: "a"}},
			want: Decision{},
			not:  []string{"n1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Decide(tc.in)
			if !equal(got, tc.want) {
				t.Fatalf("Decide = %+v, want %+v", got, tc.want)
			}
			for _, n := range tc.placeable {
				if !got.Placeable(n) {
					t.Errorf("%s is not placeable, want it placeable", n)
				}
			}
			for _, n := range tc.not {
				if got.Placeable(n) {
					t.Errorf("%s is placeable, want it not", n)
				}
			}
		})
	}
}

func equal(a, b Decision) bool {
	return a.All == b.All && slices.Equal(a.Excluded, b.Excluded) && slices.Equal(a.Place, b.Place) &&
		slices.Equal(a.InUse, b.InUse) && slices.Equal(a.ToAdd, b.ToAdd) && slices.Equal(a.ToRemove, b.ToRemove)
}

// TestNoNodeTwice drives three instances through random interleavings of
// spec changes (overlapping ones included), status writes seen late, and
// binds that take a while, and checks that no node is ever open to two
// instances at once, counting a node an instance still binds to as its
// own. Each instance sees the API server's history only up to a point of
// its own, which moves forward at random; writes are ordered as the API
// server orders them.
func TestNoNodeTwice(t *testing.T) {
	const instances, nodes, steps = 3, 5, 400
	name := func(i int) string { return fmt.Sprintf("i%d", i) }
	node := func(i int) string { return fmt.Sprintf("n%d", i) }
	for seed := range uint64(3000) {
		r := rand.New(rand.NewPCG(seed, 7))
		// The history: every write, in order; a write is one instance's
		// spec (desired) or status (in use).
		type write struct {
			who    int
			spec   bool
			values []string
		}
		var history []write
		type instance struct {
			seen      int // how much of history the instance sees
			lastWrite int // index+1 of its last status write; 0: none
			placed    []string
			binds     map[string]int
		}
		ins := make([]*instance, instances)
		for i := range ins {
			ins[i] = &instance{binds: map[string]int{}}
		}
		view := func(i int) Input {
			in := Input{Busy: func(n string) bool { return ins[i].binds[n] > 0 }, Placed: ins[i].placed}
			shards := make([]Shard, instances)
			haveSpec := make([]bool, instances)
			for k := range shards {
				shards[k].Name = name(k)
			}
			for _, w := range history[:ins[i].seen] {
				if w.spec {
					shards[w.who].Desired, haveSpec[w.who] = w.values, true
				} else {
					shards[w.who].InUse = w.values
				}
			}
			for k := range shards {
				switch {
				case k == i && haveSpec[k]:
					in.Own = &shards[k]
				case k != i:
					in.Others = append(in.Others, shards[k])
				}
			}
			in.Settled = ins[i].seen >= ins[i].lastWrite
			return in
		}
		for step := range steps {
			i := r.IntN(instances)
			me := ins[i]
			switch r.IntN(5) {
			case 0: // someone changes an instance's desired nodes
				var desired []string
				for n := range nodes {
					if r.IntN(3) == 0 {
						desired = append(desired, node(n))
					}
				}
				history = append(history, write{who: r.IntN(instances), spec: true, values: desired})
			case 1: // the instance sees more of the history
				me.seen += r.IntN(len(history) - me.seen + 1)
			case 2: // a bind finishes
				for n, c := range me.binds {
					if c > 0 {
						me.binds[n]--
						break
					}
				}
			case 3: // the instance places a pod
				if len(me.placed) > 0 {
					me.binds[me.placed[r.IntN(len(me.placed))]]++
				}
			default: // the instance syncs between cycles
				in := view(i)
				d := Decide(in)
				me.placed = d.Place
				// The status write carries the resourceVersion the
				// instance read: it fails if the NodeShard changed since.
				current := true
				for _, w := range history[me.seen:] {
					if w.who == i {
						current = false
					}
				}
				if in.Own != nil && current && !slices.Equal(in.Own.InUse, d.InUse) {
					history = append(history, write{who: i, values: d.InUse})
					me.lastWrite = len(history)
				}
			}
			// No node is open to, or bound to by, two instances.
			holders := map[string][]int{}
			for k, o := range ins {
				held := map[string]bool{}
				for _, n := range o.placed {
					held[n] = true
				}
				for n, c := range o.binds {
					if c > 0 {
						held[n] = true
					}
				}
				for n := range held {
					holders[n] = append(holders[n], k)
				}
			}
			for n, hs := range holders {
				if len(hs) > 1 {
					t.Fatalf("seed %d, step %d: node %s is held by instances %v", seed, step, n, hs)
				}
			}
		}
	}
}
