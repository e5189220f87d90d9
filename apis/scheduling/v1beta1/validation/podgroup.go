package validation

import (
	"slices"
	"sort"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

var networkTopologyModes = []schedulingv1beta1.NetworkTopologyMode{
	schedulingv1beta1.HardNetworkTopologyMode,
	schedulingv1beta1.SoftNetworkTopologyMode,
}

// ValidatePodGroup checks a PodGroup on create and update. Whether its queue
// exists and is open is for the caller, which can look the queue up.
func ValidatePodGroup(pg *schedulingv1beta1.PodGroup) field.ErrorList {
	specPath := field.NewPath("spec")
	spec := &pg.Spec
	var errs field.ErrorList

	if spec.MinMember < 0 {
		errs = append(errs, field.Invalid(specPath.Child("minMember"), spec.MinMember, "must be greater than or equal to 0"))
	}
	tasks := make([]string, 0, len(spec.MinTaskMember))
	for task := range spec.MinTaskMember {
		tasks = append(tasks, task)
	}
	sort.Strings(tasks)
	for _, task := range tasks {
		p := specPath.Child("minTaskMember").Key(task)
		if task == "" {
			errs = append(errs, field.Invalid(p, task, "task name must not be empty"))
		}
		if n := spec.MinTaskMember[task]; n < 0 {
			errs = append(errs, field.Invalid(p, n, "must be greater than or equal to 0"))
		}
	}
	if spec.Queue != "" {
		errs = append(errs, validateObjectName(spec.Queue, specPath.Child("queue"))...)
	}
	if spec.PriorityClassName != "" {
		errs = append(errs, validateObjectName(spec.PriorityClassName, specPath.Child("priorityClassName"))...)
	}
	if spec.MinResources != nil {
		errs = append(errs, validateResourceList(*spec.MinResources, specPath.Child("minResources"))...)
	}
	errs = append(errs, ValidateNetworkTopology(spec.NetworkTopology, specPath.Child("networkTopology"))...)

	names := sets.New[string]()
	for i := range spec.SubGroupPolicy {
		p := specPath.Child("subGroupPolicy").Index(i)
		policy := &spec.SubGroupPolicy[i]
		switch {
		case policy.Name == "":
			errs = append(errs, field.Required(p.Child("name"), "every sub-group policy needs a name"))
		case names.Has(policy.Name):
			errs = append(errs, field.Duplicate(p.Child("name"), policy.Name))
		}
		names.Insert(policy.Name)
		errs = append(errs, validateSubGroupPolicy(policy, p)...)
	}
	return errs
}

func validateSubGroupPolicy(policy *schedulingv1beta1.SubGroupPolicySpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if n := policy.SubGroupSize; n != nil && *n < 1 {
		errs = append(errs, field.Invalid(fldPath.Child("subGroupSize"), *n, "must be greater than or equal to 1"))
	}
	if n := policy.MinSubGroups; n != nil && *n < 0 {
		errs = append(errs, field.Invalid(fldPath.Child("minSubGroups"), *n, "must be greater than or equal to 0"))
	}
	if policy.LabelSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(policy.LabelSelector,
			metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("labelSelector"))...)
	}
	for i, key := range policy.MatchLabelKeys {
		errs = append(errs, metav1validation.ValidateLabelName(key, fldPath.Child("matchLabelKeys").Index(i))...)
	}
	errs = append(errs, ValidateNetworkTopology(policy.NetworkTopology, fldPath.Child("networkTopology"))...)
	return errs
}

// ValidateNetworkTopology checks a network-topology constraint of a PodGroup,
// a sub-group policy, or a Job and its partitions.
func ValidateNetworkTopology(nt *schedulingv1beta1.NetworkTopologySpec, fldPath *field.Path) field.ErrorList {
	if nt == nil {
		return nil
	}
	var errs field.ErrorList
	if nt.Mode != "" && !slices.Contains(networkTopologyModes, nt.Mode) {
		errs = append(errs, field.NotSupported(fldPath.Child("mode"), nt.Mode, networkTopologyModes))
	}
	if t := nt.HighestTierAllowed; t != nil && *t < 0 {
		errs = append(errs, field.Invalid(fldPath.Child("highestTierAllowed"), *t, "must be greater than or equal to 0"))
	}
	if nt.HighestTierName != "" {
		errs = append(errs, validateObjectName(nt.HighestTierName, fldPath.Child("highestTierName"))...)
		if nt.HighestTierAllowed != nil {
			errs = append(errs, field.Forbidden(fldPath.Child("highestTierName"), "must not be set together with highestTierAllowed"))
		}
	}
	return errs
}
