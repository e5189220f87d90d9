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
