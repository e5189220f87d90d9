// Package core decides which nodes each scheduler instance's NodeShard
// should hold (spec.nodesDesired), from the nodes' labels and utilisation
// and the shards' policies. It is pure: the sharding controller feeds it
// the nodes and the NodeShards it watches, and writes back the desired
// nodes it returns. What the instances actually use, and when a node moves,
// is theirs to settle (pkg/scheduler/sharding).
//
// Each shard has a policy (Volcano's sharding controller's names in
// brackets):
//   - a node label selector: the nodes it matches;
//   - a band of CPU utilisation [cpu-utilization-min, cpu-utilization-max]
//     (requests over allocatable): the nodes whose utilisation is in it. A
//     node stays in its current shard while its utilisation is within the
//     band widened by the hysteresis, so that a node near a boundary does
//     not move back and forth;
//   - optionally a label the shard prefers when it picks among nodes
//     (prefer-warmup-nodes: node.volcano.sh/warmup=true);
//   - bounds on its size [min-nodes, max-nodes].
//
// Shards are considered in order: a node goes to the first shard whose
// policy takes it (its current shard first, within the hysteresis). A
// shard over max-nodes keeps its current nodes first, then the preferred,
// then by name, and drops the rest; a shard under min-nodes takes nodes
// from shards above their own minimum, the ones nearest its band first.
//
// A shard whose scheduler instance is gone (Dead: its status not renewed)
// takes nothing; its nodes that no live shard's policy takes go to the live
// shard with room whose band is nearest (then the one with the fewest
// nodes), so that they keep being used. They come back once the instance
// does.
package core

import (
	"cmp"
	"math"
	"slices"

	"k8s.io/apimachinery/pkg/labels"
)

// Node is what the policies read of a node.
type Node struct {
	Name   string
	Labels map[string]string
	// Utilisation is the CPU requested by its pods over its allocatable,
	// 0 to 1 (more when overcommitted).
	Utilisation float64
	// Schedulable is false for a cordoned or not-ready node, which no
	// shard takes.
	Schedulable bool
}

// Policy is one shard's.
type Policy struct {
	// Name is the NodeShard's (the scheduler instance's).
	Name string
	// Selector, when set, takes the nodes it matches.
	Selector labels.Selector
	// MinUtilisation and MaxUtilisation, when Band is set, take the nodes
	// whose utilisation lies between them (inclusive).
	Band                           bool
	MinUtilisation, MaxUtilisation float64
	// Prefer, when set, ranks the nodes it matches first when the shard
	// picks among nodes.
	Prefer labels.Selector
	// MinNodes and MaxNodes bound the shard's size; MaxNodes 0 is no
	// bound, and MaxNodes wins over a larger MinNodes.
	MinNodes, MaxNodes int
	// Dead: the shard's scheduler instance is gone; the shard takes no
	// node.
	Dead bool
}

// Input is what the assignment is decided from.
type Input struct {
	Nodes    []Node
	Policies []Policy
	// Current is each node's shard now ("" or absent: none).
	Current map[string]string
	// Hysteresis widens a band for the nodes already in the shard.
	Hysteresis float64
}

// Decide returns each shard's desired nodes, sorted by name, one entry per
// policy (empty shards included).
func Decide(in Input) map[string][]string {
	byName := map[string]*Node{}
	for i := range in.Nodes {
		byName[in.Nodes[i].Name] = &in.Nodes[i]
	}
	assigned := map[string]string{}
	members := map[string][]string{}
	for _, p := range in.Policies {
		members[p.Name] = nil
	}
	takes := func(p Policy, n *Node, current bool) bool {
		return !p.Dead && policyTakes(p, n, current, in.Hysteresis)
	}
	names := make([]string, 0, len(in.Nodes))
	for _, n := range in.Nodes {
		names = append(names, n.Name)
	}
	slices.Sort(names)
	for _, name := range names {
		n := byName[name]
		if !n.Schedulable {
			continue
		}
		cur := in.Current[name]
		if i := slices.IndexFunc(in.Policies, func(p Policy) bool { return p.Name == cur }); i >= 0 && takes(in.Policies[i], n, true) {
			assigned[name] = cur
			continue
		}
		for _, p := range in.Policies {
			if takes(p, n, false) {
				assigned[name] = p.Name
				break
			}
		}
	}
	for name, s := range assigned {
		members[s] = append(members[s], name)
	}
	policy := map[string]Policy{}
	for _, p := range in.Policies {
		policy[p.Name] = p
	}
	// rank orders a shard's nodes by how much it wants to keep them:
	// current first, then preferred, then by name.
	rank := func(p Policy, nodes []string) {
		key := func(name string) int {
			k := 0
			if in.Current[name] != p.Name {
				k += 2
			}
			if p.Prefer == nil || !p.Prefer.Matches(labels.Set(byName[name].Labels)) {
				k++
			}
			return k
		}
		slices.SortFunc(nodes, func(a, b string) int {
			return cmp.Or(cmp.Compare(key(a), key(b)), cmp.Compare(a, b))
		})
	}
	for _, p := range in.Policies {
		if p.MaxNodes > 0 && len(members[p.Name]) > p.MaxNodes {
			rank(p, members[p.Name])
			for _, name := range members[p.Name][p.MaxNodes:] {
				delete(assigned, name)
			}
			members[p.Name] = members[p.Name][:p.MaxNodes]
		}
	}
	for _, p := range in.Policies {
		for !p.Dead && len(members[p.Name]) < p.MinNodes && (p.MaxNodes == 0 || len(members[p.Name]) < p.MaxNodes) {
			name, from := borrow(p, byName, members, policy, assigned)
			if name == "" {
				break
			}
			if from != "" {
				members[from] = slices.DeleteFunc(members[from], func(n string) bool { return n == name })
			}
			assigned[name] = p.Name
			members[p.Name] = append(members[p.Name], name)
		}
	}
	adoptOrphans(in, byName, names, assigned, members)
	for s := range members {
		slices.Sort(members[s])
	}
	return members
}

// policyTakes reports whether p's policy takes node n; current widens a
// band by the hysteresis.
func policyTakes(p Policy, n *Node, current bool, hysteresis float64) bool {
	switch {
	case p.Selector != nil:
		return p.Selector.Matches(labels.Set(n.Labels))
	case p.Band:
		margin := 0.0
		if current {
			margin = hysteresis
		}
		return n.Utilisation >= p.MinUtilisation-margin && n.Utilisation <= p.MaxUtilisation+margin
	}
	return false
}

// adoptOrphans gives the nodes a dead shard's policy would take, and no
// live shard took, to a live shard with room: the one that has it now if
// any (so that an adopted node stays put), else the one nearest its
// utilisation, then with the fewest nodes, then first in order.
func adoptOrphans(in Input, nodes map[string]*Node, names []string, assigned map[string]string, members map[string][]string) {
	var dead []Policy
	for _, p := range in.Policies {
		if p.Dead {
			dead = append(dead, p)
		}
	}
	if len(dead) == 0 {
		return
	}
	for _, name := range names {
		n := nodes[name]
		if !n.Schedulable || assigned[name] != "" || !slices.ContainsFunc(dead, func(p Policy) bool {
			return policyTakes(p, n, in.Current[name] == p.Name, in.Hysteresis)
		}) {
			continue
		}
		best, bestDist := -1, math.Inf(1)
		for i, p := range in.Policies {
			if p.Dead || p.MaxNodes > 0 && len(members[p.Name]) >= p.MaxNodes {
				continue
			}
			if in.Current[name] == p.Name {
				best = i
				break
			}
			d := distance(p, n)
			if best < 0 || d < bestDist || d == bestDist && len(members[p.Name]) < len(members[in.Policies[best].Name]) {
				best, bestDist = i, d
			}
		}
		if best >= 0 {
			p := in.Policies[best].Name
			assigned[name] = p
			members[p] = append(members[p], name)
		}
	}
}

// distance is how far a node's utilisation lies outside p's band; 0 for a
// selector policy.
func distance(p Policy, n *Node) float64 {
	if !p.Band {
		return 0
	}
	switch {
	case n.Utilisation < p.MinUtilisation:
		return p.MinUtilisation - n.Utilisation
	case n.Utilisation > p.MaxUtilisation:
		return n.Utilisation - p.MaxUtilisation
	}
	return 0
}

// borrow picks a node for shard p, under its minimum: an unassigned
// schedulable node or one of a shard above its own minimum, the nearest to
// p's band first (for a selector policy, any), preferred nodes first, then
// by name. It returns "" when there is none.
func borrow(p Policy, nodes map[string]*Node, members map[string][]string, policy map[string]Policy, assigned map[string]string) (name, from string) {
	best, bestDist, bestPref := "", math.Inf(1), false
	for nn, n := range nodes {
		if !n.Schedulable {
			continue
		}
		owner := assigned[nn]
		if owner == p.Name || owner != "" && len(members[owner]) <= policy[owner].MinNodes {
			continue
		}
		d := distance(p, n)
		pref := p.Prefer != nil && p.Prefer.Matches(labels.Set(n.Labels))
		better := d < bestDist || d == bestDist && pref && !bestPref || d == bestDist && pref == bestPref && nn < best
		if best == "" || better {
			best, bestDist, bestPref, from = nn, d, pref, owner
		}
	}
	return best, from
}
