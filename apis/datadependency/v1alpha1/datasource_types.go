package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DataSource caches where one external data source (a table, a bucket, a
// directory) lives: the member clusters next to its storage. The
// data-dependency controller creates it the first time a claim asks for the
// data and reuses it for every later claim, so the external metadata service
// is asked once per data source, not once per workload.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=datasources,scope=Cluster
// +kubebuilder:printcolumn:name="System",type=string,JSONPath=`.spec.system`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Clusters",type=string,JSONPath=`.spec.locality.clusterNames`
// +kubebuilder:printcolumn:name="Claims",type=integer,JSONPath=`.status.boundClaims`
// +kubebuilder:printcolumn:name="ReclaimPolicy",type=string,JSONPath=`.spec.reclaimPolicy`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type DataSource struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec identifies the data source and records where it lives.
	// +required
	Spec DataSourceSpec `json:"spec"`

	// Status records which claims use this data source.
	// +optional
	Status DataSourceStatus `json:"status,omitempty"`
}

// DataSourceReclaimPolicy says what happens to a DataSource once no claim is
// bound to it.
// +kubebuilder:validation:Enum=Retain;Delete
type DataSourceReclaimPolicy string

// Reclaim policies.
const (
	// ReclaimPolicyRetain keeps the DataSource for later claims: the cached
	// locality is reused without asking the metadata service again.
	ReclaimPolicyRetain DataSourceReclaimPolicy = "Retain"
	// ReclaimPolicyDelete deletes the DataSource when its last claim goes
	// (after ttlSecondsAfterUnbound, if set).
	ReclaimPolicyDelete DataSourceReclaimPolicy = "Delete"
)

// DataSourceSpec identifies a data source by system, type and name, and
// records the clusters it is local to.
//
// +kubebuilder:validation:XValidation:rule="!has(self.ttlSecondsAfterUnbound) || (has(self.reclaimPolicy) && self.reclaimPolicy == 'Delete')",message="ttlSecondsAfterUnbound is only allowed with reclaimPolicy Delete: a retained DataSource never expires",fieldPath=.ttlSecondsAfterUnbound
type DataSourceSpec struct {
	// System is the data system that holds the data, for example "amoro",
	// "hive", "s3" or "hdfs". It gives meaning to type, name and attributes.
	// +required
	// +kubebuilder:validation:MinLength=1
	System string `json:"system"`

	// Type is the kind of data source within the system, for example "table"
	// or "view" in hive, "bucket" or "prefix" in s3.
	// +required
	// +kubebuilder:validation:MinLength=1
	Type string `json:"type"`

	// Name identifies the data source within system and type, for example
	// "catalog.db.table".
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// Locality is where the data lives.
	// +required
	Locality *DataSourceLocality `json:"locality"`

	// Attributes are further properties of the data source that a claim must
	// match exactly, for example a partition or a snapshot.
	// +optional
	Attributes map[string]string `json:"attributes,omitempty"`

	// ReclaimPolicy says what happens to this DataSource when its last claim
	// is deleted: Retain (the default) keeps it as a cache for later claims,
	// Delete removes it.
	// +optional
	// +kubebuilder:default=Retain
	ReclaimPolicy DataSourceReclaimPolicy `json:"reclaimPolicy,omitempty"`

	// TTLSecondsAfterUnbound delays the deletion of a DataSource with
	// reclaimPolicy Delete: it is deleted this many seconds after its last
	// claim went, unless a new claim binds first. Unset means at once.
	// +optional
	// +kubebuilder:validation:Minimum=0
	TTLSecondsAfterUnbound *int32 `json:"ttlSecondsAfterUnbound,omitempty"`
}

// DataSourceLocality is where a data source lives.
type DataSourceLocality struct {
	// ClusterNames are the member clusters next to the data's storage. A
	// workload that claims the data is placed on one of them.
	// +required
	// +listType=set
	ClusterNames []string `json:"clusterNames"`
}

// Condition types of a DataSource.
const (
	// DataSourceAvailable is True while the locality is known and may be used
	// for placement.
	DataSourceAvailable = "Available"
)

// DataSourceStatus records the claims bound to a DataSource.
type DataSourceStatus struct {
	// ClaimRefs are the DataSourceClaims bound to this DataSource.
	// +optional
	// +listType=atomic
	ClaimRefs []corev1.ObjectReference `json:"claimRefs,omitempty"`

	// BoundClaims is the number of claims in claimRefs.
	// +optional
	// +kubebuilder:validation:Minimum=0
	BoundClaims int32 `json:"boundClaims,omitempty"`

	// UnboundTime is when the last bound claim went. It is unset while claims
	// are bound and starts the ttlSecondsAfterUnbound clock.
	// +optional
	UnboundTime *metav1.Time `json:"unboundTime,omitempty"`
	// ResolvedBy names the provider that answered the locality; empty for a
	// DataSource an administrator declared.
	// +optional
	ResolvedBy string `json:"resolvedBy,omitempty"`
	// ExpiresAt is when the locality the provider answered stops holding:
	// the next claim asks the provider again. Unset means it holds until
	// the DataSource is changed.
	// +optional
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`

	// Conditions are the latest observations of the DataSource's state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ObservedGeneration is the spec generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// DataSourceList is a list of DataSources.
//
// +kubebuilder:object:root=true
type DataSourceList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []DataSource `json:"items"`
}
