package framework

import (
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// Claim is where a nominated task stands: a task that a past cycle
// pipelined onto room being freed for it, which it claims on its node.
type Claim int

// Claims.
const (
	// ClaimReady: the room is free; the task can be placed there now.
	ClaimReady Claim = iota
	// ClaimWaiting: the room is still being freed.
	ClaimWaiting
	// ClaimVoid: the node can no longer hold the task once freed (an
	// eviction was refused, the node changed or went away).
	ClaimVoid
)

// ClaimOf judges the claim of a pipelined task on its node, counting the
// room it claims itself as its own.
func (ssn *Session) ClaimOf(t *api.TaskInfo) Claim {
	n := ssn.Snapshot.Nodes[t.NodeName]
	if n == nil || !n.Ready() {
		return ClaimVoid
	}
	s := ssn.Predicate(t, n)
	if s.Unresolvable() {
		return ClaimVoid
	}
	others := n.Pipelined.Clone().Sub(t.Resreq)
	if !t.Resreq.LessEqualWith(n.Idle, n.Releasing, others) {
		return ClaimVoid
	}
	if s == nil && t.Resreq.LessEqual(n.Idle) {
		return ClaimReady
	}
	return ClaimWaiting
}

// DropClaim voids a nominated task's claim: the task is pending again and
// the nominator forgets it. Unlike a statement's placements this is not
// undone: the claim could not be met.
func (ssn *Session) DropClaim(t *api.TaskInfo) {
	job := ssn.Snapshot.Own(t.Job)
	if job == nil || t.Status != api.Pipelined {
		return
	}
	if n := ssn.Snapshot.Nodes[t.NodeName]; n != nil {
		n.RemoveTask(ssn.Logger, t)
		ssn.touchedNodes[n.Name] = true
	}
	job.SetTaskStatus(t, api.Pending)
	t.NodeName = ""
	ssn.touchedJobs[job.UID] = true
	ssn.forgetAllMemos()
	ssn.version++
	// Plugins counted the claim from the snapshot.
	ssn.fireDeallocate(t)
	if ssn.nominator != nil {
		ssn.nominator.Unnominate(t)
	}
}
