package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Well-known queues.
const (
	// DefaultQueue receives PodGroups that name no queue. It always exists
	// and cannot be deleted.
	DefaultQueue = "default"
	// RootQueue is the top of the queue hierarchy: every other queue has a
	// parent, "root" when none is given. It cannot be deleted and has no
	// parent itself.
	RootQueue = "root"
)

// QueueState is whether a queue accepts new PodGroups.
//
// +kubebuilder:validation:Enum=Open;Closed;Closing;Unknown
type QueueState string

// Queue states.
const (
	// QueueStateOpen: the queue accepts new PodGroups.
	QueueStateOpen QueueState = "Open"
	// QueueStateClosed: the queue accepts no new PodGroups and has none left.
	QueueStateClosed QueueState = "Closed"
	// QueueStateClosing: the queue accepts no new PodGroups but still holds
	// some.
	QueueStateClosing QueueState = "Closing"
	// QueueStateUnknown: the state could not be determined.
	QueueStateUnknown QueueState = "Unknown"
)

// QueueEvent is what triggers the queue controller.
type QueueEvent string

// Queue events.
const (
	// QueueOutOfSyncEvent: a PodGroup or the Queue changed.
	QueueOutOfSyncEvent QueueEvent = "OutOfSync"
	// QueueCommandIssuedEvent: a user issued a bus.volcano.sh Command.
	QueueCommandIssuedEvent QueueEvent = "CommandIssued"
)

// QueueAction is what the queue controller does in response to an event.
type QueueAction string

// Queue actions.
const (
	// SyncQueueAction recomputes the queue's status.
	SyncQueueAction QueueAction = "SyncQueue"
	// OpenQueueAction opens the queue.
	OpenQueueAction QueueAction = "OpenQueue"
	// CloseQueueAction closes the queue (and, through the closed-by-parent
	// annotation, its children).
	CloseQueueAction QueueAction = "CloseQueue"
)

// DequeueStrategy is how the scheduler walks a queue's PodGroups when the
// one at the head does not fit.
//
// +kubebuilder:validation:Enum=fifo;traverse
type DequeueStrategy string

// Dequeue strategies.
const (
	// DequeueStrategyFIFO stops at the first PodGroup that does not fit, so
	// later groups never overtake it.
	DequeueStrategyFIFO DequeueStrategy = "fifo"
	// DequeueStrategyTraverse skips a PodGroup that does not fit and tries the
	// next ones.
	DequeueStrategyTraverse DequeueStrategy = "traverse"
	// DefaultDequeueStrategy is used when spec.dequeueStrategy is empty.
	DefaultDequeueStrategy = DequeueStrategyTraverse
)

// Queue is a cluster-wide share of resources from which PodGroups are
// admitted. Queues form a tree under the "root" queue through spec.parent.
//
// Status carries no observedGeneration or conditions: the status shape is
// Volcano's, which tools written for Volcano read.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=queues,scope=Cluster,shortName=q;queue-v1beta1
// +kubebuilder:printcolumn:name="PARENT",type=string,JSONPath=`.spec.parent`
// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(self.spec.parent) || self.spec.parent != self.metadata.name",message="spec.parent: a queue cannot be its own parent",fieldPath=".spec.parent"
// +kubebuilder:validation:XValidation:rule="self.metadata.name != 'root' || !has(self.spec) || !has(self.spec.parent) || size(self.spec.parent) == 0",message="spec.parent: the root queue cannot have a parent",fieldPath=".spec.parent"
type Queue struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the queue's share of the cluster and its place in the tree.
	// +optional
	Spec QueueSpec `json:"spec,omitempty"`

	// Status is written by the queue controller and the scheduler.
	// +optional
	Status QueueStatus `json:"status,omitempty"`
}

// QueueSpec is the configuration of a Queue.
//
// The CEL rules keep guarantee <= deserved <= capability. They compare only
// the common resources listed in them: the API server prices every quantity
// in a rule as if it were megabytes long, so a rule iterating over all keys of
// a map stays within its cost budget only if the map is capped at about seven
// entries, which would reject real Volcano queues. validation.ValidateQueue
// checks every resource.
//
// +kubebuilder:validation:XValidation:rule="!has(self.deserved) || !has(self.capability) || ['cpu','memory','ephemeral-storage','pods','nvidia.com/gpu','amd.com/gpu','huawei.com/Ascend910'].all(r, !(r in self.deserved) || !(r in self.capability) || quantity(string(self.deserved[r])).compareTo(quantity(string(self.capability[r]))) <= 0)",message="spec.deserved: no resource may exceed the same resource in spec.capability",fieldPath=".deserved"
// +kubebuilder:validation:XValidation:rule="!has(self.guarantee) || !has(self.guarantee.resource) || !has(self.deserved) || ['cpu','memory','ephemeral-storage','pods','nvidia.com/gpu','amd.com/gpu','huawei.com/Ascend910'].all(r, !(r in self.guarantee.resource) || !(r in self.deserved) || quantity(string(self.guarantee.resource[r])).compareTo(quantity(string(self.deserved[r]))) <= 0)",message="spec.guarantee.resource: no resource may exceed the same resource in spec.deserved",fieldPath=".guarantee.resource"
// +kubebuilder:validation:XValidation:rule="!has(self.guarantee) || !has(self.guarantee.resource) || !has(self.capability) || ['cpu','memory','ephemeral-storage','pods','nvidia.com/gpu','amd.com/gpu','huawei.com/Ascend910'].all(r, !(r in self.guarantee.resource) || !(r in self.capability) || quantity(string(self.guarantee.resource[r])).compareTo(quantity(string(self.capability[r]))) <= 0)",message="spec.guarantee.resource: no resource may exceed the same resource in spec.capability",fieldPath=".guarantee.resource"
type QueueSpec struct {
	// Weight is the queue's share relative to its siblings when resources are
	// divided proportionally.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	Weight int32 `json:"weight,omitempty"`

	// Capability is the most the queue may use, per resource. A resource not
	// listed is inherited from the parent, up to the cluster total at root.
	// +optional
	Capability corev1.ResourceList `json:"capability,omitempty"`

	// Reclaimable says whether resources the queue uses beyond its deserved
	// share may be reclaimed by other queues.
	// +kubebuilder:default=true
	// +optional
	Reclaimable *bool `json:"reclaimable,omitempty"`

	// ExtendClusters are the clusters jobs of this queue may be dispatched to
	// in a multi-cluster setup.
	// +listType=atomic
	// +optional
	ExtendClusters []Cluster `json:"extendClusters,omitempty"`

	// Guarantee is reserved for this queue and never lent to other queues.
	// +optional
	Guarantee Guarantee `json:"guarantee,omitempty"`

	// Affinity places the queue's pods on, or away from, node groups.
	// +optional
	Affinity *Affinity `json:"affinity,omitempty"`

	// Type is a free-form classification of the queue.
	// +optional
	Type string `json:"type,omitempty"`

	// Parent is the name of the parent queue in the hierarchy; "root" when
	// empty (except for root itself).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Parent string `json:"parent,omitempty"`

	// Deserved is what the queue is entitled to, per resource. It may use
	// more when others leave resources idle; the excess can be reclaimed.
	// +optional
	Deserved corev1.ResourceList `json:"deserved,omitempty"`

	// Priority orders queues: higher is scheduled first and reclaimed last.
	// +optional
	Priority int32 `json:"priority,omitempty"`

	// DequeueStrategy is fifo or traverse; empty means traverse.
	// +optional
	DequeueStrategy DequeueStrategy `json:"dequeueStrategy,omitempty"`
}

// Guarantee is the part of the cluster reserved for a queue.
type Guarantee struct {
	// Resource is the reserved amount per resource.
	// +optional
	Resource corev1.ResourceList `json:"resource,omitempty"`
}

// Cluster is a member cluster a queue's jobs may be dispatched to.
type Cluster struct {
	// Name of the cluster.
	// +optional
	Name string `json:"name,omitempty"`

	// Weight of the cluster relative to the queue's other clusters.
	// +optional
	Weight int32 `json:"weight,omitempty"`

	// Capacity of the cluster available to the queue.
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`
}

// Affinity is a queue's node-group placement rules.
type Affinity struct {
	// NodeGroupAffinity attracts the queue's pods to node groups.
	// +optional
	NodeGroupAffinity *NodeGroupAffinity `json:"nodeGroupAffinity,omitempty"`

	// NodeGroupAntiAffinity keeps the queue's pods off node groups.
	// +optional
	NodeGroupAntiAffinity *NodeGroupAntiAffinity `json:"nodeGroupAntiAffinity,omitempty"`
}

// NodeGroupAffinity lists node groups (nodes labelled volcano.sh/nodegroup-name)
// the queue's pods must or should run on.
type NodeGroupAffinity struct {
	// RequiredDuringSchedulingIgnoredDuringExecution are node groups the pods
	// must run on.
	// +listType=atomic
	// +optional
	RequiredDuringSchedulingIgnoredDuringExecution []string `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty"`

	// PreferredDuringSchedulingIgnoredDuringExecution are node groups the pods
	// should run on.
	// +listType=atomic
	// +optional
	PreferredDuringSchedulingIgnoredDuringExecution []string `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty"`
}

// NodeGroupAntiAffinity lists node groups the queue's pods must or should
// avoid.
type NodeGroupAntiAffinity struct {
	// RequiredDuringSchedulingIgnoredDuringExecution are node groups the pods
	// must not run on.
	// +listType=atomic
	// +optional
	RequiredDuringSchedulingIgnoredDuringExecution []string `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty"`

	// PreferredDuringSchedulingIgnoredDuringExecution are node groups the pods
	// should not run on.
	// +listType=atomic
	// +optional
	PreferredDuringSchedulingIgnoredDuringExecution []string `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty"`
}

// QueueStatus is the observed state of a Queue.
type QueueStatus struct {
	// State is whether the queue accepts new PodGroups.
	// +optional
	State QueueState `json:"state,omitempty"`

	// Unknown is the number of the queue's PodGroups in phase Unknown.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Unknown int32 `json:"unknown,omitempty"`

	// Pending is the number of the queue's PodGroups in phase Pending.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Pending int32 `json:"pending,omitempty"`

	// Running is the number of the queue's PodGroups in phase Running.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Running int32 `json:"running,omitempty"`

	// Inqueue is the number of the queue's PodGroups in phase Inqueue.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Inqueue int32 `json:"inqueue,omitempty"`

	// Completed is the number of the queue's PodGroups in phase Completed.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Completed int32 `json:"completed,omitempty"`

	// Reservation is the nodes locked for the queue's guarantee.
	// +optional
	Reservation Reservation `json:"reservation,omitempty"`

	// Allocated is the sum of resources allocated to the queue's pods.
	// +optional
	Allocated corev1.ResourceList `json:"allocated,omitempty"`
}

// Reservation is the set of nodes locked for a queue.
type Reservation struct {
	// Nodes are the locked nodes.
	// +listType=atomic
	// +optional
	Nodes []string `json:"nodes,omitempty"`

	// Resource is the idle resource on the locked nodes.
	// +optional
	Resource corev1.ResourceList `json:"resource,omitempty"`
}

// QueueList is a list of Queues.
//
// +kubebuilder:object:root=true
type QueueList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Queue `json:"items"`
}
