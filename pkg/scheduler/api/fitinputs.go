package api

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// SameFitInputs reports whether b, a later version of pod a, asks for
// what a asked for and is constrained as a was: the same requests (spec,
// pod overhead and pod-level resources, and what the status says is
// allocated or actuated while a resize is under way), the same claims, the
// same affinity. Binding a pod and starting it change none of these, so
// what was derived from the pending pod (its requests, kube-scheduler's
// PodInfo) holds for the bound and the running one; a resize or a claim's
// allocation changes them, and the derived data is made afresh.
func SameFitInputs(a, b *corev1.Pod) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil || a.UID != b.UID {
		return false
	}
	as, bs := &a.Spec, &b.Spec
	if !sameContainers(as.Containers, bs.Containers) || !sameContainers(as.InitContainers, bs.InitContainers) ||
		!equality.Semantic.DeepEqual(as.Overhead, bs.Overhead) || !equality.Semantic.DeepEqual(as.Resources, bs.Resources) ||
		!equality.Semantic.DeepEqual(as.ResourceClaims, bs.ResourceClaims) ||
		(as.Affinity != bs.Affinity && !equality.Semantic.DeepEqual(as.Affinity, bs.Affinity)) {
		return false
	}
	st, su := &a.Status, &b.Status
	return st.Resize == su.Resize &&
		sameResizeConditions(st.Conditions, su.Conditions) &&
		sameStatusResources(st.ContainerStatuses, su.ContainerStatuses) &&
		sameStatusResources(st.InitContainerStatuses, su.InitContainerStatuses) &&
		equality.Semantic.DeepEqual(st.AllocatedResources, su.AllocatedResources) &&
		equality.Semantic.DeepEqual(st.Resources, su.Resources) &&
		equality.Semantic.DeepEqual(st.ResourceClaimStatuses, su.ResourceClaimStatuses) &&
		equality.Semantic.DeepEqual(st.ExtendedResourceClaimStatus, su.ExtendedResourceClaimStatus) &&
		equality.Semantic.DeepEqual(st.NodeAllocatableResourceClaimStatuses, su.NodeAllocatableResourceClaimStatuses)
}

func sameContainers(a, b []corev1.Container) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || !ptrEqual(a[i].RestartPolicy, b[i].RestartPolicy) ||
			!equality.Semantic.DeepEqual(a[i].Resources, b[i].Resources) {
			return false
		}
	}
	return true
}

// sameStatusResources compares what the status says of each container's
// resources. A container status without them (a pending pod has none, a
// started one may have none) counts only by its name.
func sameStatusResources(a, b []corev1.ContainerStatus) bool {
	withResources := func(s []corev1.ContainerStatus) []corev1.ContainerStatus {
		var out []corev1.ContainerStatus
		for _, c := range s {
			if c.AllocatedResources != nil || c.Resources != nil {
				out = append(out, c)
			}
		}
		return out
	}
	ra, rb := withResources(a), withResources(b)
	if len(ra) != len(rb) {
		return false
	}
	for i := range ra {
		if ra[i].Name != rb[i].Name || !equality.Semantic.DeepEqual(ra[i].AllocatedResources, rb[i].AllocatedResources) ||
			!equality.Semantic.DeepEqual(ra[i].Resources, rb[i].Resources) {
			return false
		}
	}
	return true
}

// sameResizeConditions compares the conditions that say a resize is
// pending or under way.
func sameResizeConditions(a, b []corev1.PodCondition) bool {
	resize := func(s []corev1.PodCondition) []corev1.PodCondition {
		var out []corev1.PodCondition
		for _, c := range s {
			if c.Type == corev1.PodResizePending || c.Type == corev1.PodResizeInProgress {
				out = append(out, corev1.PodCondition{Type: c.Type, Status: c.Status, Reason: c.Reason})
			}
		}
		return out
	}
	ra, rb := resize(a), resize(b)
	if len(ra) != len(rb) {
		return false
	}
	for i := range ra {
		if ra[i] != rb[i] {
			return false
		}
	}
	return true
}

func ptrEqual[T comparable](a, b *T) bool {
	return a == b || (a != nil && b != nil && *a == *b)
}
