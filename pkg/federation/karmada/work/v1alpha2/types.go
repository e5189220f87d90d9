// Package v1alpha2 mirrors Karmada's work.karmada.io/v1alpha2
// ResourceBinding and ClusterResourceBinding: a resource template bound to
// a propagation policy, with what its replicas need and, once scheduled,
// the clusters it goes to. Caldera suspends the scheduling of bindings of
// queued work and, when the work may run, places it by writing its
// clusters, the suspension kept.
//
// +kubebuilder:object:generate=true
// +groupName=work.karmada.io
package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/policy/v1alpha1"
)

// ResourceBinding binds a namespaced resource template to clusters.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=rb
// +kubebuilder:subresource:status
type ResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ResourceBindingSpec `json:"spec"`
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// ClusterResourceBinding binds a cluster-scoped resource template (or one
// a ClusterPropagationPolicy propagates) to clusters.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=crb
// +kubebuilder:subresource:status
type ClusterResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ResourceBindingSpec `json:"spec"`
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// ResourceBindingSpec is the part of Karmada's ResourceBindingSpec Caldera
// reads and writes.
type ResourceBindingSpec struct {
	// Resource is the template.
	// +required
	Resource ObjectReference `json:"resource"`
	// +optional
	PropagateDeps bool `json:"propagateDeps,omitempty"`
	// ReplicaRequirements is what one replica needs (single-template
	// workloads).
	// +optional
	ReplicaRequirements *ReplicaRequirements `json:"replicaRequirements,omitempty"`
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// Components are the workload's kinds of replica, each with its count
	// and needs (a Job's tasks).
	// +optional
	Components []Component `json:"components,omitempty"`
	// Clusters is the scheduling result.
	// +optional
	Clusters []TargetCluster `json:"clusters,omitempty"`
	// +optional
	Placement *policyv1alpha1.Placement `json:"placement,omitempty"`
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`
	// Suspension pauses scheduling or dispatching of the binding.
	// +optional
	Suspension *Suspension `json:"suspension,omitempty"`
	// +optional
	SchedulePriority *SchedulePriority `json:"schedulePriority,omitempty"`
}

// ObjectReference locates the template.
type ObjectReference struct {
	// +required
	APIVersion string `json:"apiVersion"`
	// +required
	Kind string `json:"kind"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +required
	Name string `json:"name"`
	// +optional
	UID string `json:"uid,omitempty"`
	// +optional
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// ReplicaRequirements is what one replica needs.
type ReplicaRequirements struct {
	// +optional
	NodeClaim *NodeClaim `json:"nodeClaim,omitempty"`
	// +optional
	ResourceRequest corev1.ResourceList `json:"resourceRequest,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// NodeClaim is where a replica's pods may run in a member.
type NodeClaim struct {
	// +optional
	HardNodeAffinity *corev1.NodeSelector `json:"hardNodeAffinity,omitempty"`
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// Component is one kind of replica of a workload.
type Component struct {
	// +required
	Name string `json:"name"`
	// +required
	Replicas int32 `json:"replicas"`
	// +optional
	ReplicaRequirements *ComponentReplicaRequirements `json:"replicaRequirements,omitempty"`
}

// ComponentReplicaRequirements is what one replica of a component needs.
type ComponentReplicaRequirements struct {
	// +optional
	NodeClaim *NodeClaim `json:"nodeClaim,omitempty"`
	// +optional
	ResourceRequest corev1.ResourceList `json:"resourceRequest,omitempty"`
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// TargetCluster is a cluster chosen, with its replicas.
type TargetCluster struct {
	// +required
	Name string `json:"name"`
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
}

// Suspension pauses the binding.
type Suspension struct {
	// Dispatching stops propagating to every cluster.
	// +optional
	Dispatching *bool `json:"dispatching,omitempty"`
	// +optional
	DispatchingOnClusters *policyv1alpha1.SuspendClusters `json:"dispatchingOnClusters,omitempty"`
	// Scheduling pauses the Karmada scheduler for this binding while true;
	// meant to be set by an admission webhook when the binding is created.
	// Karmada's binding controller still propagates the work to the
	// clusters spec.clusters names.
	// +optional
	Scheduling *bool `json:"scheduling,omitempty"`
}

// SchedulePriority orders bindings in Karmada's scheduling queue.
type SchedulePriority struct {
	// +optional
	Priority int32 `json:"priority,omitempty"`
}

// Binding condition types.
const (
	ConditionScheduled    = "Scheduled"
	ConditionFullyApplied = "FullyApplied"
)

// ResourceBindingStatus is the part of Karmada's ResourceBindingStatus
// Caldera reads.
type ResourceBindingStatus struct {
	// +optional
	SchedulerObservedGeneration int64 `json:"schedulerObservedGeneration,omitempty"`
	// +optional
	LastScheduledTime *metav1.Time `json:"lastScheduledTime,omitempty"`
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// AggregatedStatus is the template's status in each cluster.
	// +optional
	AggregatedStatus []AggregatedStatusItem `json:"aggregatedStatus,omitempty"`
}

// Resource health in a cluster.
const (
	Healthy   = "Healthy"
	Unhealthy = "Unhealthy"
	Unknown   = "Unknown"
)

// AggregatedStatusItem is the template's status in one cluster.
type AggregatedStatusItem struct {
	// +required
	ClusterName string `json:"clusterName"`
	// Status is the object's status as the member reports it.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Status *runtime.RawExtension `json:"status,omitempty"`
	// +optional
	Applied bool `json:"applied,omitempty"`
	// +optional
	AppliedMessage string `json:"appliedMessage,omitempty"`
	// +kubebuilder:validation:Enum=Healthy;Unhealthy;Unknown
	// +optional
	Health string `json:"health,omitempty"`
}

// ResourceBindingList is a list of ResourceBindings.
//
// +kubebuilder:object:root=true
type ResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceBinding `json:"items"`
}

// ClusterResourceBindingList is a list of ClusterResourceBindings.
//
// +kubebuilder:object:root=true
type ClusterResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourceBinding `json:"items"`
}
