package testing

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

// QueueWrapper builds a Queue.
type QueueWrapper struct {
	schedulingv1beta1.Queue
}

// MakeQueue starts a Queue with the given name and an empty spec: no
// defaults are applied.
func MakeQueue(name string) *QueueWrapper {
	return &QueueWrapper{schedulingv1beta1.Queue{
		TypeMeta:   metav1.TypeMeta{APIVersion: schedulingv1beta1.SchemeGroupVersion.String(), Kind: "Queue"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}}
}

// Obj returns the built Queue.
func (q *QueueWrapper) Obj() *schedulingv1beta1.Queue {
	return &q.Queue
}

// Weight sets spec.weight.
func (q *QueueWrapper) Weight(w int32) *QueueWrapper {
	q.Spec.Weight = w
	return q
}

// Reclaimable sets spec.reclaimable.
func (q *QueueWrapper) Reclaimable(r bool) *QueueWrapper {
	q.Spec.Reclaimable = new(r)
	return q
}

// Parent sets spec.parent.
func (q *QueueWrapper) Parent(name string) *QueueWrapper {
	q.Spec.Parent = name
	return q
}

// Capability sets spec.capability.
func (q *QueueWrapper) Capability(rl corev1.ResourceList) *QueueWrapper {
	q.Spec.Capability = rl
	return q
}

// Deserved sets spec.deserved.
func (q *QueueWrapper) Deserved(rl corev1.ResourceList) *QueueWrapper {
	q.Spec.Deserved = rl
	return q
}

// Guarantee sets spec.guarantee.resource.
func (q *QueueWrapper) Guarantee(rl corev1.ResourceList) *QueueWrapper {
	q.Spec.Guarantee.Resource = rl
	return q
}

// Priority sets spec.priority.
func (q *QueueWrapper) Priority(p int32) *QueueWrapper {
	q.Spec.Priority = p
	return q
}

// DequeueStrategy sets spec.dequeueStrategy.
func (q *QueueWrapper) DequeueStrategy(s schedulingv1beta1.DequeueStrategy) *QueueWrapper {
	q.Spec.DequeueStrategy = s
	return q
}

// ExtendCluster appends a cluster to spec.extendClusters.
func (q *QueueWrapper) ExtendCluster(name string, weight int32, capacity corev1.ResourceList) *QueueWrapper {
	q.Spec.ExtendClusters = append(q.Spec.ExtendClusters, schedulingv1beta1.Cluster{Name: name, Weight: weight, Capacity: capacity})
	return q
}

// RequiredNodeGroups sets the node groups the queue's pods must run on.
func (q *QueueWrapper) RequiredNodeGroups(groups ...string) *QueueWrapper {
	q.nodeGroupAffinity().RequiredDuringSchedulingIgnoredDuringExecution = groups
	return q
}

// PreferredNodeGroups sets the node groups the queue's pods should run on.
func (q *QueueWrapper) PreferredNodeGroups(groups ...string) *QueueWrapper {
	q.nodeGroupAffinity().PreferredDuringSchedulingIgnoredDuringExecution = groups
	return q
}

// AvoidedNodeGroups sets the node groups the queue's pods must not run on.
func (q *QueueWrapper) AvoidedNodeGroups(groups ...string) *QueueWrapper {
	q.nodeGroupAntiAffinity().RequiredDuringSchedulingIgnoredDuringExecution = groups
	return q
}

// DispreferredNodeGroups sets the node groups the queue's pods should not
// run on.
func (q *QueueWrapper) DispreferredNodeGroups(groups ...string) *QueueWrapper {
	q.nodeGroupAntiAffinity().PreferredDuringSchedulingIgnoredDuringExecution = groups
	return q
}

func (q *QueueWrapper) nodeGroupAffinity() *schedulingv1beta1.NodeGroupAffinity {
	if q.Spec.Affinity == nil {
		q.Spec.Affinity = &schedulingv1beta1.Affinity{}
	}
	if q.Spec.Affinity.NodeGroupAffinity == nil {
		q.Spec.Affinity.NodeGroupAffinity = &schedulingv1beta1.NodeGroupAffinity{}
	}
	return q.Spec.Affinity.NodeGroupAffinity
}

func (q *QueueWrapper) nodeGroupAntiAffinity() *schedulingv1beta1.NodeGroupAntiAffinity {
	if q.Spec.Affinity == nil {
		q.Spec.Affinity = &schedulingv1beta1.Affinity{}
	}
	if q.Spec.Affinity.NodeGroupAntiAffinity == nil {
		q.Spec.Affinity.NodeGroupAntiAffinity = &schedulingv1beta1.NodeGroupAntiAffinity{}
	}
	return q.Spec.Affinity.NodeGroupAntiAffinity
}

// Annotation sets an annotation.
func (q *QueueWrapper) Annotation(key, value string) *QueueWrapper {
	if q.Annotations == nil {
		q.Annotations = map[string]string{}
	}
	q.Annotations[key] = value
	return q
}

// Hierarchy sets the legacy hierarchy annotations.
func (q *QueueWrapper) Hierarchy(path, weights string) *QueueWrapper {
	return q.Annotation(schedulingv1beta1.HierarchyAnnotation, path).
		Annotation(schedulingv1beta1.HierarchyWeightsAnnotation, weights)
}

// State sets status.state.
func (q *QueueWrapper) State(s schedulingv1beta1.QueueState) *QueueWrapper {
	q.Status.State = s
	return q
}
