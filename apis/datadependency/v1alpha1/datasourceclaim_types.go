package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DataSourceClaim declares that a workload reads a data source. The
// data-dependency controller binds the claim to the DataSource that says where
// the data lives (creating it on first use) and restricts the workload's
// placement to those clusters.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=datasourceclaims,shortName=dsc,scope=Namespaced
// +kubebuilder:printcolumn:name="System",type=string,JSONPath=`.spec.system`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.dataSourceType`
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=`.spec.dataSourceName`
// +kubebuilder:printcolumn:name="Workload",type=string,JSONPath=`.spec.workload.name`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="DataSource",type=string,JSONPath=`.status.boundDataSource`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type DataSourceClaim struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec names the data and the workload that reads it.
	// +required
	Spec DataSourceClaimSpec `json:"spec"`

	// Status records the binding.
	// +optional
	Status DataSourceClaimStatus `json:"status,omitempty"`
}

// DataSourceClaimSpec names a data source by system, type and name, and the
// workload that depends on it.
type DataSourceClaimSpec struct {
	// System is the data system that holds the data, for example "amoro".
	// +required
	// +kubebuilder:validation:MinLength=1
	System string `json:"system"`

	// DataSourceType is the kind of data source within the system, for
	// example "table". It is matched against a DataSource's spec.type.
	// +required
	// +kubebuilder:validation:MinLength=1
	DataSourceType string `json:"dataSourceType"`

	// DataSourceName is the logical name of the data, for example
	// "catalog.db.table". It is matched against a DataSource's spec.name.
	// +required
	// +kubebuilder:validation:MinLength=1
	DataSourceName string `json:"dataSourceName"`

	// Workload is the workload whose placement depends on the data.
	// +required
	Workload WorkloadRef `json:"workload"`

	// Attributes are further properties the data source must have, for
	// example a partition or a snapshot; a DataSource matches only if its
	// attributes are exactly these.
	// +optional
	Attributes map[string]string `json:"attributes,omitempty"`

	// Placement is how the data's clusters bind the workload: Required (the
	// workload goes only to one of them, the default) or Preferred (to one
	// of them when one has room, else wherever it fits).
	// +optional
	// +kubebuilder:default=Required
	Placement DataPlacement `json:"placement,omitempty"`

	// ResolutionTimeoutSeconds is how long the workload waits, from the
	// claim's creation, for the claim to be resolved before Fallback
	// applies. Unset means 300.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ResolutionTimeoutSeconds *int32 `json:"resolutionTimeoutSeconds,omitempty"`

	// Fallback is what happens to the workload when the claim is not
	// resolved in time (the provider is down, or does not know the data):
	// Hold keeps it waiting (the default), Anywhere places it without
	// regard to the data.
	// +optional
	// +kubebuilder:default=Hold
	Fallback DataFallback `json:"fallback,omitempty"`
}

// DataPlacement is how a claim's clusters bind its workload.
// +kubebuilder:validation:Enum=Required;Preferred
type DataPlacement string

// Placements.
const (
	DataPlacementRequired  DataPlacement = "Required"
	DataPlacementPreferred DataPlacement = "Preferred"
)

// DataFallback is what an unresolved claim's workload does after the
// resolution timeout.
// +kubebuilder:validation:Enum=Hold;Anywhere
type DataFallback string

// Fallbacks.
const (
	DataFallbackHold     DataFallback = "Hold"
	DataFallbackAnywhere DataFallback = "Anywhere"
)

// DefaultResolutionTimeoutSeconds is the resolution timeout of a claim
// that sets none.
const DefaultResolutionTimeoutSeconds = 300

// WorkloadRef names a workload object.
type WorkloadRef struct {
	// APIVersion is the group and version of the workload, for example
	// "apps/v1" or "batch.volcano.sh/v1alpha1".
	// +required
	// +kubebuilder:validation:MinLength=1
	APIVersion string `json:"apiVersion"`

	// Kind is the kind of the workload, for example "Deployment" or "Job".
	// +required
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`

	// Name is the name of the workload.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// Namespace is the namespace of the workload. Empty means the claim's
	// namespace, which is also the only namespace a claim may refer to.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// DataSourceClaimPhase is where a claim is in its life.
// +kubebuilder:validation:Enum=Pending;Bound
type DataSourceClaimPhase string

// Claim phases.
const (
	// DataSourceClaimPending means the claim is not bound yet: the locality
	// of its data is still being resolved.
	DataSourceClaimPending DataSourceClaimPhase = "Pending"
	// DataSourceClaimBound means the claim is bound to a DataSource and the
	// workload's placement follows its locality.
	DataSourceClaimBound DataSourceClaimPhase = "Bound"
)

// Condition types of a DataSourceClaim.
const (
	// DataSourceClaimReady is True once the claim is bound and the placement
	// of its workload has been restricted to the data's clusters.
	DataSourceClaimReady = "Ready"
)

// Reasons of a claim's Ready condition.
const (
	// ReasonBound: bound to a DataSource.
	ReasonBound = "Bound"
	// ReasonUnresolvable: no provider knows the data.
	ReasonUnresolvable = "Unresolvable"
	// ReasonProviderError: the provider failed; it is asked again.
	ReasonProviderError = "ProviderError"
)

// DataSourceClaimStatus records the binding of a claim.
type DataSourceClaimStatus struct {
	// Phase is Pending until the claim is bound, then Bound.
	// +optional
	// +kubebuilder:default=Pending
	Phase DataSourceClaimPhase `json:"phase,omitempty"`

	// BoundDataSource is the name of the DataSource the claim is bound to.
	// +optional
	BoundDataSource string `json:"boundDataSource,omitempty"`

	// ResolvedClusterNames are the clusters the workload was restricted to:
	// the bound DataSource's locality when it was last applied. Namespaced
	// users can read it here without access to the cluster-scoped DataSource.
	// +optional
	// +listType=atomic
	ResolvedClusterNames []string `json:"resolvedClusterNames,omitempty"`

	// Conditions are the latest observations of the claim's state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ObservedGeneration is the spec generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// DataSourceClaimList is a list of DataSourceClaims.
//
// +kubebuilder:object:root=true
type DataSourceClaimList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []DataSourceClaim `json:"items"`
}
