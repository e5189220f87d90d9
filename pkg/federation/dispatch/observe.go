package dispatch

import (
	"fmt"
	"slices"
	"time"
)

// DataConstraint is what a DataSourceClaim asks of its workload's
// placement.
type DataConstraint struct {
	// Required, when not nil, are the only clusters the workload may go to.
	Required []string
	// Preferred are tried first.
	Preferred []string
	// Blocked holds the workload: its data's location is not known yet.
	Blocked *Hold
}

// JobFacts are what a binding's Volcano Job says of it.
type JobFacts struct {
	// Queue is the Job's queue ("" for the binding's own).
	Queue    string
	Priority int32
	Finished bool
	// Gang, GangSize, GangMin: a HyperJob's child (see Binding).
	Gang              string
	GangSize, GangMin int
}

// Observation is what the watches know of a binding at a decision, before
// the rules of time are applied to it.
type Observation struct {
	// Queue and Priority are the binding's own (its workload's queue
	// label, or the default queue).
	Queue    string
	Priority int32
	// Allowed are the clusters its placement lets it go to (nil: any).
	Allowed []string
	// Job is its Job's facts; nil when it is no Job, or the Job is not
	// seen yet.
	Job *JobFacts
	// Data is its DataSourceClaim's constraint; nil without a claim seen.
	Data *DataConstraint
	// ClaimAwaited names claims admission saw for the workload that the
	// watch has not delivered yet ("" for none).
	ClaimAwaited string
	// Suspended: Karmada's scheduling of it is suspended; Cluster is the
	// member it is placed in ("" before).
	Suspended bool
	Cluster   string
	// Refusal is the member's message when it refused to apply the work;
	// ClusterReady says whether that member is Ready.
	Refusal      string
	ClusterReady bool
	// HasPods: its work has pods in its member.
	HasPods bool
}

// Graces are how long the dispatcher waits before it takes a sign as
// final.
type Graces struct {
	// Claim: how long a workload waits for a claim admission saw.
	Claim time.Duration
	// ApplyFailure: how long a member refuses the work before it counts
	// as refused.
	ApplyFailure time.Duration
	// Report: how long a member's resource summary takes to count the pods
	// of work placed there.
	Report time.Duration
}

// Memory is what decisions remember of bindings between them, by binding
// ID. The zero value is ready to use.
type Memory struct {
	// Released: released by the dispatcher, though a cache may still show
	// them held.
	Released map[string]bool
	// RefusedSince: when the member was first seen refusing the work.
	RefusedSince map[string]time.Time
	// PodsSeen: when the work's pods were first seen in its member.
	PodsSeen map[string]time.Time
	// Planned: released bindings not yet placed, to the cluster they were
	// counted against (Snapshot.Planned).
	Planned map[string]string
}

func (m *Memory) init() {
	if m.Released == nil {
		m.Released = map[string]bool{}
	}
	if m.RefusedSince == nil {
		m.RefusedSince = map[string]time.Time{}
	}
	if m.PodsSeen == nil {
		m.PodsSeen = map[string]time.Time{}
	}
	if m.Planned == nil {
		m.Planned = map[string]string{}
	}
}

// Observe sets the fields of b that follow from what is observed of it and
// from time: queue (its Job's, else its own), priority, allowed clusters narrowed
// by its data's required clusters, data preferences and holds (a claim
// admission saw holds it for up to the claim grace), whether it is
// released, refused (a Ready member refusing it beyond the grace) and
// reported (its pods seen in its member beyond the report grace). m
// remembers the times these signs were first seen.
func Observe(b *Binding, o Observation, now time.Time, g Graces, m *Memory) {
	m.init()
	id := b.ID
	b.Queue, b.Priority, b.Finished, b.Clusters = o.Queue, o.Priority, false, o.Allowed
	b.Gang, b.GangSize, b.GangMin = "", 0, 0
	b.Preferred, b.Blocked = nil, nil
	switch {
	case o.Data != nil:
		b.Preferred, b.Blocked = o.Data.Preferred, o.Data.Blocked
		if o.Data.Required != nil {
			b.Clusters = intersect(b.Clusters, o.Data.Required)
		}
	case o.ClaimAwaited != "" && now.Sub(b.Created) < g.Claim:
		b.Blocked = &Hold{Rule: RuleData, Message: fmt.Sprintf("waiting to see DataSourceClaim %s of the workload", o.ClaimAwaited)}
	}
	if j := o.Job; j != nil {
		if j.Queue != "" {
			b.Queue = j.Queue
		}
		b.Priority, b.Finished = j.Priority, j.Finished
		b.Gang, b.GangSize, b.GangMin = j.Gang, j.GangSize, j.GangMin
	}
	// Placed by the dispatcher (suspended, with a cluster) or scheduled
	// by Karmada (not suspended); or released by it and not seen so yet.
	b.Released = !o.Suspended || o.Cluster != ""
	if b.Released {
		delete(m.Released, id)
	} else if m.Released[id] {
		b.Released = true
	}
	// Only a Ready member refuses: one that cannot be reached has said
	// nothing about the work yet.
	b.Refused = false
	if o.Refusal == "" || !o.ClusterReady {
		delete(m.RefusedSince, id)
	} else {
		b.Refused = seenFor(m.RefusedSince, id, now) >= g.ApplyFailure
	}
	b.Reported = false
	if o.Cluster != "" {
		delete(m.Planned, id)
		if o.HasPods {
			b.Reported = seenFor(m.PodsSeen, id, now) >= g.Report
		}
	}
}

// seenFor is how long ago id was first seen, remembering now as that
// time if it was not seen before.
func seenFor(first map[string]time.Time, id string, now time.Time) time.Duration {
	at, ok := first[id]
	if !ok {
		at = now
		first[id] = at
	}
	return now.Sub(at)
}

// Forget drops what is remembered of bindings that no longer exist.
func (m *Memory) Forget(exists func(id string) bool) {
	m.init()
	for _, mm := range []map[string]time.Time{m.RefusedSince, m.PodsSeen} {
		for id := range mm {
			if !exists(id) {
				delete(mm, id)
			}
		}
	}
	for id := range m.Released {
		if !exists(id) {
			delete(m.Released, id)
		}
	}
	for id := range m.Planned {
		if !exists(id) {
			delete(m.Planned, id)
		}
	}
}

// intersect narrows allowed (nil: any) to the clusters of only.
func intersect(allowed, only []string) []string {
	out := []string{}
	for _, c := range only {
		if allowed == nil || slices.Contains(allowed, c) {
			out = append(out, c)
		}
	}
	return out
}
