// Package validation checks HyperNodes for what their CRD schema cannot
// express. It is pure: it reads only the object it is given.
package validation

import (
	"regexp"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
)

// ValidateHyperNode returns the problems of a HyperNode that the API server's
// schema does not catch: member names that cannot name a node or HyperNode,
// patterns that do not compile, malformed label selectors, a HyperNode that
// lists itself and members listed twice.
func ValidateHyperNode(hn *topologyv1alpha1.HyperNode) field.ErrorList {
	var errs field.ErrorList
	membersPath := field.NewPath("spec", "members")
	type memberKey struct {
		memberType topologyv1alpha1.MemberType
		name       string
	}
	seen := make(map[memberKey]bool, len(hn.Spec.Members))
	for i, m := range hn.Spec.Members {
		selPath := membersPath.Index(i).Child("selector")
		sel := m.Selector
		if sel.ExactMatch != nil {
			namePath := selPath.Child("exactMatch", "name")
			name := sel.ExactMatch.Name
			for _, msg := range validation.IsDNS1123Subdomain(name) {
				errs = append(errs, field.Invalid(namePath, name, msg))
			}
			if m.Type == topologyv1alpha1.MemberTypeHyperNode && name == hn.Name {
				errs = append(errs, field.Invalid(namePath, name, "a HyperNode cannot be a member of itself"))
			}
			key := memberKey{memberType: m.Type, name: name}
			if seen[key] {
				errs = append(errs, field.Duplicate(namePath, name))
			}
			seen[key] = true
		}
		if sel.RegexMatch != nil {
			if _, err := regexp.Compile(sel.RegexMatch.Pattern); err != nil {
				errs = append(errs, field.Invalid(selPath.Child("regexMatch", "pattern"), sel.RegexMatch.Pattern, err.Error()))
			}
		}
		if sel.LabelMatch != nil {
			errs = append(errs, metav1validation.ValidateLabelSelector(sel.LabelMatch,
				metav1validation.LabelSelectorValidationOptions{}, selPath.Child("labelMatch"))...)
		}
	}
	return errs
}
