package api

import (
	corev1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

// QueueID identifies a queue: its name.
type QueueID string

// QueueInfo is a queue with its limits parsed.
type QueueInfo struct {
	UID    QueueID
	Name   string
	Weight int32
	// Parent is "" only for the root queue.
	Parent QueueID
	// Capability, Deserved and Guarantee are nil when unset. A resource not
	// named in Capability is not capped.
	Capability  *Resource
	Deserved    *Resource
	Guarantee   *Resource
	Reclaimable bool
	Priority    int32
	State       schedulingv1beta1.QueueState
	Queue       *schedulingv1beta1.Queue
}

// NewQueueInfo parses a Queue.
func NewQueueInfo(q *schedulingv1beta1.Queue) *QueueInfo {
	qi := &QueueInfo{
		UID:         QueueID(q.Name),
		Name:        q.Name,
		Weight:      q.Spec.Weight,
		Parent:      QueueID(q.Spec.Parent),
		Reclaimable: q.Spec.Reclaimable == nil || *q.Spec.Reclaimable,
		Priority:    q.Spec.Priority,
		State:       q.Status.State,
		Queue:       q,
	}
	if qi.Weight <= 0 {
		qi.Weight = 1
	}
	if qi.Parent == "" && q.Name != schedulingv1beta1.RootQueue {
		qi.Parent = schedulingv1beta1.RootQueue
	}
	if len(q.Spec.Capability) > 0 {
		qi.Capability = NewResource(q.Spec.Capability)
	}
	if len(q.Spec.Deserved) > 0 {
		qi.Deserved = NewResource(q.Spec.Deserved)
	}
	if len(q.Spec.Guarantee.Resource) > 0 {
		qi.Guarantee = NewResource(q.Spec.Guarantee.Resource)
	}
	return qi
}

// Open reports whether the queue admits new work. A queue whose state is
// not yet set counts as open.
func (q *QueueInfo) Open() bool {
	return q.State == "" || q.State == schedulingv1beta1.QueueStateOpen
}

// Caps reports whether the queue's capability limits a resource.
func (q *QueueInfo) Caps(name corev1.ResourceName) bool {
	if q.Capability == nil {
		return false
	}
	_, ok := q.Queue.Spec.Capability[name]
	return ok
}

// Clone returns a copy sharing the immutable parsed limits.
func (q *QueueInfo) Clone() *QueueInfo {
	c := *q
	return &c
}
