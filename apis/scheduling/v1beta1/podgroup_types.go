package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodGroupPhase is where a PodGroup is in its lifecycle.
//
// +kubebuilder:validation:Enum=Pending;Running;Unknown;Inqueue;Completed
type PodGroupPhase string

// PodGroup phases, in the order a PodGroup usually passes through them.
const (
	// PodGroupPending: accepted, but the scheduler has not yet found room for
	// spec.minMember pods (or spec.minResources) in its queue.
	PodGroupPending PodGroupPhase = "Pending"
	// PodGroupInqueue: admitted by its queue; controllers may create the pods
	// and the scheduler will try to place them.
	PodGroupInqueue PodGroupPhase = "Inqueue"
	// PodGroupRunning: at least spec.minMember pods are running.
	PodGroupRunning PodGroupPhase = "Running"
	// PodGroupUnknown: some of the minimum pods run while others cannot be
	// placed; the owning controller is expected to recover.
	PodGroupUnknown PodGroupPhase = "Unknown"
	// PodGroupCompleted: every pod of the group has finished.
	PodGroupCompleted PodGroupPhase = "Completed"
)

// PodGroupConditionType names an aspect of a PodGroup's scheduling state.
type PodGroupConditionType string

// Condition types the scheduler reports on PodGroups.
const (
	// PodGroupUnschedulableType is set when the group could not be scheduled
	// in the last attempt.
	PodGroupUnschedulableType PodGroupConditionType = "Unschedulable"
	// PodGroupScheduled is set once the group's minimum has been placed.
	PodGroupScheduled PodGroupConditionType = "Scheduled"
)

// Reasons for PodGroup conditions. The strings are Volcano's; note that
// NotEnoughPodsReason is spelled "NotEnoughTasks" on the wire.
const (
	// PodFailedReason: a pod of the group failed.
	PodFailedReason = "PodFailed"
	// PodDeletedReason: a pod of the group was deleted.
	PodDeletedReason = "PodDeleted"
	// NotEnoughResourcesReason: the cluster or the queue lacks the resources
	// to place the group's minimum.
	NotEnoughResourcesReason = "NotEnoughResources"
	// NotEnoughPodsReason: fewer pods exist than spec.minMember.
	NotEnoughPodsReason = "NotEnoughTasks"
	// NotEnoughPodsOfTaskReason: some task has fewer pods than its
	// spec.minTaskMember entry.
	NotEnoughPodsOfTaskReason = "NotEnoughPodsOfTask"
)

// Messages the scheduler puts on the Scheduled condition.
const (
	// PodGroupReady: the group meets its scheduling minimum.
	PodGroupReady = "pod group is ready"
	// PodGroupNotReady: the group does not yet meet its scheduling minimum.
	PodGroupNotReady = "pod group is not ready"
)

// PodGroup is a set of pods that are scheduled together: none of them is
// bound until at least spec.minMember of them (and spec.minResources) fit.
//
// Status carries no observedGeneration or metav1.Condition list: the status
// shape is Volcano's, which tools written for Volcano read.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=podgroups,scope=Namespaced,shortName=pg;podgroup-v1beta1
// +kubebuilder:printcolumn:name="STATUS",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="minMember",type=integer,JSONPath=`.spec.minMember`
// +kubebuilder:printcolumn:name="RUNNINGS",type=integer,JSONPath=`.status.running`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="QUEUE",type=string,priority=1,JSONPath=`.spec.queue`
type PodGroup struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the gang-scheduling contract of the group.
	// +optional
	Spec PodGroupSpec `json:"spec,omitempty"`

	// Status is written by the scheduler and may lag behind.
	// +optional
	Status PodGroupStatus `json:"status,omitempty"`
}

// PodGroupSpec is what a PodGroup asks of the scheduler.
type PodGroupSpec struct {
	// MinMember is the number of pods that must be placeable at once before
	// any pod of the group is bound.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinMember int32 `json:"minMember,omitempty"`

	// MinTaskMember is, per task name (the pod's volcano.sh/task-spec), the
	// number of that task's pods that must be placeable at once.
	// subGroupPolicy is the richer successor; using both is discouraged.
	// +kubebuilder:validation:XValidation:rule="self.all(task, self[task] >= 0)",message="minTaskMember: every task's minimum member count must be greater than or equal to 0"
	// +optional
	MinTaskMember map[string]int32 `json:"minTaskMember,omitempty"`

	// Queue is the Queue the group draws resources from. A group naming a
	// queue that does not exist is not scheduled. Defaulted to "default"
	// (or the namespace's scheduling.volcano.sh/queue-name annotation).
	// +optional
	Queue string `json:"queue,omitempty"`

	// PriorityClassName is the PriorityClass of the group, ordering it against
	// other groups of the same queue. "system-node-critical" and
	// "system-cluster-critical" are built in; any other name must exist.
	// Empty means the default PriorityClass, or zero if there is none.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// MinResources is the sum of resources that must be available at once for
	// the group's minimum to start; the queue admits the group against it.
	// +optional
	MinResources *corev1.ResourceList `json:"minResources,omitempty"`

	// NetworkTopology keeps the group's pods inside one HyperNode of the
	// network topology (topology.volcano.sh HyperNodes).
	// +optional
	NetworkTopology *NetworkTopologySpec `json:"networkTopology,omitempty"`

	// SubGroupPolicy splits the group's pods into sub-groups, each with its
	// own gang minimum and network-topology constraint.
	// +listType=atomic
	// +optional
	SubGroupPolicy []SubGroupPolicySpec `json:"subGroupPolicy,omitempty"`
}

// NetworkTopologyMode says whether a network-topology constraint is hard or
// a preference.
//
// +kubebuilder:validation:Enum=hard;soft
type NetworkTopologyMode string

// Network topology modes.
const (
	// HardNetworkTopologyMode: pods stay within the allowed tier or wait.
	HardNetworkTopologyMode NetworkTopologyMode = "hard"
	// SoftNetworkTopologyMode: pods are packed as tightly as possible but may
	// spread beyond the tier when they otherwise could not run.
	SoftNetworkTopologyMode NetworkTopologyMode = "soft"
)

// NetworkTopologySpec bounds how far apart, in network tiers, the pods of a
// group (or sub-group) may be placed.
//
// +kubebuilder:validation:XValidation:rule="!has(self.highestTierAllowed) || !has(self.highestTierName)",message="highestTierAllowed and highestTierName must not both be set"
type NetworkTopologySpec struct {
	// Mode is hard or soft.
	// +kubebuilder:default=hard
	// +optional
	Mode NetworkTopologyMode `json:"mode,omitempty"`

	// HighestTierAllowed is the highest HyperNode tier the pods may span.
	// +kubebuilder:validation:Minimum=0
	// +optional
	HighestTierAllowed *int32 `json:"highestTierAllowed,omitempty"`

	// HighestTierName is HighestTierAllowed given by the tier's name.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	HighestTierName string `json:"highestTierName,omitempty"`
}

// SubGroupPolicySpec selects some of a PodGroup's pods, splits them into
// sub-groups and constrains each sub-group.
type SubGroupPolicySpec struct {
	// Name identifies the policy within the PodGroup.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// NetworkTopology constrains the pods of each sub-group.
	// +optional
	NetworkTopology *NetworkTopologySpec `json:"networkTopology,omitempty"`

	// SubGroupSize is the number of pods in one sub-group; a sub-group is
	// placed only when all of its pods satisfy NetworkTopology.
	// +kubebuilder:validation:Minimum=1
	// +optional
	SubGroupSize *int32 `json:"subGroupSize,omitempty"`

	// MinSubGroups is how many sub-groups must be placeable at once before
	// any is placed (gang scheduling at sub-group level).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=0
	// +optional
	MinSubGroups *int32 `json:"minSubGroups,omitempty"`

	// LabelSelector selects the group's pods this policy applies to.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`

	// MatchLabelKeys splits the selected pods into sub-groups: pods with equal
	// values for all these label keys form one sub-group.
	// +listType=atomic
	// +optional
	MatchLabelKeys []string `json:"matchLabelKeys,omitempty"`
}

// PodGroupStatus is the scheduler's view of a PodGroup.
type PodGroupStatus struct {
	// Phase is the current phase of the group.
	// +optional
	Phase PodGroupPhase `json:"phase,omitempty"`

	// Conditions are the latest observations of the group's scheduling.
	// +listType=atomic
	// +optional
	Conditions []PodGroupCondition `json:"conditions,omitempty"`

	// Running is the number of pods of the group that are running.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Running int32 `json:"running,omitempty"`

	// Succeeded is the number of pods of the group that succeeded.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`

	// Failed is the number of pods of the group that failed.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Failed int32 `json:"failed,omitempty"`
}

// PodGroupCondition is one observation of a PodGroup's scheduling state.
type PodGroupCondition struct {
	// Type is the aspect observed, e.g. Unschedulable or Scheduled.
	// +optional
	Type PodGroupConditionType `json:"type,omitempty"`

	// Status is True, False or Unknown.
	// +optional
	Status corev1.ConditionStatus `json:"status,omitempty"`

	// TransitionID identifies the scheduling session that made the
	// observation.
	// +optional
	TransitionID string `json:"transitionID,omitempty"`

	// LastTransitionTime is when the condition last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`

	// Reason is a one-word CamelCase reason, e.g. NotEnoughResources.
	// +optional
	Reason string `json:"reason,omitempty"`

	// Message is a human-readable explanation.
	// +optional
	Message string `json:"message,omitempty"`
}

// PodGroupList is a list of PodGroups.
//
// +kubebuilder:object:root=true
type PodGroupList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []PodGroup `json:"items"`
}
