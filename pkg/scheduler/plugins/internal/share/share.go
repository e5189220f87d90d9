// Package share holds the rules the queue-sharing plugins (proportion,
// capacity) apply alike when a queue takes resources back from another.
package share

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// AboveDeserved reports whether a queue holding held exceeds what it
// deserves in a resource that the victim frees and the reclaimer asks for:
// only then may the reclaimer take the victim from it.
func AboveDeserved(held, deserved, victim, reclaimer *api.Resource) bool {
	for _, name := range reclaimer.Names() {
		if name == corev1.ResourcePods || reclaimer.Get(name) <= 0 || victim.Get(name) <= 0 {
			continue
		}
		if held.Get(name) > deserved.Get(name) {
			return true
		}
	}
	return false
}

// IntoGuarantee reports whether, without the victim, a queue holding held
// would have less than its guarantee of a resource the victim frees.
func IntoGuarantee(held, guarantee, victim *api.Resource) bool {
	for _, name := range guarantee.Names() {
		if g := guarantee.Get(name); g > 0 && victim.Get(name) > 0 && held.Get(name)-victim.Get(name) < g {
			return true
		}
	}
	return false
}

// StillFairer reports whether taking the victim from a queue keeps that
// queue better served than the reclaiming one: after the eviction, the
// victim's queue must still hold a larger fraction of what it deserves
// than the reclaimer's queue holds now, in every resource the reclaimer
// asks for, deserves and the victim frees. Without this, pods too large to
// fit a queue's remaining share exactly would let two queues just below and
// above their shares reclaim from each other forever; with it, every
// reclaim raises the worse-served queue and leaves the other above it.
func StillFairer(rHeld, rDeserved, vHeld, vDeserved, victim, reclaimer *api.Resource) bool {
	for _, name := range reclaimer.Names() {
		if name == corev1.ResourcePods || reclaimer.Get(name) <= 0 || victim.Get(name) <= 0 {
			continue
		}
		rd := rDeserved.Get(name)
		if rd <= 0 {
			continue
		}
		vd := vDeserved.Get(name)
		if vd <= 0 {
			// The victim's queue deserves none of it: all it holds is lent.
			continue
		}
		after := float64(vHeld.Get(name)-victim.Get(name)) / float64(vd)
		if after <= float64(rHeld.Get(name))/float64(rd) {
			return false
		}
	}
	return true
}
