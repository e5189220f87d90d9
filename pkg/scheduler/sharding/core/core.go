// Package core decides which nodes a scheduler instance places pods on
// when several instances share a cluster through NodeShards
// (shard.volcano.sh/v1alpha1). It is pure: the scheduler's shell feeds it
// the NodeShards it watches and what its binder has in flight, and writes
// back the status it returns.
//
// The rules keep two instances off one node at once:
//   - a desired node joins the instance's nodes only when no other
//     instance lists it in use; until then it waits in nodesToAdd;
//   - a node no longer desired leaves at once for new placements, but
//     stays listed in use (and in nodesToRemove) while binds the instance
//     started there are in flight, so that the next owner sees those pods
//     before it places anything there;
//   - a node joins the nodes placements may go to only once the instance
//     sees its own last status write (settled) listing the node in use,
//     and still sees no other instance list it: the instance's view then
//     holds every status written before its own, so of two instances that
//     took a node at once the later writer sees the earlier, and neither
//     places there until one has given it up. Until its last write is
//     seen, the nodes placements may go to only shrink;
//   - a node this instance lists in use that another instance lists too
//     (both took it at once) is given up;
//   - an instance renews its status every HeartbeatPeriod and places
//     nothing once it has failed to for RenewDeadline; the others take the
//     nodes of an instance whose status they have not seen renewed for
//     StaleAfter, which is longer than RenewDeadline plus the longest bind
//     an instance may still have in flight when it stops placing.
package core

import (
	"slices"
	"time"
)

// Liveness of an instance's status (see the package comment).
const (
	HeartbeatPeriod = 10 * time.Second
	RenewDeadline   = 30 * time.Second
	// StaleAfter is RenewDeadline, plus the binder's default timeout
	// (30s) for a bind already in flight, plus a margin.
	StaleAfter = 75 * time.Second
)

// Shard is one NodeShard as the coordinator reads it.
type Shard struct {
	Name string
	// Desired is spec.nodesDesired.
	Desired []string
	// InUse is status.nodesInUse.
	InUse []string
	// Stale: the instance has not renewed the status for StaleAfter (it
	// is gone); its nodes in use are free.
	Stale bool
}

// Input is what the coordinator of one instance decides from.
type Input struct {
	// Own is the instance's NodeShard; nil when it does not exist.
	Own *Shard
	// Others are the other NodeShards.
	Others []Shard
	// Busy reports whether the instance has binds in flight to a node.
	Busy func(node string) bool
	// Settled is true when Own's status is the instance's last status
	// write (or a later version of the object): the instance has seen
	// every status written before its own.
	Settled bool
	// Placed is the previous decision's Place (sorted), which an
	// unsettled decision only shrinks.
	Placed []string
	// Lapsed: the instance has not renewed its own status for
	// RenewDeadline; it places nothing until it does.
	Lapsed bool
}

// Decision is the nodes the instance places pods on and the status it
// writes.
type Decision struct {
	// All is true when the instance's NodeShard does not exist: the
	// instance uses every node no other instance lists in use (Excluded),
	// and writes no status.
	All      bool
	Excluded []string
	// Place are the nodes new placements may go to (sorted): desired,
	// listed in use by no other instance, and listed in use in the
	// instance's own status as it reads it.
	Place []string
	// InUse, ToAdd and ToRemove are the status to write (sorted). InUse
	// are the desired nodes no other instance lists in use, and the
	// released nodes with binds in flight, which are ToRemove.
	InUse, ToAdd, ToRemove []string
}

// Decide computes the instance's nodes from its shard and the others'.
func Decide(in Input) Decision {
	taken := map[string]bool{}
	for _, o := range in.Others {
		if o.Stale {
			continue
		}
		for _, n := range o.InUse {
			taken[n] = true
		}
	}
	if in.Own == nil {
		d := Decision{All: true}
		for n := range taken {
			d.Excluded = append(d.Excluded, n)
		}
		slices.Sort(d.Excluded)
		return d
	}
	busy := in.Busy
	if busy == nil {
		busy = func(string) bool { return false }
	}
	desired := map[string]bool{}
	for _, n := range in.Own.Desired {
		desired[n] = true
	}
	placed := func(n string) bool {
		_, ok := slices.BinarySearch(in.Placed, n)
		return ok
	}
	used := map[string]bool{}
	for _, n := range in.Own.InUse {
		used[n] = true
	}
	var d Decision
	for n := range desired {
		switch {
		case !taken[n]:
			d.InUse = append(d.InUse, n)
			if in.Lapsed {
				continue
			}
			if in.Settled && used[n] || !in.Settled && placed(n) {
				d.Place = append(d.Place, n)
			}
		default:
			d.ToAdd = append(d.ToAdd, n)
			// Taken by another instance while this one uses it too:
			// given up, but held while binds are in flight there.
			if used[n] && busy(n) {
				d.ToRemove = append(d.ToRemove, n)
			}
		}
	}
	for n := range used {
		if !desired[n] && busy(n) {
			d.ToRemove = append(d.ToRemove, n)
		}
	}
	d.InUse = append(d.InUse, d.ToRemove...)
	for _, l := range [][]string{d.Place, d.InUse, d.ToAdd, d.ToRemove} {
		slices.Sort(l)
	}
	return d
}

// Placeable reports whether the decision lets new placements go to node.
func (d Decision) Placeable(node string) bool {
	if d.All {
		_, excluded := slices.BinarySearch(d.Excluded, node)
		return !excluded
	}
	_, ok := slices.BinarySearch(d.Place, node)
	return ok
}

// StatusEqual reports whether a status already says what the decision
// would write.
func (d Decision) StatusEqual(inUse, toAdd, toRemove []string) bool {
	return sameSet(d.InUse, inUse) && sameSet(d.ToAdd, toAdd) && sameSet(d.ToRemove, toRemove)
}

func sameSet(sorted, other []string) bool {
	o := slices.Clone(other)
	slices.Sort(o)
	return slices.Equal(sorted, slices.Compact(o))
}

// Renewals tracks, per instance, its status's renewal stamp
// (lastUpdateTime) and when the observer saw it change, by the observer's
// own clock, so that clocks need not agree. The zero value is ready.
type Renewals struct {
	seen map[string]renewal
}

type renewal struct {
	stamp string
	at    time.Time
}

// Observe records the instance's stamp as read now and reports whether
// its status is stale: not seen renewed for StaleAfter. An instance first
// observed now is not stale.
func (r *Renewals) Observe(name, stamp string, now time.Time) (stale bool) {
	if r.seen == nil {
		r.seen = map[string]renewal{}
	}
	s, ok := r.seen[name]
	if !ok || s.stamp != stamp {
		s = renewal{stamp: stamp, at: now}
		r.seen[name] = s
	}
	return now.Sub(s.at) > StaleAfter
}

// Keep forgets the instances keep refuses (their NodeShards are gone).
func (r *Renewals) Keep(keep func(name string) bool) {
	for name := range r.seen {
		if !keep(name) {
			delete(r.seen, name)
		}
	}
}
