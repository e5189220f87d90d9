// Package validation checks scheduling.volcano.sh/v1beta1 objects for what the
// CRD schema cannot express and for what Volcano's admission webhooks reject.
// The functions are pure: checks that need other objects (the parent queue
// exists, a queue with children cannot be deleted, the hierarchy depth) belong
// to the admission code that has a client. Objects are expected to have been
// defaulted with the v1beta1.SetDefaults_* functions first.
package validation

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateResourceList checks that every resource name is a qualified name
// and every quantity is non-negative.
func validateResourceList(rl corev1.ResourceList, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedNames(rl) {
		p := fldPath.Key(string(name))
		for _, msg := range content.IsLabelKey(string(name)) {
			errs = append(errs, field.Invalid(p, string(name), "resource name "+msg))
		}
		if q := rl[name]; q.Sign() < 0 {
			errs = append(errs, field.Invalid(p, q.String(), "must be greater than or equal to 0"))
		}
	}
	return errs
}

// validateNotAbove reports every resource present in both lists whose amount
// in lower exceeds its amount in upper. A resource missing from either list is
// not compared: an absent capability is unlimited and an absent deserved or
// guarantee is zero.
func validateNotAbove(lower corev1.ResourceList, lowerPath *field.Path, upper corev1.ResourceList, upperPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedNames(lower) {
		u, ok := upper[name]
		if !ok {
			continue
		}
		if l := lower[name]; l.Cmp(u) > 0 {
			errs = append(errs, field.Invalid(lowerPath.Key(string(name)), l.String(),
				fmt.Sprintf("must be less than or equal to %s (%s)", upperPath.Key(string(name)), u.String())))
		}
	}
	return errs
}

// sortedNames returns the resource names of rl in order, so that errors come
// out in a stable order.
func sortedNames(rl corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(rl))
	for name := range rl {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// validateObjectName checks a reference to a cluster object by name.
func validateObjectName(name string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range content.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(fldPath, name, msg))
	}
	return errs
}
