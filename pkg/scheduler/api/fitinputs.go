package api

import (
	"slices"
	"sync/atomic"

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
	return AlikeFitInputs(a, b)
}

// AlikeFitInputs reports whether pods a and b, the same pod or not, ask
// for the same resources and are constrained alike: SameFitInputs without
// the pods' identity. They must share a namespace, which affinity terms
// that name none select in. What is derived from a pod's requests and
// affinity alone (kube-scheduler's PodInfo) holds for every pod alike.
func AlikeFitInputs(a, b *corev1.Pod) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil || a.Namespace != b.Namespace {
		return false
	}
	as, bs := &a.Spec, &b.Spec
	// Lists and requirements are compared field by field, not through
	// reflection: this runs for every version of every pod the cache is
	// told of, and for every pod a memo is asked for (AlikeMemo).
	if !sameContainers(as.Containers, bs.Containers) || !sameContainers(as.InitContainers, bs.InitContainers) ||
		!sameList(as.Overhead, bs.Overhead) || !sameRequirementsPtr(as.Resources, bs.Resources) ||
		!semanticEqualSlices(as.ResourceClaims, bs.ResourceClaims) ||
		(as.Affinity != bs.Affinity && !equality.Semantic.DeepEqual(as.Affinity, bs.Affinity)) {
		return false
	}
	st, su := &a.Status, &b.Status
	return st.Resize == su.Resize &&
		sameResizeConditions(st.Conditions, su.Conditions) &&
		sameStatusResources(st.ContainerStatuses, su.ContainerStatuses) &&
		sameStatusResources(st.InitContainerStatuses, su.InitContainerStatuses) &&
		sameList(st.AllocatedResources, su.AllocatedResources) &&
		sameRequirementsPtr(st.Resources, su.Resources) &&
		semanticEqualSlices(st.ResourceClaimStatuses, su.ResourceClaimStatuses) &&
		(st.ExtendedResourceClaimStatus == su.ExtendedResourceClaimStatus ||
			equality.Semantic.DeepEqual(st.ExtendedResourceClaimStatus, su.ExtendedResourceClaimStatus)) &&
		semanticEqualSlices(st.NodeAllocatableResourceClaimStatuses, su.NodeAllocatableResourceClaimStatuses)
}

// sameList reports whether two resource lists hold the same quantities,
// as equality.Semantic does (a nil list is an empty one).
func sameList(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, q := range a {
		if r, ok := b[name]; !ok || q.Cmp(r) != 0 {
			return false
		}
	}
	return true
}

func sameRequirements(a, b *corev1.ResourceRequirements) bool {
	return sameList(a.Requests, b.Requests) && sameList(a.Limits, b.Limits) && slices.Equal(a.Claims, b.Claims)
}

func sameRequirementsPtr(a, b *corev1.ResourceRequirements) bool {
	if a == nil || b == nil {
		return a == b
	}
	return sameRequirements(a, b)
}

// semanticEqualSlices is equality.Semantic.DeepEqual for slices, without
// its cost when both are empty (as they nearly always are here).
func semanticEqualSlices[T any](a, b []T) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	return equality.Semantic.DeepEqual(a, b)
}

// AlikeMemo keeps one value derived from a pod's fit inputs alone (its
// requests, kube-scheduler's PodInfo less the pod), for the next pod alike
// it (AlikeFitInputs) to take instead of deriving its own: the pods of a
// gang, or of a backlog of one kind, come one after another. It keeps the
// last value put, with a copy of the fit inputs (FitInputsOf), not the pod.
// Safe for concurrent use; values must not be changed once put.
type AlikeMemo[T any] struct {
	last atomic.Pointer[alikeEntry[T]]
}

type alikeEntry[T any] struct {
	inputs *corev1.Pod
	value  T
}

// Get returns the value kept for a pod alike pod, if one is kept.
func (m *AlikeMemo[T]) Get(pod *corev1.Pod) (T, bool) {
	if e := m.last.Load(); e != nil && AlikeFitInputs(e.inputs, pod) {
		return e.value, true
	}
	var zero T
	return zero, false
}

// Put keeps v, derived from pod, in place of the value kept before.
func (m *AlikeMemo[T]) Put(pod *corev1.Pod, v T) {
	m.last.Store(&alikeEntry[T]{inputs: FitInputsOf(pod), value: v})
}

// FitInputsOf returns a pod holding only what AlikeFitInputs compares of
// p, copied: alike p, without keeping p or the rest of its spec alive.
func FitInputsOf(p *corev1.Pod) *corev1.Pod {
	q := &corev1.Pod{}
	q.Namespace = p.Namespace
	ps, qs := &p.Spec, &q.Spec
	qs.Containers = containerInputs(ps.Containers)
	qs.InitContainers = containerInputs(ps.InitContainers)
	qs.Overhead = ps.Overhead.DeepCopy()
	if ps.Resources != nil {
		qs.Resources = ps.Resources.DeepCopy()
	}
	qs.ResourceClaims = deepCopied(ps.ResourceClaims)
	if ps.Affinity != nil {
		qs.Affinity = ps.Affinity.DeepCopy()
	}
	st, qt := &p.Status, &q.Status
	qt.Resize = st.Resize
	for i := range st.Conditions {
		if c := &st.Conditions[i]; c.Type == corev1.PodResizePending || c.Type == corev1.PodResizeInProgress {
			qt.Conditions = append(qt.Conditions, corev1.PodCondition{Type: c.Type, Status: c.Status, Reason: c.Reason})
		}
	}
	qt.ContainerStatuses = statusInputs(st.ContainerStatuses)
	qt.InitContainerStatuses = statusInputs(st.InitContainerStatuses)
	qt.AllocatedResources = st.AllocatedResources.DeepCopy()
	if st.Resources != nil {
		qt.Resources = st.Resources.DeepCopy()
	}
	qt.ResourceClaimStatuses = deepCopied(st.ResourceClaimStatuses)
	if st.ExtendedResourceClaimStatus != nil {
		qt.ExtendedResourceClaimStatus = st.ExtendedResourceClaimStatus.DeepCopy()
	}
	qt.NodeAllocatableResourceClaimStatuses = deepCopied(st.NodeAllocatableResourceClaimStatuses)
	return q
}

// deepCopied returns a deep copy of s, nil for nil.
func deepCopied[T any, P interface {
	*T
	DeepCopyInto(P)
}](s []T) []T {
	if s == nil {
		return nil
	}
	out := make([]T, len(s))
	for i := range s {
		P(&s[i]).DeepCopyInto(&out[i])
	}
	return out
}

func containerInputs(cs []corev1.Container) []corev1.Container {
	if cs == nil {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i := range cs {
		out[i] = corev1.Container{Name: cs[i].Name, Resources: *cs[i].Resources.DeepCopy()}
		if cs[i].RestartPolicy != nil {
			rp := *cs[i].RestartPolicy
			out[i].RestartPolicy = &rp
		}
	}
	return out
}

func statusInputs(cs []corev1.ContainerStatus) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for i := range cs {
		if c := &cs[i]; c.AllocatedResources != nil || c.Resources != nil {
			s := corev1.ContainerStatus{Name: c.Name, AllocatedResources: c.AllocatedResources.DeepCopy()}
			if c.Resources != nil {
				s.Resources = c.Resources.DeepCopy()
			}
			out = append(out, s)
		}
	}
	return out
}

func sameContainers(a, b []corev1.Container) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || !ptrEqual(a[i].RestartPolicy, b[i].RestartPolicy) ||
			!sameRequirements(&a[i].Resources, &b[i].Resources) {
			return false
		}
	}
	return true
}

// sameStatusResources compares what the status says of each container's
// resources. A container status without them (a pending pod has none, a
// started one may have none) is left out.
func sameStatusResources(a, b []corev1.ContainerStatus) bool {
	return sameWhere(a, b, func(c *corev1.ContainerStatus) bool {
		return c.AllocatedResources != nil || c.Resources != nil
	}, func(x, y *corev1.ContainerStatus) bool {
		return x.Name == y.Name && sameList(x.AllocatedResources, y.AllocatedResources) &&
			sameRequirementsPtr(x.Resources, y.Resources)
	})
}

// sameResizeConditions compares the conditions that say a resize is
// pending or under way, by type, status and reason.
func sameResizeConditions(a, b []corev1.PodCondition) bool {
	return sameWhere(a, b, func(c *corev1.PodCondition) bool {
		return c.Type == corev1.PodResizePending || c.Type == corev1.PodResizeInProgress
	}, func(x, y *corev1.PodCondition) bool {
		return x.Type == y.Type && x.Status == y.Status && x.Reason == y.Reason
	})
}

// sameWhere reports whether the elements of a and b that keep selects are
// alike (eq), pairwise in order, without copying them out.
func sameWhere[T any](a, b []T, keep func(*T) bool, eq func(x, y *T) bool) bool {
	i, j := 0, 0
	for {
		for i < len(a) && !keep(&a[i]) {
			i++
		}
		for j < len(b) && !keep(&b[j]) {
			j++
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		if !eq(&a[i], &b[j]) {
			return false
		}
		i++
		j++
	}
}

func ptrEqual[T comparable](a, b *T) bool {
	return a == b || (a != nil && b != nil && *a == *b)
}
