// Package v1alpha1 mirrors Karmada's policy.karmada.io/v1alpha1
// PropagationPolicy and ClusterPropagationPolicy: which resource templates
// go to which member clusters, and how their replicas are spread.
//
// +kubebuilder:object:generate=true
// +groupName=policy.karmada.io
package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PropagationPolicy propagates resources of its namespace.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=pp
type PropagationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec PropagationSpec `json:"spec"`
}

// ClusterPropagationPolicy propagates resources of any namespace, and
// cluster-scoped ones.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=cpp
type ClusterPropagationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec PropagationSpec `json:"spec"`
}

// PropagationSpec is the part of Karmada's PropagationSpec Caldera writes.
type PropagationSpec struct {
	// ResourceSelectors pick the resource templates.
	// +kubebuilder:validation:MinItems=1
	// +required
	ResourceSelectors []ResourceSelector `json:"resourceSelectors"`
	// PropagateDeps propagates what the resources refer to (ConfigMaps,
	// Secrets, ...).
	// +optional
	PropagateDeps bool `json:"propagateDeps,omitempty"`
	// +optional
	Placement Placement `json:"placement,omitempty"`
	// Priority decides between policies matching the same resource.
	// +optional
	Priority *int32 `json:"priority,omitempty"`
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`
	// +optional
	Suspension *Suspension `json:"suspension,omitempty"`
}

// ResourceSelector picks resource templates.
type ResourceSelector struct {
	// +required
	APIVersion string `json:"apiVersion"`
	// +required
	Kind string `json:"kind"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name, when set, picks one resource and LabelSelector is ignored.
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// Placement says where resources go.
type Placement struct {
	// +optional
	ClusterAffinity *ClusterAffinity `json:"clusterAffinity,omitempty"`
	// ClusterAffinities are groups of clusters tried in order.
	// +optional
	ClusterAffinities []ClusterAffinityTerm `json:"clusterAffinities,omitempty"`
	// +optional
	ClusterTolerations []corev1.Toleration `json:"clusterTolerations,omitempty"`
	// +optional
	SpreadConstraints []SpreadConstraint `json:"spreadConstraints,omitempty"`
	// +optional
	ReplicaScheduling *ReplicaSchedulingStrategy `json:"replicaScheduling,omitempty"`
}

// ClusterAffinity picks clusters.
type ClusterAffinity struct {
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
	// FieldSelector selects by provider, region or zone.
	// +optional
	FieldSelector *FieldSelector `json:"fieldSelector,omitempty"`
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`
	// +optional
	Exclude []string `json:"exclude,omitempty"`
}

// FieldSelector selects clusters by fields.
type FieldSelector struct {
	// +optional
	MatchExpressions []corev1.NodeSelectorRequirement `json:"matchExpressions,omitempty"`
}

// ClusterAffinityTerm is a named group of clusters.
type ClusterAffinityTerm struct {
	// +required
	AffinityName    string `json:"affinityName"`
	ClusterAffinity `json:",inline"`
}

// SpreadConstraint spreads replicas over groups of clusters.
type SpreadConstraint struct {
	// SpreadByField is cluster, region, zone or provider.
	// +kubebuilder:validation:Enum=cluster;region;zone;provider
	// +optional
	SpreadByField string `json:"spreadByField,omitempty"`
	// +optional
	SpreadByLabel string `json:"spreadByLabel,omitempty"`
	// +optional
	MaxGroups int `json:"maxGroups,omitempty"`
	// +optional
	MinGroups int `json:"minGroups,omitempty"`
}

// Replica scheduling types and division preferences.
const (
	ReplicaSchedulingTypeDuplicated = "Duplicated"
	ReplicaSchedulingTypeDivided    = "Divided"
	ReplicaDivisionAggregated       = "Aggregated"
	ReplicaDivisionWeighted         = "Weighted"
)

// ReplicaSchedulingStrategy says how replicas are placed.
type ReplicaSchedulingStrategy struct {
	// +kubebuilder:validation:Enum=Duplicated;Divided
	// +optional
	ReplicaSchedulingType string `json:"replicaSchedulingType,omitempty"`
	// +kubebuilder:validation:Enum=Aggregated;Weighted
	// +optional
	ReplicaDivisionPreference string `json:"replicaDivisionPreference,omitempty"`
	// +optional
	WeightPreference *ClusterPreferences `json:"weightPreference,omitempty"`
}

// ClusterPreferences weigh clusters.
type ClusterPreferences struct {
	// +optional
	StaticWeightList []StaticClusterWeight `json:"staticWeightList,omitempty"`
	// DynamicWeight is AvailableReplicas.
	// +optional
	DynamicWeight string `json:"dynamicWeight,omitempty"`
}

// StaticClusterWeight weighs the clusters an affinity picks.
type StaticClusterWeight struct {
	// +required
	TargetCluster ClusterAffinity `json:"targetCluster"`
	// +kubebuilder:validation:Minimum=1
	// +required
	Weight int64 `json:"weight"`
}

// Suspension pauses propagation.
type Suspension struct {
	// +optional
	Dispatching *bool `json:"dispatching,omitempty"`
	// +optional
	DispatchingOnClusters *SuspendClusters `json:"dispatchingOnClusters,omitempty"`
}

// SuspendClusters names clusters.
type SuspendClusters struct {
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`
}

// PropagationPolicyList is a list of PropagationPolicies.
//
// +kubebuilder:object:root=true
type PropagationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PropagationPolicy `json:"items"`
}

// ClusterPropagationPolicyList is a list of ClusterPropagationPolicies.
//
// +kubebuilder:object:root=true
type ClusterPropagationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterPropagationPolicy `json:"items"`
}
