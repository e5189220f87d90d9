package core

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/labels"
)

func TestDecide(t *testing.T) {
	node := func(name string, u float64, lbls ...string) Node {
		l := map[string]string{}
		for i := 0; i+1 < len(lbls); i += 2 {
			l[lbls[i]] = lbls[i+1]
		}
		return Node{Name: name, Labels: l, Utilisation: u, Schedulable: true}
	}
	sel := func(s string) labels.Selector {
		l, err := labels.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	band := func(name string, lo, hi float64) Policy {
		return Policy{Name: name, Band: true, MinUtilisation: lo, MaxUtilisation: hi}
	}
	// Volcano's documented split: agents take busy nodes, the batch
	// scheduler the rest.
	split := []Policy{band("agents", 0.7, 1.0), band("volcano", 0, 0.69)}
	for _, tc := range []struct {
		name string
		in   Input
		want map[string][]string
	}{
		{name: "by labels, first matching shard",
			in: Input{Nodes: []Node{node("g1", 0, "gpu", "true"), node("c1", 0), node("g2", 0, "gpu", "true")},
				Policies: []Policy{{Name: "batch", Selector: sel("gpu=true")}, {Name: "agents", Selector: sel("!gpu")}}},
			want: map[string][]string{"batch": {"g1", "g2"}, "agents": {"c1"}}},
		{name: "by utilisation band",
			in:   Input{Nodes: []Node{node("a", 0.2), node("b", 0.75), node("c", 0.9), node("d", 0.69)}, Policies: split},
			want: map[string][]string{"agents": {"b", "c"}, "volcano": {"a", "d"}}},
		{name: "hysteresis keeps a node near the boundary where it is",
			in: Input{Nodes: []Node{node("a", 0.72), node("b", 0.72), node("c", 0.80)}, Policies: split,
				Current: map[string]string{"a": "volcano", "c": "volcano"}, Hysteresis: 0.05},
			want: map[string][]string{"agents": {"b", "c"}, "volcano": {"a"}}},
		{name: "cordoned and not-ready nodes go nowhere",
			in:   Input{Nodes: []Node{node("a", 0.2), {Name: "b", Utilisation: 0.2}}, Policies: split},
			want: map[string][]string{"agents": nil, "volcano": {"a"}}},
		{name: "a shard over its maximum keeps its current nodes, then preferred ones",
			in: Input{Nodes: []Node{node("a", 0.8), node("b", 0.8, "node.volcano.sh/warmup", "true"), node("c", 0.8), node("d", 0.9)},
				Policies: []Policy{{Name: "agents", Band: true, MinUtilisation: 0.7, MaxUtilisation: 1, MaxNodes: 2, Prefer: sel("node.volcano.sh/warmup=true")}, band("volcano", 0, 0.69)},
				Current:  map[string]string{"d": "agents"}},
			want: map[string][]string{"agents": {"b", "d"}, "volcano": nil}},
		{name: "a shard under its minimum borrows the nearest node from a shard above its own",
			in: Input{Nodes: []Node{node("a", 0.1), node("b", 0.6), node("c", 0.3)},
				Policies: []Policy{{Name: "agents", Band: true, MinUtilisation: 0.7, MaxUtilisation: 1, MinNodes: 1}, {Name: "volcano", Band: true, MaxUtilisation: 0.69, MinNodes: 2}}},
			want: map[string][]string{"agents": {"b"}, "volcano": {"a", "c"}}},
		{name: "no node to borrow: the minimum is not met",
			in: Input{Nodes: []Node{node("a", 0.1)},
				Policies: []Policy{{Name: "agents", Band: true, MinUtilisation: 0.7, MaxUtilisation: 1, MinNodes: 1}, {Name: "volcano", Band: true, MaxUtilisation: 0.69, MinNodes: 1}}},
			want: map[string][]string{"agents": nil, "volcano": {"a"}}},
		{name: "a dead shard's nodes go to the live shard nearest their band",
			in: Input{Nodes: []Node{node("a", 0.2), node("b", 0.8), node("c", 0.9)},
				Policies: []Policy{{Name: "agents", Band: true, MinUtilisation: 0.7, MaxUtilisation: 1, Dead: true}, band("volcano", 0, 0.69), band("idle", 0, 0.1)},
				Current:  map[string]string{"b": "agents", "c": "agents", "a": "volcano"}},
			want: map[string][]string{"agents": nil, "volcano": {"a", "b", "c"}, "idle": nil}},
		{name: "a dead shard's nodes go to the live shard with room and the fewest nodes",
			in: Input{Nodes: []Node{node("a", 0, "pool", "x"), node("b", 0, "pool", "y"), node("c", 0, "pool", "y"), node("d", 0, "pool", "z")},
				Policies: []Policy{{Name: "x", Selector: sel("pool=x"), MaxNodes: 1}, {Name: "y", Selector: sel("pool=y"), Dead: true}, {Name: "z", Selector: sel("pool=z")}},
				Current:  map[string]string{"b": "y", "c": "y"}},
			want: map[string][]string{"x": {"a"}, "y": nil, "z": {"b", "c", "d"}}},
		{name: "an adopted node stays with the shard that adopted it while its own is dead",
			in: Input{Nodes: []Node{node("a", 0, "pool", "y"), node("z1", 0, "pool", "z")},
				Policies: []Policy{{Name: "x", Selector: sel("pool=x")}, {Name: "y", Selector: sel("pool=y"), Dead: true}, {Name: "z", Selector: sel("pool=z")}},
				Current:  map[string]string{"a": "z"}},
			want: map[string][]string{"x": nil, "y": nil, "z": {"a", "z1"}}},
		{name: "an unassigned node is borrowed before another shard's",
			in: Input{Nodes: []Node{node("a", 0.5), node("b", 0.5, "pool", "x")},
				Policies: []Policy{{Name: "batch", Selector: sel("pool=y"), MinNodes: 1}, {Name: "agents", Selector: sel("pool=x")}}},
			want: map[string][]string{"batch": {"a"}, "agents": {"b"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Decide(tc.in)); diff != "" {
				t.Errorf("Decide (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestDecideProperties: over random clusters and policies, a node is in at
// most one shard, never when it is not schedulable, no shard is over its
// maximum, and the same input gives the same answer.
func TestDecideProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 2000 {
		var in Input
		for i := range r.IntN(12) {
			n := Node{Name: fmt.Sprintf("n%02d", i), Utilisation: r.Float64() * 1.1, Schedulable: r.IntN(6) > 0,
				Labels: map[string]string{"pool": fmt.Sprint(r.IntN(3))}}
			in.Nodes = append(in.Nodes, n)
		}
		for i := range 1 + r.IntN(3) {
			p := Policy{Name: fmt.Sprintf("s%d", i), MinNodes: r.IntN(3), MaxNodes: r.IntN(4), Dead: r.IntN(4) == 0}
			if r.IntN(2) == 0 {
				p.Selector = labels.SelectorFromSet(labels.Set{"pool": fmt.Sprint(r.IntN(3))})
			} else {
				lo := r.Float64()
				p.Band, p.MinUtilisation, p.MaxUtilisation = true, lo, lo+r.Float64()*0.5
			}
			in.Policies = append(in.Policies, p)
		}
		in.Current = map[string]string{}
		for _, n := range in.Nodes {
			if r.IntN(2) == 0 {
				in.Current[n.Name] = fmt.Sprintf("s%d", r.IntN(3))
			}
		}
		in.Hysteresis = r.Float64() * 0.1
		got := Decide(in)
		if again := Decide(in); !cmp.Equal(got, again) {
			t.Fatalf("round %d: two answers for one input: %v and %v", round, got, again)
		}
		schedulable := map[string]bool{}
		for _, n := range in.Nodes {
			schedulable[n.Name] = n.Schedulable
		}
		seen := map[string]string{}
		for _, p := range in.Policies {
			nodes := got[p.Name]
			if p.Dead && len(nodes) > 0 {
				t.Fatalf("round %d: dead shard %s holds %v", round, p.Name, nodes)
			}
			if p.MaxNodes > 0 && len(nodes) > p.MaxNodes {
				t.Fatalf("round %d: shard %s holds %d nodes, at most %d", round, p.Name, len(nodes), p.MaxNodes)
			}
			for _, n := range nodes {
				if !schedulable[n] {
					t.Fatalf("round %d: unschedulable node %s is in shard %s", round, n, p.Name)
				}
				if other, ok := seen[n]; ok {
					t.Fatalf("round %d: node %s is in shards %s and %s", round, n, other, p.Name)
				}
				seen[n] = p.Name
			}
		}
	}
}
