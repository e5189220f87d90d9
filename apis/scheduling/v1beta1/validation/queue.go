package validation

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

var dequeueStrategies = []schedulingv1beta1.DequeueStrategy{
	schedulingv1beta1.DequeueStrategyFIFO,
	schedulingv1beta1.DequeueStrategyTraverse,
}

// ValidateQueue checks a Queue on create. Beyond the CRD schema it checks
// every resource (the CRD's CEL rules compare only common ones) and the legacy
// hierarchy annotations.
func ValidateQueue(q *schedulingv1beta1.Queue) field.ErrorList {
	specPath := field.NewPath("spec")
	spec := &q.Spec
	var errs field.ErrorList

	if spec.Weight < 1 {
		errs = append(errs, field.Invalid(specPath.Child("weight"), spec.Weight, "must be greater than or equal to 1"))
	}
	errs = append(errs, validateParent(q, specPath.Child("parent"))...)

	capPath := specPath.Child("capability")
	desPath := specPath.Child("deserved")
	guaPath := specPath.Child("guarantee", "resource")
	errs = append(errs, validateResourceList(spec.Capability, capPath)...)
	errs = append(errs, validateResourceList(spec.Deserved, desPath)...)
	errs = append(errs, validateResourceList(spec.Guarantee.Resource, guaPath)...)
	errs = append(errs, validateNotAbove(spec.Deserved, desPath, spec.Capability, capPath)...)
	errs = append(errs, validateNotAbove(spec.Guarantee.Resource, guaPath, spec.Deserved, desPath)...)
	errs = append(errs, validateNotAbove(spec.Guarantee.Resource, guaPath, spec.Capability, capPath)...)
	for i, c := range spec.ExtendClusters {
		errs = append(errs, validateResourceList(c.Capacity, specPath.Child("extendClusters").Index(i).Child("capacity"))...)
	}

	if s := spec.DequeueStrategy; s != "" && !slices.Contains(dequeueStrategies, s) {
		errs = append(errs, field.NotSupported(specPath.Child("dequeueStrategy"), s, dequeueStrategies))
	}
	errs = append(errs, validateHierarchyAnnotations(q.Annotations, field.NewPath("metadata", "annotations"))...)
	return errs
}

// ValidateQueueUpdate checks a Queue on update: the new object must be valid,
// and the root queue's resources cannot change, since they stand for the
// whole cluster (Volcano's root-queue protection, on by default).
func ValidateQueueUpdate(newQueue, oldQueue *schedulingv1beta1.Queue) field.ErrorList {
	errs := ValidateQueue(newQueue)
	if newQueue.Name != schedulingv1beta1.RootQueue {
		return errs
	}
	specPath := field.NewPath("spec")
	if !equality.Semantic.DeepEqual(newQueue.Spec.Capability, oldQueue.Spec.Capability) {
		errs = append(errs, field.Forbidden(specPath.Child("capability"), "the root queue's capability cannot be changed"))
	}
	if !equality.Semantic.DeepEqual(newQueue.Spec.Deserved, oldQueue.Spec.Deserved) {
		errs = append(errs, field.Forbidden(specPath.Child("deserved"), "the root queue's deserved resources cannot be changed"))
	}
	if !equality.Semantic.DeepEqual(newQueue.Spec.Guarantee.Resource, oldQueue.Spec.Guarantee.Resource) {
		errs = append(errs, field.Forbidden(specPath.Child("guarantee", "resource"), "the root queue's guarantee cannot be changed"))
	}
	return errs
}

// ValidateQueueDeletion checks that a queue may be deleted: the root and
// default queues always exist. Whether the queue still has child queues or
// running pods is for the caller, which can list them.
func ValidateQueueDeletion(q *schedulingv1beta1.Queue) field.ErrorList {
	switch q.Name {
	case schedulingv1beta1.RootQueue, schedulingv1beta1.DefaultQueue:
		return field.ErrorList{field.Forbidden(field.NewPath("metadata", "name"),
			fmt.Sprintf("the %q queue cannot be deleted", q.Name))}
	}
	return nil
}

func validateParent(q *schedulingv1beta1.Queue, fldPath *field.Path) field.ErrorList {
	parent := q.Spec.Parent
	switch {
	case parent == "":
		return nil
	case q.Name == schedulingv1beta1.RootQueue:
		return field.ErrorList{field.Forbidden(fldPath, "the root queue cannot have a parent")}
	case parent == q.Name:
		return field.ErrorList{field.Invalid(fldPath, parent, "a queue cannot be its own parent")}
	}
	return validateObjectName(parent, fldPath)
}

// validateHierarchyAnnotations checks the legacy hierarchy annotations: the
// path and the weights must have as many "/"-separated segments, and every
// weight must be a finite number greater than 0.
func validateHierarchyAnnotations(annotations map[string]string, fldPath *field.Path) field.ErrorList {
	path := annotations[schedulingv1beta1.HierarchyAnnotation]
	weights := annotations[schedulingv1beta1.HierarchyWeightsAnnotation]
	if path == "" && weights == "" {
		return nil
	}
	pathField := fldPath.Key(schedulingv1beta1.HierarchyAnnotation)
	weightsField := fldPath.Key(schedulingv1beta1.HierarchyWeightsAnnotation)
	segments := strings.Split(path, "/")
	weightSegments := strings.Split(weights, "/")
	if len(segments) != len(weightSegments) {
		return field.ErrorList{field.Invalid(weightsField, weights,
			fmt.Sprintf("must have as many %q-separated segments as %s (%d), has %d",
				"/", schedulingv1beta1.HierarchyAnnotation, len(segments), len(weightSegments)))}
	}
	var errs field.ErrorList
	for i, s := range segments {
		if s == "" {
			errs = append(errs, field.Invalid(pathField, path, fmt.Sprintf("segment %d is empty", i)))
		}
	}
	for i, w := range weightSegments {
		v, err := strconv.ParseFloat(w, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			errs = append(errs, field.Invalid(weightsField, weights,
				fmt.Sprintf("segment %d (%q) must be a finite number greater than 0", i, w)))
		}
	}
	return errs
}
